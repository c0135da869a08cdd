"""Codelets run by numpy, for many tiles at once: the simulator's compute hot path.

    kernel = compile_codelet(func_op)      # walks the IR once into a plan of bound kernels
    y, = kernel([x])                       # x: (T, *arg shape) -> y: (T, *result shape)

A vertex group runs one codelet on T tiles; the simulator makes that one call, so every value
carries the tile axis in front and each op is one numpy operation over all tiles: no Python
loop over tiles or elements (the one loop left is over the reduction points of a
`linalg.generic` whose combiner is not associative).

**Plan, then run.** `compile_codelet` reads every attribute once and turns each op into a
closure over slots of a value list; a call only runs the closures. An op the codelet contract
(docs/contracts.md, L1 and L3) does not list is a `CodeletError` at compile time.

**Values.** A tensor of shape S is an array of shape (T, *S), a scalar one of shape (T,).
Constants are unbatched: leading axis 1, broadcast by numpy against the tiles' values; a value
has T rows only if it depends on an input, and results are broadcast to T at the end. Values
may be read-only views of others (a transpose or broadcast in a `linalg.generic` copies
nothing); results are writable, and a result passing an input through is that input.
Element-wise semantics (integer wrap-around, division, f16, NaN) are those of
`runtime/codelet_ops.py`; `ipu.matmul` and `ipu.conv` on f16 accumulate in f32 and round once.

**linalg.generic** views each operand through its indexing map as one strided array over the
iteration space (tiles, *loops): projected permutations, broadcasts, constant indices and
pooling windows `s * d_out + k * d_win` alike. The body then runs once, element-wise over that
space. A reduction `yield combine(f(ins), out)` with an associative combiner evaluates `f`
everywhere and reduces it with the combiner's ufunc; any other body steps through the
reduction points, still vectorised over tiles and parallel loops.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir
from numpy.lib.stride_tricks import as_strided

from ipu_mlir.dialects.diagnostics import IpuError

from .codelet_ops import Kernel, cast_signed, elementwise_kernel, numpy_dtype, reducer

Env = list  # the values of a call, by slot
Step = Callable[[Env], None]


class CodeletError(IpuError):
    """A codelet the runtime cannot run (unsupported op or form), or a call with wrong inputs."""


def _error(op: ir.OpView | ir.Operation, message: str) -> CodeletError:
    return CodeletError(f"'{op.operation.name}' op {message}", op.operation.location)


def _unsupported(op: ir.OpView | ir.Operation) -> CodeletError:
    return CodeletError(f"'{op.operation.name}' is not supported in codelets", op.operation.location)


@dataclass
class CompiledCodelet:
    """A codelet as a plan: call it with one (T, *shape) array per argument."""

    name: str
    arguments: list[tuple[tuple[int, ...], np.dtype]]  # shape and dtype of each argument
    results: list[tuple[int, tuple[int, ...]]]  # slot and shape of each result
    ops: list[tuple[str, str]]  # each op of the body and its result types, for cost models
    _template: list  # the value list before a call: constants filled in
    _steps: list[Step]

    def __call__(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        if len(inputs) != len(self.arguments):
            raise CodeletError(f"codelet @{self.name} takes {len(self.arguments)} arguments, got {len(inputs)}")
        tiles = inputs[0].shape[0] if inputs else 1
        for index, (value, (shape, dtype)) in enumerate(zip(inputs, self.arguments)):
            if value.shape != (tiles, *shape) or value.dtype != dtype:
                raise CodeletError(f"codelet @{self.name} argument #{index} expects ({tiles}, {shape}) {dtype}, got {value.shape} {value.dtype}")
        env = list(self._template)
        env[: len(inputs)] = inputs
        with np.errstate(all="ignore"):  # poison (division by zero, invalid casts) is not an error
            for step in self._steps:
                step(env)
        results = []
        for slot, shape in self.results:
            value = env[slot] if env[slot].shape[0] == tiles else np.broadcast_to(env[slot], (tiles, *shape))
            results.append(np.require(value, requirements=["C", "W"]))  # views of constants or broadcasts: copied
        return results


def compile_codelet(func_op: ir.OpView) -> CompiledCodelet:
    """The plan of the codelet `func_op`, a `func.func` on tensors; CodeletError if any op of
    its body is outside the codelet contract."""
    return _Compiler().function(func_op)


# --- Helpers on types and attributes -----------------------------------------------------------


def _shape(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.ShapedType(value.type).shape) if isinstance(value.type, ir.ShapedType) else ()


def _element_type(value: ir.Value) -> ir.Type:
    return ir.ShapedType(value.type).element_type if isinstance(value.type, ir.ShapedType) else value.type


def _i64s(op: ir.OpView, name: str) -> tuple[int, ...]:
    return tuple(ir.DenseI64ArrayAttr(op.attributes[name]))


def _segments(op: ir.OpView) -> tuple[int, ...]:
    return tuple(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


def _slices(op: ir.OpView) -> tuple[slice, ...]:
    """The static slice of an extract_slice / insert_slice, tile axis first."""
    if any(_segments(op)[-3:]):
        raise _error(op, "has dynamic offsets, sizes or strides, which codelets do not support")
    triples = zip(_i64s(op, "static_offsets"), _i64s(op, "static_sizes"), _i64s(op, "static_strides"))
    return (slice(None),) + tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in triples)


def _resource_bytes(attr: ir.Attribute, op: ir.OpView) -> bytes:
    """The blob behind a `dense_resource` attribute. The Python API cannot read blobs, but a
    module printed with an attribute naming one prints the blob (hex, after a 4-byte
    alignment) in its `dialect_resources` section; a scratch module holds just this one."""
    with attr.context, ir.Location.unknown():
        scratch = ir.Module.create()
        scratch.operation.attributes["blob"] = attr
        text = str(scratch)
    found = re.search(r'"0x([0-9A-Fa-f]*)"', text[text.find("{-#") :]) if "{-#" in text else None
    if found is None:
        raise _error(op, f"reads {attr}, whose blob is not available")
    return bytes.fromhex(found.group(1))[4:]


def _constant(op: ir.OpView, dtype: np.dtype) -> np.ndarray:
    """The value of an arith.constant, with the leading unbatched axis."""
    attr, shape = op.attributes["value"], _shape(op.results[0])
    if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr, ir.BoolAttr)):
        return np.array([attr.value], dtype)
    if isinstance(attr, ir.DenseElementsAttr):
        array = np.array(attr)
    else:
        try:
            resource = ir.DenseResourceElementsAttr(attr)
        except ValueError:
            raise _error(op, f"has a value the runtime cannot read: {attr}") from None
        array = np.frombuffer(_resource_bytes(resource, op), dtype)
    if array.dtype != dtype or array.size != math.prod(shape):
        raise _error(op, f"has a value the runtime cannot read as {math.prod(shape)} x {dtype}: {attr}")
    return array.reshape(1, *shape)


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


def _viewer(terms: list[list[tuple[int, int]]], offsets: tuple[int, ...], loops: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    """A function viewing an operand (tiles, *shape) as (tiles, *loops): loop `i` steps
    `sum(c * stride[axis] for axis, c in terms[i])` bytes, from element `offsets`."""
    start = (slice(None),) + tuple(slice(o, None) for o in offsets) if any(offsets) else None

    def view(x: np.ndarray) -> np.ndarray:
        base = x if start is None else x[start]
        strides = base.strides
        loop_strides = tuple(sum(c * strides[axis] for axis, c in axis_terms) for axis_terms in terms)
        return as_strided(base, (base.shape[0], *loops), (strides[0], *loop_strides), writeable=False)

    return view


def _full(value: np.ndarray, loops: tuple[int, ...]) -> np.ndarray:
    """A body value (broadcastable to (tiles, *loops)) spread over every loop, keeping its
    own tile axis: reductions must see repeated elements repeated."""
    if value.ndim < len(loops) + 1:
        value = value.reshape((1,) * (len(loops) + 1))
    return np.broadcast_to(value, (value.shape[0], *loops))


@dataclass
class _Reduction:
    """`yield combine(f, out)` for one output, evaluated by reducing f over the reduction loops."""

    combine_op: ir.Operation
    f: ir.Value
    reduce: Callable[[np.ndarray, tuple[int, ...]], np.ndarray]
    combine: Callable[[np.ndarray, np.ndarray], np.ndarray]
    init_first: bool  # combine(out, f) rather than combine(f, out)


# --- The compiler ------------------------------------------------------------------------------


class _Compiler:
    """Walks a codelet once: gives every SSA value a slot of the value list and every op a
    step; constants go into the template list instead of steps."""

    def __init__(self) -> None:
        self.slots: dict[ir.Value, int] = {}
        self.template: list = []
        self.handlers: dict[str, Callable[[ir.OpView], Step | None]] = {
            "arith.constant": self._constant,
            "tensor.empty": self._empty,
            "linalg.fill": self._fill,
            "linalg.generic": self._generic,
            "ipu.matmul": self._matmul,
            "ipu.conv": self._conv,
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
        steps: list[Step] = []
        ops: list[tuple[str, str]] = []
        for op in block.operations:
            ops.append((op.operation.name, ", ".join(str(r.type) for r in op.results)))
            if op.operation.name == "func.return":
                results = [(self._slot(v, op), _shape(v)) for v in op.operands]
                return CompiledCodelet(name, arguments, results, ops, self.template, steps)
            self._op(op, steps, self.handlers)
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
        self._define(op.results[0], _constant(op, self._dtype(op.results[0], op)))

    def _elementwise(self, op: ir.OpView) -> Step:
        name, result = op.operation.name, op.results[0]
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value if name in ("arith.cmpf", "arith.cmpi") else None
        kernel = elementwise_kernel(name, [self._dtype(v, op) for v in op.operands], self._dtype(result, op), predicate)
        if kernel is None:
            raise _unsupported(op)
        if name == "arith.select" and not isinstance(op.operands[0].type, ir.ShapedType) and isinstance(result.type, ir.ShapedType):
            ones = (1,) * len(_shape(result))  # a scalar condition choosing whole tensors
            kernel = lambda c, a, b: np.where(c.reshape(c.shape[0], *ones), a, b)  # noqa: E731
        slots, out = [self._slot(v, op) for v in op.operands], self._define(result)
        if len(slots) == 1:
            (a,) = slots
            return lambda env: env.__setitem__(out, kernel(env[a]))
        if len(slots) == 2:
            a, b = slots
            return lambda env: env.__setitem__(out, kernel(env[a], env[b]))
        return lambda env: env.__setitem__(out, kernel(*[env[s] for s in slots]))

    # Tensor ops.

    def _empty(self, op: ir.OpView) -> None:
        """Zeros: an empty tensor only gives its shape to `outs`, which are overwritten."""
        result = op.results[0]
        self._define(result, np.broadcast_to(np.zeros((), self._dtype(result, op)), (1, *_shape(result))))

    def _fill(self, op: ir.OpView) -> Step:
        """The scalar (cast_signed to the element type, as linalg.fill does) broadcast: a view."""
        value, result = op.operands[0], op.results[0]
        convert, shape = cast_signed(self._dtype(value, op), self._dtype(result, op)), _shape(result)
        source, out, ones = self._slot(value, op), self._define(result), (1,) * len(shape)

        def step(env: Env) -> None:
            scalar = convert(env[source])
            env[out] = np.broadcast_to(scalar.reshape(scalar.shape[0], *ones), (scalar.shape[0], *shape))

        return step

    def _reshape(self, op: ir.OpView) -> Step:
        shape, source, out = _shape(op.results[0]), self._slot(op.operands[0], op), self._define(op.results[0])
        return lambda env: env.__setitem__(out, env[source].reshape(env[source].shape[0], *shape))

    def _extract_slice(self, op: ir.OpView) -> Step:
        index, shape = _slices(op), _shape(op.results[0])
        source, out = self._slot(op.operands[0], op), self._define(op.results[0])
        return lambda env: env.__setitem__(out, env[source][index].reshape(env[source].shape[0], *shape))

    def _insert_slice(self, op: ir.OpView) -> Step:
        index, sizes = _slices(op), _i64s(op, "static_sizes")
        dest_shape, dtype = _shape(op.results[0]), self._dtype(op.results[0], op)
        source, dest, out = self._slot(op.operands[0], op), self._slot(op.operands[1], op), self._define(op.results[0])

        def step(env: Env) -> None:
            piece, into = env[source], env[dest]
            result = np.empty((max(piece.shape[0], into.shape[0]), *dest_shape), dtype)
            result[...] = into
            result[index] = piece.reshape(piece.shape[0], *sizes)
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
        interior = (slice(None),) + tuple(slice(lo, size - hi) for lo, size, hi in zip(low, shape, high))
        ones = (1,) * len(shape)
        source, out = self._slot(op.operands[0], op), self._define(op.results[0])

        def step(env: Env) -> None:
            for inner_step in steps:
                inner_step(env)
            value, piece = env[pad_value], env[source]
            result = np.empty((max(value.shape[0], piece.shape[0]), *shape), dtype)
            result[...] = value.reshape(value.shape[0], *ones)
            result[interior] = piece
            env[out] = result

        return step

    def _concat(self, op: ir.OpView) -> Step:
        axis = 1 + ir.IntegerAttr(op.attributes["dim"]).value
        sources, out = [self._slot(v, op) for v in op.operands], self._define(op.results[0])

        def step(env: Env) -> None:
            pieces = [env[s] for s in sources]
            tiles = max(p.shape[0] for p in pieces)
            env[out] = np.concatenate([np.broadcast_to(p, (tiles, *p.shape[1:])) for p in pieces], axis=axis)

        return step

    # Matmul and convolution.

    def _accumulation(self, op: ir.OpView) -> tuple[Kernel, Kernel]:
        """How operands enter a sum of products in the result's element type (linalg's
        cast_signed; f16 sums in f32 and i1 ones in i64, both rounded once) and how it leaves."""
        operand, result = self._dtype(op.operands[0], op), self._dtype(op.results[0], op)
        accumulator = np.dtype({np.float16: np.float32, np.bool_: np.int64}.get(result.type, result))
        return cast_signed(operand, accumulator), cast_signed(accumulator, result)

    def _matmul(self, op: ir.OpView) -> Step:
        enter, leave = self._accumulation(op)
        lhs, rhs, out = self._slot(op.operands[0], op), self._slot(op.operands[1], op), self._define(op.results[0])
        return lambda env: env.__setitem__(out, leave(np.matmul(enter(env[lhs]), enter(env[rhs]))))

    def _conv(self, op: ir.OpView) -> Step:
        """im2col: the input's windows, one strided view, copied into (tiles, n, groups,
        c/groups * kh * kw, oh * ow) columns that each group's filter matrix multiplies. This
        layout copies rows of `ow` elements and needs no transpose after the product: twice
        as fast as (oh * ow, taps) columns on 1,472 tiles."""
        (sh, sw), (dh, dw), (top, left, bottom, right) = _i64s(op, "strides"), _i64s(op, "dilations"), _i64s(op, "padding")
        groups = ir.IntegerAttr(op.attributes["groups"]).value
        (n, c, h, w), (f, cg, kh, kw), result_shape = _shape(op.operands[0]), _shape(op.operands[1]), _shape(op.results[0])
        oh, ow = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1, (w + left + right - dw * (kw - 1) - 1) // sw + 1
        if c != cg * groups or f % groups or result_shape != (n, f, oh, ow):
            raise _error(op, f"has inconsistent shapes {_shape(op.operands[0])} * {(f, cg, kh, kw)} -> {result_shape} (groups {groups})")
        enter, leave = self._accumulation(op)
        fg, taps = f // groups, cg * kh * kw
        padded = (n, c, h + top + bottom, w + left + right)
        source, weights, out = self._slot(op.operands[0], op), self._slot(op.operands[1], op), self._define(op.results[0])

        def step(env: Env) -> None:
            x, k = enter(env[source]), enter(env[weights])
            if top or left or bottom or right:
                xp = np.zeros((x.shape[0], *padded), x.dtype)
                xp[:, :, :, top : top + h, left : left + w] = x
            else:
                xp = x
            s = xp.strides
            windows = as_strided(
                xp,
                (x.shape[0], n, groups, cg, kh, kw, oh, ow),
                (s[0], s[1], cg * s[2], s[2], dh * s[3], dw * s[4], sh * s[3], sw * s[4]),
                writeable=False,
            )
            columns = windows.reshape(x.shape[0], n, groups, taps, oh * ow)
            product = np.matmul(k.reshape(k.shape[0], 1, groups, fg, taps), columns)  # (tiles, n, groups, fg, oh * ow)
            env[out] = leave(product.reshape(product.shape[0], n, f, oh, ow))

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
        loops = self._loops(op, linear, [_shape(v) for v in operands], len(kinds))
        viewers = [self._viewer(op, forms, _shape(v), loops) for forms, v in zip(linear[:n_in], operands[:n_in])]
        parallel = [i for i, kind in enumerate(kinds) if kind == "parallel"]
        layouts = [self._layout(op, forms, parallel) for forms in linear[n_in:]]
        block = op.regions[0].blocks[0]
        yield_op = block.operations[len(block.operations) - 1]
        reductions = self._reductions(block, n_in) if len(parallel) < len(kinds) else None
        in_args = [self._define(a) for a in list(block.arguments)[:n_in]]
        out_args = [self._define(a) for a in list(block.arguments)[n_in:]]
        wanted = [r.f for r in reductions] if reductions is not None else list(yield_op.operands)  # f or yield
        steps, adapters, temporaries, wanted_slots = self._body(block, [r.combine_op for r in reductions or []], wanted)
        inputs, inits = [self._slot(v, op) for v in operands[:n_in]], [self._slot(v, op) for v in operands[n_in:]]
        results = [self._define(r) for r in op.results]
        ones = (1,) * (len(loops) if reductions is not None else len(parallel))
        combiners = [(r.reduce, r.combine, r.init_first) for r in reductions or []]  # no IR in closures

        def bind(env: Env) -> tuple[list[np.ndarray], int]:
            """The inputs over the iteration space, outside values at the body's rank, and
            the tile count of the results."""
            views = [env[s] if view is None else view(env[s]) for s, view in zip(inputs, viewers)]
            for outer, inner in adapters:
                env[inner] = env[outer].reshape(env[outer].shape[0], *ones)
            tiles = max([v.shape[0] for v in views] + [env[s].shape[0] for s in inits + [outer for outer, _ in adapters]])
            return views, tiles

        def clear(env: Env) -> None:
            for slot in temporaries:
                env[slot] = None

        if reductions is not None:
            axes = tuple(1 + i for i, kind in enumerate(kinds) if kind != "parallel")

            def reduce_step(env: Env) -> None:
                views, _ = bind(env)
                for slot, view in zip(in_args, views):
                    env[slot] = view
                for step in steps:
                    step(env)
                for (reduce, combine, init_first), f, init, (to_parallel, from_parallel), out in zip(combiners, wanted_slots, inits, layouts, results):
                    reduced, start = reduce(_full(env[f], loops), axes), env[init].transpose(to_parallel)
                    env[out] = (combine(start, reduced) if init_first else combine(reduced, start)).transpose(from_parallel)
                clear(env)

            return reduce_step

        extents = tuple(loops[i] for i in parallel)
        ranges = [[slice(None)] if kind == "parallel" else range(extent) for extent, kind in zip(loops, kinds)]
        points = [(slice(None), *point) for point in itertools.product(*ranges)]

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
                env[out] = np.broadcast_to(accumulator, (tiles, *extents)).transpose(from_parallel)
            clear(env)

        return loop_step

    def _loops(self, op: ir.OpView, linear: list, shapes: list[tuple[int, ...]], count: int) -> tuple[int, ...]:
        """Each loop's extent: the size of an operand dimension indexed by that loop alone."""
        extents: list[int | None] = [None] * count
        for forms, shape in zip(linear, shapes):
            for form, size in zip(forms, shape):
                loop = _loop_of(form)
                if loop is not None and extents[loop] is None:
                    extents[loop] = size
        if None in extents:
            raise _error(op, "has a loop whose extent no operand dimension gives")
        return tuple(extents)

    def _viewer(self, op: ir.OpView, forms: list, shape: tuple[int, ...], loops: tuple[int, ...]):
        """The view of an input over the iteration space; None when the map is the identity.
        The linalg verifier bounds the maps too, but a strided view reading past its array
        would read foreign memory, so this checks again."""
        for (coefficients, constant), size in zip(forms, shape):
            if min(coefficients, default=0) < 0 or constant < 0 or constant + sum(c * (e - 1) for c, e in zip(coefficients, loops)) >= size:
                raise _error(op, f"has an indexing map reading outside its operand of shape {shape}")
        if [_loop_of(form) for form in forms] == list(range(len(loops))):
            return None
        terms = [[(1 + axis, c[loop]) for axis, (c, _) in enumerate(forms) if c[loop]] for loop in range(len(loops))]
        return _viewer(terms, tuple(constant for _, constant in forms), loops)

    def _layout(self, op: ir.OpView, forms: list, parallel: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """An output's map as transposes between its dimensions and the parallel loops in
        loop order (init -> loops, loops -> result); the map must permute the parallel loops."""
        dims = [_loop_of(form) for form in forms]
        if None in dims or sorted(dims) != parallel:
            raise _error(op, "has an output indexing map that is not a permutation of its parallel loops")
        return (0, *(1 + dims.index(loop) for loop in parallel)), (0, *(1 + parallel.index(d) for d in dims))

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
            found.append(_Reduction(combine.operation, f, reduce, elementwise_kernel(name, [dtype, dtype], dtype, None), operands[0] == out))
        return found

    def _body(self, block: ir.Block, skip: list[ir.Operation], wanted: list[ir.Value]) -> tuple[list[Step], list[tuple[int, int]], list[int], list[int]]:
        """A generic's body as steps (but the ops in `skip`), with the adapters giving values
        from outside it (scalars of shape (tiles,)) the body's rank, the slots to free after
        a run, and the slots of the `wanted` values."""
        local = set(block.arguments)
        saved: dict[ir.Value, int] = {}
        adapters: list[tuple[int, int]] = []
        steps: list[Step] = []
        terminator = block.operations[len(block.operations) - 1]
        for op in block.operations:
            for value in op.operands:
                if value not in local and value not in saved and self.template[self._slot(value, op)] is None:
                    saved[value] = self.slots[value]
                    adapters.append((saved[value], self._define(value)))
            if op.operation != terminator.operation and not any(op.operation == s for s in skip):
                self._op(op, steps, {"arith.constant": self._constant})
            local.update(op.results)
        wanted_slots = [self._slot(v, terminator) for v in wanted]
        temporaries = [self.slots[v] for v in local if v in self.slots and self.template[self.slots[v]] is None]
        temporaries += [inner for _, inner in adapters]
        self.slots.update(saved)
        return steps, adapters, temporaries, wanted_slots
