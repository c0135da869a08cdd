"""A pipelined training step's micro-batches as one loop, for frontends/joint.py.

PopTorch's `PipelinedExecution` with `Training.gradientAccumulation(G)` runs G micro-batches
a step and one update. The step is traced for one micro-batch, each trainable parameter's
gradient passing through a marker (`accumulated`: an identity while tracing); the marks are cut
out before torch-mlir's import (a gradient becomes an extra result, the update reads an extra
argument instead), and after it `accumulation_loop` makes the step

    %sums:n = scf.for %m = %c0 to %cG-1 step %c1 iter_args(%sum = 0, ..) {
      %x = tensor.extract_slice %batch[%m * rows, 0] [rows, ..]   // micro-batch m's rows
      ... the forward and the backward of micro-batch m (its loss unused: erased) ...
      %next = %sum + %grad                                       // located ipu.accumulate
      scf.yield %next, ..
    } {ipu.accumulate}
    %x = tensor.extract_slice %batch[(G - 1) * rows, 0] [rows, ..]
    ... the forward, the loss and the backward of micro-batch G - 1 ...
    %total = %sums + %grad
    ... the update, reading %total ...

so the IR holds two copies of one micro-batch's forward and backward whatever G is. The sums
start at 0 and add the micro-batches' gradients in order, PyTorch's ((g1 + g2) + g3) + ..; what
the results read of the micro-batch part otherwise (the loss, the forward's outputs) is the last
micro-batch's, as PopTorch returns by default. The last micro-batch stays out of the loop so
that the loop yields only the sums: a loss yielded each iteration would keep its producers
(the MSE's difference) from fusing into the backward in ipu-convert-to-ipu, which costs the
step 15-21% of its cycles. ipu-shard places the body's ops as a step's, and ipu-pipeline runs
the micro-batches as PopART's pipeline does (lowering/pipeline_training.py).
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.frontends.joint_trace import cut_marks
from ipu_mlir.lowering.accumulations import ACCUMULATE_ATTR, ACCUMULATION
from ipu_mlir.lowering.pipeline_training import remap
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
    return len(cut_marks(graph, _MARKER[0], "accumulated")) if _MARKER else 0


def accumulation_loop(module: ir.Module, sums: int, micro_batches: int, batch: range) -> None:
    """@main's last `sums` results (the gradients of a micro-batch) and arguments (their sums)
    joined by a loop over the first `micro_batches` - 1 micro-batches around clones of the ops
    reading the arguments at `batch` (one micro-batch's shape, retyped here to all of them), the
    traced ops left for the last micro-batch after it, as the module docstring shows."""
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
        first = min(inside, default=len(ops))
        anchor = ops[first] if first < len(ops) else ret
        for i in range(first, len(ops)):  # work on no micro-batch before the micro-batches, the update after them
            if i not in inside and i not in after:
                ops[i].operation.move_before(anchor)
        for i in sorted(after):
            ops[i].operation.move_before(ret)
        with main.location:
            where = ir.InsertionPoint(anchor)
            lasts = [_slice_micro_batch(block.arguments[position], micro_batches, where) for position in batch]
            totals = gradients
            if micro_batches > 1:
                loop = _build_loop(where, micro_batches - 1, lasts, gradients, body_ops)
                with ir.InsertionPoint(ops[min(after)] if after else ret):
                    totals = [_add(total, gradient, _location_of(gradient)) for total, gradient in zip(loop.results, gradients)]
        for placeholder, total in zip(placeholders, totals):
            placeholder.replace_all_uses_with(total)
        with ret.location:
            ir.Operation.create("func.return", operands=list(ret.operands)[: len(kept)], ip=ir.InsertionPoint(ret))
        ret.operation.erase()
        for index in reversed(range(len(arguments) - sums, len(arguments))):
            block.erase_argument(index)
        function_type = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        inputs = [argument.type for argument in block.arguments]
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(inputs, list(function_type.results)[: len(kept)]))


def _build_loop(where, iterations, lasts, gradients, body_ops) -> ir.Operation:
    """A loop over micro-batches 0 .. `iterations` - 1, each a clone of `body_ops` reading its
    rows where they read the last micro-batch's (`lasts`), adding its gradients into the sums."""
    index = ir.IndexType.get()

    def constant(value: int) -> ir.Value:
        return ir.Operation.create(
            "arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, value)}, ip=where
        ).result

    inits = [_zeros(value.type, where) for value in gradients]
    loop = ir.Operation.create(
        "scf.for",
        results=[value.type for value in inits],
        operands=[constant(0), constant(iterations), constant(1), *inits],
        regions=1,
        attributes={ACCUMULATE_ATTR: ir.UnitAttr.get()},
        ip=where,
    )
    body = loop.regions[0].blocks.append(index, *[value.type for value in inits])
    step, totals = body.arguments[0], list(body.arguments)[1:]
    with ir.InsertionPoint(body):
        values = {last: _rows(last, step) for last in lasts}
        for op in body_ops:
            clone = op.operation.clone(ip=ir.InsertionPoint(body))
            remap(clone, values)
            values.update(zip(op.results, clone.results))
        yielded = []
        for total, gradient in zip(totals, gradients):
            yielded.append(_add(total, values.get(gradient, gradient), ir.Location.name(ACCUMULATION, childLoc=_location_of(gradient))))
        ir.Operation.create("scf.yield", operands=yielded)
    return loop


def _location_of(value: ir.Value) -> ir.Location:
    return value.owner.location if isinstance(value.owner, ir.OpView) else ir.Location.current


def _slice_micro_batch(argument: ir.BlockArgument, micro_batches: int, where: ir.InsertionPoint) -> ir.Value:
    """`argument` (one micro-batch's shape when traced) retyped to all `micro_batches`; its users
    read the last micro-batch's rows of it (a static extract_slice), which this returns."""
    type_ = ir.RankedTensorType(argument.type)
    shape = list(type_.shape)
    if not shape:
        raise IpuError("a pipelined training step's inputs need a batch dimension")
    argument.set_type(ir.RankedTensorType.get([shape[0] * micro_batches, *shape[1:]], type_.element_type))
    sliced = _extract_rows(argument, type_, [], [(micro_batches - 1) * shape[0]], where)
    for use in list(argument.uses):
        if use.owner != sliced.owner:
            use.owner.operands[use.operand_number] = sliced
    return sliced


def _rows(last: ir.Value, step: ir.Value) -> ir.Value:
    """Micro-batch `step`'s rows of what `last`, the last micro-batch's, slices (a dynamic offset)."""
    type_ = ir.RankedTensorType(last.type)
    index = ir.IndexType.get()
    rows = ir.Operation.create("arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, type_.shape[0])})
    offset = ir.Operation.create("arith.muli", results=[index], operands=[step, rows.result]).result
    return _extract_rows(last.owner.operands[0], type_, [offset], [ir.ShapedType.get_dynamic_size()], None)


def _extract_rows(source: ir.Value, type_: ir.RankedTensorType, offsets: list, first: list[int], where) -> ir.Value:
    rank = type_.rank
    return ir.Operation.create(
        "tensor.extract_slice",
        results=[type_],
        operands=[source, *offsets],
        attributes={
            "static_offsets": ir.DenseI64ArrayAttr.get(first + [0] * (rank - 1)),
            "static_sizes": ir.DenseI64ArrayAttr.get(list(type_.shape)),
            "static_strides": ir.DenseI64ArrayAttr.get([1] * rank),
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, len(offsets), 0, 0]),
        },
        ip=where,
    ).result


def _add(total: ir.Value, gradient: ir.Value, location: ir.Location) -> ir.Value:
    with location:
        return tb.elementwise_add(total, gradient)


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
