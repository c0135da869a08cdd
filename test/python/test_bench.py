"""`make bench`'s driver (bench/run.py) in --quick mode on a subset of its sections: it writes
results.md and results.json with the header (date, machine, load average) and every row the
sections promise, each with all its fields."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
FIELDS = {"section", "what", "input", "figure", "ratio", "peer", "goal", "met", "raw"}
EXPECTED = {
    "plan": [f"matmul {n}^3 {dtype} on {target}" for target in ("gc2", "gc200") for dtype in ("f32", "f16") for n in (128, 256)]
    + ["ResNet-50 conv 3->64 7x7/2", "ResNet-50 conv 64->64 1x1/1"],
    "reference": ["MLP 2 x (matmul 16x64x64 + bias + ReLU)", "CNN 2 x (conv 3x3 16->16 on 4x16x8x8 + bias + ReLU)"],
    "scaling": [f"{model} stack, {n} layers" for model in ("MLP", "CNN") for n in (2, 4)] + [f"BERT encoder, {n} layers" for n in (1, 2)],
    "fidelity": ["a = b + 3 c", *["2D heat, 5-point"] * 3, *["3D heat, 7-point"] * 3, "sum of rows", "fill", "any load"],
    "solvers": ["16x16 on gc200", "16x16 on gc200"],
}
README = "intro\n<!-- bench-table:begin -->\nold table\n<!-- bench-table:end -->\nrest\n"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> tuple[str, dict, str]:
    out = tmp_path_factory.mktemp("bench") / "results"
    readme = out.with_name("README.md")
    readme.write_text(README)
    command = [
        sys.executable,
        str(REPO / "bench" / "run.py"),
        "--quick",
        "--repeat",
        "1",
        "--sections",
        *EXPECTED,
        "--out",
        str(out),
        "--readme",
        str(readme),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert readme.read_text() == README, "a quick run's table went into the README"
    return out.with_suffix(".md").read_text(), json.loads(out.with_suffix(".json").read_text()), done.stdout


def test_every_row_in_both_files(results) -> None:
    markdown, raw, _ = results
    for section, inputs in EXPECTED.items():
        rows = [r for r in raw["rows"] if r["section"] == section]
        for wanted in inputs:
            assert any(r["input"].startswith(wanted) for r in rows), f"{section}: no row for {wanted}"
            assert f"| {section} | " in markdown and wanted in markdown, f"results.md lacks {section}: {wanted}"
    assert len(raw["rows"]) == sum(len(inputs) for inputs in EXPECTED.values())


def test_rows_have_every_field(results) -> None:
    _, raw, _ = results
    for r in raw["rows"]:
        assert set(r) == FIELDS, r
        assert r["figure"] and r["peer"] and r["goal"]
    plan = [r for r in raw["rows"] if r["section"] == "plan"]
    assert all(isinstance(r["met"], bool) and r["ratio"] > 0 for r in plan)  # every plan row judged against its goal
    reference = [r for r in raw["rows"] if r["section"] == "reference"]
    assert all(r["raw"]["error"] < 1e-5 and r["raw"]["peer_compile_s"] > 0 for r in reference)


def test_header_and_progress(results) -> None:
    markdown, raw, stdout = results
    header = raw["header"]
    assert header["quick"] and header["machine"]["cores"] >= 1 and len(header["machine"]["load_average"]) == 3
    assert "QUICK run" in markdown and "load average at start" in markdown and header["date"] in markdown
    assert "| section | what | input | figure | ratio | peer | goal | met |" in markdown
    for section in EXPECTED:
        assert f"[bench] {section} done" in stdout


def test_full_run_table_goes_between_the_readme_markers(tmp_path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import run
    finally:
        sys.path.remove(str(REPO / "bench"))
    readme = tmp_path / "README.md"
    readme.write_text(README)
    run.update_readme(readme, "# Benchmarks: full run\n\n- date: today\n\n| a | b |\n")
    assert readme.read_text() == "intro\n<!-- bench-table:begin -->\n\n- date: today\n\n| a | b |\n\n<!-- bench-table:end -->\nrest\n"
    readme.write_text("no markers\n")
    with pytest.raises(SystemExit, match="bench-table:begin"):
        run.update_readme(readme, "# t\n| a |\n")
    assert readme.read_text() == "no markers\n"
