"""Pictures of a training step (issue 25, point 8): each op's phase (forward, backward, update),
marked where frontends/joint.py traces the step, reaches the L3 program's locations, the graph's
vertices and colours, the profile and the report (what is kept for backward, the device
variables), and the report's script draws it in a headless browser."""

from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest
import torch
from torch import nn

import ipu_mlir.frontends.torch as ipu_torch
from ipu_mlir.tools.ipu_vis import main as ipu_vis
from ipu_mlir.vis import api, render
from ipu_mlir.vis.interactive import interactive_html, report_data

CHROMIUM = shutil.which("chromium")


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.act, self.fc2 = nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)

    def forward(self, x, target):
        return nn.functional.mse_loss(self.fc2(self.act(self.fc1(x))), target)


def batch() -> tuple:
    generator = torch.Generator().manual_seed(0)
    return torch.randn(4, 8, generator=generator), torch.randn(4, 4, generator=generator)


@pytest.fixture(scope="module")
def trained() -> ipu_torch.TrainingModel:
    torch.manual_seed(0)
    net = Net()
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target("tiny"), torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9))
    model(*batch())
    return model


def test_graph_vertices_by_phase() -> None:
    torch.manual_seed(0)
    net = Net()
    program = api.training_program(net, batch(), torch.optim.SGD(net.parameters(), lr=0.1), "tiny")
    graph = api.graph_of(program)
    phases = graph.phase_vertices()
    assert list(phases) == ["forward", "backward", "update"]
    assert sum(phases.values()) == graph.num_vertices  # every vertex has its phase
    assert "fc1" in graph.layers and not any(layer.startswith("phase:") for layer in graph.layers)
    colours = render.vertex_colours(graph)
    for phase, colour in render.PHASE_COLOURS.items():
        chosen = np.array([p == phase for p in graph.group_phase])[graph.vertex_group]
        assert (colours[chosen] == colour).all()
    assert "forward" in render.caption(graph, "step") and "update" in render.caption(graph, "step")


def test_profile_and_report_name_the_phases(trained) -> None:
    profile = trained.profile.to_dict()
    sets = profile["program"]["compute_sets"].values()
    order = [s["phase"] for s in sets]
    assert {"forward", "backward", "update"} <= set(order)
    assert all(s["layer"] in ("", "fc1", "act", "fc2") for s in sets)  # the phase is not taken for a layer
    training = report_data(profile, "mlp")["training"]
    assert list(training["phases"])[:3] == ["forward", "backward", "update"]
    kept = {(b["layer"], b["phase"]) for b in training["kept_for_backward"]}
    assert ("act", "forward") in kept  # ReLU's output: read by its backward (threshold_backward)
    assert training["kept_bytes"] > 0
    variables = {b["variable"] for b in training["variables"]}
    assert {"param:fc1.weight", "opt:momentum_buffer:fc2.bias", "hyper:lr"} <= variables


def test_inference_report_has_no_training_view() -> None:
    torch.manual_seed(0)
    compiled = ipu_torch.compile(nn.Sequential(nn.Linear(8, 4)).eval(), torch.randn(2, 8), target="tiny")
    compiled(torch.randn(2, 8))
    assert report_data(compiled.profile.to_dict(), "x")["training"] is None


def test_train_without_model_is_one_line(capsys, tmp_path) -> None:
    assert ipu_vis(["graph", "x.mlir", "--train", "-o", str(tmp_path / "x.png")]) == 1
    assert capsys.readouterr().err == "ipu-vis: error: --train draws a zoo model's training step: give --model NAME\n"
    assert not list(tmp_path.iterdir())


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (make browser installs it)")
def test_browser_draws_the_training_view(trained, tmp_path) -> None:
    page = tmp_path / "report.html"
    page.write_text(interactive_html(trained.profile.to_dict(), "mlp.json"))
    browser = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()]
    dom = subprocess.run(browser, check=True, capture_output=True, text=True, timeout=120).stdout
    assert re.search(r'data-ready="[\d.]+"', dom), "the script did not finish"
    phases = re.search(r'<table id="training-phases">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    assert re.findall(r'data-phase="(\w+)"', phases)[:3] == ["forward", "backward", "update"]
    kept = re.search(r'<table id="training-kept">.*?<tbody>(.*?)</tbody>', dom, re.S).group(1)
    assert "<td>act</td>" in kept
    assert "param:fc1.weight" in re.search(r'<table id="training-variables">.*?</table>', dom, re.S).group(0)
    assert 'class="phase-backward"' in dom  # the liveness chart's phase bands
