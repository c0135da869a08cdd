"""ipu-vis's report opened in a real headless browser (Debian's chromium, which `make test`
installs when it can), its screenshot checked for the figures: every view's panel is there,
drawn in the colours of its bars and lanes."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.vis import api
from ipu_mlir.vis.report import KIND_COLOURS, PHASE_COLOURS

CHROMIUM = shutil.which("chromium")
WIDTH, HEIGHT = 1280, 4200


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make browser installs it with apt-get as root)")
def test_report_in_a_browser(tmp_path: Path) -> None:
    program = Path(__file__).resolve().parents[2] / "examples" / "relu.mlir"
    profile = tmp_path / "profile.json"
    profile.write_text(frontend_api.load_simulator(program, "tiny").profile.to_json())
    report = tmp_path / "report.html"
    api.report(str(profile), str(report))
    shot = tmp_path / "shot.png"
    # --no-sandbox: tests may run as root (CI), where chromium's sandbox refuses to start
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", f"--window-size={WIDTH},{HEIGHT}"]
    subprocess.run([*command, f"--screenshot={shot}", report.as_uri()], check=True, capture_output=True, timeout=120)
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    assert pixels.shape == (HEIGHT, WIDTH, 3)
    # the views' panels: white sections on the dark page, one per view, each tall enough for a figure
    column = (pixels[:, 36] > 250).all(axis=1)  # inside the sections' left padding
    starts = np.flatnonzero(column[1:] & ~column[:-1])
    ends = np.flatnonzero(~column[1:] & column[:-1])
    panels = [(a, b) for a, b in zip(starts, ends) if b - a > 150]
    assert len(panels) == 5, panels
    # the bars and lanes, in their colours: the kinds of buffer the program has; compute, exchange, sync phases
    kinds = {buffer["kind"] for buffer in json.loads(profile.read_text())["buffers"]}
    assert kinds == {"host", "exchange", "compute"}
    for colour in {*(KIND_COLOURS[kind] for kind in kinds), *PHASE_COLOURS.values()}:
        rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(pixels - rgb).max(axis=2) < 6).sum() > 200, colour
