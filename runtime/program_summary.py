"""What the profile report says of an L3 program beyond its costs (`program_summary`): per
compute set and buffer, the PyTorch layer, ATen op and training phase its location names, and
its FLOPs; and the readers of those locations (`location_names`, `location_phase`).
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.ops import record_of, space_of
from ipu_mlir.dialects.program import Program

# The names the PyTorch front end gives ATen ops in locations (the others name layers).
ATEN_PREFIXES = ("aten.", "prims.", "torch.", "_operator.", "operator.")
# The phase of a training step's op (frontends/joint.py): "phase:forward", "phase:backward", "phase:update".
PHASE_PREFIX = "phase:"


def program_summary(module: ir.Module | ir.Operation) -> dict:
    """What the report says of an L3 program beyond its costs: per compute set, the PyTorch
    layer and ATen op its location names (the PyTorch front end's name locations, '' without),
    its FLOPs and its vertex groups (codelet, FLOPs per vertex, tiles as [first, end) runs:
    sizes scale with the groups, not with tiles x groups); per buffer, its layer and op.

    FLOPs: a contraction (an op with reduction loops: matmul, convolution) 2 per point of its
    loop space (a multiply and an add); an elementwise op one per float arithmetic or math op of
    its body per point; data movement none."""
    program = Program(module)
    flops_of: dict[str, int] = {}
    compute_sets = {}
    for function in program.functions(ipu.COMPUTE_SET_ATTR):
        name = ir.StringAttr(function.attributes["sym_name"]).value
        groups = []
        for group in program.groups(name):
            codelet = ir.FlatSymbolRefAttr(group.attributes["codelet"]).value
            if codelet not in flops_of:
                flops_of[codelet] = _codelet_flops(program.function(codelet, ipu.CODELET_ATTR))
            tiles = group.tiles.tiles()
            groups.append(
                {"codelet": codelet, "flops_per_vertex": flops_of[codelet], "vertices": int(tiles.size), "tiles": _runs(np.unique(tiles))}
            )
        first = program.groups(name)[:1]
        location = (first[0] if first else function).operation.location
        layer, op = _origin(location)
        compute_sets[name] = {
            "layer": layer,
            "op": op,
            "phase": location_phase(location),
            "vertices": sum(g["vertices"] for g in groups),
            "flops": sum(g["flops_per_vertex"] * g["vertices"] for g in groups),
            "groups": groups,
        }
    return {"compute_sets": compute_sets, "buffers": _buffer_origins(module, program)}


def _buffer_origins(module: ir.Module | ir.Operation, program: Program) -> dict[str, dict[str, str]]:
    """Each buffer's layer and ATen op: those of the vertex group writing it, else of the first
    copy or vertex group naming it (a weight's buffer op and host stream sit at the program's
    start, located at its first layer), else its own location's; a device variable's buffer also
    its `variable` name."""
    writers: dict[str, dict[str, str]] = {}
    users: dict[str, dict[str, str]] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        keys = {"ipu.copy": ("source", "dest"), "ipu.vertex_group": ("inputs", "outputs")}.get(op.name)
        layer, aten = _origin(op.location) if keys else ("", "")
        phase = location_phase(op.location) if keys else ""
        for key in keys if layer or aten else ():
            attribute = op.attributes[key]
            for ref in [attribute] if isinstance(attribute, ir.FlatSymbolRefAttr) else list(ir.ArrayAttr(attribute)):
                name = ir.FlatSymbolRefAttr(ref).value
                (writers if key == "outputs" else users).setdefault(name, {"layer": layer, "op": aten, "phase": phase})
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    found = users | writers
    for variable in program.variables():  # a device variable's buffer: named as the host names it (param:fc1.weight)
        found[variable.buffer] = {**found.get(variable.buffer, {"layer": "", "op": ""}), "variable": variable.variable_name}
    for buffer in program.buffers():
        name = ir.StringAttr(buffer.attributes["sym_name"]).value
        layer, aten = _origin(buffer.operation.location)
        if name not in found and (layer or aten):
            found[name] = {"layer": layer, "op": aten}
    return found


def location_names(location: ir.Location) -> list[str]:
    """The names of a location's name locations, outermost first (fused ones: of the first
    part carrying any), e.g. ["layer1.0.conv1", "aten.convolution"] from the PyTorch front end."""
    found: list[str] = []

    def walk(loc: ir.Location) -> None:
        if loc.is_a_name():
            found.append(loc.name_str)
            walk(loc.child_loc)
        elif loc.is_a_callsite():
            walk(loc.callee)
        elif loc.is_a_fused():
            for inner in loc.locations:
                if not found:
                    walk(inner)

    walk(location)
    return found


def _origin(location: ir.Location) -> tuple[str, str]:
    """The layer (module path) and the ATen op a location names, '' for each it does not."""
    names = location_names(location)
    op = next((name for name in names if name.startswith(ATEN_PREFIXES)), "")
    layer = next((name for name in names if not name.startswith((*ATEN_PREFIXES, PHASE_PREFIX))), "")
    return layer, op


def location_phase(location: ir.Location) -> str:
    """The training phase a location names (forward, backward, update), '' outside a training step."""
    return next((name[len(PHASE_PREFIX) :] for name in location_names(location) if name.startswith(PHASE_PREFIX)), "")


def _codelet_flops(codelet: ir.OpView | None) -> int:
    if codelet is None:
        return 0
    total = 0
    for op in codelet.regions[0].blocks[0].operations:
        if record_of(op) is None:
            continue
        space = space_of(op)
        if space.reductions:
            total += space.flops()
        else:
            total += math.prod(space.extents) * _arithmetic_ops(op.operation)
    return total


def _arithmetic_ops(op: ir.Operation) -> int:
    """Float arithmetic and math ops in `op`'s body (constants and index casts are no work)."""
    count = 0
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                name = inner.operation.name
                if name.startswith(("arith.", "math.")) and not name.startswith(("arith.constant", "arith.index")):
                    count += 1
                count += _arithmetic_ops(inner.operation)
    return count


def _runs(tiles: np.ndarray) -> list[list[int]]:
    """Sorted distinct tile numbers as [first, end) runs of consecutive tiles."""
    if not tiles.size:
        return []
    breaks = np.flatnonzero(np.diff(tiles) != 1) + 1
    starts, ends = np.r_[tiles[:1], tiles[breaks]], np.r_[tiles[breaks - 1] + 1, tiles[-1:] + 1]
    return np.stack((starts, ends), axis=1).tolist()  # Python ints, made in C: a grid of stride 60 has 720 runs
