"""A training step in pipeline order: ipu-pipeline's part for a function with device variables.

The torch front end builds a pipelined training step (PopTorch's `PipelinedExecution` with
`Training.gradientAccumulation(G)`) with its G micro-batches' forward and backward passes
unrolled, each layer's gradients summed over them, and one update (frontends/joint.py); ipu-shard
has put each op on its layer's IPU. This puts the ops in the order of PopART's pipeline: with S
IPUs there are 2S - 1 pipeline stages, the forward of IPU s, then the last IPU's forward, loss
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

from ipu_mlir.target.diagnostics import op_error

from .plan import IPU_ID_ATTR
from .shard import step_phase

PIPELINE_CYCLE_ATTR = "ipu.pipeline_cycle"


def order_training_step(function: ir.OpView, micro_batches: int) -> None:
    """Moves the ops of `function` (a training step of `micro_batches` micro-batches, sharded)
    into pipeline order."""
    block = function.regions[0].blocks[0]
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
        if phase == "forward" and previous == "backward":  # the next micro-batch's forward begins
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
