"""Drawing the laid-out graph: a glowing PNG of any size, or an SVG for small programs.

The PNG is rasterised here with numpy, not by a plotting library: each edge is sampled along
its length into pixels and the samples are added up per colour channel (additive blending, as
light adds), tone-mapped by the log of the count, blurred for the glow, with the vertices on
top and the labels drawn by Pillow. On ResNet-50's 382,750 drawn edges this takes seconds,
where matplotlib's LineCollection takes much longer and datashader needs numba and pandas
(docs/pictures.md has the measurements).
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from .graph import ComputeGraph

BACKGROUND = (8, 10, 20)
SVG_MAX_VERTICES = 20_000  # beyond this an SVG is too heavy for a browser: draw a PNG
_EDGE_CHUNK = 100_000


def layer_colours(count: int) -> np.ndarray:
    """(count, 3) RGB in [0, 1]: program order along the turbo colour map (input blue, output red)."""
    if count == 0:
        return np.zeros((0, 3))
    return matplotlib.colormaps["turbo"](np.linspace(0.08, 0.95, count))[:, :3]


# A training step's phases: forward cool, backward warm, update green (its ops are few and small).
PHASE_COLOURS = {"forward": (0.25, 0.55, 1.0), "backward": (1.0, 0.45, 0.15), "update": (0.35, 0.95, 0.35), "": (0.6, 0.6, 0.6)}


def vertex_colours(graph: ComputeGraph) -> np.ndarray:
    """(vertices, 3) RGB: by phase in a training step, else by layer in program order."""
    if graph.phase_vertices():
        return np.array([PHASE_COLOURS[phase] for phase in graph.group_phase])[graph.vertex_group]
    return layer_colours(len(graph.layers))[graph.group_layer[graph.vertex_group]]


# Edges crossing IPUs (copies over the IPU-Links): a colour the turbo map of the layers never takes.
LINK_COLOUR = (1.0, 0.25, 0.85)
REGION_COLOUR = (150, 156, 180)


def edge_colours(graph: ComputeGraph, colours: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(edges, 3) RGB at each drawn edge's source and target: its vertices' colours, or the
    IPU-Link colour for an edge crossing IPUs."""
    start, end = colours[graph.sources], colours[graph.targets]
    link = graph.link
    start[link] = end[link] = LINK_COLOUR
    return start, end


def ipu_regions(graph: ComputeGraph, pixels: np.ndarray, pad: float) -> list[tuple[int, float, float, float, float]]:
    """(IPU, left, top, right, bottom) around each IPU's vertices, on a program spanning IPUs."""
    if graph.ipus.size < 2:
        return []
    vertex_ipu = graph.vertex_ipu
    regions = []
    for ipu in graph.ipus.tolist():
        where = pixels[vertex_ipu == ipu]
        (left, top), (right, bottom) = where.min(axis=0) - pad, where.max(axis=0) + pad
        regions.append((ipu, float(left), float(top), float(right), float(bottom)))
    return regions


def caption(graph: ComputeGraph, title: str) -> str:
    text = f"{title}  ·  {graph.num_vertices:,} vertices  ·  {graph.num_edges:,} edges  ·  target {graph.target}"
    if graph.ipus.size > 1:
        text += f"\n{graph.ipus.size} IPUs  ·  {int(graph.link.sum()):,} drawn edges over the IPU-Links (magenta)"
    phases = graph.phase_vertices()
    if phases:
        text += "\n" + "  ·  ".join(f"{phase} {count:,}" for phase, count in phases.items())
    return text


def render_png(
    graph: ComputeGraph, positions: np.ndarray, path: str, title: str, size: int = 2000, progress: Callable[[str], None] | None = None
) -> None:
    say = progress or (lambda line: None)
    margin = size // 20
    top = 2 * margin if graph.ipus.size > 1 else margin  # room for the caption's line of IPUs above the regions
    pixels = np.rint([margin, top] + positions * [size - 2 * margin - 1, size - top - margin - 1]).astype(np.int64)
    colours = vertex_colours(graph)
    starts, ends = edge_colours(graph, colours)
    light, count = np.zeros((3, size * size)), np.zeros(size * size)
    for start in range(0, graph.sources.size, _EDGE_CHUNK):
        chunk = slice(start, start + _EDGE_CHUNK)
        _add_edges(pixels, graph.sources[chunk], graph.targets[chunk], starts[chunk], ends[chunk], size, light, count)
        say(f"drew {min(start + _EDGE_CHUNK, graph.sources.size):,} of {graph.sources.size:,} edges")
    image = _tone_map(light, count, size)
    glow = _blur(image, max(2, size // 250))
    image = 1 - (1 - image) * (1 - 0.8 * glow)  # screen blend: the glow brightens, never darkens
    _add_vertices(image, pixels, colours, size)
    picture = Image.fromarray(np.clip(np.asarray(BACKGROUND) / 255 + image, 0, 1).__mul__(255).astype(np.uint8), "RGB")
    _label(picture, graph, pixels, title, size)
    picture.save(path)


def _add_edges(pixels, sources, targets, start_colours, end_colours, size, light, count) -> None:
    a, b = pixels[sources], pixels[targets]
    steps = np.clip(np.abs(b - a).max(axis=1), 1, 4 * size).astype(np.int64)
    edge = np.repeat(np.arange(sources.size), steps)
    t = (np.arange(edge.size) - np.repeat(np.cumsum(steps) - steps, steps)) / steps[edge]
    points = a[edge] + (b[edge] - a[edge]) * t[:, None]
    index = np.rint(points[:, 1]).astype(np.int64) * size + np.rint(points[:, 0]).astype(np.int64)
    # an edge is drawn in the colour of its source, fading towards the colour of its target
    colour = start_colours[edge] * (1 - t[:, None]) + end_colours[edge] * t[:, None]
    for channel in range(3):
        light[channel] += np.bincount(index, colour[:, channel], size * size)
    count += np.bincount(index, minlength=size * size)


def _tone_map(light: np.ndarray, count: np.ndarray, size: int) -> np.ndarray:
    """(size, size, 3): the mean colour of the samples on a pixel, as bright as the log of their number."""
    scale = np.log1p(np.percentile(count[count > 0], 99.5)) if (count > 0).any() else 1.0
    brightness = np.clip(np.log1p(count) / scale, 0, 1) * 0.85
    mean = light / np.maximum(count, 1)
    return (mean * brightness).T.reshape(size, size, 3)


def _blur(image: np.ndarray, radius: int) -> np.ndarray:
    """Three box blurs (close to a Gaussian), along both axes, by running sums."""
    out = image
    for _ in range(3):
        for axis in (0, 1):
            padded = np.pad(out, [(radius + 1, radius) if a == axis else (0, 0) for a in range(3)], mode="constant")
            sums = np.cumsum(padded, axis=axis)
            upper = np.take(sums, np.arange(2 * radius + 1, sums.shape[axis]), axis=axis)
            lower = np.take(sums, np.arange(0, sums.shape[axis] - 2 * radius - 1), axis=axis)
            out = (upper - lower) / (2 * radius + 1)
    return np.clip(out * 2.5, 0, 1)


def _add_vertices(image: np.ndarray, pixels: np.ndarray, colours: np.ndarray, size: int) -> None:
    """Each vertex a dot of its layer's colour, brightened where many share a pixel."""
    index = pixels[:, 1] * size + pixels[:, 0]
    count = np.bincount(index, minlength=size * size)
    flat = image.reshape(-1, 3)
    for channel in range(3):
        mean = np.bincount(index, colours[:, channel], size * size) / np.maximum(count, 1)
        lit = count > 0
        flat[lit, channel] = np.clip(mean[lit] * (0.75 + 0.25 * np.log1p(count[lit]) / np.log1p(count.max())) + 0.1, 0, 1)


def _font(size: int) -> ImageFont.ImageFont:
    return ImageFont.load_default(size=size)


def _label(picture: Image.Image, graph: ComputeGraph, pixels: np.ndarray, title: str, size: int) -> None:
    """Each layer's name at its vertices' median (the busiest layers first, none overlapping),
    the title, counts and target in the top-left corner."""
    draw = ImageDraw.Draw(picture)
    font, small = _font(max(12, size // 55)), _font(max(10, size // 85))
    vertex_layer = graph.group_layer[graph.vertex_group]
    colours = np.zeros((len(graph.layers), 3))
    colours[vertex_layer] = vertex_colours(graph)  # a layer's label in (one of) its vertices' colour
    taken: list[tuple[float, float, float, float]] = []
    for ipu, left, top, right, bottom in ipu_regions(graph, pixels, size / 80):
        draw.rectangle((left, top, right, bottom), outline=REGION_COLOUR, width=max(1, size // 800))
        box = draw.textbbox((left + 6, top + 4), f"IPU {ipu}", font=font)
        draw.text((left + 6, top + 4), f"IPU {ipu}", fill=REGION_COLOUR, font=font)
        taken.append(box)
    for layer in np.argsort(-np.bincount(vertex_layer, minlength=len(graph.layers))):
        where = pixels[vertex_layer == layer]
        if not where.size:
            continue
        x, y = np.median(where, axis=0)
        box = draw.textbbox((x, y), graph.layers[layer], font=small, anchor="mm")
        if any(box[0] < b[2] and b[0] < box[2] and box[1] < b[3] and b[1] < box[3] for b in taken):
            continue
        taken.append(box)
        rgb = tuple(int(255 * min(1.0, c * 0.6 + 0.45)) for c in colours[layer])
        draw.text((x, y), graph.layers[layer], fill=rgb, font=small, anchor="mm", stroke_width=2, stroke_fill=BACKGROUND)
    draw.text((size // 40, size // 40), caption(graph, title), fill=(235, 235, 245), font=font)


def svg(graph: ComputeGraph, positions: np.ndarray, title: str, size: int = 900) -> str:
    """An SVG (in a browser, hovering a vertex shows its layer, group and tile)."""
    margin = size / 20
    xy = margin + positions * (size - 2 * margin)
    vertex_layer = graph.group_layer[graph.vertex_group]
    colours = vertex_colours(graph)
    layer_rgb = np.zeros((len(graph.layers), 3))
    layer_rgb[vertex_layer] = colours
    vertex_hex = ["#" + "".join(f"{int(255 * c):02x}" for c in rgb) for rgb in colours]
    hexes = ["#" + "".join(f"{int(255 * c):02x}" for c in rgb) for rgb in layer_rgb]
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 {size} {size}">',
        f'<rect width="100%" height="100%" fill="rgb{BACKGROUND}"/>',
        '<g stroke-width="0.6" stroke-opacity="0.45">',
    ]
    link_hex = "#" + "".join(f"{int(255 * c):02x}" for c in LINK_COLOUR)
    for s, t, link in zip(graph.sources.tolist(), graph.targets.tolist(), graph.link.tolist()):
        line = f'<line x1="{xy[s, 0]:.1f}" y1="{xy[s, 1]:.1f}" x2="{xy[t, 0]:.1f}" y2="{xy[t, 1]:.1f}"'
        parts.append(f'{line} class="link" stroke="{link_hex}"/>' if link else f'{line} stroke="{vertex_hex[s]}"/>')
    parts.append("</g><g>")
    rgb = "rgb({},{},{})".format(*REGION_COLOUR)
    for ipu, left, top, right, bottom in ipu_regions(graph, xy, size / 80):
        parts.append(
            f'<rect class="ipu-region" x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" height="{bottom - top:.1f}" '
            f'fill="none" stroke="{rgb}"/><text x="{left + 4:.1f}" y="{top + 14:.1f}" fill="{rgb}" font-family="sans-serif" '
            f'font-size="13">IPU {ipu}</text>'
        )
    for v in range(graph.num_vertices):
        group = graph.vertex_group[v]
        phase = f" ({graph.group_phase[group]})" if graph.group_phase[group] else ""
        tip = escape(f"{graph.layers[vertex_layer[v]]}{phase}: {graph.groups[group]} on tile {graph.vertex_tile[v]}")
        circle = f'<circle class="vertex" cx="{xy[v, 0]:.1f}" cy="{xy[v, 1]:.1f}" r="2.2" fill="{vertex_hex[v]}">'
        parts.append(f"{circle}<title>{tip}</title></circle>")
    parts.append("</g>")
    for layer, name in enumerate(graph.layers):
        where = xy[vertex_layer == layer]
        if where.size:
            x, y = np.median(where, axis=0)
            parts.append(
                f'<text x="{x:.1f}" y="{y:.1f}" fill="{hexes[layer]}" font-family="sans-serif" font-size="12" '
                f'text-anchor="middle">{escape(name)}</text>'
            )
    parts.append(f'<text x="{margin / 2:.0f}" y="{margin / 2:.0f}" fill="#ebebf5" font-family="sans-serif" font-size="14">')
    parts.append(f"{escape(caption(graph, title))}</text></svg>")
    return "\n".join(parts) + "\n"


def html_page(svg_text: str, title: str) -> str:
    """The SVG in a page of its own (self-contained: the browser zooms and shows the tooltips)."""
    return (
        f"<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>{escape(title)}</title></head>"
        f"<body style='margin:0;background:rgb{BACKGROUND}'>\n{svg_text}</body></html>\n"
    )
