"""ipu-pipeline's steady state as one loop against every step unrolled (`ipu-pipeline{unroll}`):
a BERT-style encoder (HF `BertEncoder`: 4 layers, hidden 128, 2 heads, sequence 32) over an
m2000's 4 IPUs, 2 sequences a micro-batch, at M = 4, 8 and 16 micro-batches.

    .venv/bin/python bench/pipeline_loop.py [--micro-batches 4 8 16] [--rows 2]

Per M and form, in a process of its own (`--one`), run in turn (loop, unrolled, next M): the
L3 program's ops, compile and load CPU seconds, the peak resident set during the load (Linux
`VmHWM`, reset before it as bench/big_models.py does) and during the compile, and the simulated
cycles. The two forms' outputs are compared bit for bit and against PyTorch. With 4 stages the
loop applies from M = 5 (two steady steps); at M = 4 both forms are the unrolled one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/run.py

import numpy as np  # noqa: E402

TARGET = "m2000"


def _status(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    return 0


def _phase(figures: dict, name: str, step):
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from the current size
    cpu = time.process_time()
    result = step()
    figures[name] = {"cpu_s": round(time.process_time() - cpu, 2), "peak_gib": round(_status("VmHWM") / 2**30, 3)}
    return result


def one(l0: str, inputs: str, outputs: str, micro_batches: int, unroll: bool) -> dict:
    """Compiles and loads the L0 program at `l0` pipelined (in this process), runs it on the
    arrays of `inputs`, saves the outputs to `outputs`."""
    from mlir import ir

    from ipu_mlir.dialects import make_context
    from ipu_mlir.lowering.pass_registry import build_pass_manager
    from ipu_mlir.lowering.pipelines import default_pipeline
    from ipu_mlir.runtime import api as runtime_api

    pipeline = default_pipeline(TARGET, micro_batches=micro_batches)
    if unroll:
        pipeline = pipeline.replace(f"micro-batches={micro_batches}}}", f"micro-batches={micro_batches} unroll=true}}")
    figures: dict = {"micro_batches": micro_batches, "form": "unrolled" if unroll else "loop"}
    with make_context():
        module = ir.Module.parse(Path(l0).read_text())
        _phase(figures, "compile", lambda: build_pass_manager(pipeline).run(module.operation))
        count = [0]

        def visit(_op):
            count[0] += 1
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
        figures["l3_ops"] = count[0]
        figures["loops"] = str(module).count("scf.for")
        simulator = _phase(figures, "load", lambda: runtime_api.load_simulator(module, None, "main", verified=True))
        arrays = np.load(inputs)
        got = simulator.run([arrays[k] for k in sorted(arrays.files, key=lambda name: int(name.split("_")[1]))])
        figures["cycles"] = simulator.profile.cycles
        figures["supersteps"] = simulator.profile.supersteps
    np.savez(outputs, *got)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--micro-batches", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--rows", type=int, default=2, help="sequences a micro-batch")
    parser.add_argument("--one", nargs=5, metavar=("L0", "INPUTS", "OUTPUTS", "M", "UNROLL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        l0, inputs, outputs, m, unroll = args.one
        print(json.dumps(one(l0, inputs, outputs, int(m), unroll == "1")))
        return
    from ipu_mlir.frontends import torch as ipu_torch
    from ipu_mlir.frontends import zoo

    with tempfile.TemporaryDirectory() as scratch:
        for m in args.micro_batches:
            model, inputs = zoo.bert_encoder(batch=args.rows * m, seq=32, layers=4, hidden=128, heads=2)
            l0 = Path(scratch) / f"bert{m}.mlir"
            l0.write_text(str(ipu_torch.export(model, *inputs)))
            np.savez(Path(scratch) / f"in{m}.npz", *[np.asarray(t) for t in inputs])
            expected = np.asarray(ipu_torch.run_eager(model, *inputs))
            got = {}
            for unroll in (0, 1):
                out = Path(scratch) / f"out{m}_{unroll}.npz"
                command = [sys.executable, __file__, "--one", str(l0), str(Path(scratch) / f"in{m}.npz"), str(out), str(m), str(unroll)]
                figures = json.loads(subprocess.run(command, check=True, stdout=subprocess.PIPE, text=True).stdout.splitlines()[-1])
                got[unroll] = np.load(out)["arr_0"]
                figures["error"] = float(np.abs(got[unroll] - expected).max() / np.abs(expected).max())
                print(json.dumps(figures), flush=True)
            print(json.dumps({"micro_batches": m, "bit_equal": bool(np.array_equal(got[0], got[1]))}), flush=True)


if __name__ == "__main__":
    main()
