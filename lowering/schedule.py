"""`ipu-schedule` (L2 -> L3): buffers, exchanges and BSP supersteps from a planned function.

The pass's docstring (`ipu-opt --help-pass arg0`) explains it, with a before/after example.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func, scf, tensor

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import Piece, record_of, space_of
from ipu_mlir.dialects.ops.space import SUM, Space
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import op_error

from . import codelets, control_flow
from .exchange import open_link_phases
from .layout import Layout, Parts
from .layout_algebra import (
    Partition,
    Read,
    collapse_layout,
    expand_layout,
    halo_storage,
    mapping_of,
    operand_layout,
    reads,
    replicas,
    result_mapping,
    slice_view,
)
from .normalize_l1 import rank_drop
from .pass_registry import ModulePass, register_pass
from .pipeline_training import PIPELINE_CYCLE_ATTR
from .resident import declare_variable, resident_names, update_variables
from .scalars import is_predicate
from .schedule_state import BlockUses, Storage, TransferPlans
from .select_entry import public_functions


@dataclass(frozen=True)
class Stored:
    buffer: str
    layout: Layout


@register_pass
@dataclass
class Schedule(ModulePass):
    """Lower a planned function to an L3 program of buffers, exchanges and compute sets.

    Every tensor of the planned entry function becomes an `ipu.buffer` holding each tile's block
    (views for reshapes, and for slices only generics read: the shifted slices of one tensor
    are one piece of it, each a window of it in the codelet); every compute op becomes one
    superstep: an exchange phase of `ipu.copy` patterns bringing each tile the operand pieces
    its part reads (`lowering/exchange.py`), the
    compute set running one vertex group per class of alike tiles, and a sync. A tensor read on
    another IPU crosses the IPU-Links to it once; its other readers there copy it on that IPU,
    or read that copy when they want its layout. In a pipelined training step (ops marked with
    their `ipu.pipeline_cycle` by ipu-pipeline) the values crossing into a cycle, all made in
    earlier ones, cross in one link phase at the cycle's start, an exchange-only superstep (PopART's
    IpuCopy program of each pipeline cycle). A cut reduction
    adds a second superstep exchanging and summing the partial results. Data-movement ops
    (slices, concatenation, padding, reshapes) are exchanges only. Inputs and weights arrive by
    host streams, results leave by them. An `scf.for` stays one around its body's supersteps
    (Poplar's Repeat), each tensor it carries a buffer: the op computing the yielded value writes
    into it when no reader of the old value comes after, else the end of the body copies it in.
    `scf.if`, `scf.index_switch` and `scf.while` stay too (If, Switch, RepeatWhileTrue), their
    condition an `ipu.predicate` reading a device scalar (lowering/control_flow.py).
    A device variable (an argument marked `ipu.resident`) is a buffer named by an `ipu.variable`,
    not streamed; the result marked with its name is its new value, written into that buffer
    as a carried tensor's is (lowering/resident.py). The program's signature keeps the streams.

    Before (L2):

        func.func @main(%a: tensor<64xf32> {ipu.mapping = M}) -> tensor<64xf32> {
          %r = linalg.generic {...} ins(%a) outs(%e) {ipu.partition = ..., ipu.mapping = M} ...
          return %r
        }

    After (L3):

        "ipu.buffer"() {sym_name = "arg0", type = memref<4xf32>, tiles = ...}
        "ipu.buffer"() {sym_name = "generic0", type = memref<4xf32>, tiles = ...}
        func.func @main(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.program} {
          "ipu.host_to_device"(%arg0) {buffer = @arg0, mapping = M}
          "ipu.sync"() {kind = "external"}
          "ipu.execute"() {compute_set = @generic0_cs}
          "ipu.sync"() {kind = "internal"}
          %0 = "ipu.device_to_host"() {buffer = @generic0, mapping = M}
          return %0
        }
    """

    name = "ipu-schedule"

    def run(self, module: ir.Operation) -> None:
        target = target_of(module)
        for function in public_functions(module):
            with function.location:
                program = _Scheduler(module, function).run()
            if target.num_ipus > 1:
                open_link_phases(program.regions[0].blocks[0], target.tiles_per_ipu)


class _Scheduler:
    def __init__(self, module: ir.Operation, function: ir.OpView):
        self.module, self.source = module, function
        self.body = module.regions[0].blocks[0]
        self.stored = Storage()
        self.uses: dict[ir.Block, BlockUses] = {}  # in_place's question of each block, answered once
        self.transfers = TransferPlans()
        self.names: dict[str, int] = {}
        self.loc = function.location
        self.preheader: ir.InsertionPoint | None = None  # before the outermost loop being scheduled
        # preheader -> the sync ending the superstep before that loop: the copies of values made
        # before every loop that the loop reads elsewhere go there, made once (`before_loops`).
        self.preheader_end: dict[ir.InsertionPoint, ir.OpView] = {}
        self.tiles_per_ipu = target_of(module).tiles_per_ipu
        # (value, IPU) -> its copy already brought to that IPU from another, and the block the
        # copy was made in: the value crosses the IPU-Links once, as PopART's InterIpuCopy
        # transform makes one IpuCopyOp per tensor and IPU (graphcore/popart
        # willow/src/transforms/interipucopy.cpp, CopiedTensors).
        self.on_ipu: dict[tuple[ir.Value, int], tuple[Stored, ir.Block]] = {}
        # A pipelined step's cycles (`enter_cycle`): the cycle being scheduled, the sync ending
        # its link phase (the crossings into it are copied before that sync), and the cycle
        # each value of the entry block was made in (-1: an argument or a constant).
        self.cycle, self.link_phase_end, self.made_in, self.link_phases = -1, None, {}, []

    # --- naming and creation ------------------------------------------------------------------

    def fresh(self, stem: str) -> str:
        count = self.names.get(stem, 0)
        self.names[stem] = count + 1
        return f"{stem}{count}"

    def buffer(self, stem: str, layout: Layout, element_type: ir.Type, loc) -> str:
        name = self.fresh(stem)
        memref = ir.MemRefType.get([math.prod(layout.buffer_shape)], element_type)
        ipu.buffer(name, memref, layout.grid(), loc=loc, ip=ir.InsertionPoint(self.program))
        return name

    def run(self) -> ir.OpView:
        source_type = ir.FunctionType(ir.TypeAttr(self.source.attributes["function_type"]).value)
        name = ir.StringAttr(self.source.attributes["sym_name"]).value
        self.source.attributes["sym_name"] = ir.StringAttr.get(name + ".l2")
        # Device variables (lowering/resident.py) are no streams: the program's signature
        # holds one run's inputs and outputs only.
        variables, updated = resident_names(self.source)
        inputs = [t for k, t in enumerate(source_type.inputs) if k not in variables]
        results = [t for k, t in enumerate(source_type.results) if k not in updated]
        self.program = ipu.program_function(name, inputs, results, loc=self.loc, ip=ir.InsertionPoint(self.body))
        self.entry = self.program.regions[0].blocks[0]
        self.link_block = self.entry  # the block whose link phase the crossings go to
        self.ip = ir.InsertionPoint(self.entry)
        self.codelet_ip = ir.InsertionPoint(self.body)
        old_block = self.old_entry = self.source.regions[0].blocks[0]
        streamed, homes = iter(self.entry.arguments), {}
        for arg in old_block.arguments:
            if arg.arg_number in variables:
                layout = self.layout_of(arg)
                homes[variables[arg.arg_number]] = Stored(declare_variable(self, arg, variables[arg.arg_number], layout), layout)
                self.stored[arg] = homes[variables[arg.arg_number]]
            else:
                self.stream_in(arg, next(streamed), f"arg{arg.arg_number}_")
        self.updates = {k: homes[name] for k, name in updated.items()}  # result index -> its variable's buffer
        for op in old_block.operations:
            if op.operation.name == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType):
                copy = op.operation.clone(ip=self.ip)
                self.stream_in(op.results[0], copy.results[0], "const")
        with self.loc:
            ipu.sync("external", ip=self.ip)
        for op in old_block.operations:
            self.enter_cycle(op)
            self.lower(op)
            self.made_in.update((result, self.cycle) for result in op.results)
        self.drop_empty_link_phases()
        self.source.operation.erase()
        return self.program

    # --- pipeline cycles --------------------------------------------------------------------------

    def enter_cycle(self, op: ir.OpView) -> None:
        """At the first op of a later pipeline cycle, an empty link phase ending in a sync:
        `bring` copies there what crosses into the cycle."""
        if PIPELINE_CYCLE_ATTR not in op.attributes:
            return
        cycle = ir.IntegerAttr(op.attributes[PIPELINE_CYCLE_ATTR]).value
        if cycle > self.cycle:
            self.cycle = cycle
            with self.loc:
                self.link_phase_end = ipu.sync("internal", ip=self.ip)
            self.link_phases.append(self.link_phase_end)

    def before_loops(self) -> ir.InsertionPoint:
        """Where a copy of a value made before every loop and read in one goes: before the
        outermost loop, in the superstep ending just before it (made once, not every iteration)."""
        if self.preheader not in self.preheader_end:
            with self.loc:  # the copies land before the loop's first superstep reads them
                self.preheader_end[self.preheader] = ipu.sync("internal", ip=self.preheader)
        return ir.InsertionPoint(self.preheader_end[self.preheader])

    def crossing_point(self, value: ir.Value) -> ir.InsertionPoint:
        """Where a copy of `value` to another IPU goes: into the current cycle's link phase
        when the value was made in an earlier cycle, else before its reader."""
        if self.link_phase_end is not None and self.ip.block == self.link_block and self.made_in.get(value, -1) < self.cycle:
            return ir.InsertionPoint(self.link_phase_end)
        return self.ip

    def drop_empty_link_phases(self) -> None:
        """A cycle into which nothing crosses keeps no link phase (its sync would end an empty
        superstep)."""
        for end in self.link_phases:
            before = end.operation.block.operations
            position = [op.operation for op in before].index(end.operation)
            if position == 0 or before[position - 1].operation.name == "ipu.sync":
                end.operation.erase()

    # --- ops ------------------------------------------------------------------------------------

    def layout_of(self, old: ir.Value) -> Layout:
        layout = mapping_of(old)
        if layout is None:
            raise op_error(self.source, "has an argument without ipu.mapping; run ipu-plan first")
        return layout

    def stream_in(self, old: ir.Value, new: ir.Value, stem: str) -> None:
        layout = self.layout_of(old)
        element_type = ir.RankedTensorType(old.type).element_type
        buffer = self.buffer(stem, layout, element_type, self.loc)
        ipu.host_to_device(new, buffer, layout.mapping(), loc=self.loc, ip=self.ip)
        self.stored[old] = Stored(buffer, layout)

    def lower(self, op: ir.OpView) -> None:
        name = op.operation.name
        with op.location:
            if record_of(op):
                self.compute(op)
            elif name == "func.return":
                self.stream_out(op)
            elif name in ("tensor.expand_shape", "tensor.collapse_shape"):
                self.reshape(op)
            elif name in ("tensor.extract_slice", "tensor.insert_slice", "tensor.concat", "tensor.pad"):
                self.move(op)
            elif name == "ipu.all_reduce":
                self.all_reduce(op)
            elif name == "scf.for":
                self.loop(op)
            elif name == "scf.if":
                control_flow.schedule_if(self, op)
            elif name == "scf.while":
                control_flow.schedule_while(self, op)
            elif name == "scf.index_switch":
                control_flow.schedule_switch(self, op)
            elif name == "scf.condition":
                control_flow.condition(self, op)
            elif name == "scf.yield":
                self.carry(op)
            elif name in ("tensor.empty", "arith.constant") or is_predicate(op):
                pass
            else:
                raise op_error(op, "is not supported by ipu-schedule")

    def stream_out(self, op: ir.OpView) -> None:
        staged = update_variables(self, op, self.updates)
        ipu.sync("external", ip=self.ip)
        results = []
        for position, value in enumerate(op.operands):
            if position in self.updates:
                continue
            stored = staged.get(position) or self.get(op, value)
            results.append(ipu.device_to_host(value.type, stored.buffer, stored.layout.mapping(), ip=self.ip).result)
        func.ReturnOp(results, ip=self.ip)

    def loop(self, op: ir.OpView) -> None:
        """An `scf.for` with constant bounds becomes one at L3 (Poplar's Repeat), around the
        body's supersteps, scheduled once. Each carried tensor gets its own buffer in its initial
        value's layout (ipu-plan keeps it through the loop): the initial value is copied in
        before the loop, the yielded one written there by the op computing it (`in_place`) or
        copied in at the end of each iteration (`carry`); after the loop the buffer holds the
        result."""
        body = op.regions[0].blocks[0]
        haloed = []
        for init, carried, result in zip(op.operands[3:], body.arguments[1:], op.results):
            source = self.get(op, init)
            # A grid read only through windows is kept as its reader's pieces, halos included:
            # the reader reads it in place, the insert of its new interior sends the halos.
            layout = halo_storage(carried) or source.layout
            buffer = self.buffer("carried", layout, ir.RankedTensorType(init.type).element_type, op.location)
            self.copy(source, buffer, layout)
            self.stored[carried] = self.stored[result] = Stored(buffer, layout)
            if layout != source.layout:
                haloed.append((result, source.layout))
        inits_end = ipu.sync("internal", ip=self.ip) if len(body.arguments) > 1 else None
        bounds = [value.owner.operation.clone(ip=self.ip).results[0] for value in op.operands[:3]]
        repeat = scf.ForOp(*bounds, ip=self.ip)
        outer, preheader = self.ip, self.preheader
        self.ip, self.preheader = ir.InsertionPoint(repeat.body), preheader or ir.InsertionPoint(repeat.operation)
        if preheader is None and inits_end is not None:  # the crossings join the inits' copies
            self.preheader_end[self.preheader] = inits_end
        cycle = PIPELINE_CYCLE_ATTR in op.attributes  # a pipeline's steady state: its body one cycle
        if cycle:  # what crosses IPUs into the body (carried, or made before the loop) copied first
            outer_phase = self.link_phase_end, self.link_block
            self.link_block, self.link_phase_end = repeat.body, ipu.sync("internal", ip=self.ip)
            self.link_phases.append(self.link_phase_end)
        for inner in body.operations:
            self.lower(inner)
            if cycle:
                self.made_in.update((result, self.cycle) for result in inner.results)
        if cycle:
            self.link_phase_end, self.link_block = outer_phase
        self.ip, self.preheader = outer, preheader
        for result, layout in haloed:  # after the loop, its result in blocks again
            self.stored[result] = Stored(self.bring(op, result, layout, "carried"), layout)
        if haloed:
            ipu.sync("internal", ip=self.ip)

    def carry(self, op: ir.OpView) -> None:
        """The end of a loop body (or a branch: lowering/control_flow.py): each yielded tensor copied into its carried buffer (nothing
        when the body wrote it there: `in_place`), then the empty L3 yield. A carried tensor
        yielded in another one's place (a rotation, `yield %b, %a`) is first staged in a buffer
        of its own, a superstep earlier: one exchange phase must not write a buffer that it
        reads."""
        body = op.operation.block
        if op.operation.parent.name == "scf.for":
            targets = [self.stored[carried] for carried in body.arguments[1:]]
        else:
            targets = control_flow.yield_targets(self, op)
        self.assign(op, list(zip(op.operands, targets)), {target.buffer for target in targets})
        scf.YieldOp([], ip=self.ip)

    def assign(self, op: ir.OpView, moves: list[tuple[ir.Value, Stored | None]], overwritten: set) -> dict[int, Stored]:
        """Each value of `op` copied into its target (None: none) as one parallel assignment:
        a value held in a buffer of `overwritten` is first staged in a buffer of its own, a
        superstep earlier (one exchange phase must not write a buffer it reads); a value
        already in its target is not copied. Returns the staged values by their position."""
        staged, copies = {}, []
        for position, (value, target) in enumerate(moves):
            source = self.get(op, value)
            if source.buffer in overwritten and source != target:
                buffer = self.buffer("staged", source.layout, ir.RankedTensorType(value.type).element_type, op.location)
                self.copy(source, buffer, source.layout)
                source = staged[position] = Stored(buffer, source.layout)
            if target is not None and source != target:
                copies.append((source, target))
        if staged:
            ipu.sync("internal", ip=self.ip)
        for source, target in copies:
            self.copy(source, target.buffer, target.layout)
        if copies:
            ipu.sync("internal", ip=self.ip)
        return staged

    def in_place(self, op: ir.OpView, final: Layout | None, inputs: list[str]) -> str | None:
        """The carried buffer `op` writes its result into, when the enclosing loop body (of an
        `scf.for`, or the body of an `scf.while`) yields the result in that tensor's place, laid
        out as that buffer is, and the old value has no reader left: none after `op` in the body
        (the yield included, whose copy this saves), none among `inputs` (the buffers `op`'s
        vertices read) but the carried buffer itself read element for element where it is written (an input of a generic indexed as its
        result, or its init). Else None: the result gets its own buffer and the yield copies it.
        `final` None: in whatever layout the buffer has (a copy can write it there). The
        function's return is such a yield for the device variables it updates (their buffers)."""
        owner = op.operation.parent
        body = op.operation.block
        uses = self.uses_of(body)
        terminator, positions = uses.terminator, uses.yielded.get(op.results[0], [])
        if len(positions) != 1:
            return None
        if owner.name == "scf.for":
            target = self.stored[body.arguments[1 + positions[0]]]
        elif owner.name == "scf.while" and terminator.operation.name == "scf.yield":  # into the carried buffer
            target = self.stored[owner.regions[0].blocks[0].arguments[positions[0]]]
        elif owner.name == "func.func" and positions[0] in self.updates:  # the function returns it as a device variable's new value
            target = self.updates[positions[0]]
        else:
            return None
        if final not in (None, target.layout) or not self.element_for_element(op, inputs, target.buffer):
            return None
        after = uses.position[op.operation]
        held = self.stored.holding[target.buffer]
        if any(uses.last.get(v, -1) > after for v in held):
            return None
        if any(k != positions[0] for v in held for k in uses.yielded.get(v, [])):
            return None
        return target.buffer

    def uses_of(self, body: ir.Block) -> BlockUses:
        if body not in self.uses:
            self.uses[body] = BlockUses.of(body)
        return self.uses[body]

    @staticmethod
    def element_for_element(op: ir.OpView, inputs: list[str], buffer: str) -> bool:
        """Whether every input of `op` in `buffer` is read only where `op` writes, each element
        before its own is written: the init (last) always, an input of a generic without
        reductions indexed as the result. (A reduction writes its partial sums as it goes, while
        such an input would still be read for the rest of the summed loop.)"""
        reading = [k for k, name in enumerate(inputs) if name == buffer]
        if not reading:
            return True
        if op.operation.name != "linalg.generic":
            return False
        maps = list(ir.ArrayAttr(op.attributes["indexing_maps"]))
        parallel = all(str(i) == "#linalg.iterator_type<parallel>" for i in ir.ArrayAttr(op.attributes["iterator_types"]))
        return all(k >= len(maps) - 1 or (parallel and maps[k] == maps[-1]) for k in reading)

    def insert_in_place(self, op: ir.OpView) -> Stored | None:
        """The carried buffer an `insert_slice` writes its source into, in that buffer's layout,
        when it inserts into the value that buffer holds and the loop body yields the result in
        its place with no reader of the old value left (`in_place`): the rest is already there."""
        target = self.in_place(op, None, [self.get(op, op.operands[0]).buffer])
        into = self.get(op, op.operands[1])
        return into if target is not None and into.buffer == target else None

    def get(self, op: ir.OpView, value: ir.Value) -> Stored:
        if value not in self.stored:
            raise op_error(op, "uses a tensor with no storage (a tensor.empty read as data?)")
        return self.stored[value]

    def bring(self, op: ir.OpView, value: ir.Value, wanted: Layout, stem: str) -> str:
        """The buffer holding `value` laid out as `wanted`: the stored one, or a copy of it."""
        stored = self.get(op, value)
        if stored.layout == wanted:
            return stored.buffer
        ipu_id = self.ipu_of(wanted)
        crossing = ipu_id is not None and self.ipu_of(stored.layout) != ipu_id
        near = self.on_ipu.get((value, ipu_id)) if crossing else None
        invariant = self.preheader is not None and _block_of(value) == self.old_entry
        if near is not None and _encloses(near[1], self.ip.block):  # read there, or redistributed on its IPU: not sent again
            if near[0].layout == wanted:
                return near[0].buffer
            # Of a replicated layout, the first replica: a copy's source is stored once (plan_transfers).
            stored, crossing = Stored(near[0].buffer, Layout(wanted.shape, near[0].layout.first_tile, near[0].layout.dims)), False
            # `near` may be written before the loop in the superstep this copy would join (one
            # exchange phase must not read what it writes): this copy stays at its reader.
            invariant = False
        element_type = ir.RankedTensorType(value.type).element_type
        buffer = self.buffer(stem, wanted, element_type, op.location)
        at = self.before_loops() if invariant else self.crossing_point(value) if crossing else None
        self.copy(stored, buffer, wanted, at=at)
        if crossing:
            self.on_ipu[(value, ipu_id)] = (Stored(buffer, wanted), at.block)
        return buffer

    def ipu_of(self, layout: Layout) -> int | None:
        """The IPU holding all of `layout`'s tiles, None when they span IPUs."""
        grid = layout.grid()
        first, last = grid.min_tile // self.tiles_per_ipu, grid.max_tile // self.tiles_per_ipu
        return first if first == last else None

    def copy(self, source: Stored, dest: str, wanted: Layout, shift=None, box=None, steps=None, at=None) -> None:
        """Copies of `source` into `dest` laid out as `wanted`, before the next op (`at`: there)."""
        for t in self.transfers(source.layout, wanted, shift, box, steps):
            ipu.copy(
                source.buffer,
                dest,
                size=t.size,
                src_tiles=t.src_tiles,
                dst_tiles=t.dst_tiles,
                src_offset=t.src_offset,
                dst_offset=t.dst_offset,
                ip=at or self.ip,
            )

    def execute(self, stem: str, groups: list[tuple[str, object, list[str], list[str]]]) -> None:
        compute_set = ipu.compute_set_function(self.fresh(stem + "_cs"), ip=self.codelet_ip)
        with ir.InsertionPoint(compute_set.regions[0].blocks[0]):
            for codelet, grid, inputs, outputs in groups:
                ipu.vertex_group(codelet, grid, inputs, outputs)
            func.ReturnOp([])
        ipu.execute(ir.StringAttr(compute_set.attributes["sym_name"]).value, ip=self.ip)
        ipu.sync("internal", ip=self.ip)

    # --- compute ops ------------------------------------------------------------------------------

    def compute(self, op: ir.OpView) -> None:
        space = space_of(op)
        partition = Partition.of(op, space)
        parts = partition.parts(space)
        stem = op.operation.name.split(".")[-1]
        # Each stored tensor read once: the shifted slices of one tensor (a stencil's
        # neighbours) read from one piece of it, holding their windows' union.
        read_list = reads(space)
        inputs = [self.bring(op, r.value, operand_layout(space, partition, r.accesses), stem + "_in") for r in read_list]
        final = result_mapping(op)
        reduced = math.prod(parts[d].count for d in space.reductions)
        # A reduction cut across tiles starts each piece from the identity; the init joins in
        # the second stage.
        uses_init = record_of(op).reads_init(op) and reduced == 1
        combiner = space.combiner if reduced > 1 and space.combiner != SUM else None
        if uses_init:  # uncut: the parts' result boxes are the result's blocks
            inputs.append(self.bring(op, op.operands[len(op.operands) - 1], final, stem + "_init"))
        element_type = space.element_type
        if reduced > 1:
            box_layout = Layout(
                final.shape, partition.first, tuple(parts[d] for d in space.result), replicas(space, partition, space.result)
            )
            partial = self.buffer(stem + "_partial", box_layout, element_type, op.location)
        else:
            partial = self.in_place(op, final, inputs) or self.buffer(stem, final, element_type, op.location)
        iteration = Layout(space.extents, partition.first, parts)
        groups = []
        for grid, first_parts in iteration.classes(self.signatures(space, parts)):
            codelet = self.fresh(stem + "_v")
            pieces = [self.piece(space, parts, accesses, first_parts) for accesses in space.operands]
            box = tuple(parts[d].intervals[first_parts[d]][1] - parts[d].intervals[first_parts[d]][0] for d in space.result)
            record_of(op).codelet(op, codelet, Piece(tuple(pieces), box, uses_init, combiner), self.codelet_ip, op.location)
            if len(read_list) != len(space.operands):
                windows_of_reads([self.piece(space, parts, r.accesses, first_parts)[0] for r in read_list], read_list, self.body)
            groups.append((codelet, grid, inputs, [partial]))
        self.execute(stem, groups)
        if reduced > 1:
            self.combine_partials(op, stem, space, parts, partial, final, reduced)
        else:
            self.stored[op.results[0]] = Stored(partial, final)

    @staticmethod
    def signatures(space: Space, parts) -> list[list]:
        """Parts of a loop look alike when their extent and every operand piece they read
        (extent and padding) agree."""
        result = []
        for d, loop in enumerate(parts):
            row = []
            for lo, hi in loop.intervals:
                reads = tuple(
                    (r.hi - r.lo, r.pad_low, r.pad_high)
                    for accesses in space.operands
                    for a in accesses
                    if a.loop == d and a.kind != "const"
                    for r in (a.region(lo, hi),)
                )
                row.append((hi - lo, reads))
            result.append(row)
        return result

    @staticmethod
    def piece(space: Space, parts, accesses, first_parts):
        shape, pads_low, pads_high = [], [], []
        for a in accesses:
            if a.kind == "const" or a.loop is None:
                shape.append(a.size)
                pads_low.append(0)
                pads_high.append(0)
                continue
            lo, hi = parts[a.loop].intervals[first_parts[a.loop]]
            r = a.region(lo, hi)
            shape.append(r.hi - r.lo)
            pads_low.append(r.pad_low)
            pads_high.append(r.pad_high)
        return tuple(shape), tuple(pads_low), tuple(pads_high)

    def combine_partials(self, op, stem, space: Space, parts, partial: str, final: Layout, reduced: int) -> None:
        """Second stage of a cut reduction: tile r of each output box receives its share of
        every partial result and combines them (and the op's init, if it reads one)."""
        inner = min(parts[d].stride for d in space.reductions if parts[d].count > 1)
        box_dims = tuple(parts[d] for d in space.result)
        partials = Layout((reduced,) + final.shape, final.first_tile, (Parts(tuple((r, r + 1) for r in range(reduced)), inner),) + box_dims)
        wanted = Layout(partials.shape, final.first_tile, (Parts(((0, reduced),), 0),) + final.dims)
        gathered = self.buffer(stem + "_partials", wanted, space.element_type, op.location)
        self.copy(Stored(partial, partials), gathered, wanted)
        inputs = [gathered]
        with_init = record_of(op).reads_init(op)
        if with_init:
            inputs.append(self.bring(op, op.operands[len(op.operands) - 1], final, stem + "_init"))
        # The partials were read from the inputs a superstep earlier: only the init is read here,
        # element by element where the result is written.
        result = self.in_place(op, final, []) or self.buffer(stem, final, space.element_type, op.location)
        groups = []
        for grid, first_parts in final.classes():
            box = tuple(d.intervals[j][1] - d.intervals[j][0] for d, j in zip(final.dims, first_parts))
            codelet = self.fresh(stem + "_combine")
            codelets.combine_codelet(codelet, (reduced,) + box, space.element_type, space.combiner, with_init, self.codelet_ip, op.location)
            groups.append((codelet, grid, inputs, [result]))
        self.execute(stem + "_combine", groups)
        self.stored[op.results[0]] = Stored(result, final)

    # --- data movement ----------------------------------------------------------------------------

    def all_reduce(self, op: ir.OpView) -> None:
        """`ipu.ring_all_reduce` between global syncs: the ring's steps cross the IPU-Links."""
        result = result_mapping(op)
        source = self.bring(op, op.operands[0], result, "all_reduce_in")
        dest = self.buffer("all_reduce", result, ir.RankedTensorType(op.results[0].type).element_type, op.location)
        ipu.sync("global", ip=self.ip)
        reduce = ipu.AllReduceOp(op.operation)
        ring = ir.DenseI64ArrayAttr(op.attributes[ipu.RING_ATTR]) if ipu.RING_ATTR in op.attributes else range(reduce.replicas)
        ipu.ring_all_reduce(source, dest, op.results[0].type, result.mapping(), list(ring), reduce.reduction, ip=self.ip)
        ipu.sync("global", ip=self.ip)
        self.stored[op.results[0]] = Stored(dest, result)

    def reshape(self, op: ir.OpView) -> None:
        result = result_mapping(op)
        groups = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]
        source_shape = tuple(ir.RankedTensorType(op.operands[0].type).shape)
        view = collapse_layout if op.operation.name == "tensor.expand_shape" else expand_layout
        source_layout = view(result, groups, source_shape)
        if source_layout is None:
            raise op_error(op, "has a result mapping that does not cut whole rows; replan with ipu-plan")
        buffer = self.bring(op, op.operands[0], source_layout, "reshape")
        if buffer != self.get(op, op.operands[0]).buffer:
            ipu.sync("internal", ip=self.ip)  # the copies land before anything reads them
        self.stored[op.results[0]] = Stored(buffer, result)

    def move(self, op: ir.OpView) -> None:
        name = op.operation.name
        if name == "tensor.extract_slice" and slice_view(op.results[0]) is not None:
            return  # read in place from its source by every user (`compute`)
        result = result_mapping(op)
        element_type = ir.RankedTensorType(op.results[0].type).element_type
        into = self.insert_in_place(op) if name == "tensor.insert_slice" else None
        if into is not None:
            result = into.layout  # the carried buffer's (its reader's pieces, halos included)
        dest = into.buffer if into else self.buffer(name.split(".")[-1], result, element_type, op.location)
        rank = len(result.shape)
        if name == "tensor.extract_slice":
            offsets, sizes, strides = (_static(op, k) for k in ("static_offsets", "static_sizes", "static_strides"))
            box = tuple((o, o + s * (n - 1) + 1) for o, n, s in zip(offsets, sizes, strides))
            full = _with_unit_dims(result, sizes, rank_drop(op))  # a rank-reduced result, seen at full rank
            self.copy(self.get(op, op.operands[0]), dest, full, tuple(-o for o in offsets), box, tuple((s, 1) for s in strides))
        elif name == "tensor.insert_slice":
            offsets, sizes, strides = (_static(op, k) for k in ("static_offsets", "static_sizes", "static_strides"))
            source = self.get(op, op.operands[0])
            for box, steps in [] if into else _complement(result.shape, tuple(zip(offsets, sizes, strides))):
                self.copy(self.get(op, op.operands[1]), dest, result, None, box, steps)
            full = Stored(source.buffer, _with_unit_dims(source.layout, sizes, rank_drop(op)))
            self.copy(full, dest, result, offsets, None, tuple((1, s) for s in strides))
        elif name == "tensor.concat":
            axis = ir.IntegerAttr(op.attributes["dim"]).value
            at = 0
            for value in op.operands:
                shift = tuple(at if k == axis else 0 for k in range(rank))
                self.copy(self.get(op, value), dest, result, shift)
                at += ir.RankedTensorType(value.type).shape[axis]
        else:  # tensor.pad: fill everything with the padding value, then bring the source
            low = _static(op, "static_low")
            yielded = op.regions[0].blocks[0].operations[0].operands[0] if len(op.regions[0].blocks) else None
            if yielded is None or isinstance(yielded.owner, ir.Block) or yielded.owner.name != "arith.constant":
                raise op_error(op, "pads with a value that is not a constant; not supported by ipu-schedule")
            value = yielded.owner.attributes["value"]
            groups = []
            for grid, first_parts in result.classes():
                box = tuple(d.intervals[j][1] - d.intervals[j][0] for d, j in zip(result.dims, first_parts))
                codelet = self.fresh("pad_fill")
                codelets.fill_codelet(codelet, box, value, element_type, self.codelet_ip, op.location)
                groups.append((codelet, grid, [], [dest]))
            # In a loop, the border keeps its constant all through (only the interior is
            # copied each iteration): it is filled once, before the loop.
            inside, self.ip = self.ip, self.preheader or self.ip
            self.execute("pad", groups)
            self.ip = inside
            self.copy(self.get(op, op.operands[0]), dest, result, low)
        ipu.sync("internal", ip=self.ip)  # the copies land before anything reads them
        self.stored[op.results[0]] = Stored(dest, result)


def _block_of(value: ir.Value) -> ir.Block:
    owner = value.owner
    return owner if isinstance(owner, ir.Block) else owner.operation.block


def _encloses(outer: ir.Block, block: ir.Block) -> bool:
    """Whether `block` is `outer` or nested in it (a copy made in `outer` before the op
    holding `block` is there when `block` runs)."""
    while block != outer:
        parent = block.owner
        if parent is None or parent.operation.name in ("func.func", "builtin.module"):
            return False
        block = parent.operation.block
    return True


def windows_of_reads(shapes: list[tuple[int, ...]], read_list: list[Read], module_body: ir.Block) -> None:
    """Makes the codelet just built (the module's last op) take one piece per read, of
    `shapes`, in place of one per input: an input that is a window of a read's piece becomes a
    `tensor.extract_slice` of it at its offsets (a vertex reading a region of its input in
    place: the reader prices the reads, the window costs nothing of its own)."""
    function = module_body.operations[len(module_body.operations) - 1]
    block = function.regions[0].blocks[0]
    old = list(block.arguments)  # the inputs, then the init if the vertex reads one
    count = sum(len(r.inputs) for r in read_list)
    loc = function.location
    element_types = [ir.RankedTensorType(old[r.inputs[0]].type).element_type for r in read_list]
    pieces = [block.add_argument(ir.RankedTensorType.get(list(shape), t), loc) for shape, t in zip(shapes, element_types)]
    for stale in old[count:]:  # the init stays behind the pieces
        stale.replace_all_uses_with(block.add_argument(stale.type, loc))
    first = ir.InsertionPoint(block.operations[0])
    for r, piece in zip(read_list, pieces):
        for k, at in zip(r.inputs, r.offsets or [None]):
            if at is None:
                old[k].replace_all_uses_with(piece)
                continue
            sizes = list(ir.RankedTensorType(old[k].type).shape)
            static = [ir.DenseI64ArrayAttr.get(list(v)) for v in (at, sizes, [1] * len(sizes))]
            window = tensor.ExtractSliceOp(old[k].type, piece, [], [], [], *static, loc=loc, ip=first)
            old[k].replace_all_uses_with(window.result)
    for k in reversed(range(len(old))):
        block.erase_argument(k)
    results = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).results
    function.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([a.type for a in block.arguments], results))


def _static(op: ir.OpView, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _complement(shape, lattice):
    """Disjoint strided boxes, as (box, steps) for `plan_transfers`, covering `shape` minus the
    elements of `lattice`, (offset, count, step) per dimension: along the first dimension
    outside it, the elements before, after, and between the lattice's (one box per residue of
    the step), the later dimensions whole."""
    boxes = []
    fixed = []
    for k, (size, (offset, count, step)) in enumerate(zip(shape, lattice)):
        last = offset + step * (count - 1)
        rest = [((0, n), (1, 1)) for n in shape[k + 1 :]]
        pieces = [(0, offset, 1), (last + 1, size - last - 1, 1)]
        pieces += [(offset + r, count - 1, step) for r in range(1, step)]
        for lo, n, s in pieces:
            if n > 0:
                boxes.append(fixed + [((lo, lo + s * (n - 1) + 1), (s, s))] + rest)
        fixed.append(((offset, last + 1), (step, step)))
    return [(tuple(b for b, _ in piece), tuple(s for _, s in piece)) for piece in boxes]


def _with_unit_dims(layout: Layout, sizes: tuple[int, ...], dropped: set[int]) -> Layout:
    """`layout` of a rank-reduced slice seen at the slice's full rank: the dropped unit dims
    are one part each, on no tile step, so the buffers stay as they are."""
    if not dropped:
        return layout
    kept = iter(layout.dims)
    dims = tuple(Parts(((0, 1),), 0) if d in dropped else next(kept) for d in range(len(sizes)))
    return Layout(tuple(sizes), layout.first_tile, dims, layout.replicate)
