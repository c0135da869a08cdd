"""README.md's two pictures and the graph's caption, regenerated: `make pictures`.

Full-size ResNet-50 is exported and compiled for gc200 once; its vertex graph is drawn to
docs/images/resnet50-graph.png (the caption's vertex and edge counts rewritten in README.md);
the compiled model runs once on the simulator and its interactive report is screenshot by
headless chromium to docs/images/report.png. Minutes on 2 cores, most of it the export and the
simulation.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.vis import api

REPO = Path(__file__).resolve().parents[2]
IMAGES = REPO / "docs" / "images"
CAPTION = re.compile(r"!\[ResNet-50 compiled for gc200: [\d,]+ vertices and [\d,]+ edges")


def main() -> int:
    start = time.monotonic()

    def say(line: str) -> None:
        print(f"[{time.monotonic() - start:6.1f} s] {line}", file=sys.stderr, flush=True)

    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        print("pictures: error: the report's screenshot needs chromium (`make browser` installs it)", file=sys.stderr)
        return 1
    model, inputs = zoo.build("resnet50")
    say("exporting resnet50 with torch-mlir...")
    compiled = torch_frontend.compile(model, *inputs, target="gc200")
    say("drawing the graph...")
    graph = api.graph_of(compiled.program)
    api.draw(graph, str(IMAGES / "resnet50-graph.png"), title="ResNet-50", size=1000, progress=say)
    readme = REPO / "README.md"
    text = readme.read_text()
    caption = f"![ResNet-50 compiled for gc200: {graph.num_vertices:,} vertices and {graph.num_edges:,} edges"
    if not CAPTION.search(text):
        print("pictures: error: README.md has no ResNet-50 graph caption to update", file=sys.stderr)
        return 1
    readme.write_text(CAPTION.sub(caption, text))
    say(f"{graph.num_vertices:,} vertices, {graph.num_edges:,} edges: README.md's caption updated")
    say("simulating for the profile...")
    compiled(*inputs)
    with tempfile.TemporaryDirectory() as scratch:
        report = api.auto_report(compiled.profile, scratch, "resnet50")
        say("screenshot of the report...")
        subprocess.run(
            [browser, "--headless", "--no-sandbox", "--hide-scrollbars", "--window-size=1100,1250",
             f"--screenshot={IMAGES / 'report.png'}", report],
            check=True, capture_output=True, timeout=300,
        )  # fmt: skip
    say("done: docs/images/resnet50-graph.png, docs/images/report.png, README.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
