"""`ipu-merge-supersteps` (L3): independent work on disjoint tiles shares a superstep.

The pass's docstring (`ipu-opt --help-pass ipu-merge-supersteps`) explains it, with a before/after example.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir
from mlir.dialects import func

from ipu_mlir.dialects import ipu

from .fuse import Sequence, _name, apply_execute_pattern, groups_of
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
        self.symbols = {_name(op): op for op in self.body.operations if "sym_name" in op.attributes}
        self.sequence = Sequence(module)

    def previous_copies(self, op: ir.Operation) -> list:
        """The exchange phase in front of `op`."""
        copies = []
        op = self.sequence.before(op)
        while op is not None and op.name == "ipu.copy":
            copies.append(op)
            op = self.sequence.before(op)
        return copies

    def rewrite(self, first, rewriter) -> bool:
        """Returns True when the pattern does not apply (the bindings' convention)."""
        sync = self.sequence.after(first.operation)
        if sync is None or sync.name != "ipu.sync" or ir.StringAttr(sync.attributes["kind"]).value != "internal":
            return True
        copies, op = [], self.sequence.after(sync)
        while op is not None and op.name == "ipu.copy":
            copies.append(op)
            op = self.sequence.after(op)
        if op is None or op.name != "ipu.execute":
            return True
        second = op.opview
        groups_a, groups_b = groups_of(self.symbols, first), groups_of(self.symbols, second)
        writes_a = {name for g in groups_a for name in g.outputs}
        reads_a = {name for g in groups_a for name in g.inputs}
        reads_b = {name for g in groups_b for name in g.inputs} | {c.opview.source for c in copies}
        writes_b = {name for g in groups_b for name in g.outputs} | {c.opview.dest for c in copies}
        # The exchange phase before A: B's copies must not read what it writes, nor write twice.
        previous = self.previous_copies(first.operation)
        earlier_dests = {c.opview.dest for c in previous}
        earlier_sources = {c.opview.source for c in previous}
        if reads_b & (writes_a | earlier_dests) or writes_b & (reads_a | writes_a | earlier_dests | earlier_sources):
            return True
        tiles_a = np.concatenate([g.tiles.tiles() for g in groups_a])
        tiles_b = np.concatenate([g.tiles.tiles() for g in groups_b])
        if np.intersect1d(tiles_a, tiles_b).size:
            return True
        name = f"{first.compute_set}_{second.compute_set}"
        merged = ipu.compute_set_function(name, loc=first.location, ip=ir.InsertionPoint(self.body))
        with ir.InsertionPoint(merged.regions[0].blocks[0]), first.location:
            for group in groups_a + groups_b:
                group.operation.clone()
            func.ReturnOp([])
        old = [self.symbols.pop(first.compute_set), self.symbols.pop(second.compute_set)]
        self.symbols[name] = merged.operation
        for copy in copies:
            self.sequence.move_before(copy, first.operation)
        first.attributes["compute_set"] = ir.FlatSymbolRefAttr.get(name)
        for op in (sync, second.operation):
            self.sequence.remove(op)
            rewriter.erase_op(op)
        for op in old:
            rewriter.erase_op(op.operation)
        return False


