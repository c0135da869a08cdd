"""Element-wise kernels that write into a given array (`out=`) with the bytes they give into a
new one: the exactly rounded ufuncs and f32 erf (`out_kernel`), and a compare-and-select against
a constant as one max or min (`compare_select`, `Clamp`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .erf import erf_into, erf_rounded

if TYPE_CHECKING:  # for annotations only: semantics.py imports this module
    from .semantics import Kernel

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
    on `operands` is `result` (with `out=` numpy would otherwise cast), or f32 erf (`erf_into`,
    which runtime/fused.py compiles into a body's pass); else None."""
    if kernel is erf_rounded and operands == [np.dtype(np.float32)] and result == np.float32:
        return erf_into
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
