"""ipu-vis on a program spanning the 4 IPUs of an m2000, pipelined over 4 micro-batches: the
graph's IPU regions and IPU-Link edges (in the layout, the PNG's pixels, the SVG's elements),
and the profile's IPUs per superstep with the report's fill, steady state and flush (the
browser's lanes: test_vis_browser.py)."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree

import numpy as np
import pytest
from mlir import ir
from PIL import Image
from test_vis import SMALL

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.target import load_target
from ipu_mlir.vis import layout, render
from ipu_mlir.vis.graph import ComputeGraph
from ipu_mlir.vis.interactive import report_data

# A stage per IPU (ipu-shard's annotations); stage 1 is a ReLU and a matmul, which exchange on chip.
STAGES = """
#id = affine_map<(d0, d1) -> (d0, d1)>
!t = tensor<16x64xf32>
!w = tensor<64x64xf32>
module attributes {ipu.target = "m2000"} {
  func.func @main(%x: !t, %w0: !w, %w1: !w, %w2: !w, %w3: !w) -> !t {
    %e = tensor.empty() : !t
    %zero = arith.constant 0.0 : f32
    %0 = "ipu.matmul"(%x, %w0) {ipu.ipu_id = 0 : i64} : (!t, !w) -> !t loc("stage0"("aten.mm"("model.py":1:1)))
    %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"], ipu.ipu_id = 1 : i64}
        ins(%0 : !t) outs(%e : !t) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> !t loc("stage1"("aten.relu"("model.py":2:1)))
    %2 = "ipu.matmul"(%1, %w1) {ipu.ipu_id = 1 : i64} : (!t, !w) -> !t loc("stage1"("aten.mm"("model.py":3:1)))
    %3 = "ipu.matmul"(%2, %w2) {ipu.ipu_id = 2 : i64} : (!t, !w) -> !t loc("stage2"("aten.mm"("model.py":4:1)))
    %4 = "ipu.matmul"(%3, %w3) {ipu.ipu_id = 3 : i64} : (!t, !w) -> !t loc("stage3"("aten.mm"("model.py":5:1)))
    return %4 : !t
  }
}
"""
TILES_PER_IPU = load_target("m2000").tiles_per_ipu


def compiled(micro_batches: int) -> ir.Module:
    context = make_context()
    with context:
        module = ir.Module.parse(STAGES)
        build_pass_manager(default_pipeline("m2000", micro_batches=micro_batches)).run(module.operation)
    return module


@pytest.fixture(scope="module")
def pipelined() -> ir.Module:
    return compiled(4)


@pytest.fixture(scope="module")
def graph(pipelined) -> ComputeGraph:
    with pipelined.context:
        return ComputeGraph.of(pipelined)


@pytest.fixture(scope="module")
def one_ipu() -> ComputeGraph:
    module = frontend_api.load_module(SMALL)
    with module.context:
        return ComputeGraph.of(frontend_api.compile_to_program(module, "tiny"))


def profile_of(module: ir.Module) -> dict:
    with module.context:
        return json.loads(runtime_api.load_simulator(module, None, "main", verified=True).profile.to_json())


def test_vertices_on_their_ipus_and_edges_over_the_links(graph) -> None:
    assert graph.ipus.tolist() == [0, 1, 2, 3] and graph.tiles_per_ipu == TILES_PER_IPU
    assert np.array_equal(graph.vertex_ipu, graph.vertex_tile // TILES_PER_IPU)
    for group, ipu in enumerate(graph.group_ipu):  # each group on the IPU of its stage
        assert (graph.vertex_ipu[graph.vertex_group == group] == ipu).all(), graph.groups[group]
        assert graph.layers[graph.group_layer[group]] == f"stage{ipu}", graph.groups[group]
    crossing = graph.vertex_ipu[graph.sources] != graph.vertex_ipu[graph.targets]
    assert np.array_equal(graph.link, crossing) and graph.exchange[graph.link].all()
    assert 0 < graph.link.sum() < graph.sources.size  # stage 1's ReLU feeds its matmul on chip
    assert not graph.link[graph.vertex_ipu[graph.sources] == graph.vertex_ipu[graph.targets]].any()


def test_each_ipu_a_region_of_its_own(graph) -> None:
    positions = layout.layout(graph)
    assert layout.ipu_cells(graph) == {0: (0, 0), 1: (1, 0), 2: (0, 1), 3: (1, 1)}
    boxes = [(positions[graph.vertex_ipu == ipu].min(axis=0), positions[graph.vertex_ipu == ipu].max(axis=0)) for ipu in range(4)]
    for a in range(4):
        for b in range(a):  # apart along some axis
            assert (boxes[a][0] > boxes[b][1]).any() or (boxes[b][0] > boxes[a][1]).any(), (a, b)
    assert (boxes[1][0][0] > boxes[0][1][0]) and (boxes[2][0][1] > boxes[0][1][1])  # IPU 1 right of IPU 0, IPU 2 below it


def test_png_outlines_the_ipus_and_draws_the_links_magenta(graph, one_ipu, tmp_path) -> None:
    def drawn(g: ComputeGraph) -> np.ndarray:
        path = tmp_path / "graph.png"
        render.render_png(g, layout.layout(g), str(path), "stages", size=600)
        return np.asarray(Image.open(path).convert("RGB")).astype(int)

    def share(pixels: np.ndarray, colour) -> float:
        return float((np.abs(pixels - np.asarray(colour)).max(axis=2) < 40).mean())

    pixels = drawn(graph)
    outline = (pixels == render.REGION_COLOUR).all(axis=2)
    rows, columns = np.flatnonzero(outline.sum(axis=1) > 100), np.flatnonzero(outline.sum(axis=0) > 100)
    assert len(rows) >= 4 and len(columns) >= 4  # the four regions' top and bottom, left and right sides
    magenta = np.asarray(render.LINK_COLOUR) * 255
    assert share(pixels, magenta) > 0.05  # the links' bundles
    plain = drawn(one_ipu)
    assert share(plain, magenta) < 0.001 and (plain == render.REGION_COLOUR).all(axis=2).sum() == 0


def test_svg_regions_and_link_lines(graph, one_ipu) -> None:
    ns = "{http://www.w3.org/2000/svg}"
    svg = ElementTree.fromstring(render.svg(graph, layout.layout(graph), "stages"))
    regions = [r for r in svg.iter(f"{ns}rect") if r.get("class") == "ipu-region"]
    assert len(regions) == 4 and [f"IPU {i}" for i in range(4)] == [t.text for t in svg.iter(f"{ns}text") if t.text.startswith("IPU ")]
    lines = svg.findall(f".//{ns}line")
    assert len(lines) == graph.sources.size and sum(line.get("class") == "link" for line in lines) == graph.link.sum()
    plain = ElementTree.fromstring(render.svg(one_ipu, layout.layout(one_ipu), "small"))
    assert not [e for e in plain.iter() if e.get("class") in ("ipu-region", "link")]
    assert "IPU-Links" in render.caption(graph, "x") and "IPU" not in render.caption(one_ipu, "x")


def test_profile_names_the_ipus_computing_per_superstep(pipelined) -> None:
    profile = profile_of(pipelined)
    assert profile["target"]["num_ipus"] == 4
    steps = profile["supersteps"]
    for step in steps:
        if step.get("compute"):
            tiles = np.flatnonzero(step["compute"]["cycles_per_tile"])
            assert step["compute"]["ipus"] == np.unique(tiles // TILES_PER_IPU).tolist()
    data = report_data(profile, "stages.json")
    assert data["num_ipus"] == 4
    ipus = [step["ipus"] for step in data["steps"]]
    pipeline = data["pipeline"]
    fill, steady, flush = pipeline["fill"], pipeline["steady"], pipeline["flush"]
    assert pipeline["ipus"] == [0, 1, 2, 3] and fill[1] + 1 == steady[0] and steady[1] + 1 == flush[0]
    assert all(ipus[i] == [0, 1, 2, 3] for i in range(steady[0], steady[1] + 1))
    # the fill starts the stages in order, IPU 0 alone first; the flush ends them in order, IPU 3 alone last
    assert ipus[fill[0]] == [0] and ipus[flush[1]] == [3]
    first = [next(i for i, on in enumerate(ipus) if ipu in on) for ipu in range(4)]
    last = [max(i for i, on in enumerate(ipus) if ipu in on) for ipu in range(4)]
    assert first == sorted(first) and first[3] == steady[0] and last == sorted(last) and last[0] == steady[1]
    assert not any(ipus[: fill[0]]) and not any(ipus[flush[1] + 1 :])


def test_no_pipeline_on_one_ipu_or_stages_in_turn(one_ipu) -> None:
    sharded = report_data(profile_of(compiled(1)), "sharded.json")
    assert sharded["num_ipus"] == 4 and sharded["pipeline"] is None
    assert {len(step["ipus"]) for step in sharded["steps"]} <= {0, 1}  # the stages one after another
    module = frontend_api.load_module(SMALL)
    with module.context:
        profile = json.loads(frontend_api.load_simulator(frontend_api.compile_to_program(module, "tiny"), "tiny").profile.to_json())
    data = report_data(profile, "small.json")
    assert data["num_ipus"] == 1 and data["pipeline"] is None and "num_ipus" not in profile["target"]
    assert not any("ipus" in step.get("compute", {}) for step in profile["supersteps"])


def test_graph_command_pipelines(tmp_path, capsys) -> None:
    """`ipu-vis graph FILE --micro-batches 4` compiles the pipeline and draws a region per IPU;
    --micro-batches on an L3 program or with --train: one line, exit 1, nothing written."""
    from ipu_mlir.tools import ipu_vis

    source = tmp_path / "stages.mlir"
    source.write_text(STAGES)
    assert ipu_vis.main(["graph", str(source), "--micro-batches", "4", "-o", str(tmp_path / "stages.svg")]) == 0
    assert (tmp_path / "stages.svg").read_text().count('class="ipu-region"') == 4
    capsys.readouterr()
    program = tmp_path / "stages.l3.mlir"
    program.write_text(str(compiled(4)))
    for argv, message in (
        (
            ["graph", str(program), "--micro-batches", "4"],
            "micro-batches=4 pipelines while compiling, but the program is already an L3 ipu program",
        ),
        (["graph", "--model", "alexnet", "--train", "--micro-batches", "4"], "--micro-batches pipelines inference"),
    ):
        assert ipu_vis.main([*argv, "-o", str(tmp_path / "bad.png")]) == 1
        lines = [line for line in capsys.readouterr().err.splitlines() if not line.startswith("[")]  # not the progress
        assert len(lines) == 1 and message in lines[0] and "internal error" not in lines[0], lines
        assert not (tmp_path / "bad.png").exists()


def test_static_trace_has_a_lane_per_ipu(pipelined, tmp_path) -> None:
    """`ipu-vis report --png-dir`'s execution trace: the three phase lanes, then IPU 0..3, each
    a bar per superstep whose compute the profile puts on that IPU."""
    import matplotlib.pyplot as plt

    from ipu_mlir.vis.report import Views

    profile = profile_of(pipelined)
    (tmp_path / "stages.json").write_text(json.dumps(profile))
    figure = Views.load(str(tmp_path / "stages.json")).execution_trace()
    trace = figure.axes[0]
    assert [t.get_text() for t in trace.get_yticklabels()] == ["compute", "exchange", "sync", "IPU 0", "IPU 1", "IPU 2", "IPU 3"]
    for ipu, lane in enumerate(trace.collections[3:]):
        expected = sum(ipu in s["compute"]["ipus"] for s in profile["supersteps"] if s.get("compute"))
        assert len(lane.get_paths()) == expected > 0, ipu
    plt.close(figure)
