"""torch.optim's SGD, Adam and AdamW as tensor math for the joint graph.

The update of each parameter is written with torch ops on the traced tensors, in the order of
torch's own single-tensor code (torch/optim/sgd.py `_single_tensor_sgd`, adam.py
`_single_tensor_adam`), so the compiled step computes what `optimizer.step()` computes. The
hyper-parameters are read from the optimizer's param_groups: those a scheduler changes between
calls, the learning rate, SGD's momentum and Adam's betas (OneCycleLR cycles both), are
read-only device variables of each group (`hyper:lr`, `hyper:momentum`,
`hyper:one_minus_beta1`, `hyper:lr:1`, ...), rewritten by the host when they change, as PopTorch's `setOptimizer` writes
its variable attributes; the others are constants of the program. One step counter
(`opt:step`, the count of updates made) serves Adam's bias correction and SGD's first momentum
step (torch starts the buffer as a copy of the gradient).

`host_state` and `load_host_state` translate between those device variables and torch's own
`optimizer.state` (`momentum_buffer`; `step`, `exp_avg`, `exp_avg_sq`), so that the host
optimizer can carry on from where the device left it, and the device from a loaded checkpoint.

PopTorch's optimizers (`ipu_mlir.poptorch.optim`: SGD, Adam, AdamW with PopTorch's extra
arguments, and LAMB) name their rule in a class attribute `update_rule` and carry
`loss_scaling` (the loss multiplied before the backward pass, each gradient divided before the
update, as PopTorch's optimizers do), `max_grad_norm` (the gradients clipped to a global norm)
and `bias_correction` (Adam's and LAMB's).

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_mlir.frontends.mixed_precision import to_numpy, to_torch
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["OptimizerRule", "host_state", "hyper_variable", "load_host_state", "rule_of", "steps_taken"]

_SUPPORTED = {"SGD": "sgd", "Adam": "adam", "AdamW": "adamw"}
_MOMENTS = ("exp_avg", "exp_avg_sq")
_STATE = {"sgd": ("momentum_buffer",), "adam": _MOMENTS, "adamw": _MOMENTS, "lamb": _MOMENTS}
# compiled in; SGD's `momentum` only as whether there is one (its value is a device variable)
_CONSTANTS = {
    "sgd": ("momentum", "dampening", "nesterov", "weight_decay", "maximize"),
    "adam": ("eps", "weight_decay", "maximize", "amsgrad"),
    "adamw": ("eps", "weight_decay", "maximize", "amsgrad"),
    "lamb": ("eps", "weight_decay", "max_weight_norm"),
}


def hyper_variable(name: str, group: int) -> str:
    """The device variable of hyper-parameter `name` (`OptimizerRule.hyper_values`' names) of param group `group`."""
    return f"hyper:{name}" if group == 0 else f"hyper:{name}:{group}"


@dataclass(frozen=True)
class OptimizerRule:
    """The update of one torch optimizer: its kind, and per param group the constants."""

    kind: str  # sgd, adam, adamw, lamb
    groups: tuple[dict, ...]  # the constants of each param group (not the lr)
    loss_scaling: float = 1.0  # PopTorch's: the backward pass differentiates loss x this; update() divides it out
    max_grad_norm: float | None = None  # PopTorch's: the gradients clipped to this global norm (`clipped`)

    def state_names(self, group: int) -> tuple[str, ...]:
        """The per-parameter state a parameter of `group` keeps (SGD without momentum: none)."""
        if self.kind == "sgd" and not self.groups[group]["momentum"]:
            return ()
        return _STATE[self.kind]

    @property
    def counts_steps(self) -> bool:
        return self.kind != "sgd" or any(group["momentum"] for group in self.groups)

    def hyper_values(self, group: dict) -> dict[str, float]:
        """The device-variable hyper-parameters of a param group, by name: lr, SGD's momentum
        (where the rule has one), Adam's and LAMB's 1 - beta1 and 1 - beta2."""
        values = {"lr": float(group["lr"])}
        if self.kind == "sgd":
            if group["momentum"]:
                values["momentum"] = float(group["momentum"])
        else:
            # as 1 - beta, computed here in double as torch's `1 - beta1` is: the device's 1 - (1 - beta) is beta's float32
            values["one_minus_beta1"], values["one_minus_beta2"] = (1.0 - float(beta) for beta in group["betas"])
        return values

    def difference(self, other: OptimizerRule) -> str:
        """What of `other` differs from this rule: 'weight_decay 0 -> 0.01 (param group 0)'."""
        if (self.kind, len(self.groups)) != (other.kind, len(other.groups)):
            return f"the optimizer ({self.kind}, {len(self.groups)} param groups -> {other.kind}, {len(other.groups)})"
        for key in ("loss_scaling", "max_grad_norm"):
            if getattr(self, key) != getattr(other, key):
                return f"{key} {getattr(self, key)!r} -> {getattr(other, key)!r}"
        for index, (mine, theirs) in enumerate(zip(self.groups, other.groups)):
            for key in mine:
                if mine[key] != theirs[key]:
                    what = "having a momentum" if key == "momentum" else key
                    return f"{what} {mine[key]!r} -> {theirs[key]!r} (param group {index})"
        return "nothing"

    def update(
        self, group: int, param: Any, grad: Any, state: dict[str, Any], hyper: dict[str, Any], step: Any
    ) -> tuple[Any, dict[str, Any]]:
        """(new parameter, new state) after one step; `step` counts the updates made before it,
        `hyper` holds the group's device-variable hyper-parameters (`hyper_values`' names)."""
        constants = dict(self.groups[group])
        if self.loss_scaling != 1:
            grad = grad / self.loss_scaling
        lr = hyper["lr"]
        if self.kind == "sgd":
            constants["momentum"] = hyper["momentum"] if constants["momentum"] else None
            return _sgd(param, grad, state, lr, step, **constants)
        complements = hyper["one_minus_beta1"], hyper["one_minus_beta2"]
        if self.kind == "lamb":
            return _lamb(param, grad, state, lr, step, complements, **constants)
        return _adam(param, grad, state, lr, step, complements, decoupled=self.kind == "adamw", **constants)

    def clipped(self, grads: dict[str, Any]) -> dict[str, Any]:
        """The gradients scaled by max_grad_norm / max(norm, max_grad_norm), their norm the global
        one over all trained parameters, of the unscaled gradients: PopTorch's `max_grad_norm`,
        which it hands to PopART as `ClipNormSettings::clipAllWeights` (poptorch
        `popart_compiler/source/CompilerImpl.cpp`). torch's `clip_grad_norm_` divides by norm +
        1e-6 instead: 1e-6 relative apart."""
        import torch

        if self.max_grad_norm is None or not grads:
            return grads
        norm = torch.stack([(grad * grad).sum() for grad in grads.values()]).sum().sqrt() / self.loss_scaling
        factor = self.max_grad_norm / torch.clamp(norm, min=self.max_grad_norm)
        return {name: grad * factor for name, grad in grads.items()}

    def scaled(self, loss: Any) -> Any:
        """What the backward pass differentiates: the loss times PopTorch's `loss_scaling`."""
        return loss * self.loss_scaling if self.loss_scaling != 1 else loss


def rule_of(optimizer: Any) -> OptimizerRule:
    """The rule of `optimizer`: torch.optim.SGD, Adam or AdamW (exactly those classes), or one of
    PopTorch's (a class naming its `update_rule`)."""
    import torch

    name = type(optimizer).__name__
    kind = getattr(type(optimizer), "update_rule", None)
    if kind is None and type(optimizer) is getattr(torch.optim, name, None):
        kind = _SUPPORTED.get(name)
    if kind is None:
        raise IpuError(
            f"unsupported optimizer {type(optimizer).__module__}.{name}: trainingModel takes torch.optim.SGD, Adam or AdamW,"
            " or poptorch.optim.SGD, Adam, AdamW or LAMB"
        )
    groups = tuple({key: group[key] for key in _CONSTANTS[kind]} for group in optimizer.param_groups)
    for group in groups:
        if group.get("amsgrad"):
            raise IpuError(f"unsupported optimizer setting: {name}(amsgrad=True)")
        if group.get("nesterov") and (group["momentum"] <= 0 or group["dampening"] != 0):
            raise IpuError("SGD: Nesterov momentum requires a momentum and zero dampening (as torch.optim.SGD)")
        group.pop("amsgrad", None)
        if kind == "sgd":
            group["momentum"] = bool(group["momentum"])
        else:
            group["bias_correction"] = getattr(optimizer, "bias_correction", True)
    for group in optimizer.param_groups:
        if isinstance(group["lr"], torch.Tensor) or any(isinstance(value, torch.Tensor) for value in group.get("betas", ())):
            raise IpuError(f"{name}: tensor hyper-parameters (lr or betas as tensors) are not supported; give floats")
    clip = getattr(optimizer, "max_grad_norm", None)
    return OptimizerRule(kind, groups, float(getattr(optimizer, "loss_scaling", 1.0)), None if clip in (None, math.inf) else float(clip))


def steps_taken(optimizer: Any) -> float:
    """The updates `optimizer` has made, as its state records them (0 for a fresh one)."""
    for state in optimizer.state.values():
        if "step" in state:
            return float(state["step"])
        if state.get("momentum_buffer") is not None:
            return 1.0  # SGD keeps no count; a buffer means at least one step was taken
    return 0.0


def host_state(optimizer: Any, param: Any, kind: str, dtype: np.dtype) -> np.ndarray:
    """`param`'s state `kind` (exp_avg, momentum_buffer, ...) in `optimizer` as the device's
    initial value, in `dtype`: zeros while torch has none (before its first step)."""
    value = optimizer.state.get(param, {}).get(kind)
    if value is None:
        return np.zeros(tuple(param.shape), dtype)
    return np.array(to_numpy(value), dtype=dtype, copy=True)


def load_host_state(optimizer: Any, rule: OptimizerRule, steps: float, states: dict[Any, dict[str, np.ndarray]]) -> None:
    """Writes into torch's `optimizer.state` what the device holds after `steps` updates:
    `states` maps each trained parameter to its state arrays by kind. Before the first update
    torch has no state, and none is written (an SGD buffer then means nothing)."""
    import torch
    from torch.optim.optimizer import _get_scalar_dtype

    if steps == 0:
        return
    for param, arrays in states.items():
        entry = optimizer.state[param]
        entry.update({kind: to_torch(np.array(value, copy=True)) for kind, value in arrays.items()})
        if rule.kind != "sgd":  # torch's Adam: a scalar tensor per parameter (_get_scalar_dtype, not capturable)
            entry["step"] = torch.tensor(steps, dtype=_get_scalar_dtype())


def _sgd(param, grad, state, lr, step, momentum, dampening, nesterov, weight_decay, maximize):  # noqa: ANN001, ANN202
    import torch

    if maximize:
        grad = -grad
    if weight_decay != 0:
        grad = grad + weight_decay * param
    new_state = {}
    if momentum is not None:  # a device variable; None: no momentum
        # torch: the first step's buffer is the gradient itself; later ones m * buf + (1 - d) * g
        buffer = torch.where(step == 0, grad, state["momentum_buffer"] * momentum + (1 - dampening) * grad)
        new_state["momentum_buffer"] = buffer
        grad = grad + momentum * buffer if nesterov else buffer
    return param - lr * grad, new_state


def _adam(param, grad, state, lr, step, complements, eps, weight_decay, maximize, decoupled, bias_correction):  # noqa: ANN001, ANN202
    one_minus_beta1, one_minus_beta2 = complements
    beta2 = 1 - one_minus_beta2
    step = step + 1
    if maximize:
        grad = -grad
    if weight_decay != 0:
        if decoupled:  # AdamW: param.mul_(1 - lr * weight_decay)
            param = param * (1 - lr * weight_decay)
        else:
            grad = grad + weight_decay * param
    exp_avg = state["exp_avg"] + (grad - state["exp_avg"]) * one_minus_beta1  # exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq = state["exp_avg_sq"] * beta2 + one_minus_beta2 * grad * grad
    if not bias_correction:  # PopTorch's AdamW(bias_correction=False)
        return param - lr * (exp_avg / (exp_avg_sq.sqrt() + eps)), {"exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
    bias_correction1, bias_correction2 = _one_minus_power(one_minus_beta1, step), _one_minus_power(one_minus_beta2, step)
    step_size = lr / bias_correction1
    denom = exp_avg_sq.sqrt() / bias_correction2.sqrt() + eps
    return param - step_size * (exp_avg / denom), {"exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}


def _one_minus_power(one_minus_beta, step):  # noqa: ANN001, ANN202
    """Adam's bias correction 1 - beta ** step from 1 - beta (the complement the host computes in
    f64 and the device keeps as a variable) and the f32 count `step`, as
    -expm1(step * log1p(-(1 - beta))): `1 - torch.pow(beta, step)` raises the f32-rounded beta
    (0.999 is 0.99900001287) and subtracts nearly equal numbers, 1.3e-5 off for 0.999 at step 1
    and 2 (PyTorch takes the power of the f64 beta), which moved a parameter near 0 by 1.1e-4 of
    itself (fuzz_pytorch seed 1948); this form stays within a few ulps. beta 0: log1p(-1) is
    -inf and the correction 1."""
    import torch

    return -torch.expm1(step * torch.log1p(-one_minus_beta))


def _lamb(param, grad, state, lr, step, complements, eps, weight_decay, max_weight_norm, bias_correction):  # noqa: ANN001, ANN202
    """LAMB (You et al., "Large Batch Optimization for Deep Learning: Training BERT in 76
    minutes", ICLR 2020, arXiv:1904.00962, Algorithm 2) as PopTorch's `poptorch.optim.LAMB` and
    PopART define it: Adam's moments, the update r + weight_decay x w, scaled by the trust ratio
    phi(||w||) / ||update|| per tensor with phi(z) = min(z, max_weight_norm), and a ratio of 1
    where either norm is 0 (poptorch/python/optim.py, `LAMB.step`)."""
    import torch

    one_minus_beta1, one_minus_beta2 = complements
    beta1, beta2 = 1 - one_minus_beta1, 1 - one_minus_beta2
    step = step + 1
    exp_avg = state["exp_avg"] * beta1 + one_minus_beta1 * grad
    exp_avg_sq = state["exp_avg_sq"] * beta2 + one_minus_beta2 * grad * grad
    if bias_correction:
        corrected_sq = exp_avg_sq.sqrt() / _one_minus_power(one_minus_beta2, step).sqrt()
        update = (exp_avg / _one_minus_power(one_minus_beta1, step)) / (corrected_sq + eps)
    else:
        update = exp_avg / (exp_avg_sq.sqrt() + eps)
    if weight_decay != 0:
        update = update + weight_decay * param
    weight_norm = (param * param).sum().sqrt()
    if max_weight_norm is not None:
        weight_norm = weight_norm.clamp(max=max_weight_norm)
    update_norm = (update * update).sum().sqrt()
    trust = torch.where((weight_norm == 0) | (update_norm == 0), torch.ones_like(weight_norm), weight_norm / update_norm)
    return param - (lr * trust) * update, {"exp_avg": exp_avg, "exp_avg_sq": exp_avg_sq}
