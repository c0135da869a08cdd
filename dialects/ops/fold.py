"""Batched matrix products over many tiles as few large ones (the simulator's compute kernels).

A vertex group's operands carry the tiles as leading batch axes, of size 1 along the axes a
tile grid shares them on (`runtime/codelet.py`): every tile of a row multiplies the same
weights, every tile cutting the filters reads the same input. `np.matmul` broadcasts such an
operand but still calls one small product per tile, slow for the tiny per-tile shapes of a
fine tile grid (4.2x on MobileNetV2's 1x1 convolution shapes alone, 2.1x on 320x5x7). Along
an axis one operand shares, the other's rows (or columns) take that axis instead: the same
sums of products, as one product per remaining batch point. On whole programs the gain is
smaller: ResNet-50's conv kernels 202 -> 188 ms a run (their products now run near the core's
peak), MobileNetV2's about even (bench/simulator_speed.py --breakdown).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Fold:
    """The leading axes of a product `(*A, M, K) x (*B, K, N)`: `kept` stay batch axes (numpy
    broadcasts them), `rows` (1 in B only) join M, `columns` (1 in A only) join N."""

    kept: tuple[int, ...]
    rows: tuple[int, ...]
    columns: tuple[int, ...]

    def rhs_order(self) -> list[int]:
        """The order of the axes of `(*B, K, N)` whose memory layout makes the folded right
        operand a reshape with no copy."""
        k = len(self.kept) + len(self.rows) + len(self.columns)
        return [*self.kept, *self.rows, k, *self.columns, k + 1]


def fold_axes(lhs_batch: tuple[int, ...], rhs_batch: tuple[int, ...]) -> Fold:
    """Which leading axes of a product join its rows or columns (`Fold`)."""
    kept, rows, columns = [], [], []
    for axis, (a, b) in enumerate(zip(lhs_batch, rhs_batch, strict=True)):
        (rows if b == 1 < a else columns if a == 1 < b else kept).append(axis)
    return Fold(tuple(kept), tuple(rows), tuple(columns))


def unshared(lhs: np.ndarray, rhs: np.ndarray, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """`lhs` and `rhs` with each of their first `batch` axes along which one of them holds the
    same values everywhere cut to size 1. BLAS rounds a product's sums differently for other
    shapes, so a fold must not depend on how the simulator presents an operand: the checked
    first run gives every tile its own copy (a row per tile) where later runs share one row
    (runtime/replicas.py), and the bytes of both runs must agree. Judged by the values, both
    runs fold the same axes; a look at one row of the first two slices settles most axes."""
    for axis in range(batch):
        if lhs.shape[axis] > 1 and rhs.shape[axis] > 1:
            if _constant_along(lhs, axis):
                lhs = lhs[(slice(None),) * axis + (slice(0, 1),)]
            elif _constant_along(rhs, axis):
                rhs = rhs[(slice(None),) * axis + (slice(0, 1),)]
    return lhs, rhs


def _constant_along(array: np.ndarray, axis: int) -> bool:
    if array.strides[axis] == 0:
        return True
    rows = array[(0,) * axis + (slice(0, 2),) + (0,) * (array.ndim - axis - 2)]  # one row of two slices first
    if not np.array_equal(rows[0], rows[1]):
        return False
    first = array[(slice(None),) * axis + (slice(0, 1),)]
    second = array[(slice(None),) * axis + (slice(1, 2),)]
    return bool(np.array_equal(first, second) and (array == first).all())


def folded_matmul(lhs: np.ndarray, rhs: np.ndarray, thick: int = 8) -> np.ndarray:
    """`np.matmul(lhs, rhs)` for `(*A, M, K) x (*B, K, N)` of one rank whose batch shapes
    broadcast, folding the axes one operand shares into the other's rows or columns if the
    shared one has at least `thick` columns or rows. The result may be a transposed view."""
    batch = lhs.ndim - 2
    (m, k), n = lhs.shape[batch:], rhs.shape[-1]
    f = fold_axes(lhs.shape[:batch], rhs.shape[:batch])
    # A fold copies the other operand (but for `rhs_order` layouts), which pays only if the
    # shared one is `thick`: a classifier's (1, K) row against a tile's (K, N) weights is
    # fastest as one matrix-vector product per tile (0.4 ms on ResNet-50's, 2.5 ms folded).
    # Judged by shapes alone, as every fold must be (`unshared`).
    if m < thick:
        f = Fold(tuple(sorted(f.kept + f.columns)), f.rows, ())
    if n < thick:
        f = Fold(tuple(sorted(f.kept + f.rows)), (), f.columns)
    if not f.rows and not f.columns:
        return np.matmul(lhs, rhs)
    rows, columns = [lhs.shape[a] for a in f.rows], [rhs.shape[a] for a in f.columns]
    a = lhs.transpose(*f.kept, *f.rows, *f.columns, batch, batch + 1)
    a = a.reshape(*a.shape[: len(f.kept)], math.prod(rows) * m, k)
    b = rhs.transpose(f.rhs_order())
    b = b.reshape(*b.shape[: len(f.kept)], k, math.prod(columns) * n)
    product = np.matmul(a, b)
    product = product.reshape(*product.shape[: len(f.kept)], *rows, m, *columns, n)
    # back to (*batch, M, N): M sits between the row and the column axes
    where = {axis: i for i, axis in enumerate((*f.kept, *f.rows))}
    where.update({axis: len(where) + 1 + i for i, axis in enumerate(f.columns)})
    return product.transpose(*(where[axis] for axis in range(batch)), len(f.kept) + len(f.rows), product.ndim - 1)
