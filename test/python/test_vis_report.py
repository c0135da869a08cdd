"""The interactive report's data (vis/interactive.py) and the profile's program summary it
reads (runtime/program_summary.py): layers, FLOPs, the time and bytes shared out among layers; the
static views' two fixes; the automatic report of `ipu-run --report` / IPU_MLIR_REPORT."""

from __future__ import annotations

import json
import os
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from test_vis import SMALL

from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.tools import ipu_run, ipu_vis
from ipu_mlir.vis.interactive import report_data
from ipu_mlir.vis.report import Views

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def profile() -> dict:
    module = frontend_api.load_module(SMALL)
    with module.context:
        program = frontend_api.compile_to_program(module, "tiny")
    return frontend_api.load_simulator(program, "tiny").profile.to_dict()


def test_compute_sets_name_their_layer_and_flops(profile) -> None:
    sets = profile["program"]["compute_sets"]
    products = {name: entry for name, entry in sets.items() if "combine" not in name}
    # fc1: 32x64 @ 64x32, fc2: 32x32 @ 32x32; 2 FLOPs (multiply, add) per point of the loop space
    assert {(e["layer"], e["op"], e["flops"]) for e in products.values()} == {
        ("fc1", "aten.mm", 2 * 32 * 64 * 32),
        ("fc2", "aten.mm", 2 * 32**3),
    }
    for entry in sets.values():
        assert entry["vertices"] == sum(group["vertices"] for group in entry["groups"]) == 16  # every tile of tiny
        assert all(group["tiles"] == [[0, 16]] for group in entry["groups"])
    assert profile["program"]["buffers"]["generic0"]["layer"] == "fc1"  # the ReLU's result: written by fc1's combining step


def test_layers_share_out_the_whole_profile(profile) -> None:
    data = report_data(profile, "small")
    layers = {row["layer"]: row for row in data["layers"]}
    assert {"fc1", "fc2"} <= set(layers)
    summary = profile["summary"]
    for key, total in (("cycles", summary["cycles"]), ("exchange", summary["exchange_cycles"]), ("bytes", summary["exchange_bytes"])):
        assert sum(row[key] for row in layers.values()) == total, key
    assert sum(row["flops"] for row in layers.values()) == sum(e["flops"] for e in profile["program"]["compute_sets"].values())
    assert layers["fc1"]["flops"] > 2 * 32 * 64 * 32 > layers["fc2"]["flops"]
    live = {b["name"]: b["layer"] for b in data["buffers"]}
    assert all(live[name] in ("fc1", "fc2") for name in profile["liveness"]["peak_buffers"])


def test_static_views_use_the_tiles_range_and_draw_a_line(profile, tmp_path) -> None:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    figure = Views.load(str(path)).tile_map()
    memory = np.asarray(profile["memory"]["bytes_per_tile"])
    heat = figure.axes[0]
    (line,) = [axes for axes in figure.axes if axes.get_yscale() == "log"]
    assert heat.images[0].norm.vmin == memory.min() > 0  # from the least used tile, not from 0
    assert not [c for c in line.collections if isinstance(c, PolyCollection)]  # no fill down to 1 byte
    assert line.lines[0].get_ydata().max() == memory.max()
    plt.close(figure)


def test_html_is_self_contained(profile, tmp_path) -> None:
    path = tmp_path / "profile.json"
    path.write_text(json.dumps(profile))
    html = tmp_path / "report.html"
    assert ipu_vis.main(["report", str(path), "-o", str(html), "--compare", str(path)]) == 0
    text = html.read_text()
    assert "src=" not in text and "<link" not in text and "http://" not in text.replace("http://www.w3.org/2000/svg", "")
    embedded = text.split("<script id='data' type='application/json'>")[1].split("</script>")[0]
    data = json.loads(embedded)
    assert data["baseline"]["name"] == data["name"] == "profile.json"


def test_ipu_run_writes_the_report_when_asked(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("IPU_MLIR_REPORT", str(tmp_path / "reports"))
    assert ipu_run.main([str(REPO / "examples" / "relu.mlir"), "--target", "tiny", "--random-inputs", "0"]) == 0
    assert f"report:            {tmp_path / 'reports' / 'relu.html'}" in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path / "reports")) == ["relu.html", "relu.json"]
