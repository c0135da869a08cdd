"""ipu-pipeline on an m2000: a BERT-style encoder stack (HF `BertEncoder`) sharded over 4 IPUs
by memory balance, run sharded (one IPU after another) and pipelined over M micro-batches;
the pipeline bubble beside the ideal (S - 1) / (M + S - 1) and the speed-up over sharded
execution; then 4 data-parallel replicas of it, one IPU each (ipu-replicate); the outputs
checked against PyTorch.

    .venv/bin/python bench/pipeline.py [--layers 4] [--batch 16] [--seq 32] [--hidden 128] [--micro-batches 4 8 16] [--replicas 4]

The bubble is the stages' idle share of the pipelined run (`bubble`: each superstep counts as
busy for the IPUs computing in it), beside the ideal (S-1)/(M+S-1); the fill and the flush, the
supersteps before the first and after the last in which every stage computes, are given as a
fraction of the run too, beside their ideal 2(S-1)/(M+S-1).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from mlir import ir

from ipu_mlir.frontends import torch as ipu_torch
from ipu_mlir.frontends import zoo
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.target import load_target

TARGET = "m2000"


def bubble(profile, stages: int, tiles_per_ipu: int) -> tuple[float, float]:
    """(idle, edges): the share of the stages' time in which they do not compute, comparable to
    the ideal (S-1)/(M+S-1) (a superstep is busy time for each IPU computing in it, idle for the
    others: imbalance between stages counts too); and the fill and the flush as a fraction of the
    run, the supersteps before the first and after the last in which all `stages` compute
    (ideal 2(S-1)/(M+S-1))."""
    computing = [
        np.unique(np.flatnonzero(step.compute_cycles_per_tile) // tiles_per_ipu).size if step.compute_cycles_per_tile is not None else 0
        for step in profile.steps
    ]
    busy = sum(n * step.cycles for n, step in zip(computing, profile.steps))
    idle = 1 - busy / (stages * profile.cycles)
    full = [n == stages for n in computing]
    if not any(full):
        return idle, 1.0
    first, last = full.index(True), len(full) - 1 - full[::-1].index(True)
    edges = sum(step.cycles for step in profile.steps[:first]) + sum(step.cycles for step in profile.steps[last + 1 :])
    return idle, edges / profile.cycles


def simulate(imported, micro_batches: int, replicas: int = 1):
    with imported.context:
        module = ir.Module.parse(str(imported))
        start = time.time()
        compile_module(module, TARGET, micro_batches=micro_batches, replicas=replicas)
        seconds = time.time() - start
        return runtime_api.load_simulator(module, None, "main", verified=True), seconds


def rows(layers: int = 4, batch: int = 16, seq: int = 32, hidden: int = 128, micro_batches=(4, 8, 16), replicas=(4,)) -> list[dict]:
    """The sharded run (micro_batches 1), then one row per pipeline and per replica count."""
    model, inputs = zoo.bert_encoder(batch=batch, seq=seq, layers=layers, hidden=hidden, heads=max(1, hidden // 64))
    imported = ipu_torch.export(model, *inputs)
    expected = [np.asarray(t) for t in _flat(ipu_torch.run_eager(model, *inputs))]
    host = [np.asarray(t) for t in inputs]
    stages = load_target(TARGET).num_ipus
    tiles = load_target(TARGET).tiles_per_ipu
    sharded, seconds = simulate(imported, 1)
    reference = sharded.run(host)
    out = [{"micro_batches": 1, "cycles": sharded.profile.cycles, "compile_s": seconds, "error": _error(reference, expected)}]
    for m in micro_batches:
        pipelined, seconds = simulate(imported, m)
        got = pipelined.run(host)
        idle, edges = bubble(pipelined.profile, stages, tiles)
        out.append(
            {
                "micro_batches": m,
                "cycles": pipelined.profile.cycles,
                "speedup": sharded.profile.cycles / pipelined.profile.cycles,
                "bubble": idle,
                "ideal_bubble": (stages - 1) / (m + stages - 1),
                "fill_flush": edges,
                "ideal_fill_flush": 2 * (stages - 1) / (m + stages - 1),
                "supersteps": pipelined.profile.supersteps,
                "compile_s": seconds,
                "error": _error(got, expected),
                "max_diff_vs_sharded": max(float(np.abs(g - r).max()) for g, r in zip(got, reference)),
            }
        )
    for r in replicas:
        replicated, seconds = simulate(imported, 1, r)
        got = replicated.run(host)
        speedup = sharded.profile.cycles / replicated.profile.cycles
        out.append(
            {"replicas": r, "cycles": replicated.profile.cycles, "speedup": speedup, "compile_s": seconds, "error": _error(got, expected)}
        )
    return out


def bench_rows(quick: bool, row) -> list[dict]:  # noqa: ANN001 (bench/run.py's row)
    """bench/run.py's pipeline section: the bubble beside the ideal, and the speed-ups."""
    config = dict(layers=4, batch=16, seq=32, hidden=128) if quick else dict(layers=4, batch=64, seq=32, hidden=128)
    counts = (4,) if quick else (4, 8, 16)
    shape = f"BERT encoder {config['layers']} layers, batch {config['batch']}, seq {config['seq']}, hidden {config['hidden']}"
    measured = rows(**config, micro_batches=counts)
    sharded = measured[0]["cycles"]
    out = []
    for r in measured[1:]:
        if "replicas" in r:
            figure = f"{r['speedup']:.2f}x the sharded run ({r['cycles']:,} vs {sharded:,} cycles); error vs PyTorch {r['error']:.1e}"
            what = f"{r['replicas']} data-parallel replicas on {TARGET} (ipu-replicate)"
            out.append(row("pipeline", what, shape, figure, r["speedup"], "sharded over 4 IPUs", **r))
            continue
        figure = (
            f"bubble {r['bubble']:.1%} (ideal {r['ideal_bubble']:.1%}), fill + flush {r['fill_flush']:.1%} of the run "
            f"(ideal {r['ideal_fill_flush']:.1%}); {r['speedup']:.2f}x the sharded run "
            f"({r['cycles']:,} vs {sharded:,} cycles); error vs PyTorch {r['error']:.1e}"
        )
        what = f"pipeline over 4 stages on {TARGET}, {r['micro_batches']} micro-batches (ipu-pipeline)"
        out.append(row("pipeline", what, shape, figure, r["bubble"] / r["ideal_bubble"], "ideal bubble (S-1)/(M+S-1)", **r))
    return out


def _flat(value) -> list:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _error(got: list, expected: list) -> float:
    return max(float(np.abs(g - e).max() / (np.abs(e).max() or 1)) for g, e in zip(got, expected))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--micro-batches", type=int, nargs="+", default=[4, 8, 16])
    parser.add_argument("--replicas", type=int, nargs="*", default=[4])
    args = parser.parse_args()
    print(f"BERT encoder: {args.layers} layers, batch {args.batch}, seq {args.seq}, hidden {args.hidden}; {TARGET}, 4 stages")
    print("M    cycles      speed-up  bubble  ideal   fill+flush ideal  supersteps  compile  rel.err vs torch")
    for row in rows(args.layers, args.batch, args.seq, args.hidden, tuple(args.micro_batches), tuple(args.replicas)):
        if "replicas" in row:
            cells = f"R={row['replicas']:<2} {row['cycles']:<11,} {row['speedup']:<9.2f} replicated {'':21}"
            print(f"{cells}{row['compile_s']:5.1f} s  {row['error']:.1e}")
            continue
        if row["micro_batches"] == 1:
            print(f"1    {row['cycles']:<11,} sharded                   {'':12}{row['compile_s']:5.1f} s  {row['error']:.1e}")
            continue
        print(
            f"{row['micro_batches']:<4} {row['cycles']:<11,} {row['speedup']:<9.2f} {row['bubble']:<7.1%} {row['ideal_bubble']:<7.1%} "
            f"{row['fill_flush']:<10.1%} {row['ideal_fill_flush']:<6.1%} {row['supersteps']:<11} "
            f"{row['compile_s']:5.1f} s  {row['error']:.1e}"
        )


if __name__ == "__main__":
    main()
