"""The interactive report: one self-contained HTML file (after Graphcore's PopVision), drawn
in the browser from the profile by the script beside this file (`report.js`, inlined):

    html = interactive_html(profile, "cnn.json", baseline=None)   # profile: ipu-run's JSON, parsed
    auto_report(compiled.profile, "reports", "cnn")               # reports/cnn.json and reports/cnn.html

Views: a summary in units; operations per PyTorch layer (sortable); the program tree
(supersteps grouped by layer and repeat); the execution trace (hover, zoom, select a step;
on a multi-IPU target a lane per IPU, a pipeline's fill, steady state and flush marked);
the tile map (hover, select a tile: its compute sets, vertices, exchanges per superstep);
liveness by buffer with layer names; for a training step, its phases, the activations kept
for backward and the device variables; with a `baseline`, the two profiles compared.

Here the profile is reduced to what the views read (`report_data`); layers come from the
program summary (runtime/program_summary.py): a superstep belongs to the layer of
its compute set, else of the buffers it moves. Nothing is fetched when the file is opened.
"""

from __future__ import annotations

import json
import os
import re
from html import escape
from pathlib import Path

from ipu_mlir.runtime.profile import Profile, write_profile
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.files import publish, temporary_for

SCRIPT = Path(__file__).with_name("report.js")
STYLE = Path(__file__).with_name("report.css")
NO_LAYER = "(no layer)"


def report_data(profile: dict, name: str) -> dict:
    """What report.js draws, from a parsed profile."""
    program = profile.get("program", {})
    sets, buffer_origins = program.get("compute_sets", {}), program.get("buffers", {})
    steps, layers = [], {}
    for step in profile["supersteps"]:
        layer, op = step_origin(step["ops"], sets, buffer_origins)
        phase = step_phase(step["ops"], sets, buffer_origins)
        compute, exchange, sync = step.get("compute"), step.get("exchange"), step.get("sync")
        executes = [o["compute_set"] for o in step["ops"] if o.get("compute_set")]
        flops = sum(sets.get(cs, {}).get("flops", 0) for cs in executes) * step["repeat"]
        steps.append(
            {
                "layer": layer,
                "op": op,
                "phase": phase,
                "kind": step["kind"],
                "repeat": step["repeat"],
                "compute": compute["cycles"] if compute else 0,
                "exchange": exchange["cycles"] if exchange else 0,
                "sync": sync["cycles"] if sync else 0,
                "bytes": exchange["bytes"] if exchange else 0,
                "host": step.get("host_bytes", 0),
                "flops": flops,
                "sets": executes,
                "ops": [_op_text(o) for o in step["ops"]],
                "ipus": compute.get("ipus", []) if compute else [],
                "tile_cycles": _value_runs(compute["cycles_per_tile"]) if compute else None,
                "tile_received": _value_runs(exchange["bytes_received_per_tile"]) if exchange else None,
                "tile_sent": _value_runs(exchange["bytes_sent_per_tile"]) if exchange else None,
            }
        )
        row = layers.setdefault(layer, dict.fromkeys(("steps", "cycles", "compute", "exchange", "sync", "flops", "bytes", "memory"), 0))
        row["steps"] += step["repeat"]
        for key in ("compute", "exchange", "sync", "flops", "bytes"):
            row[key] += steps[-1][key] * (1 if key == "flops" else step["repeat"])  # the FLOPs count the repeats already
        row["cycles"] = row["compute"] + row["exchange"] + row["sync"]
        row.setdefault("layer", layer)
        row.setdefault("ops", [])
        if op and op not in row["ops"]:
            row["ops"].append(op)
    buffers = []
    for buffer in profile.get("buffers", []):
        layer = layer_name(buffer_origins.get(buffer["name"], {}))
        origin = buffer_origins.get(buffer["name"], {})
        buffers.append({**buffer, "layer": layer, "phase": origin.get("phase", ""), "variable": origin.get("variable", "")})
        if layer in layers:
            layers[layer]["memory"] += buffer["bytes_per_tile"] * buffer["tiles"]
    return {
        "name": name,
        "summary": profile["summary"],
        "target": profile["target"],
        "memory": profile["memory"]["bytes_per_tile"],
        "steps": steps,
        "layers": list(layers.values()),
        "buffers": buffers,
        "liveness": profile.get("liveness"),
        "sets": sets,
        "training": training_view(steps, buffers),
        "num_ipus": profile["target"].get("num_ipus", 1),
        "pipeline": pipeline_view(steps),
    }


def pipeline_view(steps: list[dict]) -> dict | None:
    """A pipelined run's fill, steady state and flush, as [first, last] superstep indices: the
    steady state runs from the first to the last superstep in which every IPU the program uses
    computes (all stages at once); fill and flush are the computing supersteps before and after
    it. None when no superstep computes on two IPUs or more (one IPU, or stages one after another)."""
    used = sorted({ipu for step in steps for ipu in step["ipus"]})
    if max((len(step["ipus"]) for step in steps), default=0) < 2:
        return None
    computing = [index for index, step in enumerate(steps) if step["ipus"]]
    full = [index for index in computing if len(steps[index]["ipus"]) == len(used)]
    if not full:
        return None
    return {
        "ipus": used,
        "fill": [computing[0], full[0] - 1] if computing[0] < full[0] else None,
        "steady": [full[0], full[-1]],
        "flush": [full[-1] + 1, computing[-1]] if full[-1] < computing[-1] else None,
    }


def training_view(steps: list[dict], buffers: list[dict]) -> dict | None:
    """A training step's phases (frontends/joint.py marks each op forward, backward or update):
    supersteps and cycles per phase; the buffers kept for backward (written in the forward
    pass, last read in the backward pass: the activations) with their layers; the device
    variables (parameters, optimizer state). None for a program that is not a training step."""
    if not any(step["phase"] for step in steps):
        return None
    phases: dict[str, dict[str, int]] = {}
    for step in steps:
        row = phases.setdefault(step["phase"] or "other", {"supersteps": 0, "cycles": 0})
        row["supersteps"] += step["repeat"]
        row["cycles"] += (step["compute"] + step["exchange"] + step["sync"]) * step["repeat"]
    kept = [
        buffer
        for buffer in buffers
        if buffer["phase"] == "forward"
        and buffer["kind"] in ("compute", "exchange")
        and 0 <= buffer["last_step"] < len(steps)
        and steps[buffer["last_step"]]["phase"] == "backward"
    ]
    variables = [buffer for buffer in buffers if buffer["kind"] == "variable"]
    total = lambda chosen: sum(b["bytes_per_tile"] * b["tiles"] for b in chosen)  # noqa: E731
    return {
        "phases": phases,
        "kept_for_backward": sorted(kept, key=lambda b: -b["bytes_per_tile"] * b["tiles"]),
        "kept_bytes": total(kept),
        "variables": sorted(variables, key=lambda b: -b["bytes_per_tile"] * b["tiles"]),
        "variable_bytes": total(variables),
    }


def interactive_html(profile: dict, name: str, baseline: dict | None = None, baseline_name: str = "") -> str:
    """The report as one HTML file's text."""
    data = report_data(profile, name)
    if baseline is not None:
        data["baseline"] = report_data(baseline, baseline_name)
    payload = json.dumps(data, separators=(",", ":")).replace("</", "<\\/")  # no early </script>
    title = f"ipu-mlir report: {name}"
    html = (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{escape(title)}</title>\n"
        f"<style>{STYLE.read_text()}</style></head>\n<body>\n<h1>{escape(title)}</h1>\n"
        "<nav id='nav'></nav><main id='report'>loading...</main><div id='tooltip'></div>\n"
        f"<script id='data' type='application/json'>{payload}</script>\n<script>{SCRIPT.read_text()}</script>\n</body></html>\n"
    )
    return html


def report_files(profile: Profile, directory: str, name: str) -> dict[Path, str]:
    """DIRECTORY/NAME.json (the profile) and DIRECTORY/NAME.html (its report) -> their text, for
    a caller publishing them with its other files (`ipu-run --report`); the directory is made."""
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError as error:
        raise IpuError(f"cannot write the report into '{directory}': {error.strerror}") from None
    return {
        Path(directory) / f"{name}.json": profile.to_json(),
        Path(directory) / f"{name}.html": interactive_html(profile.to_dict(), f"{name}.json"),
    }


def auto_report(profile: Profile, directory: str, name: str) -> str:
    """`profile` as DIRECTORY/NAME.json and its report DIRECTORY/NAME.html, each written whole
    or not at all (what `ipu-run --report` and IPU_MLIR_REPORT write); the report's path."""
    write_profile(profile, os.path.join(directory, f"{name}.json"))
    path = os.path.join(directory, f"{name}.html")
    temporary = temporary_for(path)
    try:
        with open(temporary, "w") as file:
            file.write(interactive_html(profile.to_dict(), f"{name}.json"))
        publish(temporary, path)
    except OSError as error:
        raise IpuError(f"cannot write the report '{path}': {error.strerror}") from None
    return path


def step_origin(ops: list[dict], sets: dict, buffers: dict) -> tuple[str, str]:
    """The layer and ATen op of a superstep: its compute set's, else those of the buffers it moves."""
    for op in ops:
        known = sets.get(op.get("compute_set", ""))
        if known:
            return layer_name(known), known.get("op", "")
    for op in ops:
        for key in ("dest", "buffer", "source"):
            known = buffers.get(op.get(key, ""))
            if known:
                return layer_name(known), known.get("op", "")
    stems = [re.sub(r"_cs\d+.*", "", op["compute_set"]) for op in ops if op.get("compute_set")]
    return (stems[0] if stems else NO_LAYER), ""


def step_phase(ops: list[dict], sets: dict, buffers: dict) -> str:
    """The training phase of a superstep: its compute set's, else that of the buffers it moves."""
    for op in ops:
        known = sets.get(op.get("compute_set", ""))
        if known and known.get("phase"):
            return known["phase"]
    for op in ops:
        for key in ("dest", "buffer", "source"):
            known = buffers.get(op.get(key, ""))
            if known and known.get("phase"):
                return known["phase"]
    return ""


def layer_name(origin: dict) -> str:
    return origin.get("layer") or origin.get("op") or NO_LAYER


def _value_runs(values: list[int]) -> list[list[int]]:
    """Per-tile values as [value, count] runs: tiles of a layer's grid mostly agree (ResNet-50
    on gc200: the report's data 2.57 MB -> 0.92 MB)."""
    runs: list[list[int]] = []
    for value in values:
        if runs and runs[-1][0] == value:
            runs[-1][1] += 1
        else:
            runs.append([value, 1])
    return runs


def _op_text(op: dict) -> str:
    what = op.get("compute_set") or (f"{op['source']} -> {op['dest']}" if "dest" in op else op.get("buffer", ""))
    return f"{op['op']} {what}".strip()
