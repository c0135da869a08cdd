"""The library face of `ipu-vis`: pictures of a program, from Python.

from ipu_mlir.vis import api
graph = api.graph_of("model.mlir", target="gc200")       # L0 is compiled first, L3 taken as it is
api.draw(graph, "graph.png", title="my model")           # .png at any size; .svg / .html for small programs
api.graph_of("model.mlir", target="m2000", micro_batches=4)  # pipelined over 4 IPUs: a region each
api.draw(api.graph_of(api.zoo_program("resnet50")), "resnet50.png", title="ResNet-50")
api.draw(api.graph_of(api.training_program(net, (x, y), optimizer)), "step.png", title="a training step")
api.report("profile.json", "report.html", png_dir="report")
api.auto_report(compiled.profile, "reports", "cnn")      # reports/cnn.json and reports/cnn.html
"""

from __future__ import annotations

import os
from collections.abc import Callable

from mlir import ir

from ipu_mlir.frontends import api as frontend_api
from ipu_mlir.frontends import fx_import, zoo
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends.joint import build_step
from ipu_mlir.frontends.optimizers import rule_of
from ipu_mlir.runtime.api import Source
from ipu_mlir.target import DEFAULT_TARGET
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.files import publish, temporary_for

from . import layout, render
from .graph import ComputeGraph
from .interactive import auto_report
from .report import Views, write_html, write_pngs

__all__ = ["auto_report", "draw", "graph_of", "report", "training_program", "zoo_program"]

FORMATS = (".png", ".svg", ".html")
Progress = Callable[[str], None] | None


def graph_of(
    source: Source | ir.Module,
    target: str | None = None,
    entry: str | None = None,
    layer_depth: int | None = None,
    micro_batches: int = 1,
) -> ComputeGraph:
    """The vertex graph of a program: an L3 module as it is, anything else compiled for `target`
    first (pipelined over `micro_batches` > 1 on a multi-IPU target: ipu-pipeline)."""
    module = frontend_api.load_module(source)
    with module.context:
        if not frontend_api.is_program(module):
            module = frontend_api.compile_to_program(module, target, entry, micro_batches=micro_batches)
            entry = None
        elif micro_batches > 1:
            raise IpuError(
                f"micro-batches={micro_batches} pipelines while compiling, but the program is already an L3 ipu program",
                module.operation.location,
            )
        return ComputeGraph.of(module, entry, layer_depth)


def zoo_program(name: str, target: str = DEFAULT_TARGET, progress: Progress = None, micro_batches: int = 1, **options) -> ir.Module:
    """Zoo model `name` (frontends/zoo.py; `options` as for zoo.build) exported and compiled to
    L3, pipelined over `micro_batches` > 1."""
    say = progress or (lambda line: None)
    try:
        module, inputs = zoo.build(name, **options)
    except (KeyError, ValueError) as error:
        raise IpuError(str(error.args[0])) from None
    say(f"exporting {name} with torch-mlir...")
    imported = torch_frontend.export(module, *inputs)
    say(f"compiling for {target}...")
    return torch_frontend.compile_program(imported, target, module, micro_batches=micro_batches)


def training_program(model, inputs: tuple, optimizer, target: str = DEFAULT_TARGET, progress: Progress = None) -> ir.Module:
    """The joint training step (forward, loss, backward, `optimizer`'s update: frontends/joint.py)
    of `model`, whose forward returns the loss, on the micro-batch `inputs`, compiled to L3: each
    op's location names its phase, which the picture colours."""
    say = progress or (lambda line: None)
    say("tracing the training step and importing it with torch-mlir...")
    step = build_step(
        model.train(), optimizer, rule_of(optimizer), inputs, importer=fx_import.importer_class()
    )  # its layer and phase locations
    say(f"compiling for {target}...")
    return torch_frontend.compile_program(step.module, target, model)


def draw(graph: ComputeGraph, path: str, title: str, size: int | None = None, seed: int = 0, progress: Progress = None) -> None:
    """The graph laid out and drawn to `path`: .png (any size), .svg or .html (small programs)."""
    extension = os.path.splitext(path)[1].lower()
    if extension not in FORMATS:
        raise IpuError(f"cannot draw '{path}': the picture is written as {', '.join(FORMATS)}")
    if extension != ".png" and graph.num_vertices > render.SVG_MAX_VERTICES:
        limit, kind = render.SVG_MAX_VERTICES, extension[1:].upper()
        raise IpuError(f"{graph.num_vertices:,} vertices are too many for an {kind} (at most {limit:,}): write a .png")
    positions = layout.layout(graph, seed=seed, progress=progress)
    temporary = temporary_for(path, extension)  # whole or nothing
    try:
        if extension == ".png":
            render.render_png(graph, positions, temporary, title, size or 2000, progress)
        else:
            svg = render.svg(graph, positions, title, size or 900)
            with open(temporary, "w") as file:
                file.write(svg if extension == ".svg" else render.html_page(svg, title))
        publish(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def report(profile: str, path: str | None = None, png_dir: str | None = None, baseline: str | None = None) -> list[str]:
    """The profile views of `profile` (ipu-run's JSON) as one interactive HTML file (compared
    with the profile `baseline`, if given) and/or PNGs; the paths written."""
    views = Views.load(profile)
    written = []
    if path:
        write_html(views, path, Views.load(baseline) if baseline else None)
        written.append(path)
    if png_dir:
        written += write_pngs(views, png_dir)
    return written
