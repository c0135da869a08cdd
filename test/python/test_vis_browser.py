"""ipu-vis's interactive report opened in a real headless browser (Debian's chromium, which
`make test` installs when it can): its script runs, draws every view, and selects what a deep
link asks for (#tile=3&step=1&sort=flops: the clicks' handlers), and the screenshot shows the
panels in the phases' colours."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image
from test_vis import SMALL

from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.vis import api

CHROMIUM = shutil.which("chromium")
WIDTH, HEIGHT = 1280, 2600
# --no-sandbox: tests may run as root (CI), where chromium's sandbox refuses to start
BROWSER = [CHROMIUM or "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
PHASE_COLOURS = ("#f5a623", "#7ed321", "#d0021b")  # exchange, compute, sync lanes (vis/report.js)

pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make browser installs it with apt-get as root)")


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("report")
    module = frontend_api.load_module(SMALL)
    with module.context:
        program = frontend_api.compile_to_program(module, "tiny")
    profile = directory / "profile.json"
    profile.write_text(frontend_api.load_simulator(program, "tiny").profile.to_json())
    api.report(str(profile), str(directory / "report.html"))
    return directory / "report.html"


def test_deep_link_selects_a_tile_a_step_and_a_sort(report: Path) -> None:
    dom = subprocess.run(
        [*BROWSER, "--dump-dom", f"{report.as_uri()}#tile=3&step=1&sort=flops"], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    assert re.search(r'data-ready="[\d.]+"', dom), "the script did not finish"
    for view in ("summary-view", "layers-view", "trace-view", "tree-view", "tiles-view", "liveness-view"):
        assert f'id="{view}"' in dom, view
    layers = re.search(r'<table id="layers">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    assert [row.split("</td>")[0] for row in layers.split("<tr><td>")[1:3]] == ["fc1", "fc2"]  # most FLOPs first
    tile = re.search(r'<div id="tile-detail"[^>]*>(.*?)</table></div>', dom, re.S).group(1)
    assert "<h3>tile 3: " in tile and "matmul_cs0/matmul_v0" in tile and "matmul_cs1/matmul_v1" in tile
    # per superstep, tile 3's compute and bytes: decoded from the report's runs, as the profile has them
    profile = json.loads((report.parent / "profile.json").read_text())
    clock = profile["target"]["clock_hz"]
    expected = []
    for step in profile["supersteps"]:
        cycles = step["compute"]["cycles_per_tile"][3] if step.get("compute") else 0
        received = step["exchange"]["bytes_received_per_tile"][3] if step.get("exchange") else 0
        if cycles or received:
            expected.append((str(step["index"]), f"{cycles / clock * 1e6:.3f} us", received))
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in tile.split("<tbody>")[1].split("</tr>") if "<td" in row]
    shown = [(row[0], row[3], row[4]) for row in rows if row[3] != "0.000 us" or row[4] != "0 B"]
    assert [(index, time) for index, time, _ in shown] == [(index, time) for index, time, _ in expected]
    assert all((received == "0 B") == (value == 0) for (_, _, received), (_, _, value) in zip(shown, expected))
    assert re.search(r'<div id="step-detail"[^>]*><h3>superstep 1</h3>', dom)
    assert "16.00 KiB" in dom or "KiB" in dom  # sizes in units, not raw bytes
    peak = re.search(r'<p id="peak">(.*?)</p>', dom, re.S).group(1)
    assert "fc1" in peak or "fc2" in peak  # the peak's buffers named by layer


def test_screenshot_shows_every_panel(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    command = [*BROWSER, f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}", report.as_uri()]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    pixels = np.asarray(Image.open(shot).convert("RGB")).astype(int)
    # the views' panels: white sections on the dark page
    column = (pixels[:, 40] > 250).all(axis=1)  # inside the sections' left padding
    starts = np.flatnonzero(column[1:] & ~column[:-1])
    ends = np.flatnonzero(~column[1:] & column[:-1])
    assert len([(a, b) for a, b in zip(starts, ends) if b - a > 60]) == 6
    for colour in PHASE_COLOURS:
        rgb = np.array([int(colour[i : i + 2], 16) for i in (1, 3, 5)])
        assert (np.abs(pixels - rgb).max(axis=2) < 6).sum() > 100, colour
    data = json.loads(report.read_text().split("<script id='data' type='application/json'>")[1].split("</script>")[0])
    assert len(data["memory"]) == 16


def test_comparison_of_two_profiles(report: Path, tmp_path: Path) -> None:
    """The same program against a baseline twice as slow in every phase: -50.0% each."""
    profile = json.loads((report.parent / "profile.json").read_text())
    slower = json.loads(json.dumps(profile))
    for key in ("cycles", "compute_cycles", "exchange_cycles", "sync_cycles"):
        slower["summary"][key] *= 2
    (tmp_path / "slower.json").write_text(json.dumps(slower))
    compared = tmp_path / "compared.html"
    api.report(str(report.parent / "profile.json"), str(compared), baseline=str(tmp_path / "slower.json"))
    dom = subprocess.run([*BROWSER, "--dump-dom", compared.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    table = re.search(r'<table id="compare">(.*?)</table>', dom, re.S).group(1)
    rows = {cells[0]: cells[1:] for cells in (re.findall(r"<td[^>]*>(.*?)</td>", row) for row in table.split("</tr>")) if cells}
    for label in ("estimated time", "compute", "exchange", "sync"):
        assert rows[label][2] == "-50.0%", (label, rows[label])
    assert rows["exchanged"][2] == "0.0%" and rows["vertices"][0] == rows["vertices"][1]


def test_a_lane_per_ipu_shows_the_pipeline(tmp_path: Path) -> None:
    """A 4-stage pipeline on an m2000 (test_vis_ipus.py): a lane per IPU, a superstep's compute
    on the lane of each IPU the profile names for it, the fill, steady state and flush shaded."""
    from test_vis_ipus import compiled, profile_of

    profile = profile_of(compiled(4))
    (tmp_path / "stages.json").write_text(json.dumps(profile))
    api.report(str(tmp_path / "stages.json"), str(tmp_path / "stages.html"))
    dom = subprocess.run(
        [*BROWSER, "--dump-dom", f"{(tmp_path / 'stages.html').as_uri()}#step=1"], check=True, capture_output=True, text=True, timeout=120
    ).stdout
    trace = re.search(r'<svg id="trace-svg".*?</svg>', dom, re.S).group(0)
    assert [f">IPU {i}<" in trace for i in range(4)] == [True] * 4
    drawn = sorted((int(step), int(ipu)) for ipu, step in re.findall(r'class="ipu-lane[^"]*" data-ipu="(\d+)" data-step="(\d+)"', trace))
    expected = sorted((s["index"], ipu) for s in profile["supersteps"] if s.get("compute") for ipu in s["compute"]["ipus"])
    assert drawn == expected and len({ipu for _, ipu in drawn}) == 4
    for part, label in (("fill", "fill"), ("steady", "steady state"), ("flush", "flush")):
        assert f'class="pipeline-{part}"' in trace and f">{label}<" in trace, part
    assert re.search(r"<td[^>]*>IPUs computing</td><td[^>]*>0</td>", dom)  # superstep 1: stage 0 alone
