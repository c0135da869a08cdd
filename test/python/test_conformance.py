"""Conformance over the whole op registry: every compute-op record's examples, compiled with
every admitted cut of its space on every target, simulated, and compared with the reference.

Each record (`dialects/ops`, every `@register_op`) offers small L0 programs (`examples()`).
Each is compiled on `tiny`, `gc2` and `gc200` in these ways:

- `planner`: the default pipeline, the planner's own choice;
- `grain1`: ipu-plan with `grain=1`, so its row-major shortcut and the layouts generics
  inherit cut every loop they may, as finely as the tiles allow;
- `tight`: ipu-plan with a budget of `TIGHT_BYTES` per tile, so the cost-model search and the
  serial splits take over from the shortcuts (an example that fits no cut then is skipped);
- `loop<d>-2`, `loop<d>-finest`: every op of the record pinned (`ipu.partition` before
  ipu-plan, `_Planner.pinned_partition`) to a cut of its loop d alone, into 2 parts and into
  as many as the target's tiles allow; `all-halves`: every admitted loop cut in 2 at once. A
  loop is admitted when the space says it is splittable, a block is a multiple of its
  `multiples`, and a summed loop has a combiner (the rules ipu-plan's search follows). On
  gc200, pins giving the same blocks as on gc2 (no loop longer than gc2's tiles) are skipped.

Every compilation runs on the same random inputs (indices within their table's rows where
the example says so) and must match upstream MLIR's ExecutionEngine (`api.reference_outputs`,
what `ipu-run --check` runs): exact for integers, f32 within 1e-4 relative, f16 within 1e-2.

A wrong result found and not fixed yet is listed in `KNOWN_WRONG` with its issue: the case is
a strict xfail that passes only if exactly the listed cuts fail, so a fix (or a new failure)
shows. `make conformance` (IPU_CONFORMANCE_ALL=1) cuts each loop into every count of parts
from 2 to its extent (or the tiles); the default keeps to the cuts above.
"""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects.attrs import PARTITION_ATTR
from ipu_mlir.dialects.ops import REGISTRY, Example, space_of
from ipu_mlir.dialects.ops.semantics import numpy_dtype
from ipu_mlir.frontends import api
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import STEPS
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.target import Target, load_target

TARGETS = ("tiny", "gc2", "gc200")
PLAN = STEPS.index("ipu-plan")
EVERY_COUNT = os.environ.get("IPU_CONFORMANCE_ALL") == "1"
# The `tight` budget: 100 f32 a tile, below what the examples' operands take whole, so their
# cuts come from the search (and on tiny, nchw-strided and nhwc-padded-i32 are split serially).
TIGHT_BYTES = 400

# "record/example@target" -> (issue, the cuts that give a wrong result there). Empty: issue 24's
# unfold (`a[d0 + d1]`, its window loop cut by the planner's shortcut) was the last entry.
KNOWN_WRONG: dict[str, tuple[str, frozenset[str]]] = {}


class KnownWrong(Exception):
    """Exactly the listed cuts of a case gave wrong results (the only failure its xfail takes)."""


def _cases():
    for name, record in sorted(REGISTRY.items()):
        examples = record.examples()
        if not examples:
            yield pytest.param(name, None, "", id=f"{name}/no-examples")
        for example in examples:
            for target in TARGETS:
                case = f"{name}/{example.name}@{target}"
                known = KNOWN_WRONG.get(case)
                marks = [pytest.mark.xfail(strict=True, raises=KnownWrong, reason=known[0])] if known else []
                yield pytest.param(name, example, target, id=case, marks=marks)


def test_known_wrong_cases_exist():
    """A stale entry (its example renamed or removed) would hide nothing but mislead."""
    assert set(KNOWN_WRONG) <= {param.id for param in _cases()}


def test_every_converted_op_is_in_an_example():
    """Each linalg op a record converts appears in one of its examples, so the conformance run
    takes every op kind the converter hands to a record through the reference (--check)."""
    missing = {
        name: [op for op in sorted(record.converts) if not any(re.search(re.escape(op) + r"\b", e.source) for e in record.examples())]
        for name, record in REGISTRY.items()
    }
    assert not {name: ops for name, ops in missing.items() if ops}


@pytest.mark.parametrize(
    "name,example,blocks,message",
    [
        (
            "linalg.generic",
            "unfold",
            (2, 64),
            r"'ipu.partition' \[2, 64\] that cuts loop 0 \(extent 4\) into blocks of 2, but the op's record keeps it whole",
        ),
        ("linalg.generic", "unfold", (4, 65), r"'ipu.partition' \[4, 65\] that does not fit its loops \[4, 64\]"),
        ("ipu.matmul", "matmul-odd", (1, 1, 13), r"'ipu.partition' \[1, 1, 13\] of 63 parts, more than the 16 tiles"),
    ],
)
def test_a_pin_the_space_does_not_admit_is_refused(name, example, blocks, message):
    """The pin of a window loop (unfold's d0), of blocks larger than the loops, or of more parts
    than tiny's tiles: an error at the op."""
    (found,) = [e for e in REGISTRY[name].examples() if e.name == example]
    with pytest.raises(ir.MLIRError, match=message):
        _planned(_lowered(found, "tiny"), name, "", {0: blocks})


@pytest.mark.parametrize("name,example,target", list(_cases()))
def test_record_conforms(name: str, example: Example | None, target: str) -> None:
    assert example is not None, f"the record of '{name}' offers no examples(): add small programs using the op (docs/extending.md)"
    lowered = _lowered(example, target)
    compute = [op for op in _ops(lowered) if op.operation.name == name]
    assert compute, f"example '{example.name}' does not compile to '{name}' on {target}"
    inputs = _inputs(example)
    expected = api.reference_outputs(example.source, inputs, "main")
    spaces = [space_of(op) for op in compute]
    # gc200's pins repeat gc2's where no loop has more than gc2's 1,216 iterations (all of the
    # examples): the same blocks, other tile numbers; its planner's own choices still run.
    repeated = {_pins_key(pins) for _, _, pins in _cuts(spaces, load_target("gc2"))} if target == "gc200" else set()
    failures = {}
    for cut, options, pins in _cuts(spaces, load_target(target)):
        if pins and _pins_key(pins) in repeated:
            continue
        try:
            program = _planned(lowered, name, options, pins)
        except ir.MLIRError as error:
            if cut == "tight" and "does not fit in" in str(error):
                continue
            raise
        outputs = runtime_api.load_simulator(program, target, "main", verified=True).run(inputs)
        problem = _mismatch(outputs, expected)
        if problem:
            failures[cut] = problem
    known = KNOWN_WRONG.get(f"{name}/{example.name}@{target}")
    if known and set(failures) == known[1]:
        raise KnownWrong(f"{known[0]}: {failures}")
    assert not failures, "\n".join(f"{cut}: {problem}" for cut, problem in failures.items())


def _cuts(spaces, target: Target):
    """(name, ipu-plan options, {op number: blocks}) of each way the test compiles an example:
    the planner's choices, then each loop cut alone (in every op of the record that may cut
    it, all at once), then every admitted loop cut in two."""
    tiles = target.num_tiles
    yield "planner", "", {}
    yield "grain1", "grain=1", {}
    yield "tight", f"memory-fraction={TIGHT_BYTES / target.tile_memory_bytes}", {}
    loops = max((len(space.extents) for space in spaces), default=0)
    for d in range(loops):
        counts = {2, tiles} if not EVERY_COUNT else set(range(2, tiles + 1))
        chosen = {}
        for count in sorted(counts):  # a cut two counts give is named by the smaller
            pins = {}
            for index, space in enumerate(spaces):
                if d < len(space.extents) and _admitted(space, d) and _block(space, d, count) < space.extents[d]:
                    pins[index] = tuple(_block(space, d, count) if k == d else e for k, e in enumerate(space.extents))
            if pins:
                chosen.setdefault(_pins_key(pins), count)
        for pins, count in sorted(chosen.items(), key=lambda item: item[1]):
            yield f"loop{d}-{count if count < tiles else 'finest'}", "", dict(pins)
    halves = {}
    for index, space in enumerate(spaces):
        blocks = tuple(_block(space, d, 2) if _admitted(space, d) else e for d, e in enumerate(space.extents))
        if sum(b < e for b, e in zip(blocks, space.extents)) > 1 and math.prod(-(-e // b) for e, b in zip(space.extents, blocks)) <= tiles:
            halves[index] = blocks
    if halves:
        yield "all-halves", "", halves


def _pins_key(pins: dict[int, tuple[int, ...]]) -> tuple:
    return tuple(sorted(pins.items()))


def _admitted(space, loop: int) -> bool:
    return space.splittable[loop] and (loop not in space.reductions or space.combiner is not None)


def _block(space, loop: int, count: int) -> int:
    """The block cutting `loop` into about `count` parts, a multiple of the space's multiple."""
    multiple, even = space.multiple(loop), -(-space.extents[loop] // count)
    return -(-even // multiple) * multiple


def _lowered(example: Example, target: str) -> ir.Module:
    """The example through the default pipeline up to ipu-plan (L1)."""
    module = api.load_module(example.source)
    with module.context:
        passes = ",".join([f"ipu-set-target{{target={target}}}", *STEPS[:PLAN]])
        build_pass_manager(f"builtin.module({passes})", module.context).run(module.operation)
    return module


def _planned(lowered: ir.Module, name: str, options: str, pins: dict[int, tuple[int, ...]]) -> ir.Module:
    """A copy of the L1 module with the pins set, through the rest of the default pipeline."""
    with lowered.context:
        copy = api.copy_module(lowered)
        compute = [op for op in _ops(copy) if op.operation.name == name]
        for index, blocks in pins.items():
            compute[index].attributes[PARTITION_ATTR] = ir.DenseI64ArrayAttr.get(list(blocks))
        passes = ",".join([f"ipu-plan{{{options}}}", *STEPS[PLAN + 1 :]])
        build_pass_manager(f"builtin.module({passes})", copy.context).run(copy.operation)
    return copy


def _ops(module: ir.Module) -> list[ir.OpView]:
    found = []
    module.operation.walk(lambda op: found.append(op.opview) or ir.WalkResult.ADVANCE)
    return found


def _inputs(example: Example) -> list[np.ndarray]:
    module = api.load_module(example.source)
    function = next(op for op in module.body.operations if op.operation.name == "func.func")
    types = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value).inputs
    arguments = [(tuple(t.shape), numpy_dtype(t.element_type)) for t in map(ir.RankedTensorType, types)]
    inputs = runtime_api.random_inputs(arguments, seed=len(example.name))
    rng = np.random.default_rng(0)
    for argument, bound in example.bounds:
        inputs[argument] = rng.integers(0, bound, inputs[argument].shape).astype(inputs[argument].dtype)
    return inputs


def _mismatch(outputs: list[np.ndarray], expected: list[np.ndarray]) -> str | None:
    if len(outputs) != len(expected):
        return f"{len(outputs)} outputs, the reference gives {len(expected)}"
    for index, (got, want) in enumerate(zip(outputs, expected)):
        if got.shape != want.shape or got.dtype != want.dtype:
            return f"output {index}: {got.shape} {got.dtype}, the reference gives {want.shape} {want.dtype}"
        if np.issubdtype(want.dtype, np.floating):
            rtol = 1e-2 if want.dtype == np.float16 else 1e-4
            scale = max(1.0, float(np.abs(want[np.isfinite(want)]).max(initial=0)))
            if not np.allclose(got, want, rtol=rtol, atol=rtol * 0.1 * scale, equal_nan=True):
                error = np.abs(got.astype(np.float64) - want) / np.maximum(np.abs(want), 1e-30)
                return f"output {index}: max rel error {float(np.nanmax(error)):.3g}"
        elif not np.array_equal(got, want):
            return f"output {index}: {int(np.sum(got != want))} of {got.size} elements differ"
    return None
