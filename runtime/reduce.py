"""Reductions over some axes of a strided array, shaped for numpy's speed, for codelets.

numpy's `ufunc.reduce` is fast along a contiguous last axis, or an axis followed by long
contiguous blocks, but slow along an axis whose inner block is small: it steps the reduction
one inner block at a time, so summing 512 partials of 8 elements each (a convolution's partial
sums) costs a call per 8 elements (5.4 ms for 512 tiles; halved 0.9 ms). Those go to
`ufunc.reduce`; of the others a short axis (a pooling window) is combined element by element
into one accumulator, a long one is halved (pairwise: each step one call over half the data).
The order is fixed by the shapes alone, so results repeat bit for bit whatever the layout (a
simulator's later runs hand over views with other strides than its first): the path is chosen
from the shape as if the array were C-contiguous, and an array whose layout would make numpy
add in another order (a long axis whose trailing axes are not contiguous) is copied first.

A float sum over an axis followed by long contiguous blocks (a matmul's partial sums: tiles x
k pieces x a tile's outputs) runs compiled (numba, `_sum_rows`) when the axes before it merge
into one: numpy's reduction steps each block in its own inner loop, 14K loops of 96 floats for
the MLP's layer (0.46 ms), the compiled loop runs at the speed of a copy (0.16 ms). It adds in
numpy's order, each output +0.0 then its rows one by one (no fused multiply-add:
numba does not contract without fastmath), so the bytes are numpy's.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ipu_mlir.dialects.ops.compiled import compiled
from ipu_mlir.target.element_types import as_strided

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
        if _long(x.shape, axis):
            if not _contiguous_after(x, axis):  # numpy's order follows the layout: give it the shape's
                x = np.ascontiguousarray(x)
            summed = _sum_rows(x, axis) if combine is np.add and axis < last else None
            x = _kept(reduce(x, (axis,)) if summed is None else summed, x.shape, axis)
        elif (summed := _sum_short(x, axis) if combine is np.add else None) is not None:
            x = _kept(summed, x.shape, axis)
        elif n <= SHORT:
            x = _sequential(x, axis, n, combine)
        else:
            x = _halving(x, axis, combine)
    return x.reshape([size for axis, size in enumerate(x.shape) if axis not in axes])


def _long(shape: tuple[int, ...], axis: int) -> bool:
    """Whether `fold` leaves `axis` to numpy's reduction (or, a float sum, `_sum_rows`): a long
    last axis, or one followed by long blocks (contiguous once `_contiguous_after` holds)."""
    if axis == len(shape) - 1:
        return shape[axis] > SHORT
    return math.prod(shape[axis + 1 :]) >= BLOCK


def _contiguous_after(x: np.ndarray, axis: int) -> bool:
    """Whether numpy reduces `x` along a `_long` axis in the order it would the C-contiguous
    array: the last axis at unit stride, or the axes after `axis` contiguous (its inner loop),
    and no axis stepping backwards (numpy would flip it; `_sum_rows` reads forwards only)."""
    if any(stride < 0 for n, stride in zip(x.shape, x.strides) if n != 1):
        return False
    return x.strides[axis] == x.itemsize if axis == x.ndim - 1 else _block(x, axis) > 0


def sum_order(x: np.ndarray, axis: int) -> bool | None:
    """How `fold` adds a float `x` along `axis` (not its last): False one row after the other
    (`_sum_rows` from +0.0, or `_sequential` / `_sum_short` from the first row), True by
    halving, None by numpy's reduction (an order of numpy's own)."""
    if _long(x.shape, axis):
        merged = not _contiguous_after(x, axis) or _merged(x.shape[:axis], x.strides[:axis]) is not None  # a copy merges
        return False if merged else None
    return x.shape[axis] > SHORT


def _kept(reduced: np.ndarray, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """`reduced` (a new array: `shape` without `axis`) with `axis` back at size 1: a view, as
    np.expand_dims gives, at a quarter of its cost (5 us a call; BERT-12 folds 240 times a run)."""
    return reduced.reshape((*shape[:axis], 1, *shape[axis + 1 :]))


def _block(x: np.ndarray, axis: int) -> int:
    """How many elements follow each element of `axis` contiguously (0 unless the axes after
    it are C-contiguous): the length of numpy's inner loop when it reduces `axis`."""
    size = x.itemsize
    for n, stride in zip(reversed(x.shape[axis + 1 :]), reversed(x.strides[axis + 1 :])):
        if n != 1 and stride != size:
            return 0
        size *= n
    return size // x.itemsize if axis < x.ndim - 1 else 0


def _sum_rows(x: np.ndarray, axis: int) -> np.ndarray | None:
    """`x` (f32 or f64, contiguous after `axis`) summed over `axis`, removed, by compiled code;
    None when the axes before `axis` do not merge into one stride (numpy reduces those)."""
    outer = _merged(x.shape[:axis], x.strides[:axis])
    if x.dtype not in _SUMMED or outer is None:
        return None
    (count, stride), item = outer, x.itemsize
    out = np.empty(x.shape[:axis] + x.shape[axis + 1 :], x.dtype)
    span = (count - 1) * stride // item + (x.shape[axis] - 1) * x.strides[axis] // item + out.size // count
    rows = as_strided(x, (span,), (item,), writeable=False)  # read-only always: numba compiles per flags
    compiled(_rows)(rows, count, x.shape[axis], out.size // count, stride // item, x.strides[axis] // item, out.reshape(-1))
    return out


_SUMMED = (np.dtype(np.float32), np.dtype(np.float64))


def _merged(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int] | None:
    """Axes as one: (count, stride) if each axis steps its size times the next one's stride
    (axes of size 1 aside), else None."""
    groups = _groups(shape, strides)
    return None if len(groups) > 1 else groups[0] if groups else (1, 0)


def _rows(rows, count, length, size, step, row_step, out):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """out[i] = +0.0 (numpy's start: -0.0 rows sum to +0.0), then each row from i * step,
    `row_step` apart, added: `size` elements each."""
    for i in range(count):
        into = out[i * size : (i + 1) * size]
        start = i * step
        into[:] = 0
        for r in range(length):
            row = rows[start + r * row_step : start + r * row_step + size]
            for e in range(size):
                into[e] += row[e]


def _sum_short(x: np.ndarray, axis: int) -> np.ndarray | None:
    """`x` (f32 or f64) summed over `axis`, removed, by compiled code in the order `_sequential`
    (up to SHORT rows) or `_halving` (more) adds them, so the same bytes: those make a pass and
    a temporary per row or per halving, each a numpy loop over the short blocks after `axis`
    (MobileNetV2's 1x1 convolutions: 16 to 36 pieces of 7 to 56 floats, 9 ms a run). None when
    the axes before `axis` do not merge into two strides, those after it into one, or a stride
    is negative (numpy's paths take those)."""
    item, n = x.itemsize, x.shape[axis]
    if x.dtype not in _SUMMED or any(each < 0 or each % item for size, each in zip(x.shape, x.strides) if size != 1):
        return None
    outer, inner = _groups(x.shape[:axis], x.strides[:axis]), _groups(x.shape[axis + 1 :], x.strides[axis + 1 :])
    if len(outer) > 2 or len(inner) > 1 or (inner and inner[0][1] != item):
        return None
    first, second = [(1, 0)] * (2 - len(outer)) + outer
    (length, step), rows = (inner or [(1, item)])[0], (n, x.strides[axis])
    span = 1 + sum((size - 1) * each // item for size, each in (first, second, rows, (length, step)))
    out = np.empty(x.shape[:axis] + x.shape[axis + 1 :], x.dtype)
    flat = as_strided(x, (span,), (item,), writeable=False)  # read-only always: numba compiles per flags
    strides = (first[1] // item, second[1] // item, rows[1] // item)
    compiled(_short_rows)(flat, first[0], second[0], n, length, strides, n > SHORT, out.reshape(-1))
    return out


def _groups(shape: tuple[int, ...], strides: tuple[int, ...]) -> list[tuple[int, int]]:
    """Axes (size-1 ones left out) as (count, stride), merged where one steps its size times
    the next one's stride."""
    groups: list[tuple[int, int]] = []
    for n, each in zip(shape, strides):
        if n == 1:
            continue
        if groups and groups[-1][1] == n * each:
            groups[-1] = (groups[-1][0] * n, each)
        else:
            groups.append((n, each))
    return groups


def _short_rows(flat, outer, middle, n, length, strides, halve, out):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """For each of outer x middle blocks (`strides`: outer, middle and row, in elements) the sum
    of its `n` rows of `length` contiguous elements into `out`: row 0 + row 1, then each next
    one added (`_sequential`), or, when `halve`, rows i and half + i added while there are more
    than one, an odd last row added to the first after each round (`_halving`). Rows are sliced,
    indexed from 0, so the loops vectorize."""
    outer_step, middle_step, row_step = strides
    rows = np.empty((n, length), out.dtype)
    into = 0
    for a in range(outer):
        for b in range(middle):
            start = a * outer_step + b * middle_step
            block = out[into : into + length]
            into += length
            if not halve:
                first, second = flat[start : start + length], flat[start + row_step : start + row_step + length]
                for e in range(length):
                    block[e] = first[e] + second[e]
                for r in range(2, n):
                    row = flat[start + r * row_step : start + r * row_step + length]
                    for e in range(length):
                        block[e] += row[e]
                continue
            count = n
            while count > 1:
                half = count // 2
                for i in range(half):
                    into_row = rows[i]
                    if count == n:  # the first round reads the rows where they lie
                        low = flat[start + i * row_step : start + i * row_step + length]
                    else:
                        low = rows[i]
                    high = flat[start + (half + i) * row_step : start + (half + i) * row_step + length] if count == n else rows[half + i]
                    for e in range(length):
                        into_row[e] = low[e] + high[e]
                if count % 2:
                    odd = flat[start + (n - 1) * row_step : start + (n - 1) * row_step + length] if count == n else rows[count - 1]
                    first = rows[0]
                    for e in range(length):
                        first[e] = first[e] + odd[e]
                count = half
            block[:] = rows[0]


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
