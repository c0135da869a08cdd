"""dialects/ops/fold.py: batched products with the axes one operand shares folded into the
other's rows or columns give np.matmul's results, in np.matmul's shape."""

import numpy as np
import pytest

from ipu_mlir.dialects.ops.fold import Fold, fold_axes, folded_matmul, unshared

RNG = np.random.default_rng(7)

CASES = {  # lhs batch, rhs batch
    "weights shared": ((2, 3), (1, 1)),
    "input shared": ((1, 1), (2, 3)),
    "grid": ((4, 1), (1, 3)),
    "mixed": ((2, 4, 1, 1), (2, 1, 3, 1)),
    "nothing shared": ((2, 3), (2, 3)),
}


@pytest.mark.parametrize("m,n", [(5, 7), (9, 1), (1, 9), (9, 9)])  # thin operands fold only where that copies nothing
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_folded_products_are_numpys(case, dtype, m, n):
    a_batch, b_batch = CASES[case]
    a = RNG.integers(-9, 9, (*a_batch, m, 6)).astype(dtype)
    b = RNG.integers(-9, 9, (*b_batch, 6, n)).astype(dtype)
    got = folded_matmul(a, b)
    # small integers: every sum is exact, so any fold must give numpy's unfolded values exactly
    np.testing.assert_array_equal(got, np.matmul(a, b))
    assert got.dtype == np.matmul(a, b).dtype


def test_strided_and_reversed_operands():
    a = RNG.standard_normal((3, 1, 6, 5))[::-1].swapaxes(-1, -2)
    b = np.broadcast_to(RNG.standard_normal((1, 4, 6, 2)), (1, 4, 6, 2))[:, ::2]
    np.testing.assert_allclose(folded_matmul(a, b), np.matmul(a, b), rtol=1e-12, atol=1e-12)


def test_which_axes_fold():
    assert fold_axes((2, 4, 1, 1, 5), (2, 1, 3, 1, 5)) == Fold(kept=(0, 3, 4), rows=(1,), columns=(2,))
    assert Fold(kept=(0,), rows=(1,), columns=(2,)).rhs_order() == [0, 1, 3, 2, 4]


@pytest.mark.parametrize("case", ["weights shared", "input shared", "grid", "mixed"])
def test_copies_of_a_shared_operand_fold_as_the_shared_operand_does(case):
    # the checked first run gives every tile its own copy, later runs share one: same bytes
    a_batch, b_batch = CASES[case]
    a = RNG.standard_normal((*a_batch, 5, 6)).astype(np.float32)
    b = RNG.standard_normal((*b_batch, 6, 7)).astype(np.float32)
    tiles = np.broadcast_shapes(a_batch, b_batch)
    copies = [np.ascontiguousarray(np.broadcast_to(x, (*tiles, *x.shape[-2:]))) for x in (a, b)]
    shared = folded_matmul(*unshared(a, b, len(tiles)))
    copied = folded_matmul(*unshared(*copies, len(tiles)))
    assert np.broadcast_to(shared, copied.shape).tobytes() == np.ascontiguousarray(copied).tobytes()
    np.testing.assert_allclose(copied, np.matmul(a, b), rtol=1e-5, atol=1e-5)
    assert unshared(*copies, len(tiles))[0].shape == (*a_batch, 5, 6)


def test_operands_that_differ_along_an_axis_keep_it():
    a = RNG.standard_normal((3, 4, 5, 6))
    a[2, 1] = a[0, 1]  # equal first two slices along axis 0 would not do: the last differs
    a[1] = a[0]
    b = RNG.standard_normal((3, 4, 6, 2))
    lhs, rhs = unshared(a, b, 2)
    assert lhs.shape == a.shape and rhs.shape == b.shape
