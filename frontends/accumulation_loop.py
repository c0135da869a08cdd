"""A pipelined training step's micro-batches as one loop, for frontends/joint.py.

PopTorch's `PipelinedExecution` with `Training.gradientAccumulation(G)` runs G micro-batches
a step and one update. The step is traced for one micro-batch, each trainable parameter's
gradient passing through a marker (`accumulated`: an identity while tracing); the marks are cut
out before torch-mlir's import (a gradient becomes an extra result, the update reads an extra
argument instead), and after it `accumulation_loop` makes the step

    %sums:n, %last:k = scf.for %m = %c0 to %cG step %c1 iter_args(%sum = 0, .., %loss = 0, ..) {
      %x = tensor.extract_slice %batch[%m * rows, 0] [rows, ..]   // micro-batch m's rows
      ... the forward, the loss and the backward of micro-batch m ...
      %next = %sum + %grad                                       // located ipu.accumulate
      scf.yield %next, .., %loss_m, ..
    } {ipu.accumulate}
    ... the update, reading %sums ...

so the IR holds one micro-batch's forward and backward whatever G is. The sums start at 0 and
add the micro-batches' gradients in order, PyTorch's ((g1 + g2) + g3) + ..; what the update or
the results read of the micro-batch part otherwise (the loss, the forward's outputs) is the last
micro-batch's, carried out of the loop. ipu-shard places the body's ops as a step's, and
ipu-pipeline runs the loop's iterations as PopART's pipeline does (lowering/pipeline_training.py).
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.lowering.accumulations import ACCUMULATE_ATTR, ACCUMULATION
from ipu_mlir.target.diagnostics import IpuError

_MARKER: list = []  # the `ipu_mlir::accumulated` custom op, defined once per process


def accumulated(gradient: Any) -> Any:
    """`gradient` marked as summed over the step's micro-batches (an identity while tracing)."""
    import torch

    if not _MARKER:

        @torch.library.custom_op("ipu_mlir::accumulated", mutates_args=(), schema="(Tensor gradient) -> Tensor")
        def marker(gradient: Any) -> Any:
            return gradient.clone()

        marker.register_fake(lambda gradient: torch.empty_like(gradient))
        _MARKER.append(torch.ops.ipu_mlir.accumulated.default)
    return _MARKER[0](gradient)


def cut_at_accumulations(graph: Any) -> int:
    """Each marked gradient out of the traced graph: its input becomes an extra result (the last
    ones), its users read an extra argument (the last ones); how many."""
    marks = [node for node in graph.graph.nodes if node.op == "call_function" and _MARKER and node.target is _MARKER[0]]
    if not marks:
        return 0
    last = [node for node in graph.graph.nodes if node.op == "placeholder"][-1]
    output = next(node for node in graph.graph.nodes if node.op == "output")
    results = list(output.args[0])
    for index, mark in enumerate(marks):
        with graph.graph.inserting_after(last):
            last = graph.graph.placeholder(f"accumulated_{index}")
        last.meta["val"] = mark.meta["val"]
        mark.replace_all_uses_with(last)
        results.append(mark.args[0])
        graph.graph.erase_node(mark)
    output.args = (results,)
    graph.recompile()
    return len(marks)


def accumulation_loop(module: ir.Module, sums: int, micro_batches: int, batch: range) -> None:
    """@main's last `sums` results (the gradients of a micro-batch) and arguments (their sums)
    joined by a loop over `micro_batches` micro-batches around the ops reading the arguments at
    `batch` (one micro-batch's shape, retyped here to all of them), as the module docstring shows."""
    with module.context:
        main = next(op for op in module.body.operations if op.operation.name == "func.func")
        block = main.regions[0].blocks[0]
        operations = list(block.operations)
        ret, ops = operations[-1], operations[:-1]
        arguments = list(block.arguments)
        placeholders = arguments[len(arguments) - sums :]
        results = list(ret.operands)
        gradients, kept = results[len(results) - sums :], results[: len(results) - sums]
        inside = _reading(ops, {arguments[i] for i in batch})
        after = _reading(ops, set(placeholders))
        if inside & after:
            raise IpuError("a pipelined training step whose micro-batch part reads the summed gradients is not supported")
        body_ops = [ops[i] for i in sorted(inside)]
        made = {result for op in body_ops for result in op.results}
        outside = [op for i, op in enumerate(ops) if i not in inside]
        carried = list(dict.fromkeys(v for op in [*outside, ret] for v in _operands_within(op) if v in made))
        carried = [v for v in carried if v not in gradients or any(v in _operands_within(op) for op in outside)]
        first_after = min(after, default=len(ops))
        anchor = ops[first_after] if first_after < len(ops) else ret
        for i in range(first_after, len(ops)):  # work on no micro-batch after the loop's place moves before it
            if i not in inside and i not in after:
                ops[i].operation.move_before(anchor)
        with main.location:
            loop = _build_loop(block, ir.InsertionPoint(anchor), micro_batches, batch, gradients, carried, body_ops)
        totals, lasts = list(loop.results)[:sums], list(loop.results)[sums:]
        for placeholder, total in zip(placeholders, totals):
            placeholder.replace_all_uses_with(total)
        body = loop.regions[0].blocks[0]
        for value, last in zip(carried, lasts):
            _replace_outside(value, last, body)
        with ret.location:
            ir.Operation.create("func.return", operands=list(ret.operands)[: len(kept)], ip=ir.InsertionPoint(ret))
        ret.operation.erase()
        for index in reversed(range(len(arguments) - sums, len(arguments))):
            block.erase_argument(index)
        function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        inputs = [argument.type for argument in block.arguments]
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(function_type.results)[: len(kept)]))


def _replace_outside(value: ir.Value, last: ir.Value, body: ir.Block) -> None:
    """`value`'s uses by ops outside `body` (and the ops nested in them) read `last` instead."""
    for use in list(value.uses):
        owner = use.owner.operation
        while owner.block != body and owner.parent is not None and owner.parent.name != "func.func":
            owner = owner.parent
        if owner.block != body:
            use.owner.operands[use.operand_number] = last


def _build_loop(block, where, micro_batches, batch, gradients, carried, body_ops) -> ir.Operation:
    index = ir.IndexType.get()

    def constant(value: int) -> ir.Value:
        return ir.Operation.create(
            "arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, value)}, ip=where
        ).result

    inits = [_zeros(value.type, where) for value in [*gradients, *carried]]
    loop = ir.Operation.create(
        "scf.for",
        results=[value.type for value in inits],
        operands=[constant(0), constant(micro_batches), constant(1), *inits],
        regions=1,
        attributes={ACCUMULATE_ATTR: ir.UnitAttr.get()},
        ip=where,
    )
    body = loop.regions[0].blocks.append(index, *[value.type for value in inits])
    step, totals = body.arguments[0], list(body.arguments)[1 : 1 + len(gradients)]
    with ir.InsertionPoint(body):
        end = ir.Operation.create("scf.yield")  # where the moved ops go; replaced below
        for position in batch:
            _slice_micro_batch(block.arguments[position], step, micro_batches, ir.InsertionPoint(end))
    for op in body_ops:
        op.operation.move_before(end)
    end.erase()
    with ir.InsertionPoint(body):
        yielded = []
        for total, gradient in zip(totals, gradients):
            with ir.Location.name(ACCUMULATION, childLoc=gradient.owner.location):
                yielded.append(_add(total, gradient))
        ir.Operation.create("scf.yield", operands=[*yielded, *carried])
    return loop


def _slice_micro_batch(argument: ir.BlockArgument, step: ir.Value, micro_batches: int, where: ir.InsertionPoint) -> None:
    """`argument` (one micro-batch's shape when traced) retyped to all `micro_batches`; the
    loop's users read micro-batch `step`'s rows of it (an extract_slice at a dynamic offset)."""
    type_ = ir.RankedTensorType(argument.type)
    shape = list(type_.shape)
    if not shape:
        raise IpuError("a pipelined training step's inputs need a batch dimension")
    argument.set_type(ir.RankedTensorType.get([shape[0] * micro_batches, *shape[1:]], type_.element_type))
    index = ir.IndexType.get()
    rows = ir.Operation.create("arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, shape[0])}, ip=where)
    offset = ir.Operation.create("arith.muli", results=[index], operands=[step, rows.result], ip=where).result
    dynamic = ir.ShapedType.get_dynamic_size()
    sliced = ir.Operation.create(
        "tensor.extract_slice",
        results=[type_],
        operands=[argument, offset],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get([dynamic] + [0] * (len(shape) - 1)),
            "static_sizes": ir.DenseI64ArrayAttr.get(shape),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1, 0, 0]),
        },
        ip=where,
    ).result
    for use in list(argument.uses):
        if use.owner != sliced.owner:
            use.owner.operands[use.operand_number] = sliced


def _add(total: ir.Value, gradient: ir.Value) -> ir.Value:
    type_ = ir.RankedTensorType(gradient.type)
    name = "arith.addf" if isinstance(type_.element_type, ir.FloatType) else "arith.addi"
    init = ir.Operation.create("tensor.empty", results=[type_]).result
    identity = ir.AffineMap.get_identity(type_.rank)

    def body(a: ir.Value, b: ir.Value, _: ir.Value) -> ir.Value:
        return ir.Operation.create(name, results=[a.type], operands=[a, b]).result

    return tb.generic([total, gradient], init, [identity] * 3, body)


def _zeros(type_: ir.Type, where: ir.InsertionPoint) -> ir.Value:
    tensor = ir.RankedTensorType(type_)
    splat = ir.DenseElementsAttr.get_splat(tensor, tb.zero_attr(tensor.element_type))
    return ir.Operation.create("arith.constant", results=[type_], attributes={"value": splat}, ip=where).result


def _reading(ops: list[ir.OpView], sources: set[ir.Value]) -> set[int]:
    """The positions of the ops in `ops` reading `sources`, directly or through other such ops."""
    reached, found = set(sources), set()
    for position, op in enumerate(ops):
        if any(operand in reached for operand in _operands_within(op)):
            found.add(position)
            reached.update(op.results)
    return found


def _operands_within(op: ir.OpView) -> list[ir.Value]:
    """`op`'s operands and those of the ops in its regions (values they take from outside)."""
    values = list(op.operands)
    for region in op.operation.regions:
        for inner_block in region.blocks:
            for inner in inner_block.operations:
                values += _operands_within(inner)
    return values
