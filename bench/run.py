"""`make bench`: every benchmark in one process, one progress line each, into bench/results.md
(what, input, figure, ratio, peer, goal, met or missed) and bench/results.json (every row and
its raw figures), headed by the date and the machine (CPU, cores, load average at the start).

    .venv/bin/python bench/run.py [--quick] [--sections SECTION ...] (the sections below; default: all)
        [--out bench/results] [--readme README.md]

Timings are medians of `--repeat` runs, the sides of a comparison interleaved in one process
(round i runs every side once), so a load spike on this shared machine hits both sides and does
not fake a ratio. `--quick`: small inputs and few repeats (a couple of minutes), for development
and for test/python/test_bench.py; its tables are labelled as quick.

Sections (issue 13):
- runtime: the simulator's steady run against numpy and PyTorch eager (1 thread and the default
  thread count) on the MLP / CNN programs of bench/simulator_vs_numpy.py and on the zoo models
  (full size; `--quick`: their reduced configurations).
- reference: upstream MLIR's ExecutionEngine (runtime/reference.py's lowering) on the same
  programs, its compile (lowering + JIT) and run times apart.
- xdsl: xDSL's interpreter (the `bench` extra) on the same programs, bufferized by upstream
  MLIR, as linalg and as loops; where it refuses, the row says what it said.
- iree: IREE's llvm-cpu backend (the `bench` extra) on the zoo models' L0 files beside the
  simulator, PyTorch eager and numpy, and its compile time (bench/iree_models.py).
- scaling: compile time and IR size of MLP / CNN stacks and of the BERT encoder by depth, ratio
  per doubling of the depth (goal: linear, at most 2.2 per doubling).
- compile: compile and load CPU seconds of every zoo model and of the reduced ResNet-50 training
  step (bench/compile_time.py; goals: compile under 10 s, load no longer than compile), and
  `ipu-run --model resnet50` file to checked answer, cold and warm (goals: under 30 s and 10 s).
- plan: matmuls 128^3..4096^3, f32 and f16, gc2 and gc200, against the roofline and the any-plan
  lower bound of bench/matmul_roofline.py (goals: within 1.25x of the bound at every size; at
  least 67% of roofline from 2048^3 up in f32 on gc200).
- memory: peak bytes per tile of each zoo model's plan with and without liveness reuse, as
  ipu-memory-plan keeps it: weights resident, or streamed by each run when they do not fit.
- tm_tensor: torch-mlir's TMTensor ops (bench/tm_tensor.py): compile, simulate, error.
- fidelity: the cost model's estimates against published measurements (bench/fidelity.py,
  docs/fidelity.md; goal: within 15%).
- training: a simulated training step against PyTorch eager's on one thread, the joint step's
  compile time, host bytes per step and simulated ResNet-50 images/s per IPU beside Graphcore's
  published figures (bench/training.py; issue 25).
- precision_training: loss and weight drift against f32 over N simulated training steps of f16 (update
  to nearest, stochastic rounding, f32 master weights, dynamic loss scaling), bf16 and the
  unit-scaled example MLP, and the step's simulated time against f32's
  (bench/precision_training.py; issue 30).
- mpi: the simulator's wall time on 1 process and on 2 MPI ranks for an MLP sharded over 2 IPUs
  of an m2000, 1 and 8 device iterations (`--quick`: a small MLP, 1 and 4), outputs compared
  byte for byte; and replicated training (2 replicas of an MLP, one a rank) against one
  process running both, losses and parameters compared byte for byte (bench/mpi_scaling.py;
  issue 26).
- pipeline: a BERT encoder stack on an m2000 pipelined over 4 stages (ipu-pipeline): the bubble
  (fill and flush as a fraction of the run) beside the ideal (S-1)/(M+S-1), the speed-up over
  the sharded run; 4 data-parallel replicas of it (ipu-replicate) (bench/pipeline.py; issue 26).
- replicas: ResNet-50 data-parallel training on a POD16 (16 replicas, f32, micro-batch 1,
  gradientAccumulation 57 as Graphcore's configuration, the all-reduce once per update; one
  replica's step planned with the gradients' ring all-reduce priced, not 16 simulators run)
  beside Graphcore's published 42,029 img/s (Bow Pod16) and about 30,000 img/s (MLPerf v1.1,
  GC200) (bench/replicated_training.py; issue 26; `--quick`: ResNet-50 width 1/8 on 32x32).
- solvers: conjugate gradient and Newton's iteration run to convergence (scf.while, scalar step
  sizes): iterations, cycles per iteration, the share of sync and exchange, the error against
  numpy (bench/solvers.py; issue 29).
- precision: a BERT-base layer, a GPT-2 block and a small CNN in f32, f16 and
  power-of-two-scaled FP8 on gc200 and c600: simulated time and error against the f32 PyTorch
  output; FP8 also compiled without ipu-fp8-matmul and ipu-fp8-conv; the BERT-base layer in
  f16 with f16 and with f32 partials (bench/precision.py; issue 30).
- big_models: GPT-2 small, BERT-base, BERT-Large ([3, 7, 7, 7] over an m2000) and GPT-2 medium
  (sharded over an m2000) at full size (`--quick`: reduced): time and peak resident memory of
  export, compile, load and run, each model in its own process, checked against PyTorch; goal:
  export and compile peak within 3x the weight bytes (bench/big_models.py; issues 26 and 27);
  with `--quick`, BERT-Large and GPT-2 medium pipelined over the m2000's IPUs too, 8
  micro-batches of one: device time per sample beside the sharded run's, fill and flush beside
  2(S-1)/(M+S-1) (at full size they outgrow this machine's memory: docs/many-ipus.md).
"""

from __future__ import annotations

import os

# numpy's BLAS on one thread, before numpy loads: the simulator and the numpy peers then run on
# one core as PyTorch eager's first row does, and idle BLAS threads spinning on this shared
# 2-core machine no longer slow every other peer (full-size BERT in numpy: 6.7 s on two
# threads, 0.37 s on one).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import datetime
import json
import sys
import time
from pathlib import Path

import big_models
import compile_time
import iree_models
import mpi_scaling
import pipeline
import precision
import precision_training
import replicated_training
import solvers
import torch
import training
from compiler_sections import fidelity_rows, memory_rows, plan_rows, scaling_rows, tm_tensor_rows
from measuring import row
from simulator_sections import reference_rows, runtime_rows, xdsl_rows

SECTIONS = (
    "runtime",
    "reference",
    "xdsl",
    "iree",
    "scaling",
    "compile",
    "plan",
    "memory",
    "tm_tensor",
    "fidelity",
    "training",
    "precision_training",
    "mpi",
    "pipeline",
    "replicas",
    "solvers",
    "precision",
    "big_models",
)
FIELDS = ("section", "what", "input", "figure", "ratio", "peer", "goal", "met")
OUT = Path(__file__).parent / "results"


def machine() -> dict:
    """The CPU model, core count and load average now, from /proc (Linux)."""
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in line), "?")
    return {"cpu": model, "cores": os.cpu_count(), "load_average": list(os.getloadavg()), "python": sys.version.split()[0]}


def compile_rows(args) -> list[dict]:
    return compile_time.rows(args.quick, row)


def training_rows(args) -> list[dict]:
    return training.rows(args.quick, args.repeat, row)


def precision_training_rows(args) -> list[dict]:
    return precision_training.rows(args.quick, row)


def mpi_rows(args) -> list[dict]:
    return mpi_scaling.rows(args.quick, args.repeat, row)


def pipeline_rows(args) -> list[dict]:
    return pipeline.bench_rows(args.quick, row)


def replicas_rows(args) -> list[dict]:
    return replicated_training.rows(args.quick, row)


def solvers_rows(args) -> list[dict]:
    return solvers.rows(args.quick, row)


SECTION_ROWS = {
    "runtime": runtime_rows,
    "reference": reference_rows,
    "xdsl": xdsl_rows,
    "iree": lambda args: iree_models.rows(args, row),
    "scaling": scaling_rows,
    "compile": compile_rows,
    "plan": plan_rows,
    "memory": memory_rows,
    "tm_tensor": tm_tensor_rows,
    "fidelity": fidelity_rows,
    "training": training_rows,
    "precision_training": precision_training_rows,
    "mpi": mpi_rows,
    "pipeline": pipeline_rows,
    "replicas": replicas_rows,
    "solvers": solvers_rows,
    "precision": lambda args: precision.rows(args.quick, row),
    "big_models": lambda args: big_models.rows(args.quick, row),
}


def markdown(rows: list[dict], header: dict) -> str:
    mode = "QUICK run: small inputs, few repeats, not the full benchmark" if header["quick"] else "full run"
    m = header["machine"]
    lines = [
        f"# Benchmarks: {mode}",
        "",
        f"- date: {header['date']}; command: `{header['command']}`",
        f"- machine: {m['cpu']}, {m['cores']} cores, load average at start {' / '.join(f'{x:.2f}' for x in m['load_average'])} "
        "(shared with other jobs); Python " + m["python"] + f", torch {header['torch']}",
        f"- timings: medians of {header['repeat']} interleaved runs in one process; ratio = ours / peer (below 1: ours faster or smaller)",
        "",
        "| section | what | input | figure | ratio | peer | goal | met |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.3g}"
        met = {None: "-", True: "met", False: "**missed**"}[r["met"]]
        cells = [r["section"], r["what"], r["input"], r["figure"], ratio, r["peer"], r["goal"], met]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")  # a refusal may quote a |
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, few repeats (a couple of minutes)")
    parser.add_argument("--sections", nargs="+", choices=SECTIONS, default=list(SECTIONS))
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds per comparison (default: 3 quick, 9 full)")
    parser.add_argument("--out", type=Path, default=OUT, help="writes OUT.md and OUT.json")
    parser.add_argument("--readme", type=Path, help="after a full run, put its table in this README between its bench-table markers")
    args = parser.parse_args()
    args.repeat = args.repeat or (3 if args.quick else 9)
    header = {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "machine": machine(),
        "command": " ".join(["bench/run.py", *sys.argv[1:]]),
        "quick": args.quick,
        "repeat": args.repeat,
        "torch": torch.__version__,
    }
    rows = []
    for section in args.sections:
        start = time.perf_counter()
        print(f"[bench] {section} ...", flush=True)
        rows += SECTION_ROWS[section](args)
        print(f"[bench] {section} done in {time.perf_counter() - start:.0f} s", flush=True)
        args.out.parent.mkdir(parents=True, exist_ok=True)  # after each section: a full run takes long
        args.out.with_suffix(".md").write_text(markdown(rows, header), encoding="utf-8")
        args.out.with_suffix(".json").write_text(json.dumps({"header": header, "fields": FIELDS, "rows": rows}, indent=1, default=float))
    if args.readme and args.quick:
        print(f"[bench] {args.readme} left as it is: a quick run's table is not the benchmark", flush=True)
    elif args.readme:
        update_readme(args.readme, markdown(rows, header))
        print(f"[bench] table written into {args.readme}", flush=True)


README_BEGIN, README_END = "<!-- bench-table:begin -->", "<!-- bench-table:end -->"


def update_readme(path: Path, table: str) -> None:
    """Replaces what lies between the README's two bench-table markers with `table` (its title
    dropped: the README's own heading introduces it)."""
    text = path.read_text(encoding="utf-8")
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        raise SystemExit(f"{path}: no '{README_BEGIN}' ... '{README_END}' markers to put the table between")
    body = table.split("\n", 1)[1].strip()
    path.write_text(text[: begin + len(README_BEGIN)] + "\n\n" + body + "\n\n" + text[end:], encoding="utf-8")


if __name__ == "__main__":
    main()
