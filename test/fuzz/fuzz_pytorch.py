"""The PyTorch-level fuzzer: random small `nn.Module`s through the PyTorch front end, checked
against PyTorch eager.

    python test/fuzz/fuzz_pytorch.py --seeds 200 --start 0       # or `make fuzz-torch`
    python test/fuzz/fuzz_pytorch.py --seed 17 --show             # one case: its model and verdict

Each seed is a case: an inference model (a chain of layers drawn from `LAYERS` by the shape at
hand, some side outputs; one seed in 8 with NaN, +-inf, -0.0, huge or subnormal elements in
its input, drawn after the model so that a seed's model stays the one it was) through
`frontends.torch.compile`, or a training model (a few layers,
a loss, an optimizer, deviceIterations / gradientAccumulation, frozen parameters, parameter
groups, at times an lr scheduler stepped between calls; one seed in 8 with such odd values in one
of its two batches) through `trainingModel`, its outputs and its parameters after two calls
against PyTorch's own loop. What was added after seed 2251 (`EXTRA_LAYERS`, mask inputs, dict
and list outputs, schedulers) is drawn from a stream of its own: older seeds keep their models.
From seed 2782 (`WIDENED_FROM`) a training case may also draw torch_training.py's wider
vocabulary from a third stream: inference-only ops and more losses in the chain, odd optimizer
settings (LAMB, maximize, lr 0, dampening; amsgrad and RMSprop refused), channels_last or
non-contiguous batches, f16 / bf16 training checked at `torch_training.PRECISION_RTOL`.
Outcomes: ok, refused (an `IpuError`: a clean one-line message), wrong (a mismatch), crash
(any other exception; a worker that dies is restarted after the seed it died on).

Tolerances: an inference output element passes within 1e-4 of the output's largest magnitude
of PyTorch's f32 result, or within that plus twice PyTorch's own largest f32-f64 difference in
the tensor of its f64 result (rounding alone moves PyTorch's f32 that far: LayerNorm over nearly
equal values, seed 529, as tools/train.py's rule after several steps); non-finite elements must
match exactly, integer outputs exactly, except in a tensor where PyTorch's own f32 result breaks
down against f64 (a normalisation's statistic overflowing on +-3e38): there our NaN, or the
f64 value, passes and is counted (`_overflow_excused`). Training: the rule of test/python/test_training.py
(rtol 1e-4 of each tensor's largest magnitude), with the same f64 widening; under Adam/AdamW, elements
whose gradient PyTorch's own f32 loop gets to no better than 1e-3 at some step, or whose exact
gradient is zero at every step while ours (read from our Adam state) stayed within 2^-20 of the
largest gradient (f32 noise), are left out and counted (`_rounding_decides`: Adam's step is then
decided by rounding noise), and with them the buffers (BatchNorm's running statistics are
computed from them). Every micro-batch's outputs (the loss among them; `OutputMode.All`) are
checked as inference's; a call where they pass only by `_overflow_excused` (PyTorch's f32 forward
broke down: seed 1891, a one-element LayerNorm of -3e36 NaN in ATen's f32, 0 in f64 and ours)
ends the check, the parameters compared as they were after the call before it: past that, which
side of an f32 breakdown each sign or step took decides them, and PyTorch's loop is no reference.
"""

from __future__ import annotations

import argparse
import copy
import json
import math
import os
import random
import subprocess
import sys
import time
import traceback
import warnings

import torch
from torch import nn
from torch_layers import EXTRA_LAYERS, LAYERS, LOSSES, Chain, Layer, linear, training_layers
from torch_training import PRECISION_RTOL, mixed, optimizer_class, widened

RTOL = 1e-4
# Seed 760: a shift before log_softmax has the exact gradient 0 (ATen's g - exp(out) * sum(g)
# summed over the classes); PyTorch's f32 sum lands on 0 by luck, ours (one exp an ulp lower:
# numpy's f32 exp) on -1.2e-7 against gradients of 0.77, and AdamW makes that a 0.05 step. An
# element whose f64 gradient is zero at every step (below EXACT_ZERO of the step's largest) is
# left out only if our own gradient there (from our Adam state) stayed below F32_NOISE of the
# largest (8 ulps: a sum of a few terms that size rounds that far); a wrong nonzero gradient
# (seed 413's, under Adam) is still caught.
EXACT_ZERO, F32_NOISE = 2.0**-40, 2.0**-20
TARGETS = ("tiny", "gc2")
WIDENED_FROM = 2782  # the first seed whose training case may draw torch_training.py's choices
MIXED_FROM = 3163  # and its `mixed` ones (autocast, master weights)


def make_inference(rng: random.Random, odd_values: bool | None = None, extra: random.Random | None = None) -> tuple[nn.Module, tuple, str]:
    """(model, inputs, description): a chain of 2-6 layers on a random input (with odd values
    in it: `_odd_values`), then at times (`extra`, a stream of its own: the seeds run before keep
    their chains) a layer of `EXTRA_LAYERS`, a bool or uint8 mask input, a dict or list output."""
    if rng.random() < 0.15:  # token ids first: an Embedding
        batch, length, vocab, width = rng.choice([1, 2, 3]), rng.randint(1, 6), rng.randint(3, 12), rng.choice([4, 6, 8])
        padding = rng.choice([None, 0, vocab - 1])
        ids = torch.randint(0, vocab, (batch, length), generator=_gen(rng))
        head = Layer(f"Embedding({vocab}, {width}, padding_idx={padding})", nn.Embedding(vocab, width, padding_idx=padding))
        layers, shape, inputs = [head], (batch, length, width), (ids,)
    else:
        rank = rng.choice([1, 2, 3, 3, 4, 4, 4]) if rng.random() > 0.03 else 0
        shape = _shape(rng, rank)
        x = _values(rng, shape)
        layers, inputs = [], (x,)
    for _ in range(rng.randint(2, 6)):
        layer = _draw(rng, shape, LAYERS)
        if layer is None:
            break
        layers.append(layer)
        shape = layer.shape
    if extra is not None and extra.random() < 0.4:
        layer = _draw(extra, shape, EXTRA_LAYERS)
        layers += [layer] if layer is not None else []
        shape = layers[-1].shape if layers else shape
    model: nn.Module = Chain(layers).eval()
    _randomize_buffers(model, rng)
    inputs = tuple(_odd_layout(rng, value) for value in inputs)
    untied = any(word in layer.name for layer in layers for word in ("topk(", "sort(", "cummax(", "cummin("))  # see _odd_values
    inputs, odd = _odd_values(rng.getrandbits(31) if odd_values is None else odd_values, inputs, untied)
    text = " -> ".join(layer.name for layer in layers)
    if extra is not None and extra.random() < 0.25:
        model, inputs, text = _wrapped(extra, model, inputs, shape, text)
    return model, inputs, text + f"  on {_describe(inputs)}{odd}"


class _Wrapped(nn.Module):
    """The chain with a mask input (bool: masked_fill; uint8: a product) and its outputs as a
    dict or a list."""

    def __init__(self, chain: nn.Module, mask: str, outputs: str) -> None:
        super().__init__()
        self.chain, self.mask, self.outputs = chain, mask, outputs

    def forward(self, x, *mask):  # noqa: ANN001, ANN202
        results = _as_tuple(self.chain(x))
        first = results[0]
        if self.mask == "bool":
            first = first.masked_fill(mask[0], -1.5)
        elif self.mask == "uint8":
            first = first * mask[0]
        results = (first, *results[1:])
        if self.outputs == "dict":
            return {f"out{index}": value for index, value in enumerate(results)}
        return list(results) if self.outputs == "list" else results


def _wrapped(extra: random.Random, chain: nn.Module, inputs: tuple, shape: tuple, text: str) -> tuple[nn.Module, tuple, str]:
    mask, outputs = extra.choice(["none", "bool", "uint8"]), extra.choice(["tuple", "dict", "list"])
    if mask != "none":
        flags = torch.rand(shape, generator=_gen(extra)) < 0.5
        inputs = (*inputs, flags if mask == "bool" else flags.to(torch.uint8))
    return _Wrapped(chain, mask, outputs).eval(), inputs, f"{text} -> {mask} mask input, {outputs} outputs"


ODD_VALUES = (float("nan"), float("inf"), float("-inf"), -0.0, 3e38, -3e38, 1e-40, -1e-42)


def _odd_values(draw: int, inputs: tuple, untied: bool = False, always: bool = False) -> tuple[tuple, str]:
    """For some seeds (one in 8, or `draw` True, or `always`), a few elements of each float input
    made NaN, +-inf, -0.0, huge or subnormal: the values a model meets from a bad batch, checked
    as any other (non-finite elements must match PyTorch's exactly). `untied`, for topk / sort:
    no NaN or +-inf and each odd value at most once, since the order of equal values is ATen's
    choice (seed 5037's [1, 3, 2] of equal infinities where we give [1, 2, 3]; seed 1836's two
    -3e38 in one column, indices [2, 1] where we give [1, 2])."""
    odd = random.Random(draw)
    if draw is not True and odd.random() >= 1 / 8 and not always:
        return inputs, ""
    values = [value for value in ODD_VALUES if not untied or math.isfinite(value)]
    changed, any_float = [], False
    for value in inputs:
        if value.is_floating_point() and value.numel():
            any_float = True
            value = value.clone()  # the same layout (channels_last, transposed)
            count = odd.randint(1, max(1, value.numel() // 4))
            picks = odd.sample(values, min(count, len(values))) if untied else [odd.choice(values) for _ in range(count)]
            for pick in picks:
                value[tuple(odd.randrange(size) for size in value.shape)] = pick
        changed.append(value)
    return tuple(changed), " with odd values" if any_float else ""


def make_training(
    rng: random.Random, widen: random.Random | None = None, more: random.Random | None = None
) -> tuple[nn.Module, tuple, str, dict]:
    """(model with its loss, batches, description, options): a few layers, a loss, an optimizer;
    then at times (`widen`, a stream of its own) torch_training.py's wider vocabulary."""
    per_call_options = {"device_iterations": rng.choice([1, 1, 2]), "accumulation": rng.choice([1, 1, 2])}
    micro = rng.choice([1, 2, 3])
    rank = rng.choice([2, 3, 4])
    start = shape = (micro, *_shape(rng, rank)[1:])
    layers = []
    for _ in range(rng.randint(1, 4)):
        layer = _draw(rng, shape, training_layers())
        if layer is None:
            break
        layers.append(layer)
        shape = layer.shape
    if not any(True for layer in layers for _ in layer.parameters()):
        layers.append(linear(rng, shape))  # something to train
        shape = layers[-1].shape
    loss = rng.choice(LOSSES)(rng, shape)
    model = loss.wrap(Chain(layers))
    per_call = per_call_options["device_iterations"] * per_call_options["accumulation"]
    batches = []
    for _ in range(2):
        x = _values(rng, (micro * per_call, *start[1:]), scaled=False)
        batches.append((x, loss.target(rng, micro * per_call)))
    names = [name for name, _ in model.named_parameters()]
    frozen = [name for name in names[:-1] if rng.random() < 0.15]  # never all of them
    for name, parameter in model.named_parameters():
        parameter.requires_grad_(name not in frozen)
    options = dict(per_call_options, optimizer=_optimizer_spec(rng), frozen=frozen)
    text = " -> ".join(layer.name for layer in layers) + f" -> {loss.name}; {options}"
    odd = random.Random(rng.getrandbits(31))  # drawn last: a seed's model and batches stay what they were
    if odd.random() < 1 / 8:  # a bad batch: NaN, +-inf, huge, -0.0, subnormal inputs (and float targets)
        bad = odd.randrange(2)
        batches[bad], text = _odd_values(odd.getrandbits(31), batches[bad], always=True)[0], f"{text} with odd values in batch {bad}"
    if len(start) == 3 and odd.random() < 0.2:  # token ids first: an Embedding, trained
        vocab, padding = odd.randint(3, 10), odd.choice([None, 0])
        head = Layer(f"Embedding({vocab}, {start[2]}, padding_idx={padding})", nn.Embedding(vocab, start[2], padding_idx=padding))
        model.chain.layers.insert(0, head)
        ids = torch.Generator().manual_seed(odd.getrandbits(31))
        batches = [(torch.randint(0, vocab, x.shape[:2], generator=ids), *rest) for x, *rest in batches]
        text = f"{head.name} -> {text}"
    if widen is not None:
        model, batches, text = widened(widen, model, batches, text, options, shape, micro)
    if more is not None:
        text += mixed(more, model, options, model.chain.layers[-1].shape, batches)
    return model, batches, text, options


def check_inference(model: nn.Module, inputs: tuple, target: str) -> tuple[str, str]:
    from ipu_mlir.frontends import torch as ipu_torch

    with torch.no_grad():
        structure = model(*inputs)
        exact = _as_tuple(copy.deepcopy(model).double()(*(_double(value) for value in inputs)))
    compiled = ipu_torch.compile(model, *inputs, target=target, use_cache=False)
    returned = compiled(*inputs)
    if _structure(returned) != _structure(structure):
        return "wrong", f"outputs as {_structure(returned)}, PyTorch's as {_structure(structure)}"
    expected, got = _as_tuple(structure), _as_tuple(returned)
    if len(got) != len(expected):
        return "wrong", f"{len(got)} outputs, PyTorch {len(expected)}"
    excused = 0
    for index, (ours, theirs, f64) in enumerate(zip(got, expected, exact)):
        problem, flagged = _compare(ours, theirs, f64)
        if problem:
            return "wrong", f"output #{index}: {problem}"
        excused += flagged
    return "ok", f"{excused} elements NaN or exact where PyTorch's f32 breaks down" if excused else ""


def check_training(model: nn.Module, batches: list, options: dict, target: str) -> tuple[str, str]:
    from ipu_mlir.frontends import torch as ipu_torch

    # f16 / bf16: ours trains the model in that type; PyTorch's loops (f32, f64) start from the same
    # rounded weights and batches (its own f16 CPU backward crashes: seed 3035's GroupNorm)
    low = options.get("precision") or torch.float32
    model = model.to(low)
    batches = [tuple(value.to(low) if value.is_floating_point() else value for value in batch) for batch in batches]
    rtol = PRECISION_RTOL[torch.bfloat16] if options.get("autocast") else RTOL if low == torch.float32 else PRECISION_RTOL[low]
    reference, exact = copy.deepcopy(model).float(), copy.deepcopy(model).double()
    make = _optimizer_maker(options["optimizer"])
    opts = ipu_torch.Options().target(target).deviceIterations(options["device_iterations"])
    opts.Training.gradientAccumulation(options["accumulation"])
    if options.get("master_weights"):
        opts.Precision.setMasterWeights(True)
    if options.get("loss_scaling"):
        opts.Training.setLossScaling(options["loss_scaling"])
    opts.outputMode(ipu_torch.OutputMode.All)  # every micro-batch's outputs, checked as inference's
    ours_optimizer = make(model)
    trained = ipu_torch.trainingModel(model, options=opts, optimizer=ours_optimizer)
    per_call, accumulation = opts.micro_batches_per_call, options["accumulation"]
    loops = [(reference, make(reference), torch.float32), (exact, make(exact), torch.float64)]
    schedule = _scheduler_maker(options.get("scheduler"))
    schedulers = [schedule(optimizer) for optimizer in (ours_optimizer, *(optimizer for _, optimizer, _ in loops))]
    grads: dict = {torch.float32: [], torch.float64: []}  # each update's gradients
    checked, noisy = None, {}  # the last call checked: (call, ours, PyTorch's f32, f64 state dicts, left-out elements)
    for call, batch in enumerate(batches):
        got = _as_tuple(trained(*batch))
        micro = [tuple(value.chunk(per_call)[index] for value in batch) for index in range(per_call)]
        outputs: dict = {torch.float32: [], torch.float64: []}
        for net, optimizer, dtype in loops:
            for step in range(0, per_call, accumulation):
                optimizer.zero_grad()
                for inputs in micro[step : step + accumulation]:
                    inputs = tuple(value.to(dtype) if value.is_floating_point() else value for value in inputs)
                    result = net(*inputs)
                    outputs[dtype].append(tuple(value.detach() for value in _as_tuple(result)))
                    (_loss_of(result) / accumulation).backward()
                grads[dtype].append({name: p.grad.double().clone() for name, p in net.named_parameters() if p.grad is not None})
                optimizer.step()
        for scheduler in schedulers:  # between calls, as a user's loop over epochs does
            if scheduler is not None:
                scheduler.step()
        problem, excused = _outputs_problem(got, outputs, rtol)
        if problem and not any(mask.any() for mask in noisy.values()):  # else weights differ where rounding decided (seed 760)
            return "wrong", f"call {call} {problem}"
        if excused:  # PyTorch's f32 forward broke down (seed 1891): its updates from here on are no reference
            break
        trained.copyWeightsToHost()
        if options["optimizer"]["kind"] != "SGD":
            noisy = _rounding_decides(grads[torch.float32], grads[torch.float64], _our_gradient_sizes(model, ours_optimizer))
        checked = (call, *(copy.deepcopy(net.state_dict()) for net in (model, reference, exact)), noisy)
    broke = f"PyTorch's f32 forward breaks down in call {call} ({excused} elements NaN or exact where it is not)" if excused else ""
    if checked is None:
        return "ok", f"{broke}; no update checked"
    call, ours, theirs, f64, noisy = checked
    left_out = sum(int(mask.sum()) for mask in noisy.values())
    for name in theirs:
        if left_out and name not in noisy:  # a buffer (running statistics) computed from those elements
            continue
        keep = ~noisy[name] if name in noisy else torch.ones(theirs[name].shape, dtype=torch.bool)
        problem, _ = _compare(ours[name][keep], theirs[name][keep], f64[name][keep], rtol)
        if problem:
            return "wrong", f"{name} after call {call}: {problem}"
    notes = [broke + f"; parameters checked after call {call}" if broke else ""]
    notes.append(f"{left_out} elements whose f32 gradient rounding decides left out, and the buffers" if left_out else "")
    return "ok", "; ".join(note for note in notes if note)


def _outputs_problem(got: tuple, outputs: dict, rtol: float) -> tuple[str, int]:
    """(problem, excused) of our outputs of a call against PyTorch's micro-batch outputs (f32, f64)."""
    excused = 0
    for index, ours in enumerate(got):
        theirs, f64 = (_joined([output[index] for output in outputs[dtype]]) for dtype in (torch.float32, torch.float64))
        problem, flagged = _compare(ours, theirs, f64, rtol)
        if problem:
            return f"output #{index}: {problem}", 0
        excused += flagged
    return "", excused


def _joined(outputs: list) -> torch.Tensor:
    """One output's micro-batch values as `OutputMode.All` returns them: one micro-batch's as it
    is, more of a scalar stacked, of others concatenated along dimension 0."""
    if len(outputs) == 1:
        return outputs[0]
    return torch.stack(outputs) if outputs[0].dim() == 0 else torch.cat(outputs)


def _rounding_decides(f32: list[dict], f64: list[dict], ours: dict) -> dict:
    """Per parameter, the elements whose gradient PyTorch's own f32 loop has to no better than
    1e-3 at some step (the difference of nearly equal terms: a gradient that is zero in exact
    arithmetic, or near it), and those whose exact gradient is zero at every step while our
    gradient `ours` (RMS) is not but stayed at f32 noise. Adam divides a gradient by its own magnitude, so
    there the noise of the rounding decides the step, on our side as on PyTorch's: left out,
    and counted."""
    noisy: dict = {}
    largest = [max((float(grad.abs().max()) for grad in exact.values() if grad.numel()), default=0.0) for exact in f64]
    for theirs, exact in zip(f32, f64):
        for name, grad in theirs.items():
            bad = (grad - exact[name]).abs() > 1e-3 * exact[name].abs()
            noisy[name] = noisy.get(name, torch.zeros_like(bad)) | bad
    for name in noisy:
        zero = torch.stack([exact[name].abs() <= EXACT_ZERO * scale for exact, scale in zip(f64, largest)]).all(0)
        noisy[name] |= zero & (ours[name] > 0) & (ours[name] <= F32_NOISE * max(largest, default=0.0))
    return noisy


def _our_gradient_sizes(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict:
    """Per parameter the RMS of our gradients over the steps, from our Adam state (the device's,
    read back into `optimizer`): exp_avg_sq over its bias correction."""
    beta2 = {id(param): group["betas"][1] for group in optimizer.param_groups for param in group["params"]}
    sizes = {}
    for name, param in model.named_parameters():
        state = optimizer.state.get(param, {})
        if "exp_avg_sq" in state:
            correction = 1 - beta2[id(param)] ** float(state["step"])
            sizes[name] = (state["exp_avg_sq"].double() / correction).sqrt()
        else:
            sizes[name] = torch.full(param.shape, float("inf"))
    return sizes


def run_case(seed: int, show: bool = False) -> dict:
    """One seed's verdict: {seed, outcome, kind, model, detail}."""
    from ipu_mlir.target.diagnostics import IpuError

    began = time.perf_counter()
    rng = random.Random(seed)
    torch.manual_seed(seed)
    target = rng.choice(TARGETS)
    kind = "training" if rng.random() < 0.3 else "inference"
    record = {"seed": seed, "kind": kind, "target": target, "model": "", "outcome": "", "detail": ""}
    try:
        if kind == "inference":
            model, inputs, record["model"] = make_inference(rng, extra=random.Random(f"extra-{seed}"))
        else:
            widen = random.Random(f"train-{seed}") if seed >= WIDENED_FROM else None
            more = random.Random(f"train-more-{seed}") if seed >= MIXED_FROM else None
            model, batches, record["model"], options = make_training(rng, widen, more)
            options["scheduler"] = _scheduler_spec(random.Random(f"extra-{seed}"))
            record["model"] += f"; scheduler {options['scheduler']}" if options["scheduler"] else ""
    except Exception as error:  # the generator's own bug, never the compiler's
        record.update(outcome="generator", detail=f"{type(error).__name__}: {error}")
        return record
    if show:
        print(record["model"], file=sys.stderr)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if kind == "inference":
                outcome, detail = check_inference(model, inputs, target)
            else:
                outcome, detail = check_training(model, batches, options, target)
    except IpuError as error:
        outcome, detail = "refused", str(error.message).replace("\n", " |")
    except Exception as error:
        outcome = "crash"
        detail = f"{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
        if show:
            traceback.print_exc()
    record.update(outcome=outcome, detail=detail[:400], seconds=round(time.perf_counter() - began, 1))
    return record


def _compare(ours: torch.Tensor, theirs: torch.Tensor, f64: torch.Tensor, rtol: float = RTOL) -> tuple[str, int]:
    """('', excused) when `ours` matches PyTorch's `theirs` (f32; f16 / bf16 at `rtol`) under the
    module docstring's rule, `excused` counting the elements `_overflow_excused` lets pass; else (problem, 0)."""
    ours = torch.as_tensor(ours)
    if tuple(ours.shape) != tuple(theirs.shape):
        return f"shape {tuple(ours.shape)}, PyTorch {tuple(theirs.shape)}", 0
    if not theirs.is_floating_point():  # indices, integers, booleans: exactly
        mismatch = ours.to(torch.int64).ne(theirs.to(torch.int64))
        return (f"{int(mismatch.sum())} of {theirs.numel()} integers differ" if mismatch.any() else ""), 0
    ours, theirs, f64 = ours.double(), theirs.double(), f64.double()
    excused = _overflow_excused(ours, theirs, f64)
    problem = _compare_floats(ours[~excused], theirs[~excused], f64[~excused], rtol)
    return problem, 0 if problem else int(excused.sum())


def _overflow_excused(ours: torch.Tensor, theirs: torch.Tensor, f64: torch.Tensor) -> torch.Tensor:
    """Where PyTorch's own f32 result breaks down against f64 (somewhere in the tensor: an
    element non-finite where the f64 one is finite, NaN where it is not, or off it by over a
    tenth of the largest), our elements that are NaN (the breakdown flagged) or equal to the
    f64 result (within RTOL, or the same infinity): PyTorch is no reference there. Seed 1454
    (before interpolation was fixed): a GroupNorm over sums of 1e38s, PyTorch 0 (silently
    wrong: f64 -0.209), ours NaN. Seed 1802: GELU(+inf) is NaN in ATen's vectorized f32 kernel,
    +inf in its scalar one, in f64 and ours. A silent wrong number of ours (seed 1370 before
    LayerNorm's fix: the bias where PyTorch gives NaN) is still caught."""
    finite = torch.isfinite(f64)
    scale = max(float(f64[finite].abs().max()), 1e-30) if finite.any() else 1e-30
    off = (theirs - f64).abs() > 0.1 * scale
    broken = (finite & ~torch.isfinite(theirs)) | (torch.isnan(theirs) & ~torch.isnan(f64)) | (finite & off)
    if not broken.any():
        return torch.zeros(ours.shape, dtype=torch.bool)
    flagged = torch.isnan(ours) & ~torch.isnan(theirs)
    exact = (finite & ((ours - f64).abs() <= RTOL * scale)) | (~finite & (ours == f64))
    return flagged | (~torch.isfinite(theirs) & exact)


def _compare_floats(ours: torch.Tensor, theirs: torch.Tensor, f64: torch.Tensor, rtol: float) -> str:
    finite = torch.isfinite(theirs)
    same_special = (ours == theirs) | (torch.isnan(ours) & torch.isnan(theirs))
    if (~finite & ~same_special).any():
        return f"{int((~finite & ~same_special).sum())} non-finite elements differ"
    if (finite & ~torch.isfinite(ours)).any():
        return f"{int((finite & ~torch.isfinite(ours)).sum())} elements non-finite where PyTorch's are finite"
    if not finite.any():
        return ""
    ours, theirs, f64 = ours[finite], theirs[finite], f64[finite]
    scale = max(float(theirs.abs().max()), 1e-30)
    error = (ours - theirs).abs()
    bad = (error > rtol * scale) & ((ours - f64).abs() > rtol * scale + 2 * float((theirs - f64).abs().max()))
    if bad.any():
        return f"{int(bad.sum())} of {theirs.numel()} elements off, max rel error {float(error.max()) / scale:.3g}"
    return ""


def _draw(rng: random.Random, shape: tuple, layers: list) -> Layer | None:
    for _ in range(20):
        layer = rng.choice(layers)(rng, shape)
        if layer is not None:
            return layer
    return None


def _shape(rng: random.Random, rank: int) -> tuple:
    if rank == 0:
        return ()
    batch = rng.choice([1, 1, 2, 3])
    sizes = {1: [], 2: [rng.choice([1, 3, 4, 5, 8])], 3: [rng.choice([2, 3, 4]), rng.choice([1, 5, 6, 8])]}
    rest = sizes.get(rank) or [rng.choice([1, 2, 3, 4]), rng.randint(3, 7), rng.randint(3, 7)]
    return (batch, *rest)


def _values(rng: random.Random, shape: tuple, scaled: bool = True) -> torch.Tensor:
    """Normal values, at times of a large or small magnitude."""
    x = torch.randn(shape, generator=_gen(rng))
    return x * rng.choice([1.0, 1.0, 1.0, 1e3, 1e-3, 30.0]) if scaled else x


def _odd_layout(rng: random.Random, value: torch.Tensor) -> torch.Tensor:
    """The same values, sometimes channels_last or a non-contiguous view."""
    if value.dim() == 4 and rng.random() < 0.2:
        return value.contiguous(memory_format=torch.channels_last)
    if value.dim() >= 2 and rng.random() < 0.2:
        return value.transpose(0, -1).contiguous().transpose(0, -1)
    return value


def _randomize_buffers(model: nn.Module, rng: random.Random) -> None:
    """BatchNorm's running statistics made not trivially 0 and 1."""
    generator = _gen(rng)
    for module in model.modules():
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and module.running_mean is not None:
            module.running_mean.copy_(torch.randn(module.running_mean.shape, generator=generator) * 0.5)
            module.running_var.copy_(torch.rand(module.running_var.shape, generator=generator) + 0.5)


def _optimizer_spec(rng: random.Random) -> dict:
    kind = rng.choice(["SGD", "SGD", "Adam", "AdamW"])
    spec = {"kind": kind, "lr": rng.choice([0.01, 0.05]), "groups": rng.random() < 0.25}
    if kind == "SGD":
        momentum = rng.choice([0.0, 0.9])
        spec.update(momentum=momentum, nesterov=momentum > 0 and rng.random() < 0.5, weight_decay=rng.choice([0.0, 0.01]))
    else:
        spec.update(weight_decay=rng.choice([0.0, 0.01]))
    return spec


def _optimizer_maker(spec: dict):  # noqa: ANN202
    def make(model: nn.Module) -> torch.optim.Optimizer:
        extra = {key: value for key, value in spec.items() if key not in ("kind", "lr", "groups")}
        parameters = [p for p in model.parameters() if p.requires_grad]
        if spec["groups"] and len(parameters) > 1:  # two groups, the second at half the lr and no decay
            half = len(parameters) // 2
            parameters = [{"params": parameters[:half]}, {"params": parameters[half:], "lr": spec["lr"] / 2, "weight_decay": 0.0}]
        return optimizer_class(spec["kind"])(parameters, lr=spec["lr"], **extra)

    return make


def _scheduler_spec(extra: random.Random) -> dict | None:
    """At times a learning-rate scheduler stepped between calls (trainingModel writes the new lr
    to the device before the next call)."""
    if extra.random() >= 0.3:
        return None
    kind = extra.choice(["StepLR", "ExponentialLR", "MultiStepLR", "CosineAnnealingLR", "LinearLR"])
    arguments = {
        "StepLR": {"step_size": 1, "gamma": extra.choice([0.5, 0.1])},
        "ExponentialLR": {"gamma": 0.8},
        "MultiStepLR": {"milestones": [1], "gamma": 0.3},
        "CosineAnnealingLR": {"T_max": 2},
        "LinearLR": {"start_factor": 0.5, "total_iters": 2},
    }[kind]
    return {"kind": kind, **arguments}


def _scheduler_maker(spec: dict | None):  # noqa: ANN202
    def make(optimizer: torch.optim.Optimizer):  # noqa: ANN202
        if spec is None:
            return None
        arguments = {key: value for key, value in spec.items() if key != "kind"}
        return getattr(torch.optim.lr_scheduler, spec["kind"])(optimizer, **arguments)

    return make


def _loss_of(result):  # noqa: ANN001, ANN202
    return result[-1] if isinstance(result, tuple) else result


def _gen(rng: random.Random) -> torch.Generator:
    return torch.Generator().manual_seed(rng.getrandbits(31))


def _as_tuple(value) -> tuple:  # noqa: ANN001
    if isinstance(value, dict):
        return tuple(value.values())
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def _structure(value) -> str:  # noqa: ANN001
    """A result's container: a dict's keys, a sequence (tuple or list) or one tensor."""
    if isinstance(value, dict):
        return f"dict {list(value)}"
    return "sequence" if isinstance(value, (tuple, list)) else "tensor"


def _double(value: torch.Tensor) -> torch.Tensor:
    return value.double() if value.is_floating_point() else value


def _describe(inputs: tuple) -> str:
    return ", ".join(f"{tuple(value.shape)} {str(value.dtype).removeprefix('torch.')}" for value in inputs)


def worker(start: int, count: int) -> None:
    """Runs seeds [start, start + count), one JSON line each on stdout."""
    for seed in range(start, start + count):
        print(json.dumps(run_case(seed)), flush=True)


def drive(start: int, count: int, out_dir: str) -> dict:
    """Runs the seeds in a worker process, restarted after a seed that kills it; writes every
    verdict to out_dir/results.jsonl and returns the counts."""
    os.makedirs(out_dir, exist_ok=True)
    counts: dict[str, int] = {}
    seed, end = start, start + count
    with open(os.path.join(out_dir, "results.jsonl"), "a") as log:
        while seed < end:
            command = [sys.executable, __file__, "--worker", "--start", str(seed), "--seeds", str(end - seed)]
            process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            for line in process.stdout:
                record = json.loads(line)
                _tally(record, counts, log)
                seed = record["seed"] + 1
            if process.wait() != 0 and seed < end:
                _tally({"seed": seed, "outcome": "crash", "detail": f"worker died (exit {process.returncode})"}, counts, log)
                seed += 1
    return counts


def _tally(record: dict, counts: dict, log) -> None:  # noqa: ANN001
    counts[record["outcome"]] = counts.get(record["outcome"], 0) + 1
    log.write(json.dumps(record) + "\n")
    log.flush()
    if record["outcome"] not in ("ok",):
        print(f"seed {record['seed']}: {record['outcome']}: {record.get('model', '')} :: {record['detail'][:300]}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=100)
    parser.add_argument("--start", type=int, default=0)
    parser.add_argument("--seed", type=int, help="run one seed here and show it")
    parser.add_argument("--show", action="store_true")
    parser.add_argument("--worker", action="store_true")
    parser.add_argument("--out", default="build/fuzz-torch")
    args = parser.parse_args()
    if args.seed is not None:
        record = run_case(args.seed, show=True)
        print(json.dumps(record, indent=1))
        return 0 if record["outcome"] in ("ok", "refused") else 1
    if args.worker:
        worker(args.start, args.seeds)
        return 0
    counts = drive(args.start, args.seeds, args.out)
    print(" ".join(f"{name} {count}" for name, count in sorted(counts.items())))
    return 0 if set(counts) <= {"ok", "refused"} else 1


if __name__ == "__main__":
    sys.exit(main())
