"""ipu-run and runtime.api: outputs, summary, profile JSON, input errors, no partial output."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ipu_mlir.frontends import api
from ipu_mlir.tools import ipu_run

REPO = Path(__file__).resolve().parents[2]
RELU = REPO / "examples/relu.mlir"
X = np.random.default_rng(3).uniform(-1, 1, 1024).astype(np.float32)

L0_RELU = """
#id = affine_map<(d0) -> (d0)>
module attributes {ipu.target = "tiny"} {
  func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<1024xf32>
    %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
    ^bb0(%a: f32, %o: f32):
      %m = arith.maximumf %a, %zero : f32
      linalg.yield %m : f32
    } -> tensor<1024xf32>
    return %r : tensor<1024xf32>
  }
}
"""


def ipu_run_main(capsys, *argv) -> tuple[int, str, str]:
    code = ipu_run.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_outputs_summary_and_profile(tmp_path, capsys):
    np.save(tmp_path / "x.npy", X)
    out_dir, profile = tmp_path / "out", tmp_path / "profile.json"
    code, out, err = ipu_run_main(capsys, RELU, "--input", tmp_path / "x.npy", "--output-dir", out_dir, "--profile", profile)
    assert (code, err) == (0, "")
    y, head = np.load(out_dir / "output0.npy"), np.load(out_dir / "output1.npy")
    assert (y.shape, y.dtype, head.shape, head.dtype) == ((1024,), np.float32, (64,), np.float32)
    assert np.array_equal(y, np.maximum(X, 0))
    assert sorted(p.name for p in out_dir.iterdir()) == ["output0.npy", "output1.npy"]
    for line in ("estimated time:    264 cycles", "supersteps:        4", "  compute:         84 cycles (31.8%)",
                 "  exchange:        60 cycles (22.7%)", "  sync:            120 cycles (45.5%)", "exchange bytes:    240",
                 "memory per tile:   peak 768 bytes, mean 528.0 bytes", "vertices:          16", "edges:             32",
                 f"output 1:          64 float32 -> {out_dir / 'output1.npy'}"):  # fmt: skip
        assert line in out
    record = json.loads(profile.read_text())
    assert record["summary"]["cycles"] == 264 and record["memory"]["bytes_per_tile"][:2] == [768, 512]
    step = record["supersteps"][2]
    assert (step["kind"], step["cycles"], step["sync"]) == ("exchange+compute", 102, {"kind": "external", "cycles": 40})
    assert step["ops"][0]["op"] == "ipu.copy" and step["ops"][0]["loc"].endswith("relu.mlir:12:5")
    assert step["exchange"]["bytes_received_per_tile"] == [240] + [0] * 15
    assert record["supersteps"][1]["compute"]["cycles_per_tile"] == [82] * 16


def test_random_inputs_are_deterministic(tmp_path, capsys):
    for seed, name in ((5, "a"), (5, "b"), (6, "c")):
        assert ipu_run_main(capsys, RELU, "--random-inputs", seed, "--output-dir", tmp_path / name)[0] == 0
    a, b, c = (np.load(tmp_path / name / "output0.npy") for name in "abc")
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    inputs = api.random_inputs([((1000,), np.float16), ((50,), np.int8), ((9,), np.bool_)], 0)
    assert inputs[0].min() >= -1 and inputs[0].max() < 1 and inputs[1].dtype == np.int8 and inputs[2].dtype == np.bool_


def test_an_existing_output_directory_gets_the_outputs(tmp_path, capsys):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "notes.txt").write_text("mine")
    assert ipu_run_main(capsys, RELU, "--random-inputs", 0, "--output-dir", out_dir)[0] == 0
    assert sorted(p.name for p in out_dir.iterdir()) == ["notes.txt", "output0.npy", "output1.npy"]
    assert [p.name for p in tmp_path.iterdir()] == ["out"]  # no staging directory left


@pytest.mark.parametrize(
    "inputs, message",
    [
        ([X, X], "@main takes 1 inputs, got 2"),
        ([X.reshape(32, 32)], "input #0 of @main: expected 1024 float32, got 32x32 float32"),
        ([X.astype(np.float64)], "input #0 of @main: expected 1024 float32, got 1024 float64"),
    ],
)
def test_bad_inputs_fail_without_output(tmp_path, capsys, inputs, message):
    paths = []
    for index, value in enumerate(inputs):
        paths.append(tmp_path / f"in{index}.npy")
        np.save(paths[-1], value)
    arguments = [RELU, "--input", *paths, "--output-dir", tmp_path / "out", "--profile", tmp_path / "p.json"]
    code, out, err = ipu_run_main(capsys, *arguments)
    assert (code, out, err) == (1, "", f"ipu-run: error: {message}\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in paths)


def test_unreadable_files_and_parse_errors(tmp_path, capsys):
    code, _, err = ipu_run_main(capsys, tmp_path / "missing.mlir", "--random-inputs", 0)
    assert code == 1 and err == f"ipu-run: error: cannot read '{tmp_path / 'missing.mlir'}': No such file or directory\n"
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  func.func @main( {\n}\n")
    code, _, err = ipu_run_main(capsys, bad, "--random-inputs", 0, "--output-dir", tmp_path / "out")
    assert code == 1 and err == f"{bad}:2:19: error: expected non-function type\n"
    (tmp_path / "x.npy").write_text("not numpy")
    code, _, err = ipu_run_main(capsys, RELU, "--input", tmp_path / "x.npy", "--output-dir", tmp_path / "out")
    assert code == 1 and err.startswith(f"ipu-run: error: cannot read input '{tmp_path / 'x.npy'}': not a .npy array")
    assert not (tmp_path / "out").exists()


def test_flags_that_do_not_go_together(tmp_path, capsys):
    np.save(tmp_path / "x.npy", X)
    code, _, err = ipu_run_main(capsys, RELU, "--input", tmp_path / "x.npy", "--random-inputs", 1)
    assert code == 1 and err == "ipu-run: error: give either --input files or --random-inputs, not both\n"
    code, _, err = ipu_run_main(capsys, RELU)
    assert code == 1 and "@main takes 1 inputs: give them with --input A.npy ... or use --random-inputs SEED" in err
    code, _, err = ipu_run_main(capsys, RELU, "--random-inputs", 0, "--check")
    assert code == 1 and "--check compares with the L0 program, but" in err and "is already an L3 ipu program: there is no L0 to run" in err


def test_invalid_programs_fail_at_the_op(tmp_path, capsys):
    broken = tmp_path / "relu.mlir"
    broken.write_text(RELU.read_text().replace("dst_offset = array<i64: 0, 4>", "dst_offset = array<i64: 4, 4>"))
    code, out, err = ipu_run_main(capsys, broken, "--random-inputs", 0, "--output-dir", tmp_path / "out")
    assert code == 1 and out == ""
    assert err.startswith(f"{broken}:12:5: error: 'ipu.copy' op writes elements [64, 68) of @head")  # the verifier's words
    assert not (tmp_path / "out").exists()


def test_memory_plan_bugs_surface_as_bsp_errors(tmp_path, capsys):
    from test_simulator import buffer, compute_set, d2h, execute, group, h2d, program, sync

    text = program(
        [buffer("x", offset=0), buffer("y", offset=256), buffer("t", offset=0)],
        [h2d("%arg0", "x"), sync("external"), execute("a_cs"), sync(), execute("b_cs"), sync(), execute("a_cs"), sync(), d2h("%0", "y")],
        [compute_set("a_cs", group("relu", "@x", "@y")), compute_set("b_cs", group("relu", "@y", "@t"))],
    )
    source = tmp_path / "plan.mlir"
    source.write_text(text)
    code, out, err = ipu_run_main(capsys, source, "--random-inputs", 0, "--output-dir", tmp_path / "out")
    line = next(n for n, text_line in enumerate(text.splitlines(), 1) if "@x], outputs = [@y]" in text_line)
    assert (code, out) == (1, "")
    assert (
        err == f"{source}:{line}:5: error: 'ipu.vertex_group' op reads memory on tile 0 at bytes [0, 256) (elements [0, 64) of "
        f"@x), last written by @t\n"
    )
    assert not (tmp_path / "out").exists()


def test_python_api_runs_paths_text_and_modules():
    outputs, profile = api.run(RELU, [X])
    assert np.array_equal(outputs[0], np.maximum(X, 0)) and profile.cycles == 264
    outputs, profile = api.run(RELU.read_text(), [X], target="gc200")
    assert profile.target == "gc200" and profile.num_tiles == 1472
    assert json.loads(profile.to_json())["summary"]["target"] == "gc200"


def test_l0_input_is_compiled_and_checked(tmp_path, capsys):
    source = tmp_path / "relu.mlir"
    source.write_text(L0_RELU)
    code, out, err = ipu_run_main(capsys, source, "--random-inputs", 0, "--check", "--output-dir", tmp_path / "out")
    assert (code, err) == (0, "")
    assert "check output 0: max abs error 0, max rel error 0 (rtol 0.0001): ok" in out
    outputs, _ = api.run(L0_RELU, [X])
    assert np.array_equal(outputs[0], np.maximum(X, 0))


def test_check_fails_beyond_tolerance(tmp_path, capsys, monkeypatch):
    source = tmp_path / "relu.mlir"
    source.write_text(L0_RELU)
    import ipu_mlir.tools.ipu_run as ipu_run

    monkeypatch.setattr(ipu_run.api, "reference_outputs", lambda module, inputs, entry: [np.maximum(inputs[0], 0) + 1e-2])
    code, out, _ = ipu_run_main(capsys, source, "--random-inputs", 0, "--check", "--output-dir", tmp_path / "out")
    assert code == 1 and "check output 0: max abs error 0.01," in out and "(rtol 0.0001): FAILED" in out


def test_no_leftovers_after_failures(tmp_path, capsys):
    shutil.copy(RELU, tmp_path / "relu.mlir")
    ipu_run_main(capsys, tmp_path / "relu.mlir", "--random-inputs", 0, "--check", "--output-dir", tmp_path / "out")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["relu.mlir"]
