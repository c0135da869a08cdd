"""Seeded random programs on bf16 and the FP8 formats (docs/precision.md), for the differential
fuzzer: a stream of its own, so that the seeds of fuzz_gen.py keep their programs.

`generate_narrow(seed)` chains two to five steps on values of one narrow type, on `tiny`,
`gc2` or `gc200`:

- element-wise `linalg.generic`s of one to three inputs (identity or broadcast maps) whose
  bodies are random trees of `addf`, `subf`, `mulf`, `maximumf`, `minimumf`, `negf`, `absf`,
  division by `|y| + 1` and constants of the type: every op rounds into the type;
- `linalg.matmul` of two narrow operands into the narrow type or into f32 (the scaled FP8
  product's accumulator), from a zero fill;
- quantization of an f32 argument (`x / s`, `truncf`) and dequantization (`extf`, `x * s`);
- a sum over the last dimension in f32 of the values widened (`extf`), as a quantizer's amax
  or a norm's mean take it.

Values stay small (inputs in [-1, 1), sums of at most 65 terms), so no format overflows.
`check_narrow` runs a program on the simulator and against the reference (MLIR's JIT with the
FP8 rounding of runtime/reference.py) at `--check`'s tolerance for each output's type.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from ipu_mlir.frontends import api
from ipu_mlir.runtime import oracle
from ipu_mlir.runtime.reference import run_reference

NARROW_TYPES = ("bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ")
TARGETS = ("tiny", "gc2", "gc200")
DIMS = (1, 2, 3, 5, 8, 13, 16, 17, 31, 33, 65)
CONSTANTS = ("0.5", "-0.25", "1.5", "2.0", "-1.0", "0.125")
BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.maximumf", "arith.minimumf")


@dataclass
class NarrowProgram:
    seed: int
    target: str
    dtype: str
    text: str
    kinds: list[str]


class _Gen:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.dtype = self.rng.choice(NARROW_TYPES)
        self.target = self.rng.choices(TARGETS, (6, 2, 2))[0]
        self.args: list[tuple[str, tuple[int, ...], str]] = []
        self.lines: list[str] = []
        self.values: list[tuple[str, tuple[int, ...], str]] = []  # (name, shape, element type)
        self.kinds: list[str] = []
        self.count = 0
        # Choices added later draw from a stream of their own, so that each seed keeps the
        # shapes, types and steps it had.
        self.side = random.Random(seed * 7919 + 1)

    def fresh(self) -> str:
        self.count += 1
        return f"%v{self.count}"

    def arg(self, shape: tuple[int, ...], element: str) -> str:
        name = f"%arg{len(self.args)}"
        self.args.append((name, shape, element))
        self.values.append((name, shape, element))
        return name

    def operand(self, shape: tuple[int, ...], element: str) -> str:
        same = [name for name, s, e in self.values if s == shape and e == element]
        return self.rng.choice(same) if same and self.rng.random() < 0.7 else self.arg(shape, element)

    def result(self, name: str, shape: tuple[int, ...], element: str) -> str:
        self.values.append((name, shape, element))
        return name

    def empty(self, shape: tuple[int, ...], element: str) -> str:
        name = self.fresh()
        self.lines.append(f"  {name} = tensor.empty() : {_ty(shape, element)}")
        return name

    def elementwise(self, shape: tuple[int, ...]) -> str:
        t, rank = self.dtype, len(shape)
        inputs = [self.operand(shape, t)]
        maps = [_identity(rank)]
        for _ in range(self.rng.randint(0, 2)):
            if rank == 2 and self.rng.random() < 0.4:  # a row broadcast along the first dimension
                inputs.append(self.operand(shape[1:], t))
                maps.append("affine_map<(d0, d1) -> (d1)>")
            else:
                inputs.append(self.operand(shape, t))
                maps.append(_identity(rank))
        block = [f"%in{i}: {t}" for i in range(len(inputs))] + [f"%out: {t}"]
        body, leaves = [], [f"%in{i}" for i in range(len(inputs))]
        for _ in range(self.rng.randint(1, 5)):
            a, b = self.rng.choice(leaves), self.rng.choice(leaves)
            name = f"%t{len(body)}"
            choice = self.rng.random()
            if choice < 0.55:
                body.append(f"{name} = {self.rng.choice(BINARY)} {a}, {b} : {t}")
            elif choice < 0.7:
                body.append(f"{name} = {self.rng.choice(('arith.negf', 'math.absf'))} {a} : {t}")
            elif choice < 0.85:
                c = f"%c{len(body)}"
                body.append(f"{c} = arith.constant {self.rng.choice(CONSTANTS)} : {t}")
                body.append(f"{name} = {self.rng.choice(BINARY)} {a}, {c} : {t}")
            else:  # a / (|b| + 1): no division by zero
                one, magnitude, divisor = f"%one{len(body)}", f"%abs{len(body)}", f"%den{len(body)}"
                body += [f"{one} = arith.constant 1.0 : {t}", f"{magnitude} = math.absf {b} : {t}"]
                body += [f"{divisor} = arith.addf {magnitude}, {one} : {t}", f"{name} = arith.divf {a}, {divisor} : {t}"]
            leaves.append(name)
        out = self.empty(shape, t)
        name = self.fresh()
        self.lines.append(
            f"  {name} = linalg.generic {{indexing_maps = [{', '.join(maps + [_identity(rank)])}], "
            f"iterator_types = [{_parallel(rank)}]}} ins({', '.join(inputs)} : {_types(self, inputs)}) outs({out} : {_ty(shape, t)}) {{"
        )
        self.lines.append(f"  ^bb0({', '.join(block)}):")
        self.lines += [f"    {line}" for line in body]
        self.lines.append(f"    linalg.yield {leaves[-1]} : {t}")
        self.lines.append(f"  }} -> {_ty(shape, t)}")
        self.kinds.append("elementwise")
        return self.result(name, shape, t)

    def matmul(self, m: int) -> str:
        """A product of two narrow values; into f32, half the time of the two dequantized
        (`extf(q) * s`, as PyTorch writes a scaled FP8 product: ipu-fp8-matmul's pattern)."""
        k, n = self.rng.choice(DIMS), self.rng.choice(DIMS)
        result = self.rng.choice((self.dtype, "f32"))
        a, b = self.operand((m, k), self.dtype), self.operand((k, n), self.dtype)
        operand = self.dtype
        kind = f"matmul-into-{'f32' if result == 'f32' else 'narrow'}"
        if result == "f32" and self.side.random() < 0.5:
            a, b, operand, kind = self.dequantized(a, (m, k)), self.dequantized(b, (k, n)), "f32", "dequantized-matmul"
        zero, filled, name = self.fresh(), self.fresh(), self.fresh()
        out = self.empty((m, n), result)
        self.lines.append(f"  {zero} = arith.constant 0.0 : {result}")
        self.lines.append(f"  {filled} = linalg.fill ins({zero} : {result}) outs({out} : {_ty((m, n), result)}) -> {_ty((m, n), result)}")
        self.lines.append(
            f"  {name} = linalg.matmul ins({a}, {b} : {_ty((m, k), operand)}, {_ty((k, n), operand)}) "
            f"outs({filled} : {_ty((m, n), result)}) -> {_ty((m, n), result)}"
        )
        self.kinds.append(kind)
        return self.result(name, (m, n), result)

    def dequantized(self, q: str, shape: tuple[int, ...]) -> str:
        """extf(q) * s in f32: s mostly a power of two, now and then not (left alone)."""
        t, rank = self.dtype, len(shape)
        out, name = self.empty(shape, "f32"), self.fresh()
        scale = self.side.choice(("0.25", "0.5", "1.0", "2.0", "8.0", "0.0625", "0.03"))
        self.lines.append(
            f"  {name} = linalg.generic {{indexing_maps = [{_identity(rank)}, {_identity(rank)}], "
            f"iterator_types = [{_parallel(rank)}]}} ins({q} : {_ty(shape, t)}) outs({out} : {_ty(shape, 'f32')}) {{"
        )
        self.lines += [
            f"  ^bb0(%x: {t}, %o: f32):",
            "    %s = arith.constant " + scale + " : f32",
            f"    %w = arith.extf %x : {t} to f32",
            "    %d = arith.mulf %w, %s : f32",
            "    linalg.yield %d : f32",
            f"  }} -> {_ty(shape, 'f32')}",
        ]
        return name

    def quantize(self, shape: tuple[int, ...]) -> str:
        """truncf(x / s) of an f32 value, and now and then back: extf(q) * s."""
        t, rank = self.dtype, len(shape)
        x = self.operand(shape, "f32")
        out, name = self.empty(shape, t), self.fresh()
        scale = self.rng.choice(("0.0078125", "0.03", "0.5", "3.0"))
        self.lines.append(
            f"  {name} = linalg.generic {{indexing_maps = [{_identity(rank)}, {_identity(rank)}], "
            f"iterator_types = [{_parallel(rank)}]}} ins({x} : {_ty(shape, 'f32')}) outs({out} : {_ty(shape, t)}) {{"
        )
        self.lines += [
            f"  ^bb0(%x: f32, %o: {t}):",
            f"    %s = arith.constant {scale} : f32",
            "    %d = arith.divf %x, %s : f32",
            f"    %q = arith.truncf %d : f32 to {t}",
            f"    linalg.yield %q : {t}",
            f"  }} -> {_ty(shape, t)}",
        ]
        self.kinds.append("quantize")
        return self.result(name, shape, t)

    def widened_sum(self, shape: tuple[int, ...]) -> str:
        t = self.dtype
        x = self.operand(shape, t)
        m, n = shape
        zero, out, filled, name = self.fresh(), self.empty((m,), "f32"), self.fresh(), self.fresh()
        self.lines.append(f"  {zero} = arith.constant 0.0 : f32")
        self.lines.append(f"  {filled} = linalg.fill ins({zero} : f32) outs({out} : tensor<{m}xf32>) -> tensor<{m}xf32>")
        self.lines.append(
            f"  {name} = linalg.generic {{indexing_maps = [{_identity(2)}, affine_map<(d0, d1) -> (d0)>], "
            f'iterator_types = ["parallel", "reduction"]}}'
            f" ins({x} : {_ty(shape, t)}) outs({filled} : tensor<{m}xf32>) {{"
        )
        self.lines += [
            f"  ^bb0(%x: {t}, %acc: f32):",
            f"    %w = arith.extf %x : {t} to f32",
            "    %a = arith.addf %acc, %w : f32",
            "    linalg.yield %a : f32",
            f"  }} -> tensor<{m}xf32>",
        ]
        self.kinds.append("widened-sum")
        return self.result(name, (m,), "f32")

    def program(self, seed: int) -> NarrowProgram:
        shape = (self.rng.choice(DIMS), self.rng.choice(DIMS))
        returned = []
        for _ in range(self.rng.randint(2, 5)):
            step = self.rng.random()
            if step < 0.4:
                value = self.elementwise(shape)
            elif step < 0.65:
                value = self.matmul(shape[0])
            elif step < 0.85:
                value = self.quantize(shape)
            else:
                value = self.widened_sum(shape)
            returned.append(value)
        results = [(name, s, e) for name, s, e in self.values if name in returned[-2:]]
        signature = ", ".join(f"{name}: {_ty(s, e)}" for name, s, e in self.args)
        types = ", ".join(_ty(s, e) for _, s, e in results)
        lines = [f"func.func @main({signature}) -> ({types}) {{", *self.lines]
        lines.append(f"  return {', '.join(name for name, _, _ in results)} : {types}")
        lines.append("}")
        text = f'module attributes {{ipu.target = "{self.target}"}} {{\n' + "\n".join(lines) + "\n}\n"
        return NarrowProgram(seed, self.target, self.dtype, text, self.kinds)


def _identity(rank: int) -> str:
    dims = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({dims}) -> ({dims})>"


def _parallel(rank: int) -> str:
    return ", ".join(['"parallel"'] * rank)


def _ty(shape: tuple[int, ...], element: str) -> str:
    return f"tensor<{'x'.join(map(str, shape))}x{element}>" if shape else f"tensor<{element}>"


def _types(gen: _Gen, names: list[str]) -> str:
    known = {name: (s, e) for name, s, e in gen.values}
    return ", ".join(_ty(*known[name]) for name in names)


def generate_narrow(seed: int) -> NarrowProgram:
    return _Gen(seed).program(seed)


def check_narrow(seed: int) -> str | None:
    """None if seed's program runs on the simulator as the reference does, else the problem."""
    program = generate_narrow(seed)
    simulator = api.load_simulator(program.text, program.target)
    inputs = api.random_inputs(simulator.arguments, seed)
    outputs = simulator.run(inputs)
    expected = run_reference(program.text, inputs)
    for index, (got, want) in enumerate(zip(outputs, expected)):
        comparison = oracle.compare(got, want)
        if not comparison.ok:
            return f"seed {seed} ({program.dtype} on {program.target}, {program.kinds}): output {index}: {comparison.describe()}"
    return None
