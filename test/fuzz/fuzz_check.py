"""One fuzz case: generate, compile, simulate twice, run the reference, compare.

`check(seed)` returns an `Outcome`: `ok`, `refused` (the compiler said no with a clean
`IpuError`; the reason is the message's first line with numbers and shapes blanked, so refusals
count by kind), `wrong` (wrong numbers, shapes, dtypes, or a second simulator run that
differs from the first in any byte) or `crash` (anything else raised, by the compiler, the
simulator, or a reference that cannot run a program the generator meant to be well-formed).
On `wrong` and `crash` a reproducer is written: `<dir>/seed-<N>.mlir`, the program with the
seed, the verdict and the first lines of the error in comments on top.

Inputs: `api.random_inputs` (floats in [-1, 1), integers in [-8, 8), i1 fair coins), except
the index arguments the generator recorded (`Program.index_ranges`: a gather's coordinates, a
scatter's rows), drawn from their range, the same arrays to both sides. The reference runs the
program after `ipu-import-tosa` and `ipu-convert-tm-tensor{linalg-only}` (upstream passes, and
the plain-linalg form of torch-mlir's TMTensor ops), as `ipu-run --check` does.

Comparison:
- integers (i64, i32, i8, i1): exact, since both sides wrap the same way;
- f64 and f32: |sim - ref| <= 1e-4 * max(1, max |ref|) elementwise, the `ipu-run --check` figure;
- f16: the simulator's f16 results against the *f32 twin* of the program (the same text on
  f32, and f64 where the program has f32, on the same inputs widened), since a reference summing sequentially in f16 drifts
  further from the truth than the simulator does (issue 10, point 9). The bound grows with
  the rounding steps a result went through: |sim - ref32| <= 2^-10 * (8 + ops + sqrt(n) * 4)
  * max(1, max |ref32|), n the longest sum (products of reduction lengths along a chain), i.e.
  about 1 % for a short program, also for the f32 results of a f16 program (a matmul
  accumulating f16 operands in f32: the operands' f16 rounding dominates); a result of f16 out of range (inf) must be inf on both sides.
  An integer result of a f16 program (an arg-max's position, a mask, a cast) is exact against
  the twin or against the f16 program's own reference run: comparing f16-rounded values may
  tie or order differently from their f32 twins (seed 5481: an argmax where two values round
  to the same f16 picks the first, as the simulator does, where the twin picks a later one).
NaNs must sit at the same places (the generator avoids them; this only keeps a NaN from
passing unnoticed).
"""

from __future__ import annotations

import ast
import math
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

import fuzz_control
import fuzz_gen
import fuzz_special
import numpy as np
from fuzz_gen import Program

from ipu_mlir.frontends import api
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.runtime import reference
from ipu_mlir.target.diagnostics import IpuError

F32_RTOL = 1e-4
# The program generators `check` draws from, by the name run_fuzz.py's --generator takes.
GENERATORS = {"tensor": fuzz_gen.generate, "control": fuzz_control.generate, "special": fuzz_special.generate}


@dataclass
class Outcome:
    seed: int
    status: str  # ok, refused, wrong, crash
    reason: str = ""
    detail: str = ""
    program: Program | None = None
    reproducer: Path | None = None


def refusal_kind(message: str) -> str:
    first = message.strip().splitlines()[0] if message.strip() else "(no message)"
    first = re.sub(r"^\S+:\d+:\d+: (error: )?", "", first)
    first = re.sub(r"tensor<[^>]*>", "tensor<...>", first)
    first = re.sub(r"\d+", "N", first)
    return first[:160]


def check(seed: int, reproducer_dir: Path | None = None, generator: str = "tensor") -> Outcome:
    try:
        program = GENERATORS[generator](seed)
    except Exception as error:  # noqa: BLE001  (a generator bug is reported, as a crash)
        return Outcome(seed, "crash", f"generator: {type(error).__name__}: {_first(error)}", _trace(error), Program(seed, "-", "-", ""))
    outcome = _check(program)
    outcome.program = program
    if outcome.status in ("wrong", "crash") and reproducer_dir is not None:
        outcome.reproducer = write_reproducer(outcome, reproducer_dir, generator)
    return outcome


def check_file(path: Path) -> Outcome:
    """A reproducer (test/fuzz/regressions/*.mlir, or one written by `check`) checked the same
    way: element type and target as the text says, inputs from seed 0 or the seed its
    `// inputs: ...random_inputs(arguments, seed=N)` line names; a line
    `// index-ranges: {N: (low, high), ...}` gives argument N's values (a gather's coordinates)."""
    text = path.read_text()
    target = re.search(r'ipu\.target = "(\w+)"', text).group(1)
    dtype = next((t for t in ("f16", "f32", "f64", "i64", "i32", "i8") if f"x{t}>" in text), "f32")
    ranges = re.search(r"^// index-ranges: (\{.*\})$", text, re.M)
    index_ranges = ast.literal_eval(ranges.group(1)) if ranges else {}
    seed = re.search(r"random_inputs\(arguments, seed=(\d+)\)", text)
    program = Program(
        int(seed.group(1)) if seed else 0,
        target,
        dtype,
        text,
        [],
        max_sum=max(1, len(text)),
        depth=text.count(" = "),
        index_ranges=index_ranges,
    )
    outcome = _check(program)
    outcome.program = program
    return outcome


def write_reproducer(outcome: Outcome, directory: Path, generator: str = "tensor") -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / (f"seed-{outcome.seed}.mlir" if generator == "tensor" else f"{generator}-seed-{outcome.seed}.mlir")
    header = [
        f"// fuzz seed {outcome.seed}: {outcome.status}: {outcome.reason}",
        f"// rerun: .venv/bin/python test/fuzz/run_fuzz.py --generator {generator} --start {outcome.seed} --seeds 1",
        f"// inputs: ipu_mlir.frontends.api.random_inputs(arguments, seed={outcome.seed})",
        f"// index-ranges: {outcome.program.index_ranges}",
    ]
    header += [f"// {line}" for line in outcome.detail.splitlines()[-25:]]
    path.write_text("\n".join(header) + "\n" + outcome.program.text)
    return path


def _check(program: Program) -> Outcome:
    seed = program.seed
    # 1. well-formed: it parses, and the reference runs it (a generator bug otherwise)
    try:
        module = api.load_module(program.text)
    except Exception as error:  # noqa: BLE001  (every failure is reported, as a crash)
        return Outcome(seed, "crash", "generator: program does not parse", _trace(error))
    try:
        simulator = api.load_simulator(module, entry="main")
    except IpuError as error:
        return Outcome(seed, "refused", refusal_kind(str(error)), str(error))
    except Exception as error:  # noqa: BLE001
        return Outcome(seed, "crash", f"compiler: {type(error).__name__}: {_first(error)}", _trace(error))
    inputs = program_inputs(program, simulator.arguments)
    try:
        outputs = simulator.run(inputs)
        again = simulator.run(inputs)
    except Exception as error:  # noqa: BLE001  (an IpuError from the simulator is a BSP violation: a bug too)
        return Outcome(seed, "crash", f"simulator: {type(error).__name__}: {_first(error)}", _trace(error))
    try:
        if program.dtype == "f16":
            widen = {np.dtype(np.float16): np.float32, np.dtype(np.float32): np.float64}
            wide = [x.astype(widen[x.dtype]) if x.dtype in widen else x for x in inputs]
            expected = reference.run_reference(reference_text(program.f32_twin()), wide, entry="main", f16_in_f32=False)
        else:  # f16 as f16: the promotion to f32 drops the program's own truncf (f32 -> f16 -> f32 unrounded)
            expected = reference.run_reference(reference_text(program.text), inputs, entry="main", f16_in_f32=False)
    except Exception as error:  # noqa: BLE001
        return Outcome(seed, "crash", f"reference: {type(error).__name__}: {_first(error)}", _trace(error))
    if len(outputs) != len(expected):
        return Outcome(seed, "wrong", f"{len(outputs)} outputs, reference {len(expected)}")
    for index, (got, second) in enumerate(zip(outputs, again)):
        if got.tobytes() != second.tobytes():
            return Outcome(seed, "wrong", f"output {index}: the second simulator run differs from the first")
    narrow = None
    for index, (got, want) in enumerate(zip(outputs, expected)):
        problem = compare(got, want, program)
        if problem and program.dtype == "f16" and got.dtype.kind != "f":  # the f16 program's own reference may agree
            try:
                narrow = narrow or reference.run_reference(reference_text(program.text), inputs, entry="main", f16_in_f32=False)
            except Exception as error:  # noqa: BLE001
                return Outcome(seed, "crash", f"reference: {type(error).__name__}: {_first(error)}", _trace(error))
            problem = problem if compare(got, narrow[index], program) else None
        if problem:
            return Outcome(seed, "wrong", f"output {index}: {problem}")
    return Outcome(seed, "ok")


def program_inputs(program: Program, arguments) -> list[np.ndarray]:
    """Random inputs, the index arguments drawn from their recorded ranges."""
    inputs = api.random_inputs(arguments, seed=program.seed)
    rng = np.random.default_rng(program.seed + 1)
    for position, (low, high) in program.index_ranges.items():
        shape, dtype = arguments[position]
        inputs[position] = np.asarray(rng.integers(low, high, shape)).astype(dtype)
    return inputs


# math's float classes and clampf, which MLIR 22 cannot lower to LLVM (the reference refuses
# them), in the arith the reference runs: their definitions (LLVM's class tests; clampf as
# MathToLLVM lowers it, see dialects/ops/semantics.py), written independently of the simulator.
SMALLEST_NORMAL = {"f32": "0x00800000", "f64": "0x0010000000000000"}
INFINITY = {"f32": "0x7F800000", "f64": "0x7FF0000000000000"}
_CLASS = re.compile(r"^(\s*)(%[\w.]+) = math\.(isinf|isnormal) (%[\w.]+) : (f32|f64)$", re.M)
_CLAMP = re.compile(r"^(\s*)(%[\w.]+) = math\.clampf (%[\w.]+) to \[(%[\w.]+), (%[\w.]+)\] : (f32|f64)$", re.M)


def _float_class(match: re.Match) -> str:
    pad, r, op, x, t = match.groups()
    lines = [f"{r}_abs = math.absf {x} : {t}", f"{r}_inf = arith.constant {INFINITY[t]} : {t}"]
    if op == "isinf":
        lines.append(f"{r} = arith.cmpf oeq, {r}_abs, {r}_inf : {t}")
    else:
        lines.append(f"{r}_min = arith.constant {SMALLEST_NORMAL[t]} : {t}")
        lines.append(f"{r}_big = arith.cmpf oge, {r}_abs, {r}_min : {t}")
        lines.append(f"{r}_fin = arith.cmpf olt, {r}_abs, {r}_inf : {t}")
        lines.append(f"{r} = arith.andi {r}_big, {r}_fin : i1")
    return "\n".join(pad + line for line in lines)


def _clamp(match: re.Match) -> str:
    pad, r, x, low, high, t = match.groups()
    return f"{pad}{r}_high = arith.minimumf {x}, {high} : {t}\n{pad}{r} = arith.maximumf {r}_high, {low} : {t}"


def reference_text(text: str) -> str:
    """The program as the reference runs it: TOSA lowered by upstream's passes, TMTensor ops in
    their plain-linalg form (frontends.api.reference_outputs does the same for --check), math's
    isinf / isnormal / clampf in arith."""
    text = _CLAMP.sub(_clamp, _CLASS.sub(_float_class, text))
    if "tosa." not in text and "tm_tensor." not in text:
        return text
    module = api.load_module(text)
    build_pass_manager("builtin.module(ipu-import-tosa,ipu-convert-tm-tensor{linalg-only=true})", module.context).run(module.operation)
    return str(module)


def tolerance(program: Program, dtype: np.dtype) -> float:
    if program.dtype == "f16":  # also a f32 result (a f16 matmul's accumulator) of f16 intermediates
        return 2.0**-10 * (8 + program.depth + 4 * math.sqrt(program.max_sum))
    return F32_RTOL


def compare(got: np.ndarray, want: np.ndarray, program: Program) -> str | None:
    wide = program.dtype == "f16"
    narrow = {np.dtype(np.float32): np.dtype(np.float16), np.dtype(np.float64): np.dtype(np.float32)}
    expected_dtype = narrow.get(want.dtype, want.dtype) if wide else want.dtype
    if got.shape != want.shape or got.dtype != expected_dtype:
        return f"shape/dtype {got.shape} {got.dtype}, reference {want.shape} {want.dtype}"
    if got.dtype.kind != "f":
        if not np.array_equal(got, want):
            bad = np.argwhere(got != want)
            first = tuple(bad[0])
            return f"{len(bad)} of {got.size} elements differ (exact), first at {first}: {got[first]} vs {want[first]}"
        return None
    g, w = np.atleast_1d(got).astype(np.float64), np.atleast_1d(want).astype(np.float64)
    if wide:
        w = w.astype(got.dtype).astype(np.float64)  # out of f16's range: inf on both sides
    if not np.array_equal(np.isnan(g), np.isnan(w)):
        return "NaNs at different places"
    inf_g, inf_w = np.isinf(g), np.isinf(w)
    if not np.array_equal(inf_g, inf_w) or not np.array_equal(g[inf_g], w[inf_w]):
        return "infinities at different places"
    finite = np.isfinite(w)
    rtol = tolerance(program, got.dtype)
    scale = max(1.0, float(np.abs(w[finite]).max(initial=0)))
    error = np.where(finite, np.abs(np.where(finite, g, 0) - np.where(finite, w, 0)), 0)
    if error.max(initial=0) > rtol * scale:
        worst = np.unravel_index(int(np.argmax(error)), error.shape)
        return f"max abs error {error.max():.4g} > {rtol:.3g} x {scale:.4g} at {tuple(int(i) for i in worst)}: {g[worst]} vs {w[worst]}"
    return None


def _first(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else ""


def _trace(error: BaseException) -> str:
    return "".join(traceback.format_exception(error))
