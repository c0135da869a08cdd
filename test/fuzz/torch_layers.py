"""The vocabulary of the PyTorch-level fuzzer (fuzz_pytorch.py): makers of layers and losses.

A maker takes (rng, input shape) and returns a `Layer` or None when the shape does not suit it.
A layer's output shape is found by running it once on the input shape (a configuration PyTorch
refuses is dropped there), so makers draw their options freely.
"""

from __future__ import annotations

import copy
import random

import torch
import torch.nn.functional as F  # noqa: N812 (torch's own alias)
from torch import nn


class Layer(nn.Module):
    """One step of a chain: `body` (a module or a function of the tensor); with `side`, the body
    returns (tensor, side output) and the side output becomes an output of the model."""

    def __init__(self, name: str, body, side: bool = False, inner: nn.Module | None = None) -> None:  # noqa: ANN001
        super().__init__()
        self.name, self.side = name, side
        if isinstance(body, nn.Module):
            self.body = body
        else:
            self.function = body
        self.inner = inner  # a module `function` takes first (copies of the layer copy it too)
        self.shape: tuple = ()
        self.input_shape: tuple = ()

    def forward(self, x):  # noqa: ANN001, ANN201
        if hasattr(self, "body"):
            return self.body(x)
        return self.function(x) if self.inner is None else self.function(self.inner, x)


class Chain(nn.Module):
    """The layers one after another; the outputs are the last tensor and the side outputs."""

    def __init__(self, layers: list[Layer]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(layers)

    def forward(self, x):  # noqa: ANN001, ANN201
        sides = []
        for layer in self.layers:
            x = layer(x)
            if layer.side:
                x, side = x
                sides.append(side)
        return (x, *sides) if sides else x


def made(name: str, body, shape: tuple, side: bool = False, training: bool = False, inner: nn.Module | None = None) -> Layer | None:  # noqa: ANN001
    """The layer with its shapes, or None when PyTorch refuses it on `shape` (or it yields a
    non-float tensor, or an empty one, or a large one)."""
    layer = Layer(name, body, side, inner)
    layer.input_shape = shape
    probe = copy.deepcopy(layer).train(training)
    try:
        with torch.no_grad():
            out = probe(torch.randn(shape))
    except (RuntimeError, ValueError, IndexError, TypeError, AssertionError):
        return None
    out = out[0] if side else out
    if not out.is_floating_point() or out.numel() == 0 or out.numel() > 4096 or out.dim() > 5:
        return None
    layer.shape = tuple(out.shape)
    return layer


def _dim(rng: random.Random, shape: tuple) -> int:
    """A dimension, as often negative as not."""
    dim = rng.randrange(len(shape))
    return dim - len(shape) if rng.random() < 0.5 else dim


def _divisor(rng: random.Random, n: int) -> int:
    return rng.choice([d for d in range(1, n + 1) if n % d == 0])


def linear(rng, shape):  # noqa: ANN001, ANN201
    if not shape:
        return None
    out, bias = rng.choice([1, 3, 4, 8]), rng.random() < 0.7
    return made(f"Linear({shape[-1]}, {out}, bias={bias})", nn.Linear(shape[-1], out, bias=bias), shape)


def conv(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) not in (3, 4):
        return None
    channels, groups = shape[1], _divisor(rng, shape[1])
    out = groups * rng.choice([1, 2, 3])
    options = {
        "kernel_size": rng.choice([1, 2, 3, 3, 5]),
        "stride": rng.choice([1, 1, 2, 3]),
        "padding": rng.choice([0, 0, 1, 2]),
        "dilation": rng.choice([1, 1, 2]),
        "groups": groups,
        "bias": rng.random() < 0.7,
    }
    if rng.random() < 0.15:
        options.update(padding="same", stride=1)
    if len(shape) == 4 and rng.random() < 0.2:  # a rectangular kernel
        options["kernel_size"] = (rng.choice([1, 3]), rng.choice([2, 3]))
    kind = nn.Conv1d if len(shape) == 3 else nn.Conv2d
    if len(shape) == 4 and rng.random() < 0.25:
        kind = nn.ConvTranspose2d
        options.pop("padding") if options["padding"] == "same" else None
        options["output_padding"] = rng.choice([0, 1]) if options["stride"] > 1 else 0
    text = ", ".join(f"{k}={v}" for k, v in options.items())
    return made(f"{kind.__name__}({channels}, {out}, {text})", kind(channels, out, **options), shape)


def pool(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) not in (3, 4):
        return None
    two = len(shape) == 4
    kernel = rng.choice([2, 3])
    options = {
        "kernel_size": kernel,
        "stride": rng.choice([None, 1, 2]),
        "padding": rng.choice([0, 0, kernel // 2]),
        "ceil_mode": rng.random() < 0.4,
    }
    kind = rng.choice(["max", "avg", "adaptive"])
    if kind == "adaptive":
        size = rng.choice([1, 2, 3]) if not two else rng.choice([1, 2, (2, 3), (1, None)])
        body = nn.AdaptiveAvgPool2d(size) if two else nn.AdaptiveAvgPool1d(size)
        if rng.random() < 0.3:
            body = nn.AdaptiveMaxPool2d(size) if two else nn.AdaptiveMaxPool1d(size)
        return made(f"{type(body).__name__}({size})", body, shape)
    if kind == "max":
        options["dilation"] = rng.choice([1, 1, 2])
        body = nn.MaxPool2d(**options) if two else nn.MaxPool1d(**options)
    else:
        options["count_include_pad"] = rng.random() < 0.5
        body = nn.AvgPool2d(**options) if two else nn.AvgPool1d(**options)
    return made(f"{type(body).__name__}({options})", body, shape)


def norm(rng, shape, training=False):  # noqa: ANN001, ANN201
    if len(shape) < 2:
        return None
    kind = rng.choice(["batch", "layer", "group"])
    affine = rng.random() < 0.8
    if kind == "batch" and len(shape) in (2, 3, 4):
        body = (nn.BatchNorm2d if len(shape) == 4 else nn.BatchNorm1d)(shape[1], affine=affine)
        return made(f"{type(body).__name__}({shape[1]}, affine={affine})", body, shape, training=training)
    if kind == "group" and len(shape) >= 3:
        groups = _divisor(rng, shape[1])
        return made(f"GroupNorm({groups}, {shape[1]})", nn.GroupNorm(groups, shape[1], affine=affine), shape)
    last = tuple(shape[-rng.choice([1, 1, 2]) :])
    return made(f"LayerNorm({last}, affine={affine})", nn.LayerNorm(last, elementwise_affine=affine), shape)


ACTIVATIONS = [
    lambda rng: nn.ReLU(),
    lambda rng: nn.GELU(approximate=rng.choice(["none", "tanh"])),
    lambda rng: nn.SiLU(),
    lambda rng: nn.Hardswish(),
    lambda rng: nn.Hardsigmoid(),
    lambda rng: nn.LeakyReLU(rng.choice([0.01, 0.2])),
    lambda rng: nn.ELU(rng.choice([1.0, 0.5])),
    lambda rng: nn.Softplus(beta=rng.choice([1.0, 2.0]), threshold=rng.choice([20.0, 1.0])),
    lambda rng: nn.Mish(),
    lambda rng: nn.Tanh(),
    lambda rng: nn.Sigmoid(),
    lambda rng: nn.ReLU6(),
    lambda rng: nn.Hardtanh(-0.5, 0.5),
    lambda rng: nn.PReLU(),
    lambda rng: nn.SELU(),
    lambda rng: nn.CELU(0.7),
    lambda rng: nn.Softsign(),
    lambda rng: nn.Tanhshrink(),
    lambda rng: nn.LogSigmoid(),
]


def activation(rng, shape):  # noqa: ANN001, ANN201
    body = rng.choice(ACTIVATIONS)(rng)
    return made(repr(body), body, shape)


def residual(rng, shape):  # noqa: ANN001, ANN201
    if not shape:
        return None
    inner = rng.choice(ACTIVATIONS)(rng) if rng.random() < 0.5 else nn.Linear(shape[-1], shape[-1])

    class Residual(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, x):  # noqa: ANN001, ANN202
            return x + self.inner(x)

    return made(f"x + {inner!r}(x)", Residual(), shape)


def broadcast(rng, shape):  # noqa: ANN001, ANN201
    """x op a parameter with size-1 dimensions (and sometimes fewer of them)."""
    if not shape:
        return None
    other = tuple(1 if rng.random() < 0.5 else size for size in shape)[rng.randint(0, len(shape) - 1) :]
    op = rng.choice(["add", "mul", "sub", "div", "maximum", "pow"])

    class Broadcast(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.rand(other) + 0.5)

        def forward(self, x):  # noqa: ANN001, ANN202
            if op == "pow":
                return torch.pow(x.abs() + 0.1, self.weight)
            return getattr(torch, op)(x, self.weight)

    return made(f"{op}(x, param{other})", Broadcast(), shape)


def reshape(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) < 2:
        return None
    kind = rng.choice(["permute", "transpose", "flatten", "view", "unsqueeze", "squeeze", "contiguous-T"])
    if kind == "permute":
        order = list(range(len(shape)))
        rng.shuffle(order)
        return made(f"permute{order}", lambda x: x.permute(order), shape)
    if kind == "transpose":
        a, b = _dim(rng, shape), _dim(rng, shape)
        return made(f"transpose({a}, {b})", lambda x: x.transpose(a, b), shape)
    if kind == "flatten":
        start = rng.randrange(len(shape) - 1)
        return made(f"flatten({start})", lambda x: x.flatten(start), shape)
    if kind == "view":
        split = shape[-1]
        factor = _divisor(rng, split)
        return made(f"reshape(..., {factor}, {split // factor})", lambda x: x.reshape(*x.shape[:-1], factor, split // factor), shape)
    if kind == "unsqueeze":
        dim = rng.randint(-len(shape) - 1, len(shape))
        return made(f"unsqueeze({dim})", lambda x: x.unsqueeze(dim), shape)
    if kind == "squeeze":
        return made("squeeze()", lambda x: x.squeeze(), shape)
    return made("mT.contiguous().mT", lambda x: x.mT.contiguous().mT * 1.0, shape)


def slicing(rng, shape):  # noqa: ANN001, ANN201
    if not shape:
        return None
    dim, size = _dim(rng, shape), None
    size = shape[dim]
    start = rng.randint(-size, size - 1)
    stop = rng.choice([None, rng.randint(-size, size)])
    step = rng.choice([1, 2, 3])
    index = (slice(None),) * (dim % len(shape)) + (slice(start, stop, step),)
    if rng.random() < 0.3:  # a single element of the dimension, negative or not
        at = rng.randint(-size, size - 1)
        index = (slice(None),) * (dim % len(shape)) + (at,)
        return made(f"x[{'..., ' * (dim % len(shape))}{at}]", lambda x: x[index], shape)
    return made(f"x[dim {dim}: {start}:{stop}:{step}]", lambda x: x[index], shape)


def gather(rng, shape):  # noqa: ANN001, ANN201
    """Indexing with tensors: index_select, advanced indexing (negative indices), gather."""
    if not shape:
        return None
    dim = _dim(rng, shape)
    size = shape[dim]
    ids = torch.tensor([rng.randint(-size, size - 1) for _ in range(rng.randint(1, 4))])
    kind = rng.choice(["index", "index_select", "gather"])
    if kind == "index":
        index = (slice(None),) * (dim % len(shape)) + (ids,)
        return made(f"x[dim {dim}: {ids.tolist()}]", lambda x: x[index], shape)
    ids = ids % size
    if kind == "index_select":
        return made(f"index_select({dim}, {ids.tolist()})", lambda x: x.index_select(dim, ids), shape)
    positions = torch.randint(0, size, shape, generator=torch.Generator().manual_seed(rng.getrandbits(31)))
    return made(f"gather({dim}, random)", lambda x: x.gather(dim, positions), shape)


def select(rng, shape):  # noqa: ANN001, ANN201
    """where, masked_fill (sometimes with -inf), clamp, non-finite values from a division."""
    kind = rng.choice(["where", "masked_fill", "masked_fill_inf", "clamp", "divide_by_mask", "nan_to_num"])
    threshold = rng.choice([0.0, 0.5, -0.3])
    if kind == "where":
        return made(f"where(x > {threshold}, x, -x * 0.5)", lambda x: torch.where(x > threshold, x, -x * 0.5), shape)
    if kind == "masked_fill":
        return made(f"masked_fill(x < {threshold}, 2.5)", lambda x: x.masked_fill(x < threshold, 2.5), shape)
    if kind == "masked_fill_inf":
        # then softmax, as attention does (interpolating -inf gives nan in torch-mlir's lowering, -inf in ATen's)
        dim = _dim(rng, shape) if shape else 0
        return made(
            f"masked_fill(x < {threshold}, -inf).softmax({dim})", lambda x: x.masked_fill(x < threshold, float("-inf")).softmax(dim), shape
        )
    if kind == "clamp":
        return made("clamp(-1, 0.7)", lambda x: x.clamp(-1.0, 0.7), shape)
    if kind == "divide_by_mask":  # +-inf where the mask is 0, nan at 0 / 0
        return made("x / (x > 0)", lambda x: x / (x > 0).to(x.dtype), shape)
    return made("nan_to_num(x, 0, 9, -9)", lambda x: torch.nan_to_num(x, 0.0, 9.0, -9.0), shape)


def softmax(rng, shape):  # noqa: ANN001, ANN201
    if not shape:
        return None
    dim = _dim(rng, shape)
    if rng.random() < 0.5:
        return made(f"softmax({dim})", lambda x: torch.softmax(x, dim), shape)
    return made(f"log_softmax({dim})", lambda x: torch.log_softmax(x, dim), shape)


def reduction(rng, shape):  # noqa: ANN001, ANN201
    if not shape:
        return None
    dim, keepdim = _dim(rng, shape), rng.random() < 0.5
    op = rng.choice(["sum", "mean", "amax", "amin", "var", "std", "prod", "logsumexp", "norm", "all_sum", "cumsum", "cumprod"])
    if op == "all_sum":
        return made("x.sum()", lambda x: x.sum(), shape)
    if op in ("cumsum", "cumprod"):
        return made(f"{op}({dim})", lambda x: getattr(torch, op)(x, dim), shape)
    if op in ("var", "std"):
        correction = rng.choice([0, 1])
        return made(
            f"{op}({dim}, correction={correction}, keepdim={keepdim})",
            lambda x: getattr(torch, op)(x, dim, correction=correction, keepdim=keepdim),
            shape,
        )
    if op == "norm":
        return made(
            f"linalg.vector_norm(dim={dim}, keepdim={keepdim})", lambda x: torch.linalg.vector_norm(x, dim=dim, keepdim=keepdim), shape
        )
    return made(f"{op}({dim}, keepdim={keepdim})", lambda x: getattr(torch, op)(x, dim, keepdim=keepdim), shape)


def ordering(rng, shape):  # noqa: ANN001, ANN201
    """topk, sort, argmax/argmin: the indices a side output. A small ramp is added first so
    that ties (ReLU's zeros) do not make the indices a matter of choice."""
    if not shape:
        return None
    dim, size = _dim(rng, shape), shape[_dim(rng, shape)]
    size = shape[dim]
    kind = rng.choice(["topk", "sort", "argmax", "argmin", "max_dim"])
    ramp = torch.arange(int(torch.tensor(shape).prod())).reshape(shape).float() * 1e-3
    largest, descending, keepdim = rng.random() < 0.7, rng.random() < 0.5, rng.random() < 0.5
    k = rng.randint(1, size)

    def apply(x):  # noqa: ANN001, ANN202
        x = x + ramp.to(x.dtype)
        if kind == "topk":
            return tuple(torch.topk(x, k, dim, largest=largest))
        if kind == "sort":
            return tuple(torch.sort(x, dim, descending=descending))
        if kind == "max_dim":
            return tuple(torch.max(x, dim, keepdim=keepdim))
        index = getattr(torch, kind)(x, dim, keepdim=keepdim)
        return x * 1.0, index

    return made(f"{kind}(dim={dim}, k={k}, largest={largest}, descending={descending}, keepdim={keepdim})", apply, shape, side=True)


def combine(rng, shape):  # noqa: ANN001, ANN201
    """concat, split/chunk, stack, flip, roll, repeat, pad."""
    if not shape:
        return None
    dim = _dim(rng, shape)
    kind = rng.choice(["cat", "chunk", "split", "stack", "flip", "roll", "repeat", "pad", "expand"])
    if kind == "cat":
        return made(f"cat([x, tanh(x)], {dim})", lambda x: torch.cat([x, torch.tanh(x)], dim), shape)
    if kind == "chunk":
        return made(f"chunk(2, {dim}): a * b.mean()", lambda x: x.chunk(2, dim)[0] * x.chunk(2, dim)[-1].mean(), shape)
    if kind == "split":
        part = rng.randint(1, max(1, shape[dim] - 1))
        return made(f"split({part}, {dim}): cat reversed", lambda x: torch.cat(x.split(part, dim)[::-1], dim), shape)
    if kind == "stack":
        return made(f"stack([x, -x], {dim})", lambda x: torch.stack([x, -x], dim), shape)
    if kind == "flip":
        return made(f"flip({dim})", lambda x: x.flip(dim), shape)
    if kind == "roll":
        shift = rng.randint(-3, 3)
        return made(f"roll({shift}, {dim})", lambda x: x.roll(shift, dim), shape)
    if kind == "repeat":
        counts = [rng.choice([1, 1, 2]) for _ in shape]
        return made(f"repeat{counts}", lambda x: x.repeat(*counts), shape)
    if kind == "expand":
        return made("unsqueeze(0).expand(2, ...) * 1", lambda x: x.unsqueeze(0).expand(2, *x.shape) * 1.0, shape)
    mode = rng.choice(["constant", "reflect", "replicate", "circular"]) if len(shape) in (3, 4) else "constant"
    pads = [rng.randint(0, 2) for _ in range(2 * (len(shape) - 2 if mode != "constant" else min(len(shape), 2)))]
    return made(f"pad({pads}, {mode})", lambda x: F.pad(x, pads, mode=mode), shape)


def integers(rng, shape):  # noqa: ANN001, ANN201
    """A trip through integers and booleans and back."""
    kind = rng.choice(["int", "bool", "long"])
    if kind == "int":
        return made(
            "(x*4).round().int() // 3 + % 5", lambda x: ((lambda y: y // 3 + y % 5)((x * 4).round().to(torch.int32))).to(x.dtype), shape
        )
    if kind == "bool":
        return made("((x > 0) & (x < 1)) | (x < -1)", lambda x: (((x > 0) & (x < 1)) | (x < -1)).to(x.dtype) + x, shape)
    return made("x.long().clamp(-3, 3) * x", lambda x: (x * 3).long().clamp(-3, 3) * x, shape)


def math(rng, shape):  # noqa: ANN001, ANN201
    op = rng.choice(
        [
            "exp_clamped",
            "log_abs",
            "sqrt_abs",
            "rsqrt",
            "reciprocal",
            "sign",
            "floor",
            "frac",
            "erf",
            "atan2",
            "fmod",
            "remainder",
            "square",
            "abs",
        ]
    )
    functions = {
        "exp_clamped": lambda x: torch.exp(x.clamp(max=5.0)),
        "log_abs": lambda x: torch.log(x.abs() + 1e-3),
        "sqrt_abs": lambda x: torch.sqrt(x.abs()),
        "rsqrt": lambda x: torch.rsqrt(x.abs() + 0.1),
        "reciprocal": lambda x: torch.reciprocal(x.abs() + 0.5),
        "sign": lambda x: torch.sign(x) * x,
        "floor": lambda x: torch.floor(x * 2),
        "frac": lambda x: torch.frac(x * 2),
        "erf": torch.erf,
        "atan2": lambda x: torch.atan2(x, x.flip(-1) if x.dim() else x + 1),
        "fmod": lambda x: torch.fmod(x * 3, 1.5),
        "remainder": lambda x: torch.remainder(x * 3, 1.5),
        "square": torch.square,
        "abs": torch.abs,
    }
    return made(op, functions[op], shape)


def attention(rng, shape):  # noqa: ANN001, ANN201
    """MultiheadAttention or TransformerEncoderLayer on (batch, seq, width) or (seq, batch, width)."""
    if len(shape) != 3:
        return None
    width = shape[-1]
    heads = _divisor(rng, width)
    batch_first = rng.random() < 0.5
    seq = shape[1] if batch_first else shape[0]
    causal = rng.random() < 0.5
    mask = torch.triu(torch.ones(seq, seq, dtype=torch.bool), 1) if causal else None
    if rng.random() < 0.3 and causal:  # an additive float mask
        mask = torch.zeros(seq, seq).masked_fill(mask, float("-inf"))
    if rng.random() < 0.5:
        body = nn.MultiheadAttention(width, heads, batch_first=batch_first, bias=rng.random() < 0.8)
        weights = rng.random() < 0.5

        _keep_mask(body, mask)

        def attend(attention, x):  # noqa: ANN001, ANN202
            out, attn = attention(x, x, x, attn_mask=attention.causal_mask, need_weights=weights)
            return (out, attn) if weights else out

        name = f"MultiheadAttention({width}, {heads}, batch_first={batch_first}, causal={causal}, need_weights={weights})"
        return made(name, attend, shape, side=weights, inner=body)
    options = {
        "dim_feedforward": rng.choice([8, 16]),
        "dropout": 0.0,
        "activation": rng.choice(["relu", "gelu"]),
        "batch_first": batch_first,
        "norm_first": rng.random() < 0.5,
    }
    body = nn.TransformerEncoderLayer(width, heads, **options)
    name = f"TransformerEncoderLayer({width}, {heads}, {options}, causal={causal})"
    _keep_mask(body, mask)
    return made(name, lambda encoder, x: encoder(x, src_mask=encoder.causal_mask), shape, inner=body)


def _keep_mask(module: nn.Module, mask: torch.Tensor | None) -> None:
    """A float mask as a buffer (`.double()` converts it), a bool one as a plain attribute."""
    if mask is not None and mask.is_floating_point():
        module.register_buffer("causal_mask", mask)
    else:
        module.causal_mask = mask


def recurrent(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) != 3:
        return None
    kind = rng.choice([nn.GRU, nn.LSTM, nn.RNN])
    body = kind(shape[-1], rng.choice([2, 4]), batch_first=True, num_layers=rng.choice([1, 2]), bidirectional=rng.random() < 0.3)
    return made(f"{kind.__name__}({shape[-1]}, batch_first)", lambda cell, x: cell(x)[0], shape, inner=body)


def upsample(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) != 4:
        return None
    mode = rng.choice(["nearest", "bilinear", "bilinear-corners"])
    corners = True if mode == "bilinear-corners" else None
    mode = mode.split("-")[0]
    factor = rng.choice([2, 1.5])
    return made(
        f"interpolate({factor}, {mode}, align_corners={corners})",
        lambda x: F.interpolate(x, scale_factor=factor, mode=mode, align_corners=corners),
        shape,
    )


LAYERS = [
    linear,
    conv,
    conv,
    pool,
    norm,
    activation,
    activation,
    residual,
    broadcast,
    reshape,
    slicing,
    gather,
    select,
    softmax,
    reduction,
    ordering,
    combine,
    integers,
    math,
    attention,
    recurrent,
    upsample,
]


def training_layers() -> list:
    """The makers for training: parameters and smooth ops (no ties, no non-finite values)."""

    def train_norm(rng, shape):  # noqa: ANN001, ANN202
        return norm(rng, shape, training=True)

    def flatten(rng, shape):  # noqa: ANN001, ANN202  (the batch stays the first dimension)
        return made("flatten(1)", lambda x: x.flatten(1), shape) if len(shape) > 2 else None

    return [linear, linear, conv, train_norm, activation, residual, broadcast, softmax, pool, flatten, attention]


class Loss:
    """A loss on the chain's output flattened to (batch, features)."""

    def __init__(self, name: str, function, make_target) -> None:  # noqa: ANN001
        self.name, self.function, self.make_target = name, function, make_target
        self.features = 0

    def wrap(self, chain: Chain) -> nn.Module:
        function = self.function

        class WithLoss(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.chain = chain

            def forward(self, x, target):  # noqa: ANN001, ANN202
                y = self.chain(x)
                y = (y[0] if isinstance(y, tuple) else y).flatten(1)
                return y, function(y, target)

        return WithLoss()

    def target(self, rng: random.Random, batch: int) -> torch.Tensor:
        return self.make_target(rng, batch)


def _regression(rng, shape):  # noqa: ANN001, ANN201
    features = _features(shape)
    reduction = rng.choice(["mean", "sum"])
    kind = rng.choice(["mse", "l1", "smooth_l1", "huber", "bce_logits"])
    beta = rng.choice([1.0, 0.5])
    functions = {
        "mse": lambda y, t: F.mse_loss(y, t, reduction=reduction),
        "l1": lambda y, t: F.l1_loss(y, t, reduction=reduction),
        "smooth_l1": lambda y, t: F.smooth_l1_loss(y, t, reduction=reduction, beta=beta),
        "huber": lambda y, t: F.huber_loss(y, t, reduction=reduction, delta=beta),
        "bce_logits": lambda y, t: F.binary_cross_entropy_with_logits(y, t, reduction=reduction),
    }

    def target(rng, batch):  # noqa: ANN001, ANN202
        generator = torch.Generator().manual_seed(rng.getrandbits(31))
        return (
            torch.rand((batch, features), generator=generator)
            if kind == "bce_logits"
            else torch.randn((batch, features), generator=generator)
        )

    return Loss(f"{kind}({reduction}, beta={beta})", functions[kind], target)


def _classification(rng, shape):  # noqa: ANN001, ANN201
    classes = _features(shape)
    reduction = rng.choice(["mean", "sum"])
    smoothing = rng.choice([0.0, 0.0, 0.1])
    ignore = rng.choice([-100, 0]) if classes > 1 else -100
    nll = rng.random() < 0.3

    def function(y, t):  # noqa: ANN001, ANN202
        if nll:
            return F.nll_loss(F.log_softmax(y, 1), t, ignore_index=ignore, reduction=reduction)
        return F.cross_entropy(y, t, label_smoothing=smoothing, ignore_index=ignore, reduction=reduction)

    def target(rng, batch):  # noqa: ANN001, ANN202
        labels = [rng.randrange(classes) for _ in range(batch)]
        if ignore == 0 and all(label == 0 for label in labels):
            labels[0] = classes - 1
        if ignore == -100 and batch > 1 and rng.random() < 0.3:
            labels[-1] = -100
        return torch.tensor(labels)

    name = "nll" if nll else f"cross_entropy(smoothing={smoothing})"
    return Loss(f"{name}({reduction}, ignore_index={ignore})", function, target)


def _features(shape: tuple) -> int:
    count = 1
    for size in shape[1:]:
        count *= size
    return count


LOSSES = [_regression, _classification]


# The wider vocabulary (fuzz_pytorch.py appends one of these from a stream of its own, so that the
# chains of seeds run before stay what they were): scatters and index_add with negative dims,
# einsum, where and clamp with broadcast tensors, integer division and remainders of negatives,
# triangles, products of a tensor with itself, running maxima, torch.cond.


def scatter(rng, shape):  # noqa: ANN001, ANN201
    """scatter_reduce / scatter_add / index_add / index_put(accumulate) with duplicate indices."""
    if not shape:
        return None
    dim = _dim(rng, shape)
    size = shape[dim]
    generator = torch.Generator().manual_seed(rng.getrandbits(31))
    kind = rng.choice(["scatter_add", "scatter_reduce", "index_add", "index_put"])
    if kind in ("scatter_add", "scatter_reduce"):
        index = torch.randint(0, size, shape, generator=generator)
        if kind == "scatter_add":
            return made(f"scatter_add({dim}, random, tanh(x))", lambda x: x.scatter_add(dim, index, torch.tanh(x)), shape)
        reduce, include = rng.choice(["sum", "prod", "mean", "amax", "amin"]), rng.random() < 0.5
        return made(
            f"scatter_reduce({dim}, random, x * 0.5, {reduce}, include_self={include})",
            lambda x: x.scatter_reduce(dim, index, x * 0.5, reduce, include_self=include),
            shape,
        )
    ids = torch.randint(0, size, (rng.randint(1, 4),), generator=generator)
    if kind == "index_add":
        alpha = rng.choice([1.0, -2.0])

        def add(x):  # noqa: ANN001, ANN202
            source = torch.tanh(x.narrow(dim, 0, 1)).expand(*(len(ids) if d == dim % x.dim() else n for d, n in enumerate(x.shape)))
            return x.index_add(dim, ids, source, alpha=alpha)

        return made(f"index_add({dim}, {ids.tolist()}, alpha={alpha})", add, shape)
    ids = ids - size * (torch.rand(ids.shape, generator=generator) < 0.5).long()  # negative indices
    return made(
        f"index_put(({ids.tolist()},), 1.5, accumulate=True)",
        lambda x: x.index_put((ids,), torch.tensor(1.5, dtype=x.dtype), accumulate=True),
        shape,
    )


def einsum(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) < 2:
        return None
    letters = "abcde"[: len(shape)]
    rest, i, j = letters[:-2], letters[-2], letters[-1]
    equations = [
        f"{rest}{i}{j}->{rest}{j}{i}",
        f"{rest}{i}{j},{rest}{i}{j}->{rest}{i}",
        f"{rest}{i}{j},{rest}k{j}->{rest}{i}k",
        f"{letters}->{j}",
    ]
    equation = rng.choice(equations)
    operands = equation.split("->")[0].count(",") + 1
    return made(f"einsum('{equation}')", lambda x: torch.einsum(equation, *([x] * operands)), shape)


def where_broadcast(rng, shape):  # noqa: ANN001, ANN201
    """where with a broadcast condition or a broadcast other; clamp with tensor bounds (lower
    above upper at some elements: PyTorch takes the upper)."""
    if not shape:
        return None
    other = tuple(1 if rng.random() < 0.5 else size for size in shape)[rng.randint(0, len(shape) - 1) :]
    kind = rng.choice(["other", "condition", "clamp"])

    class Broadcast(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.randn(other))

        def forward(self, x):  # noqa: ANN001, ANN202
            if kind == "other":
                return torch.where(x > 0.2, x, self.weight)
            if kind == "condition":
                return torch.where(self.weight > 0, x, -x)
            return x.clamp(min=self.weight - 0.5, max=self.weight.flip(-1))

    return made(f"where/clamp {kind} with param{other}", Broadcast(), shape)


def integer_division(rng, shape):  # noqa: ANN001, ANN201
    """Floor and truncating division, remainder and fmod of negative integers by negative and
    positive divisors (a scalar or a broadcast tensor)."""
    dtype = rng.choice([torch.int32, torch.int64])
    op = rng.choice(["floor", "trunc", "remainder", "fmod"])
    scalar = rng.random() < 0.5
    divisor = (
        rng.choice([-3, 2, -2, 5])
        if scalar
        else torch.tensor([rng.choice([-3, -1, 2, 4]) for _ in range(shape[-1] if shape else 1)], dtype=dtype)
    )

    def apply(x):  # noqa: ANN001, ANN202
        y = (x * 4).round().to(dtype)
        # the cast of NaN or +-inf gives the type's minimum, which divided by -1 kills PyTorch
        # (SIGFPE, seed 3013): moved up by one, as no finite input of these sizes reaches it
        y = torch.where(y == torch.iinfo(dtype).min, y + 1, y)
        if op in ("floor", "trunc"):
            return torch.div(y, divisor, rounding_mode=op).to(x.dtype)
        return getattr(torch, op)(y, divisor).to(x.dtype)

    return made(f"{op} division of {dtype} by {divisor if scalar else divisor.tolist()}", apply, shape)


def triangle(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) < 2:
        return None
    kind, diagonal = rng.choice(["tril", "triu"]), rng.choice([-1, 0, 1])
    return made(f"{kind}(x, {diagonal})", lambda x: getattr(torch, kind)(x, diagonal), shape)


def self_product(rng, shape):  # noqa: ANN001, ANN201
    if len(shape) < 2:
        return None
    if rng.random() < 0.5:
        return made("x @ x.mT", lambda x: x @ x.mT, shape)
    return made("x.mT @ x", lambda x: x.mT @ x, shape)


def running(rng, shape):  # noqa: ANN001, ANN201
    """cummax / cummin (indices a side output; a ramp breaks ties) and logcumsumexp."""
    if not shape:
        return None
    dim = _dim(rng, shape)
    kind = rng.choice(["cummax", "cummin", "logcumsumexp"])
    if kind == "logcumsumexp":
        return made(f"logcumsumexp({dim})", lambda x: torch.logcumsumexp(x, dim), shape)
    ramp = torch.arange(int(torch.tensor(shape).prod())).reshape(shape).float() * 1e-3
    return made(f"{kind}({dim})", lambda x: tuple(getattr(torch, kind)(x + ramp.to(x.dtype), dim)), shape, side=True)


def cond(rng, shape):  # noqa: ANN001, ANN201
    """torch.cond on the sign of a sum: one branch or the other."""
    threshold = rng.choice([0.0, 1.0])
    return made(
        f"cond(x.sum() > {threshold}, sin, x * 2)",
        lambda x: torch.cond(x.sum() > threshold, lambda y: torch.sin(y), lambda y: y * 2.0, (x,)),
        shape,
    )


EXTRA_LAYERS = [scatter, scatter, einsum, where_broadcast, integer_division, triangle, self_product, running, cond]
