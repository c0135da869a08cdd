"""A tensor compared with a number (`aten.gt.Scalar` and its kin) as ATen computes it: in the
two's common type, the number first converted to that type. torch-mlir gets other pairings wrong.

Its folder of a one-element constant (a frozen parameter: `torch.where(self.weight > 0, x, -x)`;
`comparisonScaleFolder`, lib/Dialect/Torch/IR/TorchOps.cpp):
- a float one and an int (`weight > 0`) read the float as an integer: `gt` came out false for a
  weight of 0.012 or 1.5 alike, so the `where` took its other side everywhere (fuzz_pytorch
  seeds 3322, 3310); the read is undefined, its result changed with what the process ran
  before (seed 3089);
- an int one and a float crashed the process (a segmentation fault);
- a bool one sign-extends true to -1 (`true > 0` folded to false).

Its lowering (and its folder of a float one and a float) compares in the number's type, f64 or
i64: `f32(0.1) == 0.1` was false (ATen true), an int32 tensor `< 2**40` compared with 2**40 (ATen
with the number wrapped to int32: 0), a bool one with -1 as unsigned (`true < -1` true), and a
uint8 one sign-extended (`uint8(255) == 255` false).

So the tensor is cast to the common type (bool and uint8 to int32, compared signed) and the number given as a Python number
that type holds, converted as ATen converts it (`number_as`): the folder then sees only its one
sound pairing, and the lowering's wider comparison is exact."""

from __future__ import annotations

import math
from typing import Any


def comparison_rewrites() -> dict:
    """The table's entries: each comparison with a number -> its rewrite."""
    import torch

    aten = torch.ops.aten
    ops = (aten.eq.Scalar, aten.ne.Scalar, aten.lt.Scalar, aten.le.Scalar, aten.gt.Scalar, aten.ge.Scalar)
    return {op: _in_common_type(op) for op in ops}


def _in_common_type(op: Any) -> Any:
    def rewrite(x: Any, other: Any) -> Any:
        import torch

        if not isinstance(other, (bool, int, float)):
            return NotImplemented
        common = torch.result_type(x, other)
        if common.is_complex:
            return NotImplemented
        number = number_as(other, common)
        common = torch.int32 if common in (torch.bool, torch.uint8) else common  # compared signed
        if x.dtype == common and type(number) is type(other) and (number == other or math.isnan(number)):
            return NotImplemented  # already so: the op as it is
        return op(x.to(common), number)

    return rewrite


def number_as(value: bool | int | float, dtype: Any) -> int | float:
    """`value` converted to `dtype` as ATen converts a number for a comparison with a `dtype`
    tensor, as a Python number: an int wrapped to the type's width (`int32 < 2**40` compares
    with 0), a float rounded to the type (f16 and bf16 through f32, as c10's Half and BFloat16
    are made from a double; bf16 to nearest even as c10's `round_to_nearest_even`); other float
    types (fp8) as they are."""
    import numpy as np
    import torch

    if dtype == torch.bool:
        return int(bool(value))
    if not dtype.is_floating_point:  # wrapped to the type's width, as ATen's cast of the number
        info = torch.iinfo(dtype)
        return (int(value) - info.min) % (info.max - info.min + 1) + info.min
    if dtype == torch.float64 or dtype not in (torch.float32, torch.float16, torch.bfloat16):
        return float(value)
    with np.errstate(over="ignore"):  # to infinity, as in ATen
        single = np.float32(value)
        if dtype == torch.float16:
            return float(np.float16(single))
    if dtype == torch.bfloat16 and not np.isnan(single):
        bits = int(single.view(np.uint32))
        bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
        return float(np.uint32(bits).view(np.float32))
    return float(single)
