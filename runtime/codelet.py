"""Codelets run by numpy, for many tiles at once: the simulator's compute hot path.

    kernel = compile_codelet(func_op, batch_rank=2)  # walks the IR once into a plan of bound kernels
    y, = kernel([x])                                 # x: (*B, *arg shape) -> y: (*B, *result shape)

A vertex group runs one codelet on many tiles; the simulator makes that one call, so every
value carries `batch_rank` batch axes in front (the tiles, possibly as a grid) and each op is
one numpy operation over all tiles: no Python loop over tiles or elements (the one loop left is
over the reduction points of a `linalg.generic` whose combiner is not associative).

**Plan, then run.** `compile_codelet` reads every attribute once and turns each op into a
closure over slots of a value list; a call only runs the closures. An op the codelet contract
(docs/contracts.md, L1 and L3) does not list is a `CodeletError` at compile time.

**Values.** A tensor of shape S is an array of shape (*B, *S), a scalar one of shape B. The
arguments' batch shapes broadcast by numpy's rules: an argument the same on every tile along a
grid axis has size 1 there (the left operand of a matmul on an m x n x k grid: (m, 1, k)), so
numpy broadcasts it inside each op instead of it being copied per tile. Constants have batch
axes of size 1; a value has the batch shape its inputs broadcast to, and results are broadcast
to the arguments' at the end. Values may be read-only views of others (a transpose or broadcast
in a `linalg.generic` copies nothing), arguments too (stride-0 broadcasts: nothing writes into
a value). Results are (*B, *shape) arrays, possibly read-only views (of an input passed
through, a constant, a broadcast, a transpose): the simulator copies each into its buffer, so
making them contiguous first would copy twice.
Element-wise semantics (integer wrap-around, division, f16, NaN) are those of
`dialects/ops/semantics.py`. Compute ops run the numpy kernel their record gives
(`dialects/ops`: `ipu.matmul` and `ipu.conv` on f16 accumulate in f32 and round once); this
module knows no compute-op names.

**linalg.generic** bodies: runtime/generic_body.py.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
from mlir import ir

from ipu_mlir.dialects.ops import record_of
from ipu_mlir.dialects.ops.semantics import cast_signed, elementwise_kernel, numpy_dtype, select
from ipu_mlir.dialects.resources import dense_array, is_resource
from ipu_mlir.target.diagnostics import IpuError

from .generic_body import CodeletError, GenericBodies, Step, error_at, same_view, segments, shape_of
from .inplace import Env


class AssertionFailure(CodeletError):
    """A `cf.assert` of a codelet's body found its condition false on some element at run time
    (torch-mlir's run-time checks): located at the assert, quoting its message."""


_ignoring = functools.partial(np.errstate, all="ignore")  # poison (division by zero, invalid casts) is not an error


def _unsupported(op: ir.OpView | ir.Operation) -> CodeletError:
    return CodeletError(f"'{op.operation.name}' is not supported in codelets", op.operation.location)


@dataclass
class CompiledCodelet:
    """A codelet as a plan: call it with one (*B_i, *shape) array per argument, len(B_i) ==
    batch_rank; the B_i broadcast to B (size-1 axes: the same on every tile along that axis)
    and each result is a (*B, *shape) array."""

    name: str
    arguments: list[tuple[tuple[int, ...], np.dtype]]  # shape and dtype of each argument
    results: list[tuple[int, tuple[int, ...]]]  # slot and shape of each result
    ops: list[tuple[str, str]]  # each op of the body and its result types, for cost models
    batch_rank: int
    _template: list  # the value list before a call: constants filled in
    _steps: list[Step]
    _checked: dict = field(default_factory=dict)  # the batch shape of inputs already checked, by their shapes and types
    _direct: tuple | None = None  # a body of one compute op whose kernel has `into`: (kernel, its operands' argument numbers)
    # a body ending in a generic (element-wise or reduction): the slot `into` puts its output in,
    # the result's type, and whether it is element-wise (it may then update an input in place)
    _sink: tuple | None = None

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        tiles = self._tiles(inputs)
        env = list(self._template)
        env[: len(inputs)] = inputs
        with np.errstate(all="ignore"):  # poison (division by zero, invalid casts) is not an error
            for step in self._steps:
                step(env)
        batch = self.batch_rank
        results = []
        for slot, shape in self.results:
            results.append(env[slot] if env[slot].shape[:batch] == tiles else np.broadcast_to(env[slot], (*tiles, *shape)))
        return results

    def into(self, inputs: Sequence[np.ndarray], output: np.ndarray) -> bool:
        """Runs a codelet whose body is one compute op with a kernel able to write in place
        (`ipu.matmul`'s, `ipu.conv`'s) straight into `output`, an array of its one result's
        (*B, *shape): no new result copied into it. So does a codelet whose result is that of
        a `linalg.generic` (without `cf.assert`, whose failure a caller locates), unless
        `output` may overlap an input: an element-wise body's ops write into it
        (runtime/inplace.py), a reduction combines its init into it. An element-wise body may
        take an input that is `output` itself, the same view (an optimizer's update of its
        state): runtime/generic_body.py then reads each element before writing it, or computes aside.
        False, having written nothing, for any other codelet or an `output` of another shape or
        layout than the kernel writes as its own."""
        write = self.writer(inputs, output)
        return write is not None and write()

    def writer(self, inputs: Sequence[np.ndarray], output: np.ndarray, quiet: bool = False) -> Callable[[], bool] | None:
        """`into(inputs, output)` as a call of no arguments, its checks made once: for a vertex
        group whose arguments and output are the same arrays on every run (the views of
        steps.VertexGroup.prepare), where they cost as much as a small codelet's work. None
        where `into` would write nothing; the call returns False when the kernel refuses
        `output`'s layout, having written nothing. `quiet`: the call is made inside
        np.errstate(all="ignore") (a simulator's run holds it: entering it costs 4 us, as much
        as a small codelet's kernel), else it enters it itself."""
        ignoring = contextlib.nullcontext if quiet else _ignoring
        if self._direct is None and self._sink is None:
            return None
        tiles = self._tiles(inputs)
        if output.shape != (*tiles, *self.results[0][1]):
            return None
        if self._direct is None:
            slot, dtype, elementwise = self._sink
            if output.dtype != dtype or not output.flags.writeable:
                return None
            if any(np.may_share_memory(output, x) and not (elementwise and same_view(output, x)) for x in inputs):
                return None
            env, steps = list(self._template), self._steps
            env[: len(inputs)] = inputs

            def run_body() -> bool:
                values = env.copy()  # steps leave their values in it: the arguments' slots stay
                values[slot] = output
                with ignoring():
                    for step in steps:
                        step(values)
                return True

            return run_body
        kernel, operands = self._direct
        arguments = [inputs[i] for i in operands]

        def run_kernel() -> bool:
            with ignoring():
                return kernel.into(*arguments, out=output)

        return run_kernel

    def renamed(self, name: str) -> CompiledCodelet:
        """The same plan for a codelet of another name and an equal body (`body_key`): its
        steps and kernels shared, its errors naming `name`."""
        return replace(self, name=name, _checked={})

    def _tiles(self, inputs: Sequence[np.ndarray]) -> tuple[int, ...]:
        key = tuple((value.shape, value.dtype) for value in inputs)
        tiles = self._checked.get(key)
        if tiles is None:
            tiles = self._checked[key] = self._check(inputs)
        return tiles

    def _check(self, inputs: Sequence[np.ndarray]) -> tuple[int, ...]:
        """The batch shape the inputs broadcast to; CodeletError if they do not fit."""
        if len(inputs) != len(self.arguments):
            raise CodeletError(f"codelet @{self.name} takes {len(self.arguments)} arguments, got {len(inputs)}")
        batch = self.batch_rank
        tiles = (1,) * batch
        for index, (value, (shape, dtype)) in enumerate(zip(inputs, self.arguments)):
            if value.ndim != batch + len(shape) or value.shape[batch:] != shape or value.dtype != dtype:
                expected = ", ".join(["*"] * batch + [str(size) for size in shape])
                raise CodeletError(
                    f"codelet @{self.name} argument #{index} expects ({expected}) {dtype} ({batch} batch axes), got "
                    f"{value.shape} {value.dtype}"
                )
            try:
                tiles = np.broadcast_shapes(tiles, value.shape[:batch])
            except ValueError:
                raise CodeletError(
                    f"codelet @{self.name} argument #{index} expects batch axes broadcasting with {tiles}, got {value.shape[:batch]}"
                ) from None
        return tiles


def compile_codelet(func_op: ir.OpView, batch_rank: int = 1) -> CompiledCodelet:
    """The plan of the codelet `func_op`, a `func.func` on tensors, for values with
    `batch_rank` batch axes in front; CodeletError if any op of its body is outside the
    codelet contract."""
    return _Compiler(batch_rank).function(func_op)


def body_key(func_op: ir.OpView) -> tuple[tuple | None, bool]:
    """A key equal for codelets whose bodies are equal op for op (names, attributes, operand
    wiring, types, nested regions) whatever their names: they compile to equal plans and cost
    equal cycles. BERT-12's 12 layers repeat 63 bodies under 1,012 names. Also whether the
    compiled plan may be shared: its compute ops' kernels keep no state tied to one vertex
    group's arrays (their records' `kernel_shared`: conv's remember the last operands, and
    shared would miss every call) and it has no `cf.assert`, whose failure names its location.
    (None, False) when an op reads a value from outside the body."""
    numbers: dict[ir.Value, int] = {}
    shareable = True

    def block_key(block: ir.Block) -> tuple | None:
        nonlocal shareable
        for argument in block.arguments:
            numbers[argument] = len(numbers)
        items: list = [tuple(a.type for a in block.arguments)]
        for op in block.operations:
            name = op.operation.name
            record = record_of(op)
            if name == "cf.assert" or (record is not None and not record.kernel_shared):
                shareable = False
            operands = tuple(numbers.get(v, -1) for v in op.operands)
            if -1 in operands:
                return None
            regions = tuple(block_key(b) for r in op.regions for b in r.blocks)
            if None in regions:
                return None
            attributes = _attributes(op)
            items.append((name, attributes, operands, tuple(r.type for r in op.results), regions))
            for result in op.results:
                numbers[result] = len(numbers)
        return tuple(items)

    body = block_key(func_op.regions[0].blocks[0])
    if body is None:
        return None, False
    attributes = tuple(a for a in _attributes(func_op) if a[0] != "sym_name")
    return (attributes, body), shareable


def _attributes(op: ir.OpView) -> tuple[tuple[str, ir.Attribute], ...]:
    attributes = op.operation.attributes
    return tuple((name, attributes[name]) for name in attributes)


# --- Helpers on types and attributes -----------------------------------------------------------


def _element_type(value: ir.Value) -> ir.Type:
    return ir.ShapedType(value.type).element_type if isinstance(value.type, ir.ShapedType) else value.type


def _i64s(op: ir.OpView, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _slices(op: ir.OpView, batch: int) -> tuple[slice, ...]:
    """The static slice of an extract_slice / insert_slice, `batch` batch axes first."""
    if any(segments(op)[-3:]):
        raise error_at(op, "has dynamic offsets, sizes or strides, which codelets do not support")
    triples = zip(_i64s(op, "static_offsets"), _i64s(op, "static_sizes"), _i64s(op, "static_strides"))
    return (slice(None),) * batch + tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in triples)


def _constant(op: ir.OpView, dtype: np.dtype, batch: int) -> np.ndarray:
    """The value of an arith.constant, with `batch` leading axes of size 1."""
    attr, shape = op.attributes["value"], shape_of(op.results[0])
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr, ir.BoolAttr)):
        return np.array([attr.value], dtype).reshape((1,) * batch)
    array = dense_array(attr, dtype)
    if array is None:
        if is_resource(attr):
            raise error_at(op, f"reads {attr}, whose blob is not available")
        raise error_at(op, f"has a value the runtime cannot read: {attr}")
    if array.dtype != dtype or array.size != math.prod(shape):
        raise error_at(op, f"has a value the runtime cannot read as {math.prod(shape)} x {dtype}: {attr}")
    return array.reshape(*(1,) * batch, *shape)


# --- The compiler ------------------------------------------------------------------------------


class _Compiler(GenericBodies):
    """Walks a codelet once: gives every SSA value a slot of the value list and every op a
    step; constants go into the template list instead of steps. Every value has `batch`
    batch axes in front."""

    def __init__(self, batch_rank: int) -> None:
        self.batch = batch_rank
        self.slots: dict[ir.Value, int] = {}
        self.template: list = []
        self.arguments = 0  # slots 0 .. arguments - 1 are the codelet's arguments
        self.direct, self.direct_result = None, None
        self.sink: tuple | None = None  # the last generic's result slot, sink slot, result type, step, whether element-wise
        self.asserts = False  # whether the codelet runs a cf.assert
        self.fresh: set[ir.Value] = set()  # results of generics: arrays of their own (or read-only views)
        self.handlers: dict[str, Callable[[ir.OpView], Step | None]] = {
            "arith.constant": self._constant,
            "tensor.empty": self._empty,
            "linalg.fill": self._fill,
            "tensor.extract_slice": self._extract_slice,
            "tensor.insert_slice": self._insert_slice,
            "tensor.pad": self._pad,
            "tensor.expand_shape": self._reshape,
            "tensor.collapse_shape": self._reshape,
            "tensor.concat": self._concat,
        }

    def function(self, func_op: ir.OpView) -> CompiledCodelet:
        name = ir.StringAttr(func_op.attributes["sym_name"]).value
        block = func_op.regions[0].blocks[0]
        arguments = [(shape_of(a), self._dtype(a, func_op)) for a in block.arguments]
        for argument in block.arguments:
            self._define(argument)
        self.arguments = len(block.arguments)
        steps: list[Step] = []
        ops: list[tuple[str, str]] = []
        for op in block.operations:
            ops.append((op.operation.name, ", ".join(str(r.type) for r in op.results)))
            if op.operation.name == "func.return":
                results = [(self._slot(v, op), shape_of(v)) for v in op.operands]
                direct = self.direct if len(steps) == 1 and [slot for slot, _ in results] == [self.direct_result] else None
                sink = self.sink
                sink = (
                    (*sink[1:3], sink[4])
                    if sink and [slot for slot, _ in results] == [sink[0]] and steps[-1] is sink[3] and not self.asserts
                    else None
                )
                return CompiledCodelet(name, arguments, results, ops, self.batch, self.template, steps, _direct=direct, _sink=sink)
            self._compute(op, steps) if record_of(op) else self._op(op, steps, self.handlers)
        raise CodeletError(f"codelet @{name} has no func.return", func_op.operation.location)

    # Slots and values.

    def _define(self, value: ir.Value, constant: np.ndarray | None = None) -> int:
        self.slots[value] = len(self.template)
        self.template.append(constant)
        return self.slots[value]

    def _slot(self, value: ir.Value, op: ir.OpView) -> int:
        if value not in self.slots:
            raise error_at(op, "uses a value the codelet cannot compute (defined by an op not run, or by a block argument)")
        return self.slots[value]

    def _dtype(self, value: ir.Value, op: ir.OpView) -> np.dtype:
        dtype = numpy_dtype(_element_type(value))
        if dtype is None:
            raise error_at(op, f"uses element type {_element_type(value)}, which codelets do not support")
        return dtype

    def _compute(self, op: ir.OpView, steps: list[Step]) -> None:
        """A compute op: the kernel its record plans (`dialects/ops`), called on the operands;
        `linalg.generic`, whose record has no kernel, runs its body here."""
        try:
            kernel = record_of(op).kernel(op.operation.opview, self.batch)
        except IpuError as error:
            raise CodeletError(error.message, error.location) from None
        if kernel is None:
            steps.append(self._generic(op))
            return
        slots, out = [self._slot(v, op) for v in op.operands], self._define(op.results[0])
        steps.append(lambda env: env.__setitem__(out, kernel(*[env[s] for s in slots])))
        if hasattr(kernel, "into") and all(s < self.arguments for s in slots):  # the codelet's `into` if this op is all it does
            self.direct, self.direct_result = (kernel, slots), out

    def _op(self, op: ir.OpView, steps: list[Step], handlers: dict) -> None:
        name = op.operation.name
        handler = handlers.get(name)
        if handler is None and name.startswith(("arith.", "math.")):
            handler = self._elementwise
        if handler is None:
            raise _unsupported(op)
        step = handler(op)
        if step is not None:
            steps.append(step)

    # Scalars and element-wise ops.

    def _constant(self, op: ir.OpView) -> None:
        self._define(op.results[0], _constant(op, self._dtype(op.results[0], op), self.batch))

    def _elementwise(self, op: ir.OpView) -> Step:
        name, result = op.operation.name, op.results[0]
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value if name in ("arith.cmpf", "arith.cmpi") else None
        kernel = elementwise_kernel(name, [self._dtype(v, op) for v in op.operands], self._dtype(result, op), predicate)
        if kernel is None:
            raise _unsupported(op)
        if name == "arith.select" and not isinstance(op.operands[0].type, ir.ShapedType) and isinstance(result.type, ir.ShapedType):
            ones = (1,) * len(shape_of(result))  # a scalar condition (batch axes only) choosing whole tensors
            kernel = lambda c, a, b: select(c.reshape(*c.shape, *ones), a, b)  # noqa: E731
        slots, out = [self._slot(v, op) for v in op.operands], self._define(result)
        if len(slots) == 1:
            (a,) = slots
            return lambda env: env.__setitem__(out, kernel(env[a]))
        if len(slots) == 2:
            a, b = slots
            return lambda env: env.__setitem__(out, kernel(env[a], env[b]))
        return lambda env: env.__setitem__(out, kernel(*[env[s] for s in slots]))

    def _assert(self, op: ir.OpView) -> Step:
        """`cf.assert %cond, "msg"` over every element the body runs on: all must hold."""
        condition, message, location = self._slot(op.operands[0], op), ir.StringAttr(op.attributes["msg"]).value, op.operation.location
        self.asserts = True

        def check(env: Env) -> None:
            held = np.asarray(env[condition])
            if not held.all():
                failed = int(held.size - np.count_nonzero(held))
                raise AssertionFailure(f"'cf.assert' failed on {failed} of {held.size} elements: \"{message}\"", location)

        return check

    # Tensor ops.

    def _empty(self, op: ir.OpView) -> None:
        """Zeros: an empty tensor only gives its shape to `outs`, which are overwritten."""
        result = op.results[0]
        self._define(result, np.broadcast_to(np.zeros((), self._dtype(result, op)), (*(1,) * self.batch, *shape_of(result))))

    def _fill(self, op: ir.OpView) -> Step:
        """The scalar (cast_signed to the element type, as linalg.fill does) broadcast: a view."""
        value, result = op.operands[0], op.results[0]
        convert, shape = cast_signed(self._dtype(value, op), self._dtype(result, op)), shape_of(result)
        source, out, ones = self._slot(value, op), self._define(result), (1,) * len(shape)

        last: list = [None, None]  # the value last filled with (a constant: the same each call) and its broadcast

        def step(env: Env) -> None:
            if env[source] is not last[0]:
                scalar = convert(env[source])
                last[:] = env[source], np.broadcast_to(scalar.reshape(*scalar.shape, *ones), (*scalar.shape, *shape))
            env[out] = last[1]

        return step

    def _reshape(self, op: ir.OpView) -> Step:
        shape, source, out, batch = shape_of(op.results[0]), self._slot(op.operands[0], op), self._define(op.results[0]), self.batch
        return lambda env: env.__setitem__(out, env[source].reshape(*env[source].shape[:batch], *shape))

    def _extract_slice(self, op: ir.OpView) -> Step:
        index, shape, batch = _slices(op, self.batch), shape_of(op.results[0]), self.batch
        source, out = self._slot(op.operands[0], op), self._define(op.results[0])
        return lambda env: env.__setitem__(out, env[source][index].reshape(*env[source].shape[:batch], *shape))

    def _insert_slice(self, op: ir.OpView) -> Step:
        index, sizes, batch = _slices(op, self.batch), _i64s(op, "static_sizes"), self.batch
        dest_shape, dtype = shape_of(op.results[0]), self._dtype(op.results[0], op)
        source, dest, out = self._slot(op.operands[0], op), self._slot(op.operands[1], op), self._define(op.results[0])

        def step(env: Env) -> None:
            piece, into = env[source], env[dest]
            result = np.empty((*np.broadcast_shapes(piece.shape[:batch], into.shape[:batch]), *dest_shape), dtype)
            result[...] = into
            result[index] = piece.reshape(*piece.shape[:batch], *sizes)
            env[out] = result

        return step

    def _pad(self, op: ir.OpView) -> Step:
        if any(segments(op)[1:]):
            raise error_at(op, "has dynamic padding, which codelets do not support")
        low, high = _i64s(op, "static_low"), _i64s(op, "static_high")
        if min(low + high, default=0) < 0:
            raise error_at(op, "has negative padding, which codelets do not support")
        block = op.regions[0].blocks[0]
        if any(list(argument.uses) for argument in block.arguments):
            raise error_at(op, "pads with a value depending on the position, which codelets do not support")
        steps: list[Step] = []
        for inner in block.operations:
            if inner.operation.name == "tensor.yield":
                pad_value = self._slot(inner.operands[0], inner)
            else:
                self._op(inner, steps, {"arith.constant": self._constant})
        shape, dtype = shape_of(op.results[0]), self._dtype(op.results[0], op)
        interior = (Ellipsis, *(slice(lo, size - hi) for lo, size, hi in zip(low, shape, high)))
        ones, batch = (1,) * len(shape), self.batch
        source, out = self._slot(op.operands[0], op), self._define(op.results[0])

        def step(env: Env) -> None:
            for inner_step in steps:
                inner_step(env)
            value, piece = env[pad_value], env[source]
            result = np.empty((*np.broadcast_shapes(value.shape, piece.shape[:batch]), *shape), dtype)
            result[...] = value.reshape(*value.shape, *ones)
            result[interior] = piece
            env[out] = result

        return step

    def _concat(self, op: ir.OpView) -> Step:
        batch = self.batch
        axis = batch + ir.IntegerAttr(op.attributes["dim"]).value
        sources, out = [self._slot(v, op) for v in op.operands], self._define(op.results[0])

        def step(env: Env) -> None:
            pieces = [env[s] for s in sources]
            tiles = np.broadcast_shapes(*(p.shape[:batch] for p in pieces))
            env[out] = np.concatenate([np.broadcast_to(p, (*tiles, *p.shape[batch:])) for p in pieces], axis=axis)

        return step
