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

This module builds, imports and marks the step; its parts live apart: the variables and the
step function over them in frontends/joint_layout.py, the two traces and the marks they read
in frontends/joint_trace.py, the replicas' gradient all-reduces in frontends/joint_all_reduce.py,
PopTorch's `identity_loss` and the loss's place in forward's result in frontends/joint_loss.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from ipu_mlir.frontends import api, joint_trace
from ipu_mlir.frontends.accumulation_loop import accumulation_loop, cut_at_accumulations
from ipu_mlir.frontends.joint_all_reduce import all_reduced, cut_at_all_reduces
from ipu_mlir.frontends.joint_layout import Layout, Variable, numpy_dtype, unused_parameters
from ipu_mlir.frontends.mixed_precision import MixedPrecisionStep, to_torch
from ipu_mlir.frontends.optimizers import OptimizerRule
from ipu_mlir.frontends.recompute import recompute
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["RESIDENT_ATTR", "JointStep", "build_step"]

RESIDENT_ATTR = "ipu.resident"
_RANDOM_VARIABLES = ("random:seed", "random:step")  # frontends/random_ops.py's generator: kept only if the step draws


@dataclass
class JointStep:
    module: ir.Module  # L0: func.func @main with the ipu.resident attributes
    variables: list[Variable]  # the first arguments, in order
    batch: list[tuple[tuple[int, ...], np.dtype]]  # the streamed arguments after them
    outputs: int  # streamed results before the loss: the forward's outputs other than the loss
    output_structure: Any  # None: forward returned the loss; else the pytree spec of what it returned


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
    an `ipu.all_reduce` over the replicas (their mean, or sum when not `mean`: `all_reduced`).
    `mixed`: the master weights, loss scaling and stochastic rounding of an f16 / bf16 model
    (frontends/mixed_precision.py). `pipelined` > 0 (PopTorch's PipelinedExecution): one run of
    the step takes that many micro-batches (`micro_batch` holds them all): one micro-batch's
    forward and backward traced, put in a loop over all but the last and kept for the last after
    it, its gradients summed (the mean, when `mean`) before one update
    (frontends/accumulation_loop.py); `accumulation` is then 1. The IR does not grow with them.
    `bind`: forward's (args, kwargs) from a micro-batch's tensors, its Python values bound as
    constants of the step (frontends/inputs.py `Signature.bind`); None: the tensors positional."""
    layout = Layout(model, optimizer, rule, accumulation, seed, replicas, mixed)
    layout.pipelined, layout.bind = pipelined, bind
    batch = tuple(value.detach() for value in micro_batch)
    traced = _first_micro_batch(batch, pipelined) if pipelined else batch
    layout.unused = unused_parameters(layout, batch)
    flat = [to_torch(np.array(variable.value)) for variable in layout.variables] + list(traced)
    names = [variable.name for variable in layout.variables]
    try:
        graph, draws = joint_trace.trace(layout.step_function(mean), flat, [names.index(name) for name in _RANDOM_VARIABLES])
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
    reduced = cut_at_all_reduces(graph)
    module = _import(graph, importer)
    all_reduced(module, reduced, replicas, "mean" if mean else "sum")
    if pipelined:
        accumulation_loop(module, sums, pipelined, range(len(layout.variables), len(layout.variables) + len(batch)))
    _mark_resident(module, [variable.name for variable in layout.variables], [v.name for v in layout.variables if v.updated])
    return JointStep(module, layout.variables, [(tuple(t.shape), numpy_dtype(t)) for t in batch], returns.outputs, returns.structure)


def _first_micro_batch(batch: tuple, micro_batches: int) -> tuple:
    """The first of `micro_batches` micro-batches of `batch`: the pipelined step is traced for one."""
    for value in batch:
        if not value.dim() or value.shape[0] % micro_batches:
            raise IpuError(
                f"a pipelined training step's input of shape {tuple(value.shape)} does not split into {micro_batches} micro-batches"
            )
    return tuple(value[: value.shape[0] // micro_batches] for value in batch)


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


def _drop_variables(graph: Any, layout: Layout, names: tuple[str, ...], streamed: int) -> None:
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


def _origin(location: str) -> str:
    """` (aten.op at model.py:12)` of a location the importer names (`loc("phase:forward"(
    "aten.op"("model.py":12:0)))`), as much of it as it holds (a backward op has no line)."""
    import re

    op = next(iter(re.findall(r'"(aten\.[^"]+)"', location)), "")
    source = re.search(r'"([^"]+)":(\d+):\d+', location)
    where = " ".join(([op] if op else []) + ([f"at {source[1]}:{source[2]}"] if source else []))
    return f" ({where})" if where else ""
