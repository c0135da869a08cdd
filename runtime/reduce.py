"""Reductions over some axes of a strided array, shaped for numpy's speed, for codelets.

numpy's `ufunc.reduce` is fast along a contiguous last axis, or an axis followed by long
contiguous blocks, but slow along an axis whose inner block is small: it steps the reduction
one inner block at a time, so summing 512 partials of 8 elements each (a convolution's partial
sums) costs a call per 8 elements (5.4 ms for 512 tiles; halved 0.9 ms). Those go to
`ufunc.reduce`; of the others a short axis (a pooling window) is combined element by element
into one accumulator, a long one is halved (pairwise: each step one call over half the data).
The order is fixed by the shapes, so results repeat bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

SHORT = 8  # axes up to this long are combined one element after the other
BLOCK = 64  # numpy reduces an axis followed by contiguous blocks this long as fast (measured)

Reduce = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
Combine = Callable[[np.ndarray, np.ndarray], np.ndarray]


def fold(x: np.ndarray, axes: tuple[int, ...], reduce: Reduce, combine: Combine) -> np.ndarray:
    """`x` reduced over `axes` (removed), `combine` being the reduction's element-wise step."""
    if x.size == 0:
        return reduce(x, axes)
    last = x.ndim - 1
    for axis in axes:
        n = x.shape[axis]
        if n == 1:
            continue
        if (axis == last and n > SHORT and x.strides[axis] == x.itemsize) or _block(x, axis) >= BLOCK:
            x = np.expand_dims(reduce(x, (axis,)), axis)
        elif n <= SHORT:
            x = _sequential(x, axis, n, combine)
        else:
            x = _halving(x, axis, combine)
    return x.reshape([size for axis, size in enumerate(x.shape) if axis not in axes])


def _block(x: np.ndarray, axis: int) -> int:
    """How many elements follow each element of `axis` contiguously (0 unless the axes after
    it are C-contiguous): the length of numpy's inner loop when it reduces `axis`."""
    size = x.itemsize
    for n, stride in zip(reversed(x.shape[axis + 1 :]), reversed(x.strides[axis + 1 :])):
        if n != 1 and stride != size:
            return 0
        size *= n
    return size // x.itemsize if axis < x.ndim - 1 else 0


def _at(axis: int, start: int, stop: int) -> tuple[slice, ...]:
    return (*(slice(None),) * axis, slice(start, stop))


def _sequential(x: np.ndarray, axis: int, n: int, combine: Combine) -> np.ndarray:
    accumulator = combine(x[_at(axis, 0, 1)], x[_at(axis, 1, 2)])
    for index in range(2, n):
        accumulator = combine(accumulator, x[_at(axis, index, index + 1)])
    return accumulator


def _halving(x: np.ndarray, axis: int, combine: Combine) -> np.ndarray:
    while x.shape[axis] > 1:
        n = x.shape[axis]
        half = n // 2
        folded = combine(x[_at(axis, 0, half)], x[_at(axis, half, 2 * half)])
        if n % 2:  # the odd one out joins the first
            folded[_at(axis, 0, 1)] = combine(folded[_at(axis, 0, 1)], x[_at(axis, n - 1, n)])
        x = folded
    return x
