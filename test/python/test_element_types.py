"""bf16 and the FP8 formats (target/element_types.py, docs/precision.md): conversions bit for
bit against LLVM's APFloat, the reference's own FP8 rounding, the simulator's arithmetic
against the JIT's, bytes in the planner, and the tools' inputs and checks."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects.resources import dense_array
from ipu_mlir.frontends import api
from ipu_mlir.runtime import oracle
from ipu_mlir.runtime.reference import run_reference
from ipu_mlir.target.cost_model import dtype_info
from ipu_mlir.target.element_types import FLOAT_DTYPES, NARROW_FLOATS

NARROW = [name for name, dtype in FLOAT_DTYPES.items() if dtype in NARROW_FLOATS]
FP8 = [name for name in NARROW if name.startswith("f8")]


def _probes(dtype: np.dtype) -> np.ndarray:
    """f32 values where rounding into `dtype` can go wrong: every value of an FP8 format (or
    4096 of bf16's), the midpoints between neighbours (ties) and one f32 step either side of
    them, both signs, beyond the largest finite value, infinities, NaN, zeros, random values."""
    if dtype.itemsize == 1:
        grid = np.arange(256, dtype=np.uint8).view(dtype).astype(np.float32)
    else:
        grid = np.arange(0, 65536, 16, dtype=np.uint16).view(dtype).astype(np.float32)
    grid = np.unique(np.abs(grid[np.isfinite(grid)]))
    ties = grid[:-1] / 2 + grid[1:] / 2  # exact in f32: the formats have fewer bits
    near = np.concatenate([ties, np.nextafter(ties, np.inf), np.nextafter(ties, 0)])
    largest = float(ml_dtypes.finfo(dtype).max)
    beyond = np.array([min(largest * k, 3.4e38) for k in (1.03, 1.07, 2)] + [3e38, np.inf, np.nan, 0.0], np.float32)
    rng = np.random.default_rng(0)
    spread = (rng.standard_normal(2000) * np.exp2(rng.integers(-30, 20, 2000))).astype(np.float32)
    values = np.concatenate([grid, near, beyond, spread])
    return np.concatenate([values, -values])


def _same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Element-wise: the same value and sign (zeros included), or both NaN."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return (np.isnan(a) & np.isnan(b)) | ((a == b) & (np.signbit(a) == np.signbit(b)))


def _apfloat(values: np.ndarray, name: str) -> np.ndarray:
    """`values` rounded by LLVM's APFloat: `FloatAttr::get(type, double)` converts to the type's
    semantics, nearest with ties to even, as `arith.truncf` folds."""
    with ir.Context(), ir.Location.unknown():
        type_ = ir.Type.parse(name)
        return np.array([ir.FloatAttr.get(type_, float(v)).value for v in values], np.float64)


@pytest.mark.parametrize("name", NARROW)
def test_numpy_conversions_are_apfloats(name):
    """The simulator converts with ml_dtypes: the same values as APFloat for every probe
    (overflow to NaN for the FN / FNUZ formats, to infinity for E5M2, no -0 in FNUZ)."""
    values = _probes(FLOAT_DTYPES[name])
    wrong = ~_same(values.astype(FLOAT_DTYPES[name]), _apfloat(values, name))
    assert not wrong.any(), values[wrong][:8]


TRUNCATE = """
func.func @main(%x: tensor<{n}xf32>) -> tensor<{n}x{t}> {{
  %y = arith.truncf %x : tensor<{n}xf32> to tensor<{n}x{t}>
  return %y : tensor<{n}x{t}>
}}"""


@pytest.mark.parametrize("name", FP8)
def test_reference_rounds_fp8_as_apfloat(name):
    """The JIT has no FP8 type: the reference rounds with its own f32 arithmetic
    (runtime/promotion.py's `_fp8_rounding`), which must give APFloat's value for every probe."""
    values = _probes(FLOAT_DTYPES[name])
    (got,) = run_reference(TRUNCATE.format(n=values.size, t=name), [values])
    wrong = ~_same(got, _apfloat(values, name))
    assert not wrong.any(), (values[wrong][:8], got[wrong][:8])


CHAIN = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%a: tensor<{n}x{t}>, %b: tensor<{n}x{t}>) -> tensor<{n}x{t}> {{
  %e = tensor.empty() : tensor<{n}x{t}>
  %r = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}}
      ins(%a, %b : tensor<{n}x{t}>, tensor<{n}x{t}>) outs(%e : tensor<{n}x{t}>) {{
  ^bb0(%x: {t}, %y: {t}, %o: {t}):
    %s = arith.addf %x, %y : {t}
    %p = arith.mulf %s, %x : {t}
    %q = arith.divf %p, %y : {t}
    %m = arith.maximumf %q, %s : {t}
    %d = arith.subf %m, %y : {t}
    linalg.yield %d : {t}
  }} -> tensor<{n}x{t}>
  return %r : tensor<{n}x{t}>
}}"""


@pytest.mark.parametrize("name", NARROW)
def test_simulated_arithmetic_rounds_every_op_as_mlir(name):
    """Five ops in one body, each rounded into the type as MLIR defines it: the simulator
    (ml_dtypes ufuncs) against the JIT, bit for bit. bf16 runs natively in the JIT (LLVM widens
    each op to f32 and rounds back); FP8 runs promoted with the reference's rounding after each
    op. Inputs from [-4, 4) include overflows into NaN / infinity for the narrow FP8 formats."""
    dtype = FLOAT_DTYPES[name]
    rng = np.random.default_rng(1)
    a, b = ((rng.random(2048) * 8 - 4).astype(dtype) for _ in range(2))
    text = CHAIN.format(n=2048, t=name)
    (simulated,), _ = api.run(text, [a, b], target="tiny")
    (reference,) = run_reference(text, [a, b], f16_in_f32=name != "bf16")
    wrong = ~_same(simulated, reference)
    assert not wrong.any(), (a[wrong][:4], b[wrong][:4], simulated[wrong][:4], reference[wrong][:4])


MATMUL = """
func.func @main(%a: tensor<24x96x{t}>, %b: tensor<96x40x{t}>) -> tensor<24x40x{r}> {{
  %zero = arith.constant 0.0 : {r}
  %e = tensor.empty() : tensor<24x40x{r}>
  %f = linalg.fill ins(%zero : {r}) outs(%e : tensor<24x40x{r}>) -> tensor<24x40x{r}>
  %m = linalg.matmul ins(%a, %b : tensor<24x96x{t}>, tensor<96x40x{t}>) outs(%f : tensor<24x40x{r}>) -> tensor<24x40x{r}>
  return %m : tensor<24x40x{r}>
}}"""


@pytest.mark.parametrize("name", NARROW)
@pytest.mark.parametrize("result", ["same", "f32"])
def test_matmul_sums_in_f32(name, result):
    """A product of narrow operands sums in f32 and rounds once (the AMP's f16 -> f32 rule,
    docs/precision.md): exactly numpy's f32 product rounded, within the sum's order (f32's
    rtol); into f32 it is what scaled FP8 matmuls accumulate in. --check's reference agrees."""
    dtype = FLOAT_DTYPES[name]
    result_name = name if result == "same" else "f32"
    rng = np.random.default_rng(2)
    a, b = (rng.random(shape).astype(np.float32).astype(dtype) for shape in ((24, 96), (96, 40)))
    text = MATMUL.format(t=name, r=result_name)
    (simulated,), _ = api.run(text, [a, b], target="gc200")  # on tiny k is cut over tiles: partial sums round
    exact = a.astype(np.float64) @ b.astype(np.float64)
    assert simulated.dtype == FLOAT_DTYPES[result_name]
    assert oracle.compare(simulated.astype(np.float64), exact.astype(FLOAT_DTYPES[result_name]).astype(np.float64), rtol=1e-6).ok
    (reference,) = run_reference(text, [a, b])
    assert oracle.compare(simulated, reference).ok


def test_bytes_per_element():
    """The planner's and the cost model's sizes: two bytes for bf16, one for FP8."""
    assert [dtype_info(name).bytes for name in NARROW] == [2, 1, 1, 1, 1]
    assert all(dtype_info(name).is_float for name in NARROW)
    assert dtype_info("bfloat16").bytes == 2 and dtype_info("float8_e4m3fn").bytes == 1


@pytest.mark.parametrize("name", NARROW)
def test_dense_constants_read_bit_for_bit(name):
    """numpy's view of an attribute refuses these types; `dense_array` bit casts instead."""
    dtype = FLOAT_DTYPES[name]
    values = np.array([[1.5, -0.25], [3.0, 0.0]], np.float32).astype(dtype)
    with ir.Context(), ir.Location.unknown():
        attr = ir.Attribute.parse(f"dense<[[1.5, -0.25], [3.0, 0.0]]> : tensor<2x2x{name}>")
        got = dense_array(attr, dtype)
    assert got.dtype == dtype and got.shape == (2, 2) and got.tobytes() == values.tobytes()


@pytest.mark.parametrize("name", NARROW)
def test_random_inputs_and_tolerance(name):
    """--random-inputs gives uniform [-1, 1) values of the type; --check's tolerance is the
    format's (one FP8 step at the largest value, 8 bf16 steps) and fails past it."""
    dtype = FLOAT_DTYPES[name]
    (x,) = api.random_inputs([((4096,), dtype)], seed=0)
    assert x.dtype == dtype and -1 <= x.astype(np.float32).min() < -0.8 and 0.8 < x.astype(np.float32).max() < 1
    rtol = oracle.DEFAULT_RTOL[str(dtype)]
    assert rtol == (2**-4 if name == "bf16" else float(ml_dtypes.finfo(dtype).eps))
    want = np.array([4.0, 1.0], dtype)
    near = np.array([4.0 + 4 * rtol, 1.0], np.float32).astype(dtype)
    far = np.array([4.0 + 8 * rtol, 1.0], np.float32).astype(dtype)
    assert oracle.compare(near, want).ok and not oracle.compare(far, want).ok
    assert not math.isclose(float(far[0]), 4.0)


MAX_REDUCE = """
func.func @main(%x: tensor<4x{n}x{t}>) -> tensor<4x{t}> {{
  %low = arith.constant {low} : {t}
  %e = tensor.empty() : tensor<4x{t}>
  %init = linalg.fill ins(%low : {t}) outs(%e : tensor<4x{t}>) -> tensor<4x{t}>
  %r = linalg.reduce {{ arith.maximumf }} ins(%x : tensor<4x{n}x{t}>) outs(%init : tensor<4x{t}>) dimensions = [1]
  return %r : tensor<4x{t}>
}}"""


@pytest.mark.parametrize("name", FP8)
def test_max_of_negative_values_cut_over_tiles(name):
    """A max reduction cut over tiles starts each tile's partial at the combiner's identity,
    -inf: in the FN and FNUZ formats, which have no infinity, that is their lowest value (-448,
    -240, -57344), not NaN (APFloat's -inf there), which the max would carry to the result."""
    dtype = FLOAT_DTYPES[name]
    low = -float(ml_dtypes.finfo(dtype).max)
    x = (np.random.default_rng(3).random((4, 4096)) * 0.5 - 1.0).astype(dtype)
    text = MAX_REDUCE.format(n=4096, t=name, low=low)
    (simulated,), _ = api.run(text, [x], target="tiny")
    assert not np.isnan(simulated.astype(np.float32)).any()
    assert simulated.tobytes() == x.max(axis=1, initial=low).tobytes()
