"""`ipu-plan` (L1 -> L2): give every tensor a tile mapping and every compute op a partition.

The pass's docstring (`ipu-opt --help-pass ipu-plan`) explains it, with a before/after example.
"""

from __future__ import annotations

import dataclasses
import functools
import heapq
import math
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import PARTITION_ATTR, TILES_ATTR
from ipu_mlir.dialects.ops import record_of, space_of, tile_cycles
from ipu_mlir.dialects.ops.generic import box_elements
from ipu_mlir.dialects.ops.matmul import Matmul
from ipu_mlir.dialects.ops.space import Space
from ipu_mlir.target import DEFAULT_TARGET, Target, cost_model, target_of
from ipu_mlir.target.diagnostics import op_error

from .control_flow import plan_branches
from .layout import Layout, Parts, balanced_block, least_loaded_replica
from .layout_algebra import (
    Partition,
    aligned_source,
    collapse_layout,
    expand_layout,
    halo_elements,
    operand_layout,
    read_accesses,
    reads,
    result_layout,
    shared_loop,
    slice_view,
)
from .pass_registry import ModulePass, register_pass
from .resident import argument_attributes, names_memoized, overwritten_variable, resident_names
from .select_entry import public_functions
from .serialize import split_oversized
from .tied_tables import in_place_partition, lay_out_tables

# The IPU an op runs on, on a multi-IPU target: PopTorch's `ipu_id` (ipu-shard sets it).
IPU_ID_ATTR = "ipu.ipu_id"

TENSOR_OPS = (
    "tensor.extract_slice",
    "tensor.insert_slice",
    "tensor.pad",
    "tensor.expand_shape",
    "tensor.collapse_shape",
    "tensor.concat",
)


@register_pass
@dataclass
class Plan(ModulePass):
    """Map every tensor and every compute op onto tiles (L1 -> L2).

    Matmuls and convolutions are planned like poplin does: every way of cutting their loops
    (batch, rows, columns, the summed dimension; for a convolution batch, output channels, output
    rows and columns, input channels) into parts over the target's tiles is costed with
    `target.cost_model` (compute on the slowest tile, as the op's record in `dialects/ops`
    prices it; exchange of the operand pieces each tile
    needs, and, when the summed dimension is cut, the exchange and sum of partial results),
    keeping each tile's working set within `memory-fraction` of its SRAM, and the cheapest wins
    (a device variable's new value written over its old one, as an optimizer's state update
    is, counts once: `resident.overwritten_variable`).
    A matmul or convolution that no cut fits is first split serially, as poplin does, into
    pieces computed one after another (lowering/serialize.py).
    Element-wise and other `linalg.generic` ops keep the layout of their largest operand when it
    fits their loops (no exchange) and their pieces fit the budget, else cut their result
    row-major with at least `grain` elements per tile. Reshapes keep their source's layout when
    it is a view of the result, else are cut along every dimension a view allows. A loop's
    body is planned once; a tensor it carries keeps its initial value's layout (an input first
    used by the loop is placed where the body reads it). Unit-stride slices only generics read
    are windows read in place from their source (a stencil's neighbours: one piece of the grid
    per part), and a source its reader places gets the parts' blocks (`aligned_source`).
    Whichever way a partition is found, its op's space must admit it (`Space.admits`: a loop
    the record keeps whole, a window's, stays whole; a summed loop is cut only with an
    associative combiner); a refused one gives way to the cost model's search.
    A compute op arriving with an `ipu.partition` of its own (no `ipu.tiles`) keeps those
    blocks: a pinned cut, refused if it cuts a loop its record's space keeps whole.

    Before:

        %c = "ipu.matmul"(%a, %b) : (tensor<512x512xf32>, tensor<512x512xf32>) -> tensor<512x512xf32>

    After (gc200):

        %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 32, 64, 128>,
                ipu.tiles = array<i64: 0, 16, 32, 8, 4, 4, 1>,
                ipu.mapping = {kind = "block", block = array<i64: 32, 16>, tiles = ...}} : ...

    `ipu.partition` holds the block size of each loop, `ipu.tiles` the tile grid of the parts
    (one grid dimension per loop). Function arguments get their mapping in `arg_attrs`.
    """

    name = "ipu-plan"

    target: str = field(default="", metadata={"help": f"target name or file (default: the module's ipu.target, else {DEFAULT_TARGET})"})
    memory_fraction: float = field(
        default=-1.0, metadata={"help": "share of tile memory a planned op may use (default: the target's, 0.6)", "above": 0, "maximum": 1}
    )
    grain: int = field(default=64, metadata={"help": "fewest elements per tile when cutting element-wise work", "minimum": 1})

    def run(self, module: ir.Operation) -> None:
        target = target_of(module, self.target or None)
        fraction = self.memory_fraction if self.memory_fraction > 0 else target.planner_memory_fraction
        budget = int(fraction * target.tile_memory_bytes)
        planner = _Planner(target.chip, budget, self.grain, target.num_ipus)
        with names_memoized():
            for function in public_functions(module):
                split_oversized(function, planner.fitting, budget)
                planner.plan_function(function)


class _Planner:
    """Plans on one chip (`target`, the system's chip), in its tile numbers. On a system of
    `num_ipus`, each op is planned on the IPU its `ipu.ipu_id` names (ipu-shard), or its
    enclosing op's, else the one before it: the attributes it writes are shifted by
    `offset`, that IPU's first tile (tiles are numbered globally, docs/contracts.md)."""

    def __init__(self, target: Target, budget: int, grain: int, num_ipus: int = 1):
        self.target, self.budget, self.grain, self.num_ipus = target, budget, grain, num_ipus
        self.layouts: dict[ir.Value, Layout] = {}
        self.cursor = 0
        self.cheapest_cuts: dict[tuple, tuple[int, tuple[int, ...]] | None] = {}
        self.offset = 0
        self.argument_offsets: dict[ir.Value, int] = {}
        self.tables: set[ir.Value] = set()  # tied embedding tables (lowering/tied_tables.py)
        # Bytes of weights (constants and device variables, resident for the whole program)
        # placed so far on each tile of the system: where the next one goes (`least_loaded_replica`).
        self.resident_load = np.zeros(num_ipus * target.num_tiles, dtype=np.int64)

    def enter(self, op: ir.OpView) -> None:
        """Plans what follows on the IPU `op` names, if it names one."""
        if IPU_ID_ATTR not in op.attributes:
            return
        attribute = op.attributes[IPU_ID_ATTR]
        ipu_id = ir.IntegerAttr(attribute).value if isinstance(attribute, ir.IntegerAttr) else -1
        if not 0 <= ipu_id < self.num_ipus:
            raise op_error(op, f"has '{IPU_ID_ATTR}' {attribute}, but the target has IPUs 0..{self.num_ipus - 1}")
        self.offset = ipu_id * self.target.num_tiles

    def shifted(self, layout: Layout, offset: int | None = None) -> Layout:
        offset = self.offset if offset is None else offset
        return dataclasses.replace(layout, first_tile=layout.first_tile + offset) if offset else layout

    def place(self, count: int) -> int:
        """First tile for something on `count` tiles: small pieces of work go round the tiles
        one after the other, so independent ones can share a superstep (ipu-merge-supersteps)
        and memory fills evenly."""
        if count >= self.target.num_tiles:
            return 0
        first = self.cursor if self.cursor + count <= self.target.num_tiles else 0
        self.cursor = first + count
        return first

    def plan_function(self, function: ir.OpView) -> None:
        block = function.regions[0].blocks[0]
        # Inputs and weights are placed by their first user: where a compute op reads them,
        # so that they arrive from the host where they are needed.
        self.unplaced = {arg: None for arg in block.arguments}
        self.variables = {block.arguments[k] for k in resident_names(function)[0]}  # resident for the whole program, like weights
        if self.num_ipus == 1:  # tied embeddings, laid out for their matmuls (lowering/tied_tables.py)
            layouts = lay_out_tables(block, self.variables, self.matmul_cut, self.within_budget, self.cut_cycles)
            self.tables = set(layouts)
            for table, layout in layouts.items():
                self.place_unplaced(table, layout)
        self.plan_block(block)
        for value in list(self.unplaced):
            self.place_unplaced(value, self.default_layout(_shape(value)))
        mappings = [
            argument_attributes(function, k, self.shifted(self.layouts[arg], self.argument_offsets.get(arg, 0)).mapping().encode())
            for k, arg in enumerate(block.arguments)
        ]
        function.attributes["arg_attrs"] = ir.ArrayAttr.get(mappings)

    def plan_block(self, block: ir.Block) -> None:
        for op in block.operations:
            name = op.operation.name
            self.enter(op)
            if name == "arith.constant" and isinstance(op.results[0].type, ir.RankedTensorType):
                self.unplaced[op.results[0]] = op
                continue
            # A window read in place (`slice_view`) and a loop's initial value are placed by the
            # compute op reading them (plan_compute, plan_loop).
            if (
                not record_of(op)
                and name not in ("scf.for", "scf.if")
                and (name != "tensor.extract_slice" or slice_view(op.results[0]) is None)
            ):
                for operand in op.operands:
                    if operand in self.unplaced:
                        self.place_unplaced(operand, self.default_layout(_shape(operand)))
            if record_of(op):
                self.plan_compute(op)
            elif name in ("tensor.expand_shape", "tensor.collapse_shape"):
                self.set_layout(op, self.reshape_layout(op))
            elif name in ("tensor.extract_slice", "tensor.insert_slice"):
                self.set_layout(op, self.slice_layout(op))
            elif name in TENSOR_OPS:
                self.set_layout(op, self.default_layout(_shape(op.results[0])))
            elif name == "ipu.all_reduce":  # each tile reduces its own elements: the operand's layout
                self.set_layout(op, self.layouts.get(op.operands[0]) or self.default_layout(_shape(op.results[0])))
            elif name == "scf.for":
                self.plan_loop(op)
            elif name in ("scf.if", "scf.while", "scf.index_switch"):
                plan_branches(self, op)  # lowering/control_flow.py
            elif name not in ("tensor.empty", "func.return", "scf.yield", "scf.condition") and not _is_scalar(op):
                raise op_error(op, "is not supported by ipu-plan (run ipu-convert-to-ipu first)")

    def plan_loop(self, op: ir.OpView) -> None:
        """The body is planned once (it runs as Poplar's Repeat). A carried value keeps its
        initial value's layout all through the loop: each iteration reads it where the previous
        one left it; ipu-schedule copies the yielded value there, an exchange only when the body
        laid it out otherwise (element-wise bodies keep their largest operand's layout: none)."""
        body = op.regions[0].blocks[0]
        carries = list(zip(op.operands[3:], body.arguments[1:], op.results))
        for index, (init, carried, result) in enumerate(carries):
            if init in self.unplaced:  # an input first used here: placed where the body reads it
                self.unplaced[carried] = None
            elif init not in self.layouts:
                raise op_error(op, f"carries a tensor.empty (iter_arg #{index}): a carried tensor needs an initial value (fill it)")
            else:
                self.layouts[carried] = self.layouts[result] = self.layouts[init]
        split_oversized(op, self.fitting, self.budget)  # the body's matmuls, like the function's
        self.plan_block(body)
        for init, carried, result in carries:
            if init in self.unplaced:
                if carried in self.unplaced:
                    self.place_unplaced(carried, self.default_layout(_shape(carried)))
                self.place_unplaced(init, self.layouts[carried])
                self.layouts[result] = self.layouts[carried]
            elif result not in self.layouts:  # the body read the initial value itself and placed it
                if carried in self.unplaced:
                    self.place_unplaced(carried, self.layouts[init])
                self.layouts[result] = self.layouts[init]  # ipu-schedule's carried buffer: in the init's layout

    def resident(self, value: ir.Value) -> bool:
        """Whether unplaced `value` is a weight: a constant or a device variable."""
        return self.unplaced.get(value) is not None or value in self.variables

    def crowded(self, value: ir.Value, block: Layout) -> bool:
        """Whether a weight (a constant or a device variable, resident for the whole program) would sit on few tiles
        in its first user's layout: more than 4x the elements per tile of a layout over every
        tile. Layers alike cut alike, so their weights would pile up on the same tiles (a full
        ResNet-50 put 1.3 MB on tile 0); spread, each layer's pieces are exchanged to it."""
        if not self.resident(value):
            return False
        spread = max(self.grain, -(-math.prod(block.shape) // self.target.num_tiles))
        return math.prod(block.buffer_shape) > 4 * spread

    def place_unplaced(self, value: ir.Value, layout: Layout) -> None:
        if self.resident(value):  # its bytes stay on these tiles for the whole program
            element_bytes = ipu.element_bytes(ir.RankedTensorType(value.type).element_type)
            self.resident_load[self.shifted(layout).grid().tiles()] += math.prod(layout.buffer_shape) * element_bytes
        owner = self.unplaced.pop(value)
        if owner is not None:
            self.set_layout(owner, layout)
        else:
            self.layouts[value] = layout
            self.argument_offsets[value] = self.offset  # on its first user's IPU

    def set_layout(self, op: ir.OpView, layout: Layout) -> None:
        self.layouts[op.results[0]] = layout
        op.attributes[ipu.MAPPING_ATTR] = self.shifted(layout).mapping().encode()

    def default_layout(self, shape: tuple[int, ...], groups: list[list[int]] | None = None, work: int | None = None) -> Layout:
        """Row-major cut into at most one block per tile, with at least `grain` elements of
        `work` (default: the elements of the tensor) per tile. With reshape `groups`, each group
        is cut so that a tile's box stays contiguous in it (`collapse_layout`): along its
        dimensions in order, one index at a time until one is cut into larger blocks (which
        divide it when indices of outer dimensions were cut), the rest whole."""
        if not shape:
            return Layout((), self.place(1), ())
        tiles = max(1, min(self.target.num_tiles, (work or math.prod(shape)) // self.grain))
        blocks = []
        for group in groups or [[d] for d in range(len(shape))]:
            outer, whole = 1, False
            for size in (shape[d] for d in group):
                block = size if whole else balanced_block(size, tiles)
                if outer > 1 and size % block:
                    block = min(b for b in range(block, size + 1) if size % b == 0)
                blocks.append(block)
                tiles = max(1, tiles // -(-size // block))
                outer, whole = outer * size, whole or block > 1
        counts = [-(-s // b) for s, b in zip(shape, blocks)]
        strides = [math.prod(counts[k + 1 :]) for k in range(len(shape))]
        return Layout.blocks(shape, tuple(blocks), self.place(math.prod(counts)), tuple(strides))

    def reshape_layout(self, op: ir.OpView) -> Layout:
        """The source's own layout seen through the reshape when it is one (the same buffers,
        nothing moves) and within the budget; else the expanded side cut along every dimension
        a contiguous box allows (`default_layout` with the groups)."""
        source, result = _shape(op.operands[0]), _shape(op.results[0])
        groups = [[ir.IntegerAttr(i).value for i in ir.ArrayAttr(g)] for g in ir.ArrayAttr(op.attributes["reassociation"])]
        expanding = op.operation.name == "tensor.expand_shape"
        view = (expand_layout if expanding else collapse_layout)(self.layouts[op.operands[0]], groups, result)
        if view is not None and view.is_block and self.tensor_fits(view, op.results[0]):
            return view
        layout = self.default_layout(result if expanding else source, groups)
        return layout if expanding else collapse_layout(layout, groups, result)

    def slice_layout(self, op: ir.OpView) -> Layout:
        """A slice keeps its source's blocks, placed so that each of its blocks starts on the
        tile holding its first element (an insert keeps its destination's layout): the copy
        is then on-tile but for the rows of an offset that is not a multiple of the block, and
        shifted slices of one grid (a stencil's neighbours), computed on in the layout of one
        of them, exchange only their halo. Else (strided, rank-reducing or dynamic, or on far
        fewer tiles than a fresh cut: over twice its elements per tile) a fresh row-major cut."""
        shape = _shape(op.results[0])
        fresh = self.default_layout(shape)
        source = self.layouts.get(op.operands[0 if op.operation.name == "tensor.extract_slice" else 1])
        if op.operation.name == "tensor.insert_slice":
            return source if source is not None and source.is_block else fresh
        offsets, sizes, strides = (tuple(ir.DenseI64ArrayAttr(op.attributes[f"static_{k}"])) for k in ("offsets", "sizes", "strides"))
        if source is None or not source.is_block or len(op.operands) > 1 or sizes != shape or any(s != 1 for s in strides):
            return fresh
        first, dims = source.first_tile, []
        for parts, offset, size in zip(source.dims, offsets, sizes):
            block = parts.intervals[0][1] - parts.intervals[0][0]
            first += offset // block * parts.stride
            dims.append(Parts.blocks(size, block, parts.stride))
        aligned = Layout(shape, first, tuple(dims))
        return aligned if math.prod(aligned.buffer_shape) <= 2 * math.prod(fresh.buffer_shape) else fresh

    def tensor_fits(self, layout: Layout, value: ir.Value) -> bool:
        """Whether one tile's block of `value` in `layout` is within the budget."""
        element_bytes = ipu.element_bytes(ir.RankedTensorType(value.type).element_type)
        return math.prod(layout.buffer_shape) * element_bytes <= self.budget

    def plan_compute(self, op: ir.OpView) -> None:
        space = space_of(op)
        partition = self.pinned_partition(op, space) or self.table_partition(op, space)
        if partition is None and (not space.reductions or space.combiner is None):
            partition = self.reuse_partition(space)
            if partition is not None and _memory(space, partition.blocks, self.target) > self.budget:
                partition = None  # an inherited layout too crowded for this op's pieces: cut afresh
        partition = partition or self.search(space)
        for read in reads(space):  # the source of windows read in place: in the parts' blocks
            if read.offsets is not None and read.value in self.unplaced:
                aligned = aligned_source(read, partition, space, self.target.num_tiles)
                layout, partition = aligned or (self.default_layout(_shape(read.value)), partition)
                self.place_unplaced(read.value, layout)
                for k in read.inputs:  # the windows' mappings, now that their source has one
                    self.set_layout(op.operands[k].owner, self.slice_layout(op.operands[k].owner))
        for value, accesses in zip(op.operands, space.operands):
            if value in self.unplaced:
                wanted = operand_layout(space, partition, accesses)
                if self.resident(value):  # one of the replicas its readers need, on the tiles holding fewest weights
                    block = self.shifted(least_loaded_replica(self.shifted(wanted), self.resident_load), -self.offset)
                else:
                    block = Layout(wanted.shape, wanted.first_tile, wanted.dims)
                self.place_unplaced(
                    value, block if block.is_block and not self.crowded(value, block) else self.default_layout(_shape(value))
                )
        for value in op.operands:  # the init of a generic
            if value in self.unplaced:
                self.place_unplaced(value, result_layout(space, partition))
        refusal = space.refusal(partition.blocks)
        if refusal is not None:  # every path above chose an admitted cut: a bug, not a bad input
            raise op_error(op, f"internal error in ipu-plan: its partition {list(partition.blocks)} {refusal}")
        placed = dataclasses.replace(partition, first=partition.first + self.offset)
        for key, value in placed.attr(space).encode().items():
            op.attributes[key] = value
        self.set_layout(op, result_layout(space, partition))

    def pinned_partition(self, op: ir.OpView, space: Space) -> Partition | None:
        """The blocks an op arrives with (`_pinned_blocks`), placed row-major."""
        blocks = _pinned_blocks(op, space)
        if blocks is None:
            return None
        partition = _row_major(space, blocks)
        count = partition.grid(space).count
        if count > self.target.num_tiles:
            raise op_error(op, f"has a pinned 'ipu.partition' {list(blocks)} of {count} parts, more than the {self.target.num_tiles} tiles")
        return dataclasses.replace(partition, first=self.place(count))

    def table_partition(self, op: ir.OpView, space: Space) -> Partition | None:
        """A matmul reading a tied embedding table: cut as the table is, if within the budget
        (`tied_tables.in_place_partition`)."""
        if not isinstance(record_of(op), Matmul):
            return None
        for index, value in enumerate(op.operands):
            if value in self.tables and value in self.layouts:
                partition = in_place_partition(space, index, self.layouts[value], self.within_budget)
                if partition is not None:
                    return partition
        return None

    def within_budget(self, space: Space, blocks: tuple[int, ...], resident: int) -> bool:
        """Whether the cut's pieces but operand `resident`'s (read where it lives, allocated
        by no op) are within the budget: the op's temporary memory, as Poplar's available
        memory proportion bounds it."""
        prices = _Prices(space, self.target)
        counts = tuple(-(-e // b) for e, b in zip(space.extents, blocks))
        return prices.memory(blocks, counts) - prices.piece(resident, blocks)[0] * prices.element_bytes <= self.budget

    def cut_cycles(self, space: Space, blocks: tuple[int, ...]) -> int:
        return _Prices(space, self.target).cycles(blocks, tuple(-(-e // b) for e, b in zip(space.extents, blocks)))

    def matmul_cut(self, space: Space) -> Partition | None:
        """The partition `search` would give `space`, on the chip's first tiles."""
        best = self.cheapest(space)
        return None if best is None else _row_major(space, best[1])

    def fitting(self, space: Space) -> tuple[int, tuple[int, ...]] | None:
        """`cheapest` for the serial splits: a pinned op is never split serially."""
        blocks = _pinned_blocks(space.op, space)
        return (0, blocks) if blocks is not None else self.cheapest(space)

    def reuse_partition(self, space: Space) -> Partition | None:
        """The partition of the largest operand whose dims index distinct loops: it needs no
        exchange, and element-wise chains stay where they are; if `space` admits it (an operand
        cut along a loop the op keeps whole is not reused)."""
        best = None
        for accesses, value in zip(space.operands, space.op.operands):
            layout = self.layouts.get(value)
            if layout is None or any(a.kind != "dim" for a in accesses):
                continue
            loops = [a.loop for a in accesses]
            if sorted(loops) != sorted(space.parallel) or len(set(loops)) != len(loops):
                continue
            blocks, strides = list(space.extents), [0] * len(space.extents)
            for a, parts in zip(accesses, layout.dims):
                blocks[a.loop] = parts.intervals[0][1] - parts.intervals[0][0]
                strides[a.loop] = parts.stride
            size = math.prod(_shape(value))
            if space.admits(tuple(blocks)) and (best is None or size > best[0]):
                best = (size, Partition(tuple(blocks), layout.first_tile, tuple(strides)))
        return best[1] if best else None

    def search(self, space: Space) -> Partition:
        if space.combiner is None or not space.reductions:  # cut the parallel loops only
            layout = self.default_layout(tuple(space.extents[d] for d in space.result), work=math.prod(space.extents))
            blocks = list(space.extents)
            for d, parts in zip(space.result, layout.dims):
                blocks[d] = parts.intervals[0][1] - parts.intervals[0][0]
            partition = _row_major(space, tuple(blocks), layout.first_tile)
            if space.admits(partition.blocks) and _memory(space, partition.blocks, self.target) <= self.budget:
                return partition
            # Row-major pieces too large (a transpose reads a column per row) or cutting a loop
            # the op keeps whole (a window's, a softmax's row): cut by the cost model.
        best = self.cheapest(space)
        if best is None:
            raise op_error(
                space.op,
                f"does not fit in {self.budget} bytes per tile however it is cut: {_leanest(space, self.target)} "
                "(see ipu-plan memory-fraction)",
            )
        partition = _row_major(space, best[1])
        return dataclasses.replace(partition, first=self.place(partition.grid(space).count))

    def cheapest(self, space: Space) -> tuple[int, tuple[int, ...]] | None:
        """`cheapest_blocks` within the budget, searched once per distinct loop nest (the layers
        of a deep model are alike)."""
        key = (space.op.operation.name, space.extents, space.reductions, space.splittable, read_accesses(space), space.result)
        key += (str(space.element_type), space.combiner, space.multiples, _body(space.op), overwritten_variable(space.op))
        if key not in self.cheapest_cuts:
            self.cheapest_cuts[key] = cheapest_blocks(space, self.target, self.budget)
        return self.cheapest_cuts[key]


def _pinned_blocks(op: ir.OpView, space: Space) -> tuple[int, ...] | None:
    """The blocks of a compute op arriving with an `ipu.partition` of its own (no `ipu.tiles`
    yet): a cut chosen outside the planner, as test/python/test_conformance.py pins each way a
    record's space may be cut. A pin cutting a loop the space keeps whole is refused at the op."""
    if PARTITION_ATTR not in op.attributes or TILES_ATTR in op.attributes:
        return None
    blocks = tuple(ir.DenseI64ArrayAttr(op.attributes[PARTITION_ATTR]))
    if len(blocks) != len(space.extents) or any(not 0 < b <= e for b, e in zip(blocks, space.extents)):
        raise op_error(op, f"has a pinned 'ipu.partition' {list(blocks)} that does not fit its loops {list(space.extents)}")
    refusal = space.refusal(blocks)
    if refusal is not None:
        raise op_error(op, f"has a pinned 'ipu.partition' {list(blocks)} that {refusal}")
    return blocks


def _row_major(space: Space, blocks: tuple[int, ...], first: int = 0) -> Partition:
    """Tile strides row-major over the loops: result loops first, the one a cut reduction's
    second stage splits further (`shared_loop`) last among them, summed loops innermost; so
    the partial results of one output block sit on consecutive tiles."""
    shared = shared_loop(space, blocks)
    result = [d for d in space.result if d != shared] + ([shared] if shared is not None else [])
    order = result + [d for d in range(len(space.extents)) if d not in space.result]
    counts = {d: -(-space.extents[d] // blocks[d]) for d in order}
    strides = [0] * len(blocks)
    step = 1
    for d in reversed(order):
        strides[d] = step if counts[d] > 1 else 0
        step *= counts[d]
    return Partition(blocks, first, tuple(strides))


# Grid cuts a search climbs from (`_refine`): more find lower minima, each costs a climb.
REFINE_STARTS = 8


@functools.cache
def _candidates(extent: int, tiles: int) -> tuple[int, ...]:
    """Part counts worth trying for a loop: powers of two, divisors of the tile count and of the
    extent, and the extent itself, each giving a distinct block size."""
    values = {1, min(extent, tiles)}
    values |= {2**i for i in range(tiles.bit_length()) if 2**i <= min(extent, tiles)}
    values |= {d for d in range(1, min(extent, tiles) + 1) if tiles % d == 0 or extent % d == 0}
    by_block = {}
    for p in sorted(values):
        by_block.setdefault(-(-extent // p), p)
    return tuple(sorted(by_block.values()))


def cheapest_blocks(space: Space, target: Target, budget: int) -> tuple[int, tuple[int, ...]] | None:
    """The estimated cycles and block sizes of the cheapest cut of `space` whose working set
    fits `budget` bytes per tile, None if none does."""
    # The climb from the grid's best alone stops in a local minimum (the estimate is a
    # staircase in each block): climb from the few best grid cuts and keep the lowest.
    prices = _Prices(space, target)
    return min((_refine(prices, budget, start) for start in _starts(prices, budget)), key=lambda fit: fit[0], default=None)


def _starts(prices: _Prices, budget: int) -> list[tuple[int, tuple[int, ...]]]:
    """The REFINE_STARTS cheapest cuts of the grid within `budget`, cheapest first, as (cycles,
    blocks). Ties go to the first cut found (the grid's order: fewer parts of the first loops),
    so a cut no cheaper than REFINE_STARTS earlier ones is none of them: its price is asked
    only below theirs (`_Prices.cycles`)."""
    space, target = prices.space, prices.target
    fits, lowest = [], []  # lowest: the REFINE_STARTS lowest cycles so far, negated (a max-heap)
    for counts in _products(_options(space, target), target.num_tiles):
        blocks = tuple(-(-e // p) for e, p in zip(space.extents, counts))
        if prices.memory(blocks, counts) > budget:
            continue
        cycles = prices.cycles(blocks, counts, -lowest[0] if len(lowest) == REFINE_STARTS else None)
        if cycles is not None:
            fits.append((cycles, blocks))
            (heapq.heappushpop if len(lowest) == REFINE_STARTS else heapq.heappush)(lowest, -cycles)
    return heapq.nsmallest(REFINE_STARTS, fits, key=lambda fit: fit[0])


def _options(space: Space, target: Target) -> list[tuple[int, ...]]:
    """The part counts `cheapest_blocks` tries for each loop: those whose blocks `space`
    admits (one part: the loop whole, always admitted)."""
    return [
        tuple(p for p in _candidates(e, target.num_tiles) if p == 1 or space.block_refusal(d, -(-e // p)) is None)
        for d, e in enumerate(space.extents)
    ]


def _leanest(space: Space, target: Target) -> str:
    """What a tile holds in the cut of `space` taking the fewest bytes per tile, for a refusal:
    its parts, its bytes and each stored tensor's piece (a transpose holds a piece of its input
    and one of its result)."""
    element_bytes = ipu.element_bytes(space.element_type)
    cuts = ((c, tuple(-(-e // p) for e, p in zip(space.extents, c))) for c in _products(_options(space, target), target.num_tiles))
    counts, blocks = min(cuts, key=lambda cut: (_memory(space, cut[1], target), -math.prod(cut[0])))
    pieces = [f"{box_elements(r.accesses, blocks) * element_bytes:,} of input {r.inputs[0]} {r.value.type}" for r in reads(space)]
    overwritten = overwritten_variable(space.op)
    if overwritten is None:
        pieces.append(f"{math.prod(blocks[d] for d in space.result) * element_bytes:,} of the result {space.op.results[0].type}")
    else:
        pieces.append(f"the result written over input {overwritten}")
    return (
        f"its leanest cut, into {math.prod(counts):,} parts, holds {_memory(space, blocks, target):,} bytes on a tile ({', '.join(pieces)})"
    )


def _refine(prices: _Prices, budget: int, start: tuple[int, tuple[int, ...]]) -> tuple[int, tuple[int, ...]]:
    """Hill-climbs from the grid's cheapest cut over every distinct block size of each loop
    (not only the grid's), moving one or two loops at a time by 1, 2 or 4 sizes: the
    vertex's cost is a staircase in its block (whole chunks of rows, input and output
    channels), and the grid's sizes (powers of two, divisors) often fall just past a step.
    Each move keeps the cut within the tiles and the budget and must lower the estimate."""
    space, target = prices.space, prices.target
    sizes = [
        tuple(b for b in _block_sizes(e, target.num_tiles, space.multiple(d)) if space.block_refusal(d, b) is None)
        for d, e in enumerate(space.extents)
    ]
    where = [s.index(b) if b in s else None for s, b in zip(sizes, start[1])]
    loops = [d for d, w in enumerate(where) if w is not None and len(sizes[d]) > 1]
    steps = (-4, -2, -1, 1, 2, 4)
    moves = [((d, step),) for d in loops for step in steps]
    moves += [((d, a), (e, b)) for i, d in enumerate(loops) for e in loops[i + 1 :] for a in steps for b in steps]
    best, index = start, list(where)
    while True:
        found = None
        for move in moves:
            trial = list(index)
            for d, step in move:
                trial[d] += step
            if any(not 0 <= trial[d] < len(sizes[d]) for d, _ in move):
                continue
            blocks = tuple(sizes[d][trial[d]] if d in loops else b for d, b in enumerate(best[1]))
            counts = tuple(-(-e // b) for e, b in zip(space.extents, blocks))
            if math.prod(counts) > target.num_tiles:
                continue
            if prices.memory(blocks, counts) > budget:
                continue
            cycles = prices.cycles(blocks, counts, below=(found or best)[0])
            if cycles is not None:
                found, chosen = (cycles, blocks), trial
        if found is None:
            return best
        best, index = found, chosen


@functools.cache
def _block_sizes(extent: int, tiles: int, multiple: int) -> tuple[int, ...]:
    """One block size per count of parts of a loop cut into at most `tiles` parts, largest
    first: the whole loop, which any multiple allows, then multiples of `multiple`. Of the
    sizes giving the same count, the one with the largest power-of-two factor: such blocks line
    up with their neighbours' (powers of two, divisors), so the copies between differently cut
    ops come in few large pieces (a 12-layer MLP on gc200 cut its 512 input channels in blocks
    of 47, where 48 gives as many: 3,132 copies instead of 514)."""
    blocks = {extent}
    for count in range(2, min(extent, tiles) + 1):
        low, high = -(-extent // count), -(-extent // (count - 1)) - 1  # the sizes giving `count` parts
        for power in range(high.bit_length(), -1, -1):
            step = math.lcm(multiple, 1 << power)
            if high // step * step >= low:
                blocks.add(high // step * step)
                break
    return tuple(sorted(blocks, reverse=True))


def _products(options: list[tuple[int, ...]], limit: int):
    def walk(index: int, product: int, chosen: tuple[int, ...]):
        if index == len(options):
            yield chosen
            return
        for p in options[index]:
            if product * p > limit:
                break
            yield from walk(index + 1, product * p, chosen + (p,))

    yield from walk(0, 1, ())


def _memory(space: Space, blocks: tuple[int, ...], target: Target) -> int:
    """The bytes one tile's pieces of `space` cut into `blocks` take (operands and result)."""
    return _Prices(space, target).memory(blocks, tuple(-(-e // b) for e, b in zip(space.extents, blocks)))


class _Prices:
    """The estimated cycles and bytes per tile of the cuts of one space, each cut priced once
    and each operand's piece once per block sizes of the loops indexing it: a search prices
    thousands of cuts (ResNet-50's 26 took 44,323 estimates, 37,533 distinct), its climb
    returns to the cuts it came from, and most cuts share most operands' pieces.

    A cut's cycles are the slowest tile's compute (its record's `tile_cycles`) plus the
    exchange of its operand pieces (`operand_exchange`), plus, when a summed loop is cut, the
    exchange and sum of the partial results; its bytes, the pieces and the partial share.
    A cut is its blocks and the parts of each loop it is priced for: the grid prices a loop
    at the part count it tries (`_candidates`), which can exceed the parts its blocks make
    (100 in blocks of 3 tried as 46 parts: 34), the climb at the parts its blocks make."""

    def __init__(self, space: Space, target: Target):
        self.space, self.target = space, target
        self.element_bytes = ipu.element_bytes(space.element_type)
        self.accesses = read_accesses(space)
        # a device variable's new value written over its old one: the input's piece holds it
        self.result_elements = overwritten_variable(space.op) is None
        # each stored operand's loops: its piece depends on their blocks alone
        self.loops = [tuple(a.loop for a in accesses if a.kind != "const" and a.loop is not None) for accesses in self.accesses]
        self.pieces: dict[tuple, tuple[int, int]] = {}  # (operand, its loops' blocks) -> (elements, halo elements)
        self.memories: dict[tuple[int, ...], tuple[int, int]] = {}  # blocks -> (bytes, partial share)
        self.computes: dict[tuple[int, ...], int] = {}
        self.totals: dict[tuple[int, ...], int] = {}

    def piece(self, index: int, blocks: tuple[int, ...]) -> tuple[int, int]:
        """The elements of operand `index`'s piece for the box `blocks`, and of its halo."""
        key = (index, tuple(blocks[d] for d in self.loops[index]))
        found = self.pieces.get(key)
        if found is None:
            accesses = self.accesses[index]
            found = self.pieces[key] = (box_elements(accesses, blocks), halo_elements(accesses, blocks))
        return found

    def memory(self, blocks: tuple[int, ...], counts: tuple[int, ...]) -> int:
        """The bytes of one tile's pieces (operands, result and a cut reduction's share)."""
        return self._memory(blocks, counts)[0]

    def _memory(self, blocks: tuple[int, ...], counts: tuple[int, ...]) -> tuple[int, int]:
        key = (blocks, counts)
        found = self.memories.get(key)
        if found is None:
            space = self.space
            elements = sum(self.piece(k, blocks)[0] for k in range(len(self.accesses)))
            elements += self.result_elements * math.prod(blocks[d] for d in space.result)
            share = self._share(blocks, counts)
            found = self.memories[key] = ((elements + share) * self.element_bytes, share)
        return found

    def _share(self, blocks: tuple[int, ...], counts: tuple[int, ...]) -> int:
        """The elements of partial results a tile combines when a summed loop is cut: a share
        of the box from each of the `reduced` partials, whole rows of the shared loop, cut into
        `reduced` times its parts over its extent (`result_layout`), so a share may hold more
        than 1/reduced of a box. None cut: 0."""
        space = self.space
        reduced = math.prod(counts[d] for d in space.reductions)
        shared = shared_loop(space, blocks)
        if reduced == 1 or shared is None:
            return 0
        rows = balanced_block(space.extents[shared], counts[shared] * reduced)
        return rows * (math.prod(blocks[d] for d in space.result) // blocks[shared]) * reduced

    def cycles(self, blocks: tuple[int, ...], counts: tuple[int, ...], below: int | None = None) -> int | None:
        """The cycles of the cut into `blocks`; None when they are `below` or more, which its
        compute alone may show (the exchange and the partial sums only add to it): a search
        asks whether a cut beats those it has, and most cuts need no exchange priced."""
        found = self.totals.get((blocks, counts))
        if found is None:
            space, target = self.space, self.target
            compute = self.computes.get(blocks)
            if compute is None:
                compute = self.computes[blocks] = tile_cycles(space, blocks, target)
            if below is not None and compute >= below:
                return None
            found = compute + self.operand_exchange(blocks, counts)
            share = self._memory(blocks, counts)[1]
            if share:
                found += cost_model.sync_cycles(target) + cost_model.exchange_cycles(share * self.element_bytes, target)
                found += cost_model.elementwise_cycles(share, 1, space.element_type, target)
            self.totals[blocks, counts] = found
        return None if below is not None and found >= below else found

    def operand_exchange(self, blocks: tuple[int, ...], counts: tuple[int, ...]) -> int:
        """Cycles of a tile receiving its operand pieces, as poplin's ExchangeEstimator prices
        them (target.cost_model): a piece is needed by the tiles of the loops its operand does
        not index, spread over them, so 1/holders of it is in place (`exchanged_bytes`); when
        the innermost loops of `_row_major`'s tile order are such loops, consecutive tiles
        receive it alike, over their super tiles' shared buses (`shares_exchange_bus`)."""
        space, target = self.space, self.target
        shared_result = shared_loop(space, blocks)
        order = [d for d in space.result if d != shared_result] + ([shared_result] if shared_result is not None else [])
        order += [d for d in range(len(space.extents)) if d not in space.result]
        inner_first = [d for d in reversed(order) if counts[d] > 1]  # `_row_major`'s strides, smallest first
        moved = shared = 0
        for index, loops in enumerate(self.loops):
            holders = math.prod(counts[d] for d in inner_first if d not in loops)
            outer = next((k for k, d in enumerate(inner_first) if d in loops), len(inner_first))
            consecutive = math.prod(counts[d] for d in inner_first[:outer])
            elements, halo = self.piece(index, blocks)  # the halo comes from the neighbours whatever the holders
            piece = cost_model.exchanged_bytes((elements - halo) * self.element_bytes, holders) + halo * self.element_bytes
            moved += piece
            shared += piece if cost_model.shares_exchange_bus(consecutive, holders, target) else 0
        return cost_model.exchange_cycles(moved, target, shared)


def _body(op: ir.OpView) -> tuple[str, ...]:
    """The ops of a compute op's body (a generic's), which its cost depends on."""
    return tuple(inner.operation.name for region in op.regions for block in region.blocks for inner in block.operations)


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.RankedTensorType(value.type).shape)


def _is_scalar(op: ir.OpView) -> bool:
    return all(not isinstance(r.type, ir.ShapedType) for r in op.results)
