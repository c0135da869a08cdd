"""Recomputation checkpoints in the joint step: PopTorch's `recomputationCheckpoint`.

    def forward(self, x, target):
        h = ipu_torch.recomputationCheckpoint(self.block1(x))   # kept for backward
        y = self.block2(h)                                     # recomputed in backward from h
        return y, mse_loss(y, target)

A checkpoint is an identity op (`ipu_mlir::recomputation_checkpoint`, its gradient the
incoming one) that survives the traces as a node. When the step holds at least one,
`recompute` rewrites the traced joint graph as PopART's recomputation does: each forward
activation the backward reads, other than a checkpoint or an input, is not kept from the
forward but computed again, from the checkpoints and the inputs, just before the first
backward node that reads it. Without checkpoints the graph is left as it is.

The copies must stay copies: the pipeline's `cse` would merge a copy with its original (same
op, same operands) and bring the long life back. So each checkpoint (and micro-batch input)
a copy starts from is read through `value + 0 * g[0]`, `g` the incoming gradient of the
backward node that asked for it: a different value to `cse`, equal in value (`g` is finite
where the step is), and computed only once that gradient exists, which keeps the copy late.
"""

from __future__ import annotations

import contextlib
from typing import Any

from ipu_mlir.target.diagnostics import IpuError

__all__ = ["CHECKPOINT_OP", "marking_checkpoints", "recomputationCheckpoint", "recompute"]

CHECKPOINT_OP = "ipu_mlir::recomputation_checkpoint"


_library: list[Any] = []  # the op's torch.library.Library, kept alive once defined
_marking: list[bool] = []  # non-empty while build_step traces the joint step


@contextlib.contextmanager
def marking_checkpoints() -> Any:
    """While the joint step is traced, `recomputationCheckpoint` leaves its op in the graph;
    elsewhere (PyTorch's own loop, inference) it is the identity, as PopTorch's is without
    recomputation."""
    _marking.append(True)
    try:
        yield
    finally:
        _marking.pop()


def _checkpoint_op() -> Any:
    """The identity op, defined on first use, behind an autograd.Function: torch.library's
    `custom_op` autograd is refused under `torch.func.grad`, which the joint step traces."""
    import torch

    if not _library:
        namespace, name = CHECKPOINT_OP.split("::")
        library = torch.library.Library(namespace, "DEF")
        library.define(f"{name}(Tensor tensor) -> Tensor")
        library.impl(name, lambda tensor: tensor.clone(), "CompositeExplicitAutograd")
        torch.library.register_fake(CHECKPOINT_OP, lambda tensor: torch.empty_like(tensor), lib=library)
        op = getattr(getattr(torch.ops, namespace), name).default

        class Checkpoint(torch.autograd.Function):
            @staticmethod
            def forward(tensor: Any) -> Any:
                return op(tensor)

            @staticmethod
            def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
                pass

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                return grad

        _library.extend([library, Checkpoint])
    return _library[1].apply


def recomputationCheckpoint(*tensors: Any) -> Any:  # noqa: N802 (PopTorch's name)
    """PopTorch's `poptorch.recomputationCheckpoint`: the tensors (one, several, or one list or
    tuple of them), unchanged, marked as kept for the backward pass; the forward activations
    between checkpoints are recomputed in the backward pass. An identity in PyTorch's own loop
    and in inference."""
    import torch

    if len(tensors) == 1 and isinstance(tensors[0], (tuple, list)):
        return type(tensors[0])(recomputationCheckpoint(*tensors[0]))
    for tensor in tensors:
        if not isinstance(tensor, torch.Tensor):
            raise IpuError(f"recomputationCheckpoint takes tensors, got {type(tensor).__name__}")
    op = _checkpoint_op() if _marking else (lambda tensor: tensor)
    marked = [op(tensor) for tensor in tensors]
    return marked[0] if len(marked) == 1 else tuple(marked)


def recompute(graph: Any, batch_inputs: int) -> int:
    """Rewrites the joint `graph` (make_fx's, phases in `node.meta["custom"]["phase"]`) to
    recompute in backward the forward activations between its checkpoints, then drops the
    checkpoint nodes; the last `batch_inputs` placeholders are the micro-batch. Returns how
    many forward nodes were copied (0: no checkpoints, nothing changed)."""
    import torch

    nodes = list(graph.graph.nodes)
    checkpoints = [node for node in nodes if node.op == "call_function" and _op_name(node.target) == CHECKPOINT_OP]
    if not checkpoints:
        return 0
    placeholders = [node for node in nodes if node.op == "placeholder"]
    anchors = set(checkpoints) | set(placeholders[len(placeholders) - batch_inputs :])
    forward = {node for node in nodes if _phase(node) == "forward" and node.op == "call_function"}
    # forward nodes that depend on the micro-batch: activations (the rest derive from variables only)
    activations: set[Any] = set()
    for node in nodes:
        if node in forward and any(arg in anchors or arg in activations for arg in node.all_input_nodes):
            activations.add(node)
    activations -= set(checkpoints)
    copies: dict[Any, Any] = {}
    barriers: dict[Any, Any] = {}

    def copy_of(node: Any, before: Any, gradient: Any) -> Any:
        if node in anchors:
            value = node.meta["val"]
            if not (value.dtype.is_floating_point and value.dim() > 0):
                return node  # a float 0-d `zero` would change its dtype: labels, a step count
            if node not in barriers:
                with graph.graph.inserting_before(before):
                    first = gradient
                    for axis in range(gradient.meta["val"].dim()):
                        first = _call(graph, torch.ops.aten.slice.Tensor, first, axis, 0, 1)
                    first = _call(graph, torch.ops.aten.view.default, first, [])
                    zero = _call(graph, torch.ops.aten.mul.Tensor, first, 0.0)
                    barriers[node] = _call(graph, torch.ops.aten.add.Tensor, node, zero)
            return barriers[node]
        if node not in activations:
            return node
        if node not in copies:
            args = torch.fx.node.map_arg(node.args, lambda arg: copy_of(arg, before, gradient))
            kwargs = torch.fx.node.map_arg(node.kwargs, lambda arg: copy_of(arg, before, gradient))
            with graph.graph.inserting_before(before):
                copies[node] = graph.graph.call_function(node.target, args, kwargs)
            copies[node].meta = {**node.meta, "custom": {**node.meta.get("custom", {}), "phase": "backward"}}
        return copies[node]

    gradient = None  # the latest float value of the backward pass: the barriers' source
    for node in nodes:
        if node.op != "call_function" or _phase(node) not in ("backward", "update"):
            continue
        saved = [arg for arg in node.all_input_nodes if arg in activations]
        if saved and gradient is not None:
            for arg in saved:
                node.replace_input_with(arg, copy_of(arg, node, gradient))
        if _is_float_tensor(node):
            gradient = node
    for checkpoint in checkpoints:
        checkpoint.replace_all_uses_with(checkpoint.args[0])
        graph.graph.erase_node(checkpoint)
    graph.graph.eliminate_dead_code()
    graph.recompile()
    return len(copies)


def _call(graph: Any, target: Any, *args: Any) -> Any:
    """A backward node `target(*args)` with its fake value, as make_fx's nodes carry (the importer reads it)."""
    import torch

    node = graph.graph.call_function(target, args)
    node.meta["val"] = target(*torch.fx.node.map_arg(args, lambda arg: arg.meta["val"]))
    node.meta["custom"] = {"phase": "backward"}
    return node


def _op_name(target: Any) -> str:
    name = getattr(target, "name", None)  # an OpOverload's is "namespace::op"
    return name() if callable(name) else ""


def _phase(node: Any) -> str | None:
    return node.meta.get("custom", {}).get("phase")


def _is_float_tensor(node: Any) -> bool:
    value = node.meta.get("val")
    return value is not None and hasattr(value, "dtype") and value.dtype.is_floating_point and value.numel() > 0
