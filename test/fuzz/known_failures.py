"""What the fuzzer expects to fail, each with its reason.

`KNOWN`: seeds that give a wrong result or a crash for a known, recorded reason: strict
expected failures (a seed listed here that passes fails the run, so the list shrinks as bugs
are fixed). seed -> reason.

`KNOWN_FILES`: reproducers in regressions/ (by file stem) that still fail, the same way: strict
expected failures of `test_fuzz.test_regression`, with the reason.

`KNOWN_REFUSALS`: refusals (a clean `IpuError`) of programs the generator writes on purpose,
by a regular expression on the refusal's kind (`fuzz_check.refusal_kind`: its first line, numbers
blanked) -> why the compiler refuses it. A refusal matching none is reported by `make fuzz`
and fails `test_fuzz.py`: the generator left the accepted subset, or the compiler stopped
accepting part of it.
"""

KNOWN: dict[int, str] = {}
KNOWN_CONTROL: dict[int, str] = {}
KNOWN_FILES: dict[str, str] = {}

KNOWN_REFUSALS: dict[str, str] = {
    r"^slice along dimension N runs out-of-bounds: N >= N": "fuzz_control seed 1819: linalg.unpack of tensor<1x1x5xf64> "
    "into tensor<2x1xf64> (inner_dims_pos [0], a tile of 5 over a dim of 2), lowered by upstream's lower_unpack "
    "(dialects/packing.py), fails the extract_slice verifier: a valid program refused, with upstream's words; not fixed",
    r"does not fit in N bytes per tile however it is cut": "a tensor near the tiny target's memory (the generator's `big` "
    "programs) whose leanest cut still does not fit: the planner says so at the op",
    r"^Out of memory on tile N": "a `big` program (tensors near the tiny target's memory): the buffers live at once on "
    "a tile exceed its memory, the planner budgeting each op's pieces (memory-fraction), not the sum over live tensors",
    r"is not supported by ipu-convert-to-ipu: indexing map \(.*\) -> \(.*dN \+ N.*\) of operand": "a window map with a "
    "constant shift (`a[d0 + 1]`): the converter takes shifted windows as tensor.extract_slice (what torch-mlir writes), "
    "not as maps (issue 24, point 1)",
}
