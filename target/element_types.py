"""Floating-point element types and the numpy types holding them: the one table the dialect,
the planner, the simulator, the reference and the tools read (docs/precision.md).

bf16 and the FP8 formats are `ml_dtypes` types (numpy kind "V" for most: `is_float` answers
for all). Their arithmetic is ml_dtypes': each op widens to f32 and rounds the result back to
nearest, ties to even, which is how MLIR lowers arith on types the host lacks
(`arith-emulate-unsupported-floats`, LLVM's bf16 promotion). Conversions follow LLVM's
APFloat, as MLIR's `arith.truncf` does: the FN and FNUZ formats have no infinity, so an
overflow or an infinity becomes NaN (no saturation); FNUZ has no negative zero.

    f8E4M3FN    OCP / PyTorch float8_e4m3fn: max 448, NaN only (S.1111.111)
    f8E5M2      OCP / PyTorch float8_e5m2: max 57344, IEEE infinities
    f8E4M3FNUZ  Graphcore's float8_143 (PopXL): max 240, NaN is 0x80, no -0
    f8E5M2FNUZ  Graphcore's float8_152 (PopXL): max 57344, NaN is 0x80, no -0
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import as_strided as _as_strided

# MLIR's spelling of each floating-point element type, and the numpy type holding it.
FLOAT_DTYPES: dict[str, np.dtype] = {
    "f64": np.dtype(np.float64),
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f8E4M3FN": np.dtype(ml_dtypes.float8_e4m3fn),
    "f8E5M2": np.dtype(ml_dtypes.float8_e5m2),
    "f8E4M3FNUZ": np.dtype(ml_dtypes.float8_e4m3fnuz),
    "f8E5M2FNUZ": np.dtype(ml_dtypes.float8_e5m2fnuz),
}
# ml_dtypes' types (their numpy kind is "V", except float8_e5m2's "f": ask `is_float`).
NARROW_FLOATS = frozenset(dtype for name, dtype in FLOAT_DTYPES.items() if name not in ("f64", "f32", "f16"))
FP8_DTYPES = frozenset(dtype for dtype in FLOAT_DTYPES.values() if dtype.itemsize == 1)
_MLIR_NAMES = {dtype: name for name, dtype in FLOAT_DTYPES.items()}


def is_float(dtype: np.dtype) -> bool:
    """Whether numpy type `dtype` is a floating-point one, ml_dtypes' included."""
    return dtype.kind == "f" or dtype in NARROW_FLOATS


def mlir_name(dtype: np.dtype) -> str | None:
    """MLIR's spelling of floating-point `dtype` (`bf16` for ml_dtypes' bfloat16), else None."""
    return _MLIR_NAMES.get(np.dtype(dtype))


def numpy_float(name: str) -> np.dtype | None:
    """The numpy type of a float named MLIR's way (`bf16`) or numpy's (`bfloat16`), else None."""
    if name in FLOAT_DTYPES:
        return FLOAT_DTYPES[name]
    narrow = getattr(ml_dtypes, name, None)
    return np.dtype(narrow) if isinstance(narrow, type) and np.dtype(narrow) in NARROW_FLOATS else None


def as_strided(array: np.ndarray, shape: tuple[int, ...], strides: tuple[int, ...], writeable: bool = True) -> np.ndarray:
    """numpy's `as_strided` for every element type: numpy rebuilds the view from the array
    interface, whose type string for ml_dtypes' float8_e5m2 ('<f1') it cannot read back, so
    the narrow floats are strided as unsigned integers of their size and viewed back."""
    if array.dtype in NARROW_FLOATS:
        bits = np.dtype(f"u{array.dtype.itemsize}")
        return _as_strided(array.view(bits), shape, strides, writeable=writeable).view(array.dtype)
    return _as_strided(array, shape, strides, writeable=writeable)


def identity_value(name: str, value: float) -> float:
    """`value` (a combiner's identity: 0, 1, +-inf) as float type `name` holds it: an infinity
    becomes the largest finite value of its sign in a type without infinities (the FN and FNUZ
    formats, where APFloat would make it NaN, which max and min propagate)."""
    dtype = FLOAT_DTYPES.get(name)
    if dtype is None or not np.isinf(value) or not np.isnan(np.float32(value).astype(dtype)):
        return value
    return float(np.copysign(ml_dtypes.finfo(dtype).max, value))
