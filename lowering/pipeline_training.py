"""A training step in pipeline order: ipu-pipeline's part for a function with device variables.

The torch front end builds a pipelined training step (PopTorch's `PipelinedExecution` with
`Training.gradientAccumulation(G)`) as one micro-batch's forward and backward in a loop over the
first G - 1 micro-batches (`ipu.accumulate`), each layer's gradients summed through it, the last
micro-batch after it, then one update (frontends/accumulation_loop.py); ipu-shard has put each
op on its layer's IPU. This unrolls the loop, a clone of the body per micro-batch
(`unroll_micro_batches`; micro-batches after it, or all of them when there is no loop, are
told apart in order, each forward after a backward beginning the next), and puts the ops in
the order of PopART's pipeline: with S IPUs there are 2S - 1 pipeline stages, the forward of IPU s, then the last IPU's forward, loss
and backward as one, then the backward of IPU s on IPU s (PopART's user guide and Graphcore's
pipelining tutorial: "layer3 forward, loss computation, layer3 backward on IPU3"). In pipeline
cycle t, IPU s runs the forward of micro-batch t - s and the backward of micro-batch
t - (2S - 2 - s): the fill of 2S - 2 cycles, then the main phase, where every IPU runs one
forward and one backward of different micro-batches a cycle (what is now called 1F1B), then the
flush of 2S - 2 cycles, G + 2S - 2 cycles in all, then each IPU's update. Within a cycle the IPUs'
ops alternate op by op, so ipu-merge-supersteps can run them in the same supersteps on their own
tiles. Each op is marked with its cycle (`ipu.pipeline_cycle`): ipu-schedule sends all the values
crossing the IPU-Links into a cycle in one link phase at its start, as PopART runs one IpuCopy
program per pipeline cycle after every stage's fragment (graphcore/popart
willow/src/popx/popprograms.cpp, getFullProgramFromPipelineFragments: the stages' fragments
"must run on different IPUs to one another" and "not entail a global exchange" to run in
parallel; the copies are "merged across pipelineStages").

PopART refuses a gradient accumulation below its pipeline stages; so does this, naming both.
"""

from __future__ import annotations

from mlir import ir

from ipu_mlir.dialects.ops import record_of
from ipu_mlir.dialects.ops.gather import Gather
from ipu_mlir.target.diagnostics import op_error

from .accumulations import ACCUMULATE_ATTR, ACCUMULATION, location_names
from .plan import IPU_ID_ATTR
from .shard import step_phase

PIPELINE_CYCLE_ATTR = "ipu.pipeline_cycle"


def order_training_step(function: ir.OpView, micro_batches: int) -> None:
    """Moves the ops of `function` (a training step of `micro_batches` micro-batches, sharded)
    into pipeline order."""
    block = function.regions[0].blocks[0]
    unrolled = unroll_micro_batches(function, micro_batches)
    operations = list(block.operations)
    terminator, body = operations[-1], operations[:-1]
    phases = [step_phase(op) for op in body]
    ipus = sorted({_ipu_of(op) for op, phase in zip(body, phases) if phase == "forward"} - {None})
    if not ipus:
        raise op_error(
            function,
            "ipu-pipeline: device variables (training), but no op's location names a forward phase "
            "(the torch front end's phase:forward): not a training step it can pipeline",
        )
    stages = 2 * len(ipus) - 1
    if micro_batches < stages:
        raise op_error(
            function,
            f"ipu-pipeline: gradient accumulation of {micro_batches} micro-batches is fewer than the {stages} pipeline stages "
            f"of a training step over {len(ipus)} IPUs (2 x IPUs - 1, PopART's rule): accumulate at least {stages}",
        )
    rank = {ipu: position for position, ipu in enumerate(ipus)}
    last = len(ipus) - 1
    keys: dict[ir.Value, tuple[int, int]] = {}
    order, micro_batch, previous, groups = [], 0, "", {}
    for index, (op, phase) in enumerate(zip(body, phases)):
        if _ipu_of(op) is None:  # constants and the like (ipu-shard places none), hoisted: before their users
            phase = ""
        if op.operation in unrolled:  # a clone of the loop's body: its micro-batch known
            micro_batch = unrolled[op.operation]
        elif phase == "forward" and previous == "backward":  # the next forward after the loop's or the front end's
            micro_batch += 1
        previous = phase or previous
        stage = rank.get(_ipu_of(op), 0)
        if phase == "forward":
            own = (micro_batch + stage, 0)
        elif phase == "backward":
            own = (micro_batch + 2 * last - stage, 1)
        elif phase == "update":
            own = (micro_batches + 2 * last, 2)
        else:
            own = (-1, 0)  # with the latest of its operands
        key = max([own, *(keys[operand] for operand in op.operands if operand in keys)])
        keys.update((result, key) for result in op.results)
        if key[0] >= 0:
            op.attributes[PIPELINE_CYCLE_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), key[0])
        group = (key, stage)
        groups[group] = groups.get(group, -1) + 1
        order.append((key, groups[group], stage, index))
    if micro_batch + 1 != micro_batches:
        raise op_error(
            function, f"ipu-pipeline: the training step holds {micro_batch + 1} micro-batches, not micro-batches={micro_batches}"
        )
    interleaved = [index for *_, index in sorted(order)]
    if not _in_dependence_order(body, interleaved):
        interleaved = [index for _, _, _, index in sorted(order, key=lambda entry: (entry[0], entry[3]))]
    for index in interleaved:
        body[index].operation.move_before(terminator)


def _in_dependence_order(body: list[ir.OpView], order: list[int]) -> bool:
    """Whether every op of `body` comes after the ops defining its operands in `order`."""
    defined = {result for op in body for result in op.results}
    seen: set[ir.Value] = set()
    for index in order:
        op = body[index]
        if any(operand in defined and operand not in seen for operand in op.operands):
            return False
        seen.update(op.results)
    return True


def _ipu_of(op: ir.OpView) -> int | None:
    attribute = op.attributes[IPU_ID_ATTR] if IPU_ID_ATTR in op.attributes else None
    return ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else None


def unroll_micro_batches(function: ir.OpView, micro_batches: int) -> dict[ir.Operation, int]:
    """The function's loop over its micro-batches (frontends/accumulation_loop.py) replaced by
    its body once per micro-batch, in place; each clone's micro-batch, and the next for the
    forward and backward ops after the loop (the last micro-batch's; {} without a loop)."""
    block = function.regions[0].blocks[0]
    loop = next((op for op in block.operations if ACCUMULATE_ATTR in op.attributes), None)
    if loop is None:
        return {}
    bounds = [ir.IntegerAttr(op.owner.attributes["value"]).value for op in list(loop.operands)[:3]]
    if bounds[0] != 0 or bounds[2] != 1 or not 0 < bounds[1] <= micro_batches:
        raise op_error(loop, f"ipu-pipeline: the loop over the step's micro-batches is not 0 to at most micro-batches={micro_batches} by 1")
    iterations = bounds[1]
    body = loop.regions[0].blocks[0]
    *ops, terminator = body.operations
    arguments = list(body.arguments)
    carried = list(loop.operands)[3:]
    micro_batch_of: dict[ir.Operation, int] = {}
    reads = _micro_batch_reads(body, micro_batches)
    indices = {gather.operands[1].owner.operation for gather in reads}
    with ir.InsertionPoint(loop), loop.location:
        index = ir.IndexType.get()
        for m in range(iterations):
            values = dict(zip(arguments[1:], carried))
            if any(True for _ in arguments[0].uses):  # the loop's index, a constant in each clone
                values[arguments[0]] = ir.Operation.create(
                    "arith.constant", results=[index], attributes={"value": ir.IntegerAttr.get(index, m)}
                ).result
            for op in ops:
                if op.operation in indices:  # a micro-batch's rows, read statically below
                    continue
                if op.operation in reads:
                    rows = _rows_of(values.get(op.operands[0], op.operands[0]), m, op)
                    values[op.results[0]] = rows.result
                    micro_batch_of[rows] = m
                    continue
                same = _folded(op, values)
                if same is not None:  # micro-batch 0's sum is its gradient; a reshape undone
                    values[op.results[0]] = same
                    continue
                clone = op.operation.clone()
                remap(clone, values)
                values.update(zip(op.results, clone.results))
                micro_batch_of[clone] = m
            carried = [values.get(v, v) for v in terminator.operands]
    for result, value in zip(loop.results, carried):
        result.replace_all_uses_with(value)
    operations = list(block.operations)
    after_loop = operations[operations.index(loop) + 1 :]
    inits = list(dict.fromkeys(value.owner.operation for value in list(loop.operands)[3:] if isinstance(value.owner, ir.OpView)))
    loop.operation.erase()
    for init in inits:  # the initial zeros micro-batch 0 did not add to, the loss's (cse may have made them one)
        if init.name == "arith.constant" and not any(True for _ in init.results[0].uses):
            init.erase()
    for clone in reversed(list(micro_batch_of)):  # what only the gathers read (the loop's counter), last first
        if not any(True for result in clone.results for _ in result.uses):
            del micro_batch_of[clone]
            clone.erase()
    for op in after_loop:  # the micro-batch after the loop (the front end's last), its next
        if step_phase(op) in ("forward", "backward"):
            micro_batch_of[op.operation] = iterations
    return micro_batch_of


def _folded(op: ir.OpView, values: dict[ir.Value, ir.Value]) -> ir.Value | None:
    """What a clone of `op` would compute that another value holds already: an addition of a
    running gradient sum (located ipu.accumulate) to the loop's initial zeros is the gradient,
    as the front end's unrolled sums began (bit for bit: 0 + g is g but for -0.0); an
    expand_shape of a collapse_shape back to its source's type is that source."""
    operands = [values.get(v, v) for v in op.operands]
    name = op.operation.name
    if name == "tensor.expand_shape":
        source = operands[0].owner
        if isinstance(source, ir.OpView) and source.operation.name == "tensor.collapse_shape":
            if source.operands[0].type == op.results[0].type:
                return source.operands[0]
        return None
    if name != "linalg.generic" or not location_names(op.location, ACCUMULATION) or len(operands) != 3:
        return None
    inner = list(op.regions[0].blocks[0].operations)
    if len(inner) != 2 or inner[0].operation.name != "arith.addf" or list(inner[0].operands) != list(op.regions[0].blocks[0].arguments)[:2]:
        return None
    total, gradient = operands[0], operands[1]
    if total.type == gradient.type == op.results[0].type and _zero(total):
        return gradient
    return None


def _zero(value: ir.Value) -> bool:
    """Whether `value` is a splat 0 constant, or a reshape of one."""
    owner = value.owner
    while isinstance(owner, ir.OpView) and owner.operation.name in ("tensor.expand_shape", "tensor.collapse_shape"):
        owner = owner.operands[0].owner
    if not isinstance(owner, ir.OpView) or owner.operation.name != "arith.constant":
        return False
    attribute = owner.attributes["value"]
    if not isinstance(attribute, ir.DenseElementsAttr) or not ir.DenseElementsAttr(attribute).is_splat:
        return False
    splat = ir.DenseElementsAttr(attribute).get_splat_value()
    return isinstance(splat, ir.FloatAttr) and splat.value == 0.0


def _micro_batch_reads(body: ir.Block, micro_batches: int) -> set[ir.Operation]:
    """The loop's reads of micro-batch m's rows of an input: ipu-convert-to-ipu's dynamic slice
    of the front end's `extract_slice` at `m x rows` (lowering/dynamic_slices.py), an ipu.gather
    of rows of a tensor the loop does not change at indices a generic computes from the loop's
    counter alone (its only user), the tensor `micro_batches` times the rows it reads. Unrolled,
    micro-batch m's are a static slice, as when the front end unrolled the micro-batches."""
    variant = set(body.arguments)
    for op in body.operations:
        if any(operand in variant for operand in op.operands):
            variant.update(op.results)
    reads = set()
    for op in body.operations:
        if not isinstance(record_of(op), Gather):
            continue
        table, indices = op.operands[0], op.operands[1]
        producer = indices.owner
        if table in variant or not isinstance(producer, ir.OpView) or producer.operation.name != "linalg.generic":
            continue
        inputs = list(producer.operands)[: len(producer.operands) - len(producer.results)]
        from_counter = [v for v in inputs if v in variant]
        single = len(list(indices.uses)) == 1
        rows = ir.RankedTensorType(op.results[0].type).shape[0]
        if single and len(from_counter) == 1 and from_counter[0] in list(body.arguments) and _shape(table)[0] == micro_batches * rows:
            reads.add(op.operation)
    return reads


def _rows_of(table: ir.Value, micro_batch: int, gather: ir.OpView) -> ir.Operation:
    """`gather`'s result for `micro_batch`: its rows of `table`, a static slice."""
    shape, result = _shape(table), ir.RankedTensorType(gather.results[0].type)
    attributes = {
        "static_offsets": ir.DenseI64ArrayAttr.get([micro_batch * result.shape[0]] + [0] * (len(shape) - 1)),
        "static_sizes": ir.DenseI64ArrayAttr.get(list(result.shape)),
        "static_strides": ir.DenseI64ArrayAttr.get([1] * len(shape)),
        "operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 0, 0, 0]),
    }
    if IPU_ID_ATTR in gather.attributes:
        attributes[IPU_ID_ATTR] = gather.attributes[IPU_ID_ATTR]
    return ir.Operation.create("tensor.extract_slice", results=[result], operands=[table], attributes=attributes, loc=gather.location)


def _shape(value: ir.Value) -> list[int]:
    return list(ir.RankedTensorType(value.type).shape)


def remap(op: ir.Operation, values: dict[ir.Value, ir.Value]) -> None:
    """`op`'s operands, and those its regions take from outside, read through `values`."""
    for i, operand in enumerate(op.operands):
        if operand in values:
            op.operands[i] = values[operand]
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                remap(inner.operation, values)
