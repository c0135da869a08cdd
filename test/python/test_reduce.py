"""Reductions shaped for numpy's speed (`runtime/reduce.py`): every path (a short axis
element by element, a long one halved, a contiguous last axis by `ufunc.reduce`) against
numpy's own reduction, over strided views, odd lengths, several axes, NaN, integers."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.dialects.ops.semantics import elementwise_kernel, reducer
from ipu_mlir.runtime import reduce as reduce_module
from ipu_mlir.runtime.reduce import fold

RNG = np.random.default_rng(3)

# (shape, reduced axes): a conv's partial sums (long first axis, short inner block), a pooling
# window (two short last axes), a contiguous last axis, a long inner block (a matmul's partial
# sums), odd lengths, a length-1 axis
CASES = [
    ((4, 512, 8), (1,)),
    ((3, 5, 6, 3, 3), (3, 4)),
    ((2, 3, 100), (2,)),
    ((2, 16, 80), (1,)),
    ((7, 33, 5), (1,)),
    ((9, 2, 17), (0, 2)),
    ((5, 1, 4), (1,)),
]


def combiners(name: str, dtype):
    dtype = np.dtype(dtype)
    return reducer(name, dtype), elementwise_kernel(name, [dtype, dtype], dtype, None)


@pytest.mark.parametrize("shape, axes", CASES)
@pytest.mark.parametrize("name", ["arith.addf", "arith.mulf", "arith.maximumf", "arith.minnumf"])
def test_float_folds_agree_with_numpy(shape, axes, name):
    x = RNG.uniform(0.5, 1.5, shape).astype(np.float32)
    if "max" in name or "min" in name:
        x[RNG.random(shape) < 0.1] = np.nan
    reduce, combine = combiners(name, np.float32)
    got = fold(x, axes, reduce, combine)
    want = reduce(x.astype(np.float64), axes).astype(np.float32) if "add" in name or "mul" in name else reduce(x, axes)
    assert got.shape == want.shape and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)  # f32 rounding over 512 products
    np.testing.assert_array_equal(fold(x, axes, reduce, combine), got)  # the same bits again


@pytest.mark.parametrize("shape, axes", CASES)
def test_integer_folds_wrap_like_numpy(shape, axes):
    x = RNG.integers(-128, 128, shape, dtype=np.int8)
    reduce, combine = combiners("arith.addi", np.int8)
    got = fold(x, axes, reduce, combine)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, reduce(x, axes))


def test_empty_axes_give_the_identity():
    reduce, combine = combiners("arith.addf", np.float32)
    np.testing.assert_array_equal(fold(np.ones((6, 0, 3), np.float32), (1,), reduce, combine), np.zeros((6, 3), np.float32))


def test_strided_views_and_broadcasts_are_read_not_written():
    base = RNG.standard_normal((8, 40, 6)).astype(np.float32)
    x = base[::2, ::-1, 1:5]  # negative and non-unit strides
    spread = np.broadcast_to(base[:1, :1], (3, 20, 6))  # stride 0 along the reduced axis
    reduce, combine = combiners("arith.addf", np.float32)
    before = base.copy()
    np.testing.assert_allclose(fold(x, (1,), reduce, combine), x.sum(1, dtype=np.float64), rtol=1e-5)
    np.testing.assert_allclose(fold(spread, (1,), reduce, combine), np.broadcast_to(20 * base[0, 0], (3, 6)), rtol=1e-5)
    np.testing.assert_array_equal(base, before)


def test_each_path_is_taken(monkeypatch):
    """The shapes above do reach the five paths (a test that always took one would pass)."""
    taken = []
    for path in ("_sequential", "_halving", "_sum_rows", "_sum_short"):
        original = getattr(reduce_module, path)
        monkeypatch.setattr(reduce_module, path, lambda *a, _f=original, _p=path: taken.append(_p) or _f(*a))
    reduce, combine = combiners("arith.addf", np.float32)
    product, multiply = combiners("arith.mulf", np.float32)
    calls = []
    fold(np.ones((4, 512, 8), np.float32), (1,), reduce, combine)  # short blocks: compiled
    fold(np.ones((4, 512, 8), np.float32), (1,), product, multiply)
    fold(np.ones((3, 3, 3), np.float32), (2,), product, multiply)
    fold(np.ones((3, 16, 320), np.float32), (1,), reduce, combine)  # a sum over a long inner block: compiled
    fold(np.ones((3, 100), np.float32), (1,), lambda x, axes: calls.append(axes) or reduce(x, axes), combine)
    fold(np.ones((3, 16, 320), np.float32), (1,), lambda x, axes: calls.append(axes) or product(x, axes), multiply)
    assert taken == ["_sum_short", "_halving", "_sequential", "_sum_rows"] and calls == [(1,), (1,)]


def partials(dtype, tiles=(6, 5), count=7, block=(3, 32)) -> np.ndarray:
    """A matmul's partial sums: tiles x k pieces x a tile's outputs, with NaN, infinities and
    negative zeros (a tile whose every piece is -0.0 sums to -0.0)."""
    x = RNG.standard_normal((*tiles, count, *block)).astype(dtype)
    x[0, 0, 2, 0, :3] = [np.nan, np.inf, -np.inf]
    x[0, 1, :, 1, :4] = -0.0
    return x


def layouts(x: np.ndarray) -> dict[str, np.ndarray]:
    """The partials as the compiled sum sees them (axes before the summed one merging into one
    stride: contiguous, the same on every tile, tiles padded apart) and as it leaves them to numpy
    (`not merging`: tile axes whose strides do not make one)."""
    padded = np.zeros((x.shape[0], x.shape[1] + 1, *x.shape[2:]), x.dtype)
    padded[:, : x.shape[1]] = x
    return {
        "contiguous": x,
        "broadcast": np.broadcast_to(x[:1, :1], x.shape),
        "a padded tile axis": padded[:1, : x.shape[1]],
        "not merging: padded": padded[:, : x.shape[1]],
        "not merging: broadcast along one axis": np.broadcast_to(x[:1], x.shape),
    }


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_partial_sums_compiled_in_numpys_order(dtype):
    reduce, combine = combiners("arith.addf", dtype)
    for name, x in layouts(partials(dtype)).items():
        compiled = reduce_module._sum_rows(x, 2)
        assert (compiled is None) == name.startswith("not merging"), name
        got = fold(x, (2,), reduce, combine)
        assert got.tobytes() == reduce(x, (2,)).tobytes(), name  # NaN, signed zeros and rounding alike
        if compiled is not None:
            assert compiled.tobytes() == got.tobytes()


def short_blocks(dtype, count: int) -> np.ndarray:
    """A convolution's partial sums: tiles x k pieces x a few rows of a tile's outputs, with
    NaN, infinities, negative zeros (a block of -0.0 in every piece) and subnormals."""
    x = RNG.standard_normal((5, count, 3, 7)).astype(dtype)
    tiny = np.finfo(dtype).tiny
    x[0, :, 0, :2] = -0.0
    x[1, 0, 1, :5] = [np.nan, np.inf, -np.inf, tiny / 4, -tiny / 3]
    x[2, :, 2, 3] = tiny / 8
    x[3, : count // 2, 0, 0], x[3, count // 2 :, 0, 0] = np.inf, -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("count", [2, 3, 8, 9, 16, 17, 31])
def test_short_blocks_compiled_in_numpys_order(dtype, count):
    """The compiled sum over short blocks gives the bytes of `_sequential` (up to SHORT pieces)
    or `_halving` (more) on every layout it takes, and leaves the others to them; `fold` gives
    those bytes but on a long last axis, which it leaves to numpy's order (as if contiguous)."""
    x = short_blocks(dtype, count)
    padded = np.zeros((5, count + 1, 3, 8), dtype)
    padded[:, :count, :, :7] = x
    cases = {
        "contiguous": (x, 1),
        "pieces last": (x.transpose(0, 2, 3, 1), 3),
        "pieces between rows": (x.transpose(0, 2, 1, 3), 2),
        "the same on every tile": (np.broadcast_to(x[:1], x.shape), 1),
        "pieces padded apart": (padded[:, :count, :, :], 1),
        "not taken: tiles from the end": (x[::-1], 1),
        "not taken: strided rows": (x[:, :, :, ::2], 1),
        "not taken: rows padded apart": (padded[:, :count, :, :7], 1),
    }
    reduce, combine = combiners("arith.addf", dtype)
    for name, (view, axis) in cases.items():
        with np.errstate(all="ignore"):  # inf + -inf
            compiled = reduce_module._sum_short(view, axis)
            if count <= reduce_module.SHORT:
                want = reduce_module._sequential(view, axis, count, combine)
            else:
                want = reduce_module._halving(view, axis, combine)
            got = fold(view, (axis,), reduce, combine)
        assert (compiled is None) == name.startswith("not taken"), name
        want = np.squeeze(want, axis)
        if compiled is not None:
            assert compiled.tobytes() == want.tobytes(), name
        if axis == view.ndim - 1 and count > reduce_module.SHORT:  # a long last axis: numpy's, as if contiguous
            with np.errstate(all="ignore"):
                want = reduce(np.ascontiguousarray(view), (axis,))
        assert got.tobytes() == want.tobytes(), name


def permuted_layout(x: np.ndarray, order: tuple[int, ...]) -> np.ndarray:
    """`x`'s values in an array laid out with its axes in `order` (outermost first): the same
    shape, other strides, as a simulator's later runs may hand over."""
    return np.ascontiguousarray(x.transpose(order)).transpose(np.argsort(order))


# (shape, reduced axes, a layout order): the fuzzer's seed 1526 (a long block after the first
# reduced axis, a long last axis: regressions/second-run-differs-two-reductions.mlir), a long
# last axis alone, a short block that is long by shape after the axes merge, a product
LAYOUT_CASES = [
    ((1, 16, 1, 5, 4, 17), (3, 5), (0, 2, 5, 4, 1, 3), "arith.addf"),
    ((16, 100), (1,), (1, 0), "arith.addf"),
    ((3, 20, 8, 9), (1,), (3, 2, 0, 1), "arith.addf"),
    ((6, 40, 70), (1,), (2, 1, 0), "arith.mulf"),
]


def reversed_layout(x: np.ndarray, axis: int) -> np.ndarray:
    """`x`'s values in an array whose `axis` steps backwards in memory."""
    return np.flip(np.ascontiguousarray(np.flip(x, axis)), axis)


@pytest.mark.parametrize("shape, axes, order, name", LAYOUT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layout_does_not_change_the_bytes(shape, axes, order, name, dtype):
    """The order of a fold is the shape's: the same values in another layout give the same bytes."""
    x = RNG.uniform(0.5, 1.5, shape).astype(dtype)
    x.reshape(-1)[:5] = -0.0
    reduce, combine = combiners(name, dtype)
    other = permuted_layout(x, order)
    assert other.strides != x.strides and np.array_equal(other, x)
    assert fold(other, axes, reduce, combine).tobytes() == fold(x, axes, reduce, combine).tobytes()


@pytest.mark.parametrize("axis", [0, 1])
def test_axes_stepping_backwards_give_the_same_bytes(axis):
    """A long block after the summed axis, the summed axis or the one before it reversed in
    memory: the bytes of the contiguous array (the compiled sum reads forwards only)."""
    x = RNG.standard_normal((4, 10, 70)).astype(np.float32)
    reduce, combine = combiners("arith.addf", np.float32)
    other = reversed_layout(x, axis)
    assert other.strides[axis] < 0 and np.array_equal(other, x)
    assert fold(other, (1,), reduce, combine).tobytes() == fold(x, (1,), reduce, combine).tobytes()
