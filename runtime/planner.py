"""Planning an L3 program for the simulator (runtime/simulator.py): one walk over the IR that
reads every attribute once and turns the program into steps holding strided views, index
arrays and compiled codelets, the buffers they touch, and the profile's costs (known from
shapes alone). `Simulator` plans at most twice: the checked plan, a row of memory per tile, at
load, and the later plan, a row per class of tiles holding the same bytes (runtime/replicas.py),
from the checked one when a second run needs it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import TileGrid, elements_per_tile, i64_value
from ipu_mlir.dialects.ops import codelet_cycles
from ipu_mlir.dialects.program import Program
from ipu_mlir.dialects.resources import dense_array
from ipu_mlir.target import Target

from . import control_flow
from .all_reduce import RingAllReduce, plan_ring_all_reduce, price_ring_all_reduce, site_record
from .codelet import CodeletError, body_key, compile_codelet
from .copy_pieces import Side, strided_pieces
from .memory import (
    Buffer,
    Pool,
    SimulationError,
    Site,
    element_dtype,
    link_aliases,
    order_rows,
    row_uses,
    site_of,
    static_tensor,
)
from .races import Access, check_races
from .regions import Region, Strided, constant_axes, copy_region, grid_region
from .replicas import ComputeWrite, CopyWrite, StreamWrite, Write
from .sides import cut_to_first, narrow_pieces, still_axes, strided_side
from .steps import Copy, Count, Execute, If, Repeat, Switch, VertexGroup, While
from .streams import DeviceToHost, HostToDevice
from .superstep import Superstep
from .traffic import copy_traffic

PROGRAM_OPS = (
    "arith.constant",
    "ipu.host_to_device",
    "ipu.device_to_host",
    "ipu.sync",
    "ipu.copy",
    "ipu.execute",
    "ipu.ring_all_reduce",
    "scf.for",
    "scf.if",
    "scf.while",
    "scf.index_switch",
    "ipu.predicate",
    "func.return",
)


# --- Planning -----------------------------------------------------------------------------


@dataclass
class _ComputeSet:
    groups: list[VertexGroup]
    cycles_per_tile: np.ndarray
    buffers: set[str]


class Planner:
    """Walks a module once: buffers, then the program's ops into steps and supersteps.

    Given `classes` (runtime/replicas.py), a buffer keeps one row per class of tiles holding
    the same bytes, and the plan makes no checks: it is the plan of runs after a checked one."""

    def __init__(
        self,
        module: ir.Operation,
        target: Target,
        entry: str,
        classes: dict[str, np.ndarray] | None = None,
        checked: Planner | None = None,
    ):
        self.target = target
        self.checks = classes is None
        self.program = Program(module)
        self.pool = Pool(keep=not self.checks)
        buffers = [Buffer(op, target, self.pool, None if classes is None else classes[op.sym_name]) for op in self.program.buffers()]
        self.buffers = {b.name: b for b in buffers}
        self.uses = row_uses(self.program) if checked is None else checked.uses
        alike = set() if checked is None else {n for n, b in self.buffers.items() if b.row_count == checked.buffers[n].row_count}
        for name in alike:  # a class per tile: rows as the checked plan's, so its copies' pieces and its weights serve
            self.buffers[name].row_of_tile = checked.buffers[name].row_of_tile.copy()
        order_rows({n: b for n, b in self.buffers.items() if n not in alike}, self.uses)
        if self.checks:
            link_aliases(buffers)
        self.memory_per_tile = self._memory_per_tile(buffers)
        self.compute_sets: dict[str, _ComputeSet] = {}
        # kernel, its error type, cycles; the checked plan's compiled codelets and decoded weights are reused
        self.codelets: dict[tuple[str, int], tuple[object, type[Exception], int]] = {} if checked is None else checked.codelets
        # a compiled plan and cycles per distinct body and rank (`_codelet`)
        self.bodies: dict[tuple, tuple[object, int]] = {} if checked is None else checked.bodies
        self.known: dict[int, np.ndarray] = {} if checked is None else checked.constants
        self.writes: list[Write] = []  # for runtime/replicas.py
        self.variables = {op.variable_name: Variable(self.buffers[op.buffer], op, target) for op in self.program.variables()}
        for variable in self.variables.values():  # kept from run to run, written by the host's stream
            variable.buffer.reset()
            variable.buffer.resident = True
            self.writes.append(StreamWrite(variable.buffer.name, variable.to_device.tiles))
        self.pieces: list[list] = []  # of each ipu.copy in program order, for the later plan
        self.copy_keys: dict[int, tuple] = {}  # id of each Copy step -> its source, size and form number (`_keyed`)
        self.copies: list[tuple] = []  # each ipu.copy's attributes decoded, in program order, for the later plan
        self.planned: dict[tuple, list] = {}  # pieces per distinct copy (`_pieces`)
        self.forms: dict[tuple[ir.Attribute, ...], _CopyForm] = {}  # copies' grids and offsets, decoded (`_copy_form`)
        self.decoded: dict[tuple[ir.Attribute, object], object] = {}  # copies' buffer names and sizes (`_decoded`)
        self.places: dict[ir.Attribute, str] = {}  # ops' locations as text, for the profile's records (`_record`)
        self.traffic: dict[int, object] = {}  # per copy form: its messages counted per tile (traffic.copy_traffic)
        layouts: dict[bytes, int] = {}  # buffers' rows of tiles, numbered: equal rows, equal numbers
        self.row_keys = {name: layouts.setdefault(b.row_of_tile.tobytes(), len(layouts)) for name, b in self.buffers.items()}
        _share_rows(self.buffers.values())
        self.checked = checked
        # buffers whose rows are the checked plan's (no tile has a replica): copies between them are alike
        self.unreplicated = (
            set()
            if checked is None
            else {n for n, b in self.buffers.items() if np.array_equal(b.row_of_tile, checked.buffers[n].row_of_tile)}
        )
        self.vertices = self.edges = 0
        self.supersteps: list[Superstep] = []
        self.repeat = 1
        # Data-dependent control flow (`_scf_if`, `_scf_while`): the block being planned runs
        # `count.runs` times a run; its supersteps, with their repeat within it, recounted then.
        # The later plan shares the checked plan's counts, block by block in program order.
        self.count: Count | None = None
        self.counts: list[Count] = [] if checked is None else checked.counts
        self.counted: list[tuple[Superstep, Count, int]] = []
        self.counted_blocks: list[Count] = []
        self.current = Superstep()
        self.exchange: list[Access] = []
        program = _program(self.program, entry)
        block = program.regions[0].blocks[0]
        self.slots: dict[ir.Value, int] = {argument: i for i, argument in enumerate(block.arguments)}
        self.arguments = [static_tensor(a.type, site_of(program), f"argument #{a.arg_number}") for a in block.arguments]
        self.constants: dict[int, np.ndarray | None] = {}  # None: not read yet (`constant`)
        self.unread: dict[int, tuple] = {}
        self.indices: dict[ir.Value, int] = {}
        self.results: list[int] = []
        self.last_use: dict[str, int] = {}  # buffer -> the top-level step using it last
        self.first_use: dict[str, int] = {}
        self.writers: dict[str, int] = {}  # buffer -> how many ops write it
        self.constant_streams: list[tuple[HostToDevice, Superstep]] = []  # top-level streams of constants
        self.constant_reads: dict[int, int] = {}  # constant slot -> the streams reading it
        self.depth = 0
        steps = self._block(block, top=True)
        self._close(None)
        release: list[list[Buffer]] = [[] for _ in steps]
        for name, position in self.last_use.items():
            release[position].append(self.buffers[name])
        self.loads = self._loads()
        self.load_bytes = sum(stream.bytes for stream in self.loads)
        # constants that only loads read: runs never need the host's copy (`_Plan.load` drops it)
        loaded = [stream.value for stream in self.loads]
        self.load_only = {slot for slot in set(loaded) if loaded.count(slot) == self.constant_reads[slot]} - set(self.results)
        self.hoisted = [] if self.checks else self._hoisted(steps)
        self.same_bytes = {} if self.checks else self._same_bytes(self.hoisted)
        fixed = {id(step) for step in self.loads + self.hoisted}
        kept = [(index, step, dead) for index, (step, dead) in enumerate(zip(steps, release)) if id(step) not in fixed]
        self.steps, self.release = [step for _, step, _ in kept], [[b for b in dead if not b.resident] for _, _, dead in kept]
        self.positions = [index for index, _, _ in kept]  # each step's place in `first_use` and `last_use`'s count

    def constant(self, slot: int) -> np.ndarray:
        """A constant's value. The later plan reads a weight the checked plan holds in tile
        memory only if it streams it again (a loaded buffer with replicas): most take the
        checked plan's array, and reading each again would hold a second copy of the weights."""
        if self.constants[slot] is None:
            self.constants[slot] = _host_constant(*self.unread.pop(slot))
        return self.constants[slot]

    def _loads(self) -> list[HostToDevice]:
        """The streams of weights written once, at load: a top-level stream of a constant into
        a buffer no other op writes and no other buffer shares bytes with, so its bytes stay
        from one run to the next, as Poplar's engine loads a graph's constants with it.

        Unchecked plans link no aliases: there a weight whose bytes the memory plan reuses
        after its last read is loaded too (its profile, the checked plan's, still streams it
        each run). Its array is never released, so it holds the weight on every read, and the
        checked run proved that every read comes between the stream and the reuse."""
        loads = []
        for stream, superstep in self.constant_streams:
            buffer = stream.buffer
            if self.writers[buffer.name] == 1 and not buffer.aliases:
                superstep.host_bytes -= stream.bytes  # not a per-run stream: Profile.load_bytes
                buffer.resident = True
                loads.append(stream)
        return loads

    def _hoisted(self, steps: list) -> list:
        """The top-level copies and compute sets of an unchecked plan whose results are the
        same on every run, to run once at load: those reading only weights (or such steps'
        results), such as a weight's exchange into the layout its convolution or matmul reads,
        or its transpose. A buffer they write is a weight in turn once all its writers are such
        steps and none comes after a read of it (a transpose cut over tiles, its pieces sent by
        several copies); its steps are hoisted together, in program order, and their buffers
        stay resident. The checked run proved every read of those buffers comes after the
        writes; the profile, the checked plan's, still counts their exchange and compute on
        every run."""
        invariant = {stream.buffer.name for stream in self.loads}
        variables = {variable.buffer.name for variable in self.variables.values()}  # rewritten by the host between runs
        counted: dict[str, int] = {}  # buffer -> its writes by waiting steps
        waiting: dict[int, list[Buffer]] = {}  # step index -> its writes: steps reading only weights, until those are whole
        hoisted, read = [], set()
        for index, step in enumerate(steps):
            reads, writes = accesses(step)
            if writes and all(b.name in invariant for b in reads) and not any(b.name in read or b.name in variables for b in writes):
                waiting[index] = writes
                for buffer in writes:
                    counted[buffer.name] = counted.get(buffer.name, 0) + 1
                whole = {i for i, written in waiting.items() if all(counted[b.name] == self.writers[b.name] for b in written)}
                while True:  # a buffer with a writer still waiting for another buffer is not whole yet
                    blocked = {b.name for i, written in waiting.items() if i not in whole for b in written}
                    kept = {i for i in whole if not any(b.name in blocked for b in waiting[i])}
                    if kept == whole:
                        break
                    whole = kept
                for i in whole:
                    invariant.update(b.name for b in waiting.pop(i))
                hoisted += whole
            read.update(b.name for b in reads)
        for index in hoisted:
            for buffer in accesses(steps[index])[1]:
                buffer.resident = True
        return [steps[index] for index in sorted(hoisted)]

    def _same_bytes(self, hoisted: list) -> dict[str, str]:
        """The hoisted buffers holding the same bytes as an earlier one, each named with it: all
        their writers are copies equal to its writers (the same source, or one of the same bytes,
        and the same size and forms) into rows laid out alike. A pipeline's micro-batches each
        copy a weight into the layout their matmul reads, the same bytes on the same tiles, M
        times; these buffers share the first one's array (`_Plan.load` runs its copies only)."""
        writers: dict[str, list] = {}
        for step in hoisted:
            for buffer in accesses(step)[1]:
                writers.setdefault(buffer.name, []).append(step)
        same: dict[str, str] = {}
        first: dict[tuple, str] = {}
        for name, steps in writers.items():  # in program order: a source's writers come before its readers
            if not all(id(step) in self.copy_keys for step in steps):
                continue
            buffer = self.buffers[name]
            copies = tuple((same.get(source, source), *rest) for source, *rest in (self.copy_keys[id(step)] for step in steps))
            equal = first.setdefault((self.row_keys[name], buffer.elements, buffer.dtype, copies), name)
            if equal != name:
                same[name] = equal
        return same

    def _memory_per_tile(self, buffers: list[Buffer]) -> np.ndarray:
        placed, unplaced = np.zeros(self.target.num_tiles, np.int64), np.zeros(self.target.num_tiles, np.int64)
        next_base = self.target.tile_memory_bytes  # race checks give unplaced buffers addresses of their own
        for buffer in buffers:
            if buffer.offset is None:
                buffer.base, next_base = next_base, next_base + buffer.bytes
                unplaced[buffer.tiles] += buffer.bytes
            else:
                placed[buffer.tiles] = np.maximum(placed[buffer.tiles], buffer.offset + buffer.bytes)
        used = placed + unplaced
        if used.max() > self.target.tile_memory_bytes:
            tile = int(used.argmax())
            raise SimulationError(
                f"Out of memory on tile {tile}: {used[tile]} bytes used but tiles only have {self.target.tile_memory_bytes} bytes "
                "(buffers without a memory-plan offset are laid out one after another)"
            )
        return used

    def _copy_form(self, attributes: tuple[ir.Attribute, ...]) -> _CopyForm:
        """A copy's grids and offsets, from its src_tiles, dst_tiles, src_offset and dst_offset
        attributes in that order, decoded once per distinct tuple of them: MLIR uniques
        attributes, and layers of one shape repeat them. The key is the whole tuple, each
        attribute in its place (one array attribute can be a copy's tile grid and another's
        offset); the verifier checked their forms."""
        if attributes not in self.forms:
            src_tiles, dst_tiles, src_offset, dst_offset = attributes
            src_grid, dst_grid, src_offset, dst_offset = (
                TileGrid.decode(src_tiles),
                TileGrid.decode(dst_tiles),
                tuple(src_offset),
                tuple(dst_offset),
            )
            starts = tuple(TileGrid(offset[0], src_grid.sizes, offset[1:]) for offset in (src_offset, dst_offset))  # affine like tiles
            # A grid dimension along which neither the source tile nor its offset moves repeats
            # one message to several tiles: exchange multicasts it, so it is sent once.
            once = tuple(1 if (stride, step) == (0, 0) else n for n, stride, step in zip(src_grid.sizes, src_grid.strides, src_offset[1:]))
            senders = TileGrid(src_grid.first, once, src_grid.strides)
            self.forms[attributes] = _CopyForm(len(self.forms), src_grid, dst_grid, starts, senders)
        return self.forms[attributes]

    def _decoded(self, attribute: ir.Attribute, decode):
        """`decode(attribute)`, once per distinct attribute and decoding (MLIR uniques them;
        the verifier checked their forms)."""
        key = (attribute, decode)
        if key not in self.decoded:
            self.decoded[key] = decode(attribute)
        return self.decoded[key]

    def _record(self, site: Site, **details: str) -> dict[str, str]:
        """`site.record(**details)`, its location's text made once per distinct location (MLIR
        uniques them: the copies lowered from one op share it)."""
        place = site.location.attr
        if place not in self.places:
            self.places[place] = site.where
        return site.record(where=self.places[place], **details)

    def _written(self, name: str) -> None:
        self.writers[name] = self.writers.get(name, 0) + 1

    def _buffer(self, name: str, site: Site) -> Buffer:
        self.first_use.setdefault(name, self.position)
        self.last_use[name] = self.position
        return self.buffers[name]

    def _slot(self, value: ir.Value) -> int:
        self.slots[value] = len(self.slots)
        return self.slots[value]

    def _block(self, block: ir.Block, top: bool = False) -> list:
        steps = []
        for op in block.operations:
            if top:
                self.position = len(steps)  # the step this op becomes, if any
            site = site_of(op)
            method = (
                getattr(self, "_" + site.name.replace(".", "_"), None)
                if site.name in PROGRAM_OPS + ("scf.yield", "scf.condition")
                else None
            )
            if method is None:
                raise site.error(f"is not supported in an ipu program by the simulator (expected one of {', '.join(PROGRAM_OPS)})")
            step = method(op, site)
            if step is not None:
                steps.append(step)
        return steps

    def _close(self, sync: str | None) -> None:
        """Ends the current superstep (at a sync, or at a loop's edge without one)."""
        self._end_exchange()
        step = self.current
        step.sync = sync
        if step.ops or sync:
            step.finish(self.target)
            self.supersteps.append(step)
        self.current = Superstep(repeat=self.repeat)
        if self.count is not None:  # in data-dependent control flow: counted after each run
            self.counted.append((self.current, self.count, self.repeat))

    def _end_exchange(self) -> None:
        if self.checks:
            check_races(self.exchange, "this exchange phase")
        self.exchange = []

    # Program ops, one method each (named after the op).

    def _arith_constant(self, op: ir.OpView, site: Site) -> None:
        value, result = op.attributes["value"], op.results[0]
        if isinstance(result.type, ir.RankedTensorType):
            slot = self._slot(result)
            if slot in self.known:
                self.constants[slot] = self.known[slot]
            elif self.checked is not None and slot in self.checked.load_only:  # in tile memory already: read if a load needs it
                self.constants[slot], self.unread[slot] = None, (op, value, result.type, site)
            else:
                self.constants[slot] = _host_constant(op, value, result.type, site)
        elif isinstance(value, ir.IntegerAttr):
            self.indices[result] = value.value

    def _ipu_host_to_device(self, op: ir.OpView, site: Site) -> HostToDevice:
        stream = HostToDevice(self._buffer(op.buffer, site), op, op.source.type, self.slots[op.source], site, self.target)
        self.writes.append(StreamWrite(stream.buffer.name, stream.tiles))
        self.current.add_host(stream.bytes, site.record(buffer=stream.buffer.name))
        self._written(stream.buffer.name)
        if stream.value in self.constants:
            self.constant_reads[stream.value] = self.constant_reads.get(stream.value, 0) + 1
            if not self.depth:
                self.constant_streams.append((stream, self.current))
        return stream

    def _ipu_device_to_host(self, op: ir.OpView, site: Site) -> DeviceToHost:
        stream = DeviceToHost(self._buffer(op.buffer, site), op, op.result.type, self._slot(op.result), site, self.target)
        self.current.add_host(stream.bytes, site.record(buffer=stream.buffer.name))
        return stream

    def _ipu_sync(self, op: ir.OpView, site: Site) -> None:
        self._close(op.kind)

    def _ipu_copy(self, op: ipu.CopyOp, site: Site) -> Copy:
        if self.current.compute_cycles_per_tile is not None:
            raise site.error("exchanges after a compute set of the same superstep: an ipu.sync must separate them (BSP)")
        # Grids, offsets and sizes are the verifier's (the Simulator verifies before planning),
        # decoded once: the later plan takes the checked plan's, copy by copy in program order.
        index = len(self.pieces)
        if self.checked is None:
            attributes = op.attributes
            forms = (attributes["src_tiles"], attributes["dst_tiles"], attributes["src_offset"], attributes["dst_offset"])
            names = (self._decoded(attributes[name], _symbol_name) for name in ("source", "dest"))
            self.copies.append((*names, self._decoded(attributes["size"], _size), self._copy_form(forms)))
        source_name, dest_name, size, form = (self.checked or self).copies[index]
        source, dest = self._buffer(source_name, site), self._buffer(dest_name, site)
        src_grid, dst_grid, starts = form.src_grid, form.dst_grid, form.starts
        self._written(dest.name)
        if self.checked is not None and source.name in self.unreplicated and dest.name in self.unreplicated:
            # rows as in the checked plan: its pieces (the checked run proved that no axis of
            # the grid writes one place twice, so none would be cut to its first point here)
            self.pieces.append(self.checked.pieces[index])
            return self._keyed(Copy(site, source, dest, self.pieces[-1]), size, form)
        pieces = self._pieces(source, dest, form, size, site)
        self.pieces.append(pieces)
        if self.checks:  # the profile is the checked plan's; the pieces' regions for the race checks
            self.writes.append(CopyWrite(source.name, dest.name, src_grid, starts[0], dst_grid, starts[1]))
            per_bus, num_tiles = self.target.exchange_tiles_per_shared_bus, self.target.num_tiles
            senders, message, record = form.senders, size * dest.element_bytes, self._record(site, source=source.name, dest=dest.name)
            if form.number not in self.traffic:  # counted from the forms, once per form (the target is the plan's)
                self.traffic[form.number] = copy_traffic(dst_grid, src_grid, starts[0], senders, per_bus, num_tiles)
            traffic = self.traffic[form.number]
            if traffic is None:  # a multicast whose destination tiles repeat: from the listed messages
                listed = (senders.tiles(), dst_grid.tiles(), message, num_tiles, record, src_grid.tiles(), starts[0].tiles(), per_bus)
                self.current.add_exchange(*listed)
            else:
                self.current.add_traffic(traffic, message, record)
            if self.target.num_ipus > 1:
                _add_link_flows(self.current.link_flows, src_grid, dst_grid, starts[0], message, self.target)
            actor = len(self.exchange)
            self.exchange += [
                Access(buffer, region, write, site, actor)
                for piece in pieces
                for buffer, region, write in zip((source, dest), piece, (False, True))
            ]
        return self._keyed(Copy(site, source, dest, pieces), size, form)

    def _keyed(self, copy: Copy, size: int, form: _CopyForm) -> Copy:
        """`copy`, its bytes' key recorded (`_same_bytes`): its source, size and forms."""
        self.copy_keys[id(copy)] = (copy.source.name, size, form.number)
        return copy

    def _pieces(self, source: Buffer, dest: Buffer, form: _CopyForm, size: int, site: Site):
        """A copy's pieces, planned once per distinct copy: what they depend on is the copy's
        forms (its grids and starts: `form`'s number), its size and its buffers' elements per
        row and rows of tiles, so a layer's copies repeated by later layers of its shape cost a
        dictionary look-up. Each copy gets regions of its own (`Buffer.write` tells writes
        apart by identity)."""
        key = (self.row_keys[source.name], self.row_keys[dest.name], source.elements, dest.elements, form.number, size)
        grids, starts = (form.src_grid, form.dst_grid), list(form.starts)
        if key in self.planned:  # unchecked runs never tell writes apart: they share regions
            return [tuple(_fresh(region) for region in piece) for piece in self.planned[key]] if self.checks else self.planned[key]
        still = () if self.checks else still_axes(dest, grids[1], starts[1], site)
        if still:  # points writing one row (a class of replicas) at one place write the same: once (from the forms)
            grids, starts = tuple(cut_to_first(g, still) for g in grids), [cut_to_first(s, still) for s in starts]
        whole = tuple(strided_side(*side, size, write, site) for side, write in zip(zip((source, dest), grids, starts), (False, True)))
        if None not in whole:  # affine on both sides: one strided view each, from the forms
            self.planned[key] = [whole]
            return self.planned[key]
        pieces = narrow_pieces((source, dest), grids, tuple(starts), size, site, collapse=not self.checks)
        if pieces is not None:
            self.planned[key] = pieces
            return pieces
        sides = []
        for buffer, grid, start, verb in zip((source, dest), grids, starts, ("reads", "writes")):
            tiles = grid.tiles()
            sides.append(Side(buffer.rows(tiles, site, verb), tiles, start.tiles(), buffer.elements, verb == "writes", affine=True))
        sizes = tuple(grids[0].sizes)
        if not self.checks:  # points writing one row (a class of replicas) at one place write the same: once
            for axis, repeated in enumerate(constant_axes([sides[1].rows, sides[1].starts], sizes)):
                if repeated and sizes[axis] > 1:
                    sides = [side.take(axis, 0, 1, sizes) for side in sides]
                    sizes = (*sizes[:axis], 1, *sizes[axis + 1 :])
        pieces = strided_pieces(*sides, size, sizes) or [tuple(copy_region(side.rows, side.tiles, side.starts, size) for side in sides)]
        self.planned[key] = pieces
        return pieces

    def _ipu_ring_all_reduce(self, op: ipu.RingAllReduceOp, site: Site) -> RingAllReduce:
        """Between global syncs (ipu-schedule puts them there): its ring steps are supersteps of their own."""
        source, dest = self._buffer(op.source, site), self._buffer(op.dest, site)
        self._written(dest.name)
        step = plan_ring_all_reduce(op, site, (source, dest), self._slot(op.operation), self.target)
        self.writes.append(StreamWrite(dest.name, step.scatter.tiles))  # as a stream from the host: each tile apart
        if self.checks:  # the profile is the checked plan's
            counts = np.zeros(self.target.num_tiles, np.int64)
            for tile, count in elements_per_tile(op.mapping, step.gather.shape).items():
                counts[tile] = count
            self._close(None)
            element_type = ir.RankedTensorType(op.type).element_type
            priced = price_ring_all_reduce(site_record(op), op.ring, element_type, counts, dest.element_bytes, self.repeat, self.target)
            for superstep in priced:
                self.supersteps.append(superstep)
                if self.count is not None:  # in an If (once per accumulated step): counted as it runs
                    self.counted.append((superstep, self.count, superstep.repeat))
        return step

    def _ipu_execute(self, op: ipu.ExecuteOp, site: Site) -> Execute:
        name = op.compute_set
        self._end_exchange()
        compute_set = self.compute_sets.get(name) or self._compute_set(name, site)
        self.last_use.update(dict.fromkeys(compute_set.buffers, self.position))
        for buffer in compute_set.buffers:
            self.first_use.setdefault(buffer, self.position)
        self.current.add_compute(compute_set.cycles_per_tile, site.record(compute_set=name))
        return Execute(compute_set.groups)

    def _scf_for(self, op: ir.OpView, site: Site) -> Repeat:
        if len(op.operands) != 3 or len(op.results):
            raise site.error("with loop-carried values is not supported in an ipu program (Repeat has none)")
        bounds = [self.indices.get(value) for value in op.operands]
        if None in bounds:
            raise site.error("needs bounds defined by arith.constant in the program")
        lower, upper, step = bounds
        count = max(0, -(-(upper - lower) // step)) if step > 0 else 0
        outer = self.repeat
        self.repeat = outer * count
        self._close(None)  # the loop starts a superstep, with its trip count
        self.depth += 1
        body = self._block(op.regions[0].blocks[0])
        self.repeat, self.depth = outer, self.depth - 1
        self._close(None)
        return Repeat(count, body)

    def _scf_yield(self, op: ir.OpView, site: Site) -> None:
        return None

    # Data-dependent control flow: runtime/control_flow.py plans it.

    def _scf_condition(self, op: ir.OpView, site: Site) -> None:
        self.predicate = control_flow.predicate_of(self, op.operands[0], site)

    def _ipu_predicate(self, op: ir.OpView, site: Site) -> None:
        return None  # read where control flow uses it (control_flow.predicate_of)

    def _scf_if(self, op: ir.OpView, site: Site) -> If:
        return control_flow.plan_if(self, op, site)

    def _scf_index_switch(self, op: ir.OpView, site: Site) -> Switch:
        return control_flow.plan_switch(self, op, site)

    def _scf_while(self, op: ir.OpView, site: Site) -> While:
        return control_flow.plan_while(self, op, site)

    def _func_return(self, op: ir.OpView, site: Site) -> None:
        self.results = [self.slots[value] for value in op.operands]

    # Compute sets and codelets.

    def _compute_set(self, name: str, execute: Site) -> _ComputeSet:
        function = self.program.function(name, ipu.COMPUTE_SET_ATTR)
        groups, accesses = [], []
        cycles = np.zeros(self.target.num_tiles, np.int64)
        for op in function.regions[0].blocks[0].operations:
            site = site_of(op)
            if site.name == "func.return":
                continue
            if site.name != "ipu.vertex_group":
                raise site.error(f"is not allowed in compute set @{name}: only ipu.vertex_group ops are")
            group, cost = self._vertex_group(op, site)
            cycles[group.tiles] += cost
            for write, edges in ((False, group.inputs), (True, group.outputs)):
                accesses += [Access(buffer, region, write, site, len(groups)) for buffer, region in edges]
            groups.append(group)
        if self.checks:
            check_races(accesses, f"compute set @{name}")
        self.compute_sets[name] = _ComputeSet(groups, cycles, {a.buffer.name for a in accesses})
        return self.compute_sets[name]

    def _vertex_group(self, op: ipu.VertexGroupOp, site: Site) -> tuple[VertexGroup, int]:
        # The verifier checked the grid, the codelet, its signature against the buffers.
        codelet, grid, names = op.codelet, op.tiles, {"input": op.inputs, "output": op.outputs}
        tiles = grid.tiles()
        function = self.program.function(codelet, ipu.CODELET_ATTR)
        signature = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
        sizes = tuple(grid.sizes) or (1,)
        edges = {}
        for role, types in (("input", signature.inputs), ("output", signature.results)):
            edges[role] = [self._edge(site, role, self._buffer(name, site), t, tiles) for name, t in zip(names[role], types)]
        for name in names["output"]:
            self._written(name)
        # grid axes along which every output is one row (replicas) are computed at their first point
        outputs = [rows for _, rows, _ in edges["output"]]
        kept = tuple(not repeated for repeated in constant_axes(outputs, sizes)) if outputs else (True,) * len(sizes)
        regions = {
            role: [(buffer, grid_region(rows, tiles, sizes, shape, kept)) for buffer, rows, shape in found] for role, found in edges.items()
        }
        kernel, error_type, cost = self._codelet(codelet, function, len(sizes), site)
        self.vertices += tiles.size
        self.edges += tiles.size * (len(edges["input"]) + len(edges["output"]))
        if self.checks:
            self.writes.append(ComputeWrite(tiles, tuple(names["input"]), tuple(names["output"])))
        return VertexGroup(site, tiles, codelet, kernel, error_type, regions["input"], regions["output"]), cost

    def _edge(self, site: Site, role: str, buffer: Buffer, type_: ir.Type, tiles: np.ndarray):
        """A codelet argument or result: the buffer, its rows on the tiles and the shape of the
        leading elements the codelet sees (the verifier checked that they fit in the buffer)."""
        return buffer, buffer.rows(tiles, site, "reads" if role == "input" else "writes"), tuple(type_.shape)

    def _codelet(self, name: str, function: ir.OpView, rank: int, site: Site):
        """The codelet compiled for `rank` grid axes, its error type and its cycles; once per
        distinct body (`body_key`): a codelet whose body another's equals takes its cycles and,
        when shareable, its plan renamed."""
        if (name, rank) in self.codelets:
            return self.codelets[name, rank]
        body, shareable = body_key(function)
        alike = self.bodies.get((body, rank)) if body is not None else None
        if alike is not None and shareable:
            self.codelets[name, rank] = (alike[0].renamed(name), CodeletError, alike[1])
            return self.codelets[name, rank]
        try:
            kernel = compile_codelet(function, rank)
        except CodeletError as error:
            raise site.error(f"codelet @{name} cannot be compiled: {error}") from None
        cycles = codelet_cycles(function, self.target) if alike is None else alike[1]
        if body is not None and alike is None:
            self.bodies[body, rank] = (kernel, cycles)
        self.codelets[name, rank] = (kernel, CodeletError, cycles)
        return self.codelets[name, rank]


def _add_link_flows(
    flows: dict[tuple[int, int], int], src: TileGrid, dst: TileGrid, src_starts: TileGrid, message_bytes: int, target
) -> None:
    """Adds a copy's bytes between IPUs to `flows`, per (source IPU, destination IPU). A message
    that several tiles of one IPU receive from the same place crosses the links once (an
    assumption, as Poplar moves a tensor to another IPU once and spreads it there with the
    on-chip exchange): a broadcast operand is not priced once per receiving tile."""
    ipu_of, per_ipu, num_ipus = target.ipu_of_tile, target.tiles_per_ipu, target.num_ipus
    if len({ipu_of(src.min_tile), ipu_of(src.max_tile), ipu_of(dst.min_tile), ipu_of(dst.max_tile)}) == 1:
        return  # on one IPU: no link
    sources, starts, to = src.tiles(), src_starts.tiles(), dst.tiles() // per_ipu
    crossing = sources // per_ipu != to
    keys = np.unique((sources[crossing] * (int(starts.max()) + 1) + starts[crossing]) * num_ipus + to[crossing])
    pairs, counts = np.unique((keys // num_ipus // (int(starts.max()) + 1) // per_ipu) * num_ipus + keys % num_ipus, return_counts=True)
    for pair, count in zip(pairs, counts):
        key = divmod(int(pair), num_ipus)
        flows[key] = flows.get(key, 0) + int(count) * message_bytes


class Variable:
    """A device variable (`ipu.variable`): its buffer, and the host's write and read of it by
    name, planned as host streams of slot 0 (`Simulator.write_variable`, `read_variable`)."""

    def __init__(self, buffer: Buffer, op: ipu.VariableOp, target: Target):
        site = site_of(op)
        self.buffer = buffer
        self.shape, self.dtype = static_tensor(op.type, site, f"device variable '{op.variable_name}'")
        self.to_device = HostToDevice(buffer, op, op.type, 0, site, target)
        self.to_host = DeviceToHost(buffer, op, op.type, 0, site, target)

    def write(self, array: np.ndarray, check: bool) -> None:
        if check:  # a fresh write: the mask forgets what the buffer held
            self.buffer.resident = False
            self.buffer.reset()
            self.buffer.resident = True
        self.to_device.run([array], check)

    def read(self, check: bool) -> np.ndarray:
        values = [None]
        self.to_host.run(values, check)
        return values[0]


@dataclass(frozen=True)
class _CopyForm:
    """An `ipu.copy`'s grids and offsets decoded (`Planner._copy_form`), numbered: the key of
    its pieces and its traffic, shared by the copies of equal attributes."""

    number: int
    src_grid: TileGrid
    dst_grid: TileGrid
    starts: tuple[TileGrid, TileGrid]  # the first element on each side, affine like the tiles
    senders: TileGrid  # the source grid with the axes that repeat one message cut to one point


def _share_rows(buffers) -> None:
    """One array of rows per tile for the buffers whose rows are laid out alike, read-only from
    now on: a pipeline repeats each layer's buffers per micro-batch, and each array has an entry
    per tile of the target."""
    shared: dict[bytes, np.ndarray] = {}
    for buffer in buffers:
        buffer.row_of_tile = shared.setdefault(buffer.row_of_tile.tobytes(), buffer.row_of_tile)
        buffer.row_of_tile.flags.writeable = False


def _symbol_name(attribute: ir.Attribute) -> str:
    return ir.FlatSymbolRefAttr(attribute).value


def _size(attribute: ir.Attribute) -> int:
    return i64_value(attribute, "'size'")


def _fresh(region: Region) -> Region:
    """The same region as another copy's, an object of its own (`Buffer.write` tells writes
    apart by identity)."""
    return region.fresh() if isinstance(region, Strided) else type(region)(region.rows, region.tiles, region.lo, region.count)


def accesses(step) -> tuple[list[Buffer], list[Buffer]]:
    """The buffers a copy or compute set reads and writes (none for other steps)."""
    if isinstance(step, Copy):
        return [step.source], [step.dest]
    if isinstance(step, Execute):
        return [b for g in step.groups for b, _ in g.inputs], [b for g in step.groups for b, _ in g.outputs]
    return [], []


def _program(program: Program, entry: str) -> ir.OpView:
    found = program.function(entry, ipu.PROGRAM_ATTR)
    if found is not None:
        return found
    names = ", ".join("@" + ir.StringAttr(op.attributes["sym_name"]).value for op in program.functions(ipu.PROGRAM_ATTR))
    raise SimulationError(
        f"no function @{entry} marked {ipu.PROGRAM_ATTR}" + (f" (programs: {names})" if names else ": the module is not an L3 program")
    )


def _host_constant(op: ir.OpView, value: ir.Attribute, tensor: ir.RankedTensorType, site: Site) -> np.ndarray:
    """A weight: `dense` or `dense_resource` (`dialects/resources.py` reads its blob)."""
    dtype = element_dtype(tensor.element_type, site)
    array = dense_array(value, dtype)
    if array is None:
        raise site.error(f"has a value the simulator cannot read: {value}")
    return np.ascontiguousarray(array, dtype).reshape(tuple(tensor.shape))
