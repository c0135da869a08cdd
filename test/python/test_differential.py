"""Every lit input holding a program, run end to end and checked against a reference.

Each `// -----` chunk of each `.mlir` file under test/lit/ is classified by its code (comments
stripped first, so a CHECK line naming an `ipu.` op changes nothing):

- L0 (linalg, tensor, arith, TOSA, TMTensor; at most an `ipu.target`): compiled with the
  default pipeline for the target it names (default `tiny`, to keep it fast), simulated, and
  compared with upstream MLIR's ExecutionEngine on the same input;
- L1 (`ipu.matmul`, `ipu.conv` on tensors) and L2 (also `ipu.mapping` / `ipu.partition`
  plans): compiled from there (L1 by the default pipeline, L2 from `ipu-schedule` on, so its
  hand-written plan is the one simulated), and compared with the ExecutionEngine on the chunk
  lifted back to L0 (`ipu.*` attributes dropped, `ipu.matmul` a `linalg.generic`, `ipu.conv`
  a padded `linalg.conv_2d_ngchw_gfchw`): the reference owes nothing to the planner,
  scheduler or simulator;
- L3 (a function marked `ipu.program`): run by the simulator as written, and again after the
  L3 passes the file's RUN line applies (`ipu-fuse-compute-sets`, `ipu-merge-supersteps`,
  `ipu-memory-plan`), which must not change a result.

Inputs are random, but an integer argument a gather reads coordinates from (`tensor.extract`
in a generic's body, `ipu.gather`) is drawn within the table's dimension: an out-of-range
index aborts the ExecutionEngine. Every run is repeated: the second (on the plan sharing
replicated tiles' memory) must give the same bytes. Floats within 1e-4 relative (1e-2 for
f16), integers exact.

A chunk that is not run says why in `EXCLUDED` (by file or chunk id, with the reason) or by
its classification (no function, expected diagnostics). A case the pipeline rejects fails,
unless it is listed in `KNOWN_UNSUPPORTED` with the words of its rejection: those are strict
xfails, so a listed case that starts passing, or one that is rejected for another reason,
fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.frontends import api
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import STEPS
from ipu_mlir.lowering.resident import resident_names
from ipu_mlir.lowering.select_entry import resolve_entry
from ipu_mlir.runtime import oracle
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.tools.ipu_opt import SPLIT_MARKER

REPO = Path(__file__).resolve().parents[2]
LIT = REPO / "test" / "lit"
# Chunks with a program that are not run, by file (a path prefix) or chunk id: the reason.
EXCLUDED = {
    "Output/": "lit's own output directory",
    "dialect/ops.mlir": "a round trip of every op's syntax: placeholder attributes, no program to run",
    "ipu-opt/": "the driver's own tests (options, output files, timing): their programs are the relu of examples/",
    "extending/batch-reduce.mlir": "needs the docs/examples plugin loaded (test_extending.py runs it against numpy)",
    "memory-plan/out-of-memory-origin.mlir": "does not fit the tile memory on purpose (the error is what it checks)",
    "memory-plan/out-of-memory.mlir#3": "does not fit the tile memory with reuse off (the error is what it checks)",
    "ipu-run/unknown-dialect.mlir": "an op of an unknown dialect, refused on purpose",
    "ipu-run/tm-tensor-custom-form-invalid.mlir": "a custom-form TMTensor file torch-mlir refuses too, on purpose",
    "dialect/multi-ipu.mlir": "the verifier's multi-IPU rules on L3 fragments: copies of buffers no stream writes",
    "memory-plan/variables.mlir": "the memory plan's offsets for a variable are what it checks; without them its buffers overflow tiny",
    "memory-plan/variables-out-of-memory.mlir": "does not fit the tile memory on purpose (the error is what it checks)",
    # one simulator per replica (runtime/replicated.py); test_replicated_training_runtime.py checks it against numpy
    "replicate/all-reduce.mlir#0": "an all-reduce over 4 replicas: a lone simulator refuses it by design",
    "replicate/all-reduce.mlir#1": "the same in an scf.if (once per accumulated update): refused alike",
    "replicate/sharded-all-reduce.mlir#0": "all-reduces over 2 replicas of a sharded step: refused alike",
    # the reference's JIT fails on it ("LLVM Translation failed for operation:
    # builtin.unrealized_conversion_cast"): no independent reference for this chunk
    "fp8-matmul/unchanged.mlir#3": "the ExecutionEngine cannot run an FP8 -> bf16 extension",
    "fp8-conv/unchanged.mlir#5": "the ExecutionEngine cannot run an FP8 -> bf16 extension",
    # BERT's token-type lookup written as its L1 `ipu.gather`, which the reference cannot
    # parse; test_big_models.py checks that path against PyTorch
    "pipeline/pipeline.mlir#3": "an `ipu.gather` input: no reference parses it",
    # a tied table read by its L1 `ipu.gather` and matmuls; test_tied_tables.py checks that path against PyTorch
    "plan/tied-table.mlir#1": "an `ipu.gather` input: no reference parses it",
    # an offset taken from an input: random inputs put it out of range, undefined in MLIR, where
    # the simulator stops at the slice; test/lit/ipu-run/dynamic-slices.mlir runs it in range
    "convert-to-ipu/dynamic-slices.mlir#2": "a slice offset read from a random input: out of range",
    # divisions by its inputs: random ones divide by zero, undefined in MLIR (the reference stops on SIGFPE);
    # its lit RUN line gives inputs that do not
    "ipu-run/integer-extremes.mlir": "divides by random inputs, which hold zeros: undefined behaviour",
}
# Cases the pipeline rejects on purpose, by id, with a phrase of the rejection: the reason.
KNOWN_UNSUPPORTED = {
    "convert-to-ipu/generic.mlir#7": "with 2 results is not supported by ipu-plan",  # an arg-max: results read each other
    "convert-to-ipu/multi-result.mlir#2": "with 2 results is not supported by ipu-plan",  # an arg-max over a non-iota index
    "fold-batch-norm/unreadable.mlir#0": "a value the simulator cannot read",  # a filter blob that is missing
    # a body yielding a run-time scalar from outside it: the fold leaves it, ipu-convert-to-ipu refuses it
    "fold-constants/yield-captured.mlir#1": "a body using a value from outside that is not a scalar constant",
    # a subi reduction too long for a tile, refused rather than cut without a combiner (its point)
    "plan/admits-no-combiner.mlir#0": "does not fit in 39321 bytes per tile however it is cut",
    # four 256x256 device variables beside the activations overflow tiny on purpose (its point)
    "memory-plan/variables-compiled.mlir#0": "Out of memory on tile 0",
    # an update written over its variable whose old value is still read: counted whole, too big (its point)
    "plan/resident-in-place-invalid.mlir#0": "does not fit in 39321 bytes per tile however it is cut",
}
L3_PASSES = ("ipu-fuse-compute-sets", "ipu-merge-supersteps", "ipu-memory-plan")


class Unsupported(Exception):
    """A listed case rejected with its listed reason (the only failure its xfail accepts)."""


def code(chunk: str) -> str:
    """The chunk without its `//` comments (CHECK lines, prose)."""
    return "\n".join(re.sub(r"//.*", "", line) for line in chunk.splitlines())


def classify(relative: str, index: int, chunk: str) -> tuple[str, str]:
    """(level, reason): level L0 / L1 / L2 / L3, or `skip` with the reason."""
    case = f"{relative}#{index}"
    for key, reason in EXCLUDED.items():
        if case == key or relative.startswith(key):
            return "skip", reason
    text = code(chunk)
    if "func.func" not in text:
        return "skip", "no function"
    if re.search(r"expected-(error|warning|remark|note)", chunk):
        return "skip", "expected diagnostics: an error test"
    if re.search(r"\bipu\.program\b", text):
        return "L3", ""
    if re.search(r"\bipu\.(mapping|partition|tiles)\b", text):
        return "L2", ""
    if re.search(r'"ipu\.\w+"', text):
        return "L1", ""
    return "L0", ""


def chunks():
    """(relative path, index, chunk, level, reason) of every chunk of every lit file."""
    for path in sorted(LIT.rglob("*.mlir")):
        relative = path.relative_to(LIT).as_posix()
        for index, chunk in enumerate(path.read_text().split(f"\n{SPLIT_MARKER}\n")):
            yield (relative, index, chunk, *classify(relative, index, chunk))


def _cases():
    for relative, index, chunk, level, _ in chunks():
        if level == "skip":
            continue
        case = f"{relative}#{index}"
        reason = KNOWN_UNSUPPORTED.get(case)
        marks = [pytest.mark.xfail(strict=True, raises=Unsupported, reason=f"rejected: {reason}")] if reason else []
        yield pytest.param(relative, index, chunk, level, id=case, marks=marks)


def test_known_unsupported_cases_exist():
    """A stale entry (its case renamed or removed) would hide nothing but mislead."""
    assert set(KNOWN_UNSUPPORTED) <= {param.id for param in _cases()}
    ids = {f"{relative}#{index}" for relative, index, *_ in chunks()}
    for key in EXCLUDED:
        assert key in ids or any(i.startswith(key) for i in ids) or key == "Output/", f"stale exclusion {key}"


def test_every_program_chunk_runs_or_says_why():
    """The classification sees through comments: a chunk whose only `ipu.` is in a CHECK line is
    run; one with ipu ops in its code is run at its level; every other chunk has a reason."""
    levels = {f"{r}#{i}": level for r, i, _, level, _ in chunks()}
    assert levels["convert-tm-tensor/scatter.mlir#0"] == "L0"  # `ipu.scatter` in its CHECK lines only
    assert levels["plan/matmul.mlir#0"] == "L1"
    assert levels["schedule/loop.mlir#0"] == "L2"
    assert levels["fuse-compute-sets/l3.mlir#0"] == "L3"
    assert all(reason for *_, level, reason in chunks() if level == "skip")


@pytest.mark.parametrize("relative,index,chunk,level", list(_cases()))
def test_lit_input_matches_reference(relative: str, index: int, chunk: str, level: str) -> None:
    module = api.load_module(chunk)
    if "ipu.target" not in module.operation.attributes:
        with module.context:
            module.operation.attributes["ipu.target"] = ir.StringAttr.get("tiny")
    entry = None if level == "L3" else _entry(module, code(chunk))
    reason = KNOWN_UNSUPPORTED.get(f"{relative}#{index}")
    try:
        simulator = _simulator(module, level, entry)
    except IpuError as error:
        if reason is not None and reason in str(error):
            raise Unsupported(str(error)) from error
        raise
    inputs = api.random_inputs(simulator.arguments, seed=index)
    for position, high in gather_ranges(module, entry).items():
        inputs[position] = np.random.default_rng(index).integers(0, high, inputs[position].shape).astype(inputs[position].dtype)
    step = _Step(simulator, module, entry, index)  # device variables: random ones written, the new ones read
    outputs = step.run(inputs)
    # later runs share the replicas the first (checked) run proved identical: the same bytes
    assert [o.tobytes() for o in step.run(inputs)] == [o.tobytes() for o in outputs]
    if level == "L3":
        # the same random variables (the same seed) written into the planned program's
        expected = _Step(_simulator(_after_l3_passes(module, (LIT / relative).read_text()), "L3", None), module, entry, index).run(inputs)
    else:  # what --check runs: TOSA and tm_tensor rewritten first
        expected = api.reference_outputs(lift_to_l0(module) if level in ("L1", "L2") else module, step.arguments(inputs), entry)
    assert len(outputs) == len(expected)
    for position, (got, want) in enumerate(zip(outputs, expected)):
        # The oracle of ipu-run --check; below a magnitude of 1 the error is absolute. Its f16
        # tolerance allows for the reference running f16 programs in f32 and rounding once.
        comparison = oracle.compare(got, want, min_scale=1.0)
        assert comparison.ok, f"output {position}: {comparison.describe()}"


def _simulator(module: ir.Module, level: str, entry: str | None):
    if level == "L2":  # its plan as written: the pipeline from ipu-schedule on
        with module.context:
            planned = api.copy_module(module)
            build_pass_manager("builtin.module(" + ",".join(STEPS[STEPS.index("ipu-schedule") :]) + ")", module.context).run(
                planned.operation
            )
        return api.load_simulator(planned, entry=entry, verified=True)
    return api.load_simulator(module, entry=entry)


def _after_l3_passes(module: ir.Module, file_text: str) -> ir.Module:
    """The L3 chunk after the passes its file's RUN line applies (or all L3 passes)."""
    named = [p for p in L3_PASSES if p in file_text.split("\n", 1)[0]] or list(L3_PASSES)
    with module.context:
        copy = api.copy_module(module)
        build_pass_manager("builtin.module(" + ",".join(named) + ")", module.context).run(copy.operation)
    return copy


def gather_ranges(module: ir.Module, entry: str | None) -> dict[int, int]:
    """Entry arguments read as coordinates into a table -> the table's extent there: a
    `tensor.extract` in a generic's body at an index cast from an input that is an argument,
    and `ipu.gather`'s indices (rows of its table)."""
    ranges: dict[int, int] = {}
    for function in module.body.operations:
        if function.operation.name == "func.func" and (entry is None or function.attributes["sym_name"].value == entry):
            _coordinates_in(function.operation, list(function.regions[0].blocks[0].arguments), ranges)
    return ranges


def _coordinates_in(op: ir.Operation, arguments: list[ir.Value], ranges: dict[int, int]) -> None:
    def bound(value: ir.Value, extent: int) -> None:
        for position, argument in enumerate(arguments):
            if argument == value:
                ranges[position] = min(ranges.get(position, extent), extent)

    if op.name == "ipu.gather":
        bound(op.operands[1], ir.RankedTensorType(op.operands[0].type).shape[0])
    if op.name == "linalg.generic":
        block = op.regions[0].blocks[0]
        for inner in block.operations:
            if inner.name != "tensor.extract":
                continue
            table = ir.RankedTensorType(inner.operands[0].type).shape
            for axis, coordinate in enumerate(list(inner.operands)[1:]):
                while not isinstance(coordinate.owner, ir.Block) and coordinate.owner.name == "arith.index_cast":
                    coordinate = coordinate.owner.operands[0]
                if isinstance(coordinate.owner, ir.Block) and coordinate.owner == block:
                    bound(op.operands[coordinate.arg_number], table[axis])
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                _coordinates_in(inner.operation, arguments, ranges)


def lift_to_l0(module: ir.Module) -> str:
    """The L1/L2 module as upstream MLIR can run it: `ipu.*` attributes dropped (but the
    target), `ipu.matmul` and `ipu.conv` rewritten into linalg."""
    with module.context:
        copy = api.copy_module(module)

        def strip(op):
            for attribute in [name for name in op.attributes if name.startswith("ipu.") and name != "ipu.target"]:
                del op.attributes[attribute]
            if op.name == "func.func" and "arg_attrs" in op.attributes:
                del op.attributes["arg_attrs"]
            for region in op.regions:
                for block in region.blocks:
                    for inner in block.operations:
                        strip(inner.operation)

        for op in copy.body.operations:
            strip(op.operation)
    lines = []
    for number, line in enumerate(copy.operation.get_asm(print_generic_op_form=False).splitlines()):
        match = re.match(
            r'(\s*)(%[\w#]+) = "ipu\.(matmul|conv)"\((%[\w#]+), (%[\w#]+)\)\s*(<?\{.*\}>?)?\s*: \((.*)\) -> (tensor<[^>]*>)', line
        )
        lines.extend(_lift(match, f"%lift{number}_") if match else [line])
    return "\n".join(lines)


def _shape(tensor_type: str) -> tuple[list[int], str]:
    *dims, element = tensor_type.removeprefix("tensor<").removesuffix(">").split("x")
    return [int(d) for d in dims], element


def _lift(match: re.Match, prefix: str) -> list[str]:
    indent, result, op, lhs, rhs, attrs, operand_types, result_type = match.groups()
    lhs_type, rhs_type = (t.strip() for t in operand_types.split(", tensor<", 1))
    rhs_type = rhs_type if rhs_type.startswith("tensor<") else "tensor<" + rhs_type
    out_shape, out_element = _shape(result_type)
    zero = "0.0" if out_element.startswith(("f", "bf")) else "0"
    lines = [
        f"{prefix}zero = arith.constant {zero} : {out_element}",
        f"{prefix}empty = tensor.empty() : {result_type}",
        f"{prefix}init = linalg.fill ins({prefix}zero : {out_element}) outs({prefix}empty : {result_type}) -> {result_type}",
    ]
    in_shape, in_element = _shape(lhs_type)
    widen = "" if in_element == out_element else ("arith.extf" if zero == "0.0" else "arith.extsi")
    if op == "matmul":  # (batch..., m, n, k)
        rank = len(out_shape)
        batch = [f"d{i}" for i in range(rank - 2)]
        m, n, k = f"d{rank - 2}", f"d{rank - 1}", f"d{rank}"
        dims = ", ".join(batch + [m, n, k])
        maps = [f"affine_map<({dims}) -> ({', '.join(batch + e)})>" for e in ([m, k], [k, n], [m, n])]
        iterators = ", ".join(['"parallel"'] * rank + ['"reduction"'])
        add, mul = ("arith.addf", "arith.mulf") if zero == "0.0" else ("arith.addi", "arith.muli")
        body = [f"^bb0(%a: {in_element}, %b: {in_element}, %acc: {out_element}):"]
        a, b = "%a", "%b"
        if widen:
            body += [f"  %wa = {widen} %a : {in_element} to {out_element}", f"  %wb = {widen} %b : {in_element} to {out_element}"]
            a, b = "%wa", "%wb"
        body += [f"  %p = {mul} {a}, {b} : {out_element}", f"  %s = {add} %acc, %p : {out_element}", f"  linalg.yield %s : {out_element}"]
        lines += [
            f"{result} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iterators}]}} "
            f"ins({lhs}, {rhs} : {lhs_type}, {rhs_type}) outs({prefix}init : {result_type}) {{",
            *body,
            f"}} -> {result_type}",
        ]
        return [indent + line for line in lines]
    values = {
        key: [int(v) for v in re.findall(r"-?\d+", array or scalar)]
        for key, array, scalar in re.findall(r"(\w+) = (?:array<i64:([^>]*)>|(\d+) : i64)", attrs)
    }
    groups, (top, left, bottom, right) = values["groups"][0], values["padding"]
    (n, c, h, w), (f, _, kh, kw) = in_shape, _shape(rhs_type)[0]
    padded_type = f"tensor<{n}x{c}x{h + top + bottom}x{w + left + right}x{in_element}>"
    lines += [
        f"{prefix}pad_value = arith.constant {'0.0' if zero == '0.0' else '0'} : {in_element}",
        f"{prefix}padded = tensor.pad {lhs} low[0, 0, {top}, {left}] high[0, 0, {bottom}, {right}] {{",
        "^bb0(%i0: index, %i1: index, %i2: index, %i3: index):",
        f"  tensor.yield {prefix}pad_value : {in_element}",
        f"}} : {lhs_type} to {padded_type}",
    ]
    g, (_, _, oh, ow) = groups, out_shape
    grouped = f"tensor<{n}x{g}x{c // g}x{h + top + bottom}x{w + left + right}x{in_element}>"
    filters = f"tensor<{g}x{f // g}x{c // g}x{kh}x{kw}x{in_element}>"
    out5 = f"tensor<{n}x{g}x{f // g}x{oh}x{ow}x{out_element}>"
    strides, dilations = values["strides"], values["dilations"]
    lines += [
        f"{prefix}x = tensor.expand_shape {prefix}padded [[0], [1, 2], [3], [4]] output_shape [{n}, {g}, {c // g}, {h + top + bottom}, "
        f"{w + left + right}] : {padded_type} into {grouped}",
        f"{prefix}w = tensor.expand_shape {rhs} [[0, 1], [2], [3], [4]] output_shape [{g}, {f // g}, {c // g}, {kh}, {kw}] : "
        f"{rhs_type} into {filters}",
        f"{prefix}o = tensor.expand_shape {prefix}init [[0], [1, 2], [3], [4]] output_shape [{n}, {g}, {f // g}, {oh}, {ow}] : "
        f"{result_type} into {out5}",
        f"{prefix}y = linalg.conv_2d_ngchw_gfchw {{dilations = dense<[{dilations[0]}, {dilations[1]}]> : tensor<2xi64>, "
        f"strides = dense<[{strides[0]}, {strides[1]}]> : tensor<2xi64>}} ins({prefix}x, {prefix}w : {grouped}, {filters}) "
        f"outs({prefix}o : {out5}) -> {out5}",
        f"{result} = tensor.collapse_shape {prefix}y [[0], [1, 2], [3], [4]] : {out5} into {result_type}",
    ]
    return [indent + line for line in lines]


def _entry(module: ir.Module, text: str) -> str:
    """The chunk's first function (the one its CHECK lines are about), else the default entry."""
    match = re.search(r'func\.func @([\w$.]+)|"func\.func"\(\) <\{[^}]*sym_name = "([\w$.]+)"', text)
    return (match.group(1) or match.group(2)) if match else resolve_entry(module.operation, None)


class _Step:
    """A program's run with its device variables (`ipu.resident`, docs/contracts.md): random
    values written before each run, and the results in the L0 function's order, a variable's
    new value (read back) in its result's place; the reference takes them as plain arguments."""

    def __init__(self, simulator, module, entry: str, seed: int) -> None:
        functions = [op for op in module.body.operations if op.operation.name == "func.func" and op.name.value == entry]
        self.simulator = simulator
        self.variables, self.updates = resident_names(functions[0]) if functions else ({}, {})
        shapes = simulator.variables()
        self.values = dict(zip(shapes, api.random_inputs(list(shapes.values()), seed=seed + 1)))

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        for name, value in self.values.items():
            self.simulator.write_variable(name, value)
        outputs = self.simulator.run(inputs)
        streamed, count = iter(outputs), len(outputs) + len(self.updates)
        return [self.simulator.read_variable(self.updates[k]) if k in self.updates else next(streamed) for k in range(count)]

    def arguments(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        streamed = iter(inputs)
        count = len(inputs) + len(self.variables)
        return [self.values[self.variables[k]] if k in self.variables else next(streamed) for k in range(count)]
