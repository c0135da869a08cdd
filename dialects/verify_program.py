"""The verifier's rules for L3 program ops (`verifier.py` walks the IR and calls them): buffers,
host streams, all-reduces, predicates, device variables, copies, compute sets and vertex groups.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from mlir import ir

from ipu_mlir.target.diagnostics import op_error

from . import ipu
from .attrs import TileGrid, elements_per_tile
from .ops.registry import static_tensor
from .verify_scope import BufferFacts, Scope, check_mapping


def _verify_buffer(op: ipu.BufferOp, scope: Scope) -> None:
    parent = op.operation.parent
    if parent is None or parent.name != "builtin.module":
        raise op_error(op, "expects to be directly inside a builtin.module")
    memref = op.type
    if not memref.has_static_shape:
        raise op_error(op, f"expects a statically shaped memref, got {memref}")
    layout = memref.layout
    if not (isinstance(layout, ir.AffineMapAttr) and layout.value == ir.AffineMap.get_identity(memref.rank)):
        raise op_error(op, f"expects a memref with the identity layout, got {memref}")
    if not isinstance(memref.element_type, (ir.IntegerType, ir.FloatType)):
        raise op_error(op, f"expects integer or float elements, got {memref.element_type}")
    scope.check_grid(op, "tiles", op.tiles, distinct=True)
    offset = op.offset
    if offset is None:
        return
    size = op.bytes_per_tile
    if offset < 0 or offset % ipu.element_bytes(memref.element_type):
        raise op_error(op, f"expects a non-negative 'offset' aligned to the element size, got {offset}")
    if offset + size > scope.target.tile_memory_bytes:
        raise op_error(
            op,
            f"needs bytes [{offset}, {offset + size}) of each tile, but tiles of {scope.target.name} "
            f"have {scope.target.tile_memory_bytes} bytes",
        )


def _check_held(op: ir.OpView, verb: str, grid: TileGrid, buffer: BufferFacts, scope: Scope) -> None:
    """Every tile of `grid` holds a copy of `buffer`; else names the first that does not."""
    holders = buffer.holders
    if holders[grid.min_tile : grid.max_tile + 1].all() or not (scope.reached(grid) & ~holders).any():
        return
    tiles = grid.tiles()  # only to name the first missing tile in grid order
    missing = tiles[~holders[tiles]]
    raise op_error(op, f"{verb} tile {missing[0]}, which holds no copy of @{buffer.sym_name}")


def _check_stream(op: ir.OpView, tensor_type: ir.Type, scope: Scope, attribute: str = "buffer") -> None:
    """The tensor laid out by the op's `mapping` fits the buffer its `attribute` names."""
    name = getattr(op, attribute)
    tensor = static_tensor(op, tensor_type, "tensor")
    buffer = scope.buffer(op, attribute, name)
    if buffer.element_type != tensor.element_type:
        raise op_error(op, f"expects @{name}'s element type {buffer.element_type}, got {tensor.element_type}")
    key = (op.attributes["mapping"], tensor_type, buffer.tiles, buffer.capacity)
    if key in scope.passed:
        return
    mapping = op.mapping
    check_mapping(op, "'mapping'", mapping, tensor.shape, scope)
    capacity = buffer.capacity
    numel = math.prod(tensor.shape)
    if numel > buffer.tiles.count * capacity:  # before counting the elements, which could be very many
        raise op_error(op, f"streams {numel} elements, more than the {buffer.tiles.count} x {capacity} that @{name} holds")
    per_tile = elements_per_tile(mapping, tuple(tensor.shape))
    tiles, counts = np.fromiter(per_tile, np.int64, len(per_tile)), np.fromiter(per_tile.values(), np.int64, len(per_tile))
    wrong = np.flatnonzero(~buffer.holders[tiles] | (counts > capacity))  # a weight maps to a thousand tiles: no loop over them
    if wrong.size:
        tile, count = int(tiles[wrong[0]]), int(counts[wrong[0]])
        if not buffer.holders[tile]:
            raise op_error(op, f"maps elements to tile {tile}, which holds no copy of @{name}")
        raise op_error(op, f"maps {count} elements to tile {tile}, but @{name} holds {capacity} per tile: the stream overflows it")
    scope.passed.add(key)


def _verify_host_to_device(op: ipu.HostToDeviceOp, scope: Scope) -> None:
    _check_stream(op, op.source.type, scope)
    _check_not_variable(op, scope)


def _verify_device_to_host(op: ipu.DeviceToHostOp, scope: Scope) -> None:
    _check_stream(op, op.result.type, scope)  # of a variable's buffer too: a result asking for its value back


def _check_replicas(op: ir.OpView, scope: Scope | None) -> None:
    """A power of two (GCL's ring); at L3 (`scope`: the program's target), one IPU per replica."""
    replicas = op.replicas
    if replicas < 2 or replicas & (replicas - 1):
        raise op_error(op, f"expects replicas to be a power of two of at least 2 (GCL's ring all-reduce), got {replicas}")
    if scope is not None and replicas > scope.target.num_ipus:
        raise op_error(
            op, f"all-reduces over {replicas} replicas, at least one IPU each, but target '{scope.target.name}' has {scope.target.num_ipus}"
        )


def _verify_all_reduce(op: ipu.AllReduceOp, scope: Scope) -> None:
    if op.source.type != op.result.type:
        raise op_error(op, f"expects the result to have the operand's type {op.source.type}, got {op.result.type}")
    _check_replicas(op, None)  # the target may be set later in the pipeline


def _verify_ring_all_reduce(op: ipu.RingAllReduceOp, scope: Scope) -> None:
    _check_replicas(op, scope)
    tensor_type = op.type
    for attribute in ("source", "dest"):  # each tile of the mapping reduces its own elements
        _check_stream(op, tensor_type, scope, attribute)
    ring, target = op.ring, scope.target
    if len(ring) != op.replicas or len(set(ring)) != len(ring) or not all(0 <= i < target.num_ipus for i in ring):
        raise op_error(op, f"expects 'ring' to list {op.replicas} distinct IPUs of target '{target.name}', one a replica, got {list(ring)}")
    home = target.ipu_of_tile(op.mapping.all_tiles().min_tile)
    if ring[0] != home:
        raise op_error(op, f"expects 'ring' to begin with IPU {home}, which holds the tensor (replica 0's), got {list(ring)}")


def _verify_predicate(op: ipu.PredicateOp, scope: Scope) -> None:
    buffer = scope.buffer(op, "buffer", op.buffer)
    tile = op.tile
    if not (0 <= tile < len(buffer.holders) and buffer.holders[tile]):
        raise op_error(op, f"reads tile {tile}, which holds no copy of @{op.buffer}")
    if isinstance(op.result.type, ir.IndexType):
        if not isinstance(buffer.element_type, ir.IntegerType) or str(buffer.element_type) == "i1":
            raise op_error(op, f"reads @{op.buffer} of element type {buffer.element_type}; a switch's index is an integer")
    elif str(buffer.element_type) != "i1":
        raise op_error(op, f"reads @{op.buffer} of element type {buffer.element_type}; a predicate is an i1")


def _check_not_variable(op: ir.OpView, scope: Scope) -> None:
    held = scope.variables_of(op.buffer)
    if held:
        raise op_error(
            op,
            f"streams into @{op.buffer}, the buffer of device variable '{held[0].variable_name}': "
            "the host writes variables by name between runs, no run streams them in",
        )


def _verify_variable(op: ipu.VariableOp, scope: Scope) -> None:
    parent = op.operation.parent
    if parent is None or parent.name != "builtin.module":
        raise op_error(op, "expects to be directly inside a builtin.module")
    type_ = op.type
    if not isinstance(type_, ir.RankedTensorType) or not ir.RankedTensorType(type_).has_static_shape:
        raise op_error(op, f"expects 'type' to be a statically shaped tensor, got {type_}")
    name = op.variable_name
    named = scope.variables_named(name)
    if len(named) > 1 and named[0] != op:
        raise op_error(op, f"redefines device variable '{name}' (names are unique)")
    held = scope.variables_of(op.buffer)
    if len(held) > 1 and held[0] != op:
        raise op_error(op, f"places device variable '{name}' in @{op.buffer}, which already holds '{held[0].variable_name}'")
    _check_stream(op, type_, scope)


def _offsets(op: ipu.CopyOp, role: str, grid: TileGrid, scope: Scope) -> TileGrid:
    """The first element each transfer reads or writes: affine in the transfer's grid index,
    like its tile, so a grid too (decoded once per distinct attribute and grid shape)."""
    key = (op.attributes[role], grid.sizes)
    if key not in scope.decoded:
        offset = getattr(op, role)
        if len(offset) != 1 + len(grid.sizes):
            raise op_error(
                op, f"expects '{role}' to have {1 + len(grid.sizes)} entries (a base and one stride per grid dimension), got {len(offset)}"
            )
        scope.decoded[key] = TileGrid(offset[0], grid.sizes, offset[1:])
    return scope.decoded[key]


def _verify_copy(op: ipu.CopyOp, scope: Scope) -> None:
    """A copy's grids have an entry per transfer, often millions: the checks work on the grids'
    ranges and strides, and list the transfers only to name the culprit of an error."""
    source, dest = scope.buffer(op, "source", op.source), scope.buffer(op, "dest", op.dest)
    if source.element_type != dest.element_type:
        raise op_error(
            op, f"expects @{op.source} and @{op.dest} of the same element type, got {source.element_type} and {dest.element_type}"
        )
    attributes = op.attributes
    if scope.target.num_ipus > 1:
        _check_link_form(op, scope)
    key = tuple(attributes[name] for name in _COPY_FORMS) + (source.tiles, source.capacity, dest.tiles, dest.capacity)
    if key in scope.passed:
        return
    size = op.size
    if size <= 0:
        raise op_error(op, f"expects a positive 'size', got {size}")
    src_grid, dst_grid = scope.grid(op, "src_tiles"), scope.grid(op, "dst_tiles")
    if src_grid.sizes != dst_grid.sizes:
        raise op_error(op, f"expects 'src_tiles' and 'dst_tiles' of the same sizes, got {list(src_grid.sizes)} and {list(dst_grid.sizes)}")
    scope.check_grid(op, "src_tiles", src_grid, distinct=False)
    scope.check_grid(op, "dst_tiles", dst_grid, distinct=False)
    capacity = dest.capacity
    if dst_grid.count * size > scope.target.num_tiles * capacity:  # before listing the transfers
        raise op_error(
            op,
            f"writes {dst_grid.count} x {size} elements, more than @{op.dest} could hold on all "
            f"{scope.target.num_tiles} tiles of {scope.target.name} ({capacity} per tile)",
        )
    _check_held(op, "sends from", src_grid, source, scope)
    _check_held(op, "sends to", dst_grid, dest, scope)
    src_offsets = _offsets(op, "src_offset", src_grid, scope)
    dst_offsets = _offsets(op, "dst_offset", dst_grid, scope)
    for verb, offsets, grid, buffer in (("reads", src_offsets, src_grid, source), ("writes", dst_offsets, dst_grid, dest)):
        capacity = buffer.capacity
        if offsets.min_tile >= 0 and offsets.max_tile + size <= capacity:
            continue
        starts = offsets.tiles()
        i = np.flatnonzero((starts < 0) | (starts + size > capacity))[0]
        what = "the exchange overflows" if verb == "writes" else "it reads beyond"
        raise op_error(
            op,
            f"{verb} elements [{starts[i]}, {starts[i] + size}) of @{buffer.sym_name} on tile {grid.tiles()[i]}, "
            f"which holds {capacity} per tile: {what} the tile's copy of it",
        )
    if not _nested(dst_grid, dst_offsets, size, capacity):
        _check_disjoint_writes(op, dst_grid.tiles(), dst_offsets.tiles(), size)
    scope.passed.add(key)


def _check_link_form(op: ipu.CopyOp, scope: Scope) -> None:
    """A copy between IPUs goes over the IPU-Links: only in an exchange phase after a global
    sync. Judged on the grids' tile ranges: a copy whose tiles all lie on one IPU is on-chip."""
    target = scope.target
    src_grid, dst_grid = scope.grid(op, "src_tiles"), scope.grid(op, "dst_tiles")
    ipus = {target.ipu_of_tile(t) for grid in (src_grid, dst_grid) for t in (grid.min_tile, grid.max_tile)}
    if len(ipus) > 1 and not scope.after_global_sync(op):
        src, dst = target.ipu_of_tile(src_grid.min_tile), target.ipu_of_tile(dst_grid.min_tile)
        raise op_error(
            op,
            f"copies from IPU {src} to IPU {dst} (tiles {src_grid.min_tile}.. to {dst_grid.min_tile}..) outside the link form: "
            f'an inter-IPU copy needs a "global" ipu.sync before its exchange phase',
        )


_COPY_FORMS = ("size", "src_tiles", "dst_tiles", "src_offset", "dst_offset")  # a copy's attributes its rule reads


def _nested(tiles: TileGrid, offsets: TileGrid, size: int, capacity: int) -> bool:
    """True when the transfers provably write disjoint elements, without listing them.

    With every write within its tile's copy (`0 <= offset`, `offset + size <= capacity`),
    transfer `i` writes the flat range `[a_i, a_i + size)` for `a_i = tile * capacity + offset`,
    affine in `i` with stride `tile_stride * capacity + offset_stride` per grid dimension. Taken
    by increasing |stride|, if each stride is at least the extent of the dimensions before it
    (`size + sum (n - 1) |stride|`), each dimension places copies of a block side by side, so no
    two ranges meet. False means the test cannot tell (interleaved strides): list them."""
    strides = sorted((abs(t * capacity + o), n) for n, t, o in zip(tiles.sizes, tiles.strides, offsets.strides) if n > 1)
    extent = size
    for stride, n in strides:
        if stride < extent:
            return False
        extent += (n - 1) * stride
    return True


def _check_disjoint_writes(op: ipu.CopyOp, tiles: np.ndarray, offsets: np.ndarray, size: int) -> None:
    order = np.lexsort((offsets, tiles))
    tiles, offsets = tiles[order], offsets[order]
    clash = np.nonzero((tiles[1:] == tiles[:-1]) & (offsets[1:] < offsets[:-1] + size))[0]
    if clash.size:
        i = clash[0] + 1
        raise op_error(op, f"writes elements [{offsets[i]}, {offsets[i] + size}) of @{op.dest} on tile {tiles[i]} twice")


def _verify_execute(op: ipu.ExecuteOp, scope: Scope) -> None:
    compute_set = scope.function(op, "compute_set", op.compute_set, ipu.COMPUTE_SET_ATTR)
    signature = ir.FunctionType(ir.TypeAttr(compute_set.attributes["function_type"]).value)
    if signature.inputs or signature.results:
        raise op_error(op, f"expects compute set @{op.compute_set} to take no arguments and return nothing, got {signature}")


def _verify_vertex_group(op: ipu.VertexGroupOp, scope: Scope) -> None:
    parent = op.operation.parent
    if parent is None or parent.name != "func.func" or ipu.COMPUTE_SET_ATTR not in parent.attributes:
        raise op_error(op, f"expects to be directly inside a func.func marked {ipu.COMPUTE_SET_ATTR}")
    inputs = [scope.buffer(op, "inputs", name) for name in op.inputs]
    outputs = [scope.buffer(op, "outputs", name) for name in op.outputs]
    grid = scope.grid(op, "tiles")
    scope.check_grid(op, "tiles", grid, distinct=True)
    scope.check_one_ipu(op, "tiles", grid)
    tiles = grid.tiles()  # distinct: one entry per tile
    for buffer in inputs + outputs:
        missing = tiles[~buffer.holders[tiles]]
        if missing.size:
            raise op_error(op, f"runs on tile {missing[0]}, which holds no copy of @{buffer.sym_name}")
    codelet = scope.function(op, "codelet", op.codelet, ipu.CODELET_ATTR)
    signature = ir.FunctionType(ir.TypeAttr(codelet.attributes["function_type"]).value)
    _check_edges(op, "argument", "inputs", list(signature.inputs), inputs)
    _check_edges(op, "result", "outputs", list(signature.results), outputs)
    compute_set = ir.StringAttr(parent.attributes["sym_name"]).value
    for buffer in outputs:
        key = (compute_set, buffer.sym_name)
        if key not in scope.writes:
            scope.writes[key] = (np.full(scope.target.num_tiles, -1, dtype=np.int64), [])
        writer_of, writers = scope.writes[key]
        earlier = writer_of[tiles]
        if (earlier >= 0).any():
            first = earlier[earlier >= 0].min()  # the first writer met, on its lowest tile shared
            writer = writers[first]
            what = "itself" if writer == op else f"another vertex group (at {writer.location})"
            raise op_error(
                op, f"writes @{buffer.sym_name} on tile {tiles[earlier == first].min()}, which {what} also writes in this compute set"
            )
        writer_of[tiles] = len(writers)
        writers.append(op)


def _check_edges(op: ipu.VertexGroupOp, what: str, edge: str, types: list[ir.Type], buffers: list[BufferFacts]) -> None:
    """A codelet argument (result) views the leading elements of its buffer, row-major: it has
    the buffer's element type and at most as many elements."""
    if len(types) != len(buffers):
        raise op_error(op, f"expects codelet @{op.codelet} to have {len(buffers)} {what}s, one per buffer in {edge}, got {len(types)}")
    for index, (type_, buffer) in enumerate(zip(types, buffers)):
        view = type_ if isinstance(type_, ir.RankedTensorType) else None
        if view is None or not view.has_static_shape or view.element_type != buffer.element_type:
            raise op_error(
                op,
                f"expects {what} #{index} of codelet @{op.codelet} to be a static tensor of {buffer.element_type} like "
                f"@{buffer.sym_name}, got {type_}",
            )
        if math.prod(view.shape) > buffer.capacity:
            raise op_error(
                op,
                f"expects {what} #{index} of codelet @{op.codelet} ({type_}) to fit in @{buffer.sym_name} ({buffer.type}): "
                f"it views the buffer's leading elements",
            )


PROGRAM_RULES: dict[str, Callable[[ir.OpView, Scope], None]] = {
    "ipu.buffer": _verify_buffer,
    "ipu.variable": _verify_variable,
    "ipu.host_to_device": _verify_host_to_device,
    "ipu.device_to_host": _verify_device_to_host,
    "ipu.predicate": _verify_predicate,
    "ipu.all_reduce": _verify_all_reduce,
    "ipu.ring_all_reduce": _verify_ring_all_reduce,
    "ipu.copy": _verify_copy,
    "ipu.execute": _verify_execute,
    "ipu.vertex_group": _verify_vertex_group,
}
