"""`math.fpowi`'s kernel (dialects/ops/semantics.py): x^n evaluated in f64 and rounded once. A
square or cube of f32 with one exponent for every element is multiplied out in f64 (x * x is
exact there, x * x * x rounded once) instead of libm's pow: the same bytes as pow in f64."""

import math

import numpy as np
import pytest

from ipu_mlir.dialects.ops.semantics import elementwise_kernel

RNG = np.random.default_rng(7)


def specials(dtype) -> np.ndarray:
    """Random magnitudes from tiny to huge (cubes overflow to inf and fall to subnormal in
    f32), both signs, and the special values."""
    x = RNG.standard_normal(200_000) * 10 ** RNG.uniform(-15, 15, 200_000)
    with np.errstate(over="ignore"):  # f16 overflows to inf
        return np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3.4e38]]).astype(dtype)


@pytest.mark.parametrize("exponent", [2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_square_and_cube_are_pow_in_f64_rounded_once(exponent, dtype):
    x = specials(dtype)
    kernel = elementwise_kernel("math.fpowi", [np.dtype(dtype), np.dtype(np.int64)], np.dtype(dtype), None)
    with np.errstate(all="ignore"):  # as codelets run: overflow to inf is the result
        got = kernel(x, np.array([exponent], np.int64))
        want = np.array([math.pow(v, exponent) if math.isfinite(v) else v**exponent for v in x.astype(np.float64).tolist()]).astype(dtype)
    assert got.dtype == dtype and got.tobytes() == want.tobytes()  # signed zeros, infinities and NaN included


def test_other_exponents_and_f64_use_pow():
    x = specials(np.float32)
    kernel = elementwise_kernel("math.fpowi", [np.dtype(np.float32), np.dtype(np.int32)], np.dtype(np.float32), None)
    for n in (-1, 0, 1, 4, 5):
        with np.errstate(all="ignore"):
            want = np.power(x.astype(np.float64), float(n)).astype(np.float32)
            assert kernel(x, np.array([n], np.int32)).tobytes() == want.tobytes()
    wide = x.astype(np.float64)
    kernel = elementwise_kernel("math.fpowi", [np.dtype(np.float64), np.dtype(np.int32)], np.dtype(np.float64), None)
    with np.errstate(all="ignore"):
        assert kernel(wide, np.array([3], np.int32)).tobytes() == np.power(wide, 3.0).tobytes()


def test_a_strided_operand_gives_the_same_powers():
    x = specials(np.float32)[:199_998].reshape(-1, 6)
    kernel = elementwise_kernel("math.fpowi", [np.dtype(np.float32), np.dtype(np.int64)], np.dtype(np.float32), None)
    with np.errstate(all="ignore"):
        for n in (2, 3):
            got = kernel(x[:, ::2], np.array([[n]], np.int64))
            assert got.shape == (33_333, 3) and got.tobytes() == kernel(np.ascontiguousarray(x[:, ::2]), np.array([n], np.int64)).tobytes()
