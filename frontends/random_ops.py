"""Random numbers of a training step computed on the chip, as the IPU's hardware PRNG gives them.

    u = uniform(seed, step, offset, shape)      # float32 in [0, 1), a pure function of its inputs
    count = rewrite_random_ops(graph, seed, step)   # the joint step's random ops made of it
    with same_random_ops(seed, step):           # PyTorch's eager ops drawing the same numbers
        loss = model(x).backward()

A counter-based generator: element `i` of the `offset`-th random number drawn in step `step` is a
hash of (seed, step, offset + i) in wrapping 32-bit integer arithmetic (two rounds of Chris
Wellons' "lowbias32" mixer, https://nullprogram.com/blog/2018/07/31/, whose constants are from
his hash-prospector search). Written in torch ops, the same function is traced into the joint
step (an `arange`, multiplies, xors and shifts: element-wise, planned and cut across tiles like
any other) and runs eagerly on the host for PyTorch's reference loop. Offsets count the elements
the step drew before, as PyTorch's Philox offset does, so every op of a step draws fresh numbers.

The seed and the step counter are device variables (`random:seed`, `random:step`, i32); the
joint step advances the counter once per micro-batch, on the device.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import Any

from ipu_mlir.target.diagnostics import IpuError

__all__ = ["RANDOM_OPS", "same_random_ops", "rewrite_random_ops", "uniform"]

_MIX = (0x7FEB352D, 0x846CA68B - (1 << 32))  # lowbias32's multipliers, as signed i32
_UNIT = 1 << 24  # uniform's resolution: the top 24 bits of a hash, exact in f32
_SEED_SALT = 0x3C6EF372  # any constant: keeps seed 0 step 0 from hashing zero to zero

# The ATen ops the generator draws (`_drawn_value` says how; docs/training.md has the table).
# Every other random op of the step (normal, randint, randperm, multinomial, ...) is refused by name.
RANDOM_OPS = (
    "aten.bernoulli.p",
    "aten.bernoulli.default",
    "aten.bernoulli_.float",
    "aten.bernoulli_.Tensor",
    "aten.rand.default",
    "aten.rand_like.default",
    "aten.uniform.default",
    "aten.uniform_.default",
    "aten.native_dropout.default",
)
_REFUSED_PREFIXES = ("aten.randn", "aten.randint", "aten.randperm", "aten.normal", "aten.multinomial", "aten.exponential")
_REFUSED_PREFIXES += ("aten.geometric", "aten.log_normal", "aten.cauchy", "aten.poisson", "aten.random_", "aten.rrelu")


def i32_scalar(value: int) -> Any:
    """An i32 scalar tensor: torch-mlir imports the Tensor forms of bitwise ops, not the Scalar ones."""
    import torch

    return torch.full((), value, dtype=torch.int32)


def shift_right(x: Any, bits: int) -> Any:
    """Logical shift of i32 `x`: the arithmetic one with the sign bits masked off."""
    import torch

    return torch.bitwise_right_shift(x, i32_scalar(bits)) & i32_scalar((1 << (32 - bits)) - 1)


def _mix(x: Any) -> Any:
    x = x ^ shift_right(x, 16)
    x = x * i32_scalar(_MIX[0])
    x = x ^ shift_right(x, 15)
    x = x * i32_scalar(_MIX[1])
    return x ^ shift_right(x, 16)


def uniform(seed: Any, step: Any, offset: int, shape: Any) -> Any:
    """float32 numbers in [0, 1) (multiples of 2^-24) of `shape`: element i hashes (seed, step,
    offset + i). `seed` and `step`: i32 scalar tensors (traced or not)."""
    import torch

    return uniform_counts(seed, step, offset, shape).to(torch.float32) * (1.0 / _UNIT)


def uniform_counts(seed: Any, step: Any, offset: int, shape: Any) -> Any:
    """`uniform` times 2^24: i32 in [0, 2^24)."""
    import torch

    key = _mix(_mix(seed ^ i32_scalar(_SEED_SALT)) + step)
    index = torch.arange(offset, offset + _numel(shape), dtype=torch.int32).reshape(tuple(shape))
    return shift_right(_mix(_mix(index ^ key) + key), 8)


def _below(counts: Any, probability: float) -> Any:
    """`uniform < probability` in exact arithmetic, as an i32 comparison: a float one is done in
    f32 by PyTorch and in f64 by torch-mlir's `aten.lt.Scalar`, which differ where the draw is
    f32(probability) (0.9's f32 is below 0.9)."""
    return counts < i32_scalar(min(max(math.ceil(probability * _UNIT), 0), _UNIT))


def _numel(shape: Any) -> int:
    count = 1
    for size in shape:
        count *= int(size)
    return count


def _draw(op: str, offset: int, seed: Any, step: Any, args: tuple, kwargs: dict) -> Any:
    """What random op `op` (one of RANDOM_OPS) returns for `args`, drawing from `offset`; an
    in-place one (`bernoulli_`, `uniform_`) stays in place: functionalization then sees every
    alias of its tensor change."""
    result = _drawn_value(op, offset, seed, step, args, kwargs)
    return args[0].copy_(result) if _in_place(op) else result


def _drawn_value(op: str, offset: int, seed: Any, step: Any, args: tuple, kwargs: dict) -> Any:
    import torch

    if op == "aten.rand.default":
        dtype = kwargs.get("dtype") or torch.get_default_dtype()
        return uniform(seed, step, offset, args[0]).to(dtype)
    source = args[0]
    counts = uniform_counts(seed, step, offset, source.shape)
    if op in ("aten.bernoulli.p", "aten.bernoulli_.float"):
        probability = args[1] if len(args) > 1 else kwargs.get("p", 0.5)
        return _below(counts, probability).to(source.dtype)
    if op == "aten.native_dropout.default":  # torch's decomposition; the mask drawn as `dropout`'s `bernoulli_(1 - p)`
        p, train = args[1], args[2]
        if not train or p == 0:
            return source.clone(), torch.ones_like(source, dtype=torch.bool)
        keep = _below(counts, 1 - p)
        return keep * source * float(1.0 / (1.0 - p)), keep
    u = counts.to(torch.float32) * (1.0 / _UNIT)
    if op in ("aten.bernoulli.default", "aten.bernoulli_.Tensor"):
        probability = source if op == "aten.bernoulli.default" else args[1]
        return (u < probability.to(torch.float32)).to(source.dtype)
    if op == "aten.rand_like.default":
        return u.to(kwargs.get("dtype") or source.dtype)
    low, high = (list(args[1:]) + [kwargs.get("from", 0.0), kwargs.get("to", 1.0)][len(args) - 1 :])[:2]  # uniform
    return (low + (high - low) * u).to(source.dtype)


def _drawn(op: str, args: tuple) -> int:
    return _numel(args[0] if op == "aten.rand.default" else args[0].shape)


def rewrite_random_ops(graph: Any, seed: Any, step: Any) -> int:
    """Each random op of `graph` (a make_fx graph, before functionalization) computed by
    `uniform` from the nodes `seed` and `step`; how many. Other random ops raise IpuError
    naming them."""
    offset, count = 0, 0
    for node in list(graph.graph.nodes):
        if node.op != "call_function":
            continue
        name = str(node.target)
        if name.startswith(_REFUSED_PREFIXES):
            raise IpuError(
                f"training with random op {name}{_called_at(node)} is not supported on the device"
                " (dropout, bernoulli, rand, rand_like and uniform are): remove it or compute it outside the model"
            )
        if name not in RANDOM_OPS:
            continue
        args = tuple(argument.meta["val"] if hasattr(argument, "meta") else argument for argument in node.args)
        drawn = _drawn(name, args)
        node.args, node.kwargs = (name, offset, seed, step, node.args, node.kwargs), {}
        node.target = _draw
        offset, count = offset + drawn, count + 1
    if offset >= 1 << 31:
        raise IpuError(f"a training step draws {offset:,} random numbers: more than the generator's 2^31 a step")
    graph.recompile()
    return count


def _called_at(node: Any) -> str:
    """Where the model called `node`'s op: the layer joint.py marked it with, or the forward."""
    layer = (node.meta.get("custom") or {}).get("layer")
    return f" (in layer {layer})" if layer else " (in the model's forward)"


def _in_place(op: str) -> bool:
    return op.split(".")[1].endswith("_")


@contextlib.contextmanager
def same_random_ops(seed: int, step: int) -> Iterator[None]:
    """PyTorch's eager random ops drawing what the device's micro-batch `step` draws with
    `seed`: the reference loop's forward of that micro-batch runs inside it. They draw in call
    order, as the step's trace does; an in-place one writes its draw into its tensor.
    Scaled-dot-product attention runs in its math form, whose dropout is `bernoulli_` (as in
    the joint step), not the CPU flash kernel's own generator."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    with sdpa_kernel([SDPBackend.MATH]), _eager_mode(seed, step):
        yield


def _eager_mode(seed: int, step: int) -> Any:
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    class SameRandomOps(TorchDispatchMode):
        def __init__(self) -> None:
            super().__init__()
            self.offset = 0
            self.seed, self.step = torch.tensor(seed, dtype=torch.int32), torch.tensor(step, dtype=torch.int32)

        def __torch_dispatch__(self, func: Any, types: Any, args: tuple = (), kwargs: dict | None = None) -> Any:
            name, kwargs = str(func), kwargs or {}
            if name.startswith(_REFUSED_PREFIXES):
                raise IpuError(f"random op {name} has no device generator")
            if name not in RANDOM_OPS:
                return func(*args, **kwargs)
            drawn = _drawn(name, args)
            result = _draw(name, self.offset, self.seed, self.step, args, kwargs)
            self.offset += drawn
            return result

    return SameRandomOps()
