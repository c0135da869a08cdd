"""Low-precision training as PopTorch and PopART run it: f32 master weights, loss scaling and
stochastic rounding in the joint step (frontends/joint.py calls `MixedPrecisionStep`).

    opts = Options()
    opts.Precision.enableStochasticRounding(True)     # PopTorch's name: f32 -> f16 / bf16 casts of the weights
    opts.Precision.setMasterWeights(True)             # an f32 copy of every f16 / bf16 weight, updated in f32
    opts.Training.setLossScaling(1024.0)              # static (PopTorch: poptorch.optim.SGD(loss_scaling=1024))
    opts.Training.setAutomaticLossScaling(True)       # dynamic, torch.amp.GradScaler's rule (below)
    model = trainingModel(net.half(), opts, torch.optim.SGD(net.parameters(), lr=0.1))

The model is in f16 or bf16 (`model.half()`, as PopTorch's users write it); its forward and
backward run in that type. With any of the options above the update runs in f32: each
gradient is widened to f32 and divided by the loss scale, the optimizer's rule
(frontends/optimizers.py) updates the f32 master copy (`master:NAME`, a device variable) or,
without master weights, the widened f16 weight, with its state (momentum, Adam's moments) in
f32 (PopTorch's `accum_type=torch.float32`), and the result is cast back to the model's type,
to nearest or stochastically, for the next step's forward.

Loss scaling multiplies the loss (in f32) by the scale before the backward pass, so small
gradients survive f16's range, and divides the gradients by it before the update. Dynamic
scaling follows torch.amp.GradScaler (not PopART's automatic loss scaling, which grows or
shrinks the scale from a histogram of the gradients): when any gradient is inf or NaN, the
step is skipped (weights, optimizer state and step count kept) and the scale multiplied by
`backoff` (0.5); after `growth_interval` steps in a row with finite gradients it is multiplied by
`growth` (2). Its state is two device variables, `scale:loss` and `scale:good_steps`, updated on
the device: no host round trip per step (GradScaler's `_amp_update_scale_` computes the same).

Stochastic rounding rounds an f32 value `x` to one of its two neighbours in the narrow type,
up with probability (x - below) / (below's ulp): the rounding error is zero on average, so
updates far below half an ulp still move an f16 weight in expectation. As `floor(x / ulp + u) *
ulp` with `u` uniform in [0, 1) at the resolution of the dropped bits (f16: 2^-13, bf16: 2^-16),
`ulp` the narrow type's spacing at `x`, a power of two from x's exponent (log2's, corrected by
comparisons: torch-mlir does not lower the bit cast that would read it); exact in f32 where x
is a normal number of the narrow type; below its smallest normal the draw's bits approximate
the dropped bits. `u` is frontends/random_ops.py's counter-based generator, keyed by the seed
(`Options.randomSeed`) mixed with a salt of its own, the micro-batch counter and the element's
offset: reproducible across runs, and `stochastic_round` gives the same values eagerly on the
host for PyTorch's reference loop.

With any of the options, a step whose gradients hold an inf or NaN is skipped.

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ipu_mlir.frontends.random_ops import i32_scalar, shift_right, uniform_counts  # its generator, drawn with our salt
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.element_types import NARROW_FLOATS, numpy_float

__all__ = ["LossScaling", "MixedPrecisionStep", "PrecisionOptions", "stochastic_round", "to_numpy", "to_torch"]

_ROUNDING_SALT = 0x5BD1E995  # any constant: the rounding draws are a stream apart from dropout's
# (mantissa bits, smallest normal exponent) of the narrow types stochastic rounding targets; bf16's
# is f32's, -126, clamped to -116 so that 1 / ulp (2^(7 + 116)) stays finite in f32: a value below
# 2^-116 is rounded stochastically to a multiple of 2^-123, coarser than bf16's spacing there
# (still unbiased, with a larger variance; such weights do not occur in practice)
_FORMATS = {"torch.float16": (10, -14), "torch.bfloat16": (7, -116)}


@dataclass(frozen=True)
class LossScaling:
    """The loss scale: `initial`, and when `dynamic`, torch.amp.GradScaler's update of it."""

    initial: float
    dynamic: bool = False
    growth: float = 2.0  # GradScaler's growth_factor
    backoff: float = 0.5  # GradScaler's backoff_factor
    growth_interval: int = 2000  # GradScaler's default


class PrecisionOptions:
    """`Options.Precision`: PopTorch's `enableStochasticRounding`, and the master weights."""

    def __init__(self) -> None:
        self.stochastic_rounding = False
        self.master_weights = False

    def enableStochasticRounding(self, enabled: bool) -> PrecisionOptions:  # noqa: N802 (PopTorch's name)
        """Round the f32 update of each f16 / bf16 weight stochastically (the IPU's option on its
        f32 -> f16 casts), with draws from the seed of `Options.randomSeed`."""
        self.stochastic_rounding = _flag("enableStochasticRounding", enabled)
        return self

    def setMasterWeights(self, enabled: bool) -> PrecisionOptions:  # noqa: N802 (PopTorch's style)
        """Keep an f32 copy of every f16 / bf16 weight on the device, updated in f32 and cast to
        the model's type after each step (PopTorch has no such option: its f16 weights are updated
        in f16 with stochastic rounding; this is the mixed-precision recipe of NVIDIA's and PopXL's)."""
        self.master_weights = _flag("setMasterWeights", enabled)
        return self


def training_loss_scaling(scale: float | None, automatic: bool, **dynamic: Any) -> LossScaling | None:
    """The LossScaling of `Options.Training`'s settings, None when neither is set."""
    if scale is None and not automatic:
        return None
    initial = scale if scale is not None else 2.0**15  # below f16's largest finite value, 65504
    return LossScaling(initial, automatic, **dynamic)


class MixedPrecisionStep:
    """The parts of the joint step that mixed precision changes, for the parameters `narrow`
    (name -> its torch dtype, f16 or bf16) of a step whose trainable parameters are `trainable`."""

    def __init__(self, precision: PrecisionOptions, scaling: LossScaling | None, params: dict[str, Any]) -> None:
        import torch

        self.precision, self.scaling = precision, scaling
        narrow = {name: p.dtype for name, p in params.items() if p.dtype in (torch.float16, torch.bfloat16)}
        if not narrow:
            raise IpuError(
                "stochastic rounding, master weights and loss scaling are for f16 / bf16 models (model.half()"
                " or model.to(torch.bfloat16)): this model has no f16 or bf16 parameter"
            )
        self.narrow = narrow

    def variables(self, params: dict[str, Any]) -> list[tuple[str, Any]]:
        """(name, initial value as numpy) of the variables the step adds: the master weights and
        the loss scale's state."""
        import numpy as np

        added = []
        if self.precision.master_weights:
            added += [(f"master:{name}", params[name].detach().float().numpy().copy()) for name in self.narrow]
        if self.scaling is not None:
            added.append(("scale:loss", np.array(self.scaling.initial, np.float32)))
            if self.scaling.dynamic:
                added.append(("scale:good_steps", np.array(0, np.float32)))
        return added

    def scaled(self, loss: Any, values: dict) -> Any:
        """What the backward pass differentiates: the loss in f32, times the loss scale."""
        return loss.float() * values["scale:loss"] if self.scaling is not None else loss.float()

    def unscaled(self, grads: dict, values: dict) -> dict:
        """The gradients in f32, divided by the loss scale."""
        scale = values.get("scale:loss")
        return {name: grad.float() / scale if scale is not None else grad.float() for name, grad in grads.items()}

    @staticmethod
    def all_finite(grads: dict) -> Any:
        """Whether every gradient is finite: a bool tensor."""
        import torch

        # inf * 0 and NaN * 0 are NaN: the sum is 0 exactly when every gradient is finite
        poison = sum(((grad * 0).sum() for grad in grads.values()), torch.zeros((), dtype=torch.float32))
        return poison == 0

    def weight(self, name: str, values: dict, param: Any) -> Any:
        """The f32 weight the update starts from: its master copy, else the weight widened."""
        return values[f"master:{name}"] if self.precision.master_weights and name in self.narrow else param.float()

    def narrowed(self, name: str, weight: Any, values: dict, offset: int) -> Any:
        """The updated f32 `weight` in the model's type: stochastically rounded with the draws at
        `offset` of this micro-batch, or to nearest."""
        dtype = self.narrow.get(name)
        if dtype is None:
            return weight
        if self.precision.stochastic_rounding:
            return stochastic_round(weight, dtype, values["random:seed"], values["random:step"], offset)
        return weight.to(dtype)

    def next_scale(self, values: dict, finite: Any) -> dict[str, Any]:
        """The loss scale's new state (dynamic scaling), as GradScaler's `_amp_update_scale_`."""
        import torch

        if self.scaling is None or not self.scaling.dynamic:
            return {}
        scale, good = values["scale:loss"], values["scale:good_steps"]
        good = torch.where(finite, good + 1, torch.zeros_like(good))
        grow = good == self.scaling.growth_interval
        scale = torch.where(finite, torch.where(grow, scale * self.scaling.growth, scale), scale * self.scaling.backoff)
        return {"scale:loss": scale, "scale:good_steps": torch.where(grow, torch.zeros_like(good), good)}


def stochastic_round(x: Any, dtype: Any, seed: Any, step: Any, offset: int = 0) -> Any:
    """f32 `x` rounded stochastically to `dtype` (torch.float16 or torch.bfloat16) with the draws
    of frontends/random_ops.py's generator keyed by (`seed` ^ a salt, `step`, `offset` + i);
    `seed` and `step` are i32 scalar tensors (traced or not). Infinities and NaN pass through."""
    import torch

    mantissa, smallest = _FORMATS[str(dtype)]
    dropped = 23 - mantissa  # f32's mantissa bits the narrow type lacks: the draw's resolution
    draws = shift_right(uniform_counts(seed ^ i32_scalar(_ROUNDING_SALT), step, offset, x.shape), 24 - dropped)
    u = draws.to(torch.float32) * (1.0 / (1 << dropped))  # in [0, 1), a multiple of 2^-dropped
    # x's binary exponent: log2's guess, corrected by one either way where it rounded across a
    # power of two, so that the result does not depend on log2's accuracy (numpy's, libm's)
    magnitude = x.abs()
    exponent = torch.floor(torch.log2(magnitude)).clamp(smallest, 127)
    power = torch.exp2(exponent)  # exact: an integer power of two
    exponent = (exponent - (magnitude < power).float() + (magnitude >= 2 * power).float()).clamp(smallest, 127)
    spacing = exponent - mantissa  # log2 of the narrow type's ulp at x
    rounded = torch.floor(x * torch.exp2(-spacing) + u) * torch.exp2(spacing)  # exact: at most 24 significant bits
    return torch.where(magnitude < float("inf"), rounded, x).to(dtype)  # inf and NaN (not below inf) kept


def to_numpy(tensor: Any) -> Any:
    """A torch tensor as a numpy array (a copy-free view where torch allows); bf16 and FP8 ones,
    which `Tensor.numpy()` refuses, through their bits as the ml_dtypes type of the same name."""
    import torch

    tensor = tensor.detach().cpu()
    narrow = numpy_float(str(tensor.dtype).removeprefix("torch."))  # torch and ml_dtypes share the names
    if narrow is None:
        return tensor.numpy()
    return tensor.view(torch.int16 if tensor.element_size() == 2 else torch.uint8).numpy().view(narrow)


def to_torch(array: Any) -> Any:
    """A numpy array as a torch tensor, ml_dtypes' bf16 and FP8 types as torch's of the same name."""
    import numpy as np
    import torch

    if array.dtype in NARROW_FLOATS:
        bits = np.ascontiguousarray(array).view(np.int16 if array.dtype.itemsize == 2 else np.uint8)
        return torch.from_numpy(bits).view(getattr(torch, array.dtype.name))
    return torch.from_numpy(array)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise IpuError(f"{name} takes True or False, got {value!r}")
    return value
