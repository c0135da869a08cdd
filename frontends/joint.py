"""The joint graph of one training step: forward, loss, backward and update as one L0 program.

    step = build_step(model, optimizer, rule, micro_batch, accumulation=1, reduction="mean")
    step.module        # func.func @main, in generic form, with `ipu.resident` attributes
    step.variables     # [Variable(name, initial value, updated)] in argument order

The step is a pure function of the device variables and one micro-batch, written with
`torch.func` (`functional_call`, `grad_and_value`) and the optimizer's update as tensor math
(frontends/optimizers.py), traced twice with `make_fx`:

1. with PyTorch's core ATen decompositions, SDPA forced to its math form (its CPU flash-attention
   backward has no torch-mlir import; the math form's backward is plain matmuls and softmax),
   and `native_batch_norm` decomposed: its schema does not mark the running statistics it
   updates in place, so functionalization cannot see that update; decomposed, the update is a
   `copy_` into the running-stat tensors; an adaptive average pool whose output does not
   divide its input becomes the means of its windows (torch-mlir's lowering of those
   sizes fails in the joint step);
2. functionalized (`torch.func.functionalize`): every in-place update (the `copy_`s,
   BatchNorm's `num_batches_tracked += 1`) becomes a value.

Between the two, the step's random ops (dropout's `bernoulli`, `rand`, ...) become
frontends/random_ops.py's generator, computed on the device from the variables `random:seed`
and `random:step` (dropped when the step draws nothing); the step advances `random:step`.

Then, when the model marks recomputation checkpoints (`recomputationCheckpoint`), the forward
activations between them are recomputed in the backward pass rather than kept
(frontends/recompute.py).

The result is imported by torch-mlir (`stateless_fx_import`, linalg-on-tensors), after
rewrites of ops its import refuses (`squeeze.dims`, `view_copy`: both become `aten.view` to
the node's own shape; `empty_permuted`, dropout's `empty_like`, becomes `aten.empty`). Between
the traces, three backward ops are rewritten as tensor math: adaptive average pooling's (no
torch-mlir lowering), a grouped convolution's (an invalid lowering) and max-pool's (a scatter
too large for a tile at full size): frontends/backward_rewrites.py.

The program's arguments are the device variables then the micro-batch; its results the loss,
the forward's other outputs, then each variable the step changes (`ipu.resident` on both
sides, as docs/training.md's contract says). A variable whose traced result is its own
argument (a frozen parameter, the learning rate, GPT-2's causal mask) has no result.

Gradient accumulation keeps the program one step long whatever the count: the gradients are
summed into `accum:grad:NAME` variables and a counter `accum:count`; the update is computed
on every micro-batch and kept (`where`) only on the last of each group, when the accumulators
are also reset. IR size does not grow with the count.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir
from mlir.dialects import scf, tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.frontends import api
from ipu_mlir.frontends.accumulation_loop import accumulated, accumulation_loop, cut_at_accumulations
from ipu_mlir.frontends.aten_rewrites import aten_rewrites
from ipu_mlir.frontends.backward_rewrites import (
    adaptive_pool_by_window_means,
    max_pool_backward_by_windows,
    rewrite_adaptive_pool_backward,
    rewrite_grouped_convolution_backward,
)
from ipu_mlir.frontends.mixed_precision import MixedPrecisionStep, to_numpy, to_torch
from ipu_mlir.frontends.optimizers import OptimizerRule, host_state, hyper_variable, steps_taken
from ipu_mlir.frontends.random_ops import rewrite_random_ops
from ipu_mlir.frontends.recompute import marking_checkpoints, recompute
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["RESIDENT_ATTR", "JointStep", "Variable", "build_step", "identity_loss", "split_result"]

RESIDENT_ATTR = "ipu.resident"
UNREDUCED_LOSS = "_ipu_unreduced_loss"  # a tensor attribute: identity_loss(reduction="none") made this loss
_RANDOM_VARIABLES = ("random:seed", "random:step")  # frontends/random_ops.py's generator: kept only if the step draws


@dataclass
class Variable:
    name: str  # param:fc1.weight, buffer:bn1.running_mean, opt:exp_avg:fc1.weight, hyper:lr, ...
    value: np.ndarray  # its value when the step was built
    updated: bool = False  # the step has a result for it


@dataclass
class JointStep:
    module: ir.Module  # L0: func.func @main with the ipu.resident attributes
    variables: list[Variable]  # the first arguments, in order
    batch: list[tuple[tuple[int, ...], np.dtype]]  # the streamed arguments after them
    outputs: int  # streamed results before the loss: the forward's outputs other than the loss
    output_structure: Any  # None: forward returned the loss; else the pytree spec of what it returned


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


def build_step(
    model: Any,
    optimizer: Any,
    rule: OptimizerRule,
    micro_batch: tuple,
    accumulation: int = 1,
    mean: bool = True,
    importer: type | None = None,
    seed: int = 0,
    replicas: int = 1,
    mixed: MixedPrecisionStep | None = None,
    pipelined: int = 0,
    bind: Callable[[list[Any]], tuple[tuple, dict]] | None = None,
) -> JointStep:
    """The joint step of `model` (in train mode) and `optimizer` on micro-batches like
    `micro_batch`, accumulating `accumulation` micro-batches' gradients (their mean, or their
    sum when not `mean`) before each update. `importer`: torch-mlir's FxImporter or a subclass
    (frontends.torch's names each op's location after its ATen op). `seed`: the random ops'
    (frontends/random_ops.py). `replicas` > 1: each gradient, before the update, goes through
    an `ipu.all_reduce` over the replicas (their mean, or sum when not `mean`: `_all_reduced`).
    `mixed`: the master weights, loss scaling and stochastic rounding of an f16 / bf16 model
    (frontends/mixed_precision.py). `pipelined` > 0 (PopTorch's PipelinedExecution): one run of
    the step takes that many micro-batches (`micro_batch` holds them all): one micro-batch's
    forward and backward traced, put in a loop over all but the last and kept for the last after
    it, its gradients summed (the mean, when `mean`) before one update
    (frontends/accumulation_loop.py); `accumulation` is then 1. The IR does not grow with them.
    `bind`: forward's (args, kwargs) from a micro-batch's tensors, its Python values bound as
    constants of the step (frontends/inputs.py `Signature.bind`); None: the tensors positional."""
    layout = _Layout(model, optimizer, rule, accumulation, seed, replicas, mixed)
    layout.pipelined, layout.bind = pipelined, bind
    batch = tuple(value.detach() for value in micro_batch)
    traced = _first_micro_batch(batch, pipelined) if pipelined else batch
    layout.unused = _unused_parameters(layout, batch)
    flat = [to_torch(np.array(variable.value)) for variable in layout.variables] + list(traced)
    names = [variable.name for variable in layout.variables]
    try:
        graph, draws = _trace(layout.step_function(mean), flat, [names.index(name) for name in _RANDOM_VARIABLES])
    except IpuError:
        raise
    except Exception as error:  # PyTorch's own refusal (torch.cond under torch.func's grad): one line
        first = str(error).strip().splitlines()[0] if str(error).strip() else "no message"
        at = _model_line(error)
        raise IpuError(f"cannot trace the training step of {type(model).__name__}{at}: {type(error).__name__}: {first}") from None
    if draws and pipelined:
        raise IpuError("a pipelined training step with random ops (dropout) is not supported: its micro-batches would draw alike")
    returns = layout.returns
    recompute(graph, len(batch))
    if not draws and not (mixed and mixed.precision.stochastic_rounding):
        _drop_variables(graph, layout, _RANDOM_VARIABLES, returns.outputs + 1)
    results = _fold_unchanged(graph, len(layout.variables), returns.outputs + 1)
    for variable, changed in zip(layout.variables, results):
        variable.updated = changed
    sums = cut_at_accumulations(graph)
    reduced = _cut_at_all_reduces(graph)
    module = _import(graph, importer)
    _all_reduced(module, reduced, replicas, "mean" if mean else "sum")
    if pipelined:
        accumulation_loop(module, sums, pipelined, range(len(layout.variables), len(layout.variables) + len(batch)))
    _mark_resident(module, [variable.name for variable in layout.variables], [v.name for v in layout.variables if v.updated])
    return JointStep(module, layout.variables, [(tuple(t.shape), _numpy_dtype(t)) for t in batch], returns.outputs, returns.structure)


def _first_micro_batch(batch: tuple, micro_batches: int) -> tuple:
    """The first of `micro_batches` micro-batches of `batch`: the pipelined step is traced for one."""
    for value in batch:
        if not value.dim() or value.shape[0] % micro_batches:
            raise IpuError(
                f"a pipelined training step's input of shape {tuple(value.shape)} does not split into {micro_batches} micro-batches"
            )
    return tuple(value[: value.shape[0] // micro_batches] for value in batch)


@dataclass
class _Returns:
    """What the model's forward returns, learnt while tracing it."""

    outputs: int = 0  # tensors beside the loss
    structure: Any = None  # split_result's: None when forward returned the loss alone


class _Layout:
    """The step's variables and the pure function over them."""

    def __init__(
        self,
        model: Any,
        optimizer: Any,
        rule: OptimizerRule,
        accumulation: int,
        seed: int,
        replicas: int = 1,
        mixed: MixedPrecisionStep | None = None,
    ) -> None:
        self.model, self.rule, self.accumulation, self.replicas, self.mixed = model, rule, accumulation, replicas, mixed
        self.pipelined = 0  # micro-batches in one run, a loop round one (build_step)
        self.unused: set[str] = set()  # trainable parameters the loss does not reach (`_unused_parameters`)
        self.bind: Callable[[list[Any]], tuple[tuple, dict]] | None = None  # forward's arguments from the tensors (build_step)
        group_of = {id(param): index for index, group in enumerate(optimizer.param_groups) for param in group["params"]}
        self.params = dict(model.named_parameters())
        self.trainable = {name: group_of[id(p)] for name, p in self.params.items() if p.requires_grad and id(p) in group_of}
        self.buffers = {**dict(model.named_buffers()), **_tensor_attributes(model)}
        hyper = [rule.hyper_values(group) for group in optimizer.param_groups]  # lr, momentum, betas: device variables
        self.hyper_names = [{key: hyper_variable(key, index) for key in values} for index, values in enumerate(hyper)]
        variables = [Variable(f"param:{name}", _array(p)) for name, p in self.params.items()]
        variables += [Variable(f"buffer:{name}", _array(b)) for name, b in self.buffers.items()]
        variables += [
            Variable(hyper_variable(key, index), np.array(value, np.float32))
            for index, values in enumerate(hyper)
            for key, value in values.items()
        ]
        if mixed is not None:
            variables += [Variable(name, value) for name, value in mixed.variables(self.params)]
        state_dtype = (lambda p: np.dtype(np.float32)) if mixed is not None else _numpy_dtype  # PopTorch's accum_type f32
        if rule.counts_steps:
            variables.append(Variable("opt:step", np.array(steps_taken(optimizer), np.float32)))
        for name, group in self.trainable.items():
            param = self.params[name]
            variables += [
                Variable(f"opt:{kind}:{name}", host_state(optimizer, param, kind, state_dtype(param))) for kind in rule.state_names(group)
            ]
        if accumulation > 1:
            variables.append(Variable("accum:count", np.array(0, np.float32)))
            variables += [
                Variable(f"accum:grad:{name}", np.zeros(self.params[name].shape, state_dtype(self.params[name]))) for name in self.trainable
            ]
        variables += [Variable("random:seed", np.array(seed, np.int32)), Variable("random:step", np.array(0, np.int32))]
        self.variables = variables
        self.returns = _Returns()

    def step_function(self, mean: bool) -> Any:
        import torch
        from torch.func import functional_call, grad_and_value

        names = [variable.name for variable in self.variables]
        model, rule, returns, accumulation, mixed = self.model, self.rule, self.returns, self.accumulation, self.mixed

        def step(*flat: Any) -> list[Any]:
            values = dict(zip(names, flat))
            trainable = {name: values[f"param:{name}"] for name in self.trainable}
            frozen = {name: values[f"param:{name}"] for name in self.params if name not in self.trainable}
            buffers = {name: values[f"buffer:{name}"] for name in self.buffers}

            def loss_of(params: dict, buffers: dict, batch: tuple) -> Any:
                with _phase("forward"), _layer_names(model), mixed.linears() if mixed else contextlib.nullcontext():
                    buffers = {name: value.clone() for name, value in buffers.items()}  # updated in place by BatchNorm
                    args, kwargs = self.bind(list(batch)) if self.bind else (tuple(batch), {})
                    result = functional_call(model, {**params, **frozen, **buffers}, tuple(args), kwargs)
                    outputs, loss, returns.structure = split_result(result)
                returns.outputs = len(outputs)
                backward = rule.scaled(loss.sum() if loss.dim() else loss)  # identity_loss(reduction="none"): a gradient of ones
                if mixed is not None:  # the backward pass differentiates the scaled loss, in f32
                    return mixed.scaled(backward, values), (loss, outputs, buffers)
                return backward, (loss, outputs, buffers)

            with _phase("backward"):
                grads, (_, (loss, outputs, buffers)) = grad_and_value(loss_of, has_aux=True)(trainable, buffers, flat[len(names) :])
            if self.pipelined:  # summed over the step's micro-batches: the loop round the above (accumulation_loop.py)
                for name, grad in grads.items():
                    with _layer_of(name):
                        grads[name] = accumulated(grad) / self.pipelined if mean else accumulated(grad)
            with _phase("update"):
                return update(values, trainable, grads, loss, outputs, buffers)

        def update(values: dict, trainable: dict, grads: dict, loss: Any, outputs: list, new_buffers: dict) -> list[Any]:
            new = {f"buffer:{name}": value for name, value in new_buffers.items()}
            apply = None
            if mixed is not None:
                grads = mixed.unscaled(grads, values)
            if accumulation > 1:
                count = values["accum:count"] + 1
                apply = count == accumulation
                new["accum:count"] = torch.where(apply, torch.zeros_like(count), count)
                for name, grad in list(grads.items()):
                    with _layer_of(name):
                        total = values[f"accum:grad:{name}"] + grad
                        grads[name] = total / accumulation if mean else total
                        new[f"accum:grad:{name}"] = torch.where(apply, torch.zeros_like(total), total)
            if self.replicas > 1:  # the update's gradients, the same on every replica
                grads = _reduced_apart(grads, apply)
            if mixed is not None:  # an inf or NaN gradient skips the update; dynamic scaling moves the scale
                finite = mixed.all_finite(grads)
                scale = mixed.next_scale(values, finite)
                if apply is not None:  # the scale moves with the update: on the last micro-batch of each group
                    scale = {key: torch.where(apply, value, values[key]) for key, value in scale.items()}
                new.update(scale)
                apply = finite if apply is None else apply & finite
            grads = rule.clipped(grads)  # PopTorch's max_grad_norm, on the gradients the update takes
            step_count, offset = values.get("opt:step"), 0
            for name, group in self.trainable.items():
                if name in self.unused:  # torch's optimizers skip a parameter whose .grad is None: no decay, no momentum
                    continue
                with _layer_of(name):  # ipu-shard: a parameter's update on its layer's IPU
                    state = {kind: values[f"opt:{kind}:{name}"] for kind in rule.state_names(group)}
                    weight = trainable[name] if mixed is None else mixed.weight(name, values, trainable[name])
                    hyper = {key: values[variable] for key, variable in self.hyper_names[group].items()}
                    param, state = rule.update(group, weight, grads[name], state, hyper, step_count)
                    updated = {f"opt:{kind}:{name}": value for kind, value in state.items()}
                    if mixed is not None:  # `param` is the f32 weight: kept as the master copy, narrowed for the forward
                        if f"master:{name}" in values:
                            updated[f"master:{name}"] = param
                        param, offset = mixed.narrowed(name, param, values, offset), offset + param.numel()
                    updated[f"param:{name}"] = param
                    for key, value in updated.items():
                        new[key] = value if apply is None else torch.where(apply, value, values[key])
            new["random:step"] = values["random:step"] + 1  # fresh random numbers each micro-batch
            if step_count is not None:
                new["opt:step"] = step_count + 1 if apply is None else step_count + apply.to(step_count.dtype)
            return [*outputs, loss, *(new.get(name, values[name]) for name in names)]

        return step


def _model_line(error: BaseException) -> str:
    """` at file:line (source)` of the innermost frame of `error`'s traceback in the model's
    own code (not torch's, nor this front end's), where the trace stopped; "" if none is."""
    import os
    import traceback

    ours = os.path.dirname(os.path.abspath(__file__))
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith(("<", ours)) and f"{os.sep}torch{os.sep}" not in frame.filename
    ]
    return f" at {frames[-1].filename}:{frames[-1].lineno} ({frames[-1].line})" if frames else ""


def _unused_parameters(layout: _Layout, batch: tuple) -> set[str]:
    """The trainable parameters the loss does not depend on (a head the forward never calls, a
    parameter read only through a comparison): after `loss.backward()` their `.grad` is None,
    and torch.optim's SGD, Adam and AdamW leave them and their state as they are, weight decay
    and momentum included, where `grad_and_value`'s zero gradient would apply them. Found by a
    forward and backward on fake tensors; where that fails, none (every parameter updated)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.func import functional_call

    try:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode, warnings.catch_warnings(), _without_mkldnn():
            warnings.simplefilter("ignore")
            fake = {name: mode.from_tensor(p.detach()).requires_grad_(name in layout.trainable) for name, p in layout.params.items()}
            buffers = {name: mode.from_tensor(value.detach().clone()) for name, value in layout.buffers.items()}
            values = [mode.from_tensor(value.chunk(layout.pipelined)[0] if layout.pipelined else value) for value in batch]
            args, kwargs = layout.bind(values) if layout.bind else (tuple(values), {})
            _, loss, _ = split_result(functional_call(layout.model, {**fake, **buffers}, tuple(args), kwargs))
            trained = list(layout.trainable)
            grads = torch.autograd.grad(loss.sum(), [fake[name] for name in trained], allow_unused=True)
    except Exception:  # noqa: BLE001 (an op fake tensors cannot run: the update as before)
        return set()
    return {name for name, grad in zip(trained, grads) if grad is None}


def _phase(name: str) -> Any:
    """Marks the nodes traced inside as of phase `name` (forward, backward, update) in
    `node.meta["custom"]`, where frontends.torch's importer reads it into the locations."""
    from torch.fx import traceback

    return traceback.annotate({"phase": name})


def _layer_of(parameter: str) -> Any:
    """Marks the nodes traced inside as of the layer holding `parameter` (its module path)."""
    from torch.fx import traceback

    return traceback.annotate({"layer": parameter.rpartition(".")[0]})


@contextlib.contextmanager
def _layer_names(model: Any) -> Any:
    """Marks the nodes each submodule's forward traces with its path (`node.meta["custom"]["layer"]`):
    make_fx records no module stack through `functional_call`, which torch.export's does. The
    backward is marked too: a hook on each output of the submodule names it when that output's
    gradient arrives, which is where autograd begins the submodule's backward (its weights'
    gradients and its inputs'); the mark holds until the next submodule's begins. ipu-shard
    places a layer's backward on its forward's IPU by these names."""
    from torch.fx import traceback

    entered: list[Any] = []

    def enter(path: str) -> Any:
        def hook(*_: Any) -> None:
            entered.append(traceback.annotate({"layer": path}))
            entered[-1].__enter__()

        return hook

    def leave(path: str) -> Any:
        def begin_backward(_: Any) -> None:
            traceback.current_meta.setdefault("custom", {})["layer"] = path

        def hook(_: Any, __: Any, output: Any) -> None:
            entered.pop().__exit__(None, None, None)
            for value in _tensors(output):
                if value.requires_grad:
                    value.register_hook(begin_backward)

        return hook

    handles = []
    for path, module in model.named_modules():
        if path:
            handles += [module.register_forward_pre_hook(enter(path)), module.register_forward_hook(leave(path))]
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def _tensors(value: Any) -> list[Any]:
    """The tensors in a module's output: a tensor, or tuples, lists and dicts of them."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [tensor for item in value for tensor in _tensors(item)] if isinstance(value, (tuple, list)) else []


@contextlib.contextmanager
def _without_mkldnn() -> Any:
    """oneDNN off while tracing (`torch.backends.mkldnn.flags` would also warn about TF32)."""
    import torch

    previous = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = previous


def _trace(step: Any, flat: list, random_variables: list[int]) -> tuple[Any, int]:
    """The functionalized graph of `step` on `flat`, and how many random ops it draws with
    (computed from the arguments at `random_variables`, the seed and the step counter)."""
    import torch
    from torch._decomp import core_aten_decompositions, get_decompositions
    from torch.fx import traceback as fx_traceback
    from torch.fx.experimental.proxy_tensor import make_fx
    from torch.nn.attention import SDPBackend, sdpa_kernel

    decompositions = {
        **core_aten_decompositions(),
        **get_decompositions([torch.ops.aten.native_batch_norm]),
        **aten_rewrites(),
        torch.ops.aten._adaptive_avg_pool2d.default: adaptive_pool_by_window_means,
    }
    # preserve_node_meta: the phase and layer marks reach the nodes, and through the
    # Interpreter (which sets each node's meta as current) the functionalized retrace's nodes.
    # _allow_non_fake_inputs: a real tensor the step reads but does not take (a module-level
    # class-weight tensor, an index tensor in a closure) becomes a constant of the graph, as
    # torch.export lifts it for inference, instead of make_fx's refusal.
    # mkldnn off: torch's LSTM decomposition otherwise picks its oneDNN layer on CPU
    # (`aten.mkldnn_rnn_layer`, which torch-mlir cannot lower) over the one made of matmuls.
    with (
        warnings.catch_warnings(),
        sdpa_kernel([SDPBackend.MATH]),
        _without_mkldnn(),
        fx_traceback.preserve_node_meta(),
        marking_checkpoints(),
    ):
        warnings.simplefilter("ignore", (FutureWarning, UserWarning))
        first = make_fx(step, decomposition_table=decompositions, tracing_mode="fake", _allow_non_fake_inputs=True)(*flat)
        placeholders = [node for node in first.graph.nodes if node.op == "placeholder"]
        draws = rewrite_random_ops(first, *(placeholders[index] for index in random_variables))
        for node in first.graph.nodes:
            if node.op == "call_function" and node.target is torch.ops.aten._adaptive_avg_pool2d_backward.default:
                rewrite_adaptive_pool_backward(node)
            if node.op == "call_function" and node.target is torch.ops.aten.convolution_backward.default:
                rewrite_grouped_convolution_backward(node)
            if node.op == "call_function" and node.target is torch.ops.aten.max_pool2d_with_indices_backward.default:
                node.target = max_pool_backward_by_windows
        first.recompile()
        graph = make_fx(
            torch.func.functionalize(torch.fx.Interpreter(first).run, remove="mutations"),
            decomposition_table={**core_aten_decompositions(), **aten_rewrites()},
            tracing_mode="fake",
            _allow_non_fake_inputs=True,
        )(*flat)
    for node in graph.graph.nodes:
        if node.op == "call_function" and node.target in (torch.ops.aten.squeeze.dims, torch.ops.aten.view_copy.default):
            node.target, node.args, node.kwargs = torch.ops.aten.view.default, (node.args[0], list(node.meta["val"].shape)), {}
        if node.op == "call_function" and node.target is torch.ops.aten.empty_permuted.default:  # dropout's `empty_like`
            node.target, node.args, node.kwargs = torch.ops.aten.empty.memory_format, (node.args[0],), {"dtype": node.meta["val"].dtype}
    graph.recompile()
    return graph, draws


def _drop_variables(graph: Any, layout: _Layout, names: tuple[str, ...], streamed: int) -> None:
    """`names` out of the step: their arguments (unused), their results and their Variables."""
    indices = [index for index, variable in enumerate(layout.variables) if variable.name in names]
    placeholders = [node for node in graph.graph.nodes if node.op == "placeholder"]
    output = next(node for node in graph.graph.nodes if node.op == "output")
    results = list(output.args[0])
    output.args = ([result for index, result in enumerate(results) if index - streamed not in indices],)
    graph.graph.eliminate_dead_code()
    for index in indices:
        graph.graph.erase_node(placeholders[index])
    graph.recompile()
    layout.variables = [variable for variable in layout.variables if variable.name not in names]


def _fold_unchanged(graph: Any, variables: int, streamed: int) -> list[bool]:
    """Drops the variable results that are their own argument; which variables kept one."""
    placeholders = [node for node in graph.graph.nodes if node.op == "placeholder"]
    output = next(node for node in graph.graph.nodes if node.op == "output")
    results = list(output.args[0])
    changed = [result is not placeholders[index] for index, result in enumerate(results[streamed:])]
    output.args = ([*results[:streamed], *(r for r, keep in zip(results[streamed:], changed) if keep)],)
    graph.graph.eliminate_dead_code()
    graph.recompile()
    assert len(changed) == variables
    return changed


_MARKER: list = []  # the `ipu_mlir::all_reduce` custom op, defined once per process


def _all_reduce_marker() -> Any:
    """`torch.ops.ipu_mlir.all_reduce`: an identity for tracing that marks where a gradient is
    reduced over the replicas (torch-mlir cannot import it: `_cut_at_all_reduces` cuts it out)."""
    import torch

    if not _MARKER:
        schema = "(Tensor gradient, Tensor? when=None) -> Tensor"

        @torch.library.custom_op("ipu_mlir::all_reduce", mutates_args=(), schema=schema)
        def all_reduce(gradient: Any, when: Any = None) -> Any:
            return gradient.clone()

        all_reduce.register_fake(lambda gradient, when=None: torch.empty_like(gradient))
        _MARKER.append(torch.ops.ipu_mlir.all_reduce.default)
    return _MARKER[0]


def _reduced_apart(grads: dict, when: Any = None) -> dict:
    """Each gradient through its own all-reduce; ipu-replicate puts each on its gradient's IPU
    and joins those of an IPU into one ring (its 2 (R - 1) global syncs paid once, as PopART
    merges the gradients' collectives: ResNet-50's 161 rings were 4,830 syncs). `when`
    (gradient accumulation: the last micro-batch of a group): the all-reduce runs only then,
    once per update as GCL's after the accumulation loop; the other micro-batches' updates are
    dropped."""
    reduce = _all_reduce_marker()
    return {name: reduce(grad, when) for name, grad in grads.items()}


def _cut_at_all_reduces(graph: Any) -> list[bool]:
    """Each marked all-reduce out of the graph: its input (and its condition, when it has one)
    become extra results (the last ones), its users read an extra argument (the last ones)
    instead; `_all_reduced` joins them again, after import, through `ipu.all_reduce`. Whether
    each has a condition."""
    marks = [node for node in graph.graph.nodes if node.op == "call_function" and _MARKER and node.target is _MARKER[0]]
    if not marks:
        return []
    last = [node for node in graph.graph.nodes if node.op == "placeholder"][-1]
    output = next(node for node in graph.graph.nodes if node.op == "output")
    results = list(output.args[0])
    conditional = []
    for index, mark in enumerate(marks):
        with graph.graph.inserting_after(last):
            last = graph.graph.placeholder(f"reduced_{index}")
        last.meta["val"] = mark.meta["val"]
        mark.replace_all_uses_with(last)
        when = mark.args[1] if len(mark.args) > 1 else None
        results += [mark.args[0]] + ([when] if when is not None else [])
        conditional.append(when is not None)
        graph.graph.erase_node(mark)
    output.args = (results,)
    graph.recompile()
    return conditional


def _all_reduced(module: ir.Module, conditional: list[bool], replicas: int, reduction: str) -> None:
    """The last results of @main (one per all-reduce, or two: the gradient and its condition)
    through `ipu.all_reduce` into its last arguments, both then dropped (`_cut_at_all_reduces`'s
    cut, joined). A conditional all-reduce is an `scf.if` on its condition (Poplar's If): the
    ring runs only when it holds; otherwise the gradient passes unreduced."""
    if not conditional:
        return
    count, cut = len(conditional), len(conditional) + sum(conditional)
    with module.context:
        main = next(op for op in module.body.operations if op.operation.name == "func.func")
        block = main.regions[0].blocks[0]
        ret = list(block.operations)[-1]
        values = list(ret.operands)
        cut_values, arguments = iter(values[len(values) - cut :]), len(block.arguments)
        for k, has_condition in enumerate(conditional):
            local, argument = next(cut_values), block.arguments[arguments - count + k]
            when = next(cut_values) if has_condition else None
            where = _after_both(block, local, when)
            with argument.location:
                reduced = _all_reduce(local, when, replicas, reduction, where)
            argument.replace_all_uses_with(reduced)
        with ret.location:
            ir.Operation.create("func.return", operands=values[: len(values) - cut], ip=ir.InsertionPoint(ret))
        ret.operation.erase()
        for index in reversed(range(arguments - count, arguments)):
            block.erase_argument(index)
        function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        kept = ir.FunctionType.get(list(function_type.inputs)[: arguments - count], list(function_type.results)[: len(values) - cut])
        main.attributes["function_type"] = ir.TypeAttr.get(kept)


def _after_both(block: ir.Block, *values: ir.Value | None) -> ir.InsertionPoint:
    """Just after the later definition of `values` in `block` (its start for arguments)."""
    order = {op: index for index, op in enumerate(block.operations)}
    owners = [value.owner for value in values if value is not None and not isinstance(value.owner, ir.Block)]
    if not owners:
        return ir.InsertionPoint.at_block_begin(block)
    return ir.InsertionPoint.after(max(owners, key=lambda op: order[op]))


def _all_reduce(local: ir.Value, when: ir.Value | None, replicas: int, reduction: str, where: ir.InsertionPoint) -> ir.Value:
    """`local` all-reduced; with `when` (a 0-d `tensor<i1>`), only when it holds."""
    # a replica is one IPU, its first (ipu-shard follows the annotation; unannotated, it
    # would balance each replica over its share of the target's IPUs)
    first_ipu = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), 0)
    if when is None:
        reduced = ipu.all_reduce(local, replicas, reduction, ip=where)
        reduced.attributes["ipu.ipu_id"] = first_ipu
        return reduced.result
    holds = tensor.ExtractOp(when, [], ip=where).result
    branch = scf.IfOp(holds, [local.type], has_else=True, ip=where)
    branch.attributes["ipu.ipu_id"] = first_ipu
    with ir.InsertionPoint(branch.then_block):
        reduced = ipu.all_reduce(local, replicas, reduction)
        reduced.attributes["ipu.ipu_id"] = first_ipu
        scf.YieldOp([reduced.result])
    with ir.InsertionPoint(branch.else_block):
        scf.YieldOp([local])
    return branch.results[0]


def _import(graph: Any, importer: type | None) -> ir.Module:
    from torch_mlir import fx
    from torch_mlir import ir as torch_ir
    from torch_mlir.compiler_utils import TorchMlirCompilerError
    from torch_mlir.dialects import torch as torch_dialect
    from torch_mlir.extras.fx_importer import FxImporter

    context = torch_ir.Context()
    torch_dialect.register_dialect(context)
    errors: list[str] = []  # torch-mlir's diagnostics, kept from stderr: the first becomes the one-line error
    locations: list[str] = []
    context.attach_diagnostic_handler(
        lambda diagnostic: errors.append(str(diagnostic.message).splitlines()[0]) or locations.append(str(diagnostic.location)) or True
    )
    try:
        fx_importer = (importer or FxImporter)(context=context)
        imported = fx.stateless_fx_import(graph, output_type="linalg-on-tensors", fx_importer=fx_importer, model_name="main")
    except TorchMlirCompilerError as error:
        first = errors[0] if errors else str(error).strip().splitlines()[0]
        raise IpuError(f"torch-mlir cannot import the training step{_origin(locations[0] if locations else '')}: {first}") from None
    return api.load_module(imported.operation.get_asm(print_generic_op_form=True, enable_debug_info=True))


def _mark_resident(module: ir.Module, arguments: list[str], results: list[str]) -> None:
    """`ipu.resident` on the first arguments (the variables) and the last results (their new values)."""
    with module.context:
        main = next(op for op in module.body.operations if op.operation.name == "func.func")
        function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        empty = ir.DictAttr.get({})

        def marked(name: str) -> ir.DictAttr:
            return ir.DictAttr.get({RESIDENT_ATTR: ir.StringAttr.get(name)})

        inputs, outputs = len(function_type.inputs), len(function_type.results)
        main.attributes["arg_attrs"] = ir.ArrayAttr.get([marked(n) for n in arguments] + [empty] * (inputs - len(arguments)))
        main.attributes["res_attrs"] = ir.ArrayAttr.get([empty] * (outputs - len(results)) + [marked(n) for n in results])


def _tensor_attributes(model: Any) -> dict[str, Any]:
    """The tensors a module keeps as plain attributes, neither parameters nor buffers (a causal
    mask as `self.mask = torch.triu(...)`): variables of the step as buffers are, since the fake
    tracing refuses a real tensor (`functional_call` swaps plain attributes too)."""
    import torch

    return {
        f"{prefix}.{name}" if prefix else name: value
        for prefix, module in model.named_modules()
        for name, value in vars(module).items()
        if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)
    }


def _array(tensor: Any) -> np.ndarray:
    return np.array(to_numpy(tensor), copy=True)


def _numpy_dtype(tensor: Any) -> np.dtype:
    return to_numpy(tensor).dtype


def _origin(location: str) -> str:
    """` (aten.op at model.py:12)` of a location the importer names (`loc("phase:forward"(
    "aten.op"("model.py":12:0)))`), as much of it as it holds (a backward op has no line)."""
    import re

    op = next(iter(re.findall(r'"(aten\.[^"]+)"', location)), "")
    source = re.search(r'"([^"]+)":(\d+):\d+', location)
    where = " ".join(([op] if op else []) + ([f"at {source[1]}:{source[2]}"] if source else []))
    return f" ({where})" if where else ""
