"""What a simulated run cost: per superstep, per tile, and in total.

The simulator fills one `Superstep` (superstep.py) per run of ops between two `ipu.sync`s
(a Repeat loop's body is recorded once, with its trip count as `repeat`) and `Profile.build`
adds them up.
`Profile.to_json()` is the file `ipu-run --profile` writes; docs/ipu-run.md gives its schema.
Given the program's buffers, it also records what lives in memory: each buffer's kind, size,
tiles and the supersteps it is live in, and the bytes live per superstep on the busiest tile
(the views of `ipu-vis report`, docs/pictures.md).
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.files import publish, temporary_for

from .superstep import Superstep

PROFILE_VERSION = 1


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


def write_profile(profile: Profile, path: str) -> str:
    """`profile` as JSON at `path` (its directory made if needed), written whole or not at all
    (a temporary file renamed): the automatic profiles of the front ends and tools."""
    directory = os.path.dirname(path) or "."
    try:
        os.makedirs(directory, exist_ok=True)
        temporary = temporary_for(path)
        with open(temporary, "w") as file:
            file.write(profile.to_json())
        publish(temporary, path)
    except OSError as error:
        raise IpuError(f"cannot write the profile '{path}': {error.strerror}") from None
    return path
