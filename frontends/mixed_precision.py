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

FP8 training (`opts.Precision.setFP8Training(True, log2_scales=None)`, docs/precision.md
"Training in FP8") runs every `F.linear` of the step's forward as `fp8_linear`: x and the
weight cast to E4M3, the gradient to E5M2 in the backward, each as `x * 2^k`, k static or the
tensor's own amax scale (`fp8_log2_scale`, computed in the step), the products summed in f32
and scaled back; the model (f32, or f16 with master weights) and its update are unchanged.

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ipu_mlir.frontends.random_ops import i32_scalar, shift_right, uniform_counts  # its generator, drawn with our salt
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.element_types import NARROW_FLOATS, numpy_float

__all__ = [
    "FP8_FORMATS",
    "FP8Training",
    "LossScaling",
    "MixedPrecisionStep",
    "PrecisionOptions",
    "fp8_log2_scale",
    "stochastic_round",
    "to_numpy",
    "to_torch",
]

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


# The FP8 formats of FP8 training, by role (Perez et al. 2023): weights and activations in E4M3,
# gradients in E5M2 (PyTorch's OCP types; Poplar's FNUZ ones are `ipu.quarter`'s f143 / f152)
FP8_FORMATS = {"forward": "float8_e4m3fn", "backward": "float8_e5m2"}
_FP8_ROLES = ("weight", "activation", "gradient")


@dataclass(frozen=True)
class FP8Training:
    """FP8 linear layers: `log2_scales` (role -> k, each tensor cast as `x * 2^k`) static, or
    None: each tensor's k from its absolute maximum, on the device, in the step itself."""

    log2_scales: dict[str, int] | None = None


class PrecisionOptions:
    """`Options.Precision`: PopTorch's `enableStochasticRounding`, the master weights and FP8 training."""

    def __init__(self) -> None:
        self.stochastic_rounding = False
        self.master_weights = False
        self.fp8: FP8Training | None = None

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

    def setFP8Training(self, enabled: bool, log2_scales: dict[str, int] | None = None) -> PrecisionOptions:  # noqa: N802 (PopTorch's style)
        """Run every linear layer's products in FP8 (PopTorch has no such option): weights and
        activations cast to E4M3 in the forward, the gradient to E5M2 in the backward, each
        with a per-tensor power-of-two scale, products summed in f32. `log2_scales` = {"weight":
        k, "activation": k, "gradient": k} casts each tensor of that role as `x * 2^k`; without
        it each tensor's k is computed on the device from its absolute maximum (`fp8_log2_scale`)."""
        if not _flag("setFP8Training", enabled):
            self.fp8 = None
            return self
        if log2_scales is not None:
            if not isinstance(log2_scales, dict) or sorted(log2_scales) != sorted(_FP8_ROLES):
                raise IpuError(f"setFP8Training: log2_scales takes a dict of {', '.join(_FP8_ROLES)}, got {log2_scales!r}")
            for role, k in log2_scales.items():
                if not isinstance(k, int) or isinstance(k, bool) or not -32 <= k < 32:
                    raise IpuError(f"setFP8Training: the {role} log2 scale must be an integer in [-32, 32) (Poplar's), got {k!r}")
            # each product's scale, -(k_a + k_b), is its QUARTER metadata: within Poplar's range too
            for a, b in (("activation", "weight"), ("gradient", "weight"), ("gradient", "activation")):
                if -(log2_scales[a] + log2_scales[b]) not in range(-32, 32):
                    raise IpuError(
                        f"setFP8Training: the {a} and {b} log2 scales sum to {log2_scales[a] + log2_scales[b]}: a product's"
                        " scale, minus their sum, must be in [-32, 32) (Poplar's QUARTER range)"
                    )
        self.fp8 = FP8Training(dict(log2_scales) if log2_scales is not None else None)
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
        if not narrow and (precision.fp8 is None or precision.stochastic_rounding or precision.master_weights):
            raise IpuError(
                "stochastic rounding, master weights and loss scaling are for f16 / bf16 models (model.half()"
                " or model.to(torch.bfloat16)): this model has no f16 or bf16 parameter"
            )
        self.narrow = narrow

    def linears(self) -> Any:
        """A context in which every `F.linear` is FP8 training's (`fp8_linear`), or nothing happens."""
        import contextlib

        return _FP8Linears(self.precision.fp8) if self.precision.fp8 is not None else contextlib.nullcontext()

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


def fp8_log2_scale(x: Any, dtype: Any) -> Any:
    """The k that casts `x` to FP8 `dtype` as `x * 2^k` with its absolute maximum `amax` at or below
    the format's largest value and above half of it: the largest k with amax * 2^k <= max (an
    f32 scalar tensor), clamped to Poplar's log2 scales, [-32, 32) (an all-zero x gets 31). It is
    log2's floor, corrected by one either way where log2 rounded across an integer, so the
    result does not depend on log2's accuracy (numpy's, libm's)."""
    import ml_dtypes
    import torch

    largest = float(ml_dtypes.finfo(getattr(ml_dtypes, str(dtype).removeprefix("torch."))).max)
    amax = x.detach().abs().amax().float()
    k = torch.floor(torch.log2(largest / amax))
    k = k - (amax * torch.exp2(k) > largest).float() + (amax * torch.exp2(k + 1) <= largest).float()
    return k.clamp(-32, 31)


def fp8_linear(x: Any, weight: Any, bias: Any, fp8: FP8Training) -> Any:
    """`F.linear(x, weight, bias)` with its products in FP8 (`_FP8Product`), the bias added in x's type."""
    rows = x.reshape(-1, x.shape[-1])  # a 2-d product: ipu-fp8-matmul rewrites matmuls, not broadcast batched ones
    y = _fp8_product()(rows, weight, fp8).to(x.dtype).reshape(*x.shape[:-1], weight.shape[0])
    return y if bias is None else y + bias


def _fp8_cast(x: Any, dtype: Any, k: Any) -> Any:
    """`x * 2^k` in FP8 `dtype`, rounded to nearest (beyond the format's largest value: NaN in
    E4M3, inf in E5M2, as PyTorch's and MLIR's casts give; the amax scale never goes there)."""
    import torch

    return (x.float() * (2.0**k if isinstance(k, int) else torch.exp2(k))).to(dtype)


def _scaled_product(a: Any, a_k: Any, b: Any, b_k: Any, transpose: str) -> Any:
    """`(a / 2^a_k) @ (b / 2^b_k)` of FP8 `a`, `b` in f32, `transpose` ("a", "b" or "") naming the
    operand used transposed. Static scales dequantize each operand (`ipu-fp8-matmul` moves them
    into the product's QUARTER metadata); run-time ones scale the product, exactly: an f32 sum
    times a power of two, as Poplar's tensor-held log2 scale would."""
    import torch

    static = isinstance(a_k, int) and isinstance(b_k, int)
    wide_a, wide_b = (a.float() * 2.0**-a_k, b.float() * 2.0**-b_k) if static else (a.float(), b.float())
    wide_a = wide_a.t() if transpose == "a" else wide_a
    wide_b = wide_b.t() if transpose == "b" else wide_b
    product = wide_a @ wide_b
    return product if static else product * torch.exp2(-(a_k + b_k))


_PRODUCT: list = []  # the autograd.Function, made once (torch is imported lazily)


def _fp8_product() -> Any:
    """An autograd.Function: `x @ weight.T` of E4M3 casts, its backward the two products of the
    E5M2 gradient with E5M2 casts of the weight and x (one format per product: `ipu.matmul`
    takes one, so the backward's other operands are cast to E5M2 too, from their f32 values)."""
    if _PRODUCT:
        return _PRODUCT[0]
    import torch

    forward, backward = (getattr(torch, FP8_FORMATS[phase]) for phase in ("forward", "backward"))

    def scale(x: Any, dtype: Any, role: str, fp8: FP8Training) -> Any:
        return fp8.log2_scales[role] if fp8.log2_scales is not None else fp8_log2_scale(x, dtype)

    def cast(x: Any, dtype: Any, role: str, fp8: FP8Training) -> tuple[Any, Any]:
        k = scale(x, dtype, role, fp8)
        return _fp8_cast(x, dtype, k), k

    class FP8Product(torch.autograd.Function):
        @staticmethod
        def forward(x: Any, weight: Any, fp8: FP8Training) -> Any:
            (xq, x_k), (wq, w_k) = cast(x, forward, "activation", fp8), cast(weight, forward, "weight", fp8)
            return _scaled_product(xq, x_k, wq, w_k, "b")

        @staticmethod
        def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
            x, weight, ctx.fp8 = inputs
            ctx.save_for_backward(x, weight)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> tuple:
            x, weight = ctx.saved_tensors
            (gq, g_k), (xq, x_k), (wq, w_k) = (
                cast(grad, backward, "gradient", ctx.fp8),
                cast(x, backward, "activation", ctx.fp8),
                cast(weight, backward, "weight", ctx.fp8),
            )
            grad_x = _scaled_product(gq, g_k, wq, w_k, "") if ctx.needs_input_grad[0] else None
            grad_weight = _scaled_product(gq, g_k, xq, x_k, "a") if ctx.needs_input_grad[1] else None
            return grad_x, grad_weight, None

    _PRODUCT.append(FP8Product.apply)
    return _PRODUCT[0]


class _FP8Linears:
    """While entered, `F.linear` (nn.Linear's, and `torch._C._nn.linear`, attention's
    projections') is `fp8_linear`."""

    def __init__(self, fp8: FP8Training) -> None:
        import torch
        from torch.overrides import TorchFunctionMode

        linears = (torch.nn.functional.linear, torch._C._nn.linear)

        class Mode(TorchFunctionMode):
            def __torch_function__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
                if func not in linears:
                    return func(*args, **(kwargs or {}))
                named = dict(zip(("input", "weight", "bias"), args), **(kwargs or {}))
                return fp8_linear(named["input"], named["weight"], named.get("bias"), fp8)

        self.mode = Mode()

    def __enter__(self) -> Any:
        return self.mode.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.mode.__exit__(*exc)


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

    if array.dtype in NARROW_FLOATS:  # reshaped: ascontiguousarray makes a 0-d array 1-d (a bf16 loss)
        bits = np.ascontiguousarray(array).reshape(array.shape).view(np.int16 if array.dtype.itemsize == 2 else np.uint8)
        return torch.from_numpy(bits).view(getattr(torch, array.dtype.name))
    return torch.from_numpy(array)


def _flag(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise IpuError(f"{name} takes True or False, got {value!r}")
    return value
