"""`ipu-merge-supersteps` (L3): independent work on disjoint tiles shares a superstep.

The pass's docstring (`ipu-opt --help-pass ipu-merge-supersteps`) explains it, with a before/after example.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import func

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.program import OpOrder, Program

from .fuse import apply_execute_pattern
from .pass_registry import ModulePass, register_pass


@register_pass
@dataclass
class MergeSupersteps(ModulePass):
    """Put independent compute sets on disjoint tiles into one superstep (L3).

    Rewrite pattern on `ipu.execute`: compute set A, its sync, the exchange phase of the next
    superstep and compute set B become one superstep when B does not depend on A (B and its
    exchanges read nothing A writes, and write nothing A reads or writes) and A and B run on
    disjoint tiles. B's exchanges join A's exchange phase; both compute sets run as one. The
    superstep then costs the slower of the two instead of both plus a sync.

    Before:

        "ipu.copy"() {source = @x, dest = @a_in, ...}
        "ipu.execute"() {compute_set = @a_cs}     // tiles 0..7
        "ipu.sync"() {kind = "internal"}
        "ipu.copy"() {source = @y, dest = @b_in, ...}
        "ipu.execute"() {compute_set = @b_cs}     // tiles 8..15
        "ipu.sync"() {kind = "internal"}

    After:

        "ipu.copy"() {source = @x, dest = @a_in, ...}
        "ipu.copy"() {source = @y, dest = @b_in, ...}
        "ipu.execute"() {compute_set = @a_cs_b_cs}
        "ipu.sync"() {kind = "internal"}
    """

    name = "ipu-merge-supersteps"

    def run(self, module: ir.Operation) -> None:
        apply_execute_pattern(module, _Merger(module).rewrite)


class _Merger:
    def __init__(self, module: ir.Operation):
        self.body = module.regions[0].blocks[0]
        self.program = Program(module)
        self.order = OpOrder(module)

    def rewrite(self, first, rewriter) -> bool:
        """Returns True when the pattern does not apply (the bindings' convention)."""
        following = self.order.next_superstep(first.operation)
        if following is None:
            return True
        sync, copies, op = following
        if ir.StringAttr(sync.attributes["kind"]).value != "internal" or op is None or op.name != "ipu.execute":
            return True
        second, program = op.opview, self.program
        reads_a, writes_a = (set(names) for names in program.accesses(first))
        reads_b, writes_b = (set(names) for names in program.accesses(second))
        for copy in copies:
            reads_b.update(program.reads(copy))
            writes_b.update(program.writes(copy))
        # The exchange phase before A: B's copies must not read what it writes, nor write twice.
        previous = self.order.run_before(first.operation, "ipu.copy")
        earlier_dests = {name for c in previous for name in program.writes(c)}
        earlier_sources = {name for c in previous for name in program.reads(c)}
        if reads_b & (writes_a | earlier_dests) or writes_b & (reads_a | writes_a | earlier_dests | earlier_sources):
            return True
        groups_a, groups_b = program.groups(first.compute_set), program.groups(second.compute_set)
        tiles_a = np.concatenate([g.tiles.tiles() for g in groups_a])
        tiles_b = np.concatenate([g.tiles.tiles() for g in groups_b])
        if np.intersect1d(tiles_a, tiles_b).size:
            return True
        name = program.fresh(f"{first.compute_set}_{second.compute_set}")
        merged = ipu.compute_set_function(name, loc=first.location, ip=ir.InsertionPoint(self.body))
        with ir.InsertionPoint(merged.regions[0].blocks[0]), first.location:
            for group in groups_a + groups_b:
                group.operation.clone()
            func.ReturnOp([])
        old = [program.lookup(first.compute_set), program.lookup(second.compute_set)]
        program.insert(merged)
        for copy in copies:
            self.order.move_before(copy, first.operation)
        first.attributes["compute_set"] = ir.FlatSymbolRefAttr.get(name)
        for op in (sync, second.operation):
            self.order.remove(op)
            rewriter.erase_op(op)
        for op in old:
            program.forget(op)
            rewriter.erase_op(op.operation)
        return False
