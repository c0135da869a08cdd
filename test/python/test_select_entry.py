"""Several public functions: the entry chosen by `entry=` is the one compiled, simulated and checked."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.tools import ipu_run

SOURCE = Path(__file__).resolve().parents[1] / "lit" / "select-entry" / "several-public-functions.mlir"
X = np.linspace(-2, 2, 8, dtype=np.float32)


@pytest.mark.parametrize("entry,expected", [("f", X * X), ("main", X + X), (None, X + X)])
def test_entry_selects_the_function_simulated(entry, expected):
    outputs, _ = api.run(SOURCE, [X], target="tiny", entry=entry)
    np.testing.assert_array_equal(outputs[0], expected)


def test_unknown_entry_names_the_public_functions():
    with pytest.raises(IpuError, match=r"no public function @g to compile \(public functions: @f, @main\)"):
        api.run(SOURCE, [X], target="tiny", entry="g")


def test_ipu_run_checks_the_selected_entry(capsys, tmp_path):
    code = ipu_run.main([str(SOURCE), "--entry", "f", "--target", "tiny", "--random-inputs", "0", "--check"])
    out = capsys.readouterr().out
    assert code == 0 and "check output 0: max abs error 0," in out
