"""Element-wise `arith` and `math` ops as numpy kernels with MLIR's semantics: the tables
`runtime/codelet.py` binds each scalar or element-wise codelet op to, once, at compile time,
and the accumulation rules of the compute ops' kernels (`accumulation`).

Values are numpy arrays of the element type (`numpy_dtype`): signless `iN` as `intN`, `i1` as
bool, `index` as int64. Kernels broadcast, so one kernel serves scalars, tensors and the bodies
of `linalg.generic` alike, with the tile axis in front.

**Integers** wrap in their declared width: each op computes in the numpy type of that width.
Signed and unsigned ops view the bits as `intN` / `uintN`; `i1` computes in int8 (true is -1
when signed, 1 when unsigned) and keeps the low bit, so `addi` on i1 is xor, as in LLVM.
`divsi` and `remsi` truncate toward zero (C, not numpy's floor). Division by zero and shifts by
the width or more are poison in MLIR: any result is accepted, numpy's is kept.

**Floats** compute in their own type: f16 ops are numpy float16 ufuncs, which evaluate in f32
and round each result to f16 (LLVM does the same on hosts without f16 arithmetic). `fma`, `erf`
and `fpowi` evaluate in f64 and round once. NaNs: `maximumf` / `minimumf` propagate them
(np.maximum), `maxnumf` / `minnumf` ignore them (np.fmax); signed zeros compare as numpy does.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from ipu_mlir.target.element_types import FLOAT_DTYPES, NARROW_FLOATS, is_float

from .compiled import compiled
from .erf import erf64, erf_rounded, erfc64

Kernel = Callable[..., np.ndarray]
Reducer = Callable[[np.ndarray, tuple[int, ...]], np.ndarray]


def numpy_dtype(element_type: ir.Type) -> np.dtype | None:
    """The numpy type holding `element_type` (signless integers as signed), None if none does."""
    if isinstance(element_type, ir.IndexType):
        return np.dtype(np.int64)
    if isinstance(element_type, ir.IntegerType):
        if element_type.width == 1:
            return np.dtype(np.bool_)
        if element_type.width in (8, 16, 32, 64):
            return np.dtype(f"{'u' if element_type.is_unsigned else 'i'}{element_type.width // 8}")
        return None
    return FLOAT_DTYPES.get(str(element_type)) if isinstance(element_type, ir.FloatType) else None


# --- Integer views -------------------------------------------------------------------------


def _identity(x: np.ndarray) -> np.ndarray:
    return x


def _view(dtype: np.dtype, signedness: str) -> Callable[[np.ndarray], np.ndarray]:
    """How an integer op of `signedness` ("s", "u", or "" for either) sees `dtype`'s bits."""
    if dtype == np.bool_:
        if signedness == "s":
            return lambda x: -x.view(np.int8)
        return lambda x: x.view(np.int8 if signedness == "" else np.uint8)
    target = np.dtype(f"{'u' if signedness == 'u' else 'i'}{dtype.itemsize}") if signedness else dtype
    return _identity if target == dtype else lambda x: x.view(target)


def _back(dtype: np.dtype) -> Callable[[np.ndarray], np.ndarray]:
    """Integer bits computed in any view (or a wider type) back to `dtype`, wrapping."""
    if dtype == np.bool_:
        return lambda r: (r & 1).astype(np.bool_)
    return lambda r: r if r.dtype == dtype else r.view(dtype) if r.dtype.itemsize == dtype.itemsize else r.astype(dtype)


def _integer(fn: Kernel, dtype: np.dtype, signedness: str) -> Kernel:
    view, back = _view(dtype, signedness), _back(dtype)
    if view is _identity:
        return fn
    return lambda *xs: back(fn(*(view(x) for x in xs)))


def _convert(source: np.dtype, target: np.dtype, signedness: str) -> Kernel:
    """An integer extension or truncation (or index cast) from `source` to `target`."""
    if target == np.bool_:
        return _identity if source == np.bool_ else lambda x: (x & 1).astype(np.bool_)
    view = _view(source, signedness)
    return lambda x: view(x).astype(target, copy=False)


def cast_signed(source: np.dtype, target: np.dtype) -> Kernel:
    """linalg's `cast_signed` (linalg.fill, and the operands of products): integers sign-extend
    or truncate, floats round, integers and floats convert as signed."""
    if source == target:
        return _identity
    if is_float(target):
        return _cast("arith.sitofp" if not is_float(source) else "arith.extf", source, target)
    return _cast("arith.fptosi", source, target) if is_float(source) else _convert(source, target, "s")


# Sums of products whose result is one of these run in f32 and are rounded once (an f8 or bf16
# accumulator would lose the sum: the AMP accumulates f16 products in f32, docs/precision.md).
_SUMMED_IN_F32 = frozenset({np.dtype(np.float16), *NARROW_FLOATS})


def accumulation(operand: np.dtype, result: np.dtype) -> tuple[Kernel, Kernel]:
    """How operands enter a sum of products in the result's element type (linalg's
    cast_signed; f16 sums in f32 and i1 ones in i64, both rounded once) and how it leaves."""
    accumulator = np.dtype(np.float32) if result in _SUMMED_IN_F32 else np.dtype(np.int64) if result == np.bool_ else result
    return cast_signed(operand, accumulator), cast_signed(accumulator, result)


def _div_trunc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Signed division rounding toward zero: a minus its C remainder divides exactly."""
    return np.floor_divide(a - np.fmod(a, b), b)


def _ceil_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.floor_divide(a, b)
    return q + (q * b != a).astype(q.dtype)


def _ipowi(base: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """Integer power by squaring, wrapping; a negative exponent gives 1 / base^-e truncated
    (0 unless the base is 1 or -1), as MLIR's expansion of math.ipowi does."""
    result = np.ones(np.broadcast_shapes(base.shape, exponent.shape), base.dtype)
    power, remaining = np.broadcast_to(base, result.shape), np.where(exponent < 0, 0, exponent)
    while remaining.any():
        result = np.where(remaining & 1, result * power, result)
        power, remaining = power * power, remaining >> 1
    one = np.ones_like(result)
    reciprocal = np.where(base == 1, one, np.where(base == -1, np.where(exponent & 1, -one, one), np.zeros_like(one)))
    return np.where(exponent < 0, reciprocal, result)


_INT_BINARY: dict[str, tuple[Kernel, str]] = {
    "arith.addi": (np.add, ""),
    "arith.subi": (np.subtract, ""),
    "arith.muli": (np.multiply, ""),
    "arith.andi": (np.bitwise_and, ""),
    "arith.ori": (np.bitwise_or, ""),
    "arith.xori": (np.bitwise_xor, ""),
    "arith.shli": (np.left_shift, ""),
    "arith.shrsi": (np.right_shift, "s"),
    "arith.shrui": (np.right_shift, "u"),
    "arith.maxsi": (np.maximum, "s"),
    "arith.minsi": (np.minimum, "s"),
    "arith.maxui": (np.maximum, "u"),
    "arith.minui": (np.minimum, "u"),
    "arith.divsi": (_div_trunc, "s"),
    "arith.remsi": (np.fmod, "s"),
    "arith.divui": (np.floor_divide, "u"),
    "arith.remui": (np.remainder, "u"),
    "arith.floordivsi": (np.floor_divide, "s"),
    "arith.ceildivsi": (_ceil_div, "s"),
    "arith.ceildivui": (_ceil_div, "u"),
    "math.ipowi": (_ipowi, "s"),
}


def _bit_length(u: np.ndarray) -> np.ndarray:
    """Bits up to the highest set bit of unsigned `u` (0 for 0), by halving the shift: exact at
    every width, where log2 in floats is not."""
    length, x, shift = np.zeros_like(u), u.copy(), u.dtype.itemsize * 4
    while shift:
        high = (x >> shift) != 0
        length = np.where(high, length + shift, length)
        x = np.where(high, x >> shift, x)
        shift //= 2
    return length + (x != 0)


def _ctlz(u: np.ndarray) -> np.ndarray:
    return (u.dtype.itemsize * 8 - _bit_length(u)).astype(u.dtype)


def _cttz(u: np.ndarray) -> np.ndarray:
    lowest = u & (~u + np.ones_like(u))  # the lowest set bit (two's complement wraps in unsigned)
    return np.where(u == 0, u.dtype.itemsize * 8, _bit_length(lowest) - 1).astype(u.dtype)


def _ctpop(u: np.ndarray) -> np.ndarray:
    return np.bitwise_count(u).astype(u.dtype)


_INT_UNARY: dict[str, tuple[Kernel, str]] = {
    "math.absi": (np.abs, "s"),
    "math.ctlz": (_ctlz, "u"),
    "math.cttz": (_cttz, "u"),
    "math.ctpop": (_ctpop, "u"),
}
# On i1 (a one-bit integer): leading and trailing zeros are 1 for 0 and 0 for 1; ones count itself.
_I1_UNARY: dict[str, Kernel] = {"math.ctlz": np.logical_not, "math.cttz": np.logical_not, "math.ctpop": np.copy}

# --- Floats --------------------------------------------------------------------------------


def _round(x: np.ndarray) -> np.ndarray:
    """math.round: halves away from zero (np.round goes to even); x - trunc(x) is exact."""
    t = np.trunc(x)
    return t + np.copysign((np.abs(x - t) >= 0.5).astype(x.dtype), x)


def _fpowi(signed: Callable[[np.ndarray], np.ndarray]) -> Kernel:
    """x^n in f64, rounded once to x's type. The square or cube of f32 or f16 (one exponent
    for all: GPT-2's GELU cubes 400K elements a layer) is multiplied out in f64, x * x exact
    and x * x * x rounded once: correctly rounded where np.power may miss by an ulp of f64
    (0.2% of f32 cubes), with the same f32 bytes on 80M samples, and 15x the speed."""

    def kernel(x: np.ndarray, n: np.ndarray) -> np.ndarray:
        n = signed(n)
        power = int(n.reshape(-1)[0]) if x.dtype != np.float64 and n.size == 1 and n.ndim <= x.ndim else None
        if power in (2, 3) and x.dtype == np.float32:  # compiled: no f64 temporaries (3 MB each for GPT-2's)
            result = np.empty(x.shape, x.dtype)
            compiled(_powers)(np.ascontiguousarray(x).reshape(-1), power, result.reshape(-1))
            return result
        wide = x.astype(np.float64)
        if power in (2, 3):
            square = wide * wide
            return (square if power == 2 else np.multiply(square, wide, out=square)).astype(x.dtype)
        return np.power(wide, n.astype(np.float64)).astype(x.dtype)

    return kernel


def _powers(x, power, out):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """out = x^2 or x^3 taken in f64 (x * x exact, then one rounding) and rounded to out's type."""
    for i in range(x.size):
        v = np.float64(x[i])
        square = v * v
        out[i] = square if power == 2 else square * v


def _isnormal(x: np.ndarray) -> np.ndarray:
    return np.isfinite(x) & (np.abs(x) >= np.finfo(x.dtype).tiny)


# math's float classes, i1 results.
_FLOAT_CLASSES: dict[str, Kernel] = {
    "math.isnan": np.isnan,
    "math.isinf": np.isinf,
    "math.isfinite": np.isfinite,
    "math.isnormal": _isnormal,
}


def _in_f64(fn: Kernel) -> Kernel:
    """`fn` evaluated in f64 and rounded once to the operands' type."""
    return lambda *xs: fn(*(x.astype(np.float64) for x in xs)).astype(xs[0].dtype)


_FLOAT_BINARY: dict[str, Kernel] = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "math.powf": np.power,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
}

_FLOAT_UNARY: dict[str, Kernel] = {
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.expm1": np.expm1,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.log1p": np.log1p,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: np.reciprocal(np.sqrt(x)),
    "math.cbrt": np.cbrt,
    "math.tanh": np.tanh,
    "math.sinh": np.sinh,
    "math.cosh": np.cosh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.tan": np.tan,
    "math.asin": np.arcsin,
    "math.acos": np.arccos,
    "math.atan": np.arctan,
    "math.asinh": np.arcsinh,
    "math.acosh": np.arccosh,
    "math.atanh": np.arctanh,
    "math.ceil": np.ceil,
    "math.floor": np.floor,
    "math.trunc": np.trunc,
    "math.round": _round,
    "math.roundeven": np.rint,
}

# arith.cmpf predicates by their enum value: false, oeq, ogt, oge, olt, ole, one, ord, ueq,
# ugt, uge, ult, ule, une, uno, true. numpy comparisons are false on NaN, so the ordered ones
# are plain and each unordered one is the negation of the opposite ordered one.
_CMPF: list[Kernel] = [
    lambda a, b: np.zeros(np.broadcast_shapes(a.shape, b.shape), np.bool_),
    np.equal,
    np.greater,
    np.greater_equal,
    np.less,
    np.less_equal,
    lambda a, b: (a < b) | (a > b),
    lambda a, b: ~(np.isnan(a) | np.isnan(b)),
    lambda a, b: ~((a < b) | (a > b)),
    lambda a, b: ~(a <= b),
    lambda a, b: ~(a < b),
    lambda a, b: ~(a >= b),
    lambda a, b: ~(a > b),
    np.not_equal,
    lambda a, b: np.isnan(a) | np.isnan(b),
    lambda a, b: np.ones(np.broadcast_shapes(a.shape, b.shape), np.bool_),
]

# arith.cmpi predicates by their enum value: eq, ne, slt, sle, sgt, sge, ult, ule, ugt, uge.
_CMPI: list[tuple[Kernel, str]] = [
    (np.equal, ""),
    (np.not_equal, ""),
    (np.less, "s"),
    (np.less_equal, "s"),
    (np.greater, "s"),
    (np.greater_equal, "s"),
    (np.less, "u"),
    (np.less_equal, "u"),
    (np.greater, "u"),
    (np.greater_equal, "u"),
]


def select(condition: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`arith.select` as bits, b ^ ((a ^ b) & mask): np.where branches per element, and on a
    condition changing at random (a ReLU's) mispredicts half the time, 10x slower (measured:
    1.2M f32 9 ms, this 0.7 ms). Exact for every type, NaN payloads and signed zeros alike."""
    bits = np.dtype(f"u{a.dtype.itemsize}")
    other = b.view(bits)
    if other.size == 1 and other.ndim <= max(a.ndim, condition.ndim) and not other.any():  # a ReLU's 0: a & mask, 2 passes fewer
        return np.bitwise_and(a.view(bits), np.negative(condition, dtype=bits)).view(a.dtype)
    result = np.bitwise_and(np.bitwise_xor(a.view(bits), other), np.negative(condition, dtype=bits))
    result ^= other
    return result.view(a.dtype)


def _cast(name: str, source: np.dtype, target: np.dtype) -> Kernel | None:
    if name in ("arith.extf", "arith.truncf"):
        return lambda x: x.astype(target)
    if name in ("arith.sitofp", "arith.uitofp"):
        view = _view(source, "s" if name == "arith.sitofp" else "u")
        return lambda x: view(x).astype(target)
    if name in ("arith.fptosi", "arith.fptoui"):
        if target == np.bool_:
            return lambda x: x != 0
        unsigned = np.dtype(f"u{target.itemsize}") if name == "arith.fptoui" else target
        return lambda x: x.astype(unsigned).view(target)
    if name in ("arith.extsi", "arith.trunci", "arith.index_cast"):
        return _convert(source, target, "s")
    if name in ("arith.extui", "arith.index_castui"):
        return _convert(source, target, "u")
    if name == "arith.bitcast":
        return lambda x: x.view(target)
    return None


def elementwise_kernel(name: str, operands: list[np.dtype], result: np.dtype, predicate: int | None) -> Kernel | None:
    """The kernel of op `name` on operands of numpy types `operands` giving `result`, or None
    if the op is not an element-wise arith / math op this table knows."""
    first = operands[0] if operands else result
    if name == "arith.cmpf":
        return _CMPF[predicate]
    if name == "arith.cmpi":
        fn, signedness = _CMPI[predicate]
        view = _view(first, signedness)
        return fn if view is _identity else lambda a, b: fn(view(a), view(b))
    if name == "arith.select":
        return select
    if is_float(first) and name in _FLOAT_BINARY:
        return _FLOAT_BINARY[name]
    if is_float(first) and name in _FLOAT_UNARY:
        return _FLOAT_UNARY[name]
    if name == "math.erf" and is_float(first):
        return erf64 if first == np.float64 else erf_rounded
    if name == "math.erfc" and first.kind == "f":
        return erfc64 if first == np.float64 else _in_f64(erfc64)
    if name in _FLOAT_CLASSES and first.kind == "f":
        return _FLOAT_CLASSES[name]
    if name == "math.clampf" and first.kind == "f":
        # maximumf(minimumf(x, high), low), as upstream's MathToLLVM lowering defines it
        # (llvm/llvm-project#188776). MathOps.td's text and LLVM 22's math-expand-ops say
        # maxf(minf(x, low), high), which is no clamp: high for every x when low < high.
        return lambda x, low, high: np.maximum(np.minimum(x, high), low)
    if name == "math.fma":
        return (lambda a, b, c: a * b + c) if first == np.float64 else _in_f64(lambda a, b, c: a * b + c)
    if name == "math.fpowi":
        return _fpowi(_view(operands[1], "s"))
    if first == np.bool_ and name in _I1_UNARY:
        return _I1_UNARY[name]
    integer = _INT_BINARY.get(name) or _INT_UNARY.get(name)
    if first.kind in "biu" and integer is not None:
        return _integer(integer[0], first, integer[1])
    return _cast(name, first, result)


# --- Reductions ----------------------------------------------------------------------------

# Combiners of `yield combine(f(ins), out)` reductions: associative and commutative, so the
# reduction may be evaluated in any order (numpy sums pairwise; the reference sequentially).
_COMBINER_UFUNCS: dict[str, np.ufunc] = {
    "arith.addf": np.add,
    "arith.mulf": np.multiply,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
    "arith.addi": np.add,
    "arith.muli": np.multiply,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
}


def reducer(name: str, dtype: np.dtype) -> Reducer | None:
    """`combine`'s reduction over some axes of an array of `dtype`, in that type (numpy would
    otherwise widen small integers), or None if `name` is not an associative combiner."""
    ufunc = _COMBINER_UFUNCS.get(name)
    if ufunc is None:
        return None
    if is_float(dtype):
        return lambda x, axes: ufunc.reduce(x, axis=axes, dtype=dtype)
    signedness = _INT_BINARY[name][1]
    view, back = _view(dtype, signedness), _back(dtype)
    return lambda x, axes: back(ufunc.reduce(view(x), axis=axes))
