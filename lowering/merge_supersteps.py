"""`ipu-merge-supersteps` (L3): independent work on disjoint tiles shares a superstep.

The pass's docstring (`ipu-opt --help-pass ipu-merge-supersteps`) explains it, with a before/after example.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from mlir import ir
from mlir.dialects import func

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.program import OpOrder, Program
from ipu_mlir.target import target_of

from .exchange import crosses_ipus
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
    superstep then costs the slower of the two instead of both plus a sync. With `lookahead`
    N > 1, B may be any of the N supersteps after A that moves up past those between them (it
    reads nothing they write and writes nothing they touch): the stages of a pipeline
    (ipu-pipeline) on their own IPUs. B's copies over the IPU-Links make A's phase a link phase.
    B does not move up past a link phase of its own (an exchange-only superstep crossing IPUs: a
    pipeline cycle's, ipu-schedule): the stages of one cycle share supersteps, the next cycle's
    wait for the crossings, as PopART's IpuCopy program ends each pipeline cycle.

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

    lookahead: int = field(
        default=1,
        metadata={
            "help": "supersteps searched after a compute set for independent work to join it (ipu-pipeline: the stages')",
            "minimum": 1,
        },
    )

    def run(self, module: ir.Operation) -> None:
        merger = _Merger(module, self.lookahead)
        if self.lookahead == 1:
            apply_execute_pattern(module, merger.rewrite)
            return
        # In program order, each compute set taking all it can before the next is tried: a
        # pipeline step's first superstep gathers every stage's first one, and so on.
        for key, execute in [(hash(op), op) for op in merger.order.next if op.name == "ipu.execute"]:
            while key not in merger.merged_away and not merger.rewrite(execute, _Eraser()):
                pass


class _Merger:
    def __init__(self, module: ir.Operation, lookahead: int):
        self.body = module.regions[0].blocks[0]
        self.program = Program(module)
        self.order = OpOrder(module)
        self.lookahead = lookahead
        self.tiles_per_ipu = target_of(module).tiles_per_ipu
        # The executes merged into another, by address (an op's hash; the bindings give one op
        # several Python objects, and an erased op's cannot be hashed).
        self.merged_away: set[int] = set()

    def rewrite(self, first, rewriter) -> bool:
        """Returns True when the pattern does not apply (the bindings' convention)."""
        first = first.opview if isinstance(first, ir.Operation) else first
        program = self.program
        reads_a, writes_a = (set(names) for names in program.accesses(first))
        # The exchange phase before A: B's copies must not read what it writes, nor write twice.
        previous = self.order.run_before(first.operation, "ipu.copy")
        earlier_dests = {name for c in previous for name in program.writes(c)}
        earlier_sources = {name for c in previous for name in program.reads(c)}
        groups_a = program.groups(first.compute_set)
        tiles_a = np.concatenate([g.tiles.tiles() for g in groups_a])
        # What the supersteps between A and B read and write: B moves up past them.
        between_reads, between_writes = set(), set()
        sync = self.order.after(first.operation)
        for _ in range(self.lookahead):
            if sync is None or sync.name != "ipu.sync":
                return True
            copies, op = self.order.run_after(sync, "ipu.copy")
            kind = ir.StringAttr(sync.attributes["kind"]).value
            if kind not in ("internal", "global") or op is None or op.name not in ("ipu.execute", "ipu.sync"):
                return True
            if op.name == "ipu.sync" and any(crosses_ipus(c.opview.src_tiles, c.opview.dst_tiles, self.tiles_per_ipu) for c in copies):
                return True  # a link phase of its own: the next pipeline cycle's work waits for it
            reads_b, writes_b = set(), set()
            for copy in copies:
                reads_b.update(program.reads(copy))
                writes_b.update(program.writes(copy))
            if op.name == "ipu.execute":
                second = op.opview
                reads, writes = program.accesses(second)
                reads_b.update(reads)
                writes_b.update(writes)
                written = writes_a | earlier_dests | between_writes
                independent = not (reads_b & written or writes_b & (reads_a | written | earlier_sources | between_reads))
                groups_b = program.groups(second.compute_set)
                tiles_b = np.concatenate([g.tiles.tiles() for g in groups_b])
                if (
                    independent
                    and not np.intersect1d(tiles_a, tiles_b).size
                    and self._merge(first, sync, kind, copies, op, previous, rewriter)
                ):
                    return False
            # B moves up past this superstep (an exchange-only one too: a slice of an input).
            between_reads |= reads_b
            between_writes |= writes_b
            sync = self.order.after(op) if op.name == "ipu.execute" else op
        return True

    def _merge(self, first, sync, kind: str, copies, execute: ir.Operation, previous, rewriter) -> bool:
        """B's copies join A's exchange phase, B's vertex groups A's compute set; B's sync goes.
        Copies over the IPU-Links (B's phase opened by a global sync) make A's phase a link
        phase: its sync becomes a global one (an internal sync only orders one IPU's tiles)."""
        program, second = self.program, execute.opview
        opening = self.order.before(previous[-1] if previous else first.operation)
        if kind == "global" and (opening is None or opening.name != "ipu.sync"):
            return False
        if kind == "global" and ir.StringAttr(opening.attributes["kind"]).value == "internal":
            opening.attributes["kind"] = ir.StringAttr.get("global")
        groups_a, groups_b = program.groups(first.compute_set), program.groups(second.compute_set)
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
        # An op's hash is its contents': re-key A in the order around the change.
        anchor = self.order.after(first.operation)
        self.order.remove(first.operation)
        first.attributes["compute_set"] = ir.FlatSymbolRefAttr.get(name)
        self.order.move_before(first.operation, anchor)
        self.merged_away.add(hash(execute))
        for op in (sync, execute):
            self.order.remove(op)
            rewriter.erase_op(op)
        for op in old:
            program.forget(op)
            rewriter.erase_op(op.operation)
        return True


class _Eraser:
    """The one rewriter call `_Merger` makes, outside the greedy driver."""

    @staticmethod
    def erase_op(op: ir.Operation) -> None:
        op.erase()
