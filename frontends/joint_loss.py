"""The loss of a training forward as PopTorch's face gives it: `identity_loss` marks a tensor as
the loss, `split_result` finds it (and the outputs beside it) in what forward returned. Apart
from frontends/joint.py because the face (ipu_mlir.poptorch) exports `identity_loss` while the
step's layout (frontends/joint_layout.py) reads forward's result with `split_result`."""

from __future__ import annotations

from typing import Any

from ipu_mlir.target.diagnostics import IpuError

UNREDUCED_LOSS = "_ipu_unreduced_loss"  # a tensor attribute: identity_loss(reduction="none") made this loss


def identity_loss(x: Any, reduction: str) -> Any:
    """PopTorch's `poptorch.identity_loss`: `x` marked as the loss the backward pass starts
    from, reduced as PopTorch's op reduces it (its CPU kernel, poptorch
    `RegisterAtenOverloads.cpp` `identityLoss`: "sum", "mean", or "none", a copy). Unreduced, the
    backward pass starts from a gradient of ones (PopTorch's user guide, "poptorch.identity_loss"),
    and a training forward may return it as its loss whatever its shape."""
    reductions = {"sum": lambda: x.sum(), "mean": lambda: x.mean(), "none": lambda: x.clone()}
    if reduction not in reductions:
        raise IpuError(f"identity_loss: reduction must be 'sum', 'mean' or 'none', got {reduction!r}")
    loss = reductions[reduction]()
    if reduction == "none":
        setattr(loss, UNREDUCED_LOSS, True)
    return loss


def split_result(result: Any) -> tuple[list[Any], Any, Any]:
    """(other outputs, loss, structure) of what a training forward returned: the loss (structure
    None), or a tuple or list whose last element is the loss, as in PopTorch, the outputs before
    it tensors in tuples, lists and dicts (structure: the pytree spec that rebuilds it)."""
    import torch
    from torch.utils import _pytree as pytree

    if isinstance(result, (tuple, list)) and result:
        loss = result[-1]
        leaves, structure = pytree.tree_flatten(result)
        outputs = leaves[:-1]  # the loss, a tensor, is the last leaf
    else:
        outputs, loss, structure = [], result, None
    unreduced = getattr(loss, UNREDUCED_LOSS, False)  # identity_loss(x, reduction="none")
    if not (isinstance(loss, torch.Tensor) and (loss.dim() == 0 or unreduced) and loss.is_floating_point()):
        got = f"a tensor of shape {tuple(loss.shape)}" if isinstance(loss, torch.Tensor) else type(loss).__name__
        raise IpuError(
            f"the model's forward must return the loss (a scalar tensor) or (output, loss) as in PopTorch; its last value is {got}"
        )
    for output in outputs:
        if not isinstance(output, torch.Tensor):
            raise IpuError(
                f"the model's forward returned {type(output).__name__} beside the loss: only tensors (in tuples, lists, dicts) are taken"
            )
    return outputs, loss, structure
