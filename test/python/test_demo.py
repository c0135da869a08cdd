"""`make demo` runs `ipu-demo`; examples/ stays valid input for ipu-opt."""

import re
import subprocess
import sys
from pathlib import Path

from ipu_mlir.tools import demo

REPO = Path(__file__).resolve().parents[2]


def test_demo_runs_and_reports_what_it_did(capsys):
    assert demo.main([]) == 0
    out = capsys.readouterr().out
    # The main job: the example CNN, compiled for gc200, simulated and checked.
    assert "The main job: cnn.mlir (linalg on tensors) compiled for gc200 and simulated" in out
    assert re.search(r"simulator vs upstream ExecutionEngine: max relative error \S+ \(ok\)", out)
    assert "supersteps:" in out and "memory per tile:" in out
    assert "IRDL constraints + Python verifier (ipu_mlir.dialects.verifier): 0 errors" in out
    assert "upstream mlir-opt --irdl-file=dialects/ipu.irdl.mlir: exit 0" in out
    # The same number of ops whatever the tile count: the compact SPMD form.
    rows = [line.split() for line in out.splitlines() if line.split()[:1] in (["tiny"], ["gc2"], ["gc200"])]
    assert [(row[0], row[1], row[2], row[3]) for row in rows] == [
        ("tiny", "16", "20", "16"),
        ("gc2", "1216", "20", "1216"),
        ("gc200", "1472", "20", "1472"),
    ]
    assert (
        "relu-gc200.mlir:2:3: error: 'ipu.buffer' op 'tiles': tile grid reaches tiles 0..1471, outside the target's 1216 tiles (gc2)" in out
    )
    assert "relu.mlir:10:5: error: 'ipu.copy' op sends to tile 0, which holds no copy of @head" in out


def test_examples_are_valid_ipu_opt_input():
    examples = sorted((REPO / "examples").glob("*.mlir"))
    assert examples
    for example in examples:
        result = subprocess.run(
            [str(Path(sys.executable).parent / "ipu-opt"), str(example), "-p", "builtin.module(ipu-verify)"],
            capture_output=True,
            text=True,
        )
        assert result.returncode == 0, result.stderr
