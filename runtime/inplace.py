"""Element-wise ops of a `linalg.generic` body writing into buffers the body owns
(runtime/codelet.py plans them; `Op`, `run_body`).

numpy gives every op a new array: a batch norm with ReLU6 over 1.2M floats made eight 4.8 MB
arrays per call, each one's pages faulted in and each pass through memory. An op whose kernel
may write into `out=` with the same bytes (dialects/ops/out_kernels.py: `out_kernel`,
`compare_select`) instead writes into a buffer the body owns and no longer needs: the group's
output view first (then nothing is copied after), else a value dying at this op, else one
freed by an earlier op; a new array only when none fits. A value's buffer is reused only if
every reader of the value is such an op (a kernel returning a view of its operand, a bitcast,
would see it overwritten).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects.ops.out_kernels import compare_select, out_kernel
from ipu_mlir.dialects.ops.semantics import elementwise_kernel, numpy_dtype

Env = list


@dataclass(frozen=True)
class Op:
    """`result = kernel(*operands, out=buffer)` over slots of the value list; `dying` are the
    operands last read here whose buffers may be reused (when the body owns them)."""

    kernel: Callable[..., np.ndarray]
    operands: tuple[int, ...]
    result: int
    dtype: np.dtype
    dying: tuple[int, ...]

    def __call__(self, env: Env) -> None:
        """The op as a plain step, into a new array (bodies stepped through reduction points)."""
        env[self.result] = self.kernel(*[env[s] for s in self.operands])


@dataclass(frozen=True)
class Select:
    """`result = select(condition, a, b)` (semantics.select's bits) of float values, a plain
    step a compiled pass (runtime/fused.py) can take: a momentum update's first-step choice."""

    kernel: Callable[..., np.ndarray]
    operands: tuple[int, int, int]
    result: int
    dtype: np.dtype

    def __call__(self, env: Env) -> None:
        env[self.result] = self.kernel(*[env[s] for s in self.operands])


@dataclass(frozen=True)
class Compare:
    """`result = cmpf(predicate, a, b)` (an i1) of float values read only by `Select`s, a plain
    step a compiled pass (runtime/fused.py) takes with its selects: a ReLU's backward mask."""

    kernel: Callable[..., np.ndarray]
    operands: tuple[int, int]
    result: int
    dtype: np.dtype  # the operands'
    predicate: int  # arith.cmpf's, by its enum value

    def __call__(self, env: Env) -> None:
        env[self.result] = self.kernel(*[env[s] for s in self.operands])


def run_body(env: Env, steps: list, owned: set[int], free: list[np.ndarray]) -> None:
    """Runs `steps` (`Op`s and plain steps) on `env`. `owned`: the slots holding buffers the
    body may overwrite once they die (updated: on return, the results living in such buffers);
    `free`: buffers it may write now, the preferred first."""
    for step in steps:
        if type(step) is not Op:
            step(env)
            continue
        operands = [env[s] for s in step.operands]
        for slot in step.dying:
            if slot in owned:
                owned.discard(slot)
                free.append(env[slot])
        shape = broadcast_shape([x.shape for x in operands])
        out = None
        for index, buffer in enumerate(free):
            if buffer.shape == shape and buffer.dtype == step.dtype:
                out = free.pop(index)
                break
        env[step.result] = step.kernel(*operands, out=out)
        owned.add(step.result)


def broadcast_shape(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    """The shape numpy broadcasts `shapes` to, if they broadcast (else some shape an op given
    an out= of it refuses): np.broadcast_shapes costs 7 us a call, this 2 (700 calls a run)."""
    result = shapes[0]
    for shape in shapes[1:]:
        if shape != result:
            if len(shape) > len(result):
                result, shape = shape, result
            merged = list(result)
            for index, n in enumerate(shape, len(result) - len(shape)):
                if n != 1:
                    merged[index] = n
            result = tuple(merged)
    return result


def plan_ops(block: ir.Block, skip: list[ir.Operation]) -> tuple[dict, dict]:
    """The ops of a generic's body (but those in `skip`) that may write into a given buffer,
    by result: (kernel, operands), a compare folded into its select as (None, ()); and for
    each value whose buffer may be reused (every reader such an op), the result of its last
    reader."""
    ops = [op for op in block.operations if not any(op.operation == s for s in skip)]
    plans: dict[ir.Value, tuple] = {}
    for op in ops:
        if op.operation.name == "arith.select":
            pair = _compare_select(op)
            if pair is not None:
                kernel, x, c, compare = pair
                plans[compare] = (None, ())
                plans[op.results[0]] = (kernel, (x, c))
    for op in ops:
        name = op.operation.name
        if len(op.results) != 1 or op.results[0] in plans or not name.startswith(("arith.", "math.")) or name == "arith.constant":
            continue
        dtypes, result = [_dtype(v) for v in op.operands], _dtype(op.results[0])
        if any(d is None for d in dtypes) or result is None or name == "arith.cmpi":  # not `None in`: np.dtype(np.float64) == None
            continue
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value if name == "arith.cmpf" else None
        kernel = elementwise_kernel(name, dtypes, result, predicate)
        ufunc = None if kernel is None else out_kernel(kernel, dtypes, result)
        if ufunc is not None:
            plans[op.results[0]] = (ufunc, tuple(op.operands))
    readers: dict[ir.Value, list] = {argument: [] for argument in block.arguments}
    for op in ops:
        result = op.results[0] if len(op.results) == 1 else None
        reader = result if result is not None and result in plans else None
        if reader is not None and plans[result][0] is None:  # a folded compare's operands are read by its select
            reader = next(iter(result.uses)).owner.results[0]
        for value in op.operands:
            readers.setdefault(value, []).append(reader)
    order = {op.results[0]: index for index, op in enumerate(block.operations) if len(op.results) == 1}
    reusable = {v: users for v, users in readers.items() if users and all(user is not None and user in plans for user in users)}
    return plans, {v: max(users, key=order.__getitem__) for v, users in reusable.items()}


def _dtype(value: ir.Value) -> np.dtype | None:
    return numpy_dtype(ir.ShapedType(value.type).element_type if isinstance(value.type, ir.ShapedType) else value.type)


# ops whose results are never signaling NaNs: IEEE arithmetic quiets them (out_kernels.compare_select)
_ARITHMETIC = frozenset(["arith.addf", "arith.subf", "arith.mulf", "arith.divf"])


def _compare_select(op: ir.OpView) -> tuple | None:
    """`select(cmpf(x, c), x, c)` (in any order) of a float x and a scalar constant c, the
    compare read by nothing else, as (kernel, x, c, the compare's result) when one max or min
    gives its bytes (out_kernels.compare_select), else None."""
    condition, a, b = op.operands
    compare = condition.owner
    if isinstance(compare, ir.Block) or compare.operation.name != "arith.cmpf" or len(list(condition.uses)) != 1:
        return None
    if {compare.operands[0], compare.operands[1]} != {a, b} or a == b:
        return None
    constants = [v for v in (a, b) if not isinstance(v.owner, ir.Block) and v.owner.operation.name == "arith.constant"]
    if len(constants) != 1 or not isinstance(constants[0].owner.attributes["value"], ir.FloatAttr):
        return None
    c = constants[0]
    x = b if c == a else a
    dtype = _dtype(c)
    if dtype is None or dtype.kind != "f":
        return None
    value = np.array([ir.FloatAttr(c.owner.attributes["value"]).value], dtype)
    quiet = not isinstance(x.owner, ir.Block) and x.owner.operation.name in _ARITHMETIC
    kernel = compare_select(ir.IntegerAttr(compare.attributes["predicate"]).value, compare.operands[0] == x, a == x, value, quiet)
    return None if kernel is None else (kernel, x, c, condition)
