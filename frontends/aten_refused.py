"""ATen ops torch-mlir cannot lower, written as ops it can (part of frontends/aten_rewrites.py's
table, so they hold for the export and the training step alike).

- scatters along a negative dimension (`x.scatter_(-1, index, src)`, `scatter_add`,
  `scatter_reduce`, a scattered value): torch-mlir's lowering crashes the process (a segfault,
  or "LLVM ERROR: out of memory"); the dimension is made positive first, as ATen wraps it;

- `torch.cdist` (`aten._cdist_forward`): refused by torch-mlir; written as ATen's CPU kernel
  computes it (aten/src/ATen/native/Distance.cpp `cdist_impl`): for p = 2 with more than 25
  rows on a side (or `compute_mode="use_mm_for_euclid_dist"`) the matmul form
  `_euclidean_dist`, else the element-wise differences;
- `adaptive_max_pool2d` whose windows do not tile the input evenly (7 -> 2): torch-mlir asserts
  "only support cases with fixed stride size". ATen's windows (AdaptiveMaxPooling2d.cpp:
  start = floor(i * in / out), end = ceil((i + 1) * in / out)) as slices, one per output row
  and one per output column (max is separable), the index of each maximum as ATen gives it
  (row-major position in the input plane); even windows keep PyTorch's own decomposition.
- `torch.linalg.norm` (`aten.linalg_norm`, `aten.linalg_norm.ord_str`): torch-mlir fails to
  legalize it; written as ATen's `linalg_norm` and `linalg_matrix_norm` compute it
  (aten/src/ATen/native/LinearAlgebra.cpp) from `linalg_vector_norm`, which it lowers: the
  2-norm without `ord`, a vector norm over one dimension, and the Frobenius, 1, -1, inf and -inf
  matrix norms; the SVD's (`"nuc"`, 2, -2) are left to torch-mlir's refusal.

Their backward ops in a training step (`_cdist_backward`, `adaptive_max_pool2d_backward`, also
refused) as ATen computes them: the gradient of each distance by cases of p (Distance.cpp's
`Dist::backward`), and each output's gradient added at the input position its index names.
"""

from __future__ import annotations

import functools
import math
from typing import Any


def refused_op_rewrites() -> dict:
    import torch

    aten = torch.ops.aten
    scatters = (aten.scatter.src, aten.scatter.value, aten.scatter_add.default, aten.scatter_reduce.two)
    return {
        **{op: functools.partial(_scatter_along_positive_dimension, op) for op in scatters},
        aten.scatter.reduce: _scatter_with_reduce,
        aten.scatter.value_reduce: _scatter_with_reduce,
        torch.ops.aten._cdist_forward.default: _cdist,
        torch.ops.aten._cdist_backward.default: _cdist_backward,
        torch.ops.aten.adaptive_max_pool2d.default: _adaptive_max_pool2d,
        torch.ops.aten.adaptive_max_pool2d_backward.default: _adaptive_max_pool2d_backward,
        aten.linalg_norm.default: _linalg_norm,
        aten.linalg_norm.ord_str: _linalg_norm,
    }


def _linalg_norm(x: Any, ord: Any = None, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Any:  # noqa: A002
    """ATen's `linalg_norm` (LinearAlgebra.cpp) through `linalg_vector_norm`, NotImplemented for
    the norms of singular values."""
    import torch

    vector_norm = torch.ops.aten.linalg_vector_norm.default
    if ord is None:  # the 2-norm of the elements, which is also the Frobenius norm
        return vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if dim is None:
        dim = [0] if x.dim() == 1 and not isinstance(ord, str) else [0, 1]
    dim = [d % max(x.dim(), 1) for d in dim]
    if len(dim) == 1:
        return vector_norm(x, ord, dim, keepdim, dtype=dtype)
    if ord == "fro":
        return vector_norm(x, 2, dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or abs(ord) not in (1, math.inf):
        return NotImplemented  # the nuclear and spectral norms need an SVD
    first, second = dim if abs(ord) == 1 else dim[::-1]  # the inf norm is the 1 norm of the transpose
    column_sums = vector_norm(x, 1, [first], keepdim, dtype=dtype)
    second -= 1 if not keepdim and first < second else 0
    return column_sums.amax(second, keepdim) if ord > 0 else column_sums.amin(second, keepdim)


def _scatter_along_positive_dimension(op: Any, x: Any, dim: int, *args: Any, **kwargs: Any) -> Any:
    if dim >= 0:
        return NotImplemented
    return op(x, dim % max(x.dim(), 1), *args, **kwargs)


def _scatter_with_reduce(x: Any, dim: int, index: Any, src: Any, reduce: str) -> Any:
    import torch

    if not isinstance(src, torch.Tensor):  # scatter.value_reduce: one value for every index
        src = torch.full(index.shape, src, dtype=x.dtype)
    how = {"add": "sum", "multiply": "prod"}[reduce]
    return torch.ops.aten.scatter_reduce.two(x, dim % max(x.dim(), 1), index, src, how, include_self=True)


def _cdist(x1: Any, x2: Any, p: float, compute_mode: int | None = None) -> Any:
    import torch

    mode = 0 if compute_mode is None else compute_mode  # 0: mm if necessary, 1: mm, 2: never
    if p == 2 and (mode == 1 or (mode == 0 and (x1.shape[-2] > 25 or x2.shape[-2] > 25))):
        x1_norm = x1.pow(2).sum(-1, keepdim=True)
        x2_norm = x2.pow(2).sum(-1, keepdim=True)
        x1_ = torch.cat([x1.mul(-2), x1_norm, torch.ones_like(x1_norm)], -1)
        x2_ = torch.cat([x2, torch.ones_like(x2_norm), x2_norm], -1)
        return x1_.matmul(x2_.mT).clamp_min(0).sqrt()
    difference = (x1.unsqueeze(-2) - x2.unsqueeze(-3)).abs()
    if p == 0:
        return (difference != 0).to(x1.dtype).sum(-1)
    if p == math.inf:
        return difference.amax(-1)
    if p == 1:
        return difference.sum(-1)
    if p == 2:
        return difference.pow(2).sum(-1).sqrt()
    return difference.pow(p).sum(-1).pow(1.0 / p)


def _cdist_backward(grad: Any, x1: Any, x2: Any, p: float, distance: Any) -> Any:
    """The gradient of `cdist(x1, x2, p)` with respect to x1 (autograd calls it with the
    operands swapped and the gradient transposed for x2); 0 where a distance is 0."""
    import torch

    difference = x1.unsqueeze(-2) - x2.unsqueeze(-3)  # (..., r1, r2, m)
    grad, distance = grad.unsqueeze(-1), distance.unsqueeze(-1)
    zero = torch.zeros((), dtype=x1.dtype)
    if p == 0:
        return torch.zeros_like(x1)
    if p == 1:
        each = grad * difference.sign()
    elif p == math.inf:
        each = grad * difference.sign() * (difference.abs() == distance).to(x1.dtype)
    elif p == 2:
        each = torch.where(distance == 0, zero, grad * difference / distance)
    elif p < 2:
        ratio = difference.sign() * difference.abs().pow(p - 1) * grad / distance.pow(p - 1)
        vanishing = (distance == 0) | ((difference == 0) & (p < 1))
        each = torch.where(vanishing, zero, ratio)
    else:
        ratio = difference * difference.abs().pow(p - 2) * grad / distance.pow(p - 1)
        each = torch.where(distance == 0, zero, ratio)
    return each.sum(-2)


def _windows(size: int, out: int) -> list[tuple[int, int]]:
    return [((i * size) // out, -((-(i + 1) * size) // out)) for i in range(out)]


def _adaptive_max_pool2d(x: Any, output_size: Any) -> Any:
    import torch
    from torch._decomp.decompositions import adaptive_max_pool2d

    height, width = x.shape[-2:]
    out_height, out_width = output_size
    if out_height == 0 or out_width == 0 or (height % out_height == 0 and width % out_width == 0):
        return adaptive_max_pool2d(x, output_size)
    # along each row: the maximum of each column window and its column
    column_max, column_at = [], []
    for start, end in _windows(width, out_width):
        part = x[..., start:end]
        column_max.append(part.amax(-1))
        column_at.append(part.argmax(-1) + start)
    column_max, column_at = torch.stack(column_max, -1), torch.stack(column_at, -1)  # (..., H, OW)
    # down each column of those: the maximum of each row window, its row, and that row's column
    values, indices = [], []
    for start, end in _windows(height, out_height):
        part = column_max[..., start:end, :]
        row = part.argmax(-2, keepdim=True)
        column = column_at[..., start:end, :].gather(-2, row)
        values.append(part.amax(-2))
        indices.append(((row + start) * width + column).squeeze(-2))
    return torch.stack(values, -2), torch.stack(indices, -2)


def _adaptive_max_pool2d_backward(grad: Any, x: Any, indices: Any) -> Any:
    """Each output's gradient added at the input position its index names (ATen's CPU kernel)."""
    import torch

    planes = torch.zeros_like(x).flatten(-2)
    return planes.scatter_add(-1, indices.flatten(-2), grad.flatten(-2)).view_as(x)
