"""The profile views people look at when a model is slow or does not fit (after Graphcore's
PopVision Graph Analyser), drawn from the JSON `ipu-run --profile` writes:

    views = Views.load("profile.json")
    write_html(views, "report.html")      # the interactive report (vis/interactive.py), one file
    write_pngs(views, "report/")          # static views as PNGs (matplotlib)

docs/pictures.md says what each shows.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")  # files only: no display on a build machine

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402

from ipu_mlir.target.diagnostics import IpuError  # noqa: E402
from ipu_mlir.target.files import publish, temporary_for  # noqa: E402

from .interactive import interactive_html, layer_name, step_origin  # noqa: E402

KIND_COLOURS = {"weight": "#9b59b6", "variable": "#e056a0", "host": "#4e9af1", "exchange": "#f5a623", "compute": "#7ed321"}
PHASE_COLOURS = {"compute": "#7ed321", "exchange": "#f5a623", "sync": "#d0021b"}
TOP_BUFFERS = 20


@dataclass
class Views:
    """A profile (the parsed JSON) and the views drawn from it."""

    profile: dict
    name: str

    @staticmethod
    def load(path: str) -> Views:
        try:
            with open(path) as file:
                profile = json.load(file)
        except OSError as error:
            raise IpuError(f"cannot read profile '{path}': {error.strerror}") from None
        except json.JSONDecodeError as error:
            raise IpuError(f"'{path}' is not a profile: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None
        missing = [key for key in ("summary", "target", "memory", "supersteps") if key not in profile]
        if not isinstance(profile, dict) or missing:
            raise IpuError(f"'{path}' is not an ipu-run profile: missing {', '.join(missing) or 'everything'}")
        return Views(profile, os.path.basename(path))

    def figures(self) -> dict[str, Callable[[], plt.Figure]]:
        """The views by name, each a function drawing its figure."""
        views = {"tile_map": self.tile_map, "memory_by_buffer": self.memory_by_buffer, "liveness": self.liveness}
        views |= {"execution_trace": self.execution_trace, "exchange": self.exchange}
        if "buffers" not in self.profile:  # a profile of an older ipu-run: no memory views
            del views["memory_by_buffer"], views["liveness"]
        return views

    # --- Views ----------------------------------------------------------------------------

    def tile_map(self) -> plt.Figure:
        """Memory per tile as the chip's tiles (rows of `tile_columns`), full colour at the
        busiest tile; beside it, every tile's bytes against the budget line (log scale: a
        program using 1% of the budget still shows)."""
        target, memory = self.profile["target"], np.asarray(self.profile["memory"]["bytes_per_tile"], float)
        budget, columns = target["tile_memory_bytes"], tile_columns(target["num_tiles"])
        grid = np.full(columns * -(-memory.size // columns), np.nan)
        grid[: memory.size] = memory
        figure, (heat, line) = plt.subplots(1, 2, figsize=(12, 4.8), gridspec_kw={"width_ratios": [1.2, 1]})
        # the colour scale spans the tiles' own range: from 0, a program using every tile alike is one colour
        low, high = float(memory.min()), float(memory.max())
        image = heat.imshow(
            grid.reshape(-1, columns), cmap="inferno", vmin=low, vmax=max(high, low + 1), interpolation="nearest", aspect="auto"
        )
        figure.colorbar(image, ax=heat, label="bytes")
        busiest = int(memory.argmax())
        heat.set_title(f"memory per tile ({memory.size} tiles, {columns} per row); busiest: tile {busiest}")
        heat.set_xlabel(f"tile mod {columns}")
        heat.set_ylabel(f"tile // {columns}")
        # a line, not a fill down to 1 byte: on a log scale that fill is a solid block
        line.step(np.arange(memory.size), np.maximum(memory, 1), where="mid", color="#f5a623", label="bytes used")
        line.set_yscale("log")
        line.set_ylim(max(1.0, memory.min() / 2), budget * 2)
        line.axhline(budget, color="#d0021b", linestyle="--", label=f"budget {budget:,} B")
        line.set_xlabel("tile")
        line.set_ylabel("bytes")
        line.set_title(f"peak {int(memory.max()):,} B = {100 * memory.max() / budget:.1f}% of the budget")
        line.legend(loc="upper right")
        figure.tight_layout()
        return figure

    def memory_by_buffer(self) -> plt.Figure:
        """The largest buffers on the busiest tile, coloured by kind, and the bytes per kind live
        there at the liveness peak."""
        tile = self.profile["liveness"]["tile"]
        buffers = sorted((b for b in self.profile["buffers"] if b["on_busiest_tile"]), key=lambda b: -b["bytes_per_tile"])
        shown = buffers[:TOP_BUFFERS][::-1]
        figure, (bars, kinds) = plt.subplots(1, 2, figsize=(12, 5), gridspec_kw={"width_ratios": [2, 1]})
        labels = [f"{self._buffer_layer(b['name'])} (@{b['name']})" for b in shown]  # the layer first; the name keeps bars apart
        bars.barh(labels, [b["bytes_per_tile"] for b in shown], color=[KIND_COLOURS[b["kind"]] for b in shown])
        bars.set_xlabel("bytes")
        bars.set_title(f"largest buffers on tile {tile} ({len(shown)} of {len(buffers)})")
        bars.tick_params(axis="y", labelsize=7)
        # by kind at the peak: the buffers of the whole program would add up past the tile's memory, which they share in turn
        peak = self.profile["liveness"]["peak_step"]
        live = [b for b in buffers if b["first_step"] <= peak <= b["last_step"]]
        totals = {kind: sum(b["bytes_per_tile"] for b in live if b["kind"] == kind) for kind in KIND_COLOURS}
        kinds.bar(list(totals), list(totals.values()), color=list(KIND_COLOURS.values()))
        kinds.set_ylabel("bytes")
        kinds.set_title(f"by kind, live at the peak (superstep {peak})")
        figure.tight_layout()
        return figure

    def _buffer_layer(self, name: str) -> str:
        """The layer a buffer belongs to (the program summary's), its name without one."""
        origin = self.profile.get("program", {}).get("buffers", {}).get(name)
        return layer_name(origin) if origin else f"@{name}"

    def liveness(self) -> plt.Figure:
        """Bytes live per superstep on the busiest tile, the peak marked and named."""
        live = self.profile["liveness"]
        values = np.asarray(live["bytes_per_step"])
        figure, axes = plt.subplots(figsize=(12, 4))
        axes.fill_between(np.arange(values.size), values, step="mid", color="#4e9af1", alpha=0.85)
        peak = live["peak_step"]
        if peak >= 0:
            program = self.profile.get("program", {})
            layer, op = step_origin(self.profile["supersteps"][peak]["ops"], program.get("compute_sets", {}), program.get("buffers", {}))
            names = ", ".join(self._buffer_layer(name) for name in live["peak_buffers"][:3])
            axes.axvline(peak, color="#d0021b", linestyle=":")
            axes.annotate(
                f"peak {live['peak_bytes']:,} B at superstep {peak}\nin {layer} {op}\nlargest: {names}",
                (peak, live["peak_bytes"]),
                xytext=(0.02, 0.95),
                textcoords="axes fraction",
                va="top",
                fontsize=8,
                bbox={"facecolor": "white", "alpha": 0.85, "edgecolor": "none"},  # readable over the filled area
                arrowprops={"arrowstyle": "->", "color": "#d0021b"},
            )
        axes.set_xlabel("superstep")
        axes.set_ylabel("bytes live")
        axes.set_title(f"liveness on tile {live['tile']} (the busiest)")
        figure.tight_layout()
        return figure

    def execution_trace(self) -> plt.Figure:
        """Supersteps along the estimated time: compute, exchange and sync lanes (on a multi-IPU
        target then a lane per IPU: the compute of the supersteps its tiles work in); below,
        each compute phase's load balance (mean over slowest tile), its slowest tile named for the worst."""
        steps = self.profile["supersteps"]
        start = 0
        lanes: dict[str, list[tuple[int, int]]] = {phase: [] for phase in PHASE_COLOURS}
        ipu_lanes: dict[int, list[tuple[int, int]]] = {}
        balance = []  # (time, mean / max, slowest tile, step index)
        for step in steps:
            compute = step.get("compute")
            exchange = step.get("exchange")
            sync = step.get("sync")
            parts = [("exchange", exchange["cycles"] if exchange else 0), ("compute", compute["cycles"] if compute else 0)]
            parts.append(("sync", sync["cycles"] if sync else 0))
            at = start
            for phase, cycles in parts:
                if cycles:
                    lanes[phase].append((at, cycles * step["repeat"]))
                    if phase == "compute":
                        for ipu in compute.get("ipus", []):
                            ipu_lanes.setdefault(ipu, []).append((at, cycles * step["repeat"]))
                        per_tile = np.asarray(compute["cycles_per_tile"])
                        balance.append((at, compute["mean_cycles"] / max(1, compute["cycles"]), int(per_tile.argmax()), step["index"]))
                at += cycles * step["repeat"]
            start = at
        clock = self.profile["target"]["clock_hz"]
        extra = 0.3 * len(ipu_lanes)  # the IPU lanes' height, above the phases'
        figure, (trace, loads) = plt.subplots(2, 1, figsize=(12, 5.5 + extra), sharex=True, gridspec_kw={"height_ratios": [1 + extra, 1.3]})
        rows = [(phase, spans, PHASE_COLOURS[phase]) for phase, spans in lanes.items()]
        rows += [(f"IPU {ipu}", ipu_lanes[ipu], PHASE_COLOURS["compute"]) for ipu in sorted(ipu_lanes)]
        for row, (_, spans, colour) in enumerate(rows):
            trace.broken_barh([(a / clock * 1e6, c / clock * 1e6) for a, c in spans], (row - 0.4, 0.8), color=colour)
        trace.set_yticks(range(len(rows)), [name for name, _, _ in rows])
        trace.set_title(f"execution trace: {len(steps)} supersteps, {start:,} cycles = {start / clock * 1e6:.2f} us")
        if balance:
            times, ratios = np.asarray([b[0] for b in balance]) / clock * 1e6, np.asarray([b[1] for b in balance])
            loads.scatter(times, ratios, s=9, color=PHASE_COLOURS["compute"])
            worst = balance[int(ratios.argmin())]
            loads.annotate(
                f"superstep {worst[3]}: slowest tile {worst[2]}, balance {worst[1]:.2f}",
                (worst[0] / clock * 1e6, worst[1]),
                xytext=(0.02, 0.1),
                textcoords="axes fraction",
                fontsize=8,
                arrowprops={"arrowstyle": "->"},
            )
        loads.set_ylim(0, 1.05)
        loads.set_ylabel("load balance\n(mean / slowest tile)")
        loads.set_xlabel("estimated time (us)")
        figure.tight_layout()
        return figure

    def exchange(self) -> plt.Figure:
        """Bytes exchanged per superstep (received, all tiles together)."""
        steps = self.profile["supersteps"]
        values = [s["exchange"]["bytes"] if s.get("exchange") else 0 for s in steps]
        figure, axes = plt.subplots(figsize=(12, 3.5))
        axes.bar(range(len(values)), values, color=PHASE_COLOURS["exchange"], width=0.9)
        axes.set_xlabel("superstep")
        axes.set_ylabel("bytes exchanged")
        axes.set_title(f"exchange: {sum(values):,} bytes in {sum(1 for v in values if v)} supersteps")
        figure.tight_layout()
        return figure


def tile_columns(num_tiles: int) -> int:
    """Tiles per row of the tile map: the divisor of the count nearest its square root, at
    least 4 (1472 -> 32; 16 -> 4), as a near-square picture of the chip."""
    root = num_tiles**0.5
    divisors = [d for d in range(4, num_tiles + 1) if num_tiles % d == 0] or [num_tiles]
    return min(divisors, key=lambda d: abs(d - root))


def write_html(views: Views, path: str, baseline: Views | None = None) -> None:
    """The interactive report (vis/interactive.py), one self-contained file; with `baseline`,
    the two profiles compared."""
    other = (baseline.profile, baseline.name) if baseline else (None, "")
    _write(path, interactive_html(views.profile, views.name, *other))


def write_pngs(views: Views, directory: str) -> list[str]:
    """The views as PNGs in `directory` (made if needed): one file per view, named after it."""
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, draw in views.figures().items():
        figure = draw()
        paths.append(os.path.join(directory, f"{name}.png"))
        figure.savefig(paths[-1], dpi=100)
        plt.close(figure)
    return paths


def _write(path: str, text: str) -> None:
    """Written whole or not at all: a temporary file beside `path`, then renamed."""
    temporary = temporary_for(path)
    with open(temporary, "w") as file:
        file.write(text)
    publish(temporary, path)
