"""What a simulated run cost: per superstep, per tile, and in total.

The simulator fills one `Superstep` per run of ops between two `ipu.sync`s (a Repeat loop's
body is recorded once, with its trip count as `repeat`) and `Profile.build` adds them up.
`Profile.to_json()` is the file `ipu-run --profile` writes; docs/ipu-run.md gives its schema.
Given the program's buffers, it also records what lives in memory: each buffer's kind, size,
tiles and the supersteps it is live in, and the bytes live per superstep on the busiest tile
(the views of `ipu-vis report`, docs/pictures.md).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import record_of, space_of
from ipu_mlir.dialects.program import Program
from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.files import publish, staging_dir

PROFILE_VERSION = 1


@dataclass
class Superstep:
    """The ops between two syncs: an exchange phase, compute sets and host streams.

    Per-tile arrays have one entry per tile of the target (None: no such phase)."""

    ops: list[dict[str, str]] = field(default_factory=list)
    repeat: int = 1
    compute_cycles_per_tile: np.ndarray | None = None
    bytes_received_per_tile: np.ndarray | None = None
    bytes_sent_per_tile: np.ndarray | None = None
    # Of the bytes received, those every tile of the receiver's super tile received alike (one
    # message to all of them): they come over the super tile's shared exchange bus.
    shared_bytes_per_tile: np.ndarray | None = None
    local_bytes_per_tile: np.ndarray | None = None  # copied within a tile by `ipu.copy` (not exchange)
    host_bytes: int = 0
    sync: str | None = None  # "internal", "external", "global", or None when no sync ends it
    exchange_cycles: int = 0
    sync_cycles: int = 0
    # Bytes between IPUs over the IPU-Links, per (source IPU, destination IPU): multi-IPU targets.
    link_flows: dict[tuple[int, int], int] = field(default_factory=dict)
    link_cycles: int = 0

    @property
    def link_bytes(self) -> int:
        return sum(self.link_flows.values())

    @property
    def kind(self) -> str:
        parts = [
            name
            for name, present in (
                ("host", self.host_bytes > 0),
                ("exchange", self.bytes_received_per_tile is not None),
                ("compute", self.compute_cycles_per_tile is not None),
            )
            if present
        ]
        return "+".join(parts) or "sync"

    @property
    def compute_cycles(self) -> int:
        """The slowest tile's compute: BSP waits for it at the sync."""
        return 0 if self.compute_cycles_per_tile is None else int(self.compute_cycles_per_tile.max())

    @property
    def exchange_bytes(self) -> int:
        return 0 if self.bytes_received_per_tile is None else int(self.bytes_received_per_tile.sum())

    @property
    def cycles(self) -> int:
        return self.compute_cycles + self.exchange_cycles + self.sync_cycles

    def add_host(self, num_bytes: int, op: dict[str, str]) -> None:
        self.host_bytes += num_bytes
        self.ops.append(op)

    def add_exchange(
        self,
        senders: np.ndarray,
        receivers: np.ndarray,
        message_bytes: int,
        num_tiles: int,
        op: dict[str, str],
        sources=None,
        source_starts=None,
        tiles_per_bus: int = 1,
    ) -> None:
        """Each sender tile sends, and each receiver tile receives, one message (tiles repeat).
        With `sources` (the source tile of each receiver's message), a message whose source is
        its receiver does not go through the exchange: the tile copies it itself at memory speed
        (`cost_model.copy_work`, added to the superstep's compute by `finish`). A multicast
        (fewer senders than receivers) is still sent once. With `source_starts` too (where each
        message starts on its source tile), a message that every tile of a super tile (runs of
        `tiles_per_bus` tiles from 0) receives comes over their shared bus (`shared_bytes_per_tile`)."""
        self.add_traffic(listed_traffic(senders, receivers, num_tiles, sources, source_starts, tiles_per_bus), message_bytes, op)

    def add_traffic(self, traffic: Traffic, message_bytes: int, op: dict[str, str]) -> None:
        """An exchange's messages, counted per tile (`listed_traffic`, or runtime/traffic.py
        from a copy's affine forms), each of `message_bytes`."""
        self.ops.append(op)
        num_tiles = traffic.num_tiles
        if traffic.local is not None:
            if self.local_bytes_per_tile is None:
                self.local_bytes_per_tile = np.zeros(num_tiles, np.int64)
            self.local_bytes_per_tile += traffic.local * message_bytes
        if traffic.received is None:
            return
        if self.bytes_received_per_tile is None:
            self.bytes_received_per_tile, self.bytes_sent_per_tile = np.zeros(num_tiles, np.int64), np.zeros(num_tiles, np.int64)
            self.shared_bytes_per_tile = np.zeros(num_tiles, np.int64)
        self.bytes_received_per_tile += traffic.received * message_bytes
        self.bytes_sent_per_tile += traffic.sent * message_bytes
        if traffic.shared is not None:
            self.shared_bytes_per_tile += traffic.shared * message_bytes

    def add_compute(self, cycles_per_tile: np.ndarray, op: dict[str, str]) -> None:
        """A compute set; those of one superstep run back to back on each tile."""
        if self.compute_cycles_per_tile is None:
            self.compute_cycles_per_tile = np.zeros_like(cycles_per_tile)
        self.compute_cycles_per_tile += cycles_per_tile
        self.ops.append(op)

    def finish(self, target: Target) -> None:
        """Prices the exchange, the on-tile copies and the sync, once the superstep's ops are all in."""
        if self.local_bytes_per_tile is not None:
            sizes, which = np.unique(self.local_bytes_per_tile, return_inverse=True)  # few distinct sizes
            copies = np.array([cost_model.copy_work(int(b), target) for b in sizes], np.int64)[which]
            self.compute_cycles_per_tile = copies if self.compute_cycles_per_tile is None else self.compute_cycles_per_tile + copies
        if self.bytes_received_per_tile is not None:
            # The slowest receiver (bytes over a shared bus count 1/tiles_per_bus) or sender.
            received, shared, share = self.bytes_received_per_tile, self.shared_bytes_per_tile, target.exchange_tiles_per_shared_bus
            tile = int(np.argmax(share * (received - shared) + shared))
            receiving = cost_model.exchange_cycles(int(received[tile]), target, int(shared[tile]))
            self.exchange_cycles = max(receiving, cost_model.exchange_cycles(int(self.bytes_sent_per_tile.max()), target))
        if self.link_flows:
            # Assumption: the IPU-Links stream while the tiles exchange, so the phase lasts as
            # long as the slower of the two (poplibs' model prices the links alone).
            self.link_cycles = cost_model.link_cycles(self.link_flows, target)
            self.exchange_cycles = max(self.exchange_cycles, self.link_cycles)
        sync = cost_model.global_sync_cycles if self.sync == "global" else cost_model.sync_cycles
        self.sync_cycles = sync(target) if self.sync else 0

    def to_dict(self, index: int, tiles_per_ipu: int = 0) -> dict:
        """The superstep's record; with `tiles_per_ipu` (a multi-IPU target), its compute names
        the IPUs whose tiles work (the report's lane per IPU)."""
        record = {"index": index, "kind": self.kind, "repeat": self.repeat, "ops": self.ops, "cycles": self.cycles}
        if self.compute_cycles_per_tile is not None:
            per_tile = self.compute_cycles_per_tile
            record["compute"] = {"cycles": self.compute_cycles, "mean_cycles": float(per_tile.mean()), "cycles_per_tile": per_tile.tolist()}
            if tiles_per_ipu:
                record["compute"]["ipus"] = np.unique(np.flatnonzero(per_tile) // tiles_per_ipu).tolist()
        if self.bytes_received_per_tile is not None:
            record["exchange"] = {
                "cycles": self.exchange_cycles,
                "bytes": self.exchange_bytes,
                "bytes_received_per_tile": self.bytes_received_per_tile.tolist(),
                "bytes_sent_per_tile": self.bytes_sent_per_tile.tolist(),
            }
        if self.host_bytes:
            record["host_bytes"] = self.host_bytes
        if self.link_flows:
            flows = [{"from": src, "to": dst, "bytes": n} for (src, dst), n in sorted(self.link_flows.items())]
            record["links"] = {"cycles": self.link_cycles, "bytes": self.link_bytes, "flows": flows}
        record["sync"] = {"kind": self.sync, "cycles": self.sync_cycles} if self.sync else None
        return record


@dataclass(frozen=True)
class Traffic:
    """An exchange's messages counted per tile of the target: received through the exchange
    (None: every message was local), sent, copied on their own tile (None: none was), and of
    those received, the ones over the receiver's shared bus (None: not a multicast)."""

    num_tiles: int
    received: np.ndarray | None
    sent: np.ndarray | None
    local: np.ndarray | None
    shared: np.ndarray | None


def listed_traffic(
    senders: np.ndarray,
    receivers: np.ndarray,
    num_tiles: int,
    sources=None,
    source_starts=None,
    tiles_per_bus: int = 1,
) -> Traffic:
    """`Superstep.add_exchange`'s messages, from their listed tiles, counted per tile."""
    local_counts = None
    if sources is not None:
        sources = np.asarray(sources)
        local = sources == receivers
        if local.any():
            local_counts = np.bincount(receivers[local], minlength=num_tiles)
            senders = senders[~local] if len(senders) == len(receivers) else senders
            receivers, sources = receivers[~local], sources[~local]
            source_starts = None if source_starts is None else np.asarray(source_starts)[~local]
            if not len(receivers):
                return Traffic(num_tiles, None, None, local_counts, None)
    received, sent = np.bincount(receivers, minlength=num_tiles), np.bincount(senders, minlength=num_tiles)
    multicast = tiles_per_bus > 1 and len(senders) < len(receivers)  # only a multicast shares
    shared_counts = None
    if multicast and source_starts is not None:
        shared = _bus_shared(receivers, sources, np.asarray(source_starts), tiles_per_bus)
        shared_counts = np.bincount(receivers[shared], minlength=num_tiles)
    return Traffic(num_tiles, received, sent, local_counts, shared_counts)


def _bus_shared(receivers: np.ndarray, sources: np.ndarray, starts: np.ndarray, tiles_per_bus: int) -> np.ndarray:
    """Which receivers get their message over their super tile's shared bus: those whose
    super tile's every tile receives the same message (same source tile and start)."""
    message = np.unique(np.stack([sources, starts]), axis=1, return_inverse=True)[1].reshape(-1)
    span = int(receivers.max()) + 1
    pairs = np.unique(message * span + receivers)  # each receiver of a message once
    groups, counts = np.unique(pairs // span * span + pairs % span // tiles_per_bus, return_counts=True)
    return counts[np.searchsorted(groups, message * span + receivers // tiles_per_bus)] == tiles_per_bus


@dataclass
class BufferLife:
    """One buffer as the memory views show it: what it holds and when it is live.

    `kind`: "weight" (written once at load, `Profile.load_bytes`), "host" (filled by a host
    stream each run), "exchange" (received by copies), "compute" (written by codelets). Live
    from the first superstep naming it to the last (-1, -1 for a buffer no op names); a weight
    in every superstep, as it holds its bytes from load on."""

    name: str
    kind: str
    bytes_per_tile: int
    tiles: np.ndarray = field(repr=False)
    offset: int | None
    first: int = -1
    last: int = -1

    def to_dict(self, busiest: int) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "bytes_per_tile": self.bytes_per_tile,
            "tiles": int(self.tiles.size),
            "offset": self.offset,
            "first_step": self.first,
            "last_step": self.last,
            "on_busiest_tile": bool((self.tiles == busiest).any()),
        }


def buffer_lives(steps: list[Superstep], buffers: Iterable, compute_set_buffers: Mapping[str, Iterable[str]]) -> list[BufferLife]:
    """The lives of `buffers` (objects with name, bytes, tiles, offset, resident:
    runtime/memory.py's Buffer) over `steps`, from the buffers their ops name (an execute: its
    compute set's)."""
    lives = {b.name: BufferLife(b.name, "compute", int(b.bytes), np.asarray(b.tiles), b.offset) for b in buffers}
    for index, step in enumerate(steps):
        for op in step.ops:
            named = [op[key] for key in ("buffer", "source", "dest") if key in op]
            named += compute_set_buffers.get(op.get("compute_set", ""), ())
            for name in named:
                life = lives[name]
                life.first = index if life.first < 0 else life.first
                life.last = index
            if op["op"] == "ipu.host_to_device":
                lives[op["buffer"]].kind = "host"
            elif op["op"] == "ipu.copy" and lives[op["dest"]].kind == "compute":
                lives[op["dest"]].kind = "exchange"
    for buffer in buffers:
        if buffer.resident:
            life = lives[buffer.name]
            life.kind, life.first, life.last = "weight", 0, len(steps) - 1
    return list(lives.values())


_RUN_TOTALS = ("cycles", "compute_cycles", "exchange_cycles", "sync_cycles", "supersteps", "host_bytes", "exchange_bytes")
_RUN_TOTALS += ("link_bytes", "global_syncs")  # what one run adds: scaled by `repeated`, summed by `summed`


@dataclass
class Profile:
    """Totals of a run (the `ipu-run` summary), with the per-superstep and per-tile detail.

    Cycles are device cycles at the target's clock, summed over supersteps (each counted
    `repeat` times); host streams are priced separately at the host link's rate."""

    target: str
    entry: str
    clock_hz: int
    num_tiles: int
    tile_memory_bytes: int
    cycles: int
    seconds: float
    compute_cycles: int
    exchange_cycles: int
    sync_cycles: int
    supersteps: int
    host_bytes: int
    host_seconds: float
    exchange_bytes: int
    vertices: int
    edges: int
    peak_memory_per_tile: int
    mean_memory_per_tile: float
    memory_per_tile: np.ndarray = field(repr=False)
    steps: list[Superstep] = field(repr=False)
    iterations: int = 1  # runs of the program on device, one call (`repeated`: deviceIterations)
    buffers: list[BufferLife] = field(default_factory=list, repr=False)
    load_bytes: int = 0  # weights written into tile memory once, when the program is loaded
    load_seconds: float = 0.0
    link_bytes: int = 0  # between IPUs, over the IPU-Links
    global_syncs: int = 0
    num_ipus: int = 1
    # `program_summary` (layers, FLOPs, vertex groups): what only a report reads, so made when
    # first asked (`summary_of_program`) from `summarize`, not at load (1.6 of BERT-base's 8 s).
    program: dict = field(default_factory=dict, repr=False)
    summarize: Callable[[], dict] | None = field(default=None, repr=False, compare=False)

    @staticmethod
    def build(
        target: Target,
        entry: str,
        steps: list[Superstep],
        memory_per_tile: np.ndarray,
        vertices: int,
        edges: int,
        buffers: list[BufferLife] | None = None,
        load_bytes: int = 0,
    ) -> Profile:
        def total(value) -> int:
            return int(sum(value(step) * step.repeat for step in steps))

        cycles = total(lambda s: s.cycles)
        host_bytes = total(lambda s: s.host_bytes)
        return Profile(
            target=target.name,
            entry=entry,
            clock_hz=target.clock_hz,
            num_tiles=target.num_tiles,
            tile_memory_bytes=target.tile_memory_bytes,
            cycles=cycles,
            seconds=target.seconds(cycles),
            compute_cycles=total(lambda s: s.compute_cycles),
            exchange_cycles=total(lambda s: s.exchange_cycles),
            sync_cycles=total(lambda s: s.sync_cycles),
            supersteps=total(lambda s: 1),
            host_bytes=host_bytes,
            host_seconds=cost_model.host_seconds(host_bytes, target),
            exchange_bytes=total(lambda s: s.exchange_bytes),
            vertices=vertices,
            edges=edges,
            peak_memory_per_tile=int(memory_per_tile.max()),
            mean_memory_per_tile=float(memory_per_tile.mean()),
            memory_per_tile=memory_per_tile,
            steps=steps,
            buffers=buffers or [],
            load_bytes=load_bytes,
            load_seconds=cost_model.host_seconds(load_bytes, target),
            link_bytes=total(lambda s: s.link_bytes),
            global_syncs=total(lambda s: s.sync == "global"),
            num_ipus=target.num_ipus,
        )

    def repeated(self, iterations: int) -> Profile:
        """This profile of one run, for `iterations` runs on device in one call (Poplar's Repeat
        around the program, PopTorch's deviceIterations): its totals times `iterations`, its
        per-superstep records and memory those of one run."""
        n = iterations / self.iterations
        scaled = {name: int(getattr(self, name) * n) for name in _RUN_TOTALS}
        return dataclasses.replace(self, **scaled, seconds=self.seconds * n, host_seconds=self.host_seconds * n, iterations=iterations)

    @staticmethod
    def summed(runs: list[Profile]) -> Profile:
        """The profile of one call's `runs` on device, each with its own counts of data-dependent
        control flow (an If taken on some iterations only, as gradient accumulation's all-reduce
        on the last micro-batch of each group): their totals summed, the per-superstep records
        and memory the last run's."""
        totals = {name: sum(getattr(run, name) for run in runs) for name in _RUN_TOTALS}
        seconds = {name: sum(getattr(run, name) for run in runs) for name in ("seconds", "host_seconds")}
        return dataclasses.replace(runs[-1], **totals, **seconds, iterations=sum(run.iterations for run in runs))

    @property
    def busiest_tile(self) -> int:
        return int(self.memory_per_tile.argmax())

    def live_bytes(self) -> tuple[np.ndarray, np.ndarray]:
        """Bytes live in each superstep: on the busiest tile, and on all tiles together."""
        on_tile, on_chip = np.zeros(len(self.steps), np.int64), np.zeros(len(self.steps), np.int64)
        busiest = self.busiest_tile
        for life in self.buffers:
            if life.first >= 0:
                on_chip[life.first : life.last + 1] += life.bytes_per_tile * life.tiles.size
                if (life.tiles == busiest).any():
                    on_tile[life.first : life.last + 1] += life.bytes_per_tile
        return on_tile, on_chip

    def summary_fields(self) -> dict:
        multi_ipu = ("link_bytes", "global_syncs") if self.link_bytes or self.global_syncs else ()
        return {
            name: getattr(self, name)
            for name in (
                "target", "entry", "cycles", "seconds", "supersteps", "compute_cycles", "exchange_cycles", "sync_cycles",
                "host_bytes", "host_seconds", "load_bytes", "load_seconds", "exchange_bytes", "vertices", "edges",
                "peak_memory_per_tile", "mean_memory_per_tile", "iterations", *multi_ipu,
            )
        }  # fmt: skip

    def to_dict(self) -> dict:
        return {
            "version": PROFILE_VERSION,
            "summary": self.summary_fields(),
            "target": {
                "name": self.target,
                "clock_hz": self.clock_hz,
                "num_tiles": self.num_tiles,
                "tile_memory_bytes": self.tile_memory_bytes,
                **({"num_ipus": self.num_ipus} if self.num_ipus > 1 else {}),
            },
            "memory": {
                "peak_bytes": self.peak_memory_per_tile,
                "mean_bytes": self.mean_memory_per_tile,
                "bytes_per_tile": self.memory_per_tile.tolist(),
            },
            "supersteps": [
                step.to_dict(index, self.num_tiles // self.num_ipus if self.num_ipus > 1 else 0) for index, step in enumerate(self.steps)
            ],
            **self._memory_views(),
            **({"program": self.summary_of_program()} if self.program or self.summarize else {}),
        }

    def summary_of_program(self) -> dict:
        """`program`, made from `summarize` the first time it is asked for."""
        if not self.program and self.summarize is not None:
            self.program = self.summarize()
        return self.program

    def _memory_views(self) -> dict:
        """`buffers` and `liveness`, when the profile was built with the program's buffers."""
        if not self.buffers:
            return {}
        on_tile, on_chip = self.live_bytes()
        peak = int(on_tile.argmax()) if on_tile.size else -1
        busiest = self.busiest_tile
        live_at_peak = [b for b in self.buffers if b.first <= peak <= b.last and (b.tiles == busiest).any()]
        return {
            "buffers": [life.to_dict(busiest) for life in self.buffers],
            "liveness": {
                "tile": busiest,
                "bytes_per_step": on_tile.tolist(),
                "chip_bytes_per_step": on_chip.tolist(),
                "peak_step": peak,
                "peak_bytes": int(on_tile[peak]) if peak >= 0 else 0,
                "peak_buffers": [b.name for b in sorted(live_at_peak, key=lambda b: -b.bytes_per_tile)],
            },
        }

    def to_json(self) -> str:
        """Indented, with each list of numbers (per tile) on one line."""
        text = json.dumps(self.to_dict(), indent=1)
        return re.sub(r"\[\s+([-+\d.eE,\s]+?)\s+\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text)

    def summary(self) -> str:
        """The human-readable summary `ipu-run` prints."""

        def share(cycles: int) -> str:
            return f"{cycles:,} cycles ({100 * cycles / self.cycles:.1f}%)" if self.cycles else f"{cycles:,} cycles"

        lines = [
            f"target:            {self.target} ({self.num_tiles} tiles, {self.tile_memory_bytes:,} bytes each, "
            f"{self.clock_hz / 1e9:.3f} GHz)",
            f"estimated time:    {self.cycles:,} cycles = {self.seconds * 1e6:.3f} us on device",
            *([f"device loop:       {self.iterations:,} runs of the program in one call (totals for all)"] if self.iterations > 1 else []),
            f"supersteps:        {self.supersteps:,}",
            f"  compute:         {share(self.compute_cycles)}",
            f"  exchange:        {share(self.exchange_cycles)}",
            f"  sync:            {share(self.sync_cycles)}",
            f"host streams:      {self.host_bytes:,} bytes = {self.host_seconds * 1e6:.3f} us over the host link"
            + (f" ({self.host_bytes // self.iterations:,} per iteration)" if self.iterations > 1 else ""),
            *([f"weights at load:   {self.load_bytes:,} bytes = {self.load_seconds * 1e6:.3f} us, once"] if self.load_bytes else []),
            f"exchange bytes:    {self.exchange_bytes:,}",
            *([f"IPU-Link bytes:    {self.link_bytes:,} over {self.global_syncs:,} global syncs"] if self.global_syncs else []),
            f"memory per tile:   peak {self.peak_memory_per_tile:,} bytes, mean {self.mean_memory_per_tile:,.1f} bytes",
            f"vertices:          {self.vertices:,}",
            f"edges:             {self.edges:,}",
        ]
        return "\n".join(lines)


# The names the PyTorch front end gives ATen ops in locations (the others name layers).
ATEN_PREFIXES = ("aten.", "prims.", "torch.", "_operator.", "operator.")
# The phase of a training step's op (frontends/joint.py): "phase:forward", "phase:backward", "phase:update".
PHASE_PREFIX = "phase:"


def program_summary(module: ir.Module | ir.Operation) -> dict:
    """What the report says of an L3 program beyond its costs: per compute set, the PyTorch
    layer and ATen op its location names (the PyTorch front end's name locations, '' without),
    its FLOPs and its vertex groups (codelet, FLOPs per vertex, tiles as [first, end) runs:
    sizes scale with the groups, not with tiles x groups); per buffer, its layer and op.

    FLOPs: a contraction (an op with reduction loops: matmul, convolution) 2 per point of its
    loop space (a multiply and an add); an elementwise op one per float arithmetic or math op of
    its body per point; data movement none."""
    program = Program(module)
    flops_of: dict[str, int] = {}
    compute_sets = {}
    for function in program.functions(ipu.COMPUTE_SET_ATTR):
        name = ir.StringAttr(function.attributes["sym_name"]).value
        groups = []
        for group in program.groups(name):
            codelet = ir.FlatSymbolRefAttr(group.attributes["codelet"]).value
            if codelet not in flops_of:
                flops_of[codelet] = _codelet_flops(program.function(codelet, ipu.CODELET_ATTR))
            tiles = group.tiles.tiles()
            groups.append(
                {"codelet": codelet, "flops_per_vertex": flops_of[codelet], "vertices": int(tiles.size), "tiles": _runs(np.unique(tiles))}
            )
        first = program.groups(name)[:1]
        location = (first[0] if first else function).operation.location
        layer, op = _origin(location)
        compute_sets[name] = {
            "layer": layer,
            "op": op,
            "phase": location_phase(location),
            "vertices": sum(g["vertices"] for g in groups),
            "flops": sum(g["flops_per_vertex"] * g["vertices"] for g in groups),
            "groups": groups,
        }
    return {"compute_sets": compute_sets, "buffers": _buffer_origins(module, program)}


def _buffer_origins(module: ir.Module | ir.Operation, program: Program) -> dict[str, dict[str, str]]:
    """Each buffer's layer and ATen op: those of the vertex group writing it, else of the first
    copy or vertex group naming it (a weight's buffer op and host stream sit at the program's
    start, located at its first layer), else its own location's; a device variable's buffer also
    its `variable` name."""
    writers: dict[str, dict[str, str]] = {}
    users: dict[str, dict[str, str]] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        keys = {"ipu.copy": ("source", "dest"), "ipu.vertex_group": ("inputs", "outputs")}.get(op.name)
        layer, aten = _origin(op.location) if keys else ("", "")
        phase = location_phase(op.location) if keys else ""
        for key in keys if layer or aten else ():
            attribute = op.attributes[key]
            for ref in [attribute] if isinstance(attribute, ir.FlatSymbolRefAttr) else list(ir.ArrayAttr(attribute)):
                name = ir.FlatSymbolRefAttr(ref).value
                (writers if key == "outputs" else users).setdefault(name, {"layer": layer, "op": aten, "phase": phase})
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    found = users | writers
    for variable in program.variables():  # a device variable's buffer: named as the host names it (param:fc1.weight)
        found[variable.buffer] = {**found.get(variable.buffer, {"layer": "", "op": ""}), "variable": variable.variable_name}
    for buffer in program.buffers():
        name = ir.StringAttr(buffer.attributes["sym_name"]).value
        layer, aten = _origin(buffer.operation.location)
        if name not in found and (layer or aten):
            found[name] = {"layer": layer, "op": aten}
    return found


def write_profile(profile: Profile, path: str) -> str:
    """`profile` as JSON at `path` (its directory made if needed), written whole or not at all
    (a temporary file renamed): the automatic profiles of the front ends and tools."""
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        temporary = os.path.join(staging_dir(path), f".{os.path.basename(path)}.tmp{os.getpid()}")
        with open(temporary, "w") as file:
            file.write(profile.to_json())
        publish(temporary, path)
    except OSError as error:
        raise IpuError(f"cannot write the profile '{path}': {error.strerror}") from None
    return path


def location_names(location: ir.Location) -> list[str]:
    """The names of a location's name locations, outermost first (fused ones: of the first
    part carrying any), e.g. ["layer1.0.conv1", "aten.convolution"] from the PyTorch front end."""
    found: list[str] = []

    def walk(loc: ir.Location) -> None:
        if loc.is_a_name():
            found.append(loc.name_str)
            walk(loc.child_loc)
        elif loc.is_a_callsite():
            walk(loc.callee)
        elif loc.is_a_fused():
            for inner in loc.locations:
                if not found:
                    walk(inner)

    walk(location)
    return found


def _origin(location: ir.Location) -> tuple[str, str]:
    """The layer (module path) and the ATen op a location names, '' for each it does not."""
    names = location_names(location)
    op = next((name for name in names if name.startswith(ATEN_PREFIXES)), "")
    layer = next((name for name in names if not name.startswith((*ATEN_PREFIXES, PHASE_PREFIX))), "")
    return layer, op


def location_phase(location: ir.Location) -> str:
    """The training phase a location names (forward, backward, update), '' outside a training step."""
    return next((name[len(PHASE_PREFIX) :] for name in location_names(location) if name.startswith(PHASE_PREFIX)), "")


def _codelet_flops(codelet: ir.OpView | None) -> int:
    if codelet is None:
        return 0
    total = 0
    for op in codelet.regions[0].blocks[0].operations:
        if record_of(op) is None:
            continue
        space = space_of(op)
        if space.reductions:
            total += space.flops()
        else:
            total += math.prod(space.extents) * _arithmetic_ops(op.operation)
    return total


def _arithmetic_ops(op: ir.Operation) -> int:
    """Float arithmetic and math ops in `op`'s body (constants and index casts are no work)."""
    count = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = inner.operation.name
                if name.startswith(("arith.", "math.")) and not name.startswith(("arith.constant", "arith.index")):
                    count += 1
                count += _arithmetic_ops(inner.operation)
    return count


def _runs(tiles: np.ndarray) -> list[list[int]]:
    """Sorted distinct tile numbers as [first, end) runs of consecutive tiles."""
    if not tiles.size:
        return []
    breaks = np.flatnonzero(np.diff(tiles) != 1) + 1
    starts, ends = np.r_[tiles[:1], tiles[breaks]], np.r_[tiles[breaks - 1] + 1, tiles[-1:] + 1]
    return np.stack((starts, ends), axis=1).tolist()  # Python ints, made in C: a grid of stride 60 has 720 runs
