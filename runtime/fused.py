"""A `linalg.generic` element-wise body of f32 or f64 arithmetic run as one compiled pass
(numba: `_run`), for runtime/generic_body.py.

numpy runs such a body op by op, each a pass through memory: a bias, ReLU6 and the +0.0 that
fixes a zero's sign (semantics.compare_select) make four passes over a 1x1 convolution's
output, and an operand repeated along loops (a channel's bias) is first made dense, a fifth
(MobileNetV2's 89 element-wise vertex groups: about 25 ms a run). Here each op is an
instruction over registers of CHUNK elements: the inputs' elements are loaded into registers,
every op runs over them in L1, the result is stored once.

The bytes are numpy's: each instruction is the IEEE operation in the body's type (f32 ops in
f32, no fused multiply-add: numba does not contract without fastmath), a max or min with NaNs
and ties as the numpy function the body's `Op` calls (`Clamp`: np.fmax, np.maximum...).
Only add, subtract, multiply, divide and clamps against a constant are fused; a body with any
other op, another type, or operands whose layout does not merge into four axes of
non-negative strides runs op by op as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.lib.stride_tricks import as_strided

from ipu_mlir.dialects.ops.compiled import compiled
from ipu_mlir.dialects.ops.semantics import Clamp

from .inplace import Op

CHUNK = 256  # elements of a register: the registers of a body stay in L1
AXES = 4  # a layout merged into more axes than this runs op by op

# instructions: (code, destination register, left register, right register or -1 for the constant)
ADD, SUBTRACT, MULTIPLY, DIVIDE, SUBTRACT_FROM, DIVIDE_INTO, FMAX, FMIN, MAXIMUM, MINIMUM = range(10)
_ARITHMETIC = {np.add: ADD, np.subtract: SUBTRACT, np.multiply: MULTIPLY, np.divide: DIVIDE}
_REVERSED = {ADD: ADD, MULTIPLY: MULTIPLY, SUBTRACT: SUBTRACT_FROM, DIVIDE: DIVIDE_INTO}  # c op x as x op' c
_CLAMPS = {np.fmax: FMAX, np.fmin: FMIN, np.maximum: MAXIMUM, np.minimum: MINIMUM}
_TYPES = (np.dtype(np.float32), np.dtype(np.float64))


class Fused:
    """A body's `Op`s as instructions: `inputs` are the slots read from outside the body
    (registers 0 .. len - 1), each op's result a register after them; `result` the register
    of the body's one wanted value."""

    def __init__(self, inputs: list[int], program: np.ndarray, constants: np.ndarray, result: int, dtype: np.dtype):
        self.inputs, self.program, self.constants, self.result, self.dtype = inputs, program, constants, result, dtype
        self.layouts: dict[tuple, tuple | None] = {}  # by the operands' and output's (shape, strides)

    @staticmethod
    def plan(steps: list, template: list, wanted: list[int]) -> Fused | None:
        """The body's steps as one compiled pass, or None unless every step is an `Op` of
        arithmetic or a clamp of f32 or f64, with one wanted value computed by them."""
        if not steps or len(wanted) != 1 or any(type(step) is not Op for step in steps):
            return None
        dtype = steps[0].dtype
        if dtype not in _TYPES or any(step.dtype != dtype for step in steps):
            return None
        known: set[int] = set()  # inputs and results so far
        inputs: list[int] = []
        constants: dict[int, np.ndarray] = {}  # by the slot of a constant
        for step in steps:
            for slot in step.operands:
                value = template[slot]
                if slot in known or slot in constants:
                    continue
                if value is None:
                    known.add(slot)
                    inputs.append(slot)
                elif value.size != 1 or value.dtype != dtype:
                    return None  # a constant tensor, or another type: left to numpy
                else:
                    constants[slot] = value
            known.add(step.result)
        numbers = {slot: index for index, slot in enumerate(inputs)}
        program, values = [], []
        for step in steps:
            numbers[step.result] = len(inputs) + len(program)
            instructions = _instructions(step, numbers, constants)
            if instructions is None:
                return None
            for code, left, right, constant in instructions:
                program.append((code, numbers[step.result], left, right))
                values.append(constant)
        if wanted[0] not in numbers or wanted[0] in inputs:
            return None
        constants_array = np.array(values, dtype)
        return Fused(inputs, np.array(program, np.int64).reshape(-1, 4), constants_array, numbers[wanted[0]], dtype)

    def __call__(self, operands: Sequence[np.ndarray], out: np.ndarray) -> bool:
        """Runs the body on `operands` (one per input, each broadcasting to `out`'s shape)
        into `out`; False, having written nothing, when the layout does not fit."""
        key = tuple((x.shape, x.strides) for x in operands) + ((out.shape, out.strides),)
        layout = self.layouts.get(key)
        if layout is None and key not in self.layouts:
            layout = self.layouts[key] = _layout([*operands, out], out.shape, out.itemsize)
        if layout is None or any(x.dtype != self.dtype for x in operands) or out.dtype != self.dtype:
            return False
        sizes, strides, spans = layout
        flats = tuple(as_strided(x, (span,), (x.itemsize,), writeable=False) for x, span in zip(operands, spans))
        target = as_strided(out, (spans[-1],), (out.itemsize,))
        registers = len(self.inputs) + len(self.program)
        compiled(_run, "numpy")(flats, sizes, strides, target, self.program, self.constants, registers, self.result)
        return True


def _instructions(step: Op, numbers: dict[int, int], constants: dict[int, np.ndarray]) -> list[tuple] | None:
    """`step` as (code, left register, right register or -1, constant) instructions."""
    kernel, operands = step.kernel, step.operands
    if len(operands) != 2:
        return None
    left, right = operands
    if isinstance(kernel, Clamp):
        code = _CLAMPS.get(kernel.ufunc)
        if code is None or left not in numbers or right not in constants:
            return None
        c = constants[right].reshape(-1)[0]
        return [(code, numbers[left], -1, c)] + ([(ADD, numbers[step.result], -1, c)] if kernel.fix else [])
    code = _ARITHMETIC.get(kernel)
    if code is None:
        return None
    if left in numbers and right in numbers:
        return [(code, numbers[left], numbers[right], 0)]
    if left in numbers and right in constants:
        return [(code, numbers[left], -1, constants[right].reshape(-1)[0])]
    if right in numbers and left in constants:
        return [(_REVERSED[code], numbers[right], -1, constants[left].reshape(-1)[0])]
    return None


def _layout(arrays: list[np.ndarray], shape: tuple[int, ...], item: int) -> tuple | None:
    """The iteration space `shape` merged into AXES axes with each array's strides over it
    (elements; 0 where an array broadcasts) and the span each reads, or None if it merges into
    more, a stride is negative or not whole elements, or an array does not broadcast."""
    table = []
    for x in arrays:
        if x.ndim > len(shape) or x.itemsize != item:
            return None
        padded_shape, padded = (1,) * (len(shape) - x.ndim) + x.shape, (0,) * (len(shape) - x.ndim) + x.strides
        row = []
        for n, size, stride in zip(shape, padded_shape, padded):
            if size not in (1, n) or stride < 0 or stride % item:
                return None
            row.append(0 if size == 1 else stride // item)
        table.append(row)
    merged: list[tuple[int, list[int]]] = []  # (size, strides per array)
    for axis, n in enumerate(shape):
        if n == 1:
            continue
        column = [row[axis] for row in table]
        if merged and all(outer == n * inner for outer, inner in zip(merged[-1][1], column)):
            merged[-1] = (merged[-1][0] * n, column)
        else:
            merged.append((n, column))
    if len(merged) > AXES:
        return None
    merged = [(1, [0] * len(arrays))] * (AXES - len(merged)) + merged
    sizes = np.array([n for n, _ in merged], np.int64)
    strides = np.array([[column[index] for _, column in merged] for index in range(len(arrays))], np.int64)
    spans = [1 + int(((sizes - 1) * row).sum()) for row in strides]
    return sizes, strides, spans


def _run(
    flats, sizes, strides, out, program, constants, registers, result
):  # pragma: no cover - compiled by numba (dialects/ops/compiled.py)
    """The body over sizes[0] x .. x sizes[3] elements in chunks of whole rows of the last
    axis (or pieces of one, if longer than CHUNK): the inputs (flats, strides[i]) loaded into
    registers 0.., each instruction run over the chunk, the `result` register stored into
    `out` (strides[-1])."""
    chunk = 256  # CHUNK
    values = np.empty((registers, chunk), out.dtype)
    inputs = len(flats)
    width = min(sizes[3], chunk)
    rows = chunk // width
    for a, b, c, start in np.ndindex(sizes[0], sizes[1], (sizes[2] + rows - 1) // rows, (sizes[3] + width - 1) // width):
        c, start = c * rows, start * width
        taken, along = min(rows, sizes[2] - c), min(width, sizes[3] - start)
        count = taken * along
        for index in range(inputs):
            flat, step = flats[index], strides[index, 3]
            at = a * strides[index, 0] + b * strides[index, 1] + c * strides[index, 2] + start * step
            if step == 1 and (taken == 1 or strides[index, 2] == along):  # the chunk's rows are one run
                source, row = flat[at : at + count], values[index, :count]
                for e in range(count):
                    row[e] = source[e]
                continue
            for r in range(taken):
                row, here = values[index, r * along : (r + 1) * along], at + r * strides[index, 2]
                if step == 1:
                    source = flat[here : here + along]
                    for e in range(along):
                        row[e] = source[e]
                elif step == 0:
                    value = flat[here]
                    for e in range(along):
                        row[e] = value
                else:
                    for e in range(along):
                        row[e] = flat[here + e * step]
        for op in range(program.shape[0]):
            code, into, left, right = program[op, 0], program[op, 1], program[op, 2], program[op, 3]
            x, y = values[into, :count], values[left, :count]
            if right >= 0:
                z = values[right, :count]
                if code == 0:
                    for e in range(count):
                        x[e] = y[e] + z[e]
                elif code == 1:
                    for e in range(count):
                        x[e] = y[e] - z[e]
                elif code == 2:
                    for e in range(count):
                        x[e] = y[e] * z[e]
                else:
                    for e in range(count):
                        x[e] = y[e] / z[e]
                continue
            k = constants[op]
            if code == 0:
                for e in range(count):
                    x[e] = y[e] + k
            elif code == 1:
                for e in range(count):
                    x[e] = y[e] - k
            elif code == 2:
                for e in range(count):
                    x[e] = y[e] * k
            elif code == 3:
                for e in range(count):
                    x[e] = y[e] / k
            elif code == 4:
                for e in range(count):
                    x[e] = k - y[e]
            elif code == 5:
                for e in range(count):
                    x[e] = k / y[e]
            elif code == 6:  # np.fmax against a number: NaN gives k
                for e in range(count):
                    x[e] = y[e] if y[e] > k else k
            elif code == 7:  # np.fmin
                for e in range(count):
                    x[e] = y[e] if y[e] < k else k
            elif code == 8:  # np.maximum: a NaN x kept
                for e in range(count):
                    x[e] = y[e] if (y[e] >= k or y[e] != y[e]) else k
            else:  # np.minimum
                for e in range(count):
                    x[e] = y[e] if (y[e] <= k or y[e] != y[e]) else k
        step = strides[-1, 3]
        at = a * strides[-1, 0] + b * strides[-1, 1] + c * strides[-1, 2] + start * step
        if step == 1 and (taken == 1 or strides[-1, 2] == along):
            into, row = out[at : at + count], values[result, :count]
            for e in range(count):
                into[e] = row[e]
            continue
        for r in range(taken):
            row, here = values[result, r * along : (r + 1) * along], at + r * strides[-1, 2]
            if step == 1:
                into = out[here : here + along]
                for e in range(along):
                    into[e] = row[e]
            else:
                for e in range(along):
                    out[here + e * step] = row[e]
