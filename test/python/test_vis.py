"""ipu-vis on a small program, looked at as a person would: the graph's counts against the
simulator's profile, the pictures' pixels and elements, the profile views' bars and cells."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pytest
from mlir import ir
from PIL import Image

from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.tools import ipu_vis
from ipu_mlir.vis import api, layout, render
from ipu_mlir.vis.graph import ComputeGraph, location_names
from ipu_mlir.vis.report import KIND_COLOURS, TOP_BUFFERS, Views, tile_columns

# two dense layers on tiny's 16 tiles, named as the PyTorch front end names them; the ReLU is
# fused into the first matmul's combining step (named after the compiler's ops, as it has no name)
SMALL = """
#id = affine_map<(d0, d1) -> (d0, d1)>
module {
  func.func @main(%x: tensor<32x64xf32>, %w: tensor<64x32xf32>, %v: tensor<32x32xf32>) -> tensor<32x32xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<32x32xf32>
    %f = linalg.fill ins(%zero : f32) outs(%e : tensor<32x32xf32>) -> tensor<32x32xf32>
    %mm = linalg.matmul ins(%x, %w : tensor<32x64xf32>, tensor<64x32xf32>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
      loc("fc1"("aten.mm"("model.py":3:1)))
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<32x32xf32>) outs(%e : tensor<32x32xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<32x32xf32>
    %mm2 = linalg.matmul ins(%r, %v : tensor<32x32xf32>, tensor<32x32xf32>) outs(%f : tensor<32x32xf32>) -> tensor<32x32xf32>
      loc("fc2"("aten.mm"("model.py":4:1)))
    return %mm2 : tensor<32x32xf32>
  }
}
"""


@pytest.fixture(scope="module")
def program():
    module = frontend_api.load_module(SMALL)
    with module.context:
        return frontend_api.compile_to_program(module, "tiny")


@pytest.fixture(scope="module")
def graph(program) -> ComputeGraph:
    with program.context:
        return ComputeGraph.of(program)


@pytest.fixture(scope="module")
def profile_path(program, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("profile") / "profile.json"
    path.write_text(frontend_api.load_simulator(program, "tiny").profile.to_json())
    return path


def test_counts_are_the_profiles(graph, profile_path) -> None:
    """A vertex per codelet instance, an edge per vertex-to-buffer connection: as the simulator counts."""
    summary = json.loads(profile_path.read_text())["summary"]
    assert (graph.num_vertices, graph.num_edges) == (summary["vertices"], summary["edges"])
    assert graph.layers == ["fc1", "fc2"]  # the ReLU (fused into fc1's combining step, on its location)
    assert graph.target == "tiny" and graph.vertex_tile.max() < 16


def test_edges_follow_the_data(graph) -> None:
    """fc1's partial products feed its combining step, which feeds fc2, whose partial products
    feed its own (on tiny, both matmuls cut k); some edges cross tiles."""
    layer = graph.group_layer[graph.vertex_group]
    steps = {(int(a), int(b)) for a, b in zip(layer[graph.sources], layer[graph.targets])}
    assert steps == {(0, 0), (0, 1), (1, 1)}
    assert graph.exchange.any()
    on_tile = ~graph.exchange
    assert (graph.vertex_tile[graph.sources[on_tile]] == graph.vertex_tile[graph.targets[on_tile]]).all()


# L3 by hand: @first on tiles 0-3 writes a; a copy hands tile t's a to tile 3 - t's b; @second
# reads a (on its own tile) and b (exchanged). So vertex t of @first feeds vertices t and 3 - t of @second.
CROSSED = """
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<4xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "a", tiles = array<i64: 0, 4, 1>, type = memref<4xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 0, 4, 1>, type = memref<4xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "c", tiles = array<i64: 0, 4, 1>, type = memref<4xf32>} : () -> ()
  func.func @main(%arg0: tensor<16xf32>) -> tensor<16xf32> attributes {ipu.program} {
    "ipu.host_to_device"(%arg0) {buffer = @x,
      mapping = {grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 4, 1>}} : (tensor<16xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.execute"() {compute_set = @first} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    "ipu.copy"() {dest = @b, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 3, 4, -1>, size = 4 : i64,
      source = @a, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 4, 1>} : () -> ()
    "ipu.execute"() {compute_set = @second} : () -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    %0 = "ipu.device_to_host"() {buffer = @c,
      mapping = {grain = 4 : i64, kind = "linear", tiles = array<i64: 0, 4, 1>}} : () -> tensor<16xf32>
    return %0 : tensor<16xf32>
  }
  func.func private @first() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @neg, inputs = [@x], outputs = [@a], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @second() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @add, inputs = [@a, @b], outputs = [@c], tiles = array<i64: 0, 4, 1>} : () -> ()
    return
  }
  func.func private @neg(%arg0: tensor<4xf32>) -> tensor<4xf32> attributes {ipu.codelet} {
    %0 = arith.negf %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
  func.func private @add(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>) -> tensor<4xf32> attributes {ipu.codelet} {
    %0 = arith.addf %arg0, %arg1 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""


def test_edges_are_the_vertices_data() -> None:
    """Exactly: each vertex of @first feeds @second's vertex on its tile (sharing) and on the mirrored tile (exchange)."""
    module = frontend_api.load_module(CROSSED)
    with module.context:
        graph = ComputeGraph.of(module)
    assert (graph.num_vertices, graph.num_edges) == (8, 4 * 2 + 4 * 3)
    assert graph.vertex_tile.tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    edges = set(zip(graph.sources.tolist(), graph.targets.tolist(), graph.exchange.tolist()))
    assert edges == {(t, 4 + t, False) for t in range(4)} | {(t, 4 + 3 - t, True) for t in range(4)}
    outputs, _ = frontend_api.run(CROSSED, [np.arange(16, dtype=np.float32)])
    np.testing.assert_array_equal(outputs[0].reshape(4, 4), -np.arange(16).reshape(4, 4) - np.arange(16).reshape(4, 4)[::-1])


def test_location_names() -> None:
    """The PyTorch front end's nesting (layer, ATen op, file) and fused locations: the first part with names."""
    with ir.Context():
        file = ir.Location.file("model.py", 3, 1)
        named = ir.Location.name("layer1.0.conv1", childLoc=ir.Location.name("aten.convolution", childLoc=file))
        assert location_names(named) == ["layer1.0.conv1", "aten.convolution"]
        assert location_names(ir.Location.fused([file, named, ir.Location.name("other")])) == ["layer1.0.conv1", "aten.convolution"]
        assert location_names(file) == []


def test_layout_clusters_layers(graph) -> None:
    positions = layout.layout(graph)
    assert positions.shape == (graph.num_vertices, 2) and 0 <= positions.min() and positions.max() <= 1
    layer = graph.group_layer[graph.vertex_group]
    centres = np.array([positions[layer == k].mean(axis=0) for k in range(len(graph.layers))])
    spread = max(np.linalg.norm(positions[layer == k] - centres[k], axis=1).mean() for k in range(len(graph.layers)))
    between = min(np.linalg.norm(centres[a] - centres[b]) for a in range(len(centres)) for b in range(a))
    assert spread < between  # each layer a cluster, apart from the others


def test_png_shows_every_vertex_in_its_layers_colour(graph, tmp_path) -> None:
    positions = layout.layout(graph)
    path = tmp_path / "graph.png"
    size = 400
    render.render_png(graph, positions, str(path), "small", size=size)
    pixels = np.asarray(Image.open(path).convert("RGB")).astype(float)
    assert pixels.shape == (size, size, 3)
    background = np.all(np.abs(pixels - render.BACKGROUND) < 8, axis=2)
    assert 0.05 < 1 - background.mean() < 0.9  # neither blank nor a flood
    where = np.rint(size // 20 + positions * (size - 2 * (size // 20) - 1)).astype(int)
    colours = render.layer_colours(len(graph.layers)) * 255
    layer = graph.group_layer[graph.vertex_group]
    for k in range(len(graph.layers)):
        seen = np.median(pixels[where[layer == k, 1], where[layer == k, 0]], axis=0)
        assert np.argmin(np.linalg.norm(colours - seen, axis=1)) == k, (k, seen)


def test_svg_has_a_circle_per_vertex_and_a_line_per_edge(graph) -> None:
    svg = ElementTree.fromstring(render.svg(graph, layout.layout(graph), "small"))
    ns = "{http://www.w3.org/2000/svg}"
    circles = svg.findall(f".//{ns}circle")
    assert len(circles) == graph.num_vertices
    assert len(svg.findall(f".//{ns}line")) == graph.sources.size
    assert len({c.get("fill") for c in circles}) == len(graph.layers)
    texts = [t.text for t in svg.findall(f".//{ns}text")]
    assert set(graph.layers) < set(texts) and any(f"{graph.num_vertices} vertices" in t for t in texts)


def test_profile_views(profile_path) -> None:
    """Each view's elements: a cell per tile, a bar per buffer and superstep, a lane per phase."""
    views = Views.load(str(profile_path))
    profile = views.profile
    figures = {name: draw() for name, draw in views.figures().items()}
    cells = figures["tile_map"].axes[0].images[0].get_array()
    assert cells.count() == profile["target"]["num_tiles"] == 16 and tile_columns(16) == 4
    on_tile = [b for b in profile["buffers"] if b["on_busiest_tile"]]
    assert len(figures["memory_by_buffer"].axes[0].patches) == min(TOP_BUFFERS, len(on_tile))
    kinds = figures["memory_by_buffer"].axes[1].patches
    assert len(kinds) == len(KIND_COLOURS) and sum(bar.get_height() for bar in kinds) == profile["liveness"]["peak_bytes"]
    assert len(figures["exchange"].axes[0].patches) == len(profile["supersteps"])
    lanes = figures["execution_trace"].axes[0].collections
    assert len(lanes) == 3 and all(len(lane.get_paths()) for lane in lanes)
    peak = profile["liveness"]["peak_step"]
    assert profile["liveness"]["bytes_per_step"][peak] == max(profile["liveness"]["bytes_per_step"]) > 0
    assert any(f"superstep {peak}" in t.get_text() for t in figures["liveness"].axes[0].texts)
    for figure in figures.values():
        plt.close(figure)


def test_report_html_and_pngs(profile_path, tmp_path) -> None:
    html, pngs = tmp_path / "report.html", tmp_path / "png"
    assert ipu_vis.main(["report", str(profile_path), "-o", str(html), "--png-dir", str(pngs)]) == 0
    text = html.read_text()
    assert "<script id='data' type='application/json'>" in text  # the interactive report (test_vis_report, test_vis_browser)
    assert "src=" not in text and "<link" not in text  # self-contained
    for png in sorted(pngs.iterdir()):
        pixels = np.asarray(Image.open(png).convert("L"))
        assert pixels.std() > 10, png  # not blank


def test_graph_command(tmp_path, capsys) -> None:
    source = tmp_path / "small.mlir"
    source.write_text(SMALL)
    for name in ("graph.png", "graph.html"):
        assert ipu_vis.main(["graph", str(source), "--target", "tiny", "-o", str(tmp_path / name), "--pixels", "300"]) == 0
        assert (tmp_path / name).stat().st_size > 1000
    assert "64 vertices" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["graph", "{dir}/small.mlir", "-o", "{dir}/out.jpg"], "cannot draw '{dir}/out.jpg': the picture is written as .png, .svg, .html"),
        (["graph", "{dir}/missing.mlir", "-o", "{dir}/out.png"], "missing.mlir"),
        (["graph", "-o", "{dir}/out.png"], "give a program FILE or --model NAME"),
        (["report", "{dir}/small.mlir", "-o", "{dir}/out.html"], "is not a profile: invalid JSON at line 2"),
        (["report", "{dir}/missing.json", "-o", "{dir}/out.html"], "cannot read profile"),
        (["report", "{dir}/empty.json", "-o", "{dir}/out.html"], "is not an ipu-run profile: missing summary"),
    ],
)
def test_bad_input_is_an_error_and_writes_nothing(tmp_path, capsys, argv, message) -> None:
    (tmp_path / "small.mlir").write_text(SMALL)
    (tmp_path / "empty.json").write_text("{}")
    before = set(tmp_path.iterdir())
    assert ipu_vis.main([a.format(dir=tmp_path) for a in argv]) == 1
    assert message.format(dir=tmp_path) in capsys.readouterr().err
    assert set(tmp_path.iterdir()) == before


def test_too_many_vertices_for_an_svg(graph, monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(render, "SVG_MAX_VERTICES", graph.num_vertices - 1)
    with pytest.raises(IpuError, match="too many for an SVG"):
        api.draw(graph, str(tmp_path / "g.svg"), "small")
    assert not list(tmp_path.iterdir())


def test_profile_buffers_and_liveness() -> None:
    """examples/relu.mlir by hand: x streamed in (superstep 0), y computed from it (1), y's heads
    gathered onto tile 0 (2), both streamed out (3); tile 0 holds all three."""
    program = Path(__file__).resolve().parents[2] / "examples" / "relu.mlir"
    profile = json.loads(frontend_api.load_simulator(program, "tiny").profile.to_json())
    lives = {b["name"]: (b["kind"], b["bytes_per_tile"], b["tiles"], b["first_step"], b["last_step"]) for b in profile["buffers"]}
    assert lives == {"x": ("host", 256, 16, 0, 1), "y": ("compute", 256, 16, 1, 3), "head": ("exchange", 256, 1, 2, 3)}
    live = profile["liveness"]
    assert (live["tile"], live["bytes_per_step"], live["chip_bytes_per_step"]) == (0, [256, 512, 512, 512], [4096, 8192, 4352, 4352])
    assert (live["peak_step"], live["peak_bytes"], live["peak_buffers"]) == (1, 512, ["x", "y"])


def test_weights_are_live_throughout() -> None:
    """A constant weight is written once at load (Profile.load_bytes) and holds its bytes in every superstep."""
    source = SMALL.replace(", %v: tensor<32x32xf32>) ->", ") ->").replace(
        "    %zero = arith.constant 0.0 : f32\n",
        "    %zero = arith.constant 0.0 : f32\n    %v = arith.constant dense<0.5> : tensor<32x32xf32>\n",
    )
    profile = json.loads(frontend_api.load_simulator(source, "tiny").profile.to_json())
    weights = [b for b in profile["buffers"] if b["kind"] == "weight"]
    assert profile["summary"]["load_bytes"] == 32 * 32 * 4 == sum(b["bytes_per_tile"] * b["tiles"] for b in weights)
    assert {(b["first_step"], b["last_step"]) for b in weights} == {(0, len(profile["supersteps"]) - 1)}
