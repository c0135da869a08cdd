"""Codelets run for many tiles at once (`runtime/codelet.py`): each op family on T = 3 tiles
of different random data, against numpy (or Python integers) applied to each tile on its own;
integer wrap-around and division, NaN and f16 semantics; constants of every kind; errors.

(These semantics were also checked op by op against upstream MLIR's ExecutionEngine while
writing the runtime; the reference is slow to build, so the tests keep to numpy.)
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from mlir import ir
from numpy.lib.stride_tricks import as_strided

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.ops.erf import _erf_narrow
from ipu_mlir.dialects.ops.semantics import select
from ipu_mlir.runtime.codelet import CodeletError, CompiledCodelet, compile_codelet

T = 3
RNG = np.random.default_rng(7)
CONTEXT = make_context()
TYPES = {
    np.float32: "f32",
    np.float16: "f16",
    np.float64: "f64",
    np.int8: "i8",
    np.int16: "i16",
    np.int32: "i32",
    np.int64: "i64",
    np.bool_: "i1",
}
BITS = {np.int8: 8, np.int16: 16, np.int32: 32, np.int64: 64, np.bool_: 1}


def codelet(text: str, batch_rank: int = 1) -> CompiledCodelet:
    with CONTEXT:
        module = ir.Module.parse(text)
    return compile_codelet(module.body.operations[0], batch_rank)


def run(text: str, *inputs: np.ndarray) -> list[np.ndarray]:
    return codelet(text)(list(inputs))


def per_tile(fn, *inputs: np.ndarray) -> np.ndarray:
    """`fn` applied to each tile's inputs separately: the reference never sees the tile axis."""
    return np.stack([fn(*(x[t] for x in inputs)) for t in range(T)])


def floats(shape, dtype=np.float32, scale=2.0, batch=(T,)) -> np.ndarray:
    return (RNG.standard_normal((*batch, *shape)) * scale).astype(dtype)


def ints(shape, dtype, batch=(T,)) -> np.ndarray:
    if dtype == np.bool_:
        return RNG.integers(0, 2, (*batch, *shape)).astype(bool)
    info = np.iinfo(dtype)
    values = RNG.integers(info.min, info.max, (*batch, *shape), dtype=dtype, endpoint=True)
    values.reshape(-1)[:4] = [info.min, info.max, -1, 0]  # the edges wrap-around is about
    return values


def tensor(shape, dtype) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{TYPES[dtype]}>" if shape else f"tensor<{TYPES[dtype]}>"


def elementwise(op: str, dtypes: list, result, shape=(4, 5), suffix: str | None = None) -> str:
    """A codelet applying `op` to its arguments; the op's type suffix defaults to the result type."""
    args = ", ".join(f"%a{i}: {tensor(shape, d)}" for i, d in enumerate(dtypes))
    operands = ", ".join(f"%a{i}" for i in range(len(dtypes)))
    return f"""func.func @f({args}) -> {tensor(shape, result)} {{
  %0 = {op} {operands} : {suffix or tensor(shape, result)}
  return %0 : {tensor(shape, result)}
}}"""


# --- Floats ------------------------------------------------------------------------------------


def _round_half_away(x):
    return np.sign(x) * np.floor(np.abs(x.astype(np.float64)) + 0.5)


FLOAT_UNARY = {
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": np.expm1,
    "math.log": lambda x: np.log(np.abs(x)),
    "math.log2": lambda x: np.log2(np.abs(x)),
    "math.log10": lambda x: np.log10(np.abs(x)),
    "math.log1p": lambda x: np.log1p(np.abs(x)),
    "math.sqrt": lambda x: np.sqrt(np.abs(x)),
    "math.rsqrt": lambda x: 1 / np.sqrt(np.abs(x)),
    "math.cbrt": np.cbrt,
    "math.tanh": np.tanh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.atan": np.arctan,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.sinh": np.sinh,
    "math.cosh": np.cosh,
    "math.asinh": np.arcsinh,
    "math.acosh": np.arccosh,
    "math.atanh": np.arctanh,
    "math.trunc": np.trunc,
    "math.ceil": np.ceil,
    "math.floor": np.floor,
    "math.round": _round_half_away,
    "math.roundeven": np.round,
    "math.erf": np.vectorize(math.erf),
}
NEEDS_POSITIVE = {"math.log", "math.log2", "math.log10", "math.log1p", "math.sqrt", "math.rsqrt"}
NEEDS_UNIT = {"math.asin", "math.acos", "math.atanh"}  # inside (-1, 1)


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", sorted(FLOAT_UNARY))
def test_float_unary(op, dtype):
    x = floats((4, 5), dtype)
    x[0, 0, :3] = [0.5, -2.5, 1.5]  # halves: round and roundeven differ
    if op in NEEDS_POSITIVE:
        x = np.abs(x) + dtype(0.01)
    if op in NEEDS_UNIT:
        x = np.clip(x, dtype(-0.99), dtype(0.99))
    if op == "math.acosh":
        x = np.abs(x) + dtype(1)
    (got,) = run(elementwise(op, [dtype], dtype), x)
    # f16: numpy evaluates in f32 and rounds each op to f16, as the reference does.
    want = per_tile(lambda a: FLOAT_UNARY[op](a.astype(np.float64)).astype(dtype), x)
    assert got.dtype == dtype and got.shape == (T, 4, 5)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-3, atol=1e-6)


FLOAT_BINARY = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "math.powf": lambda a, b: np.abs(a) ** b,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
}


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("op", sorted(FLOAT_BINARY))
def test_float_binary(op, dtype):
    a, b = floats((4, 5), dtype), floats((4, 5), dtype)
    if op == "math.powf":
        a = np.abs(a)
    (got,) = run(elementwise(op, [dtype, dtype], dtype), a, b)
    want = per_tile(lambda x, y: FLOAT_BINARY[op](x.astype(np.float64), y.astype(np.float64)).astype(dtype), a, b)
    np.testing.assert_allclose(got, want, rtol=1e-5 if dtype == np.float32 else 1e-3, atol=1e-6)


NAN_MAX_MIN = {
    "arith.maximumf": lambda a, b: np.nan if math.isnan(a) or math.isnan(b) else max(a, b),
    "arith.minimumf": lambda a, b: np.nan if math.isnan(a) or math.isnan(b) else min(a, b),
    "arith.maxnumf": lambda a, b: b if math.isnan(a) else a if math.isnan(b) else max(a, b),
    "arith.minnumf": lambda a, b: b if math.isnan(a) else a if math.isnan(b) else min(a, b),
}


def with_nans(shape) -> np.ndarray:
    x = floats(shape)
    x[RNG.random(x.shape) < 0.3] = np.nan
    return x


@pytest.mark.parametrize("op", sorted(NAN_MAX_MIN))
def test_max_min_nan_semantics(op):
    a, b = with_nans((4, 5)), with_nans((4, 5))
    (got,) = run(elementwise(op, [np.float32, np.float32], np.float32), a, b)
    want = per_tile(lambda x, y: np.vectorize(NAN_MAX_MIN[op], otypes=[np.float32])(x, y), a, b)
    np.testing.assert_array_equal(got, want)


FMA_FPOWI = """func.func @f(%a: tensor<6xf32>, %b: tensor<6xf32>, %c: tensor<6xf32>, %n: tensor<6xi32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %0 = math.fma %a, %b, %c : tensor<6xf32>
  %1 = math.fpowi %a, %n : tensor<6xf32>, tensor<6xi32>
  return %0, %1 : tensor<6xf32>, tensor<6xf32>
}"""


def test_fma_and_fpowi():
    a, b, c = floats((6,)), floats((6,)), floats((6,))
    n = RNG.integers(-3, 4, (T, 6)).astype(np.int32)
    fma, powi = run(FMA_FPOWI, a, b, c, n)
    # x * y exact in f64 (24-bit significands), + z rounded once: the fused result, where f32's
    # x * y + z rounds twice and may cancel to another value (it did for some RNG states)
    np.testing.assert_allclose(fma, per_tile(lambda x, y, z: x.astype(np.float64) * y + z, a, b, c), rtol=1e-6)
    np.testing.assert_allclose(powi, per_tile(lambda x, k: x.astype(np.float64) ** k, a, n), rtol=1e-5)


def test_erf_is_accurate_in_f64():
    x = np.concatenate([np.linspace(-7, 7, 20001), np.geomspace(1e-30, 6, 2000), [0.0, np.inf, -np.inf]])
    (got,) = run(elementwise("math.erf", [np.float64], np.float64, shape=x.shape), x[None])
    want = np.array([math.erf(v) for v in x])
    assert np.max(np.abs(got[0] - want) / np.maximum(np.abs(want), 1e-300)) < 1e-13


def test_erf_on_f32_is_the_correctly_rounded_value():
    # over several blocks of the blocked evaluation, both polynomials, the clamp, specials
    x = np.concatenate(
        [np.linspace(-6, 6, 40001), np.geomspace(1e-38, 6, 3000), -np.geomspace(1e-38, 6, 3000), [0.0, -0.0, np.inf, -np.inf, np.nan]]
    ).astype(np.float32)
    (got,) = run(elementwise("math.erf", [np.float32], np.float32, shape=x.shape), x[None])
    want = np.array([math.erf(v) for v in x.astype(np.float64)]).astype(np.float32)
    assert got[0].tobytes() == want.tobytes()  # signed zeros and NaN included
    inside = x[np.abs(x) < 4].astype(np.float64)  # the f64 value before rounding
    exact = np.array([math.erf(v) for v in inside])
    assert np.max(np.abs(_erf_narrow(inside) - exact) / np.maximum(np.abs(exact), 1e-300)) < 3e-13


def test_erfc_against_math_erfc_where_one_minus_erf_cancels():
    x = np.concatenate([np.linspace(-6, 27, 20001), [0.0, np.inf, -np.inf]])
    for dtype, tolerance in ((np.float64, 5e-11), (np.float32, 1e-6)):  # f64: 1 - erf loses ~4 digits near 2.5
        values = x.astype(dtype)
        (got,) = run(elementwise("math.erfc", [dtype], dtype, shape=values.shape), values[None])
        want = np.array([math.erfc(v) for v in values.astype(np.float64)])  # down to 1e-319 at x = 27
        tiny = np.finfo(dtype).tiny
        relative = np.abs(got[0] - want) / np.maximum(want, tiny)
        assert np.max(relative[want > tiny]) < tolerance, dtype


def test_float_classes_and_clamp():
    x = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan, 1e-40, -1e-39, 3.4e38], np.float32)
    wanted = {
        "math.isnan": np.isnan(x),
        "math.isinf": np.isinf(x),
        "math.isfinite": np.isfinite(x),
        "math.isnormal": np.array([False, False, True, True, False, False, False, False, False, True]),  # 1e-40: subnormal
    }
    for name, want in wanted.items():
        (got,) = run(elementwise(name, [np.float32], np.bool_, shape=x.shape, suffix=tensor(x.shape, np.float32)), x[None])
        np.testing.assert_array_equal(got[0], want, err_msg=name)
    low, high = np.full_like(x, -1.0), np.full_like(x, 1.0)
    clamp = elementwise("math.clampf", [np.float32] * 3, np.float32, shape=x.shape).replace("%a0, %a1, %a2", "%a0 to [%a1, %a2]")
    (got,) = run(clamp, x[None], low[None], high[None])
    np.testing.assert_array_equal(got[0], np.clip(x, -1.0, 1.0))  # NaN stays NaN, as maximumf / minimumf keep it


PREDICATES = "false oeq ogt oge olt ole one ord ueq ugt uge ult ule une uno true".split()
RELATIONS = {"eq": np.equal, "gt": np.greater, "ge": np.greater_equal, "lt": np.less, "le": np.less_equal, "ne": np.not_equal}


def _cmpf_reference(predicate: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ordered = ~np.isnan(a) & ~np.isnan(b)
    if predicate in ("false", "true"):
        return np.full(a.shape, predicate == "true")
    if predicate in ("ord", "uno"):
        return ordered if predicate == "ord" else ~ordered
    relation = RELATIONS[predicate[1:]](a, b)
    return ordered & relation if predicate[0] == "o" else ~ordered | relation


@pytest.mark.parametrize("predicate", PREDICATES)
def test_cmpf_every_predicate_with_nans(predicate):
    a = with_nans((4, 5))
    b = np.where(RNG.random(a.shape) < 0.4, a, with_nans((4, 5)))  # some equal pairs
    (got,) = run(elementwise(f"arith.cmpf {predicate},", [np.float32, np.float32], np.bool_, suffix="tensor<4x5xf32>"), a, b)
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, per_tile(lambda x, y: _cmpf_reference(predicate, x, y), a, b))


# --- Integers: against Python integers, wrapped to the width -----------------------------------


def _signed(value: int, bits: int) -> int:
    return (int(value) + 2 ** (bits - 1)) % 2**bits - 2 ** (bits - 1)


def _unsigned(value: int, bits: int) -> int:
    return int(value) % 2**bits


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


# Each op on (signed a, signed b, unsigned a, unsigned b); the result is wrapped to the width.
INT_BINARY = {
    "arith.addi": lambda a, b, ua, ub: a + b,
    "arith.subi": lambda a, b, ua, ub: a - b,
    "arith.muli": lambda a, b, ua, ub: a * b,
    "arith.andi": lambda a, b, ua, ub: a & b,
    "arith.ori": lambda a, b, ua, ub: a | b,
    "arith.xori": lambda a, b, ua, ub: a ^ b,
    "arith.maxsi": lambda a, b, ua, ub: max(a, b),
    "arith.minsi": lambda a, b, ua, ub: min(a, b),
    "arith.maxui": lambda a, b, ua, ub: max(ua, ub),
    "arith.minui": lambda a, b, ua, ub: min(ua, ub),
    "arith.divsi": lambda a, b, ua, ub: _trunc_div(a, b),
    "arith.remsi": lambda a, b, ua, ub: a - b * _trunc_div(a, b),
    "arith.divui": lambda a, b, ua, ub: ua // ub,
    "arith.remui": lambda a, b, ua, ub: ua % ub,
    "arith.floordivsi": lambda a, b, ua, ub: a // b,
    "arith.ceildivsi": lambda a, b, ua, ub: -(-a // b),
}
DIVISIONS = {"arith.divsi", "arith.remsi", "arith.divui", "arith.remui", "arith.floordivsi", "arith.ceildivsi"}


def _int_reference(fn, dtype, *arrays) -> np.ndarray:
    bits = BITS[dtype]

    def one(*values):
        result = fn(*[_signed(v, bits) for v in values], *[_unsigned(v, bits) for v in values])
        return _signed(result, bits) % 2 == 1 if dtype == np.bool_ else _signed(result, bits)

    return np.vectorize(one, otypes=[dtype])(*arrays)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.bool_])
@pytest.mark.parametrize("op", sorted(INT_BINARY))
def test_integer_binary_wraps_in_its_width(op, dtype):
    a, b = ints((16,), dtype), ints((16,), dtype)
    if op in DIVISIONS:  # division by zero and MIN / -1 are poison
        b = np.where(b == 0, np.ones_like(b), b)
        if dtype != np.bool_:
            a = np.where(a == np.iinfo(dtype).min, np.zeros_like(a), a)
        else:
            b = np.ones_like(b)
    (got,) = run(elementwise(op, [dtype, dtype], dtype, shape=(16,)), a, b)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, per_tile(lambda x, y: _int_reference(INT_BINARY[op], dtype, x, y), a, b))


@pytest.mark.parametrize("dtype", [np.int8, np.int32])
@pytest.mark.parametrize("op", ["arith.shli", "arith.shrsi", "arith.shrui"])
def test_shifts_below_the_width(op, dtype):
    a, s = ints((16,), dtype), RNG.integers(0, BITS[dtype], (T, 16)).astype(dtype)
    reference = {
        "arith.shli": lambda a, s, ua, us: a << s,
        "arith.shrsi": lambda a, s, ua, us: a >> s,
        "arith.shrui": lambda a, s, ua, us: ua >> s,
    }
    (got,) = run(elementwise(op, [dtype, dtype], dtype, shape=(16,)), a, s)
    np.testing.assert_array_equal(got, per_tile(lambda x, y: _int_reference(reference[op], dtype, x, y), a, s))


POWER_ABS = """func.func @f(%b: tensor<16xi8>, %e: tensor<16xi8>) -> (tensor<16xi8>, tensor<16xi8>) {
  %0 = math.ipowi %b, %e : tensor<16xi8>
  %1 = math.absi %b : tensor<16xi8>
  return %0, %1 : tensor<16xi8>, tensor<16xi8>
}"""


def test_integer_power_and_abs():
    base = RNG.integers(-5, 6, (T, 16)).astype(np.int8)
    exponent = RNG.integers(0, 9, (T, 16)).astype(np.int8)
    exponent[:, :3], base[:, :3] = -2, [1, -1, 3]  # negative exponents: 1, 1, 0
    power, absolute = run(POWER_ABS, base, exponent)
    reference = lambda b, e, ub, ue: b**e if e >= 0 else (1 if b == 1 else (-1) ** e if b == -1 else 0)  # noqa: E731
    np.testing.assert_array_equal(power, per_tile(lambda x, y: _int_reference(reference, np.int8, x, y), base, exponent))
    np.testing.assert_array_equal(absolute, np.abs(base))


CMPI = {
    "eq": lambda a, b, ua, ub: a == b,
    "ne": lambda a, b, ua, ub: a != b,
    "slt": lambda a, b, ua, ub: a < b,
    "sle": lambda a, b, ua, ub: a <= b,
    "sgt": lambda a, b, ua, ub: a > b,
    "sge": lambda a, b, ua, ub: a >= b,
    "ult": lambda a, b, ua, ub: ua < ub,
    "ule": lambda a, b, ua, ub: ua <= ub,
    "ugt": lambda a, b, ua, ub: ua > ub,
    "uge": lambda a, b, ua, ub: ua >= ub,
}


@pytest.mark.parametrize("dtype", [np.int8, np.bool_])
@pytest.mark.parametrize("predicate", sorted(CMPI))
def test_cmpi_every_predicate(predicate, dtype):
    a = ints((16,), dtype)
    b = np.where(RNG.random(a.shape) < 0.3, a, ints((16,), dtype))
    (got,) = run(elementwise(f"arith.cmpi {predicate},", [dtype, dtype], np.bool_, shape=(16,), suffix=tensor((16,), dtype)), a, b)
    bits = BITS[dtype]
    want = np.vectorize(
        lambda x, y: CMPI[predicate](_signed(x, bits), _signed(y, bits), _unsigned(x, bits), _unsigned(y, bits)), otypes=[bool]
    )
    np.testing.assert_array_equal(got, per_tile(want, a, b))


CASTS = [
    ("arith.extsi", np.int8, np.int32, lambda x: x.astype(np.int32)),
    ("arith.extsi", np.bool_, np.int32, lambda x: -x.astype(np.int32)),  # true is -1
    ("arith.extui", np.int8, np.int32, lambda x: x.view(np.uint8).astype(np.int32)),
    ("arith.extui", np.bool_, np.int8, lambda x: x.astype(np.int8)),
    ("arith.trunci", np.int32, np.int8, np.vectorize(lambda v: _signed(v, 8), otypes=[np.int8])),
    ("arith.trunci", np.int32, np.bool_, lambda x: x % 2 == 1),
    ("arith.sitofp", np.int8, np.float32, lambda x: x.astype(np.float32)),
    ("arith.sitofp", np.bool_, np.float32, lambda x: -x.astype(np.float32)),
    ("arith.uitofp", np.int8, np.float32, lambda x: x.view(np.uint8).astype(np.float32)),
    ("arith.uitofp", np.bool_, np.float16, lambda x: x.astype(np.float16)),
    ("arith.fptosi", np.float32, np.int32, lambda x: np.trunc(x).astype(np.int32)),
    ("arith.fptosi", np.float32, np.bool_, lambda x: np.trunc(x) != 0),  # only 0 and -1 are defined
    ("arith.fptoui", np.float32, np.int8, lambda x: np.trunc(np.abs(x)).astype(np.uint8).view(np.int8)),
    ("arith.extf", np.float16, np.float32, lambda x: x.astype(np.float32)),
    ("arith.truncf", np.float32, np.float16, lambda x: x.astype(np.float16)),
    ("arith.bitcast", np.float32, np.int32, lambda x: x.view(np.int32)),
    ("arith.bitcast", np.int16, np.float16, lambda x: x.view(np.float16)),
]


@pytest.mark.parametrize("op,source,target,reference", CASTS, ids=[f"{c[0]}-{TYPES[c[1]]}-{TYPES[c[2]]}" for c in CASTS])
def test_casts(op, source, target, reference):
    x = floats((16,), source, scale=40) if np.dtype(source).kind == "f" else ints((16,), source)
    if op == "arith.fptoui":
        x = np.abs(x)
    if target == np.bool_ and op == "arith.fptosi":
        x = -(x > 0).astype(source)
    text = elementwise(op, [source], target, shape=(16,), suffix=f"{tensor((16,), source)} to {tensor((16,), target)}")
    (got,) = run(text, x)
    assert got.dtype == target
    np.testing.assert_array_equal(got, per_tile(reference, x))


INDEX_CASTS_FILL = """func.func @f(%a: tensor<8xi8>) -> (tensor<8xi32>, tensor<8xi32>) {
  %0 = arith.index_cast %a : tensor<8xi8> to tensor<8xindex>
  %1 = arith.index_cast %0 : tensor<8xindex> to tensor<8xi32>
  %2 = arith.index_castui %a : tensor<8xi8> to tensor<8xindex>
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c = arith.muli %c3, %c4 : index
  %s = arith.index_cast %c : index to i32
  %e = tensor.empty() : tensor<8xi32>
  %f = linalg.fill ins(%s : i32) outs(%e : tensor<8xi32>) -> tensor<8xi32>
  %3 = arith.index_cast %2 : tensor<8xindex> to tensor<8xi32>
  %4 = arith.addi %3, %f : tensor<8xi32>
  return %1, %4 : tensor<8xi32>, tensor<8xi32>
}"""


def test_index_casts_and_scalar_index_arithmetic():
    x = ints((8,), np.int8)
    signed, unsigned = run(INDEX_CASTS_FILL, x)
    np.testing.assert_array_equal(signed, x.astype(np.int32))
    np.testing.assert_array_equal(unsigned, x.view(np.uint8).astype(np.int32) + 12)


SELECT = """func.func @f(%c: tensor<4x5xi1>, %a: tensor<4x5xf32>, %b: tensor<4x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xf32>) {
  %0 = arith.select %c, %a, %b : tensor<4x5xi1>, tensor<4x5xf32>
  %t = arith.constant 1.0 : f32
  %u = arith.constant 2.0 : f32
  %k = arith.cmpf olt, %t, %u : f32
  %1 = arith.select %k, %b, %a : tensor<4x5xf32>
  return %0, %1 : tensor<4x5xf32>, tensor<4x5xf32>
}"""


def test_select_elementwise_and_with_a_scalar_condition():
    c, a, b = ints((4, 5), np.bool_), floats((4, 5)), floats((4, 5))
    chosen, whole = run(SELECT, c, a, b)
    np.testing.assert_array_equal(chosen, per_tile(np.where, c, a, b))
    np.testing.assert_array_equal(whole, b)


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.int8, np.int64, np.uint16, np.bool_])
def test_select_as_bits_is_np_where_byte_for_byte(dtype):
    # random bits: NaNs with payloads, signed zeros, infinities; the other side a row, then a scalar
    size = np.dtype(dtype).itemsize
    a = RNG.integers(0, 2 if dtype == np.bool_ else 256, (3, 64 * size), dtype=np.uint8).view(dtype)
    c = RNG.random((3, 64)) < 0.5
    for b in (a[1:2, ::-1], a[2:, 5:6], np.zeros((1, 1), dtype), np.zeros((1, 1, 1), dtype)):  # zero bits: a & mask
        for got, want in ((select(c, a, b), np.where(c, a, b)), (select(c[:1], b, a), np.where(c[:1], b, a))):
            assert (got.shape, got.dtype, got.tobytes()) == (want.shape, want.dtype, want.tobytes())


# --- ipu.matmul and ipu.conv -------------------------------------------------------------------


MATMUL_BATCHED = """func.func @f(%a: tensor<2x4x8xf32>, %b: tensor<2x8x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x4x2xf32>) {
  %0 = "ipu.matmul"(%a, %b) : (tensor<2x4x8xf32>, tensor<2x8x3xf32>) -> tensor<2x4x3xf32>
  %w = arith.constant dense<0.5> : tensor<2x8x2xf32>
  %1 = "ipu.matmul"(%a, %w) : (tensor<2x4x8xf32>, tensor<2x8x2xf32>) -> tensor<2x4x2xf32>
  return %0, %1 : tensor<2x4x3xf32>, tensor<2x4x2xf32>
}"""


def test_matmul_batched_f32_with_a_constant_operand():
    a, b = floats((2, 4, 8)), floats((2, 8, 3))
    product, constant = run(MATMUL_BATCHED, a, b)
    np.testing.assert_allclose(product, per_tile(np.matmul, a, b), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(constant, per_tile(lambda x: x @ np.full((2, 8, 2), 0.5), a), rtol=1e-5, atol=1e-5)


MATMUL_WIDENING = (
    """func.func @f(%a: tensor<4x16xi8>, %b: tensor<16x3xi8>, %c: tensor<4x16xf16>, %d: tensor<16x3xf16>) """
    """-> (tensor<4x3xi32>, tensor<4x3xf16>) {
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x16xi8>, tensor<16x3xi8>) -> tensor<4x3xi32>
  %1 = "ipu.matmul"(%c, %d) : (tensor<4x16xf16>, tensor<16x3xf16>) -> tensor<4x3xf16>
  return %0, %1 : tensor<4x3xi32>, tensor<4x3xf16>
}"""
)


def test_matmul_accumulates_i8_in_i32_and_f16_in_f32():
    a, b = ints((4, 16), np.int8), ints((16, 3), np.int8)
    c, d = floats((4, 16), np.float16), floats((16, 3), np.float16)
    wide, half = run(MATMUL_WIDENING, a, b, c, d)
    np.testing.assert_array_equal(wide, per_tile(lambda x, y: x.astype(np.int32) @ y.astype(np.int32), a, b))
    assert half.dtype == np.float16
    np.testing.assert_allclose(
        half, per_tile(lambda x, y: (x.astype(np.float32) @ y.astype(np.float32)).astype(np.float16), c, d), rtol=1e-3
    )


def test_matmul_on_i1_sums_modulo_2():
    a, b = ints((4, 8), np.bool_), ints((8, 3), np.bool_)
    text = """func.func @f(%a: tensor<4x8xi1>, %b: tensor<8x3xi1>) -> tensor<4x3xi1> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<4x8xi1>, tensor<8x3xi1>) -> tensor<4x3xi1>
  return %0 : tensor<4x3xi1>
}"""
    (got,) = run(text, a, b)
    np.testing.assert_array_equal(got, per_tile(lambda x, y: (x.astype(int) @ y.astype(int)) % 2 == 1, a, b))


def _conv_reference(x, w, strides, dilations, padding, groups):
    """ipu.conv by its definition, one output element at a time."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    top, left, bottom, right = padding
    xp = np.zeros((n, c, h + top + bottom, wd + left + right), np.float64)
    xp[:, :, top : top + h, left : left + wd] = x
    oh = (h + top + bottom - dilations[0] * (kh - 1) - 1) // strides[0] + 1
    ow = (wd + left + right - dilations[1] * (kw - 1) - 1) // strides[1] + 1
    out = np.zeros((n, f, oh, ow))
    for o in range(f):
        g = o // (f // groups)
        for i in range(oh):
            for j in range(ow):
                rows = i * strides[0] + dilations[0] * np.arange(kh)
                cols = j * strides[1] + dilations[1] * np.arange(kw)
                window = xp[:, g * cg : (g + 1) * cg][:, :, rows][:, :, :, cols]
                out[:, o, i, j] = np.einsum("nchw,chw->n", window, w[o])
    return out


CONVS = [  # input, filter, strides, dilations, padding, groups
    ((2, 3, 7, 6), (4, 3, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1),
    ((1, 4, 9, 8), (6, 2, 3, 2), (2, 1), (1, 2), (1, 0, 2, 1), 2),
    ((2, 4, 6, 6), (4, 1, 3, 3), (1, 2), (2, 1), (2, 2, 2, 2), 4),
]


def conv(input_shape, filter_shape, strides, dilations, padding, groups) -> str:
    result = _conv_reference(np.zeros(input_shape), np.zeros(filter_shape), strides, dilations, padding, groups).shape
    array = lambda v: ", ".join(map(str, v))  # noqa: E731
    return (
        f"""func.func @f(%x: {tensor(input_shape, np.float32)}, %w: {tensor(filter_shape, np.float32)}) """
        f"""-> {tensor(result, np.float32)} {{
  %0 = "ipu.conv"(%x, %w) {{strides = array<i64: {array(strides)}>, dilations = array<i64: {array(dilations)}>, """
        f"""padding = array<i64: {array(padding)}>, groups = {groups} : i64}}
       : ({tensor(input_shape, np.float32)}, {tensor(filter_shape, np.float32)}) -> {tensor(result, np.float32)}
  return %0 : {tensor(result, np.float32)}
}}"""
    )


@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CONVS)
def test_conv_strides_dilations_padding_groups(input_shape, filter_shape, strides, dilations, padding, groups):
    x, w = floats(input_shape), floats(filter_shape)
    (got,) = run(conv(input_shape, filter_shape, strides, dilations, padding, groups), x, w)
    np.testing.assert_allclose(
        got, per_tile(lambda a, b: _conv_reference(a, b, strides, dilations, padding, groups), x, w), rtol=1e-4, atol=1e-4
    )


CONV_I8 = """func.func @f(%x: tensor<1x2x5x5xi8>, %w: tensor<3x2x2x2xi8>) -> tensor<1x3x4x4xi32> {
  %0 = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64}
       : (tensor<1x2x5x5xi8>, tensor<3x2x2x2xi8>) -> tensor<1x3x4x4xi32>
  return %0 : tensor<1x3x4x4xi32>
}"""


def test_conv_i8_into_i32():
    x, w = ints((1, 2, 5, 5), np.int8), ints((3, 2, 2, 2), np.int8)
    (got,) = run(CONV_I8, x, w)
    np.testing.assert_array_equal(
        got, per_tile(lambda a, b: _conv_reference(a, b, (1, 1), (1, 1), (0, 0, 0, 0), 1).round().astype(np.int32), x, w)
    )


# --- linalg.generic ----------------------------------------------------------------------------


def generic(maps: list[str], iterators: list[str], ins: list[tuple[str, str]], outs: list[tuple[str, str]], body: str, results: str) -> str:
    """A linalg.generic in the form torch-mlir and the codelet builders emit."""
    maps_text = ", ".join(f"affine_map<{m}>" for m in maps)
    kinds = ", ".join(f'"{k}"' for k in iterators)
    ins_text = f"ins({', '.join(v for v, _ in ins)} : {', '.join(t for _, t in ins)}) " if ins else ""
    outs_text = f"outs({', '.join(v for v, _ in outs)} : {', '.join(t for _, t in outs)})"
    return (
        f"linalg.generic {{indexing_maps = [{maps_text}], iterator_types = [{kinds}]}} {ins_text}{outs_text} {{\n{body}\n  }} -> {results}"
    )


GENERIC_VIEWS_BODY = """  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):
    %0 = arith.addf %a, %b : f32
    %1 = arith.mulf %0, %s : f32
    %2 = arith.subf %1, %c : f32
    linalg.yield %2 : f32"""
GENERIC_VIEWS_OP = generic(
    ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d1)", "(d0, d1) -> (d0, 0)", "(d0, d1) -> (d1, d0)"],
    ["parallel", "parallel"],
    [("%x", "tensor<4x6xf32>"), ("%bias", "tensor<6xf32>"), ("%x", "tensor<4x6xf32>")],
    [("%e", "tensor<6x4xf32>")],
    GENERIC_VIEWS_BODY,
    "tensor<6x4xf32>",
)
GENERIC_VIEWS = f"""func.func @f(%x: tensor<4x6xf32>, %bias: tensor<6xf32>) -> tensor<6x4xf32> {{
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  %s = arith.addf %two, %one : f32
  %e = tensor.empty() : tensor<6x4xf32>
  %r = {GENERIC_VIEWS_OP}
  return %r : tensor<6x4xf32>
}}"""


def test_generic_broadcast_transpose_constant_index_and_captured_scalar():
    x, bias = floats((4, 6)), floats((6,))
    (got,) = run(GENERIC_VIEWS, x, bias)
    np.testing.assert_allclose(got, per_tile(lambda a, b: ((a + b) * 3 - a[:, :1]).T, x, bias), rtol=1e-6)


FLOAT_COMBINERS = {
    "arith.addf": np.add,
    "arith.mulf": np.multiply,
    "arith.maximumf": lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, np.maximum(a, b)),
    "arith.minimumf": lambda a, b: np.where(np.isnan(a) | np.isnan(b), np.nan, np.minimum(a, b)),
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
}
INT_COMBINERS = [
    "arith.addi",
    "arith.muli",
    "arith.maxsi",
    "arith.minsi",
    "arith.maxui",
    "arith.minui",
    "arith.andi",
    "arith.ori",
    "arith.xori",
]


def reduction(combiner: str, dtype, body_first_out: bool = False) -> str:
    """A reduction of dim 1 of a 4x5x3x2 input into a 3x2x4 result (the output map rotates
    the parallel loops) starting from the init argument; `combine(out, f)` or `combine(f, out)`."""
    t, source, result = TYPES[dtype], tensor((4, 5, 3, 2), dtype), tensor((3, 2, 4), dtype)
    operands = "%o, %a" if body_first_out else "%a, %o"
    op = generic(
        ["(d0, d1, d2, d3) -> (d0, d1, d2, d3)", "(d0, d1, d2, d3) -> (d2, d3, d0)"],
        ["parallel", "reduction", "parallel", "parallel"],
        [("%x", source)],
        [("%init", result)],
        f"  ^bb0(%a: {t}, %o: {t}):\n    %0 = {combiner} {operands} : {t}\n    linalg.yield %0 : {t}",
        result,
    )
    return f"""func.func @f(%x: {source}, %init: {result}) -> {result} {{
  %r = {op}
  return %r : {result}
}}"""


def _sequential(combine, x, init):
    """The reduction of `reduction` as the reference loops run it, one point after the other."""
    acc = init.transpose(2, 0, 1).copy()
    for k in range(x.shape[1]):
        acc = combine(x[:, k], acc)
    return acc.transpose(1, 2, 0)


@pytest.mark.parametrize("combiner", sorted(FLOAT_COMBINERS))
def test_float_reductions_with_each_combiner(combiner):
    x, init = floats((4, 5, 3, 2), scale=1.0), floats((3, 2, 4), scale=1.0)
    if "max" in combiner or "min" in combiner:
        x[RNG.random(x.shape) < 0.15] = np.nan
    (got,) = run(reduction(combiner, np.float32), x, init)
    want = per_tile(lambda a, i: _sequential(FLOAT_COMBINERS[combiner], a, i), x, init)
    np.testing.assert_allclose(got, want, rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.bool_])
@pytest.mark.parametrize("combiner", INT_COMBINERS)
def test_integer_reductions_with_each_combiner(combiner, dtype):
    x, init = ints((4, 5, 3, 2), dtype), ints((3, 2, 4), dtype)
    (got,) = run(reduction(combiner, dtype, body_first_out=True), x, init)
    want = per_tile(lambda a, i: _sequential(lambda p, q: _int_reference(INT_BINARY[combiner], dtype, p, q), a, i), x, init)
    assert got.dtype == dtype
    np.testing.assert_array_equal(got, want)


MATMUL_GENERIC_OP = generic(
    ["(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"],
    ["parallel", "parallel", "reduction"],
    [("%a", "tensor<4x8xf32>"), ("%b", "tensor<8x3xf32>")],
    [("%z", "tensor<4x3xf32>")],
    "  ^bb0(%x: f32, %y: f32, %o: f32):\n    %p = arith.mulf %x, %y : f32\n    %s = arith.addf %o, %p : f32\n    linalg.yield %s : f32",
    "tensor<4x3xf32>",
)
MATMUL_GENERIC = f"""func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {{
  %c = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %z = linalg.fill ins(%c : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = {MATMUL_GENERIC_OP}
  return %r : tensor<4x3xf32>
}}"""


def test_matmul_as_a_generic_with_a_filled_init():
    a, b = floats((4, 8)), floats((8, 3))
    (got,) = run(MATMUL_GENERIC, a, b)
    np.testing.assert_allclose(got, per_tile(np.matmul, a, b), rtol=1e-5, atol=1e-5)


def test_reduction_of_a_value_constant_along_the_reduced_loop():
    x = floats((4,))
    op = generic(
        ["(d0, d1) -> (d0)", "(d0, d1) -> (d1)", "(d0, d1) -> (d0)"],
        ["parallel", "reduction"],
        [("%x", "tensor<4xf32>"), ("%w", "tensor<5xf32>")],
        [("%x", "tensor<4xf32>")],
        "  ^bb0(%a: f32, %b: f32, %o: f32):\n    %s = arith.addf %a, %o : f32\n    linalg.yield %s : f32",
        "tensor<4xf32>",
    )
    text = f"""func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %w = tensor.empty() : tensor<5xf32>
  %r = {op}
  return %r : tensor<4xf32>
}}"""
    (got,) = run(text, x)
    np.testing.assert_allclose(got, 6 * x, rtol=1e-6)  # init + five times x


def test_reduction_of_a_constant_counts_the_points():
    op = generic(
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"],
        ["parallel", "reduction"],
        [("%x", "tensor<4x6xi32>")],
        [("%x0", "tensor<4xi32>")],
        "  ^bb0(%a: i32, %o: i32):\n    %s = arith.addi %one, %o : i32\n    linalg.yield %s : i32",
        "tensor<4xi32>",
    )
    text = f"""func.func @f(%x: tensor<4x6xi32>, %x0: tensor<4xi32>) -> tensor<4xi32> {{
  %one = arith.constant 1 : i32
  %r = {op}
  return %r : tensor<4xi32>
}}"""
    start = ints((4,), np.int32) // 2
    (got,) = run(text, ints((4, 6), np.int32), start)
    np.testing.assert_array_equal(got, start + 6)


def stepping(body: str) -> str:
    """`reduction` with the body `body`, which may use a constant %half."""
    text = reduction("arith.addf", np.float32).replace("%0 = arith.addf %a, %o : f32\n    linalg.yield %0 : f32", body)
    return text.replace("  %r = linalg", "  %half = arith.constant 0.5 : f32\n  %r = linalg")


DECAY = "%h = arith.mulf %o, %half : f32\n    %0 = arith.addf %h, %a : f32\n    linalg.yield %0 : f32"


@pytest.mark.parametrize(
    "body,step",
    [
        ("%0 = arith.subf %a, %o : f32\n    linalg.yield %0 : f32", lambda a, o: a - o),  # not associative
        (DECAY, lambda a, o: o * 0.5 + a),
        ("linalg.yield %a : f32", lambda a, o: a),  # the last point wins
    ],
    ids=["subf", "decay", "last"],
)
def test_non_associative_reductions_step_through_the_points(body, step):
    x, init = floats((4, 5, 3, 2)), floats((3, 2, 4))
    (got,) = run(stepping(body), x, init)
    np.testing.assert_allclose(got, per_tile(lambda a, i: _sequential(step, a, i), x, init), rtol=1e-5, atol=1e-6)


def pooling(stride: int, dilation: int, window: int) -> str:
    """A max pooling of a 2x3x9x9 input by a `window` x `window` window."""
    out = (9 - dilation * (window - 1) - 1) // stride + 1
    op = generic(
        [
            f"(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * {stride} + d4 * {dilation}, d3 * {stride} + d5 * {dilation})",
            "(d0, d1, d2, d3, d4, d5) -> (d4, d5)",
            "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)",
        ],
        ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"],
        [("%x", "tensor<2x3x9x9xf32>"), ("%k", f"tensor<{window}x{window}xf32>")],
        [("%init", f"tensor<2x3x{out}x{out}xf32>")],
        "  ^bb0(%a: f32, %b: f32, %o: f32):\n    %0 = arith.maximumf %o, %a : f32\n    linalg.yield %0 : f32",
        f"tensor<2x3x{out}x{out}xf32>",
    )
    return f"""func.func @f(%x: tensor<2x3x9x9xf32>) -> tensor<2x3x{out}x{out}xf32> {{
  %ninf = arith.constant 0xFF800000 : f32
  %e = tensor.empty() : tensor<2x3x{out}x{out}xf32>
  %init = linalg.fill ins(%ninf : f32) outs(%e : tensor<2x3x{out}x{out}xf32>) -> tensor<2x3x{out}x{out}xf32>
  %k = tensor.empty() : tensor<{window}x{window}xf32>
  %r = {op}
  return %r : tensor<2x3x{out}x{out}xf32>
}}"""


@pytest.mark.parametrize("stride,dilation,window", [(2, 1, 2), (1, 2, 3)])
def test_pooling_window_maps(stride, dilation, window):
    x = floats((2, 3, 9, 9))
    out = (9 - dilation * (window - 1) - 1) // stride + 1

    def pool(a):
        reach = dilation * (window - 1) + 1
        return np.array(
            [
                [
                    [
                        [
                            a[n, c, i * stride : i * stride + reach : dilation, j * stride : j * stride + reach : dilation].max()
                            for j in range(out)
                        ]
                        for i in range(out)
                    ]
                    for c in range(3)
                ]
                for n in range(2)
            ]
        )

    (got,) = run(pooling(stride, dilation, window), x)
    np.testing.assert_array_equal(got, per_tile(pool, x))


TWO_OUTPUTS_OP = generic(
    ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)", "(d0, d1) -> (d1, d0)"],
    ["parallel", "parallel"],
    [("%x", "tensor<4x6xi8>")],
    [("%e", "tensor<4x6xi32>"), ("%m", "tensor<6x4xi1>")],
    "  ^bb0(%a: i8, %o: i32, %p: i1):\n    %w = arith.extsi %a : i8 to i32\n    %s = arith.muli %w, %w : i32\n"
    "    %z = arith.constant 0 : i8\n    %n = arith.cmpi slt, %a, %z : i8\n    linalg.yield %s, %n : i32, i1",
    "(tensor<4x6xi32>, tensor<6x4xi1>)",
)
TWO_OUTPUTS = f"""func.func @f(%x: tensor<4x6xi8>) -> (tensor<4x6xi32>, tensor<6x4xi1>) {{
  %e = tensor.empty() : tensor<4x6xi32>
  %m = tensor.empty() : tensor<6x4xi1>
  %r:2 = {TWO_OUTPUTS_OP}
  return %r#0, %r#1 : tensor<4x6xi32>, tensor<6x4xi1>
}}"""


def test_generic_with_two_outputs_and_integer_body():
    x = ints((4, 6), np.int8)
    squares, negative = run(TWO_OUTPUTS, x)
    np.testing.assert_array_equal(squares, x.astype(np.int32) ** 2)
    np.testing.assert_array_equal(negative, per_tile(lambda a: (a < 0).T, x))


# --- Tensor ops and constants ------------------------------------------------------------------


SLICES = (
    """func.func @f(%x: tensor<4x6xf32>, %y: tensor<2x3xf32>) """
    """-> (tensor<2x3xf32>, tensor<4x6xf32>, tensor<4x7xf32>, tensor<3x8xf32>, tensor<6x3xf32>, tensor<2x2xf32>) {
  %0 = tensor.extract_slice %x[1, 0] [2, 3] [2, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  %1 = tensor.insert_slice %y into %x[2, 1] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<4x6xf32>
  %2 = tensor.pad %0 low[1, 2] high[1, 2] {
  ^bb0(%i: index, %j: index):
    %v = arith.constant -1.5 : f32
    tensor.yield %v : f32
  } : tensor<2x3xf32> to tensor<4x7xf32>
  %c = tensor.collapse_shape %x [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  %3 = tensor.expand_shape %c [[0, 1]] output_shape [3, 8] : tensor<24xf32> into tensor<3x8xf32>
  %k = arith.constant dense<[[1.0, 2.0, 3.0]]> : tensor<1x3xf32>
  %z = arith.constant 0.25 : f32
  %e = tensor.empty() : tensor<3x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<3x3xf32>) -> tensor<3x3xf32>
  %4 = tensor.concat dim(0) %y, %k, %f : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<3x3xf32>) -> tensor<6x3xf32>
  %5 = tensor.extract_slice %x[0, 1] [1, 4] [1, 1] : tensor<4x6xf32> to tensor<4xf32>
  %6 = tensor.expand_shape %5 [[0, 1]] output_shape [2, 2] : tensor<4xf32> into tensor<2x2xf32>
  return %0, %1, %2, %3, %4, %6 : tensor<2x3xf32>, tensor<4x6xf32>, tensor<4x7xf32>, tensor<3x8xf32>, tensor<6x3xf32>, tensor<2x2xf32>
}"""
)


def test_slices_pad_reshapes_concat_fill():
    x, y = floats((4, 6)), floats((2, 3))
    sliced, inserted, padded, reshaped, joined, reduced = run(SLICES, x, y)

    def insert(a, b):
        a = a.copy()
        a[2:4, 1:4] = b
        return a

    np.testing.assert_array_equal(sliced, x[:, 1:4:2, 0:5:2])
    np.testing.assert_array_equal(inserted, per_tile(insert, x, y))
    np.testing.assert_array_equal(padded, per_tile(lambda a: np.pad(a[1:4:2, 0:5:2], ((1, 1), (2, 2)), constant_values=-1.5), x))
    np.testing.assert_array_equal(reshaped, x.reshape(T, 3, 8))
    np.testing.assert_array_equal(joined, per_tile(lambda b: np.concatenate([b, [[1, 2, 3]], np.full((3, 3), 0.25)]), y))
    np.testing.assert_array_equal(reduced, x[:, 0, 1:5].reshape(T, 2, 2))


BLOB = np.array([1.5, -2.0, 3.25, 4.0], np.float32)
CONSTANTS = f"""module {{
  func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi8>) {{
    %r = arith.constant dense_resource<weights> : tensor<4xf32>
    %s = arith.constant dense<2.0> : tensor<4xf32>
    %m = arith.constant dense<[true, false, false, true]> : tensor<4xi1>
    %i = arith.constant dense<[[1, -2], [127, -128]]> : tensor<2x2xi8>
    %0 = arith.addf %x, %r : tensor<4xf32>
    %1 = arith.mulf %x, %s : tensor<4xf32>
    %2 = arith.select %m, %x, %r : tensor<4xi1>, tensor<4xf32>
    return %0, %1, %2, %i : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xi8>
  }}
}}
{{-#
  dialect_resources: {{
    builtin: {{
      weights: "0x04000000{BLOB.tobytes().hex()}"
    }}
  }}
#-}}"""


def test_constants_dense_splat_i1_and_dense_resource():
    x = floats((4,))
    added, doubled, chosen, constant = run(CONSTANTS, x)
    np.testing.assert_array_equal(added, x + BLOB)
    np.testing.assert_array_equal(doubled, 2 * x)
    np.testing.assert_array_equal(chosen, np.where([True, False, False, True], x, BLOB))
    assert constant.shape == (T, 2, 2) and constant.dtype == np.int8
    np.testing.assert_array_equal(constant[2], [[1, -2], [127, -128]])


NO_INPUTS = """func.func @f() -> tensor<3xi32> {
  %c = arith.constant dense<[1, 2, 3]> : tensor<3xi32>
  %0 = arith.muli %c, %c : tensor<3xi32>
  return %0 : tensor<3xi32>
}"""


def test_a_codelet_without_inputs_runs_once():
    (got,) = run(NO_INPUTS)
    np.testing.assert_array_equal(got, [[1, 4, 9]])


# --- Errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "line,name",
    [
        ("%0 = tensor.extract %x[%i] : tensor<4xf32>", "tensor.extract"),
        ("%0 = index.constant 1", "index.constant"),
    ],
)
def test_unsupported_ops_are_compile_time_errors_with_their_location(line, name):
    text = f"""func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{
  %i = arith.constant 0 : index
  %y = arith.constant 1 : i32
  {line}
  return %x : tensor<4xf32>
}}"""
    with pytest.raises(CodeletError, match=rf"^-:4:8: error: '{name}' is not supported in codelets$"):
        codelet(text)


ERRORS = {
    "missing blob": (
        "%0 = arith.constant dense_resource<missing> : tensor<4xf32>",
        "-:3:8: error: 'arith.constant' op reads dense_resource<missing> : tensor<4xf32>, whose blob is not available",
    ),
    "tf32": (
        "%0 = arith.constant dense<1.0> : tensor<4xtf32>",
        "'arith.constant' op uses element type tf32, which codelets do not support",
    ),
    "floordiv map": (
        'linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 floordiv 2)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}'
        " ins(%x : tensor<8xf32>) outs(%y : tensor<4xf32>) {\n  ^bb0(%a: f32, %o: f32):\n    linalg.yield %a : f32\n  } -> tensor<4xf32>",
        r"'linalg.generic' op has indexing map \(d0\) -> \(d0 floordiv 2\), which codelets do not support \(only linear maps\)",
    ),
    "output map": (
        "linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>], "
        'iterator_types = ["parallel", "reduction"]}'
        " ins(%m : tensor<4x4xf32>) outs(%n : tensor<4x1xf32>) {\n  ^bb0(%a: f32, %o: f32):\n    linalg.yield %a : f32\n  } "
        "-> tensor<4x1xf32>",
        "'linalg.generic' op has an output indexing map that is not a permutation of its parallel loops",
    ),
    "pad by position": (
        "tensor.pad %y low[1] high[0] {\n  ^bb0(%p: index):\n    %c = arith.index_cast %p : index to i32\n    %f = "
        "arith.sitofp %c : i32 to f32\n"
        "    tensor.yield %f : f32\n  } : tensor<4xf32> to tensor<5xf32>",
        "'tensor.pad' op pads with a value depending on the position, which codelets do not support",
    ),
    "conv shapes": (
        '"ipu.conv"(%i, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>, groups = 1 : i64}'
        " : (tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) -> tensor<1x3x3x3xf32>",
        r"'ipu.conv' op has inconsistent shapes \(1, 2, 5, 5\) \* \(3, 2, 2, 2\) -> \(1, 3, 3, 3\) \(groups 1\)",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_forms_codelets_do_not_support(case):
    line, message = ERRORS[case]
    text = (
        f"""func.func @f(%x: tensor<8xf32>, %y: tensor<4xf32>, %m: tensor<4x4xf32>, %n: tensor<4x1xf32>, %i: """
        f"""tensor<1x2x5x5xf32>, %w: tensor<3x2x2x2xf32>) {{
  %e = tensor.empty() : tensor<4xf32>
  %0 = {line.removeprefix("%0 = ")}
  return
}}"""
    )
    with pytest.raises(CodeletError, match=message):
        codelet(text)


def test_unsupported_op_in_a_generic_body():
    op = generic(
        ["(d0) -> (d0)", "(d0) -> (d0)"],
        ["parallel"],
        [("%x", "tensor<4xf32>")],
        [("%x", "tensor<4xf32>")],
        "  ^bb0(%a: f32, %o: f32):\n    %i = linalg.index 0 : index\n    linalg.yield %a : f32",
        "tensor<4xf32>",
    )
    text = f"func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {{\n  %r = {op}\n  return %r : tensor<4xf32>\n}}"
    with pytest.raises(CodeletError, match=r"-:4:10: error: 'linalg.index' is not supported in codelets"):
        codelet(text)


def test_calls_with_wrong_inputs_are_errors():
    kernel = codelet(elementwise("arith.addf", [np.float32, np.float32], np.float32))
    with pytest.raises(CodeletError, match="takes 2 arguments, got 1"):
        kernel([floats((4, 5))])
    with pytest.raises(CodeletError, match="argument #1 expects"):
        kernel([floats((4, 5)), floats((5, 4))])


# --- Batch axes --------------------------------------------------------------------------------

SHIFT_BY_SCALAR = generic(
    ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0, d1)"],
    ["parallel", "parallel"],
    [("%x", "tensor<4x6xf32>")],
    [("%e", "tensor<4x6xf32>")],
    "  ^bb0(%a: f32, %o: f32):\n    %0 = arith.addf %a, %t : f32\n    linalg.yield %0 : f32",
    "tensor<4x6xf32>",
)
SCALED_ROW_SUMS = generic(
    ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"],
    ["parallel", "reduction"],
    [("%x", "tensor<4x6xf32>")],
    [("%f", "tensor<4xf32>")],
    "  ^bb0(%a: f32, %o: f32):\n    %p = arith.mulf %a, %t : f32\n    %0 = arith.addf %p, %o : f32\n    linalg.yield %0 : f32",
    "tensor<4xf32>",
)
CAPTURED_SCALAR = f"""func.func @f(%x: tensor<4x6xf32>, %s: f32) -> (tensor<4x6xf32>, tensor<4xf32>) {{
  %t = arith.mulf %s, %s : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %r = {SHIFT_BY_SCALAR}
  %z = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%s : f32) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  %q = {SCALED_ROW_SUMS}
  return %r, %q : tensor<4x6xf32>, tensor<4xf32>
}}"""  # a scalar argument, and a value computed from it used in generic bodies

BATCH_CASES = {  # a representative codelet of each kind
    "addf": elementwise("arith.addf", [np.float32, np.float32], np.float32),
    "muli-i8": elementwise("arith.muli", [np.int8, np.int8], np.int8, shape=(16,)),
    "fma-fpowi": FMA_FPOWI,
    "ipowi-absi": POWER_ABS,
    "index-casts-fill": INDEX_CASTS_FILL,
    "select": SELECT,
    "slices-pad-reshape-concat-insert": SLICES,
    "constants": CONSTANTS,
    "no-inputs": NO_INPUTS,
    "generic-views": GENERIC_VIEWS,
    "generic-captured-scalar": CAPTURED_SCALAR,
    "generic-two-outputs": TWO_OUTPUTS,
    "reduction-addf": reduction("arith.addf", np.float32),
    "reduction-maxui-i8": reduction("arith.maxui", np.int8, body_first_out=True),
    "reduction-stepping": stepping(DECAY),
    "matmul-generic": MATMUL_GENERIC,
    "pooling": pooling(2, 1, 2),
    "pooling-dilated": pooling(1, 2, 3),
    "matmul-batched": MATMUL_BATCHED,
    "matmul-f16-i8": MATMUL_WIDENING,
    **{f"conv-{i}": conv(*shapes) for i, shapes in enumerate(CONVS)},
    "conv-i8": CONV_I8,
}
BATCHES = {  # argument i has batch shape batches[i % len(batches)]
    "2": [(2, 3)],
    "3": [(2, 1, 3)],
    "2-broadcast": [(2, 3), (1, 3), (2, 1)],
    "3-broadcast": [(2, 1, 3), (1, 4, 3), (2, 4, 1)],
}


def random_array(batch: tuple[int, ...], shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    return floats(shape, dtype, batch=batch) if dtype.kind == "f" else ints(shape, dtype, batch=batch)


def check_results(got: list[np.ndarray], want: list[np.ndarray], kernel: CompiledCodelet, tiles: tuple[int, ...]) -> None:
    """`got` are `kernel`'s results on `tiles` and hold `want` (exactly: the same numpy ops)."""
    assert len(got) == len(want) == len(kernel.results)
    for g, w, (_, shape) in zip(got, want, kernel.results):
        assert g.shape == (*tiles, *shape) and g.dtype == w.dtype
        np.testing.assert_array_equal(g.reshape(w.shape), w)


@pytest.mark.parametrize("batches", BATCHES.values(), ids=BATCHES)
@pytest.mark.parametrize("case", BATCH_CASES)
def test_batch_axes_give_the_results_of_the_flattened_tiles(case, batches):
    rank = len(batches[0])
    kernel, flat = codelet(BATCH_CASES[case], rank), codelet(BATCH_CASES[case])
    inputs = [random_array(batches[i % len(batches)], shape, dtype) for i, (shape, dtype) in enumerate(kernel.arguments)]
    tiles = np.broadcast_shapes((1,) * rank, *(x.shape[:rank] for x in inputs))
    flattened = [np.broadcast_to(x, (*tiles, *shape)).reshape(-1, *shape) for x, (shape, _) in zip(inputs, kernel.arguments)]
    check_results(kernel(inputs), flat(flattened), kernel, tiles)


def presented(kind: str, shape: tuple[int, ...], dtype: np.dtype) -> np.ndarray:
    """An argument over batch (2, 3) as a view of the `kind` the simulator may pass."""
    if kind == "broadcast_to":  # stride 0, read-only
        return np.broadcast_to(random_array((1, 3), shape, dtype), (2, 3, *shape))
    if kind == "zero strides":
        base = random_array((2, 1), shape, dtype)
        return as_strided(base, (2, 3, *shape), (base.strides[0], 0, *base.strides[2:]), writeable=False)
    if kind == "size 1":  # writable: it must stay as it was
        return random_array((1, 1), shape, dtype)
    view = random_array((3, 2), shape, dtype).swapaxes(0, 1)[::-1]  # "reversed": negative strides, read-only
    view.flags.writeable = False
    return view


KINDS = ["broadcast_to", "zero strides", "size 1", "reversed"]


@pytest.mark.parametrize("first", KINDS)
@pytest.mark.parametrize("case", BATCH_CASES)
def test_views_as_arguments_are_read_not_written(case, first):
    kernel = codelet(BATCH_CASES[case], 2)
    kinds = KINDS[KINDS.index(first) :] + KINDS[: KINDS.index(first)]
    inputs = [presented(kinds[i % len(kinds)], shape, dtype) for i, (shape, dtype) in enumerate(kernel.arguments)]
    before = [x.copy() for x in inputs]
    tiles = np.broadcast_shapes((1, 1), *(x.shape[:2] for x in inputs))
    materialised = [np.ascontiguousarray(np.broadcast_to(x, (*tiles, *x.shape[2:]))) for x in inputs]
    check_results(kernel(inputs), kernel(materialised), kernel, tiles)
    for x, old in zip(inputs, before):
        np.testing.assert_array_equal(x, old)


@pytest.mark.parametrize(
    "shapes,message",
    [
        ([(2, 3, 4, 5), (3, 3, 4, 5), (2, 3, 4, 5)], r"argument #1 expects batch axes broadcasting with \(2, 3\), got \(3, 3\)$"),
        ([(2, 1, 4, 5), (1, 3, 4, 5), (2, 2, 4, 5)], r"argument #2 expects batch axes broadcasting with \(2, 3\), got \(2, 2\)$"),
        (
            [(2, 3, 4, 5), (3, 4, 5), (2, 3, 4, 5)],
            r"argument #1 expects \(\*, \*, 4, 5\) float32 \(2 batch axes\), got \(3, 4, 5\) float32$",
        ),
        (
            [(2, 3, 4, 5), (2, 3, 4, 5), (2, 3, 1, 4, 5)],
            r"argument #2 expects \(\*, \*, 4, 5\) float32 \(2 batch axes\), got \(2, 3, 1, 4, 5\) float32$",
        ),
    ],
    ids=["sizes", "against-two", "too-few-axes", "too-many-axes"],
)
def test_batch_axes_that_do_not_broadcast_or_are_not_there_are_errors(shapes, message):
    kernel = codelet(elementwise("math.fma", [np.float32] * 3, np.float32), 2)
    with pytest.raises(CodeletError, match=rf"^error: codelet @f {message}"):
        kernel([np.zeros(shape, np.float32) for shape in shapes])


@pytest.mark.parametrize("tiles", [3, 16])
def test_a_per_channel_operand_shared_by_tiles_gives_the_same_results_made_dense(tiles):
    # (x - mean[c]) * scale[c] over a 4 x 6 piece: mean and scale repeat along the pixels and are
    # the same on every tile; from 8 tiles sharing them on, they are made dense (DENSE)
    op = generic(
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)", "(d0, d1) -> (d0)", "(d0, d1) -> (d0, d1)"],
        ["parallel", "parallel"],
        [("%x", "tensor<4x6xf32>"), ("%m", "tensor<4xf32>"), ("%s", "tensor<4xf32>")],
        [("%x", "tensor<4x6xf32>")],
        "  ^bb0(%a: f32, %b: f32, %c: f32, %o: f32):\n    %0 = arith.subf %a, %b : f32\n    %1 = arith.mulf %0, %c : f32"
        "\n    linalg.yield %1 : f32",
        "tensor<4x6xf32>",
    )
    text = f"""func.func @f(%x: tensor<4x6xf32>, %m: tensor<4xf32>, %s: tensor<4xf32>) -> tensor<4x6xf32> {{
  %r = {op}
  return %r : tensor<4x6xf32>
}}"""
    x, m, s = floats((4, 6), batch=(tiles,)), floats((4,), batch=(1,)), floats((4,), batch=(1,))
    (got,) = codelet(text)([x, m, s])
    np.testing.assert_array_equal(got, (x - m[:, :, None]) * s[:, :, None])
