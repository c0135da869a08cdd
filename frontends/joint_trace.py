"""The trace of the joint training step (frontends/joint.py): `make_fx` twice, with the
decomposition tables and the graph rewrites between, and the marks (`phase`, `layer_of`,
`layer_names`) the step function puts on the nodes it traces, which frontends.torch's importer
reads into the locations. Apart from joint.py: the step's layout (frontends/joint_layout.py)
marks while joint.py traces, and both run with oneDNN off (`without_mkldnn`)."""

from __future__ import annotations

import contextlib
import warnings
from typing import Any

from ipu_mlir.frontends.aten_rewrites import aten_rewrites
from ipu_mlir.frontends.backward_rewrites import (
    adaptive_pool_by_window_means,
    max_pool_backward_by_windows,
    rewrite_adaptive_pool_backward,
    rewrite_grouped_convolution_backward,
)
from ipu_mlir.frontends.random_ops import rewrite_random_ops
from ipu_mlir.frontends.recompute import marking_checkpoints


def phase(name: str) -> Any:
    """Marks the nodes traced inside as of phase `name` (forward, backward, update) in
    `node.meta["custom"]`, where frontends.torch's importer reads it into the locations."""
    from torch.fx import traceback

    return traceback.annotate({"phase": name})


def layer_of(parameter: str) -> Any:
    """Marks the nodes traced inside as of the layer holding `parameter` (its module path)."""
    from torch.fx import traceback

    return traceback.annotate({"layer": parameter.rpartition(".")[0]})


@contextlib.contextmanager
def layer_names(model: Any) -> Any:
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
        # A forward an error stopped inside a submodule left its marks entered: exited here, in
        # order, not when the garbage collector closes them later, restoring a stale mark into
        # torch's global current_meta that the next model's nodes would carry.
        while entered:
            entered.pop().__exit__(None, None, None)


def _tensors(value: Any) -> list[Any]:
    """The tensors in a module's output: a tensor, or tuples, lists and dicts of them."""
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    return [tensor for item in value for tensor in _tensors(item)] if isinstance(value, (tuple, list)) else []


@contextlib.contextmanager
def without_mkldnn() -> Any:
    """oneDNN off while tracing (`torch.backends.mkldnn.flags` would also warn about TF32)."""
    import torch

    previous = torch.backends.mkldnn.enabled
    torch.backends.mkldnn.enabled = False
    try:
        yield
    finally:
        torch.backends.mkldnn.enabled = previous


def trace(step: Any, flat: list, random_variables: list[int]) -> tuple[Any, int]:
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
        without_mkldnn(),
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


def cut_marks(graph: Any, marker: Any, name: str) -> list[tuple]:
    """Each call of `marker` (a custom op torch-mlir cannot import) out of the traced `graph`:
    its users read a new last argument (`name`_i) instead, its operands but None become extra
    results (the last ones), for the importer's caller to join again. The marks' operands."""
    marks = [node for node in graph.graph.nodes if node.op == "call_function" and node.target is marker]
    if not marks:
        return []
    last = [node for node in graph.graph.nodes if node.op == "placeholder"][-1]
    output = next(node for node in graph.graph.nodes if node.op == "output")
    results, operands = list(output.args[0]), []
    for index, mark in enumerate(marks):
        with graph.graph.inserting_after(last):
            last = graph.graph.placeholder(f"{name}_{index}")
        last.meta["val"] = mark.meta["val"]
        mark.replace_all_uses_with(last)
        operands.append(tuple(mark.args))
        results += [operand for operand in mark.args if operand is not None]
        graph.graph.erase_node(mark)
    output.args = (results,)
    graph.recompile()
    return operands
