"""Training steps (issue 25, point 9): a simulated training step against PyTorch eager's on one
thread, the joint step's compile time, host bytes per step and simulated images per second.

    .venv/bin/python bench/training.py [--quick] [--repeat N] [--models resnet18 ...] [--cases "batch 2" ...]

Each case is a zoo model with `ipu-run --train`'s loss (tools/train.py: cross-entropy on random
labels for the vision models, next-token cross-entropy for GPT-2, MSE for BERT's encoder) and
SGD with momentum, compiled by `trainingModel` for gc200. Per case:

- compile: the joint step traced and imported (torch-mlir), then compiled and loaded, seconds;
- the steady step: one call of the trainingModel (a micro-batch through forward, backward and
  update on the simulator, the state resident) against PyTorch's `zero_grad`, forward,
  `backward`, `step` on one thread, medians of interleaved rounds; goal <= 3x (issue 25);
- parameters and buffers: the trainingModel's after its first step and after all of its
  warm-up and timed steps against PyTorch's after as many, from the same weights on the same
  batch, judged by `ipu-run --train`'s rule (tools/train.py's `judge`): rtol 1e-4 of each
  tensor's largest magnitude, widened only where PyTorch's own f32 loop is as far from its
  f64 loop (over many steps on one batch the vision models amplify rounding,
  docs/training.md#conditioning). The row gives our distance to PyTorch's f32 loop and to
  its f64 loop beside PyTorch f32's own distance to its f64 loop;
- host bytes per step: the profile's host streams against the micro-batch's bytes (the inputs
  and the loss): the goal is that nothing else crosses the link (device variables);
- the simulated step's time on gc200 and, for the vision models, images per second per IPU.

A case the compiler or torch-mlir refuses gets a row saying so, and the next configuration of
the model (smaller) is tried: the full run starts at full size, `--quick` at the reduced sizes.
"""

from __future__ import annotations

import argparse
import copy
import os
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/run.py: the simulator on one core, as PyTorch's 1-thread side

import torch  # noqa: E402

from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.frontends.options import Options  # noqa: E402
from ipu_mlir.frontends.torch import trainingModel  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402
from ipu_mlir.tools.train import ExactLoop, _batch, _WithLoss, judge  # noqa: E402 (ipu-run --train's loss, batch and rule)

TARGET = "gc200"
GOAL_RATIO = 3.0  # issue 25: the simulated step within 3x PyTorch eager's on one thread
GOAL_COMPILE_S = 60.0  # issue 25: ResNet-50's training step compiled within 60 s
# Graphcore's published ResNet-50 training throughput, per IPU (the system's figure / its 16
# IPUs), as issue 25 quotes them: Bow Pod16 42,029 img/s (Graphcore's performance results);
# MLPerf Training v1.1, IPU-POD16 on GC200, about 30,000 img/s. Their precision and micro-batch
# are the submissions' own, not restated here: docs/fidelity.md says what the ratio means.
PUBLISHED = (("Bow Pod16 (Bow IPU)", 42_029 / 16), ("MLPerf v1.1 IPU-POD16 (GC200)", 30_000 / 16))


@dataclass
class Case:
    label: str  # the row's input
    name: str  # zoo model
    batch: int
    options: dict = field(default_factory=dict)  # zoo.build's
    full_size: bool = False  # ResNet-50 at 224x224, full width: the one compared with Graphcore's throughput
    target: str = TARGET
    memory_proportion: float | None = None  # PopTorch's setAvailableMemoryProportion, None: the target's


def cases(quick: bool) -> list[list[Case]]:
    """Per model, its configurations from the largest to try to the smallest."""
    reduced = {name: dict(zoo.MODELS[name].reduced) for name in ("resnet18", "resnet50", "bert_encoder", "gpt2")}
    resnet18_small = Case("ResNet-18 width 1/8, 32x32, batch 8", "resnet18", 8, reduced["resnet18"])
    resnet50_small = Case("ResNet-50 width 1/8, 32x32, batch 8", "resnet50", 8, reduced["resnet50"])
    bert_small = Case("BERT encoder reduced (2 layers, hidden 64, seq 16), batch 2", "bert_encoder", 2, reduced["bert_encoder"])
    gpt2_small = Case("GPT-2 reduced (2 layers, hidden 64, seq 16), batch 2", "gpt2", 2, reduced["gpt2"])
    if quick:
        return [[resnet18_small], [bert_small], [gpt2_small], [resnet50_small]]
    return [
        [
            Case("ResNet-18 full width, 224x224, batch 1", "resnet18", 1),
            Case("ResNet-18 full width, 32x32, batch 8", "resnet18", 8, {"size": 32}),
            resnet18_small,
        ],
        [Case("BERT-base layer (hidden 768, 12 heads, seq 128), batch 1", "bert_encoder", 1, {"layers": 1}), bert_small],
        [
            Case("GPT-2 small (12 layers, hidden 768, seq 128), batch 1", "gpt2", 1),
            Case("GPT-2 small's width, 1 layer, seq 128, batch 1", "gpt2", 1, {"layers": 1}),
            Case("GPT-2 small's width, 1 layer, seq 128, vocabulary 8,192, batch 1", "gpt2", 1, {"layers": 1, "vocab": 8192}),
            gpt2_small,
        ],
        # the largest micro-batch that fits gc200 in f32 with plain SGD is 3 (docs/training.md); momentum's
        # buffers take about 69,400 bytes more a tile (25.6 M x 4 bytes over 1,472 tiles), so the smaller ones follow
        [*(Case(f"ResNet-50 full size, 224x224, batch {batch}", "resnet50", batch, full_size=True) for batch in (3, 2, 1)), resnet50_small],
    ]


def model_and_batch(name: str, batch: int, options: dict) -> tuple:
    """Zoo model `name` with its loss (`ipu-run --train`'s), dropout off so both sides take the
    same step, and its first synthetic batch."""
    net, example = zoo.build(name, batch=batch, **options)
    for layer in net.modules():
        if isinstance(layer, torch.nn.Dropout):
            layer.p = 0.0
    with torch.no_grad():
        probe = copy.deepcopy(net).eval()(*example)
    model = _WithLoss(net, name)
    return model, _batch(example, model, name, tuple((probe[0] if isinstance(probe, tuple) else probe).shape), 0)


def measure(case: Case, repeat: int) -> dict:
    """The case's figures, or {"refused": the one-line error}."""
    model, inputs = model_and_batch(case.name, case.batch, case.options)
    reference = copy.deepcopy(model).train()
    options = Options().target(case.target)
    if case.memory_proportion is not None:
        options.setAvailableMemoryProportion({f"IPU{k}": case.memory_proportion for k in range(4)})
    ours = trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9))
    theirs = torch.optim.SGD(reference.parameters(), lr=1e-3, momentum=0.9)
    exact = ExactLoop(model, lambda parameters: torch.optim.SGD(parameters, lr=1e-3, momentum=0.9))

    def torch_step() -> None:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            theirs.zero_grad()
            reference(*inputs).backward()
            theirs.step()
        finally:
            torch.set_num_threads(threads)

    try:
        ours(*inputs)  # compiles, loads, writes the variables; the first run checks the BSP memory rules
    except IpuError as error:
        return {"refused": str(error).splitlines()[0]}
    # PyTorch takes the same steps, untimed, so the parameters can be compared: after the first,
    # before rounding differences grow through the steps (docs/training.md#conditioning), and at the end
    ours.copyWeightsToHost()
    torch_step()
    exact.step(inputs, 0)
    first = judge(model, reference, exact.model, exact.grads, 1, tensor_wide=False)
    ours(*inputs)  # the second run plans the unchecked runs: the steady step from here
    torch_step()
    exact.step(inputs, 1)
    times: list[list[float]] = [[], []]
    for index in range(repeat):  # interleaved: a load spike on this shared machine hits both sides
        for side, step in enumerate((lambda: ours(*inputs), torch_step)):
            start = time.perf_counter()
            step()
            times[side].append(time.perf_counter() - start)
        exact.step(inputs, 2 + index)  # untimed
    ours.copyWeightsToHost()
    last = judge(model, reference, exact.model, exact.grads, 2 + repeat, tensor_wide=True)
    profile = ours.profile
    batch_bytes = sum(value.numel() * value.element_size() for value in inputs) + 4  # the micro-batch and the loss (f32)
    return {
        "export_s": ours.timings["export"],
        "compile_s": ours.timings["compile_and_load"],
        "sim_s": statistics.median(times[0]),
        "eager1_s": statistics.median(times[1]),
        "steps": 2 + repeat,
        "first": asdict(first),  # a Judgement as plain values: bench/run.py writes the raw figures as JSON
        "last": asdict(last),
        "host_bytes": profile.host_bytes,
        "batch_bytes": batch_bytes,
        "device_s": profile.seconds,
        "cycles": profile.cycles,
        "parameters": sum(p.numel() for p in model.parameters()),
        "vertices": profile.vertices,
        "edges": profile.edges,
    }


def rows(quick: bool, repeat: int, row, models: tuple[str, ...] = (), labels: tuple[str, ...] = ()) -> list[dict]:  # noqa: ANN001 (bench/run.py's row)
    """The section's rows, made by `row(section, what, input, figure, ratio, peer, goal, met, **raw)`;
    only the zoo `models` named, if any, and only the configurations whose label contains one of
    `labels`, if any (one known to be refused is then not compiled only to be refused)."""
    out = []
    for configurations in cases(quick):
        if models and configurations[0].name not in models:
            continue
        for case in configurations:
            if labels and not any(text in case.label for text in labels):
                continue
            figures = measure(case, repeat)
            if "refused" in figures:
                out.append(
                    row("training", "simulated training step", case.label, f"refused: {figures['refused']}", None, "-", "compiles", False)
                )
                continue
            out += case_rows(case, figures, row)
            break
    if not quick and (not models or "gpt2" in models):
        out += gpt2_on_m2000_rows(repeat, row, labels)
    tried = not models or "resnet50" in models
    if tried and not any(r["raw"].get("images_per_second") and "full size" in r["input"] for r in out):
        out += [placeholder(system, per_ipu, quick, row) for system, per_ipu in PUBLISHED]
    return out


def gpt2_on_m2000_rows(repeat: int, row, labels: tuple[str, ...] = ()) -> list[dict]:  # noqa: ANN001
    """GPT-2 small at full size sharded over an m2000's 4 IPUs by memory balance (issue 26):
    its weights and momentum (995 MB) do not fit one gc200 (941 MB of tile memory). At the
    default available memory proportion (0.6) the token embedding's momentum update was refused:
    one elementwise op over four 50257x768 f32 tensors, 420 KB a tile on its IPU's 1,472 tiles
    against 383 KB (315 KB since ipu-plan counts the momentum written over the old once); the
    rows were measured at 0.85."""
    case = Case(
        "GPT-2 small (12 layers, hidden 768, seq 128), batch 1, m2000 (4 IPUs, memory balance), memory proportion 0.85",
        "gpt2",
        1,
        target="m2000",
        memory_proportion=0.85,
    )
    if labels and not any(text in case.label for text in labels):
        return []
    figures = measure(case, repeat)
    if "refused" in figures:
        return [row("training", "simulated training step", case.label, f"refused: {figures['refused']}", None, "-", "compiles", False)]
    return case_rows(case, figures, row)


def placeholder(system: str, per_ipu: float, quick: bool, row) -> dict:  # noqa: ANN001
    """The throughput row while full-size ResNet-50's training step is not measured: --quick does
    not try it; a full run that was refused says so in the rows above."""
    why = "not tried by --quick" if quick else "its training step did not compile (the refusal is above)"
    return row(
        "training",
        "simulated training images/s per IPU (full-size ResNet-50)",
        "PLACEHOLDER: ResNet-50 224x224 not measured",
        f"not measured: {why}; published {per_ipu:,.0f} img/s",
        None,
        f"{system}, per IPU",
        "-",
        None,
    )


def case_rows(case: Case, f: dict, row) -> list[dict]:  # noqa: ANN001
    sim, eager = f["sim_s"], f["eager1_s"]
    out = [
        row(
            "training",
            "simulated training step (SGD momentum, f32)",
            case.label,
            f"{sim * 1e3:.1f} ms vs {eager * 1e3:.1f} ms",
            sim / eager,
            "PyTorch eager training step, 1 thread",
            f"<= {GOAL_RATIO:g}x (issue 25)",
            sim / eager <= GOAL_RATIO,
            **f,
        ),
        row(
            "training",
            "host bytes per step",
            case.label,
            f"{f['host_bytes']:,} bytes vs micro-batch and loss {f['batch_bytes']:,} bytes",
            f["host_bytes"] / f["batch_bytes"],
            "the micro-batch and the loss",
            "the batch only (issue 25)",
            f["host_bytes"] <= f["batch_bytes"],
            **f,
        ),
    ]
    first, last = f["first"], f["last"]
    out.append(
        row(
            "training",
            f"parameters after 1 and {f['steps']} steps vs PyTorch's",
            case.label,
            f"after 1 step {distances(first)}; after {f['steps']} {distances(last)}",
            None,
            "PyTorch eager, the same steps from the same weights, in f32 and in f64",
            "rtol 1e-4, or as near f64 as PyTorch f32 (issue 25; ipu-run --train's rule)",
            first["passed"] and last["passed"],
            **f,
        )
    )
    compile_goal = case.name == "resnet50"
    out.append(
        row(
            "training",
            "joint step compile time",
            case.label,
            f"trace + import {f['export_s']:.1f} s, compile + load {f['compile_s']:.1f} s",
            None,
            "-",
            f"<= {GOAL_COMPILE_S:g} s for ResNet-50 (issue 25)" if compile_goal else "-",
            (f["export_s"] + f["compile_s"] <= GOAL_COMPILE_S) if compile_goal else None,
            **f,
        )
    )
    if zoo.MODELS[case.name].kind == "vision":
        rate = case.batch / f["device_s"]
        for system, per_ipu in PUBLISHED if case.full_size else ():
            out.append(
                row(
                    "training",
                    f"simulated training images/s per IPU (micro-batch {case.batch}, f32)",
                    case.label,
                    f"{rate:,.0f} img/s ({f['device_s'] * 1e6:,.0f} us a step on gc200) vs {per_ipu:,.0f} img/s",
                    rate / per_ipu,
                    f"{system}, per IPU (its own precision and micro-batch)",
                    "-",
                    None,
                    images_per_second=rate,
                    published_per_ipu=per_ipu,
                    **f,
                )
            )
        if not case.full_size:
            out.append(
                row(
                    "training",
                    f"simulated training images/s per IPU (micro-batch {case.batch}, f32)",
                    case.label,
                    f"{rate:,.0f} img/s ({f['device_s'] * 1e6:,.0f} us a step on gc200)",
                    None,
                    "-",
                    images_per_second=rate,
                    **f,
                )
            )
    return out


def distances(judgement: dict) -> str:
    """A `Judgement`'s (as a dict) distances, each the worst tensor's largest difference relative
    to its largest magnitude: ours from PyTorch's f32 loop, ours and PyTorch f32's from its f64 loop."""
    (ours_name, ours), (ours_f64_name, ours_f64), (f32_name, f32) = (judgement[key] for key in ("ours_f32", "ours_f64", "f32_f64"))
    verdict = "ok" if judgement["passed"] else f"FAILED ({judgement['failed']:,} elements)"
    return (
        f"{ours:.2g} from PyTorch f32 ({ours_name}), {ours_f64:.2g} from f64 ({ours_f64_name}) "
        f"where PyTorch f32 is {f32:.2g} from f64 ({f32_name}): {verdict}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="the reduced configurations only")
    parser.add_argument("--repeat", type=int, default=None, help="timed rounds (default: 3 quick, 7 full)")
    parser.add_argument("--models", nargs="+", default=(), help="only these zoo models (resnet18, bert_encoder, gpt2, resnet50)")
    parser.add_argument("--cases", nargs="+", default=(), help="only the configurations whose label contains one of these")
    args = parser.parse_args()

    def row(section, what, input_, figure, ratio, peer, goal="-", met=None, **raw):  # noqa: ANN001, ANN202
        verdict = "" if met is None else f" [{'met' if met else 'missed'}]"
        print(f"{what}: {input_}: {figure}" + ("" if ratio is None else f" (ratio {ratio:.3g})") + verdict, flush=True)
        return {"input": input_, "raw": raw}

    rows(args.quick, args.repeat or (3 if args.quick else 7), row, tuple(args.models), tuple(args.cases))


if __name__ == "__main__":
    sys.exit(main())
