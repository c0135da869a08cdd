"""PopTorch's `poptorch.optim`: SGD, Adam, AdamW and LAMB with PopTorch's constructors.

SGD, Adam and AdamW are torch's, with PopTorch's extra arguments: `loss_scaling` (the loss
multiplied by it before the backward pass, the gradients divided by it before the update;
frontends/optimizers.py), `max_grad_norm` (the gradients clipped to that global norm on the
device; the host `step()` does not clip) and AdamW's `bias_correction` change the numbers and
are compiled in. The accumulator types are accepted where they are what the step keeps (torch.float32),
and `velocity_scaling`, `use_combined_accum` where PopTorch itself ignores them or they do
not change the numbers; the rest is refused in one line. LAMB is PopTorch's
(poptorch `python/optim.py`): its device update is frontends/optimizers.py's `_lamb`, its
host `step` PopTorch's own, so torch's loop and `copyWeightsToHost` carry on from the device.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from ipu_mlir.target.diagnostics import IpuError

__all__ = ["LAMB", "SGD", "Adam", "AdamW"]


def _given(**values: Any) -> dict[str, Any]:
    """The arguments given (PopTorch's constructors take None for "torch's default")."""
    return {name: value for name, value in values.items() if value is not None}


def _clip(optimizer: str, max_grad_norm: Any) -> float | None:
    """PopTorch's `max_grad_norm` (default inf: no clipping) as a positive float or None."""
    if max_grad_norm is None or max_grad_norm == math.inf:
        return None
    if isinstance(max_grad_norm, bool) or not isinstance(max_grad_norm, int | float) or not 0 < max_grad_norm < math.inf:
        raise IpuError(f"poptorch.optim.{optimizer}(max_grad_norm={max_grad_norm!r}): give a positive number (inf: no clipping)")
    return float(max_grad_norm)


def _check(optimizer: str, loss_scaling: Any, **types: Any) -> float:
    """PopTorch's extra arguments checked: the loss scaling as a float; each accumulator type
    torch.float32 (what the step keeps) or None."""
    for name, dtype in types.items():
        if dtype not in (None, torch.float32):
            raise IpuError(f"poptorch.optim.{optimizer}({name}={dtype}): the step keeps its gradients and state in float32 here")
    scaling = 1.0 if loss_scaling is None else loss_scaling
    if isinstance(scaling, bool) or not isinstance(scaling, int | float) or not 0 < scaling < math.inf:
        raise IpuError(f"poptorch.optim.{optimizer}(loss_scaling={loss_scaling!r}): give a positive finite number")
    return float(scaling)


class SGD(torch.optim.SGD):
    """torch.optim.SGD with PopTorch's `loss_scaling`; `velocity_scaling` is ignored without
    `use_combined_accum`, as PopTorch ignores it; the combined accumulator (mathematically the
    same, PopTorch says) only with a velocity scaling of 1."""

    update_rule = "sgd"

    def __init__(
        self,
        params: Any,
        lr: float,
        momentum: float | None = None,
        dampening: float | None = None,
        weight_decay: float | None = None,
        nesterov: bool | None = None,
        maximize: bool | None = None,
        foreach: bool | None = None,
        differentiable: bool | None = None,
        loss_scaling: float | None = None,
        velocity_scaling: float | None = None,
        use_combined_accum: bool | None = None,
        accum_type: torch.dtype | None = None,
        velocity_accum_type: torch.dtype | None = None,
        max_grad_norm: float | None = None,
    ) -> None:
        self.loss_scaling = _check("SGD", loss_scaling, accum_type=accum_type, velocity_accum_type=velocity_accum_type)
        self.max_grad_norm = _clip("SGD", max_grad_norm)
        if use_combined_accum and velocity_scaling not in (None, 1.0):
            raise IpuError(f"poptorch.optim.SGD(velocity_scaling={velocity_scaling!r}): the velocity is kept unscaled in float32")
        given = _given(momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov, maximize=maximize)
        super().__init__(params, lr, **given, **_given(foreach=foreach, differentiable=differentiable))


class Adam(torch.optim.Adam):
    """torch.optim.Adam with PopTorch's `loss_scaling`."""

    update_rule = "adam"

    def __init__(
        self,
        params: Any,
        lr: float | None = None,
        betas: tuple[float, float] | None = None,
        eps: float | None = None,
        weight_decay: float | None = None,
        amsgrad: bool | None = None,
        foreach: bool | None = None,
        maximize: bool | None = None,
        capturable: bool | None = None,
        differentiable: bool | None = None,
        fused: bool | None = None,
        loss_scaling: float | None = None,
        accum_type: torch.dtype | None = None,
        first_order_momentum_accum_type: torch.dtype | None = None,
        second_order_momentum_accum_type: torch.dtype | None = None,
        max_grad_norm: float | None = None,
    ) -> None:
        moments = {"first_order_momentum_accum_type": first_order_momentum_accum_type}
        moments["second_order_momentum_accum_type"] = second_order_momentum_accum_type
        self.loss_scaling = _check("Adam", loss_scaling, accum_type=accum_type, **moments)
        self.max_grad_norm = _clip("Adam", max_grad_norm)
        given = _given(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, **given, **_given(foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused))


class AdamW(torch.optim.AdamW):
    """torch.optim.AdamW with PopTorch's `loss_scaling` and `bias_correction` (False: Adam's
    moments used as they are; torch's host `step` always corrects them)."""

    update_rule = "adamw"

    def __init__(
        self,
        params: Any,
        lr: float | None = None,
        betas: tuple[float, float] | None = None,
        eps: float | None = None,
        weight_decay: float | None = None,
        amsgrad: bool | None = None,
        maximize: bool | None = None,
        foreach: bool | None = None,
        capturable: bool | None = None,
        differentiable: bool | None = None,
        fused: bool | None = None,
        loss_scaling: float | None = None,
        bias_correction: bool | None = None,
        accum_type: torch.dtype | None = None,
        first_order_momentum_accum_type: torch.dtype | None = None,
        second_order_momentum_accum_type: torch.dtype | None = None,
        max_grad_norm: float | None = None,
    ) -> None:
        moments = {"first_order_momentum_accum_type": first_order_momentum_accum_type}
        moments["second_order_momentum_accum_type"] = second_order_momentum_accum_type
        self.loss_scaling = _check("AdamW", loss_scaling, accum_type=accum_type, **moments)
        self.max_grad_norm = _clip("AdamW", max_grad_norm)
        self.bias_correction = True if bias_correction is None else bool(bias_correction)
        given = _given(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)
        super().__init__(params, **given, **_given(foreach=foreach, capturable=capturable, differentiable=differentiable, fused=fused))


class LAMB(torch.optim.Optimizer):
    """PopTorch's LAMB (You et al., arXiv:1904.00962): Adam's moments, the update scaled per
    tensor by the trust ratio min(||w||, max_weight_norm) / ||update||. PopTorch's defaults:
    lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight_decay 1e-2, bias correction on,
    max_weight_norm 65500 (f16's largest, also for None)."""

    update_rule = "lamb"

    def __init__(
        self,
        params: Any,
        lr: float | None = None,
        betas: tuple[float, float] | None = None,
        eps: float | None = None,
        weight_decay: float | None = None,
        bias_correction: bool | None = None,
        loss_scaling: float | None = None,
        max_weight_norm: float | None = None,
        accum_type: torch.dtype | None = None,
        first_order_momentum_accum_type: torch.dtype | None = None,
        second_order_momentum_accum_type: torch.dtype | None = None,
    ) -> None:
        moments = {"first_order_momentum_accum_type": first_order_momentum_accum_type}
        moments["second_order_momentum_accum_type"] = second_order_momentum_accum_type
        self.loss_scaling = _check("LAMB", loss_scaling, accum_type=accum_type, **moments)
        self.bias_correction = True if bias_correction is None else bool(bias_correction)
        defaults = {
            "lr": 1e-3 if lr is None else lr,
            "betas": (0.9, 0.999) if betas is None else tuple(betas),
            "eps": 1e-8 if eps is None else eps,
            "weight_decay": 1e-2 if weight_decay is None else weight_decay,
            "max_weight_norm": 65500.0 if max_weight_norm is None else max_weight_norm,
        }
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure: Any = None) -> Any:
        """PopTorch's host step (poptorch `python/optim.py`, `LAMB.step`), the state in torch's
        format (`step`, `exp_avg`, `exp_avg_sq`) that trainingModel reads and writes."""
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state.update(step=torch.tensor(0.0), exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
                state["step"] += 1
                step = float(state["step"])
                corrections = (1 - beta1**step, 1 - beta2**step) if self.bias_correction else (1.0, 1.0)
                state["exp_avg"].mul_(beta1).add_(p.grad, alpha=1 - beta1)
                state["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (state["exp_avg_sq"].sqrt() / math.sqrt(corrections[1])).add_(group["eps"])
                update = (state["exp_avg"] / corrections[0]) / denom + group["weight_decay"] * p
                weight_norm = p.pow(2).sum().sqrt().clamp(max=group["max_weight_norm"])
                update_norm = update.pow(2).sum().sqrt()
                trust = 1.0 if weight_norm == 0 or update_norm == 0 else float(weight_norm / update_norm)
                p.add_(update, alpha=-group["lr"] * trust)
        return loss
