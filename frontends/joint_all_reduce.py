"""The replicas' gradient all-reduces of the joint training step (frontends/joint.py): marked
while tracing (`reduced_apart`, a custom op torch-mlir cannot import), cut out of the graph
before the import (`cut_at_all_reduces`) and joined again after it through `ipu.all_reduce`
(`all_reduced`). Apart from joint.py: one concern, from the trace's mark to the IR's op."""

from __future__ import annotations

from typing import Any

from mlir import ir
from mlir.dialects import scf, tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.frontends.joint_trace import cut_marks

_MARKER: list = []  # the `ipu_mlir::all_reduce` custom op, defined once per process


def _all_reduce_marker() -> Any:
    """`torch.ops.ipu_mlir.all_reduce`: an identity for tracing that marks where a gradient is
    reduced over the replicas (torch-mlir cannot import it: `cut_at_all_reduces` cuts it out)."""
    import torch

    if not _MARKER:
        schema = "(Tensor gradient, Tensor? when=None) -> Tensor"

        @torch.library.custom_op("ipu_mlir::all_reduce", mutates_args=(), schema=schema)
        def all_reduce(gradient: Any, when: Any = None) -> Any:
            return gradient.clone()

        all_reduce.register_fake(lambda gradient, when=None: torch.empty_like(gradient))
        _MARKER.append(torch.ops.ipu_mlir.all_reduce.default)
    return _MARKER[0]


def reduced_apart(grads: dict, when: Any = None) -> dict:
    """Each gradient through its own all-reduce; ipu-replicate puts each on its gradient's IPU
    and joins those of an IPU into one ring (its 2 (R - 1) global syncs paid once, as PopART
    merges the gradients' collectives: ResNet-50's 161 rings were 4,830 syncs). `when`
    (gradient accumulation: the last micro-batch of a group): the all-reduce runs only then,
    once per update as GCL's after the accumulation loop; the other micro-batches' updates are
    dropped."""
    reduce = _all_reduce_marker()
    return {name: reduce(grad, when) for name, grad in grads.items()}


def cut_at_all_reduces(graph: Any) -> list[bool]:
    """Each marked all-reduce out of the graph: its input (and its condition, when it has one)
    become extra results (the last ones), its users read an extra argument (the last ones)
    instead; `all_reduced` joins them again, after import, through `ipu.all_reduce`. Whether
    each has a condition."""
    operands = cut_marks(graph, _MARKER[0], "reduced") if _MARKER else []
    return [len(args) > 1 and args[1] is not None for args in operands]


def all_reduced(module: ir.Module, conditional: list[bool], replicas: int, reduction: str) -> None:
    """The last results of @main (one per all-reduce, or two: the gradient and its condition)
    through `ipu.all_reduce` into its last arguments, both then dropped (`cut_at_all_reduces`'s
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
