"""What every rule of the verifier (`verifier.py`) reads beyond its op: the target, the module's
symbols and the facts decoded once per buffer and grid (`Scope`), and the mapping check both
L2 and L3 rules make.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ipu_mlir.target import Target
from ipu_mlir.target.diagnostics import op_error

from . import ipu
from .attrs import MalformedAttribute, TileGrid, TileMapping
from .program import Program


class ReportedElsewhere(Exception):
    """An op refers to a buffer whose own error is already reported: skip the op's rule."""


@dataclass(frozen=True)
class BufferFacts:
    """A buffer as its users see it."""

    sym_name: str
    type: ir.MemRefType
    element_type: ir.Type
    capacity: int  # elements per tile
    tiles: TileGrid
    holders: np.ndarray  # per tile of the target: whether it holds a copy


@dataclass
class Scope:
    """What rules need beyond the op itself: the target and the module's symbols."""

    target: Target
    symbols: Program
    # (compute-set function name, buffer) -> (per tile: which writer writes it there, or -1;
    # the writers, vertex groups of the compute set, in order)
    writes: dict[tuple[str, str], tuple[np.ndarray, list[ir.OpView]]] = field(default_factory=dict)
    # buffer name -> its facts (None: its grid is malformed or bad): each buffer is named by
    # many ops, and its type and grid are decoded and checked once
    buffers: dict[str, BufferFacts | None] = field(default_factory=dict)
    grids: dict[TileGrid, np.ndarray] = field(default_factory=dict)
    # a grid attribute (an offset attribute with its grid's sizes) -> its decoding: copies
    # repeat their grids, and MLIR uniques attributes
    decoded: dict[ir.Attribute | tuple[ir.Attribute, tuple[int, ...]], TileGrid] = field(default_factory=dict)
    # what passed a check once passes it again: grids checked within the target, copies and
    # streams by what their rules read (a layer's copies recur in every layer of its shape: 304
    # distinct of BERT-base's 4,369)
    passed: set[tuple] = field(default_factory=set)
    # copy -> whether its exchange phase follows a global sync (multi-IPU targets)
    link_phase: dict[ir.Operation, bool] = field(default_factory=dict)
    # device variables by buffer and by name, listed once (`variables_of`, `variable_named`)
    _by_buffer: dict[str, list[ipu.VariableOp]] | None = None
    _by_name: dict[str, list[ipu.VariableOp]] | None = None

    def _list_variables(self) -> None:
        self._by_buffer, self._by_name = {}, {}
        for op in self.symbols.variables():
            self._by_name.setdefault(op.variable_name, []).append(op)
            try:
                self._by_buffer.setdefault(op.buffer, []).append(op)
            except MalformedAttribute:
                pass  # the variable's own rule reports it

    def variables_of(self, buffer: str) -> list[ipu.VariableOp]:
        """The device variables held in `buffer`."""
        if self._by_buffer is None:
            self._list_variables()
        return self._by_buffer.get(buffer, [])

    def variables_named(self, name: str) -> list[ipu.VariableOp]:
        if self._by_name is None:
            self._list_variables()
        return self._by_name.get(name, [])

    def buffer(self, op: ir.OpView, role: str, name: str) -> BufferFacts:
        if name in self.buffers:
            found = self.buffers[name]
        else:
            found = self.symbols.buffer(name)
            if found is None:
                raise op_error(op, f"'{role}' @{name} does not name an ipu.buffer")
            found = self.buffers[name] = self._facts(found)  # a malformed type is the user's error, each time
        if found is None:
            # The buffer's own rule reports it; its users would only list its bad grid again.
            raise ReportedElsewhere
        return found

    def _facts(self, buffer: ipu.BufferOp) -> BufferFacts | None:
        """What users of `buffer` check against; None when its tile grid is bad."""
        try:
            grid = buffer.tiles
        except MalformedAttribute:
            return None
        if grid.min_tile < 0 or grid.max_tile >= self.target.num_tiles or not self.distinct(grid):
            return None
        memref = buffer.type
        return BufferFacts(buffer.sym_name, memref, memref.element_type, math.prod(memref.shape), grid, self.reached(grid))

    def grid(self, op: ir.OpView, name: str) -> TileGrid:
        """The tile grid attribute `name` of `op`, decoded once per distinct attribute."""
        attr = op.attributes[name]
        if attr not in self.decoded:
            self.decoded[attr] = getattr(op, name)  # the op's accessor: its errors name the attribute
        return self.decoded[attr]

    def reached(self, grid: TileGrid) -> np.ndarray:
        """`_reached` of a grid within the target, once per grid: ops repeat their grids."""
        if grid not in self.grids:
            self.grids[grid] = _reached(grid, self.target.num_tiles)
        return self.grids[grid]

    def distinct(self, grid: TileGrid) -> bool:
        """Whether a grid within the target lists each tile once."""
        return grid.count <= self.target.num_tiles and np.count_nonzero(self.reached(grid)) == grid.count

    def check_one_ipu(self, op: ir.OpView, role: str, grid: TileGrid) -> None:
        """On a multi-IPU target, `grid` lies on one IPU: a vertex touches its own IPU's memory."""
        target = self.target
        if target.num_ipus > 1 and target.ipu_of_tile(grid.min_tile) != target.ipu_of_tile(grid.max_tile):
            first, last = target.ipu_of_tile(grid.min_tile), target.ipu_of_tile(grid.max_tile)
            raise op_error(
                op,
                f"'{role}' spans IPUs {first}..{last} (tiles {grid.min_tile}..{grid.max_tile}, {target.tiles_per_ipu} per IPU "
                f"on {target.name}): a vertex touches only its own IPU's memory",
            )

    def after_global_sync(self, op: ir.OpView) -> bool:
        """Whether the nearest `ipu.sync` before `op` in its block syncs every IPU (the link
        form of an exchange phase): a global one, or the host's. Each block is walked once."""
        key = op.operation
        if key not in self.link_phase:
            kind = None
            for other in op.operation.block.operations:
                if other.operation.name == "ipu.sync":
                    kind = ir.StringAttr(other.attributes["kind"]).value
                elif other.operation.name == "ipu.copy":
                    self.link_phase[other.operation] = kind in _ALL_IPUS
        return self.link_phase[key]

    def function(self, op: ir.OpView, role: str, name: str, marker: str) -> ir.OpView:
        found = self.symbols.function(name, marker)
        if found is None:
            raise op_error(op, f"'{role}' @{name} does not name a func.func marked {marker}")
        return found

    def check_grid(self, op: ir.OpView, role: str, grid: TileGrid, distinct: bool) -> None:
        if (grid, distinct) in self.passed:
            return
        try:
            grid.check_within(self.target.num_tiles)
        except MalformedAttribute as error:
            raise op_error(op, f"'{role}': {error} ({self.target.name})") from None
        if distinct and not self.distinct(grid):
            raise op_error(op, f"'{role}': expected distinct tiles, but the grid {list(grid.encode())} repeats tiles")
        self.passed.add((grid, distinct))


def _reached(grid: TileGrid, num_tiles: int) -> np.ndarray:
    """Which tiles `grid` reaches, as a mask over the target's tiles, without listing its
    repeats: a copy's grid has an entry per transfer (millions), but every partial sum lies
    within the grid's tile range, so each step below marks at most `num_tiles` tiles. The grid
    must lie within the target."""
    mask = np.zeros(num_tiles, dtype=bool)
    mask[grid.first] = True
    for size, stride in zip(grid.sizes, grid.strides):
        if size > 1 and stride:
            mask[(np.flatnonzero(mask)[:, None] + np.arange(size, dtype=np.int64) * stride).reshape(-1)] = True
    return mask


# Syncs of every tile of every IPU: after one, an exchange phase may cross the IPU-Links.
_ALL_IPUS = ("global", "external")


def check_mapping(op: ir.OpView, what: str, mapping: TileMapping, shape, scope: Scope) -> None:
    try:
        mapping.check_shape(tuple(shape))
        mapping.all_tiles().check_within(scope.target.num_tiles)
    except MalformedAttribute as error:
        raise op_error(op, f"{what}: {error}") from None
