"""Data-dependent control flow in a simulator plan (runtime/planner.py calls these): `scf.if`
as Poplar's If, `scf.index_switch` as its Switch, `scf.while` as its RepeatWhileTrue, each
block planned once into steps (runtime/steps.py `If`, `Switch`, `While`) and counted as it runs.

A predicate (`ipu.predicate`) is priced as Poplar's If and RepeatWhileTrue need it (an
assumption: the predicate is brought to every tile's control code): a superstep of its own, the
tile holding it sending its element once to every tile, then a sync; the exchange and the sync
are priced by target/cost_model.py's sourced figures.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu

from .memory import Site
from .regions import copy_region
from .steps import Count, If, Predicate, Switch, While


def predicate_of(planner, value: ir.Value, site: Site) -> Predicate:
    """The step reading the device scalar `value` (an `ipu.predicate`, or an `arith.constant`
    decided when compiling: nothing to read), its superstep added to `planner`'s."""
    op = value.owner
    if isinstance(op, ir.OpView) and op.operation.name == "arith.constant":
        return Predicate(site, None, None, ir.IntegerAttr(op.attributes["value"]).value)
    if not isinstance(op, ipu.PredicateOp):
        raise site.error("needs a condition read by ipu.predicate (or an arith.constant)")
    buffer = planner._buffer(op.buffer, site)
    tile = np.array([op.tile])
    planner._close(None)
    every = np.arange(planner.target.num_tiles)
    planner.current.add_exchange(tile, every, buffer.element_bytes, planner.target.num_tiles, planner._record(site, source=buffer.name))
    planner._close("internal")
    return Predicate(site, buffer, copy_region(buffer.rows(tile, site, "reads"), tile, np.zeros(1, np.int64), 1))


def blocks_of(planner, op: ir.OpView) -> tuple[list[list], list[Count]]:
    """The steps of `op`'s blocks, each a superstep run of its own counted as it runs (`Count`;
    the later plan takes the checked plan's counts, block by block in program order)."""
    outer = planner.repeat, planner.count
    blocks, counts = [], []
    predicate = None
    for region in op.regions:
        if len(planner.counts) == len(planner.counted_blocks):
            planner.counts.append(Count())
        count = planner.counts[len(planner.counted_blocks)]
        planner.counted_blocks.append(count)
        planner._close(None)  # a block starts a superstep, counted with it
        planner.repeat, planner.count = 1, count
        planner.counted.append((planner.current, count, 1))
        planner.depth += 1
        blocks.append(planner._block(region.blocks[0]) if len(region.blocks) else [])
        planner.depth -= 1
        if op.operation.name == "scf.while" and not counts:  # the before block's scf.condition
            predicate = planner.predicate
        planner._close(None)
        planner.repeat, planner.count = outer
        counts.append(count)
    if predicate is not None:
        planner.predicate = predicate  # a while loop in the body planned its own
    return blocks, counts


def plan_if(planner, op: ir.OpView, site: Site) -> If:
    predicate = predicate_of(planner, op.operands[0], site)
    blocks, counts = blocks_of(planner, op)
    return If(predicate, (blocks[0], blocks[1]), (counts[0], counts[1]))


def plan_switch(planner, op: ir.OpView, site: Site) -> Switch:
    predicate = predicate_of(planner, op.operands[0], site)
    blocks, counts = blocks_of(planner, op)
    cases = {value: k + 1 for k, value in enumerate(ir.DenseI64ArrayAttr(op.attributes["cases"]))}
    return Switch(predicate, cases, blocks, counts)


def plan_while(planner, op: ir.OpView, site: Site) -> While:
    if len(op.operands) or len(op.results):
        raise site.error("with values flowing through it is not supported in an ipu program (they live in buffers)")
    blocks, counts = blocks_of(planner, op)
    return While(planner.predicate, (blocks[0], blocks[1]), (counts[0], counts[1]))
