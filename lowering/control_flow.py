"""Data-dependent control flow through `ipu-plan` and `ipu-schedule` (L1 -> L3): `scf.if` as
Poplar's `If`, `scf.index_switch` as its `Switch`, `scf.while` as its `RepeatWhileTrue`.

The condition is a device scalar: the 0-d `tensor<i1>` a predicate (`tensor.extract`, made by
lowering/scalars.py) reads. At L3 `ipu.predicate` reads it from its buffer on its one tile, which
the simulator prices as a broadcast of it to every tile and a sync (docs/compiler.md). Blocks
are scheduled once, in program order, like an `scf.for` body:

- `scf.if` (and `scf.index_switch`, its default block first): each value it yields gets a
  buffer, in the layout the first block's yield has; each block's yield copies its values
  there (an exchange where layouts differ). Every block's buffers are in the program, so the
  memory plan places them all (an If's used by one block only may share bytes with the other's,
  the blocks exclude each other; ipu-memory-plan keeps a Switch's live through all of it).
- `scf.while`: each value the loop carries gets a buffer in its initial value's layout (copied
  in before the loop); each value the condition hands to the body (and out of the loop) stays
  in the buffer the before block left it in (nothing writes it again before the body has run);
  the body's `scf.yield` copies into the carried buffers. L3 keeps the two blocks: `scf.while`
  with no values, its before block ending in `scf.condition(ipu.predicate)`.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import scf

from ipu_mlir.dialects import ipu
from ipu_mlir.target.diagnostics import op_error


def plan_branches(planner, op: ir.OpView) -> None:
    """ipu-plan's part: `scf.if` (Poplar's If), `scf.index_switch` (Switch) and `scf.while`
    (RepeatWhileTrue), each block planned once by `planner` (lowering/plan.py). A value flowing
    out of a block (an If's or a Switch's result, a value a while loop carries or hands from its
    condition to its body) keeps the layout it has where it is first yielded; ipu-schedule
    copies the other blocks' yields there."""
    blocks = [region.blocks[0] for region in op.regions if len(region.blocks)]
    if op.operation.name == "scf.while":  # carried: the initial values' layouts
        for index, (init, carried) in enumerate(zip(op.operands, blocks[0].arguments)):
            if init in planner.unplaced:
                planner.place_unplaced(init, planner.default_layout(_shape(init)))
            if init not in planner.layouts:
                raise op_error(op, f"carries a tensor.empty (#{index}): a carried tensor needs an initial value (fill it)")
            planner.layouts[carried] = planner.layouts[init]
    for k, block in enumerate(blocks):
        planner.plan_block(block)
        terminator = block.operations[len(block.operations) - 1]
        yielded = list(terminator.operands)[1 if terminator.operation.name == "scf.condition" else 0 :]
        for index, value in enumerate(yielded):
            if value in planner.unplaced:
                planner.place_unplaced(value, planner.default_layout(_shape(value)))
            if value not in planner.layouts:
                raise op_error(terminator, f"yields a tensor.empty (#{index}): a value with no data (fill it)")
        if k == 0 or op.operation.name != "scf.while":
            for result in op.results:
                planner.layouts.setdefault(result, planner.layouts[yielded[result.result_number]])
        if k == 0 and op.operation.name == "scf.while":
            planner.layouts.update(zip(blocks[1].arguments, (planner.layouts[v] for v in op.results)))


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def predicate(scheduler, op: ir.OpView, condition: ir.Value) -> ir.Value:
    """`ipu.predicate` reading the device scalar the predicate `condition` extracts (and casts
    to `index`, a switch's)."""
    extract = condition.owner
    if not isinstance(extract, ir.Block) and extract.name == "arith.index_cast":
        extract = extract.operands[0].owner
    if isinstance(extract, ir.Block) or extract.name != "tensor.extract" or len(extract.operands) != 1:
        raise op_error(op, "has a condition that is not read from a 0-d tensor (run ipu-convert-to-ipu first)")
    stored = scheduler.get(op, extract.operands[0])
    return ipu.predicate(stored.buffer, stored.layout.first_tile, condition.type, ip=scheduler.ip).result


def schedule_if(scheduler, op: ir.OpView) -> None:
    condition = predicate(scheduler, op, op.operands[0])
    branch = scf.IfOp(condition, [], has_else=True, ip=scheduler.ip)
    outer = scheduler.ip
    for old, new in ((op.regions[0], branch.then_block), (op.regions[1], branch.else_block)):
        scheduler.ip = ir.InsertionPoint(new)
        if len(old.blocks):
            for inner in old.blocks[0].operations:
                scheduler.lower(inner)
        else:
            scf.YieldOp([], ip=scheduler.ip)
    scheduler.ip = outer


def schedule_switch(scheduler, op: ir.OpView) -> None:
    """`scf.index_switch` as Poplar's Switch: like an If, a block per case and the default."""
    index = predicate(scheduler, op, op.operands[0])
    regions = len(op.regions)
    attributes = {"cases": op.attributes["cases"]}
    switch = ir.Operation.create("scf.index_switch", operands=[index], attributes=attributes, regions=regions, ip=scheduler.ip)
    outer = scheduler.ip
    for old, new in zip(op.regions, switch.regions):
        scheduler.ip = ir.InsertionPoint(new.blocks.append())
        for inner in old.blocks[0].operations:
            scheduler.lower(inner)
    scheduler.ip = outer


def schedule_while(scheduler, op: ir.OpView) -> None:
    before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
    for init, carried in zip(op.operands, before.arguments):
        source = scheduler.get(op, init)
        buffer = scheduler.buffer("carried", source.layout, ir.RankedTensorType(init.type).element_type, op.location)
        scheduler.copy(source, buffer, source.layout)
        scheduler.stored[carried] = type(source)(buffer, source.layout)
    inits_end = ipu.sync("internal", ip=scheduler.ip) if len(op.operands) else None
    loop = scf.WhileOp([], [], ip=scheduler.ip)
    outer, preheader = scheduler.ip, scheduler.preheader
    scheduler.preheader = preheader or ir.InsertionPoint(loop.operation)
    if preheader is None and inits_end is not None:  # the crossings into the loop join the inits' copies
        scheduler.preheader_end[scheduler.preheader] = inits_end
    for old, region in ((before, loop.before), (after, loop.after)):
        scheduler.ip = ir.InsertionPoint(region.blocks.append())
        for inner in old.operations:
            scheduler.lower(inner)
    scheduler.ip, scheduler.preheader = outer, preheader


def condition(scheduler, op: ir.OpView) -> None:
    """The end of a while loop's before block: the values handed to the body (and out of the
    loop) stay where the before block left them (nothing writes them until it runs again), then
    the predicate is read and the loop decides."""
    loop = op.operation.parent
    for value, argument, result in zip(list(op.operands)[1:], loop.regions[1].blocks[0].arguments, loop.results):
        scheduler.stored[argument] = scheduler.stored[result] = scheduler.get(op, value)
    scf.ConditionOp(predicate(scheduler, op, op.operands[0]), [], ip=scheduler.ip)


def yield_targets(scheduler, op: ir.OpView) -> list:
    """Where the values an `scf.yield` of an If or a while loop's body go: the If's result
    buffers (made in the layouts of the first yield scheduled), the loop's carried buffers."""
    owner = op.operation.parent
    if owner.name == "scf.while":
        return [scheduler.stored[carried] for carried in owner.regions[0].blocks[0].arguments]
    targets = []
    for value, result in zip(op.operands, owner.results):
        if result not in scheduler.stored:
            source = scheduler.get(op, value)
            buffer = scheduler.buffer("branch", source.layout, ir.RankedTensorType(value.type).element_type, owner.location)
            scheduler.stored[result] = type(source)(buffer, source.layout)
        targets.append(scheduler.stored[result])
    return targets
