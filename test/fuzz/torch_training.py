"""The wider training vocabulary of the PyTorch-level fuzzer (fuzz_pytorch.py, `make_training`).

Drawn from a stream of its own (`random.Random(f"train-{seed}")`), after everything the older
generator draws, so that the seeds run before keep their models when the stream declines:

- ops that so far appeared only in inference chains, appended to a training chain: gathers,
  scatters, index_add / index_put, cumsum / cumprod, sort / topk values, masked_fill / where,
  clamp with tensor bounds, GRU / LSTM / RNN, InstanceNorm, dropout at p=0, einsum, triangles;
- more losses: KLDiv, BCEWithLogits with pos_weight and weight, NLL and cross entropy with
  class weights, label smoothing and labels at the class-count edge;
- odd optimizer settings: SGD's dampening and weight decay with (Nesterov) momentum, maximize,
  lr 0, Adam's amsgrad and RMSprop (refused: a clean error is the expected verdict), PopTorch's
  LAMB (its host `step` is the reference);
- odd layouts of the batches (channels_last, non-contiguous);
- f16 and bf16 training (`model.half()` / `.bfloat16()`): PyTorch's f32 and f64 loops from the
  same rounded weights and batches are the references, the tolerance `PRECISION_RTOL`.
"""

from __future__ import annotations

import random

import torch
import torch.nn.functional as F  # noqa: N812 (torch's own alias)
from torch import nn
from torch_layers import EXTRA_LAYERS, LAYERS, LOSSES, Layer, Loss, _dim, _features, made

# An element of an f16 / bf16 training run passes within 8 machine epsilons (f16 2^-10, bf16
# 2^-7) of the tensor's largest magnitude of PyTorch's f32 loop's (an assumption: a chain of at
# most five layers with sums of at most a few hundred terms, each rounding once into the type,
# and a few updates of weights stored in the type), or of its f64 loop's.
PRECISION_RTOL = {torch.float16: 8 * 2.0**-10, torch.bfloat16: 8 * 2.0**-7}


def _by_name(function, name: str):  # noqa: ANN001, ANN202
    """The maker `function` of torch_layers restricted to the kind `name` (re-drawn until it)."""

    def make(rng, shape):  # noqa: ANN001, ANN202
        for _ in range(12):
            layer = function(rng, shape)
            if layer is not None and name in layer.name:
                return layer
        return None

    return make


def ordered_values(rng, shape):  # noqa: ANN001, ANN201
    """sort / topk values (their gradient routed back through the indices); a ramp unties."""
    if not shape:
        return None
    dim = _dim(rng, shape)
    ramp = torch.arange(int(torch.tensor(shape).prod())).reshape(shape).float() * 1e-3
    k = rng.randint(1, shape[dim])
    if rng.random() < 0.5:
        return made(f"sort({dim}).values", lambda x: torch.sort(x + ramp.to(x.dtype), dim, descending=True).values, shape, training=True)
    return made(f"topk({k}, {dim}).values", lambda x: torch.topk(x + ramp.to(x.dtype), k, dim).values, shape, training=True)


def gathered(rng, shape):  # noqa: ANN001, ANN201
    """gather with duplicate positions: its gradient a scatter-add."""
    if not shape:
        return None
    dim = _dim(rng, shape)
    positions = torch.randint(0, shape[dim], shape, generator=torch.Generator().manual_seed(rng.getrandbits(31)))
    return made(f"gather({dim}, random)", lambda x: x.gather(dim, positions), shape, training=True)


def instance_norm(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) not in (3, 4):
        return None
    affine = rng.random() < 0.7
    body = (nn.InstanceNorm2d if len(shape) == 4 else nn.InstanceNorm1d)(shape[1], affine=affine)
    return made(f"{type(body).__name__}({shape[1]}, affine={affine})", body, shape, training=True)


def dropout_zero(rng, shape):  # noqa: ANN001, ANN201
    return made("Dropout(p=0.0)", nn.Dropout(0.0), shape, training=True)


def cumulative(rng, shape):  # noqa: ANN001, ANN201
    if not shape:
        return None
    dim, op = _dim(rng, shape), rng.choice(["cumsum", "cumprod"])
    return made(f"{op}({dim})", lambda x: getattr(torch, op)(x, dim), shape, training=True)


def _layer(name: str):  # noqa: ANN202
    return next(maker for maker in LAYERS + EXTRA_LAYERS if maker.__name__ == name)


def _smooth_select(rng, shape):  # noqa: ANN001, ANN202
    """torch_layers.select without the division by a mask (its infinities make every gradient NaN)."""
    layer = _layer("select")(rng, shape)
    return None if layer is None or layer.name.startswith("x / ") else layer


TRAINING_EXTRA = [
    gathered,
    _layer("gather"),
    _by_name(_layer("scatter"), "scatter_add"),
    _by_name(_layer("scatter"), "scatter_reduce"),
    _by_name(_layer("scatter"), "index_add"),
    _by_name(_layer("scatter"), "index_put"),
    cumulative,
    ordered_values,
    _smooth_select,
    _layer("where_broadcast"),
    _layer("recurrent"),
    instance_norm,
    dropout_zero,
    _layer("einsum"),
    _layer("triangle"),
    _layer("pool"),
    _layer("conv"),
]


def extra_layers(widen: random.Random, shape: tuple, micro: int) -> list[Layer]:
    """One or two layers of `TRAINING_EXTRA` on `shape` whose output keeps the micro-batch as its
    first dimension (the loss flattens from dimension 1)."""
    layers = []
    for _ in range(widen.randint(1, 2)):
        for _ in range(12):
            layer = widen.choice(TRAINING_EXTRA)(widen, shape)
            if layer is not None and len(layer.shape) >= 2 and layer.shape[0] == micro:
                layers.append(layer)
                shape = layer.shape
                break
    return layers


def _kl_div(rng, shape):  # noqa: ANN001, ANN202
    features, reduction, log_target = _features(shape), rng.choice(["batchmean", "sum", "mean"]), rng.random() < 0.5

    def target(rng, batch):  # noqa: ANN001, ANN202
        logits = torch.randn((batch, features), generator=torch.Generator().manual_seed(rng.getrandbits(31)))
        return logits.log_softmax(1) if log_target else logits.softmax(1)

    return Loss(
        f"kl_div(log_softmax, {reduction}, log_target={log_target})",
        lambda y, t: F.kl_div(F.log_softmax(y, 1), t, reduction=reduction, log_target=log_target),
        target,
    )


def _bce_weighted(rng, shape):  # noqa: ANN001, ANN202
    features, reduction = _features(shape), rng.choice(["mean", "sum"])
    generator = torch.Generator().manual_seed(rng.getrandbits(31))
    pos_weight = torch.rand(features, generator=generator) * 3 + 0.1
    weight = torch.rand(features, generator=generator) + 0.5 if rng.random() < 0.5 else None

    def target(rng, batch):  # noqa: ANN001, ANN202
        return (torch.rand((batch, features), generator=torch.Generator().manual_seed(rng.getrandbits(31))) < 0.5).float()

    return Loss(
        f"bce_with_logits(pos_weight, weight={weight is not None}, {reduction})",
        lambda y, t: F.binary_cross_entropy_with_logits(
            y, t.to(y.dtype), weight=_cast(weight, y), pos_weight=_cast(pos_weight, y), reduction=reduction
        ),
        target,
    )


def _weighted_classes(rng, shape):  # noqa: ANN001, ANN202
    """NLL or cross entropy with class weights (label smoothing at times); labels include the
    last class and the first."""
    classes, reduction = _features(shape), rng.choice(["mean", "sum"])
    weight = torch.rand(classes, generator=torch.Generator().manual_seed(rng.getrandbits(31))) + 0.25
    smoothing, ignore, nll = rng.choice([0.0, 0.2]), rng.choice([-100, classes - 1]), rng.random() < 0.4

    def function(y, t):  # noqa: ANN001, ANN202
        if nll:
            return F.nll_loss(F.log_softmax(y, 1), t, weight=_cast(weight, y), ignore_index=ignore, reduction=reduction)
        return F.cross_entropy(y, t, weight=_cast(weight, y), label_smoothing=smoothing, ignore_index=ignore, reduction=reduction)

    def target(rng, batch):  # noqa: ANN001, ANN202
        labels = [rng.choice([0, classes - 1, rng.randrange(classes)]) for _ in range(batch)]
        if all(label == ignore for label in labels):
            labels[0] = 0 if ignore != 0 else classes - 1
        return torch.tensor(labels)

    name = "nll" if nll else f"cross_entropy(smoothing={smoothing})"
    return Loss(f"{name}(class weights, {reduction}, ignore_index={ignore}, labels at the edges)", function, target)


def _cast(value: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor | None:
    return None if value is None else value.to(like.dtype)


EXTRA_LOSSES = [_kl_div, _bce_weighted, _weighted_classes]


def wider_optimizer(widen: random.Random, spec: dict) -> dict:
    """`spec` (fuzz_pytorch's `_optimizer_spec`) with an odd setting, at times."""
    if widen.random() >= 0.5:
        return spec
    spec = dict(spec)
    odd = widen.choice(["dampening", "decay_momentum", "maximize", "lr0", "amsgrad", "RMSprop", "LAMB", "LAMB"])
    if odd == "dampening":
        spec.update(kind="SGD", momentum=0.9, dampening=widen.choice([0.1, 0.5]), nesterov=False, weight_decay=widen.choice([0.0, 0.01]))
    elif odd == "decay_momentum":
        spec.update(kind="SGD", momentum=widen.choice([0.5, 0.9]), nesterov=widen.random() < 0.5, weight_decay=0.05)
    elif odd == "maximize":
        spec["maximize"] = True
    elif odd == "lr0":
        spec["lr"] = 0.0
    elif odd == "amsgrad":
        spec = {"kind": widen.choice(["Adam", "AdamW"]), "lr": spec["lr"], "groups": spec["groups"], "weight_decay": 0.0, "amsgrad": True}
    elif odd == "RMSprop":
        spec = {"kind": "RMSprop", "lr": spec["lr"], "groups": spec["groups"]}
    else:
        spec = {"kind": "LAMB", "lr": spec["lr"], "groups": spec["groups"], "weight_decay": widen.choice([0.0, 0.01])}
    return spec


def optimizer_class(kind: str) -> type:
    if kind == "LAMB":
        from ipu_mlir.poptorch.optim import LAMB

        return LAMB
    return getattr(torch.optim, kind)


def odd_layout(widen: random.Random, x: torch.Tensor, channels_last: bool = True) -> tuple[torch.Tensor, str]:
    """The batch's values channels_last (where `channels_last`) or as a non-contiguous view, at times."""
    if x.dim() == 4 and widen.random() < 0.3:
        return (x.contiguous(memory_format=torch.channels_last), " channels_last") if channels_last else (x, "")
    if x.dim() >= 2 and widen.random() < 0.2:
        return x.transpose(0, -1).contiguous().transpose(0, -1), " non-contiguous"
    return x, ""


def precision(widen: random.Random) -> torch.dtype | None:
    """The training type: f32 mostly, f16 or bf16 at times."""
    draw = widen.random()
    return torch.float16 if draw < 0.12 else torch.bfloat16 if draw < 0.2 else None


def widened(widen: random.Random, model: nn.Module, batches: list, text: str, options: dict, shape: tuple, micro: int) -> tuple:
    """torch_training.py's choices: more layers and another loss, an odd optimizer setting, odd
    batch layouts, f16 / bf16."""
    added = extra_layers(widen, shape, micro) if widen.random() < 0.4 else []
    if added or widen.random() < 0.25:
        shape = added[-1].shape if added else shape
        loss = widen.choice(EXTRA_LOSSES + LOSSES)(widen, shape)
        model.chain.layers.extend(added)
        model = loss.wrap(model.chain)
        batches = [(x, loss.target(widen, len(x))) for x, _ in batches]
        text += f"; widened: then {' -> '.join(layer.name for layer in added) or 'no layer'}, loss {loss.name} instead"
    options["optimizer"] = wider_optimizer(widen, options["optimizer"])
    # PyTorch 2.13's CPU GroupNorm backward segfaults on a channels_last input (seed 3035)
    channels_last = not any(isinstance(module, nn.GroupNorm) for module in model.modules())
    laid = [odd_layout(widen, x, channels_last) for x, _ in batches]
    batches = [(x, target) for (x, _), (_, target) in zip(laid, batches)]
    options["precision"] = precision(widen)
    if options["precision"] is not None and options["optimizer"]["kind"] != "SGD":
        options["optimizer"] = {"kind": "SGD", "lr": options["optimizer"]["lr"], "groups": options["optimizer"]["groups"], "momentum": 0.9}
    notes = "".join(note for _, note in laid) + (f" in {options['precision']}" if options["precision"] else "")
    return model, batches, f"{text}; optimizer {options['optimizer']}{'; batches' + notes if notes else ''}"


class Autocast(nn.Module):
    """A square Linear computed in bf16 and widened back, as `torch.autocast` runs a matmul."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.linear = nn.Linear(width, width)

    def forward(self, x):  # noqa: ANN001, ANN201
        narrow = torch.bfloat16
        return F.linear(x.to(narrow), self.linear.weight.to(narrow), self.linear.bias.to(narrow)).to(x.dtype)


def mixed(more: random.Random, model: nn.Module, options: dict, shape: tuple, batches: list) -> str:
    """From seed 3163 (`more`, a stream of its own): an f32 chain at times ends in an autocast
    Linear (checked at bf16's PRECISION_RTOL), and an f16 / bf16 one at times trains with f32
    master weights (`Options.Precision.setMasterWeights`) and a static loss scale, unless a
    batch holds NaN or an infinity: with master weights a step whose gradients are not finite
    is skipped (frontends/mixed_precision.py, as torch.amp.GradScaler), where PyTorch's plain
    loop takes it (seed 3269)."""
    if options.get("precision") is None and shape and more.random() < 0.25:
        layer = Layer(f"autocast bf16 Linear({shape[-1]}, {shape[-1]})", Autocast(shape[-1]))
        layer.shape = layer.input_shape = shape
        model.chain.layers.append(layer)
        options["autocast"] = True
        return f"; then {layer.name}"
    narrow = options.get("precision") or torch.float32  # f16 makes 3e38 infinite
    finite = all(bool(value.to(narrow).isfinite().all()) for batch in batches for value in batch if value.is_floating_point())
    if options.get("precision") is not None and more.random() < 0.6 and finite:
        options["master_weights"], options["loss_scaling"] = True, more.choice([None, 128.0])
        return f"; f32 master weights, loss scaling {options['loss_scaling']}"
    return ""
