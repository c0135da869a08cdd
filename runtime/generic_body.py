"""`linalg.generic` in codelets (runtime/codelet.py's compiler plans the rest of a body).

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
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects.ops.out_kernels import out_kernel
from ipu_mlir.dialects.ops.semantics import elementwise_kernel, reducer
from ipu_mlir.dialects.ops.space import loop_extents
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.element_types import as_strided

from .fused import Fused
from .inplace import Compare, Env, Op, Select, broadcast_shape, plan_ops, run_body
from .reduce import fold

FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # the selects a compiled pass takes
DENSE = 8  # a generic's input repeated along loops is made dense if shared by this many tiles
KEPT_VIEWS = 64  # views a viewer keeps: one per vertex group calling it (BERT-12: 12)
Step = Callable[[Env], None]


# --- Errors and IR helpers, runtime/codelet.py's too ------------------------------------------------


class CodeletError(IpuError):
    """A codelet the runtime cannot run (unsupported op or form), or a call with wrong inputs."""


def error_at(op: ir.OpView | ir.Operation, message: str) -> CodeletError:
    return CodeletError(f"'{op.operation.name}' op {message}", op.operation.location)


def shape_of(value: ir.Value) -> tuple[int, ...]:
    return tuple(ir.ShapedType(value.type).shape) if isinstance(value.type, ir.ShapedType) else ()


def segments(op: ir.OpView) -> tuple[int, ...]:
    return tuple(ir.DenseI32ArrayAttr(op.attributes["operandSegmentSizes"]))


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
    `sum(c * stride[axis] for axis, c in terms[i])` bytes, from element `offsets`. The views of
    the arrays it was given are kept (up to KEPT_VIEWS): a later run passes each vertex group's
    own views, the same arrays each run (steps.VertexGroup.prepare), and as_strided costs 8 us
    a call (zoo BERT-12 makes 576 a run). Several groups may call one viewer: codelets of equal
    bodies share their compiled plan (runtime/planner.py), BERT-12's 12 layers one plan."""
    start = (slice(None),) * batch + tuple(slice(o, None) for o in offsets) if any(offsets) else None
    kept: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # id(array) -> (array, its view)

    def view(x: np.ndarray) -> np.ndarray:
        found = kept.get(id(x))
        if found is not None and found[0] is x:
            return found[1]
        base = x if start is None else x[start]
        strides = base.strides
        loop_strides = tuple(sum(c * strides[axis] for axis, c in axis_terms) for axis_terms in terms)
        made = as_strided(base, (*base.shape[:batch], *loops), (*strides[:batch], *loop_strides), writeable=False)
        if len(kept) >= KEPT_VIEWS:  # arrays new each run (gathered inputs) would pile up
            kept.clear()
        kept[id(x)] = (x, made)
        return made

    return view


def _full(value: np.ndarray, loops: tuple[int, ...], batch: int) -> np.ndarray:
    """A body value (broadcastable to (*batch, *loops)) spread over every loop, keeping its
    own batch axes: reductions must see repeated elements repeated."""
    if value.ndim < batch + len(loops):
        value = value.reshape((1,) * (batch + len(loops)))
    if value.shape[batch:] == loops:  # spread already: what np.broadcast_to gives, at a tenth of its cost (5-20 us)
        view = value.view()
        view.flags.writeable = False  # as a broadcast: `_writable` must not take a view of the body's value
        return view
    return np.broadcast_to(value, (*value.shape[:batch], *loops))


def same_view(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether `a` and `b` see the same elements at the same indices."""
    return a.shape == b.shape and a.strides == b.strides and a.__array_interface__["data"][0] == b.__array_interface__["data"][0]


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


class GenericBodies:
    """The `linalg.generic` steps of runtime/codelet.py's compiler, which this is a base of:
    it gives the slots (`slots`, `template`, `_slot`, `_define`, `_dtype`), the batch rank
    (`batch`), the steps of a body's other ops (`_op`, `_constant`, `_assert`), the results of
    generics that are arrays of their own (`fresh`) and the generic writing the codelet's result
    (`sink`)."""

    def _generic(self, op: ir.OpView) -> Step:
        n_in, _ = segments(op)
        operands = list(op.operands)
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
        kinds = [str(k).split("<")[-1].rstrip(">") for k in ir.ArrayAttr(op.attributes["iterator_types"])]
        linear = [[_linear(e, len(kinds)) for e in m.results] for m in maps]
        for forms, amap in zip(linear, maps):
            if None in forms:
                raise error_at(op, f"has indexing map {amap}, which codelets do not support (only linear maps)")
        loops = self._extents(op)
        viewers = [self._viewer(op, forms, shape_of(v), loops) for forms, v in zip(linear[:n_in], operands[:n_in])]
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

        def bind(env: Env, dense: bool = True) -> tuple[list[np.ndarray], tuple[int, ...]]:
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
            if not dense:  # a compiled pass (runtime/fused.py) reads a repeated element as fast
                return views, tiles
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
                self.sink = (results[0], sink, self._dtype(op.results[0], op), reduce_step, False)
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
        fused = Fused.plan(steps, self.template, wanted_slots) if len(results) == 1 else None
        dtype = None if fused is None else self._dtype(op.results[0], op)
        in_order = to_dest == tuple(range(len(to_dest)))  # the sink's array as it is: the same view each run (Fused._flat keeps it)

        def enter(env: Env, dense: bool = True) -> tuple[tuple[int, ...], np.ndarray | None]:
            """The inputs and the outputs' inits put in `env` over the iteration space; the
            batch shape and the sink's array (None without one)."""
            views, tiles = bind(env, dense)
            for slot, view in zip(in_args, views):
                env[slot] = view
            for slot, init, (to_parallel, _) in zip(out_args, inits, layouts):
                env[slot] = env[init].transpose(to_parallel)
            return tiles, None if sink is None else env[sink]

        def fused_step(env: Env) -> bool:
            """The body as one compiled pass into the sink's array or a new one; False, having
            written nothing, when it does not take the layout. An input that is the sink's
            array seen the same way is read element by element before each is written; one
            seen otherwise (transposed, broadcast) is not run here."""
            tiles, output = enter(env, dense=False)
            value = np.empty((*tiles, *extents), dtype) if output is None else output if in_order else output.transpose(to_dest)
            operands = [env[slot] for slot in fused.inputs]
            if output is not None and any(np.may_share_memory(value, x) and not same_view(value, x) for x in operands):
                return False
            if not fused(operands, value):
                return False
            env[results[0]] = output if output is not None else value.transpose(layouts[0][1])
            clear(env)
            return True

        def parallel_step(env: Env) -> None:
            if fused is not None and fused_step(env):
                return
            tiles, output = enter(env)
            owned = {slot for slot in owned_inputs if env[slot].flags.writeable}
            dest = None if output is None else output.transpose(to_dest)
            # an output that is also an input (an update in place): the body's values made aside, then copied
            free = [] if dest is None or any(np.may_share_memory(dest, env[slot]) for slot in in_args) else [dest]
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
            self.sink = (results[0], sink, self._dtype(op.results[0], op), parallel_step, True)
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
                raise error_at(op, f"has an indexing map reading outside its operand of shape {shape}")
        if [_loop_of(form) for form in forms] == list(range(len(loops))):
            return None
        terms = [[(self.batch + axis, c[loop]) for axis, (c, _) in enumerate(forms) if c[loop]] for loop in range(len(loops))]
        return _viewer(terms, tuple(constant for _, constant in forms), loops, self.batch)

    def _layout(self, op: ir.OpView, forms: list, parallel: list[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """An output's map as transposes between its dimensions and the parallel loops in
        loop order (init -> loops, loops -> result); the map must permute the parallel loops."""
        dims = [_loop_of(form) for form in forms]
        if None in dims or sorted(dims) != parallel:
            raise error_at(op, "has an output indexing map that is not a permutation of its parallel loops")
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

    def _select(self, op: ir.OpView) -> Select | None:
        """An `arith.select` of floats on an i1 as a `Select` step (runtime/fused.py takes it), else None."""
        if op.operation.name != "arith.select":
            return None
        dtypes = [self._dtype(v, op) for v in op.operands]
        if dtypes[0] != np.bool_ or dtypes[1] not in FLOATS or dtypes[2] != dtypes[1]:
            return None
        slots = tuple(self._slot(v, op) for v in op.operands)
        return Select(elementwise_kernel("arith.select", dtypes, dtypes[1], None), slots, self._define(op.results[0]), dtypes[1])

    def _compare(self, op: ir.OpView, plans: dict) -> Compare | None:
        """An `arith.cmpf` of floats whose every reader is a select choosing between its
        float values (`_select`), and that no select folded into a max or min, as a `Compare`
        step (runtime/fused.py runs it with them), else None."""
        if op.operation.name != "arith.cmpf" or plans.get(op.results[0], (True,))[0] is None:
            return None
        dtypes = [self._dtype(v, op) for v in op.operands]
        uses = [use.owner for use in op.results[0].uses]
        if dtypes[0] not in FLOATS or dtypes[1] != dtypes[0] or not uses:
            return None
        if any(user.operation.name != "arith.select" or self._dtype(user.results[0], user) not in FLOATS for user in uses):
            return None
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value
        slots = tuple(self._slot(v, op) for v in op.operands)
        kernel = elementwise_kernel("arith.cmpf", dtypes, np.dtype(np.bool_), predicate)
        return Compare(kernel, slots, self._define(op.results[0]), dtypes[0], predicate)

    def _fold(self, op: ir.OpView, steps: list[Step], count: int) -> None:
        """The one step `_op` just added for an arith or math op of constants only (a momentum's
        f64 constant truncated to f32) run now, its value a constant of the body: compiled
        passes take constants, not casts."""
        if len(steps) != count + 1 or len(op.results) != 1 or not op.operands or not op.operation.name.startswith(("arith.", "math.")):
            return
        if all(self.template[self._slot(v, op)] is not None for v in op.operands):
            with np.errstate(all="ignore"):
                steps.pop()(self.template)

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
            compare = self._compare(op, plans)
            if compare is not None:
                steps.append(compare)
            elif result is not None and result in plans:
                kernel, operands = plans[result]
                if kernel is not None:  # None: a compare run by its select
                    dying = tuple(dict.fromkeys(self.slots[v] for v in operands if v in last and last[v] == result))
                    slots = tuple(self._slot(v, op) for v in operands)
                    steps.append(Op(kernel, slots, self._define(result), self._dtype(result, op), dying))
            elif op.operation != terminator.operation and not any(op.operation == s for s in skip):
                choice = self._select(op)
                if choice is not None:
                    steps.append(choice)
                else:
                    count = len(steps)
                    self._op(op, steps, {"arith.constant": self._constant, "cf.assert": self._assert})
                    self._fold(op, steps, count)
            local.update(op.results)
        wanted_slots = [self._slot(v, terminator) for v in wanted]
        temporaries = [self.slots[v] for v in local if v in self.slots and self.template[self.slots[v]] is None]
        temporaries += [inner for _, inner in adapters]
        arguments = {self.slots[a] for a in block.arguments if a in last}
        self.slots.update(saved)
        return steps, adapters, temporaries, wanted_slots, arguments
