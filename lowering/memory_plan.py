"""`ipu-memory-plan` (L3): liveness, one offset per buffer with reuse of dead bytes, a memory
report, and Poplar's out-of-memory error at compile time.

The pass's docstring (`ipu-opt --help-pass ipu-memory-plan`) explains it, with a before/after
example. The pieces are usable alone: `analyze_liveness(module, num_tiles)` gives every
buffer's live range, `assign_offsets(...)` packs buffers given their sizes, live ranges and
tiles, `plan_memory(liveness, target, reuse)` does both and adds per-tile figures, and
`memory_report(with_reuse, without_reuse)` is the report's content.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import MalformedAttribute, TileGrid
from ipu_mlir.dialects.program import Program
from ipu_mlir.target import DEFAULT_TARGET, Target, target_of
from ipu_mlir.target.diagnostics import IpuError, describe_location, op_error

from .pass_registry import ModulePass, register_pass

# Assumption: every buffer starts on an 8-byte boundary (or its element size, if larger), as
# Poplar aligns variables for the 64-bit load/store paths; the verifier only needs the element size.
MIN_ALIGNMENT = 8
_NEVER = np.iinfo(np.int64).max  # start step of a buffer the program never touches


@register_pass
@dataclass
class MemoryPlan(ModulePass):
    """Give every ipu.buffer an SRAM offset, reusing the bytes of dead buffers (L3).

    Program order is the order of the ops in the program function (`ipu.program`), nested
    ones included; ops are numbered from 0. An op *uses* every buffer it names, directly
    (streams, copies) or through the compute set it executes (vertex group inputs and
    outputs). A buffer is live from its first use to its last; inside an `scf.for` (or any
    region op but `scf.if`, whose branches exclude each other) it is live for the whole loop.
    A weight, a buffer an `ipu.host_to_device` fills from an `arith.constant`, is live for
    the whole program: it is written once when the program is loaded (as Poplar's engine
    loads a graph's constants), so its bytes are never reused. When the weights cannot all
    stay resident (full-size GPT-2 on gc200: 498 MB of f32 parameters beside the activations),
    the plan falls back to weights live from their first use to their last, streamed by
    every run. A device variable's buffer (`ipu.variable`: state the host writes by name and
    the program updates in place) is live for the whole program, always. Liveness is counted in
    supersteps, the ops between two `ipu.sync`s, so the inputs and outputs of one exchange
    phase or compute set are always live together.

    A buffer has one offset on all its tiles (compact SPMD form), so two buffers conflict
    when their tile sets intersect and their live supersteps overlap; conflicting buffers
    get disjoint bytes. Offsets are aligned to 8 bytes (an assumption, see MIN_ALIGNMENT).
    Greedy first fit: each buffer goes at the lowest offset clear of the conflicting buffers
    already placed, largest first and, separately, widest first; the plan with the lower
    peak per tile is kept. Existing offsets are replaced. With `reuse=false` every buffer
    conflicts with every buffer on a common tile (no reuse), which measures what reuse saves.

    If a tile's buffers reach beyond its memory the pass fails at the largest buffer there:
    `Out of memory on tile 3: 70000 bytes used but tiles only have 65536 bytes; largest
    buffers there: @a (40000 B, live ops 2-9, placed by the op at model.py:12:5), ...` (the worst
    tile, and how many overflow; each buffer with the location ipu-schedule gave it, that of the
    op whose result it holds), then the device variables on that tile and the activations and
    inputs live at its fullest superstep.
    `report=FILE` writes a JSON report (per-tile peak bytes, most loaded tiles, buffers with
    offsets and live ranges, peak with and without reuse and their ratio); `report=-` prints
    it as a table on stderr. The report is written even when memory overflows.

    Before, with `ipu-memory-plan` (@x is dead once @y is computed, so @t takes its bytes):

        "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
        "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
        "ipu.buffer"() {sym_name = "t", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>}
        func.func @main(%arg0: tensor<1024xf32>) -> tensor<1024xf32> attributes {ipu.program} {
          "ipu.host_to_device"(%arg0) {buffer = @x, ...}
          "ipu.sync"() {kind = "external"}
          "ipu.execute"() {compute_set = @x_to_y}
          "ipu.sync"() {kind = "internal"}
          "ipu.execute"() {compute_set = @y_to_t}
          "ipu.sync"() {kind = "internal"}
          %0 = "ipu.device_to_host"() {buffer = @t, ...}
          ...

    After:

        "ipu.buffer"() {offset = 0 : i64, sym_name = "x", ...}
        "ipu.buffer"() {offset = 256 : i64, sym_name = "y", ...}
        "ipu.buffer"() {offset = 0 : i64, sym_name = "t", ...}
    """

    name = "ipu-memory-plan"

    report: str = field(default="", metadata={"help": "write a JSON memory report to this file; '-' prints a table on stderr"})
    reuse: bool = field(default=True, metadata={"help": "let buffers with disjoint live ranges share bytes (false: each buffer its own)"})
    target: str = field(default="", metadata={"help": f"target name or .toml path; empty: the module's ipu.target, else {DEFAULT_TARGET}"})

    def run(self, module: ir.Operation) -> None:
        target = target_of(module, self.target or None)
        liveness = analyze_liveness(module, target.num_tiles)
        if not liveness.names:
            return  # not an L3 module: nothing to place
        plan = chosen_plan(module, target, self.reuse, liveness)
        liveness = plan.liveness
        if self.report:
            other = plan_memory(liveness, target, reuse=not self.reuse)
            with_reuse, without = (plan, other) if self.reuse else (other, plan)
            _write_report(memory_report(with_reuse, without, chosen=plan), self.report, plan)
        _check_fits(plan)
        i64 = ir.IntegerType.get_signless(64, module.context)
        for op, offset in zip(liveness.ops, plan.offsets):
            op.attributes["offset"] = ir.IntegerAttr.get(i64, int(offset))


# --- Liveness -----------------------------------------------------------------------------


@dataclass
class Liveness:
    """The module's buffers in declaration order and when the program uses them.

    `live_ops[i]` is buffer i's first and last op (numbered in program order), `live_steps[i]`
    the same in supersteps; `[-1, -1]` and `[_NEVER, -1]` for a buffer no op uses (it then
    conflicts with nothing). `tiles`/`owner` list every (tile, buffer) pair once.
    """

    names: list[str]
    ops: list[ir.OpView]
    bytes: np.ndarray
    alignment: np.ndarray
    grids: list[TileGrid]
    live_ops: np.ndarray
    live_steps: np.ndarray
    tiles: np.ndarray
    owner: np.ndarray
    num_ops: int
    num_steps: int
    weights_resident: bool = False  # some weight is live for the whole program
    variables: dict[str, str] = field(default_factory=dict)  # buffer -> device variable's name (`ipu.variable`)
    weights: frozenset[str] = frozenset()  # buffers streamed from constants


def analyze_liveness(module: ir.Operation, num_tiles: int, resident_weights: bool = True) -> Liveness:
    program = Program(module)
    buffers = program.buffers()
    variables = {op.buffer: op.variable_name for op in program.variables()}  # buffer -> name
    names = [b.sym_name for b in buffers]
    try:
        grids = [b.tiles for b in buffers]
        sizes = np.array([b.bytes_per_tile for b in buffers], dtype=np.int64)
        elements = [ipu.element_bytes(b.type.element_type) for b in buffers]
    except MalformedAttribute as error:  # the verifier names the op; here any buffer will do
        raise IpuError(str(error), module.location) from None
    walker = _ProgramWalker(program, set(names))
    programs = program.functions(ipu.PROGRAM_ATTR)
    for program in programs:
        walker.block(program.regions[0].blocks[0])
    index = {name: i for i, name in enumerate(names)}
    live_ops = np.full((len(names), 2), -1, dtype=np.int64)
    for name, span in walker.span.items():
        live_ops[index[name]] = span
    resident = sorted(walker.weights) if resident_weights else []
    for name in [*resident, *(v for v in variables if v in index)]:  # resident from load on (the pass's docstring)
        live_ops[index[name]] = [0, len(walker.step_of_op) - 1]
    if not programs:  # unknown use: every buffer live all the time, which is always safe
        live_ops[:] = 0
    steps = np.array(walker.step_of_op + [walker.step], dtype=np.int64)
    live_steps = np.where(live_ops >= 0, steps[np.maximum(live_ops, 0)], [_NEVER, -1])
    tiles = [g.tiles() for g in grids]
    for name, t in zip(names, tiles):
        if t.size and (t.min() < 0 or t.max() >= num_tiles):
            raise op_error(
                buffers[index[name]], f"'tiles': tile grid reaches tiles {t.min()}..{t.max()}, outside the target's {num_tiles} tiles"
            )
    counts = np.array([t.size for t in tiles], dtype=np.int64)
    return Liveness(
        names=names,
        ops=buffers,
        bytes=sizes,
        alignment=np.maximum(MIN_ALIGNMENT, np.array(elements, dtype=np.int64)),
        grids=grids,
        live_ops=live_ops,
        live_steps=live_steps,
        tiles=np.concatenate(tiles) if tiles else np.zeros(0, np.int64),
        owner=np.repeat(np.arange(len(names)), counts),
        num_ops=len(walker.step_of_op),
        num_steps=walker.step + 1,
        weights_resident=bool(resident),
        variables={name: variables[name] for name in names if name in variables},
        weights=frozenset(walker.weights),
    )


class _ProgramWalker:
    """Numbers the program's ops and records each buffer's first and last use."""

    def __init__(self, program: Program, buffers: set[str]):
        self.program, self.buffers = program, buffers
        self.step_of_op: list[int] = []
        self.step = 0
        self.span: dict[str, list[int]] = {}
        self.weights: set[str] = set()  # buffers streamed from constants

    def block(self, block: ir.Block) -> set[str]:
        """Walks `block`; returns the buffers used in it."""
        used: set[str] = set()
        for op in block.operations:
            if op.operation.name == "scf.yield":
                continue  # not numbered: the printer leaves a loop's empty yield out of the text
            index = len(self.step_of_op)
            self.step_of_op.append(self.step)
            for name in self.uses(op.operation):
                self.touch(name, index)
                used.add(name)
            if op.operation.name == "ipu.host_to_device" and _is_constant(op.operands[0]):
                self.weights |= self.uses(op.operation)
            if op.operation.name == "ipu.sync":
                self.step += 1  # the sync closes its superstep; the next op starts a new one
            inner: set[str] = set()
            for region in op.operation.regions:
                for nested in region.blocks:
                    inner |= self.block(nested)
            if inner and op.operation.name != "scf.if":
                # A loop body runs again after its last op: what it uses lives all through it.
                for name in inner:
                    self.touch(name, index)
                    self.touch(name, len(self.step_of_op) - 1)
            used |= inner
        return used

    def touch(self, name: str, index: int) -> None:
        span = self.span.setdefault(name, [index, index])
        span[0], span[1] = min(span[0], index), max(span[1], index)

    def uses(self, op: ir.Operation) -> set[str]:
        try:
            reads, writes = self.program.accesses(op)
        except MalformedAttribute as error:
            raise op_error(op.opview, str(error)) from None
        return {name for name in (*reads, *writes) if name in self.buffers}


def _is_constant(value: ir.Value) -> bool:
    owner = value.owner  # a block for a block argument
    return isinstance(owner, ir.OpView | ir.Operation) and owner.operation.name == "arith.constant"


# --- Offsets --------------------------------------------------------------------------------


def tile_bitsets(tiles: np.ndarray, owner: np.ndarray, num_buffers: int, num_tiles: int) -> np.ndarray:
    """Row i: buffer i's tile set as packed bits (little bit order), num_tiles / 8 bytes."""
    dense = np.zeros((num_buffers, num_tiles), dtype=bool)
    dense[owner, tiles] = True
    return np.packbits(dense, axis=1, bitorder="little")


def assign_offsets(
    sizes: np.ndarray, alignment: np.ndarray, starts: np.ndarray, ends: np.ndarray, tiles: np.ndarray, owner: np.ndarray, num_tiles: int
) -> np.ndarray:
    """Offsets such that two buffers whose live ranges [start, end] overlap and whose tile sets
    intersect have disjoint bytes [offset, offset + size).

    Greedy first fit in two orders, keeping the plan with the lower peak (then total) bytes
    per tile: largest first, the classic order for one memory; and widest (most tiles)
    first, because one offset holds on all a buffer's tiles, so a large buffer on a few tiles
    placed early can push a wide one up on every tile.
    """
    n = len(sizes)
    bits = tile_bitsets(tiles, owner, n, num_tiles)
    low = np.full(n, num_tiles, dtype=np.int64)
    high = np.full(n, -1, dtype=np.int64)
    np.minimum.at(low, owner, tiles)
    np.maximum.at(high, owner, tiles)
    width = np.bincount(owner, minlength=n)
    best, best_cost = None, None
    for order in (np.lexsort((np.arange(n), starts, -sizes)), np.lexsort((np.arange(n), -sizes, -width))):
        offsets = _first_fit(order, sizes, alignment, starts, ends, low, high, bits)
        footprint = np.zeros(num_tiles, dtype=np.int64)
        np.maximum.at(footprint, tiles, (offsets + sizes)[owner])
        cost = (int(footprint.max(initial=0)), int(footprint.sum()))
        if best_cost is None or cost < best_cost:
            best, best_cost = offsets, cost
    return best


def _first_fit(order, sizes, alignment, starts, ends, low, high, bits) -> np.ndarray:
    """Places the buffers in `order`, each at the lowest aligned offset clear of the conflicting
    buffers already placed. Each step tests all placed buffers at once with numpy: live ranges
    and tile ranges first, then tile sets as bitsets (num_tiles / 8 bytes each)."""
    offsets = np.zeros(len(sizes), dtype=np.int64)
    placed = np.zeros(len(sizes), dtype=bool)
    for i in order:
        near = placed & (starts <= ends[i]) & (ends >= starts[i]) & (low <= high[i]) & (high >= low[i])
        others = np.flatnonzero(near)
        if others.size:
            others = others[(bits[others] & bits[i]).any(axis=1)]
        offsets[i] = _lowest_gap(offsets[others], offsets[others] + sizes[others], int(sizes[i]), int(alignment[i]))
        placed[i] = True
    return offsets


def _lowest_gap(lo: np.ndarray, hi: np.ndarray, size: int, alignment: int) -> int:
    """The lowest multiple of `alignment` where `size` bytes miss every range [lo, hi).

    The answer is 0 or the aligned end of the ranges below it: with ranges sorted by start,
    candidate k is past the first k ranges and fits if it ends before range k starts."""
    if lo.size == 0:
        return 0
    order = np.argsort(lo, kind="stable")
    candidates = np.concatenate(([0], np.maximum.accumulate(hi[order])))
    candidates = -(-candidates // alignment) * alignment
    limits = np.concatenate((lo[order], [_NEVER]))
    return int(candidates[np.argmax(candidates + size <= limits)])


# --- Plan and per-tile figures --------------------------------------------------------------


@dataclass
class Plan:
    """Offsets for `liveness`'s buffers on `target`, and what they cost per tile.

    `footprint[t]`: the end of the highest buffer on tile t (its peak memory under this plan);
    `live_bound[t]`: the most bytes live on tile t at one superstep, a lower bound for any plan.
    """

    liveness: Liveness
    target: Target
    reuse: bool
    offsets: np.ndarray
    footprint: np.ndarray
    live_bound: np.ndarray

    def fits(self) -> bool:
        return bool((self.footprint <= self.target.tile_memory_bytes).all())

    def buffers_on(self, tile: int) -> np.ndarray:
        """The buffers on `tile`, largest first."""
        on = self.liveness.owner[self.liveness.tiles == tile]
        return on[np.lexsort((on, -self.liveness.bytes[on]))]

    def describe(self, buffer: int, placed: bool = True) -> str:
        """`@name (bytes, live ops, placed by the op at file:line:col)`, or `placed by layer (aten
        op) at file:line:col` for an op of a PyTorch model (its name locations): ipu-schedule
        gives a buffer the location of the op whose result (or operand copy) it holds."""
        first, last = (int(v) for v in self.liveness.live_ops[buffer])
        live = "never used" if first < 0 else f"live op {first}" if first == last else f"live ops {first}-{last}"
        location = self.liveness.ops[buffer].location
        where = describe_location(location) if placed else ""
        origin = "" if not where else f", placed by {where}" if location.is_a_name() else f", placed by the op at {where}"
        return f"@{self.liveness.names[buffer]} ({self.liveness.bytes[buffer]} B, {live}{origin})"


def plan_memory(liveness: Liveness, target: Target, reuse: bool = True) -> Plan:
    live = liveness
    starts, ends = live.live_steps[:, 0], live.live_steps[:, 1]
    if not reuse:  # every buffer live from the first superstep to the last
        starts, ends = np.zeros_like(starts), np.full_like(ends, live.num_steps)
    offsets = assign_offsets(live.bytes, live.alignment, starts, ends, live.tiles, live.owner, target.num_tiles)
    footprint = np.zeros(target.num_tiles, dtype=np.int64)
    np.maximum.at(footprint, live.tiles, (offsets + live.bytes)[live.owner])
    return Plan(live, target, reuse, offsets, footprint, _live_bound(live, target.num_tiles))


def chosen_plan(module: ir.Operation, target: Target, reuse: bool = True, liveness: Liveness | None = None) -> Plan:
    """The plan `ipu-memory-plan` keeps: weights resident for the whole program, or, with reuse,
    when they do not all fit beside the activations, streamed by each run (their bytes reused
    between their uses), as a device program too large for its SRAM does. `plan.liveness.
    weights_resident` says which (also False for a program without weights)."""
    liveness = liveness or analyze_liveness(module, target.num_tiles)
    plan = plan_memory(liveness, target, reuse=reuse)
    if reuse and not plan.fits() and liveness.weights_resident:
        plan = plan_memory(analyze_liveness(module, target.num_tiles, resident_weights=False), target, reuse=True)
    return plan


def _live_bound(live: Liveness, num_tiles: int) -> np.ndarray:
    """Per tile, the most bytes live at one superstep. The maximum is reached where some buffer
    starts, so only those supersteps count: a difference array over (start, tile), summed."""
    used = live.live_steps[:, 0] != _NEVER
    if not used.any():
        return np.zeros(num_tiles, dtype=np.int64)
    points = np.unique(live.live_steps[used, 0])
    first = np.searchsorted(points, live.live_steps[:, 0], side="left")
    past = np.searchsorted(points, live.live_steps[:, 1], side="right")
    pairs = used[live.owner]
    tiles, owner = live.tiles[pairs], live.owner[pairs]
    delta = np.zeros((points.size + 1, num_tiles), dtype=np.int64)
    np.add.at(delta, (first[owner], tiles), live.bytes[owner])
    np.add.at(delta, (past[owner], tiles), -live.bytes[owner])
    return np.cumsum(delta, axis=0).max(axis=0)


def _check_fits(plan: Plan) -> None:
    capacity = plan.target.tile_memory_bytes
    over = np.flatnonzero(plan.footprint > capacity)
    if plan.fits():
        return
    # Ties (a buffer high on one tile lifts the offsets of wide ones on every tile) go to the
    # tile with the most bytes live at once: the one whose own buffers overflow.
    worst = int(over[np.lexsort((-plan.live_bound[over], -plan.footprint[over]))[0]])
    largest = plan.buffers_on(worst)
    message = (
        f"Out of memory on tile {worst}: {plan.footprint[worst]} bytes used but tiles only have {capacity} bytes; "
        f"largest buffers there: {', '.join(plan.describe(b) for b in largest[:3])}"
    )
    if plan.reuse and plan.live_bound[worst] <= capacity:
        # Possible because a buffer's offset holds on all its tiles: three buffers meeting
        # pairwise on three tiles need three ranges though each tile holds only two.
        message += (
            f" (at most {plan.live_bound[worst]} bytes are live at once there: buffers' offsets, shared by all their tiles, leave gaps)"
        )
    if over.size > 1:
        message += f"; {over.size} tiles are out of memory, tile {worst} is the worst"
    message += _residents_and_activations(plan, worst, largest)
    raise IpuError(message, plan.liveness.ops[int(largest[0])].location)


def _residents_and_activations(plan: Plan, tile: int, on_tile: np.ndarray) -> str:
    """What lives on `tile`: its device variables (kept for the whole program) and the
    activations live at its fullest superstep (those a backward pass keeps from the forward
    one among them), largest first."""
    live = plan.liveness
    variables = [b for b in on_tile if live.names[b] in live.variables]
    text = ""
    if variables:
        named = ", ".join(f"'{live.variables[live.names[b]]}' (@{live.names[b]}, {live.bytes[b]} B)" for b in variables[:4])
        more = f" and {len(variables) - 4} more" if len(variables) > 4 else ""
        text += f"; device variables there: {sum(int(live.bytes[b]) for b in variables)} B in {len(variables)}: {named}{more}"
    others = [b for b in on_tile if live.names[b] not in live.variables and live.names[b] not in live.weights and live.live_ops[b, 0] >= 0]
    if others:
        starts, ends = live.live_steps[others, 0], live.live_steps[others, 1]
        loads = [int(live.bytes[others][(starts <= s) & (ends >= s)].sum()) for s in starts]
        step = int(starts[int(np.argmax(loads))])
        at = [b for b, lo, hi in zip(others, starts, ends) if lo <= step <= hi]
        listed = ", ".join(plan.describe(b) for b in at[:4])
        more = f" and {len(at) - 4} more" if len(at) > 4 else ""
        text += f"; activations and inputs live at superstep {step}: {max(loads)} B in {len(at)}: {listed}{more}"
    return text


# --- Report ---------------------------------------------------------------------------------


def memory_report(with_reuse: Plan, without_reuse: Plan, chosen: Plan | None = None) -> dict:
    """The report's content (JSON-ready) for the plan `chosen` (default: `with_reuse`)."""
    plan = chosen or with_reuse
    live, target = plan.liveness, plan.target
    holding = np.zeros(target.num_tiles, dtype=bool)
    holding[live.tiles] = True
    peak, peak_without = int(with_reuse.footprint.max()), int(without_reuse.footprint.max())
    top = np.lexsort((np.arange(target.num_tiles), -plan.footprint))[: min(5, int(holding.sum()))]
    return {
        "target": target.name,
        "num_tiles": target.num_tiles,
        "tile_memory_bytes": target.tile_memory_bytes,
        "alignment": MIN_ALIGNMENT,
        "reuse": plan.reuse,
        "program_ops": live.num_ops,
        "supersteps": live.num_steps,
        "peak_bytes_per_tile": {
            "max": int(plan.footprint.max()),
            "max_tile": int(plan.footprint.argmax()),
            "mean": round(float(plan.footprint[holding].mean()), 1) if holding.any() else 0.0,
            "tiles_holding_buffers": int(holding.sum()),
            "live_bound_max": int(plan.live_bound.max()),
        },
        "per_tile": {
            "bytes": plan.footprint.tolist(),
            "live_bound": plan.live_bound.tolist(),
            "bytes_without_reuse": without_reuse.footprint.tolist(),
        },
        "top_tiles": [
            {
                "tile": int(t),
                "bytes": int(plan.footprint[t]),
                "live_bound": int(plan.live_bound[t]),
                "largest_buffers": [live.names[b] for b in plan.buffers_on(int(t))[:3]],
            }
            for t in top
        ],
        "buffers": [
            {
                "name": name,
                "bytes": int(live.bytes[i]),
                "offset": int(plan.offsets[i]),
                "tiles": list(live.grids[i].encode()),
                "num_tiles": live.grids[i].count,
                "live_ops": None if live.live_ops[i, 0] < 0 else live.live_ops[i].tolist(),
                "live_supersteps": None if live.live_ops[i, 0] < 0 else live.live_steps[i].tolist(),
                **({"variable": live.variables[name]} if name in live.variables else {}),
            }
            for i, name in enumerate(live.names)
        ],
        "totals": {
            "peak_with_reuse": peak,
            "peak_without_reuse": peak_without,
            "reuse_ratio": round(peak / peak_without, 4) if peak_without else 1.0,
            "bytes_with_reuse": int(with_reuse.footprint.sum()),
            "bytes_without_reuse": int(without_reuse.footprint.sum()),
        },
        "out_of_memory_tiles": int((plan.footprint > target.tile_memory_bytes).sum()),
    }


def format_report(report: dict, plan: Plan) -> str:
    """The human-readable table of `report=-`."""
    peak, totals = report["peak_bytes_per_tile"], report["totals"]
    lines = [
        f"memory plan for {report['target']}: {report['num_tiles']} tiles of {report['tile_memory_bytes']} bytes, "
        f"{len(report['buffers'])} buffers, {report['supersteps']} supersteps, reuse {'on' if report['reuse'] else 'off'}",
        f"peak bytes per tile: max {peak['max']} (tile {peak['max_tile']}), mean {peak['mean']:g} over the "
        f"{peak['tiles_holding_buffers']} tiles holding buffers; live at once: at most {peak['live_bound_max']}",
        f"reuse: peak {totals['peak_with_reuse']} bytes per tile with liveness-based reuse, {totals['peak_without_reuse']} "
        f"without: ratio {totals['reuse_ratio']:.3f}",
    ]
    if report["out_of_memory_tiles"]:
        lines.append(f"OUT OF MEMORY on {report['out_of_memory_tiles']} tiles")
    lines.append("most loaded tiles:")
    lines.append(f"  {'tile':>5} {'bytes':>9} {'live':>9}  largest buffers")
    for entry in report["top_tiles"]:
        largest = plan.buffers_on(entry["tile"])[:3]
        described = ", ".join(f"{plan.describe(b, placed=False)[:-1]}, at {plan.offsets[b]})" for b in largest)
        lines.append(f"  {entry['tile']:>5} {entry['bytes']:>9} {entry['live_bound']:>9}  {described}")
    return "\n".join(lines) + "\n"


def _write_report(report: dict, destination: str, plan: Plan) -> None:
    if destination == "-":
        sys.stderr.write(format_report(report, plan))
        sys.stderr.flush()
        return
    # Flat lists on one line each, so per-tile arrays stay readable.
    text = re.sub(r"\[[^\[\]{}]*\]", _one_line, json.dumps(report, indent=2))
    try:
        with open(destination, "w") as stream:
            stream.write(text + "\n")
    except OSError as error:
        raise IpuError(f"cannot write the memory report '{destination}': {error.strerror}") from None


def _one_line(match: re.Match) -> str:
    try:
        return json.dumps(json.loads(match.group()))
    except ValueError:  # a bracket inside a string: leave the list as it is
        return match.group()
