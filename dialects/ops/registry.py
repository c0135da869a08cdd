"""The registry of L1 compute ops: one record per op, read by every pass and by the runtime.

An L1 compute op is an op the planner cuts across tiles: `ipu.matmul`, `ipu.conv`,
`ipu.gather`, `ipu.scatter` and `linalg.generic` today. Each is declared once: its IRDL definition (`ipu.irdl.mlir`, or a
plugin's own IRDL dialect) plus one `ComputeOp` subclass registered with `@register_op`, in one
file of this package. The record says everything the rest of the compiler needs to know:

    conversion   `converts` + `convert(op)`: the linalg named ops it replaces, and `normalize(op)`
                 after upstream clean-ups (ipu-convert-to-ipu)
    verification `verify(op)`: what IRDL cannot check (the dialect verifier)
    iteration    `extents(op)`, `space(op)`, `reads_init(op)`: its loops, the accesses of its
                 operands, whether it reads its init (ipu-plan, ipu-schedule)
    planning     `serial_cuts(op)` + `rebuild(op, ...)`: how to compute it in pieces when no cut
                 over the tiles fits (ipu-plan's serial splits; none: never split serially)
    codelet      `codelet(op, name, piece, ip, loc)`: the per-tile codelet (ipu-schedule)
    kernel       `kernel(op, batch)`: the numpy function the codelet interpreter calls
    cost         `work(op, extents, target)`: cycles of one tile computing a box of its loops,
                 from the primitive formulas of `ipu_mlir.target.cost_model`; `space_work`
                 the same given the op's Space (the planner's, built once per op)
    examples     `examples()`: small L0 programs using the op, which test/python/test_conformance.py
                 compiles with every admitted cut of its space and checks against the reference

Nobody else keeps a table of compute-op names: ask `record_of(op)` (None for other ops).
docs/extending.md walks through adding an op, from a plugin file.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from mlir import ir

from ipu_mlir.target import Target, cost_model
from ipu_mlir.target.diagnostics import op_error

from .semantics import numpy_dtype
from .space import Space

Kernel = Callable[..., np.ndarray]


@dataclass(frozen=True)
class Piece:
    """What one class of alike tiles computes: for each input its piece's shape and the zero
    padding the tile adds around it (low, high per dim), the result box, whether the op's init
    joins in (a generic reading its `outs`), and the combiner a cut reduction starts from."""

    inputs: tuple[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]], ...]
    box: tuple[int, ...]
    uses_init: bool = False
    combiner: str | None = None

    @property
    def shapes(self) -> list[tuple[int, ...]]:
        return [shape for shape, _, _ in self.inputs]


@dataclass(frozen=True)
class Example:
    """A small L0 program (`func.func @main`, upstream dialects, or torch-mlir's TMTensor ops in
    generic form) that compiles to the record's op: `name` says which case it covers (odd
    sizes, an attribute, a combiner). Inputs are random (`runtime.api.random_inputs`) except
    the arguments of `bounds`, (argument number, n): indices drawn from [0, n), as a table's
    lookup needs (an out-of-range index stops the reference at its bounds check)."""

    name: str
    source: str
    bounds: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class SerialCut:
    """Pieces of an op along one dimension, counted in `extent` units: each (operand, dim,
    size) of `slices` is sliced `size` elements per unit along `dim`, and the pieces' results
    are concatenated along `result_dim`. `grouped`: the units are a convolution's groups (its
    input channels and output channels cut together, each piece a convolution of fewer groups)."""

    slices: tuple[tuple[int, int, int], ...]
    result_dim: int
    extent: int
    grouped: bool = False


class ComputeOp(ABC):
    """The record of one L1 compute op. Subclass it, set `name`, implement the abstract methods
    (a record missing one fails when `@register_op` instantiates it), override what applies."""

    name: ClassVar[str]
    converts: ClassVar[frozenset[str]] = frozenset()  # linalg named ops `convert` replaces
    # whether one kernel may serve several vertex groups (runtime/codelet.py's `body_key`): it
    # keeps no state tied to one group's arrays (conv's remembers the last operands it took)
    kernel_shared: ClassVar[bool] = False
    # whether it sums products on the AMP with a choice of partials type (`ipu.partials`,
    # lowering/partials_type.py): its kernel and `work` read the attribute
    takes_partials_type: ClassVar[bool] = False

    def convert(self, op: ir.OpView) -> ir.Value | None:
        """The value replacing the named linalg op `op` (one of `converts`), built at the
        current insertion point and location; None leaves it to be generalized."""
        return None

    def normalize(self, op: ir.OpView) -> None:
        """Rewrites `op` (at its place and location) into the form the planner wants, once the
        upstream clean-ups of ipu-convert-to-ipu have run; may replace and erase it."""
        return None  # by default the op is already in the planner's form

    def verify(self, op: ir.OpView) -> None:
        """Raises an IpuError (`op_error`) if `op` breaks a rule IRDL cannot express."""
        return None  # by default IRDL's constraints are all there is

    @abstractmethod
    def extents(self, op: ir.OpView) -> tuple[int, ...]:
        """The extent of each of its loops (the loops of `space`)."""

    @abstractmethod
    def space(self, op: ir.OpView) -> Space:
        """Its loops and the accesses of its operands (ipu-plan, ipu-schedule)."""

    def reads_init(self, op: ir.OpView) -> bool:
        """Whether the op reads its last operand as the result's initial value (a generic's
        `outs` its body reads): the codelet then takes the init's piece as an extra input."""
        return False

    def serial_cuts(self, op: ir.OpView) -> list[SerialCut]:
        """The ways to compute it as pieces joined by a `tensor.concat` when no cut over the
        tiles fits their memory (poplin's serial splits); none: it is never split serially."""
        return []

    def rebuild(self, op: ir.OpView, operands: list[ir.Value], cut: SerialCut, units: int) -> ir.OpView:
        """The op on `operands` sliced to `units` units of `cut` (a piece of a serial split);
        needed only by records whose `serial_cuts` gives cuts."""
        raise TypeError(f"'{self.name}' declares serial cuts but its record has no rebuild")

    @abstractmethod
    def codelet(self, op: ir.OpView, name: str, piece: Piece, ip: ir.InsertionPoint, loc: ir.Location) -> None:
        """Builds the codelet `name` (an `ipu.codelet_function`) computing `piece` of `op`."""

    @abstractmethod
    def kernel(self, op: ir.OpView, batch: int) -> Kernel | None:
        """The numpy function computing `op` on arrays with `batch` leading (tile) axes, one
        per operand, returning the result; attributes are read here, once. None: an op whose
        body the codelet interpreter runs itself (`linalg.generic`)."""

    @abstractmethod
    def work(self, op: ir.OpView, extents: tuple[int, ...], target: Target) -> int:
        """Cycles of one tile computing the box `extents` of its loops, vertex overhead excluded."""

    def space_work(self, space: Space, extents: tuple[int, ...], target: Target) -> int:
        """`work` of `space.op` for a caller holding its Space already: the planner prices
        thousands of boxes of one op, so a record whose `work` reads the space overrides this
        to take the caller's rather than build its own each time (a generic's)."""
        return self.work(space.op, extents, target)

    def examples(self) -> list[Example]:
        """Small programs exercising the op and its awkward cases (sizes that do not divide,
        each attribute, each combiner): the conformance test compiles each with every admitted
        cut of the op's space on every target and compares it with the reference. None yet:
        the conformance test fails, naming the record."""
        return []


REGISTRY: dict[str, ComputeOp] = {}


def register_op(cls: type[ComputeOp]) -> type[ComputeOp]:
    """Class decorator: registers one instance of the record under `cls.name`. A plugin loaded
    twice replaces its own record; two different records of one op name are an error."""
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or "." not in name:
        raise TypeError(f"compute op record {cls.__name__} needs a `name` like 'dialect.op'")
    previous = REGISTRY.get(name)
    if previous is not None and type(previous).__qualname__ != cls.__qualname__:
        raise ValueError(f"compute op '{name}' is already registered by {type(previous).__name__}")
    REGISTRY[name] = cls()
    return cls


def record_of(op: ir.OpView | ir.Operation) -> ComputeOp | None:
    """The record of a compute op, None for any other op."""
    return REGISTRY.get(op.operation.name)


def space_of(op: ir.OpView) -> Space:
    """The iteration space of a compute op (an error at the op for any other op)."""
    record = record_of(op)
    if record is None:
        raise op_error(op, "is not a compute op the planner knows")
    return record.space(op.operation.opview)


def converter_of(name: str) -> ComputeOp | None:
    """The record converting the linalg named op `name`, if any."""
    for record in REGISTRY.values():
        if name in record.converts:
            return record
    return None


def tile_cycles(space: Space, extents: tuple[int, ...], target: Target) -> int:
    """One vertex computing the box `extents` of the loops of a compute op (`space.op`),
    overhead included."""
    return cost_model.VERTEX_OVERHEAD_CYCLES + REGISTRY[space.op.operation.name].space_work(space, extents, target)


def codelet_cycles(func_op: ir.OpView, target: Target) -> int:
    """One vertex running the codelet `func_op` (a `func.func` on tensors): the overhead once,
    plus the work of each op of its body, in order (a tile runs one vertex's ops in sequence).
    Compute ops cost what their record says; other ops what `cost_model.op_work` says."""
    total = cost_model.VERTEX_OVERHEAD_CYCLES
    for op in func_op.regions[0].blocks[0].operations:
        record = record_of(op)
        if record is None and _window_read_in_place(op):
            continue
        total += record.work(op, record.extents(op), target) if record else cost_model.op_work(op, target)
    return total


def _window_read_in_place(op: ir.OpView) -> bool:
    """A unit-stride `tensor.extract_slice` read only by compute ops (the windows of a stencil's
    neighbours in one piece, lowering/schedule.py): a vertex reads a region of its input in
    place, as a Poplar vertex's edge connects to any region of a tile's tensor; the readers'
    work prices the reads, the window copies nothing."""
    if op.operation.name != "tensor.extract_slice" or any(s != 1 for s in ir.DenseI64ArrayAttr(op.attributes["static_strides"])):
        return False
    return all(record_of(use.owner) is not None for use in op.results[0].uses)


def static_tensor(op: ir.OpView, value_type: ir.Type, role: str) -> ir.RankedTensorType:
    """`value_type` as a statically shaped tensor, else an error at `op` naming `role`."""
    tensor = ir.RankedTensorType(value_type)
    if not tensor.has_static_shape:
        raise op_error(op, f"expects a statically shaped {role}, got {tensor}")
    return tensor


def shape_text(sizes) -> str:
    return "x".join(str(d) for d in sizes)


def dtype_of(op: ir.OpView, value: ir.Value) -> np.dtype:
    """The numpy type of `value`'s elements, else an error at `op`."""
    element_type = ir.ShapedType(value.type).element_type
    dtype = numpy_dtype(element_type)
    if dtype is None:
        raise op_error(op, f"uses element type {element_type}, which codelets do not support")
    return dtype
