"""Zoo models at full size: export, compile, load and run times, and the profile (issue 11).

    .venv/bin/python bench/zoo_models.py [--models alexnet resnet50 bert_encoder] [--layers 12]
        [--size N] [--batch 1] [--target gc200] [--runs 3] [--out bench/results/zoo_models]

Each model of `frontends/zoo.py` goes the way `ipu-run --model` takes it: torch-mlir's export
(`frontends.torch.export`), the default pipeline (`compile_program`, which ends in the
verifier), loading into the simulator (`CompiledModule`: plan, checks, weights; verified, as
`frontends.torch.compile` passes it: the compile just ran `ipu-verify`), a first run, which also makes the BSP memory
checks, a second, the first without checks (in the JSON only), then `--runs` later
runs (best reported), against PyTorch eager on one thread (best of
`--runs`). The first run's outputs are compared with eager's (largest error relative to the
largest reference magnitude). Times are wall seconds with the process's CPU seconds beside
them: on a shared machine the CPU time is the steadier figure. From the profile: the estimated
device time, peak and mean memory per tile, vertices and edges. A model the compiler refuses is
listed with its refusal.

Writes OUT.md (a Markdown table) and OUT.json (every figure, per model).
"""

from __future__ import annotations

import os

# numpy's BLAS on one thread, before numpy loads (as bench/run.py and simulator_speed.py do):
# on this shared 2-core machine a second BLAS thread waits at every one of a run's per-tile
# matmuls for a core (VGG-16 at 224: first run 61-83 s and second 37 s on two threads, 3.4 s
# and 0.9 s on one; eager runs on one thread anyway).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import torch  # noqa: E402

from ipu_mlir.frontends import torch as torch_frontend  # noqa: E402
from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

DEFAULT_MODELS = ["alexnet", "resnet50", "bert_encoder", "mobilenet_v2", "gpt2"]
OUT = Path(__file__).parent / "results" / "zoo_models"


def timed(step: Callable[[], Any]) -> tuple[Any, float, float]:
    """(result, wall seconds, CPU seconds of this process) of `step()`."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = step()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def best(step: Callable[[], Any], runs: int) -> float:
    return min(timed(step)[1] for _ in range(runs))


def relative_error(got: Any, expected: Any) -> float:
    """Largest |got - expected| over all outputs, relative to the largest |expected|."""
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    error = max(float((g.double() - e.double()).abs().max()) for g, e in zip(got, expected))
    scale = max(float(e.abs().max()) for e in expected)
    return error / scale if scale else error


def measure(name: str, args: argparse.Namespace) -> dict:
    kind = zoo.MODELS[name].kind
    layers = args.layers if kind == "text" else None
    module, inputs = zoo.build(name, batch=args.batch, size=args.size, layers=layers)
    row: dict[str, Any] = {
        "model": name,
        "layers": layers,
        "parameters": sum(p.numel() for p in module.parameters()),
        "inputs": [list(value.shape) for value in inputs],
    }
    imported, row["export_s"], row["export_cpu_s"] = timed(lambda: torch_frontend.export(module, *inputs))
    try:
        program, row["compile_s"], row["compile_cpu_s"] = timed(lambda: torch_frontend.compile_program(imported, args.target, module))
    except IpuError as error:
        row["refused"] = str(error).splitlines()[0]
        return row
    compiled, row["load_s"], row["load_cpu_s"] = timed(lambda: torch_frontend.CompiledModule(program, args.target, imported, verified=True))
    got, row["first_run_s"], _ = timed(lambda: compiled(*inputs))
    _, row["second_run_s"], _ = timed(lambda: compiled(*inputs))  # plans the unchecked runs first
    row["run_s"] = best(lambda: compiled(*inputs), args.runs)
    with torch.no_grad():
        expected = module(*inputs)
        row["eager_s"] = best(lambda: module(*inputs), args.runs)
    row["relative_error"] = relative_error(got, expected)
    profile = compiled.profile
    row.update(
        device_s=profile.seconds,
        cycles=profile.cycles,
        supersteps=profile.supersteps,
        peak_tile_bytes=profile.peak_memory_per_tile,
        mean_tile_bytes=profile.mean_memory_per_tile,
        tile_memory_bytes=profile.tile_memory_bytes,
        vertices=profile.vertices,
        edges=profile.edges,
    )
    return row


COLUMNS = [
    ("model", "model", lambda r: r["model"] + (f" ({r['layers']} layers)" if r["layers"] else "")),
    ("params", "parameters", lambda r: f"{r['parameters'] / 1e6:.1f} M"),
    ("export s (cpu)", "export_s", lambda r: f"{r['export_s']:.1f} ({r['export_cpu_s']:.1f})"),
    ("compile s (cpu)", "compile_s", lambda r: f"{r['compile_s']:.1f} ({r['compile_cpu_s']:.1f})"),
    ("load s (cpu)", "load_s", lambda r: f"{r['load_s']:.1f} ({r['load_cpu_s']:.1f})"),
    ("first run s", "first_run_s", lambda r: f"{r['first_run_s']:.2f}"),
    ("later run s", "run_s", lambda r: f"{r['run_s']:.2f}"),
    ("eager s", "eager_s", lambda r: f"{r['eager_s']:.3f}"),
    ("x eager", "run_s", lambda r: f"{r['run_s'] / r['eager_s']:.0f}"),
    ("rel. error", "relative_error", lambda r: f"{r['relative_error']:.1e}"),
    ("device ms", "device_s", lambda r: f"{r['device_s'] * 1e3:.3f}"),
    ("peak KiB/tile", "peak_tile_bytes", lambda r: f"{r['peak_tile_bytes'] / 1024:.0f} / {r['tile_memory_bytes'] / 1024:.0f}"),
    ("mean KiB/tile", "mean_tile_bytes", lambda r: f"{r['mean_tile_bytes'] / 1024:.0f}"),
    ("vertices", "vertices", lambda r: f"{r['vertices']:,}"),
    ("edges", "edges", lambda r: f"{r['edges']:,}"),
]


def table(rows: list[dict]) -> str:
    lines = ["| " + " | ".join(title for title, _, _ in COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        cells = [show(row) if key in row else "-" for _, key, show in COLUMNS]
        if "refused" in row:
            cells[-1] += f" refused: {row['refused']}"
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=DEFAULT_MODELS, choices=sorted(zoo.MODELS))
    parser.add_argument("--layers", type=int, default=None, help="transformers' layer count (default: the model's, 12)")
    parser.add_argument("--size", type=int, default=None, help="image side or sequence length (default: the model's, 224 or 128)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--runs", type=int, default=3, help="later runs of the simulator and of eager (best reported)")
    parser.add_argument("--out", type=Path, default=OUT, help="writes OUT.md and OUT.json")
    args = parser.parse_args()
    torch.set_num_threads(1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    settings = f"target {args.target}, batch {args.batch}, {platform.machine()}, torch {torch.__version__}"
    rows = []
    for name in args.models:
        print(f"{name}...", flush=True)
        rows.append(measure(name, args))
        print(json.dumps(rows[-1]), flush=True)
        # after each model: a full-size run takes minutes per model
        args.out.with_suffix(".md").write_text(f"Zoo models ({settings})\n\n{table(rows)}\n", encoding="utf-8")
        args.out.with_suffix(".json").write_text(json.dumps({"settings": vars(args) | {"out": str(args.out)}, "models": rows}, indent=1))
    print(table(rows))


if __name__ == "__main__":
    main()
