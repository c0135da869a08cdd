"""The compiled graph as Poplar counts and Graphcore drew it: a vertex per codelet instance on
a tile, an edge for the data one vertex hands another.

    graph = ComputeGraph.of(program)        # an L3 module (ipu.program)
    graph.num_vertices, graph.num_edges     # Poplar's counts: vertex per instance, edge per connection
    graph.sources, graph.targets            # the drawn edges, vertex to vertex
    graph.layers[graph.group_layer[graph.vertex_group]]   # each vertex's layer
    graph.vertex_ipu, graph.link            # on a multi-IPU target: each vertex's IPU; edges over IPU-Links

Counts follow Poplar's profile: a vertex group on a grid of N tiles is N vertices, and each
vertex has one edge per buffer (tensor region) it connects to, input or output; they equal the
simulator's `Profile.vertices` and `.edges`.

The drawn edges follow the data: a vertex writing buffer B on tile t feeds each later vertex
reading B on tile t (sharing on the tile) and, through `ipu.copy`s moving B's bytes to other
tiles' buffers, the vertices reading those there (exchange). The program is walked once in
order; each buffer keeps the vertices last writing it per tile, capped at `_FAN_IN` per tile so
that broadcasts of a buffer to every tile cost edges linear in the tiles, not their square.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.dialects.program import Program
from ipu_mlir.runtime.program_summary import ATEN_PREFIXES, PHASE_PREFIX, location_names, location_phase
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import IpuError

# Producers kept per (buffer, tile): a sum over many partials keeps a sample of them.
_FAN_IN = 4


class _Producers:
    """The vertices whose data a buffer holds: per tile, the newest `_FAN_IN` (-1: none)."""

    def __init__(self, num_tiles: int):
        self.table = np.full((num_tiles, _FAN_IN), -1, np.int64)

    def add(self, tiles: np.ndarray, vertices: np.ndarray) -> None:
        """Vertices (one per entry of `tiles`, newest last) now hold data on those tiles."""
        order = np.argsort(tiles, kind="stable")
        tiles, vertices = tiles[order], vertices[order]
        unique, first, counts = np.unique(tiles, return_index=True, return_counts=True)
        rank = np.arange(tiles.size) - np.repeat(first, counts)  # arrival order within a tile
        position = np.repeat(counts, counts) - 1 - rank  # newest first
        fresh = np.full((unique.size, _FAN_IN), -1, np.int64)
        keep = position < _FAN_IN
        fresh[np.repeat(np.arange(unique.size), counts)[keep], position[keep]] = vertices[keep]
        old, new, rows = self.table[unique], np.minimum(counts, _FAN_IN), np.arange(unique.size)
        for slot in range(_FAN_IN):  # the new ones, then as many old ones as still fit
            self.table[unique, slot] = np.where(slot < new, fresh[:, slot], old[rows, np.maximum(slot - new, 0)])

    def on(self, tiles: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(index into `tiles`, producer vertex) for every producer on each of `tiles`."""
        rows = self.table[tiles]
        index, slot = np.nonzero(rows >= 0)
        return index, rows[index, slot]


PHASES = ("forward", "backward", "update")  # a training step's, in order (frontends/joint.py)


@dataclass
class ComputeGraph:
    """Vertices (per vertex group: a range of ids, one per tile of its grid) and drawn edges."""

    target: str
    num_tiles: int
    groups: list[str]  # "compute_set/codelet" per vertex group
    group_layer: np.ndarray  # index into `layers` per vertex group
    layers: list[str]  # the layer names (or ops) the locations carry, in program order
    group_phase: list[str]  # per vertex group: forward, backward, update in a training step, else ""
    vertex_group: np.ndarray  # per vertex
    vertex_tile: np.ndarray  # per vertex
    num_edges: int  # Poplar's count: a connection per vertex and buffer
    sources: np.ndarray  # drawn edges
    targets: np.ndarray
    exchange: np.ndarray  # per drawn edge: whether it crosses tiles
    tiles_per_ipu: int  # the target's (global tile numbering: tile t is on IPU t // tiles_per_ipu)

    @property
    def num_vertices(self) -> int:
        return int(self.vertex_group.size)

    @property
    def vertex_ipu(self) -> np.ndarray:
        return self.vertex_tile // self.tiles_per_ipu

    @property
    def group_ipu(self) -> np.ndarray:
        """The IPU of each vertex group (that of its first tile: `ipu-shard` places a group on one IPU)."""
        ipus = np.zeros(len(self.groups), np.int64)
        ipus[self.vertex_group[::-1]] = self.vertex_ipu[::-1]  # the first vertex's, written last
        return ipus

    @property
    def ipus(self) -> np.ndarray:
        """The IPUs some vertex is on, ascending."""
        return np.unique(self.vertex_ipu)

    @property
    def link(self) -> np.ndarray:
        """Per drawn edge: whether it crosses IPUs (an IPU-Link copy, not on-chip exchange)."""
        ipu = self.vertex_ipu
        return ipu[self.sources] != ipu[self.targets]

    @staticmethod
    def of(module: ir.Module | ir.Operation, entry: str | None = None, layer_depth: int | None = None) -> ComputeGraph:
        """The graph of the L3 program `entry` (default: the only `ipu.program`) in `module`.
        `layer_depth` cuts module paths to that many parts ("layer1.0.conv1" at 2: "layer1.0")."""
        return _Builder(module.operation, entry, layer_depth).build()

    def phase_vertices(self) -> dict[str, int]:
        """Vertices per training phase (forward, backward, update), in that order; empty for a
        program that is not a training step."""
        counts = np.bincount(self.vertex_group, minlength=len(self.groups))
        totals: dict[str, int] = {}
        for phase in PHASES:
            total = sum(int(counts[g]) for g, p in enumerate(self.group_phase) if p == phase)
            if total:
                totals[phase] = total
        return totals

    def group_edges(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The drawn edges between vertex groups: (source group, target group, edge count)."""
        pairs = self.vertex_group[self.sources] * len(self.groups) + self.vertex_group[self.targets]
        unique, counts = np.unique(pairs, return_counts=True)
        return unique // len(self.groups), unique % len(self.groups), counts


class _Builder:
    def __init__(self, module: ir.Operation, entry: str | None, layer_depth: int | None):
        self.program = Program(module)
        programs = self.program.functions(ipu.PROGRAM_ATTR)
        names = [ir.StringAttr(f.attributes["sym_name"]).value for f in programs]
        if entry is None and len(programs) != 1:
            raise IpuError(f"expected one ipu.program function, found {len(programs)}: name one with --entry", module.location)
        if entry is not None and entry not in names:
            raise IpuError(f"no ipu.program function '{entry}' (found: {', '.join(names) or 'none'})", module.location)
        self.function = programs[0] if entry is None else programs[names.index(entry)]
        target = target_of(module)
        self.target, self.num_tiles, self.tiles_per_ipu = target.name, target.num_tiles, target.tiles_per_ipu
        self.layer_depth = layer_depth
        self.groups: list[str] = []
        self.group_layer: list[int] = []
        self.group_phase: list[str] = []
        self.layers: dict[str, int] = {}
        self.vertex_group: list[np.ndarray] = []
        self.vertex_tile: list[np.ndarray] = []
        self.num_vertices = self.num_edges = 0
        self.first_vertex: dict[str, list[int]] = {}  # compute set -> first vertex id of each group
        self.producers: dict[str, _Producers] = {}
        self.edges: list[tuple[np.ndarray, np.ndarray]] = []

    def build(self) -> ComputeGraph:
        self._block(self.function.regions[0].blocks[0])
        vertex_tile = np.concatenate(self.vertex_tile) if self.vertex_tile else np.zeros(0, np.int64)
        sources = np.concatenate([s for s, _ in self.edges]) if self.edges else np.zeros(0, np.int64)
        targets = np.concatenate([t for _, t in self.edges]) if self.edges else np.zeros(0, np.int64)
        pairs = np.unique(sources * max(1, self.num_vertices) + targets)
        sources, targets = pairs // max(1, self.num_vertices), pairs % max(1, self.num_vertices)
        return ComputeGraph(
            target=self.target,
            num_tiles=self.num_tiles,
            groups=self.groups,
            group_layer=np.array(self.group_layer, np.int64),
            layers=list(self.layers),
            group_phase=self.group_phase,
            vertex_group=np.concatenate(self.vertex_group) if self.vertex_group else np.zeros(0, np.int64),
            vertex_tile=vertex_tile,
            num_edges=self.num_edges,
            sources=sources,
            targets=targets,
            exchange=vertex_tile[sources] != vertex_tile[targets] if sources.size else np.zeros(0, bool),
            tiles_per_ipu=self.tiles_per_ipu,
        )

    def _block(self, block: ir.Block) -> None:
        for op in block.operations:
            name = op.operation.name
            if name == "ipu.copy":
                self._copy(op)
            elif name == "ipu.execute":
                self._execute(op.compute_set)
            for region in op.operation.regions:  # loops: their bodies, once
                for inner in region.blocks:
                    self._block(inner)

    def _copy(self, op: ipu.CopyOp) -> None:
        source = self.producers.get(op.source)
        if source is None:
            return  # host data: no vertex made it
        # grid axes along which neither tile moves repeat one pair of tiles (slices of one message): once
        src, dst = op.src_tiles, op.dst_tiles
        moving = [axis for axis, strides in enumerate(zip(src.strides, dst.strides)) if strides != (0, 0)]
        senders, receivers = (TileGrid(g.first, tuple(g.sizes[a] for a in moving), tuple(g.strides[a] for a in moving)) for g in (src, dst))
        index, vertices = source.on(senders.tiles())
        if index.size:
            self._producers(op.dest).add(receivers.tiles()[index], vertices)

    def _execute(self, compute_set: str) -> None:
        """A compute set's vertices (made at its first run: Poplar counts a compute set's
        vertices once, however often it runs), fed by the current producers of their inputs."""
        groups = self.program.groups(compute_set)
        if compute_set not in self.first_vertex:
            self.first_vertex[compute_set] = [self._add_group(group, compute_set) for group in groups]
        ranges = [(group.tiles.tiles(), first) for group, first in zip(groups, self.first_vertex[compute_set])]
        for group, (tiles, first) in zip(groups, ranges):
            for buffer in group.inputs:
                producers = self.producers.get(buffer)
                if producers is not None:
                    index, sources = producers.on(tiles)
                    self.edges.append((sources, first + index))
        # outputs after all inputs: the groups of one compute set run in parallel
        for group, (tiles, first) in zip(groups, ranges):
            for buffer in group.outputs:
                self._producers(buffer).add(tiles, np.arange(first, first + tiles.size))

    def _producers(self, buffer: str) -> _Producers:
        if buffer not in self.producers:
            self.producers[buffer] = _Producers(self.num_tiles)
        return self.producers[buffer]

    def _add_group(self, group: ipu.VertexGroupOp, compute_set: str) -> int:
        """New vertices for `group`, one per tile of its grid; the first one's id."""
        tiles, first = group.tiles.tiles(), self.num_vertices
        self.vertex_group.append(np.full(tiles.size, len(self.groups), np.int64))
        self.vertex_tile.append(tiles)
        self.groups.append(f"{compute_set}/{group.codelet}")
        self.group_layer.append(self.layers.setdefault(self._layer(group, compute_set), len(self.layers)))
        self.group_phase.append(location_phase(group.operation.location))
        self.num_vertices += tiles.size
        self.num_edges += group.num_edges
        return first

    def _layer(self, group: ipu.VertexGroupOp, compute_set: str) -> str:
        """The layer (module path) the location names, else its ATen op, else the compute set's stem."""
        names = location_names(group.operation.location)
        names = [n for n in names if not n.startswith(PHASE_PREFIX)]
        layer = next((n for n in names if not n.startswith(ATEN_PREFIXES)), "")
        if layer and self.layer_depth:
            layer = ".".join(layer.split(".")[: self.layer_depth])
        return layer or next(iter(names), "") or re.sub(r"_cs\d+", "", compute_set)
