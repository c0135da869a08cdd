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

**linalg.generic** views each operand through its indexing map as one strided array over the
iteration space (*batch, *loops): projected permutations, broadcasts, constant indices and
pooling windows `s * d_out + k * d_win` alike. The body then runs once, element-wise over that
space. A reduction `yield combine(f(ins), out)` with an associative combiner evaluates `f`
everywhere and reduces it by the combiner (runtime/reduce.py); any other body steps through the
reduction points, still vectorised over batch axes and parallel loops. A body without reduction
loops runs once over the whole space, its exactly rounded ops writing into buffers it owns
(runtime/inplace.py): the vertex group's output view when `into` gives one, a value read for the
last time, or the new array of an earlier generic read only there (a combine of partial sums).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
from mlir import ir
from numpy.lib.stride_tricks import as_strided

from ipu_mlir.dialects.ops import record_of
from ipu_mlir.dialects.ops.semantics import cast_signed, elementwise_kernel, numpy_dtype, out_kernel, reducer, select
from ipu_mlir.dialects.ops.space import loop_extents
from ipu_mlir.dialects.resources import dense_array, is_resource
from ipu_mlir.target.diagnostics import IpuError

from .inplace import Op, broadcast_shape, plan_ops, run_body
from .reduce import fold

Env = list  # the values of a call, by slot
DENSE = 8  # a generic's input repeated along loops is made dense if shared by this many tiles
Step = Callable[[Env], None]


class CodeletError(IpuError):
    """A codelet the runtime cannot run (unsupported op or form), or a call with wrong inputs."""


class AssertionFailure(CodeletError):
    """A `cf.assert` of a codelet's body found its condition false on some element at run time
    (torch-mlir's run-time checks): located at the assert, quoting its message."""


def _error(op: ir.OpView | ir.Operation, message: str) -> CodeletError:
    return CodeletError(f"'{op.operation.name}' op {message}", op.operation.location)


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
    # a body ending in a generic (element-wise or reduction): the slot `into` puts its output in, the result's type
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
        (runtime/inplace.py), a reduction combines its init into it.
        False, having written nothing, for any other codelet or an `output` of another shape or
        layout than the kernel writes as its own."""
        if self._direct is None and self._sink is None:
            return False
        tiles = self._tiles(inputs)
        if output.shape != (*tiles, *self.results[0][1]):
            return False
        if self._direct is None:
            slot, dtype = self._sink
            if output.dtype != dtype or not output.flags.writeable or any(np.may_share_memory(output, x) for x in inputs):
                return False
            env = list(self._template)
            env[: len(inputs)] = inputs
            env[slot] = output
            with np.errstate(all="ignore"):
                for step in self._steps:
                    step(env)
            return True
        kernel, operands = self._direct
        with np.errstate(all="ignore"):
            return kernel.into(*[inputs[i] for i in operands], out=output)

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


# --- Helpers on types and attributes -----------------------------------------------------------


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.ShapedType(value.type).shape) if isinstance(value.type, ir.ShapedType) else ()


def _element_type(value: ir.Value) -> ir.Type:
    return ir.ShapedType(value.type).element_type if isinstance(value.type, ir.ShapedType) else value.type


def _i64s(op: ir.OpView, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _segments(op: ir.OpView) -> tuple[int, ...]:
    return tuple(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _slices(op: ir.OpView, batch: int) -> tuple[slice, ...]:
    """The static slice of an extract_slice / insert_slice, `batch` batch axes first."""
    if any(_segments(op)[-3:]):
        raise _error(op, "has dynamic offsets, sizes or strides, which codelets do not support")
    triples = zip(_i64s(op, "static_offsets"), _i64s(op, "static_sizes"), _i64s(op, "static_strides"))
    return (slice(None),) * batch + tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in triples)


def _constant(op: ir.OpView, dtype: np.dtype, batch: int) -> np.ndarray:
    """The value of an arith.constant, with `batch` leading axes of size 1."""
    attr, shape = op.attributes["value"], _shape(op.results[0])
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr, ir.BoolAttr)):
        return np.array([attr.value], dtype).reshape((1,) * batch)
    array = dense_array(attr, dtype)
    if array is None:
        if is_resource(attr):
            raise _error(op, f"reads {attr}, whose blob is not available")
        raise _error(op, f"has a value the runtime cannot read: {attr}")
    if array.dtype != dtype or array.size != math.prod(shape):
        raise _error(op, f"has a value the runtime cannot read as {math.prod(shape)} x {dtype}: {attr}")
    return array.reshape(*(1,) * batch, *shape)


# --- linalg.generic operand views -------------------------------------------------------------


def _linear(expr: ir.AffineExpr, loops: int) -> tuple[list[int], int] | None:
    """`expr` as (coefficient per loop, constant) if it is linear in the loops, else None."""
    if isinstance(expr, ir.AffineDimExpr):
        coefficients = [0] * loops
        coefficients[expr.position] = 1
        return coefficients, 0
    if isinstance(expr, ir.AffineConstantExpr):
        return [0] * loops, expr.value
    if isinstance(expr, (ir.AffineAddExpr, ir.AffineMulExpr)):
        lhs, rhs = _linear(expr.lhs, loops), _linear(expr.rhs, loops)
        if lhs is None or rhs is None:
            return None
        if isinstance(expr, ir.AffineAddExpr):
            return [a + b for a, b in zip(lhs[0], rhs[0])], lhs[1] + rhs[1]
        factor, other = (lhs, rhs) if not any(lhs[0]) else (rhs, lhs)
        if any(factor[0]):
            return None  # a product of loops
        return [factor[1] * c for c in other[0]], factor[1] * other[1]
    return None


def _loop_of(form: tuple[list[int], int]) -> int | None:
    """The loop `i` if the linear form is just `d_i`, else None."""
    coefficients, constant = form
    return coefficients.index(1) if constant == 0 and sorted(coefficients) == [0] * (len(coefficients) - 1) + [1] else None


def _viewer(
    terms: list[list[tuple[int, int]]], offsets: tuple[int, ...], loops: tuple[int, ...], batch: int
) -> Callable[[np.ndarray], np.ndarray]:
    """A function viewing an operand (*batch, *shape) as (*batch, *loops): loop `i` steps
    `sum(c * stride[axis] for axis, c in terms[i])` bytes, from element `offsets`."""
    start = (slice(None),) * batch + tuple(slice(o, None) for o in offsets) if any(offsets) else None

    def view(x: np.ndarray) -> np.ndarray:
        base = x if start is None else x[start]
        strides = base.strides
        loop_strides = tuple(sum(c * strides[axis] for axis, c in axis_terms) for axis_terms in terms)
        return as_strided(base, (*base.shape[:batch], *loops), (*strides[:batch], *loop_strides), writeable=False)

    return view


def _full(value: np.ndarray, loops: tuple[int, ...], batch: int) -> np.ndarray:
    """A body value (broadcastable to (*batch, *loops)) spread over every loop, keeping its
    own batch axes: reductions must see repeated elements repeated."""
    if value.ndim < batch + len(loops):
        value = value.reshape((1,) * (batch + len(loops)))
    return np.broadcast_to(value, (*value.shape[:batch], *loops))


def _writable(array: np.ndarray, other: np.ndarray) -> bool:
    """Whether `array`, a reduction by `fold`, is an array of its own that combining it with
    `other` element-wise may overwrite: fold's input is a read-only broadcast, so a view of it
    (all reduced loops of size 1) is read-only too; and it has the result's shape and type."""
    return array.flags.writeable and array.shape == broadcast_shape([array.shape, other.shape]) and array.dtype == other.dtype


@dataclass
class _Reduction:
    """`yield combine(f, out)` for one output, evaluated by reducing f over the reduction loops."""

    combine_op: ir.Operation
    f: ir.Value
    reduce: Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
    init_first: bool  # combine(out, f) rather than combine(f, out)
    into: np.ufunc | None  # the combiner writing into a given array (semantics.out_kernel)


# --- The compiler ------------------------------------------------------------------------------


class _Compiler:
    """Walks a codelet once: gives every SSA value a slot of the value list and every op a
    step; constants go into the template list instead of steps. Every value has `batch`
    batch axes in front."""

    def __init__(self, batch_rank: int) -> None:
        self.batch = batch_rank
        self.slots: dict[ir.Value, int] = {}
        self.template: list = []
        self.arguments = 0  # slots 0 .. arguments - 1 are the codelet's arguments
        self.direct, self.direct_result = None, None
        self.sink: tuple | None = None  # the last element-wise generic's result slot, sink slot, result type and step
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
        arguments = [(_shape(a), self._dtype(a, func_op)) for a in block.arguments]
        for argument in block.arguments:
            self._define(argument)
        self.arguments = len(block.arguments)
        steps: list[Step] = []
        ops: list[tuple[str, str]] = []
        for op in block.operations:
            ops.append((op.operation.name, ", ".join(str(r.type) for r in op.results)))
            if op.operation.name == "func.return":
                results = [(self._slot(v, op), _shape(v)) for v in op.operands]
                direct = self.direct if len(steps) == 1 and [slot for slot, _ in results] == [self.direct_result] else None
                sink = self.sink
                sink = (
                    sink[1:3] if sink and [slot for slot, _ in results] == [sink[0]] and steps[-1] is sink[3] and not self.asserts else None
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
            raise _error(op, "uses a value the codelet cannot compute (defined by an op not run, or by a block argument)")
        return self.slots[value]

    def _dtype(self, value: ir.Value, op: ir.OpView) -> np.dtype:
        dtype = numpy_dtype(_element_type(value))
        if dtype is None:
            raise _error(op, f"uses element type {_element_type(value)}, which codelets do not support")
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
            ones = (1,) * len(_shape(result))  # a scalar condition (batch axes only) choosing whole tensors
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
        self._define(result, np.broadcast_to(np.zeros((), self._dtype(result, op)), (*(1,) * self.batch, *_shape(result))))

    def _fill(self, op: ir.OpView) -> Step:
        """The scalar (cast_signed to the element type, as linalg.fill does) broadcast: a view."""
        value, result = op.operands[0], op.results[0]
        convert, shape = cast_signed(self._dtype(value, op), self._dtype(result, op)), _shape(result)
        source, out, ones = self._slot(value, op), self._define(result), (1,) * len(shape)

        def step(env: Env) -> None:
            scalar = convert(env[source])
            env[out] = np.broadcast_to(scalar.reshape(*scalar.shape, *ones), (*scalar.shape, *shape))

        return step

    def _reshape(self, op: ir.OpView) -> Step:
        shape, source, out, batch = _shape(op.results[0]), self._slot(op.operands[0], op), self._define(op.results[0]), self.batch
        return lambda env: env.__setitem__(out, env[source].reshape(*env[source].shape[:batch], *shape))

    def _extract_slice(self, op: ir.OpView) -> Step:
        index, shape, batch = _slices(op, self.batch), _shape(op.results[0]), self.batch
        source, out = self._slot(op.operands[0], op), self._define(op.results[0])
        return lambda env: env.__setitem__(out, env[source][index].reshape(*env[source].shape[:batch], *shape))

    def _insert_slice(self, op: ir.OpView) -> Step:
        index, sizes, batch = _slices(op, self.batch), _i64s(op, "static_sizes"), self.batch
        dest_shape, dtype = _shape(op.results[0]), self._dtype(op.results[0], op)
        source, dest, out = self._slot(op.operands[0], op), self._slot(op.operands[1], op), self._define(op.results[0])

        def step(env: Env) -> None:
            piece, into = env[source], env[dest]
            result = np.empty((*np.broadcast_shapes(piece.shape[:batch], into.shape[:batch]), *dest_shape), dtype)
            result[...] = into
            result[index] = piece.reshape(*piece.shape[:batch], *sizes)
            env[out] = result

        return step

    def _pad(self, op: ir.OpView) -> Step:
        if any(_segments(op)[1:]):
            raise _error(op, "has dynamic padding, which codelets do not support")
        low, high = _i64s(op, "static_low"), _i64s(op, "static_high")
        if min(low + high, default=0) < 0:
            raise _error(op, "has negative padding, which codelets do not support")
        block = op.regions[0].blocks[0]
        if any(list(argument.uses) for argument in block.arguments):
            raise _error(op, "pads with a value depending on the position, which codelets do not support")
        steps: list[Step] = []
        for inner in block.operations:
            if inner.operation.name == "tensor.yield":
                pad_value = self._slot(inner.operands[0], inner)
            else:
                self._op(inner, steps, {"arith.constant": self._constant})
        shape, dtype = _shape(op.results[0]), self._dtype(op.results[0], op)
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

    # linalg.generic.

    def _generic(self, op: ir.OpView) -> Step:
        n_in, _ = _segments(op)
        operands = list(op.operands)
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
        kinds = [str(k).split("<")[-1].rstrip(">") for k in ir.ArrayAttr(op.attributes["iterator_types"])]
        linear = [[_linear(e, len(kinds)) for e in m.results] for m in maps]
        for forms, amap in zip(linear, maps):
            if None in forms:
                raise _error(op, f"has indexing map {amap}, which codelets do not support (only linear maps)")
        loops = self._extents(op)
        viewers = [self._viewer(op, forms, _shape(v), loops) for forms, v in zip(linear[:n_in], operands[:n_in])]
        parallel = [i for i, kind in enumerate(kinds) if kind == "parallel"]
        layouts = [self._layout(op, forms, parallel) for forms in linear[n_in:]]
        block = op.regions[0].blocks[0]
        yield_op = block.operations[len(block.operations) - 1]
        reductions = self._reductions(block, n_in) if len(parallel) < len(kinds) else None
        in_args = [self._define(a) for a in list(block.arguments)[:n_in]]
        out_args = [self._define(a) for a in list(block.arguments)[n_in:]]
        wanted = [r.f for r in reductions] if reductions is not None else list(yield_op.operands)  # f or yield
        steps, adapters, temporaries, wanted_slots, reusable = self._body(block, [r.combine_op for r in reductions or []], wanted)
        inputs, inits = [self._slot(v, op) for v in operands[:n_in]], [self._slot(v, op) for v in operands[n_in:]]
        results = [self._define(r) for r in op.results]
        ones = (1,) * (len(loops) if reductions is not None else len(parallel))
        combiners = [(r.reduce, r.combine, r.init_first, r.into) for r in reductions or []]  # no IR in closures
        batch = self.batch

        def bind(env: Env) -> tuple[list[np.ndarray], tuple[int, ...]]:
            """The inputs over the iteration space, outside values at the body's rank, and
            the batch shape of the results."""
            views = [env[s] if view is None else view(env[s]) for s, view in zip(inputs, viewers)]
            for outer, inner in adapters:
                env[inner] = env[outer].reshape(*env[outer].shape, *ones)
            tiles = broadcast_shape(  # the arguments' were checked to broadcast (CompiledCodelet._check)
                [v.shape[:batch] for v in views] + [env[s].shape[:batch] for s in inits + [outer for outer, _ in adapters]]
            )
            # An input repeated along loops (a channel's scale over its pixels) and shared by
            # tiles is made dense once: numpy's inner loop then spans a tile's whole piece
            # instead of the few elements between repeats (ResNet-50's batch norms 3x faster).
            count = math.prod(tiles)
            views = [
                np.ascontiguousarray(v) if 0 in v.strides[batch:] and DENSE * math.prod(v.shape[:batch]) <= count else v for v in views
            ]
            return views, tiles

        def clear(env: Env) -> None:
            for slot in temporaries:
                env[slot] = None

        if reductions is not None:
            axes = tuple(batch + i for i, kind in enumerate(kinds) if kind != "parallel")
            sink = self._sink_slot(results)

            def reduce_step(env: Env) -> None:
                views, _ = bind(env)
                for slot, view in zip(in_args, views):
                    env[slot] = view
                for step in steps:
                    step(env)
                for (reduce, combine, init_first, into), f, init, (to_parallel, from_parallel), out in zip(
                    combiners, wanted_slots, inits, layouts, results
                ):
                    reduced, start = fold(_full(env[f], loops, batch), axes, reduce, combine), env[init].transpose(to_parallel)
                    # the init combined straight into the output `into` gives, else into the
                    # reduction's own new array if it is one
                    dest = None if sink is None or env[sink] is None else env[sink].transpose(to_parallel)
                    target = None
                    if into is not None and dest is not None and dest.shape == broadcast_shape([reduced.shape, start.shape]):
                        target = dest
                    elif into is not None and _writable(reduced, start):
                        target = reduced
                    if target is not None:
                        combine = functools.partial(into, out=target)
                    value = combine(start, reduced) if init_first else combine(reduced, start)
                    if dest is not None and value is not dest:
                        np.copyto(dest, value)
                    env[out] = value.transpose(from_parallel)
                clear(env)

            self.fresh.update(op.results)
            if sink is not None:
                self.sink = (results[0], sink, self._dtype(op.results[0], op), reduce_step)
            return reduce_step

        if len(parallel) == len(kinds):
            # an input that is a generic's new array read only here may be overwritten once read
            owned_inputs = [
                slot
                for slot, value, viewer in zip(in_args, operands[:n_in], viewers)
                if slot in reusable and viewer is None and value in self.fresh and len(list(value.uses)) == 1
            ]
            parallel_step = self._parallel(
                op, bind, steps, (in_args, out_args, owned_inputs), (inits, layouts), wanted_slots, results, clear
            )
            if len(set(yield_op.operands)) == len(results):  # no two results one array
                self.fresh.update(op.results)
            return parallel_step

        extents = tuple(loops[i] for i in parallel)
        ranges = [[slice(None)] if kind == "parallel" else range(extent) for extent, kind in zip(loops, kinds)]
        points = [(*(slice(None),) * batch, *point) for point in itertools.product(*ranges)]

        def loop_step(env: Env) -> None:
            views, tiles = bind(env)
            accumulators = [env[init].transpose(to_parallel) for init, (to_parallel, _) in zip(inits, layouts)]
            for point in points:
                for slot, view in zip(in_args, views):
                    env[slot] = view[point]
                for slot, accumulator in zip(out_args, accumulators):
                    env[slot] = accumulator
                for step in steps:
                    step(env)
                accumulators = [env[s] for s in wanted_slots]
            for accumulator, (_, from_parallel), out in zip(accumulators, layouts, results):
                env[out] = np.broadcast_to(accumulator, (*tiles, *extents)).transpose(from_parallel)
            clear(env)

        return loop_step

    def _parallel(
        self, op: ir.OpView, bind, steps: list, args: tuple, outs: tuple, wanted_slots: list[int], results: list[int], clear
    ) -> Step:
        """The step of a generic without reduction loops: its body run once over the whole
        space, each `Op` into a buffer it owns (runtime/inplace.py); a generic with one result
        writes it into the sink's array when `CompiledCodelet.into` gives one."""
        (in_args, out_args, owned_inputs), (inits, layouts) = args, outs
        extents, sink, to_dest = self._extents(op), self._sink_slot(results), layouts[0][0]

        def parallel_step(env: Env) -> None:
            views, tiles = bind(env)
            for slot, view in zip(in_args, views):
                env[slot] = view
            owned = {slot for slot in owned_inputs if env[slot].flags.writeable}
            for slot, init, (to_parallel, _) in zip(out_args, inits, layouts):
                env[slot] = env[init].transpose(to_parallel)
            output = None if sink is None else env[sink]
            free = [] if output is None else [output.transpose(to_dest)]
            dest = free[0] if free else None
            run_body(env, steps, owned, free)
            for slot, (_, from_parallel), out in zip(wanted_slots, layouts, results):
                value = env[slot]
                if dest is not None:
                    if value is not dest:
                        np.copyto(dest, value)
                    env[out] = output
                elif slot in owned and value.shape == (*tiles, *extents):
                    env[out] = value.transpose(from_parallel)
                else:
                    env[out] = np.broadcast_to(value, (*tiles, *extents)).transpose(from_parallel)
            clear(env)

        if sink is not None:
            self.sink = (results[0], sink, self._dtype(op.results[0], op), parallel_step)
        return parallel_step

    def _sink_slot(self, results: list[int]) -> int | None:
        """For a generic with one result, a slot (None unless `CompiledCodelet.into` runs the
        codelet) for the array its result goes into."""
        if len(results) != 1:
            return None
        self.template.append(None)
        return len(self.template) - 1

    @staticmethod
    def _extents(op: ir.OpView) -> tuple[int, ...]:
        try:
            return loop_extents(op)
        except IpuError as error:
            raise CodeletError(error.message, error.location) from None

    def _viewer(self, op: ir.OpView, forms: list, shape: tuple[int, ...], loops: tuple[int, ...]):
        """The view of an input over the iteration space; None when the map is the identity.
        The linalg verifier bounds the maps too, but a strided view reading past its array
        would read foreign memory, so this checks again."""
        for (coefficients, constant), size in zip(forms, shape):
            if min(coefficients, default=0) < 0 or constant < 0 or constant + sum(c * (e - 1) for c, e in zip(coefficients, loops)) >= size:
                raise _error(op, f"has an indexing map reading outside its operand of shape {shape}")
        if [_loop_of(form) for form in forms] == list(range(len(loops))):
            return None
        terms = [[(self.batch + axis, c[loop]) for axis, (c, _) in enumerate(forms) if c[loop]] for loop in range(len(loops))]
        return _viewer(terms, tuple(constant for _, constant in forms), loops, self.batch)

    def _layout(self, op: ir.OpView, forms: list, parallel: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """An output's map as transposes between its dimensions and the parallel loops in
        loop order (init -> loops, loops -> result); the map must permute the parallel loops."""
        dims = [_loop_of(form) for form in forms]
        if None in dims or sorted(dims) != parallel:
            raise _error(op, "has an output indexing map that is not a permutation of its parallel loops")
        batch = self.batch
        return (*range(batch), *(batch + dims.index(loop) for loop in parallel)), (
            *range(batch),
            *(batch + parallel.index(d) for d in dims),
        )

    def _reductions(self, block: ir.Block, n_in: int) -> list[_Reduction] | None:
        """Each output's `yield combine(f, out)` if its combiner is associative and `out` is
        used nowhere else; None (step through the reduction points) unless all outputs are."""
        yield_op = block.operations[len(block.operations) - 1]
        found = []
        for index, yielded in enumerate(yield_op.operands):
            out, combine = block.arguments[n_in + index], yielded.owner
            if isinstance(combine, ir.Block) or len(list(out.uses)) != 1 or len(list(yielded.uses)) != 1:
                return None
            operands = list(combine.operands)
            if len(operands) != 2 or (operands[0] == out) == (operands[1] == out):
                return None
            name, dtype = combine.operation.name, self._dtype(yielded, combine)
            reduce = reducer(name, dtype)
            if reduce is None:
                return None
            f = operands[1] if operands[0] == out else operands[0]
            kernel = elementwise_kernel(name, [dtype, dtype], dtype, None)
            found.append(_Reduction(combine.operation, f, reduce, kernel, operands[0] == out, out_kernel(kernel, [dtype, dtype], dtype)))
        return found

    def _body(
        self, block: ir.Block, skip: list[ir.Operation], wanted: list[ir.Value]
    ) -> tuple[list[Step], list[tuple[int, int]], list[int], list[int], set[int]]:
        """A generic's body as steps (but the ops in `skip`), with the adapters giving values
        from outside it (scalars: batch axes only) the body's rank, the slots to free after
        a run, the slots of the `wanted` values, and those of the block arguments whose buffers
        the body may overwrite once read (every reader an `Op`: runtime/inplace.py)."""
        local = set(block.arguments)
        saved: dict[ir.Value, int] = {}
        adapters: list[tuple[int, int]] = []
        steps: list[Step] = []
        terminator = block.operations[len(block.operations) - 1]
        plans, last = plan_ops(block, skip)
        for op in block.operations:
            for value in op.operands:
                if value not in local and value not in saved and self.template[self._slot(value, op)] is None:
                    saved[value] = self.slots[value]
                    adapters.append((saved[value], self._define(value)))
            result = op.results[0] if len(op.results) == 1 else None
            if result is not None and result in plans:
                kernel, operands = plans[result]
                if kernel is not None:  # None: a compare run by its select
                    dying = tuple(dict.fromkeys(self.slots[v] for v in operands if v in last and last[v] == result))
                    slots = tuple(self._slot(v, op) for v in operands)
                    steps.append(Op(kernel, slots, self._define(result), self._dtype(result, op), dying))
            elif op.operation != terminator.operation and not any(op.operation == s for s in skip):
                self._op(op, steps, {"arith.constant": self._constant, "cf.assert": self._assert})
            local.update(op.results)
        wanted_slots = [self._slot(v, terminator) for v in wanted]
        temporaries = [self.slots[v] for v in local if v in self.slots and self.template[self.slots[v]] is None]
        temporaries += [inner for _, inner in adapters]
        arguments = {self.slots[a] for a in block.arguments if a in last}
        self.slots.update(saved)
        return steps, adapters, temporaries, wanted_slots, arguments
