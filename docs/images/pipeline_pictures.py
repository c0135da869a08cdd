"""docs/pictures.md's pictures of a pipeline, regenerated:

    .venv/bin/python docs/images/pipeline_pictures.py

A BERT-style encoder (HF `BertEncoder`: 4 layers, hidden 128, 2 heads, seq 32, batch 16, f32;
bench/pipeline.py's model) compiled for an m2000, sharded by memory balance into 4 stages and
pipelined over 4 micro-batches: its vertex graph, a region per IPU, to
docs/images/bert-pipeline-graph.png; run once on the simulator, its interactive report's
execution trace (a lane per IPU) screenshot by headless chromium to
docs/images/bert-pipeline-trace.png. A few minutes on 2 cores, most of it drawing 2 M edges.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.vis import api
from ipu_mlir.vis.interactive import report_data

IMAGES = Path(__file__).resolve().parent
MODEL = dict(batch=16, size=32, layers=4, hidden=128, heads=2)
MICRO_BATCHES = 4


def main() -> int:
    start = time.monotonic()

    def say(line: str) -> None:
        print(f"[{time.monotonic() - start:6.1f} s] {line}", file=sys.stderr, flush=True)

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("pipeline_pictures: error: the trace's screenshot needs chromium (`make browser` installs it)", file=sys.stderr)
        return 1
    program = api.zoo_program("bert_encoder", "m2000", say, micro_batches=MICRO_BATCHES, **MODEL)
    graph = api.graph_of(program)
    title = f"BERT encoder, {MODEL['layers']} layers, pipelined (m2000, M = {MICRO_BATCHES})"
    api.draw(graph, str(IMAGES / "bert-pipeline-graph.png"), title, size=1000, progress=say)
    say(f"{graph.num_vertices:,} vertices, {graph.num_edges:,} edges, {int(graph.link.sum()):,} drawn edges over the IPU-Links")
    say("simulating for the profile...")
    with program.context:
        profile = frontend_api.load_simulator(program, "m2000").profile
    view = report_data(profile.to_dict(), "bert-pipeline.json")["pipeline"]
    spans = {part: view[part] and view[part][1] - view[part][0] + 1 for part in ("fill", "steady", "flush")}
    say(f"{len(profile.steps):,} supersteps, {profile.cycles:,} cycles; supersteps of fill, steady state, flush: {spans}")
    with tempfile.TemporaryDirectory() as scratch:
        report = api.auto_report(profile, scratch, "bert-pipeline")
        shot = Path(scratch) / "shot.png"
        say("screenshot of the report's trace...")
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--hide-scrollbars", "--window-size=1100,2400",
             f"--screenshot={shot}", f"file://{report}"],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
        _crop_to_trace(shot, IMAGES / "bert-pipeline-trace.png")
    say("done: docs/images/bert-pipeline-graph.png, docs/images/bert-pipeline-trace.png")
    return 0


def _crop_to_trace(shot: Path, path: Path) -> None:
    """The report's third panel (summary, operations by layer, execution trace): the white
    sections on the dark page, found down a column inside their left padding."""
    pixels = np.asarray(Image.open(shot).convert("RGB"))
    white = (pixels[:, 40] > 250).all(axis=1)
    starts = np.flatnonzero(white[1:] & ~white[:-1]) + 1
    ends = np.flatnonzero(~white[1:] & white[:-1]) + 1
    top, bottom = starts[2], ends[ends > starts[2]][0]
    Image.open(shot).crop((0, int(top), pixels.shape[1], int(bottom))).save(path)


if __name__ == "__main__":
    sys.exit(main())
