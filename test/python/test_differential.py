"""Every lit input the pipeline accepts, run end to end and checked against the reference.

Each `// -----` case of each `.mlir` file under test/lit/ that is plain upstream IR (L0 or
TOSA: no `ipu` ops, no expected diagnostics) is compiled with the default pipeline for the target it
names (default `tiny`, to keep it fast), simulated on random inputs, and compared with the
same input run by upstream MLIR's ExecutionEngine: exact for integers, f32 within 1e-4
relative. A second run, on the plan sharing replicated tiles' memory, must give the same
bytes.

A case the pipeline rejects fails, unless it is listed in `KNOWN_UNSUPPORTED` with the words
of its rejection: those are strict xfails, so a listed case that starts passing, or one that
is rejected for another reason, fails too.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.lowering.resident import resident_names
from ipu_mlir.runtime import oracle
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.tools.ipu_opt import SPLIT_MARKER

REPO = Path(__file__).resolve().parents[2]
LIT = REPO / "test" / "lit"
# Inputs that are not programs: diagnostics tests and the driver's own tests.
EXCLUDED = (
    "dialect/",
    "ipu-opt/",
    "python/",
    "memory-plan/",
    "ipu-run/",
    "Output/",
    # integer inputs that index a table: random ones leave it, and the JIT's failing
    # cf.assert aborts the process (test_gather.py runs them with valid indices)
    "convert-to-ipu/gather.mlir",
)
# Cases the pipeline rejects on purpose, by id, with a phrase of the rejection: the reason.
KNOWN_UNSUPPORTED = {
    "convert-to-ipu/generic.mlir#7": "with 2 results is not supported by ipu-plan",  # an arg-max: results read each other
    "convert-to-ipu/multi-result.mlir#2": "with 2 results is not supported by ipu-plan",  # an arg-max over a non-iota index
    "fold-batch-norm/unreadable.mlir#0": "a value the simulator cannot read",  # a filter blob that is missing
    "fold-batch-norm/unreadable.mlir#1": "element type bf16",  # numpy has no bf16
    # a subi reduction too long for a tile, refused rather than cut without a combiner (its point)
    "plan/admits-no-combiner.mlir#0": "does not fit in 39321 bytes per tile however it is cut",
}


class Unsupported(Exception):
    """A listed case rejected with its listed reason (the only failure its xfail accepts)."""


def _cases():
    for path in sorted(LIT.rglob("*.mlir")):
        relative = path.relative_to(LIT).as_posix()
        if relative.startswith(EXCLUDED):
            continue
        text = path.read_text()
        for index, chunk in enumerate(text.split(f"\n{SPLIT_MARKER}\n")):
            if "func.func" not in chunk or "expected-error" in chunk or re.search(r'"ipu\.|ipu\.program', chunk):
                continue
            case = f"{relative}#{index}"
            reason = KNOWN_UNSUPPORTED.get(case)
            marks = [pytest.mark.xfail(strict=True, raises=Unsupported, reason=f"rejected: {reason}")] if reason else []
            yield pytest.param(path, index, chunk, id=case, marks=marks)


def test_known_unsupported_cases_exist():
    """A stale entry (its case renamed or removed) would hide nothing but mislead."""
    assert set(KNOWN_UNSUPPORTED) <= {param.id for param in _cases()}


@pytest.mark.parametrize("path,index,chunk", list(_cases()))
def test_lit_input_matches_reference(path: Path, index: int, chunk: str) -> None:
    if "ipu.target" not in chunk:
        chunk = _with_target(chunk, "tiny")
    entry = re.search(r"func\.func @([\w$.]+)", chunk).group(1)
    module = api.load_module(chunk)
    reason = KNOWN_UNSUPPORTED.get(f"{path.relative_to(LIT).as_posix()}#{index}")
    try:
        simulator = api.load_simulator(module, entry=entry)
    except IpuError as error:
        if reason is not None and reason in str(error):
            raise Unsupported(str(error)) from error
        raise
    inputs = api.random_inputs(simulator.arguments, seed=index)
    step = _Step(simulator, module, entry, index)  # device variables: random ones written, the new ones read
    outputs = step.run(inputs)
    # later runs share the replicas the first (checked) run proved identical: the same bytes
    assert [o.tobytes() for o in step.run(inputs)] == [o.tobytes() for o in outputs]
    expected = api.reference_outputs(chunk, step.arguments(inputs), entry)  # what --check runs: TOSA and tm_tensor rewritten first
    assert len(outputs) == len(expected)
    for index, (got, want) in enumerate(zip(outputs, expected)):
        # The oracle of ipu-run --check; below a magnitude of 1 the error is absolute. Its f16
        # tolerance allows for the reference running f16 programs in f32 and rounding once.
        comparison = oracle.compare(got, want, min_scale=1.0)
        assert comparison.ok, f"output {index}: {comparison.describe()}"


def _with_target(chunk: str, target: str) -> str:
    """The chunk with `ipu.target` set on its module (wrapping bare functions in one; a
    trailing resource section stays outside the module)."""
    body, marker, resources = chunk.partition("{-#")
    match = re.search(r"^module\s*(attributes\s*\{)?", body, re.M)
    if match is None:  # attribute aliases stay outside the module
        aliases = "\n".join(line for line in body.splitlines() if re.match(r"\s*#\w+\s*=", line))
        rest = "\n".join(line for line in body.splitlines() if not re.match(r"\s*#\w+\s*=", line))
        body = f'{aliases}\nmodule attributes {{ipu.target = "{target}"}} {{\n{rest}\n}}\n'
    elif match.group(1):
        body = body[: match.end()] + f'ipu.target = "{target}", ' + body[match.end() :]
    else:
        body = body[: match.end()] + f'attributes {{ipu.target = "{target}"}} ' + body[match.end() :]
    return body + marker + resources


class _Step:
    """A program's run with its device variables (`ipu.resident`, docs/contracts.md): random
    values written before each run, and the results in the L0 function's order, a variable's
    new value (read back) in its result's place; the reference takes them as plain arguments."""

    def __init__(self, simulator, module, entry: str, seed: int) -> None:
        function = next(op for op in module.body.operations if op.operation.name == "func.func" and op.name.value == entry)
        self.simulator = simulator
        self.variables, self.updates = resident_names(function)
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
