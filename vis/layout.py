"""Positions for the graph's vertices: force-directed on the vertex groups, then expanded.

A compiled model has a few hundred vertex groups but up to millions of vertices, all of a group
doing the same thing on different tiles. So the force-directed layout (igraph's DrL, edges
weighted by how many vertex edges they stand for) places the groups; each group's vertices
then fill a disc around its place, in tile order (a sunflower spiral, area proportional to the
vertex count); a few smoothing steps on the vertex edges pull each vertex towards the vertices
it talks to, so the bundles between layers show. On ResNet-50 (138,664 vertices) this takes
seconds, where igraph's DrL on the vertex graph itself did not finish in 15 minutes
(docs/pictures.md has the measurements).

A program spanning several IPUs gets a region per IPU: a square cell of a grid (the IPUs it
uses in order, row by row: `ipu_cells`), its groups' places scaled into it; the smoothing pulls
a vertex only towards the vertices it talks to on its own IPU, so each IPU's vertices stay in
its cell.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import igraph
import numpy as np

from .graph import ComputeGraph

_GOLDEN_ANGLE = np.pi * (3 - np.sqrt(5))


def layout(graph: ComputeGraph, seed: int = 0, smoothing: int = 3, progress: Callable[[str], None] | None = None) -> np.ndarray:
    """(num_vertices, 2) positions in [0, 1]^2."""
    say = progress or (lambda line: None)
    sizes = np.bincount(graph.vertex_group, minlength=len(graph.groups)).astype(float)
    centres = group_layout(graph, sizes, seed)
    say(f"laid out {len(graph.groups):,} vertex groups")
    radii = 0.5 * np.sqrt(sizes / max(1.0, sizes.sum())) * _spread(centres)
    sources, targets = graph.sources, graph.targets
    if graph.ipus.size > 1:
        centres, radii = _in_cells(graph, sizes, centres)
        keep = ~graph.link
        sources, targets = sources[keep], targets[keep]
    positions = _sunflower(graph.vertex_group, sizes, centres, radii)
    anchor = positions.copy()
    degree = np.bincount(sources, minlength=graph.num_vertices) + np.bincount(targets, minlength=graph.num_vertices)
    linked = degree > 0
    for _ in range(smoothing):  # halfway towards the mean of the neighbours, tied to the disc
        total = np.zeros_like(positions)
        for axis in range(2):
            total[:, axis] = np.bincount(sources, positions[targets, axis], graph.num_vertices) + np.bincount(
                targets, positions[sources, axis], graph.num_vertices
            )
        mean = total[linked] / degree[linked, None]
        positions[linked] = 0.5 * anchor[linked] + 0.25 * positions[linked] + 0.25 * mean
    say(f"placed {graph.num_vertices:,} vertices")
    return _normalise(positions)


def group_layout(graph: ComputeGraph, sizes: np.ndarray, seed: int = 0) -> np.ndarray:
    """(groups, 2) centres: DrL on the group graph, edges weighted by the log of the vertex
    edges they stand for; consecutive groups of a layer are tied too, so that a layer (a
    convolution cut into several groups) stays one cluster."""
    sources, targets, counts = graph.group_edges()
    keep = sources != targets
    edges = list(zip(sources[keep].tolist(), targets[keep].tolist()))
    weights = np.log1p(counts[keep]).tolist()
    layer = graph.group_layer
    same = np.flatnonzero(layer[1:] == layer[:-1])
    edges += list(zip(same.tolist(), (same + 1).tolist()))
    weights += [float(np.log1p(sizes.max()))] * same.size
    group_graph = igraph.Graph(n=len(graph.groups), edges=edges)
    random.seed(seed)  # igraph draws DrL's moves from Python's generator: the same picture each run
    coords = group_graph.layout_drl(weights=weights or None)
    return np.array(coords.coords, float).reshape(-1, 2)


def ipu_cells(graph: ComputeGraph) -> dict[int, tuple[int, int]]:
    """Each IPU the program uses -> its (column, row) in a grid as square as the IPUs allow."""
    ipus = graph.ipus.tolist()
    columns = int(np.ceil(np.sqrt(len(ipus))))
    return {ipu: (index % columns, index // columns) for index, ipu in enumerate(ipus)}


# Of a cell's side of 1, the span of its groups' centres and the scale of their discs: a vertex
# is at most 0.2 + 0.2 from its cell's middle, so a fifth of a cell at least separates two regions.
_CELL_SCALE = 0.4


def _in_cells(graph: ComputeGraph, sizes: np.ndarray, centres: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The group centres of each IPU scaled into its cell (side 1), and the discs' radii as
    one IPU's picture would have them, scaled alike."""
    group_ipu = graph.group_ipu
    placed, radii = np.zeros_like(centres), np.zeros(len(sizes))
    for ipu, (column, row) in ipu_cells(graph).items():
        mine = group_ipu == ipu
        low, span = centres[mine].min(axis=0), _spread(centres[mine])
        offset = (centres[mine] - low - np.ptp(centres[mine], axis=0) / 2) / span
        placed[mine] = np.array([column, row]) + 0.5 + offset * _CELL_SCALE
        radii[mine] = 0.5 * np.sqrt(sizes[mine] / max(1.0, sizes[mine].sum())) * _CELL_SCALE
    return placed, radii


def _spread(centres: np.ndarray) -> float:
    if len(centres) < 2:
        return 1.0
    return float(np.ptp(centres, axis=0).max()) or 1.0


def _sunflower(vertex_group: np.ndarray, sizes: np.ndarray, centres: np.ndarray, radii: np.ndarray) -> np.ndarray:
    """Each vertex in its group's disc: the i-th of n at radius sqrt(i / n), turned by the golden angle."""
    starts = np.cumsum(sizes) - sizes
    order = np.argsort(vertex_group, kind="stable")
    rank = np.empty(vertex_group.size)
    rank[order] = np.arange(vertex_group.size) - starts[vertex_group[order]]
    n = np.maximum(sizes[vertex_group], 1)
    radius = radii[vertex_group] * np.sqrt((rank + 0.5) / n)
    angle = rank * _GOLDEN_ANGLE
    return centres[vertex_group] + np.column_stack([radius * np.cos(angle), radius * np.sin(angle)])


def _normalise(positions: np.ndarray) -> np.ndarray:
    if not positions.size:
        return positions
    low, extent = positions.min(axis=0), np.ptp(positions, axis=0)
    span = float(extent.max()) or 1.0
    return (positions - low + (span - extent) / 2) / span  # centred along the shorter side
