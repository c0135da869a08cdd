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

import math
from collections.abc import Callable

import numpy as np
from mlir import ir

from ipu_mlir.target.element_types import FLOAT_DTYPES, NARROW_FLOATS, is_float

from .compiled import compiled

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


_SQRT_PI = math.sqrt(math.pi)


def _erf64(x: np.ndarray) -> np.ndarray:
    """erf in f64 to ~1e-14 relative: for |x| < 2.5 the all-positive series
    erf(x) = 2/sqrt(pi) exp(-x^2) sum (2x^2)^n x / (2n+1)!!, beyond it 1 - erfc(x) with erfc's
    continued fraction (checked against math.erf on a dense grid in the tests)."""
    a = np.abs(x)
    near = a < 2.5
    result = np.empty_like(a)
    # each formula on its own elements only: the series costs 100 passes, the fraction 40
    s = a[near]
    z, term, total = 2.0 * s * s, s.copy(), s.copy()
    for n in range(1, 34):
        term *= z / (2 * n + 1)
        total += term
    result[near] = (2 / _SQRT_PI) * np.exp(-s * s) * total
    far = a[~near]
    fraction = far.copy()
    for k in range(20, 0, -1):
        fraction = far + (k / 2) / fraction
    result[~near] = 1.0 - np.exp(-far * far) / _SQRT_PI / fraction
    return np.copysign(result, x)


# f32 and f16 erf: erf(x) / x as a polynomial in x^2 on |x| < 2, and exp(x^2) erfc(x) as one
# in |x| - 3 on 2 <= |x| < 4: Chebyshev least-squares fits to math.erf in f64 (numpy's chebfit
# on 5,000 Chebyshev points, degrees 13 and 11), highest power first; relative error below 3e-13
# on each range, checked against math.erf in the tests.
_ERF_NEAR = (
    -1.1181109776649182e-12, 4.501152563439024e-11, -9.285393797653632e-10, 1.351527841234299e-08, -1.5969604796986245e-07,
    1.6374956576417007e-06, -1.491196248417594e-05, 0.00012053821743686515, -0.0008548213089694233, 0.00522397203702156,
    -0.026866168998082536, 0.11283791645568003, -0.37612638901640405, 1.1283791670953573,
)  # fmt: skip
_ERFC_FAR = (
    -7.831861983072991e-08, 3.385953211716897e-07, -1.218084457471768e-06, 5.089234153439267e-06, -2.099877810819131e-05,
    8.358425256679585e-05, -0.0003241228024874935, 0.0012230319300719596, -0.004479431363275684, 0.015884371774086865,
    -0.054372259994799464, 0.1790011511728218,
)  # fmt: skip


def _horner(coefficients: tuple[float, ...], x: np.ndarray) -> np.ndarray:
    result = np.full_like(x, coefficients[0])
    for c in coefficients[1:]:
        result *= x
        result += c
    return result


def _erf_narrow(x: np.ndarray) -> np.ndarray:
    """erf in f64 to 3e-13 relative, for results rounded to f32 or f16: almost always the
    correctly rounded value, as the f64 series gives. The first polynomial runs on every
    element (clamped), the second only on the few at |x| >= 2, clamped to 4, past which erf
    rounds to +-1 in f32 (1 - erf(4) = 1.5e-8, under half an ulp)."""
    a = np.abs(x)
    s = np.minimum(a, 2.0)  # NaN stays NaN
    result = s * _horner(_ERF_NEAR, s * s)
    far = a >= 2.0
    if far.any():
        c = np.minimum(a[far], 4.0)
        result[far] = 1.0 - np.exp(-c * c) * _horner(_ERFC_FAR, c - 3.0)
    return np.copysign(result, x)


_BLOCK = 16384  # elements: a block's f64 temporaries stay in a 1 MB L2 cache


def _erf_rounded(x: np.ndarray) -> np.ndarray:
    """erf of an f32 or f16 array, evaluated in f64 block by block and rounded once: 4x the
    speed of the series on whole arrays (GELU over 685K elements 52 -> 12 ms), the same bytes.
    f32 runs `_erf_blocks` compiled (BERT's GELU, 387K elements a layer, 2.3x faster)."""
    flat = x.reshape(-1)
    result = np.empty(flat.shape, x.dtype)
    if x.dtype == np.float32:
        compiled(_erf_blocks)(np.ascontiguousarray(flat), result, np.array(_ERF_NEAR), np.array(_ERFC_FAR))
        return result.reshape(x.shape)
    for start in range(0, flat.size, _BLOCK):
        result[start : start + _BLOCK] = _erf_narrow(flat[start : start + _BLOCK].astype(np.float64))
    return result.reshape(x.shape)


def _erf_into(x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """f32 erf (`_erf_rounded`) into `out` if given, through a new array: `_erf_blocks` reads
    a block's far elements after writing the block, and `out` may be `x` or a strided view."""
    result = _erf_rounded(x)
    if out is None:
        return result
    np.copyto(out, result)
    return out


def erf_f32() -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The two coefficient tuples of f32 `math.erf` (`_erf_blocks`), for runtime/fused.py's
    kernels, which evaluate it op for op as `_erf_blocks` does (their tests compare bytes)."""
    return _ERF_NEAR, _ERFC_FAR


def _erf_blocks(x, out, near, far):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """`_erf_narrow` on f32 `x` into `out`, op for op in f64 (two roundings a Horner step: numba
    does not contract without fastmath), so the same bytes, over blocks of 512 elements: the
    first polynomial on every element one coefficient at a time (loops the compiler vectorizes),
    then, in a block holding any, the elements at |x| >= 2 gathered and taken the same way:
    element by element with a branch each, in a second pass over the array, they cost 1.9 ms
    against 1.0 where 18% are far, and the pass 0.3 ms of 1.4 where almost none are (BERT's GELU,
    393K elements a layer)."""
    block = 512
    s, z, p = np.empty(block), np.empty(block), np.empty(block)
    where, c, q = np.empty(block, np.int64), np.empty(block), np.empty(block)
    for start in range(0, x.size, block):
        count = min(block, x.size - start)
        for i in range(count):
            a = abs(np.float64(x[start + i]))
            s[i] = 2.0 if a > 2.0 else a  # NaN stays NaN, as np.minimum
            z[i] = s[i] * s[i]
            p[i] = near[0]
        for k in range(1, near.size):
            for i in range(count):
                p[i] = p[i] * z[i] + near[k]
        far_count = 0
        for i in range(count):
            v = np.float64(x[start + i])
            out[start + i] = math.copysign(s[i] * p[i], v)
            far_count += abs(v) >= 2.0  # a count, not the gather below: the loop vectorizes
        if far_count == 0:  # almost every block of BERT's GELU (2.5e-6 of its inputs far)
            continue
        far_count = 0
        for i in range(count):
            where[far_count] = start + i
            far_count += abs(np.float64(x[start + i])) >= 2.0
        for j in range(far_count):
            c[j] = min(abs(np.float64(x[where[j]])), 4.0)
            q[j] = far[0]
        for k in range(1, far.size):
            for j in range(far_count):
                q[j] = q[j] * (c[j] - 3.0) + far[k]
        for j in range(far_count):
            out[where[j]] = math.copysign(1.0 - math.exp(-c[j] * c[j]) * q[j], np.float64(x[where[j]]))


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


def _erfc64(x: np.ndarray) -> np.ndarray:
    """erfc in f64: 1 - erf below 2.5 (erfc(2.5) = 4e-4: 3e-11 relative there, ample for f32),
    erfc's continued fraction from 2.5 up (where 1 - erf would cancel to nothing), and
    2 - erfc(-x) for negative x."""
    a = np.abs(x)
    result = np.empty_like(a)
    near = a < 2.5
    result[near] = 1.0 - _erf64(a[near])
    far = a[~near]
    fraction = far.copy()
    for k in range(20, 0, -1):
        fraction = far + (k / 2) / fraction
    result[~near] = np.exp(-far * far) / _SQRT_PI / fraction
    return np.where(x < 0, 2.0 - result, result)


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
        return _erf64 if first == np.float64 else _erf_rounded
    if name == "math.erfc" and first.kind == "f":
        return _erfc64 if first == np.float64 else _in_f64(_erfc64)
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


# --- Kernels writing into a given array ----------------------------------------------------

# ufuncs whose every result is exactly rounded (or exact): the same bytes whatever numpy's inner
# loop (SIMD or scalar, contiguous or strided output), so they may write into any `out=`.
# Transcendental ones (exp, tanh, power...) are left out: numpy may evaluate them by another
# algorithm on another layout.
_EXACT_UFUNCS = frozenset(
    [np.add, np.subtract, np.multiply, np.divide, np.fmod, np.maximum, np.minimum, np.fmax, np.fmin, np.copysign]
    + [np.negative, np.absolute, np.sqrt, np.ceil, np.floor, np.trunc, np.rint]
    + [np.equal, np.not_equal, np.greater, np.greater_equal, np.less, np.less_equal]
    + [np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.left_shift, np.right_shift, np.floor_divide, np.remainder]
)


def out_kernel(kernel: Kernel, operands: list[np.dtype], result: np.dtype) -> Kernel | None:
    """`kernel` (from `elementwise_kernel`) if it may be called with `out=` an array of `result`
    and give the bytes it gives into a new array: an exactly rounded ufunc whose own result type
    on `operands` is `result` (with `out=` numpy would otherwise cast), or f32 erf (`_erf_into`,
    which runtime/fused.py compiles into a body's pass); else None."""
    if kernel is _erf_rounded and operands == [np.dtype(np.float32)] and result == np.float32:
        return _erf_into
    if not isinstance(kernel, np.ufunc) or kernel not in _EXACT_UFUNCS or len(operands) != kernel.nin:
        return None
    try:
        resolved = kernel.resolve_dtypes((*operands, None))
    except TypeError:
        return None
    return kernel if resolved[-1] == result else None


# arith.cmpf predicates comparing x with c as (relation, ordered): an ordered one is false on
# NaN, an unordered one true.
_RELATIONS = {2: (">", True), 3: (">=", True), 4: ("<", True), 5: ("<=", True)}
_RELATIONS |= {9: (">", False), 10: (">=", False), 11: ("<", False), 12: ("<=", False)}
_FLIPPED = {">": "<", ">=": "<=", "<": ">", "<=": ">="}  # c REL x as x REL' c
_NEGATED = {">": "<=", ">=": "<", "<": ">=", "<=": ">"}  # not (x REL c), the other ordering


def compare_select(predicate: int, x_first: bool, x_when_true: bool, constant: np.ndarray, quiet: bool = False) -> Kernel | None:
    """`select(cmpf(predicate, x, c), x, c)` (`x_first`: x is cmpf's left operand;
    `x_when_true`: select's true value is x, the other c) as one max or min of x and the scalar
    constant c, a kernel(x, c, out=None) giving the same bytes as the compare and select
    (a ReLU in two passes instead of four), or None when no max or min does.

    As `(x REL c) ? x : c`: REL > or >= is a max, < or <= a min. On NaN the ordered predicates
    give c, as np.fmax / np.fmin do; the unordered give x, as np.maximum / np.minimum do, with
    x's own NaN bits. Ties (x == c) are bitwise equal unless c is zero, where the max and min
    return either zero: only a strict REL against +0.0 is done, its result never -0.0, so
    adding +0.0 makes either zero +0.0 and leaves every other value as it is, NaNs too when
    they are quiet: an unordered REL only if x is `quiet`, never a signaling NaN (the result
    of IEEE arithmetic), whose bits the addition would change."""
    if predicate not in _RELATIONS or constant.size != 1 or constant.dtype.kind != "f":
        return None
    c = constant.reshape(-1)[0]
    relation, ordered = _RELATIONS[predicate]
    if not x_first:
        relation = _FLIPPED[relation]
    if not x_when_true:
        relation, ordered = _NEGATED[relation], not ordered
    if np.isnan(c) or (c == 0 and (not (ordered or quiet) or relation in (">=", "<=") or np.signbit(c))):
        return None
    larger = relation in (">", ">=")
    return Clamp((np.fmax if larger else np.fmin) if ordered else (np.maximum if larger else np.minimum), c == 0)


class Clamp:
    """A `compare_select` kernel(x, c, out=None): `ufunc(x, c)`, then c added when `fix` (c is
    +0.0: either zero becomes +0.0). Its parts are read by runtime/fused.py."""

    __slots__ = ("fix", "ufunc")

    def __init__(self, ufunc: np.ufunc, fix: bool):
        self.ufunc, self.fix = ufunc, bool(fix)

    def __call__(self, x: np.ndarray, c: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        result = self.ufunc(x, c, out=out)
        return np.add(result, c, out=result) if self.fix else result
