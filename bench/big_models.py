"""Time and peak memory per phase (export, compile, load, run) of the zoo's transformers at full
size, BERT-Large and GPT-2 medium over the four IPUs of an m2000 (issue 27 point 4, issue 26
point 5), each checked against PyTorch; with `--micro-batches M`, BERT-Large and GPT-2 medium
pipelined over the m2000's IPUs (ipu-pipeline), a batch of M sequences as M micro-batches of one.

    .venv/bin/python bench/big_models.py [--models gpt2 bert bert_large gpt2_medium] [--reduced] [--micro-batches M] [--layers N]

Each model runs in a process of its own (`--one NAME`), so that one model's memory is not the
next one's. A phase's peak is the process's resident set at its highest during the phase (Linux:
`VmHWM` of /proc/self/status, reset before each phase by writing 5 to /proc/self/clear_refs); it
includes the model itself and the imports, which are there before any phase. Weight bytes count
each tensor of the state dict once (GPT-2's LM head shares the token embedding). Goal (issue 27
point 4): the export's and the compile's peak, less the imports' resident set (Python, torch,
torch-mlir and MLIR's libraries: 0.33 GiB, whatever the model), within 3x the weight bytes; the
figure gives the whole peak too.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/run.py

import pipeline as pipeline_bench  # noqa: E402 (bench/pipeline.py, beside this file)

MODELS = ("gpt2", "bert", "bert_large", "gpt2_medium")  # each on its zoo target: BERT-Large split [3, 7, 7, 7] over an m2000
GOAL_RATIO = 3.0
PIPELINED = ("bert_large", "gpt2_medium")  # also run pipelined over the m2000's IPUs (issue 26 point 5)
MICRO_BATCHES = 8  # of one sequence each: the reduced pipelines' batch (Graphcore's inference ran more)


def _status(field: str) -> int:
    """A /proc/self/status figure, in bytes."""
    line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field + ":"))
    return int(line.split()[1]) * 1024


def _phase(figures: dict, name: str, step):
    """Runs `step()`, recording its wall and CPU seconds and the peak resident set during it."""
    Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from the current size
    cpu, wall = time.process_time(), time.perf_counter()
    result = step()
    figures[name] = {"wall_s": time.perf_counter() - wall, "cpu_s": time.process_time() - cpu, "peak": _status("VmHWM")}
    return result


def measure(name: str, reduced: bool, micro_batches: int = 1, layers: int | None = None) -> dict:
    """One model's phases, in this process: sharded on a batch of 1, or pipelined over
    `micro_batches` micro-batches of 1 (the pipeline's device time per sample and its fill and
    flush share of the run, `bench/pipeline.py`'s measure, beside the ideal 2(S-1)/(M+S-1)).
    `layers`: that many of the model's layers (BERT-Large's a quarter on each IPU)."""
    import torch

    from ipu_mlir.frontends import api, zoo
    from ipu_mlir.frontends import torch as torch_frontend
    from ipu_mlir.runtime import oracle
    from ipu_mlir.target import load_target

    imports = _status("VmRSS")  # Python, torch, torch-mlir, MLIR: what no model changes
    target, options = zoo.MODELS[name].target, zoo.MODELS[name].reduced if reduced else {}
    if layers:
        options = {**options, "layers": layers, **({"layers_per_ipu": (layers // 4,) * 4} if name == "bert_large" else {})}
    module, inputs = zoo.build(name, **options, **({"batch": micro_batches} if micro_batches > 1 else {}))
    weights = sum(tensor.numel() * tensor.element_size() for tensor in {t.data_ptr(): t for t in module.state_dict().values()}.values())
    figures: dict = {"model": name, "target": target, "options": {k: list(v) if isinstance(v, tuple) else v for k, v in options.items()}}
    figures["micro_batches"] = micro_batches
    figures["weights"], figures["imports"], figures["base"] = weights, imports, _status("VmRSS")
    with torch.no_grad():
        expected = module(*inputs)
    imported = _phase(figures, "export", lambda: torch_frontend.export(module, *inputs))
    program = _phase(figures, "compile", lambda: torch_frontend.compile_program(imported, target, module, micro_batches=micro_batches))
    simulator = _phase(figures, "load", lambda: api.load_simulator(program, target, verified=True, use_cache=False))
    outputs = _phase(figures, "run", lambda: simulator.run([value.numpy() for value in inputs]))
    expected = expected if isinstance(expected, tuple) else (expected,)
    comparisons = [oracle.compare(got, want.numpy()) for got, want in zip(outputs, expected)]
    figures["check"] = "; ".join(comparison.describe() for comparison in comparisons)
    figures["ok"] = all(comparison.ok for comparison in comparisons)
    profile, system = simulator.profile, load_target(target)
    figures["cycles"], figures["seconds"], figures["global_syncs"] = profile.cycles, profile.seconds, profile.global_syncs
    figures["samples"] = int(inputs[0].shape[0])
    if micro_batches > 1:  # the stages: the system's IPUs, each model's split using all four
        _, figures["fill_flush"] = pipeline_bench.bubble(profile, system.num_ipus, system.tiles_per_ipu)
        figures["ideal_fill_flush"] = 2 * (system.num_ipus - 1) / (micro_batches + system.num_ipus - 1)
    return figures


def describe(f: dict) -> str:
    gib = 2**30
    phases = ", ".join(
        f"{phase} {f[phase]['wall_s']:.1f} s ({f[phase]['cpu_s']:.1f} s CPU), peak {f[phase]['peak'] / gib:.2f} GiB"
        for phase in ("export", "compile", "load", "run")
    )
    return (
        f"{f['model']} on {f['target']}: weights {f['weights'] / gib:.2f} GiB, imports {f['imports'] / gib:.2f} GiB, "
        f"model built {f['base'] / gib:.2f} GiB; {phases}; {f['check']}"
    )


def run_one(name: str, reduced: bool, micro_batches: int = 1, layers: int | None = None) -> dict:
    """`measure(name)` in a fresh process; its figures, or the error it ended with."""
    command = [sys.executable, __file__, "--one", name, "--micro-batches", str(micro_batches)] + (["--reduced"] if reduced else [])
    command += ["--layers", str(layers)] if layers else []
    done = subprocess.run(command, capture_output=True, text=True)
    lines = done.stdout.strip().splitlines()
    if done.returncode or not lines:
        return {"model": name, "error": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    return json.loads(lines[-1])


def rows(
    reduced: bool, make_row, models: list[str] | None = None, micro_batches: int | None = None, layers: int | None = None
) -> list[dict]:
    """One row per model (bench/run.py's `row` as `make_row`): the export and compile peak over
    the weight bytes against the goal, every phase's time and peak in the figure; then, with
    `micro_batches` > 1, one per model of PIPELINED run as a pipeline: its device time per
    sample beside the sharded run's, its fill and flush beside the ideal. None: MICRO_BATCHES
    when `reduced`, else 1 (BERT-Large pipelined at full size over 4 micro-batches loads at
    10 GiB and runs 9 minutes on this machine: docs/many-ipus.md)."""
    micro_batches = micro_batches or (MICRO_BATCHES if reduced else 1)
    result, sharded = [], {}
    for name in models or list(MODELS):
        f = run_one(name, reduced, 1, layers)
        input_ = f"{name} ({'reduced' if reduced else 'full size'}{f', {layers} layers' if layers else ''})"
        if "error" in f:
            result.append(make_row("big_models", "peak memory per phase", input_, f"failed: {f['error']}", None, "weights", "runs", False))
            continue
        sharded[name] = f
        ratio = (max(f["export"]["peak"], f["compile"]["peak"]) - f["imports"]) / f["weights"]
        met = ratio <= GOAL_RATIO and f["ok"]
        goal = f"export and compile peak, less the imports, <= {GOAL_RATIO:g}x weights; checked against PyTorch"
        result.append(
            make_row("big_models", "peak memory per phase", input_, describe(f), ratio, "weight bytes (peak less imports)", goal, met, **f)
        )
    for name in [name for name in PIPELINED if name in sharded] if micro_batches > 1 else []:
        f = run_one(name, reduced, micro_batches, layers)
        input_ = (
            f"{name} ({'reduced' if reduced else 'full size'}{f', {layers} layers' if layers else ''}), {micro_batches} micro-batches of 1"
        )
        what = "pipelined over the m2000's 4 IPUs: device time per sample"
        if "error" in f:
            result.append(make_row("big_models", what, input_, f"failed: {f['error']}", None, "sharded", "runs", False))
            continue
        per_sample, sharded_per_sample = f["seconds"] / f["samples"], sharded[name]["seconds"] / sharded[name]["samples"]
        figure = (
            f"{per_sample * 1e3:.3f} ms per sample pipelined vs {sharded_per_sample * 1e3:.3f} ms sharded "
            f"({sharded_per_sample / per_sample:.2f}x); fill + flush {f['fill_flush']:.1%} of the run "
            f"(ideal 2(S-1)/(M+S-1) = {f['ideal_fill_flush']:.1%}); {describe(f)}"
        )
        goal = "faster per sample than sharded; checked against PyTorch"
        met = per_sample < sharded_per_sample and f["ok"]
        result.append(make_row("big_models", what, input_, figure, sharded_per_sample / per_sample, "sharded, batch 1", goal, met, **f))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=None, help="default: all four")
    parser.add_argument("--reduced", action="store_true", help="the zoo's reduced configurations (the tests')")
    parser.add_argument(
        "--micro-batches",
        type=int,
        default=None,
        help=f"BERT-Large's and GPT-2 medium's pipelines (default: {MICRO_BATCHES} with --reduced, else 1: none)",
    )
    parser.add_argument("--layers", type=int, default=None, help="that many layers (BERT-Large: a multiple of 4, a quarter per IPU)")
    parser.add_argument("--one", choices=list(MODELS), help=argparse.SUPPRESS)  # a child process: one model, JSON out
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one, args.reduced, args.micro_batches or 1, args.layers)), flush=True)
        return

    def show(section, what, input_, figure, ratio, peer, goal="-", met=None, **raw) -> dict:
        verdict = "" if met is None else f" [{'met' if met else 'missed'}: {goal}]"
        print(f"{input_}: {figure}" + ("" if ratio is None else f"; {ratio:.2f}x {peer}") + verdict, flush=True)
        return raw

    rows(args.reduced, show, args.models, args.micro_batches, args.layers)


if __name__ == "__main__":
    main()
