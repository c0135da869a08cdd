"""A `linalg.generic` element-wise body of f32 or f64 arithmetic run as one compiled pass, for
runtime/generic_body.py.

numpy runs such a body op by op, each a pass through memory: a bias, ReLU6 and the +0.0 that
fixes a zero's sign (semantics.compare_select) make four passes over a 1x1 convolution's
output, and an operand repeated along loops (a channel's bias) is first made dense, a fifth
(MobileNetV2's 89 element-wise vertex groups: about 25 ms a run). Here the body's ops become
instructions, and the program of instructions is written out as Python source of a numba kernel
(`_source`) that runs all of them on each element in turn: one load of each input, one store.
A kernel is compiled once per program and layout form and cached on disk (`_kernel`). The
pass before this one, an interpreter running each instruction over registers of 256 elements,
took 2.3x as long on MobileNetV2's groups (24 -> 11 ms; the loads, stores and per-chunk
dispatch of each instruction cost more than the arithmetic).

The bytes are numpy's: each instruction is the IEEE operation in the body's type (f32 ops in
f32, no fused multiply-add: numba does not contract without fastmath), a max or min with NaNs
and ties as the numpy function the body's `Op` calls (`Clamp`: np.fmax, np.maximum...).
Only add, subtract, multiply, divide, clamps against a constant, f32 erf (BERT's GELU;
semantics' algorithm, op for op) and a select on an i1 input (SGD momentum's first step, a
register or a constant moved as it is: GPT-2's causal mask) are fused. A body with any other op runs op by op as before:
exp (numpy's SIMD exp is not the exp compiled code calls: 39% of 1M random f32 values differ),
sqrt and rsqrt (the zoo has them only in layer norms mixing f64 and f32). So does a body of
another type, with a NaN constant, or whose operands' strides are negative. A layout that
merges into more than four axes (a convolution weight's momentum update: the weight and its
gradient laid out apart) runs the kernel once per point of the axes before the last four.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ipu_mlir.dialects.ops.compiled import compiled
from ipu_mlir.dialects.ops.erf import erf_f32
from ipu_mlir.dialects.ops.out_kernels import Clamp, out_kernel
from ipu_mlir.dialects.ops.semantics import elementwise_kernel
from ipu_mlir.target.element_types import as_strided

from .inplace import Compare, Op, Select

AXES = 4  # a kernel's axes: a layout merged into more is run a kernel call per point of the axes before these
CALL_ELEMENTS = 1024  # a layout of more axes runs a call per outer point only if each has this many elements (a call costs a few us)
KEPT_FLATS = 64  # flat views a body's kernel keeps (`Fused._flat`): a few per vertex group calling it

# instructions: (code, destination register, left register, right register or -1 for the
# constant, the condition's register of a SELECT or -1)
ADD, SUBTRACT, MULTIPLY, DIVIDE, SUBTRACT_FROM, DIVIDE_INTO, FMAX, FMIN, MAXIMUM, MINIMUM, ERF, SELECT, SELECT_CONSTANT = range(13)
COMPARE = 16  # COMPARE + an arith.cmpf predicate: the compare of the left register with the right or the constant
BOOL = np.dtype(np.bool_)
_ARITHMETIC = {np.add: ADD, np.subtract: SUBTRACT, np.multiply: MULTIPLY, np.divide: DIVIDE}
_REVERSED = {ADD: ADD, MULTIPLY: MULTIPLY, SUBTRACT: SUBTRACT_FROM, DIVIDE: DIVIDE_INTO}  # c op x as x op' c
_CLAMPS = {np.fmax: FMAX, np.fmin: FMIN, np.maximum: MAXIMUM, np.minimum: MINIMUM}
_TYPES = (np.dtype(np.float32), np.dtype(np.float64))
# f32 erf, an instruction (f64's is left to numpy): the `Op` kernel inplace.plan_ops gives it
_ERF = out_kernel(elementwise_kernel("math.erf", [_TYPES[0]], _TYPES[0], None), [_TYPES[0]], _TYPES[0])


class Fused:
    """A body's `Op`s as instructions: `inputs` are the slots read from outside the body
    (registers 0 .. len - 1), each op's result a register after them; `result` the register
    of the body's one wanted value."""

    def __init__(self, inputs: list[int], dtypes: list[np.dtype], program: np.ndarray, constants: np.ndarray, result: int, dtype: np.dtype):
        self.inputs, self.dtypes, self.program, self.constants, self.result, self.dtype = inputs, dtypes, program, constants, result, dtype
        self.layouts: dict[tuple, tuple | None] = {}  # by the operands' and output's (shape, strides)
        self.flats: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # (id(array), span, writable) -> (array, its flat view)

    @staticmethod
    def plan(steps: list, template: list, wanted: list[int]) -> Fused | None:
        """The body's steps as one compiled pass, or None unless every step is an `Op` of
        arithmetic or a clamp of f32 or f64 or an f32 erf, or a `Select` of two values computed,
        read or constant (not both constants) on a condition read (an i1 input) or a `Compare`
        of two such values, with one wanted value computed by them."""
        if not steps or len(wanted) != 1 or any(type(step) not in (Op, Select, Compare) for step in steps):
            return None
        dtype = steps[0].dtype
        if dtype not in _TYPES or any(step.dtype != dtype for step in steps):
            return None
        known: set[int] = set()  # inputs and results so far
        inputs: list[int] = []
        conditions: set[int] = set()  # inputs read as a select's condition, i1
        flags: set[int] = set()  # compares' results, read only as conditions
        constants: dict[int, np.ndarray] = {}  # by the slot of a constant
        for step in steps:
            for index, slot in enumerate(step.operands):
                value = template[slot]
                condition = type(step) is Select and index == 0
                if condition != (slot in conditions or slot in flags) and slot in known:
                    return None  # a number read as a condition, or an i1 as a number
                if slot in known or slot in constants:
                    continue
                if value is None:
                    known.add(slot)
                    inputs.append(slot)
                    if condition:
                        conditions.add(slot)
                elif value.size != 1 or value.dtype != dtype or np.isnan(value).any():
                    return None  # a constant tensor, another type, or a NaN (whose payload wins): left to numpy
                else:
                    constants[slot] = value
            known.add(step.result)
            if type(step) is Compare:
                flags.add(step.result)
        numbers = {slot: index for index, slot in enumerate(inputs)}
        program, values = [], []
        for step in steps:
            numbers[step.result] = len(inputs) + len(program)
            instructions = _instructions(step, numbers, constants)
            if instructions is None:
                return None
            for code, left, right, constant, condition in instructions:
                program.append((code, numbers[step.result], left, right, condition))
                values.append(constant)
        if wanted[0] not in numbers or wanted[0] in inputs or wanted[0] in flags:
            return None
        constants_array = np.array(values, dtype)
        dtypes = [BOOL if slot in conditions else dtype for slot in inputs]
        return Fused(inputs, dtypes, np.array(program, np.int64).reshape(-1, 5), constants_array, numbers[wanted[0]], dtype)

    def __call__(self, operands: Sequence[np.ndarray], out: np.ndarray) -> bool:
        """Runs the body on `operands` (one per input, each broadcasting to `out`'s shape)
        into `out`; False, having written nothing, when the layout does not fit."""
        key = tuple((x.shape, x.strides) for x in operands) + ((out.shape, out.strides),)
        layout = self.layouts.get(key)
        if layout is None and key not in self.layouts:
            layout = self.layouts[key] = self._layout([*operands, out], out.shape)
        if layout is None or any(x.dtype != want for x, want in zip(operands, self.dtypes)) or out.dtype != self.dtype:
            return False
        sizes, strides, spans, kernel, outer = layout
        flats = [self._flat(x, span, False) for x, span in zip(operands, spans)]
        flats.append(self._flat(out, spans[-1], True))
        if outer is None:
            kernel(*flats, sizes, strides, self.constants)
            return True
        inner, starts = outer
        for start in starts:  # the points of the outer axes, each array's first element there
            kernel(*[flat[first : first + n] for flat, first, n in zip(flats, start, inner)], sizes, strides, self.constants)
        return True

    def _flat(self, x: np.ndarray, span: int, writeable: bool) -> np.ndarray:
        """`x` as the kernel reads or writes it, `span` elements from its first (numba compiles
        per read-only flag: inputs read-only always). Kept for a view (up to KEPT_FLATS): a
        simulator's later runs pass the same views of its buffers every run (steps.prepare,
        generic_body's viewers), and as_strided costs 8-17 us a call, four a call of a body of
        three inputs; an array owning its data (a new result) is not kept alive by it."""
        if x.base is None:
            return as_strided(x, (span,), (x.itemsize,), writeable=writeable)
        key = (id(x), span, writeable)
        found = self.flats.get(key)
        if found is not None and found[0] is x:
            return found[1]
        flat = as_strided(x, (span,), (x.itemsize,), writeable=writeable)
        if len(self.flats) >= KEPT_FLATS:
            self.flats.clear()
        self.flats[key] = (x, flat)
        return flat

    def _layout(self, arrays: list[np.ndarray], shape: tuple[int, ...]) -> tuple | None:
        """`_layout` and the kernel of its forms, or None; with the spans of the last AXES axes
        and each array's first element at every point of the axes before them, if any."""
        layout = _layout(arrays, shape)
        if layout is None:
            return None
        sizes, strides, spans, outer = layout
        if outer:
            counts = [n for n, _ in outer]
            if int(np.prod(sizes)) < CALL_ELEMENTS:
                return None  # a call per few elements: numpy's passes cost less
            starts = np.array(
                [[sum(i * column[k] for i, (_, column) in zip(point, outer)) for k in range(len(arrays))] for point in np.ndindex(*counts)]
            )
            inner = [1 + int(((sizes - 1) * row).sum()) for row in strides]
            outer = (inner, starts.tolist())
        return sizes, strides, spans, _kernel(_source(self.program, self.result, _forms(sizes, strides))), outer or None


def _instructions(step: Op | Select, numbers: dict[int, int], constants: dict[int, np.ndarray]) -> list[tuple] | None:
    """`step` as (code, left register, right register or -1, constant, condition register or
    -1) instructions."""
    kernel, operands = step.kernel, step.operands
    if type(step) is Compare:
        left, right = operands
        if step.predicate not in _COMPARISONS:
            return None
        if left in numbers and right in numbers:
            return [(COMPARE + step.predicate, numbers[left], numbers[right], 0, -1)]
        if left in numbers and right in constants:
            return [(COMPARE + step.predicate, numbers[left], -1, constants[right].reshape(-1)[0], -1)]
        if right in numbers and left in constants:  # c REL x as x REL' c
            return [(COMPARE + _SWAPPED.get(step.predicate, step.predicate), numbers[right], -1, constants[left].reshape(-1)[0], -1)]
        return None
    if type(step) is Select:  # a register or a constant moved as it is (a NaN constant was refused)
        condition, left, right = operands
        if left in numbers and right in numbers:
            return [(SELECT, numbers[left], numbers[right], 0, numbers[condition])]
        if left in numbers and right in constants:  # x if c else k (a masked score's fill)
            return [(SELECT, numbers[left], -1, constants[right].reshape(-1)[0], numbers[condition])]
        if right in numbers and left in constants:  # k if c else x
            return [(SELECT_CONSTANT, numbers[right], -1, constants[left].reshape(-1)[0], numbers[condition])]
        return None  # two constants: left to numpy
    if kernel is _ERF and step.dtype == _TYPES[0] and operands[0] in numbers:
        return [(ERF, numbers[operands[0]], -1, 0, -1)]
    if len(operands) != 2:
        return None
    left, right = operands
    if isinstance(kernel, Clamp):
        code = _CLAMPS.get(kernel.ufunc)
        if code is None or left not in numbers or right not in constants:
            return None
        c = constants[right].reshape(-1)[0]
        return [(code, numbers[left], -1, c, -1)] + ([(ADD, numbers[step.result], -1, c, -1)] if kernel.fix else [])
    code = _ARITHMETIC.get(kernel)
    if code is None:
        return None
    if left in numbers and right in numbers:
        return [(code, numbers[left], numbers[right], 0, -1)]
    if left in numbers and right in constants:
        return [(code, numbers[left], -1, constants[right].reshape(-1)[0], -1)]
    if right in numbers and left in constants:
        return [(_REVERSED[code], numbers[right], -1, constants[left].reshape(-1)[0], -1)]
    return None


def _layout(arrays: list[np.ndarray], shape: tuple[int, ...]) -> tuple | None:
    """The iteration space `shape` merged into axes, the last AXES with each array's strides over
    them (its elements; 0 where an array broadcasts), the span each reads, and the axes before
    those as (size, each array's stride); None if a stride is negative or not whole elements,
    or an array does not broadcast."""
    table = []
    for x in arrays:
        item = x.itemsize
        if x.ndim > len(shape):
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
    outer, merged = merged[: max(len(merged) - AXES, 0)], merged[-AXES:]
    merged = [(1, [0] * len(arrays))] * (AXES - len(merged)) + merged
    sizes = np.array([n for n, _ in merged], np.int64)
    strides = np.array([[column[index] for _, column in merged] for index in range(len(arrays))], np.int64)
    spans = [1 + int(((sizes - 1) * row).sum()) + sum((n - 1) * column[index] for n, column in outer) for index, row in enumerate(strides)]
    return sizes, strides, spans, outer


# each instruction as a Python expression of its left register `y`, right register `z` and
# constant `k`, with numpy's rounding and NaN rules: numba types f32 op f32 as f32, so no wider
# intermediate; of two NaNs numpy's x86 loops give the first operand's (quieted), but LLVM may
# swap the operands of a commutative add or multiply, so a NaN `y` is taken as y op y; a max or
# min keeps NaN and ties as the ufunc it stands for
_EXPRESSIONS = {
    (ADD, True): "{y} + {z} if {y} == {y} else {y} + {y}",
    (SUBTRACT, True): "{y} - {z}",
    (MULTIPLY, True): "{y} * {z} if {y} == {y} else {y} * {y}",
    (DIVIDE, True): "{y} / {z}",
    (ADD, False): "{y} + {k}",
    (SUBTRACT, False): "{y} - {k}",
    (MULTIPLY, False): "{y} * {k}",
    (DIVIDE, False): "{y} / {k}",
    (SUBTRACT_FROM, False): "{k} - {y}",
    (DIVIDE_INTO, False): "{k} / {y}",
    (FMAX, False): "{y} if {y} > {k} else {k}",  # np.fmax against a number: NaN gives k
    (FMIN, False): "{y} if {y} < {k} else {k}",
    (MAXIMUM, False): "{k} if {y} < {k} else {y}",  # np.maximum: a NaN y kept
    (MINIMUM, False): "{k} if {y} > {k} else {y}",
    (SELECT, True): "{y} if {c} else {z}",  # a register moved as it is: semantics.select's bits
    (SELECT, False): "{y} if {c} else {k}",
    (SELECT_CONSTANT, False): "{k} if {c} else {y}",
}
# arith.cmpf's predicates by their enum value (oeq ... uno; false and true are left to numpy),
# as IEEE compares are in numba: false on NaN, so an unordered one is the opposite ordered one negated
_COMPARISONS = {
    1: "{y} == {z}",
    2: "{y} > {z}",
    3: "{y} >= {z}",
    4: "{y} < {z}",
    5: "{y} <= {z}",
    6: "({y} < {z}) or ({y} > {z})",
    7: "({y} == {y}) and ({z} == {z})",
    8: "not (({y} < {z}) or ({y} > {z}))",
    9: "not ({y} <= {z})",
    10: "not ({y} < {z})",
    11: "not ({y} >= {z})",
    12: "not ({y} > {z})",
    13: "{y} != {z}",
    14: "({y} != {y}) or ({z} != {z})",
}
_SWAPPED = {2: 4, 3: 5, 4: 2, 5: 3, 9: 11, 10: 12, 11: 9, 12: 10}  # c REL x as x REL' c: the others are symmetric
for _predicate, _text in _COMPARISONS.items():
    _EXPRESSIONS[COMPARE + _predicate, True] = _text
    _EXPRESSIONS[COMPARE + _predicate, False] = _text.replace("{z}", "{k}")
ROW, SCALAR, STRIDED = "row", "scalar", "strided"  # how an array steps along the last axis
EXPANDED = "expanded"  # a scalar of each short row, the rows merged: spread into a buffer
SHORT, MERGED = 64, 4096  # rows shorter than SHORT are merged, up to MERGED elements


def _source(program: np.ndarray, result: int, forms: tuple[str, ...]) -> str:
    """A kernel running `program` element by element over a layout of AXES axes: each row of the
    last axis one loop whose body is every instruction in order on scalars (the compiler keeps
    them in registers and vectorises the loop over a row: on MobileNetV2's largest bias + ReLU6,
    1.2M elements, 0.26 ms against 1.2 ms for the interpreter before it). `forms` gives each
    input's and the output's step along a row: a contiguous row (a view), one element (a
    scalar), or strided. Short rows cost more than their elements (MobileNetV2's bias + ReLU6
    over rows of 7 to 21: 1.0-1.8 ns an element against 0.25 over rows of 56 and more), so the
    rows of the last two axes are taken as one when every row is contiguous there, an input's
    one element a row (a channel's bias) spread along it in a buffer (EXPANDED), filled again
    only when the second axis moves it.

    An f32 erf is evaluated as erf.py's `_erf_blocks` does, op for op in f64 (`_erf`), block
    by block of the last two axes (the buffers stay in cache: over whole arrays, BERT's GELU
    moved 14 MB a call): a pass before the last computes its argument into a buffer, erf runs
    over the buffer into another, later passes read that (recomputing the cheap ops before).
    The polynomial runs as one loop with its coefficients in registers, where `_erf_blocks`
    makes a pass a coefficient.
    """
    count = len(forms) - 1
    names = [f"x{i}" for i in range(count)]
    erfs = [op for op, code in enumerate(program[:, 0].tolist()) if code == ERF]
    lines = ["import numpy as np", f"def kernel({', '.join(names)}, out, sizes, strides, k):"]
    lines += [f"    k{op} = k[{op}]" for op in range(program.shape[0]) if program[op, 3] < 0 and program[op, 0] != ERF]
    lines += [f"    t{i} = strides[{i}, 3]" for i, form in enumerate(forms) if form == STRIDED]
    merged = EXPANDED in forms
    lines += ["    n = sizes[2] * sizes[3]" if merged else "    n = sizes[3]", "    block = sizes[2] * sizes[3]"]
    lines += [f"    {name}{op} = np.empty(block, out.dtype)" for op in erfs for name in "uv"]
    lines += [f"    z{i} = np.empty(n, out.dtype)" for i, form in enumerate(forms) if form == EXPANDED]
    lines += ["    for a in range(sizes[0]):", "        for b in range(sizes[1]):"]
    near, far = erf_f32()
    for end in [*erfs, None]:
        lines += _pass(program, result, forms, end, [op for op in erfs if end is None or op < end])
        if end is not None:
            lines += _erf(end, near, far)
    return "\n".join((["import math"] if erfs else []) + lines) + "\n"


def _erf(op: int, near: tuple[float, ...], far: tuple[float, ...]) -> list[str]:
    """erf `op` from its arguments (buffer u) into its buffer v, op for op in f64 as semantics'
    `_erf_blocks`, over blocks of 512: the polynomial near 0 (|x| clamped to 2) on every element,
    one loop with the coefficients in registers, counting the elements at |x| >= 2; then, in a
    block holding any (they need exp: 2.5e-6 of BERT's GELU inputs), those by erfc's polynomial."""
    lines = ["for start in range(0, block, 512):", f"    x = u{op}[start : start + 512]", f"    y = v{op}[start : start + 512]"]
    lines += ["    far = 0", "    for i in range(x.size):", "        xe = np.float64(x[i])", "        ae = abs(xe)"]
    lines += ["        se = 2.0 if ae > 2.0 else ae", "        ze = se * se", f"        pe = {near[0]!r}"]
    lines += [f"        pe = pe * ze + {c!r}" for c in near[1:]]
    lines += ["        y[i] = math.copysign(se * pe, xe)", "        far += ae >= 2.0", "    if far > 0:"]
    lines += ["        for i in range(x.size):", "            xf = np.float64(x[i])", "            if abs(xf) >= 2.0:"]
    lines += ["                cf = min(abs(xf), 4.0)", f"                pf = {far[0]!r}"]
    lines += [f"                pf = pf * (cf - 3.0) + {c!r}" for c in far[1:]]
    lines.append("                y[i] = math.copysign(1.0 - math.exp(-cf * cf) * pf, xf)")
    return [" " * 12 + line for line in lines]


def _pass(program: np.ndarray, result: int, forms: tuple[str, ...], end: int | None, erfs: list[int]) -> list[str]:
    """The loops over a block of the first two axes running the instructions before `end` on
    each element, storing the argument of erf `end` in its buffer (u), or all of them into
    `out` when `end` is None; the erfs run before (`erfs`) read from theirs (v)."""
    count, merged = len(forms) - 1, EXPANDED in forms
    lines = ["            q = 0"] + ([] if merged else ["            for c in range(sizes[2]):"])
    inner = " " * (12 if merged else 16)
    for i, form in enumerate(forms if end is None else forms[:-1]):
        array = f"x{i}" if i < count else "out"
        lines.append(f"{inner}j{i} = a * strides[{i}, 0] + b * strides[{i}, 1]" + ("" if merged else f" + c * strides[{i}, 2]"))
        if form == EXPANDED:
            lines += [
                f"{inner}if b == 0 or strides[{i}, 1] != 0:",
                f"{inner}    for c in range(sizes[2]):",
                f"{inner}        value = {array}[j{i} + c * strides[{i}, 2]]",
                f"{inner}        for e in range(sizes[3]):",
                f"{inner}            z{i}[c * sizes[3] + e] = value",
                f"{inner}w{i} = z{i}",
            ]
        elif form == ROW:
            lines.append(f"{inner}w{i} = {array}[j{i} : j{i} + n]")
        elif form == SCALAR:
            lines.append(f"{inner}s{i} = {array}[j{i}]")
    lines += [f"{inner}h{op} = v{op}[q : q + n]" for op in erfs]
    if end is not None:
        lines.append(f"{inner}g = u{end}[q : q + n]")
    lines += [f"{inner}q += n", f"{inner}for e in range(n):"]
    body = inner + " " * 4
    loads = {ROW: "w{i}[e]", EXPANDED: "w{i}[e]", SCALAR: "s{i}", STRIDED: "x{i}[j{i} + e * t{i}]"}
    lines += [f"{body}r{i} = " + loads[form].format(i=i) for i, form in enumerate(forms[:-1])]
    for op, (code, into, left, right, condition) in enumerate(program.tolist()[:end]):
        operands = {"y": f"r{left}", "z": f"r{right}", "k": f"k{op}", "c": f"r{condition}"}
        expression = f"h{op}[e]" if code == ERF else _EXPRESSIONS[code, right >= 0].format(**operands)
        lines.append(f"{body}r{into} = {expression}")
    if end is not None:
        lines.append(f"{body}g[e] = r{program[end, 2]}")
    else:
        target = {ROW: f"w{count}[e]", STRIDED: f"out[j{count} + e * t{count}]"}[forms[-1]]
        lines.append(f"{body}{target} = r{result}")
    return lines


def _forms(sizes: np.ndarray, strides: np.ndarray) -> tuple[str, ...]:
    """Each array's step along the last axis (a row of one element is a row); a short row's
    scalars EXPANDED when the arrays read by rows are contiguous over the last two axes."""
    if sizes[3] == 1:
        return (ROW,) * len(strides)
    forms = [ROW if step == 1 else SCALAR if step == 0 else STRIDED for step in strides[:, 3].tolist()]
    forms = [*forms[:-1], STRIDED if forms[-1] == SCALAR else forms[-1]]
    n = int(sizes[3])
    if (
        SCALAR in forms
        and STRIDED not in forms
        and n < SHORT
        and 1 < sizes[2] * n <= MERGED
        and all(form == SCALAR or step == n for form, step in zip(forms, strides[:, 2].tolist()))
    ):
        forms = [EXPANDED if form == SCALAR else form for form in forms]
    return tuple(forms)


_KERNELS: dict[str, Callable] = {}  # by source


def _kernel(source: str) -> Callable:
    """The compiled kernel of `source`, loaded from a file so numba caches its machine code on
    disk (a kernel's compile costs about 0.5 s; a program has one kernel per layout form)."""
    kernel = _KERNELS.get(source)
    if kernel is None:
        name = "ipu_mlir_fused_" + hashlib.sha256(source.encode()).hexdigest()[:24]
        path = _directory() / f"{name}.py"
        if not path.exists() or path.read_text() != source:
            with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=".tmp", delete=False) as temporary:
                temporary.write(source)
            os.replace(temporary.name, path)  # whole: another process or thread may be loading it
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # numba's disk cache finds a kernel's globals by its module's name
        spec.loader.exec_module(module)
        kernel = _KERNELS[source] = compiled(module.kernel, "numpy")
    return kernel


@functools.cache
def _directory() -> Path:
    """Where kernels' sources go: the user's cache (numba's beside them), else a directory of
    this process."""
    home = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ipu-mlir" / "fused"
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError:
        pass
    return home if os.access(home, os.W_OK) else Path(tempfile.mkdtemp(prefix="ipu-mlir-fused-"))
