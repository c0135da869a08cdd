"""The steps of a simulator plan (runtime/simulator.py builds them): copies, vertex groups,
compute sets, loops and data-dependent control flow, each run on the buffers of runtime/memory.py."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ipu_mlir.dialects.ops.arrays import as_items

from .codelet import AssertionFailure
from .memory import Buffer, SimulationError, Site
from .regions import Grid, Region, Strided, item_views


@dataclass
class Copy:
    """An `ipu.copy`: strided views assigned piece by piece, or else one gather and scatter."""

    site: Site
    source: Buffer
    dest: Buffer
    pieces: list[tuple[Region, Region]]
    fixed: list[tuple[np.ndarray, np.ndarray]] | None = None  # (dest, source) item views, once arrays are bound

    def prepare(self) -> None:
        """Views made once for buffers bound to arrays (memory.bind_arrays): strided pieces
        become one assignment each, with no view or item reinterpretation per run."""
        if all(isinstance(r, Strided) and isinstance(w, Strided) for r, w in self.pieces):
            self.fixed = [item_views(r, w, self.source.data, self.dest.data) for r, w in self.pieces]

    def run(self, values: list, check: bool) -> None:
        if self.fixed is not None:
            for dest, source in self.fixed:
                dest[...] = source
            return
        for reads, writes in self.pieces:
            if isinstance(reads, Strided) and isinstance(writes, Strided):
                self.dest.copy_from(self.source, reads, writes, self.site, check)
                continue
            data = self.source.read(reads, self.site, check)
            self.dest.write(writes, data if isinstance(writes, Strided) else data.reshape(-1, writes.count), check)


class Assign:
    """`dst[...] = src` into one fixed view, for results laid out alike run after run: the
    item views of `arrays.as_items` are made once (a call makes two arrays from interfaces,
    about 40 us; a reshape and a view of the new result cost a tenth of it)."""

    def __init__(self, dst: np.ndarray):
        self.dst, self.layout = dst, None
        self.items = self.kept = self.run = self.void = None

    def __call__(self, src: np.ndarray) -> None:
        layout = (src.shape, src.strides, src.dtype)
        if layout == self.layout:
            self.items[...] = src.reshape(*src.shape[: self.kept], self.run).view(self.void)[..., 0]
            return
        items, source = as_items(self.dst, src)
        items[...] = source
        if src.shape == self.dst.shape and items.dtype != self.dst.dtype:  # runs of elements as items
            self.layout, self.items, self.kept = layout, items, items.ndim
            self.run, self.void = items.itemsize // src.itemsize, items.dtype


@dataclass
class VertexGroup:
    """One codelet call over the group's grid: each edge an array of (*grid sizes, *shape)."""

    site: Site
    tiles: np.ndarray
    codelet: str
    kernel: object  # runtime.codelet's CompiledCodelet, compiled for the grid's rank
    codelet_error: type[Exception]
    inputs: list[tuple[Buffer, Grid]]
    outputs: list[tuple[Buffer, Grid]]
    views: tuple[list, list] | None = None  # per input and output, its view made once (None: a gather)
    # the one output's view, when it has one: the codelet may write into it (inputs gathered
    # each run are new arrays, sharing no memory with it)
    direct: np.ndarray | None = None
    write: object = None  # with every view made once: the codelet writing `direct` (CompiledCodelet.writer)

    def prepare(self) -> None:
        """The edges' strided views, made once for buffers bound to arrays; outputs' as `Assign`s."""
        inputs, outputs = (
            [region.view(buffer.data, write) if region.strides is not None else None for buffer, region in edges]
            for edges, write in ((self.inputs, False), (self.outputs, True))
        )
        self.views = inputs, [None if view is None else Assign(view) for view in outputs]
        self.direct = outputs[0] if len(outputs) == 1 and outputs[0] is not None else None
        self.write = self.writer()

    def writer(self):  # noqa: ANN201 (CompiledCodelet.writer's call, or None)
        """The codelet writing `direct` from the input views, its checks made once (None with
        an input gathered each run, or arguments the codelet refuses: `run` reports them).
        The call does not enter np.errstate: runs of a prepared plan hold it (Simulator._run)."""
        if self.direct is None or any(view is None for view in self.views[0]):
            return None
        try:
            return self.kernel.writer(self.views[0], self.direct, quiet=True)
        except self.codelet_error:
            return None

    def run(self, check: bool) -> None:
        if self.write is not None and self.write():
            return
        if self.views is None:
            arguments = [buffer.read(region, self.site, check) for buffer, region in self.inputs]
        elif any(view is None for view in self.views[0]):
            arguments = [
                buffer.read(region, self.site, check) if view is None else view
                for view, (buffer, region) in zip(self.views[0], self.inputs)
            ]
        else:  # the views: `write` is their `into`, made once (None or False: it writes nothing)
            arguments = self.views[0]
        prepared = self.views is not None and arguments is self.views[0]
        if self.direct is not None and not prepared and self.kernel.into(arguments, self.direct):
            return  # written in place (CompiledCodelet.into): its result's shape, type and layout
        try:
            results = self.kernel(arguments)
        except AssertionFailure as error:
            raise SimulationError(
                f"{error.message} (codelet @{self.codelet} of '{self.site.name}' at {self.site.where})", error.location
            ) from None
        except self.codelet_error as error:
            raise self.site.error(f"codelet @{self.codelet} failed: {error}") from None
        if len(results) != len(self.outputs):
            raise self.site.error(f"codelet @{self.codelet} returned {len(results)} results, expected {len(self.outputs)}")
        for index, ((buffer, region), result) in enumerate(zip(self.outputs, results)):
            batch = result.shape[: len(region.sizes)]
            if result.shape[len(batch) :] != region.shape or result.dtype != buffer.dtype or len(batch) != len(region.sizes):
                raise self.site.error(
                    f"codelet @{self.codelet} returned {result.shape} {result.dtype}, expected "
                    f"{(*region.sizes, *region.shape)} {buffer.dtype}"
                )
            # a result computed along an axis its buffer replicates: every point holds the same
            replicated = tuple(slice(0, 1) if n == 1 else slice(None) for n in region.sizes)
            into = None if self.views is None else self.views[1][index]
            if into is None:
                buffer.write(region, result[replicated], check)
            else:
                into(result[replicated])


@dataclass
class Execute:
    groups: list[VertexGroup]

    def run(self, values: list, check: bool) -> None:
        for group in self.groups:
            group.run(check)


@dataclass
class Repeat:
    """`scf.for` with constant bounds. Masks only ever get set or cleared over fixed regions,
    so from the third iteration on every check sees what it saw in the second: checks stop."""

    count: int
    steps: list

    def run(self, values: list, check: bool) -> None:
        for iteration in range(self.count):
            run_steps(self.steps, values, check and iteration < 2)


# A while loop whose condition never turns false would hang the simulator; the device would
# hang too, but a run should end with an error.
MAX_WHILE_ITERATIONS = 1_000_000


class Count:
    """How many times a block of data-dependent control flow ran in the last run: the profile
    counts its supersteps that many times (runtime/simulator.py recounts after each run)."""

    def __init__(self):
        self.runs = 0


@dataclass
class Predicate:
    """`ipu.predicate`: the device scalar at one tile of a buffer, read as a condition (or
    an `arith.constant` condition: no buffer)."""

    site: Site
    buffer: Buffer | None
    region: Region | None
    constant: int = 0

    def __call__(self, check: bool) -> bool:
        return bool(self.value(check))

    def value(self, check: bool) -> int:
        if self.buffer is None:
            return int(self.constant)
        return int(self.buffer.read(self.region, self.site, check).reshape(-1)[0])


def _steps_of(predicate: Predicate, blocks) -> list:  # noqa: ANN001 (a tuple or list of blocks)
    """The steps of a control-flow node: its predicate's read (when it reads a buffer), then
    every block's, as the planner walks them."""
    return [predicate] * (predicate.buffer is not None) + [step for block in blocks for step in block]


@dataclass
class If:
    """`scf.if`: Poplar's If, one block or the other on a device scalar."""

    predicate: Predicate
    blocks: tuple[list, list]
    counts: tuple[Count, Count]

    @property
    def steps(self) -> list:
        return _steps_of(self.predicate, self.blocks)

    def run(self, values: list, check: bool) -> None:
        taken = 0 if self.predicate(check) else 1
        self.counts[taken].runs += 1
        run_steps(self.blocks[taken], values, check)


@dataclass
class Switch:
    """`scf.index_switch`: Poplar's Switch, the block of the case equal to a device scalar (or
    the default block, the first)."""

    predicate: Predicate
    cases: dict[int, int]  # case value -> its block
    blocks: list[list]
    counts: list[Count]

    @property
    def steps(self) -> list:
        return _steps_of(self.predicate, self.blocks)

    def run(self, values: list, check: bool) -> None:
        taken = self.cases.get(self.predicate.value(check), 0)
        self.counts[taken].runs += 1
        run_steps(self.blocks[taken], values, check)


@dataclass
class While:
    """`scf.while`: Poplar's RepeatWhileTrue: the before block, then the body while the device
    scalar it leaves is true."""

    predicate: Predicate
    blocks: tuple[list, list]
    counts: tuple[Count, Count]

    @property
    def steps(self) -> list:
        return _steps_of(self.predicate, self.blocks)

    def run(self, values: list, check: bool) -> None:
        before, body = self.blocks
        for _ in range(MAX_WHILE_ITERATIONS):
            self.counts[0].runs += 1
            run_steps(before, values, check)
            if not self.predicate(check):
                return
            self.counts[1].runs += 1
            run_steps(body, values, check)
        raise self.predicate.site.error(f"ran {MAX_WHILE_ITERATIONS:,} iterations without its condition turning false")


def prepare(steps: list) -> None:
    """Makes the views of every copy and vertex group of `steps` (their buffers are bound)."""
    for step in steps:
        if isinstance(step, (Repeat, If, Switch, While)):
            prepare([s for s in step.steps if not isinstance(s, Predicate)])
        for each in step.groups if isinstance(step, Execute) else [step] if hasattr(step, "prepare") else []:
            each.prepare()  # vertex groups, copies and host streams (runtime/streams.py)


def run_steps(steps: list, values: list, check: bool) -> None:
    for step in steps:
        step.run(values, check)
