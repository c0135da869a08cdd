"""Compile and load time of every zoo model and of ResNet-50's training step, with the busiest
tile's memory beside the mean (issue 27 points 2, 3 and 5, issue 25 point 9).

    .venv/bin/python bench/compile_time.py [--quick] [--models alexnet resnet50 ...] [--no-training]

Each zoo model at `ipu-run --model NAME`'s configuration (`--quick`: the zoo's reduced one) is
exported by torch-mlir (timed apart: it is not the compiler's), compiled by the default pipeline
for gc200 (`frontends.api.compile_to_program`) and loaded into the simulator
(`runtime.api.load_simulator`); the training row does the same with the joint step of ResNet-50
at 224x224, batch 2 (`ipu-run --model resnet50 --train --batch 2`'s; `--quick`: the reduced
configuration), traced and imported by `trainingModel`'s first call, stopped before it
compiles. The figures are CPU seconds of this process, steadier than wall time on a shared
machine, with wall seconds beside them. Goals: a zoo model compiles in under 10 s (issue 27
point 2), its load takes no longer than its compile (point 3); the full-size training step is
traced, imported, compiled and loaded in at most 60 s (issue 25 point 9; about 1.5 GiB at
peak). Memory: the memory
plan's peak bytes on the busiest tile and the mean over the tiles holding any buffer (the
simulator's `Profile.memory_per_tile`), which point 5 wants within 10% of each other where the
ops allow it (a small model on a few tiles need not spread).

The end-to-end rows (issue 27 point 1) run `ipu-run --model resnet50` as a user does, in a
process of its own: cold (an empty program cache and numba cache: a fresh install) and then
warm (the same caches, second time), file to checked answer, with the child's wall and CPU
seconds (`os.wait4`), its peak resident set and the phases it prints. Goals: under 30 s cold and
under 10 s warm (wall, as the issue states them); the load average stands beside them, since on
a shared machine wall time is mostly other jobs' (`--quick`: ResNet-18 at 32x32, no goal).

These are absolute times, of the commit the run reports: the plan search's shortcuts (lowering/
plan.py `_Prices`) keep no switch back to the old search, and their effect is measured by
running this on the commit before them (their commit message gives the numbers).
"""

from __future__ import annotations

import argparse
import copy
import gc
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/run.py

import torch  # noqa: E402

from ipu_mlir.frontends import (  # noqa: E402
    api,
    cache,
    fx_import,  # noqa: E402
    zoo,
)
from ipu_mlir.frontends import torch as torch_frontend  # noqa: E402
from ipu_mlir.frontends.options import Options  # noqa: E402
from ipu_mlir.frontends.training import TrainingModel  # noqa: E402
from ipu_mlir.runtime import api as runtime_api  # noqa: E402
from ipu_mlir.tools.train import _batch, _WithLoss  # noqa: E402 (ipu-run --train's loss and synthetic batch)

TARGET = "gc200"
GOAL_COMPILE_S = 10.0
GOAL_TRAINING_STEP_S = 60.0  # ResNet-50's training step, 224x224, traced, imported, compiled and loaded (issue 25 point 9)
GOAL_END_TO_END_S = {"cold": 30.0, "warm": 10.0}  # ResNet-50 file -> checked answer (issue 27 point 1)
ONE_IPU = [
    name for name, model in zoo.MODELS.items() if model.target == TARGET
]  # bench/big_models.py has the rest  # issue 27 point 2: every zoo model compiles in under 10 s


def commit() -> str:
    """The commit measured, with '+' when the work tree differs from it."""
    here = Path(__file__).parent
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=here, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    return head + ("+" if dirty.strip() else "")


def timed(step: Callable[[], object]) -> tuple[object, float, float]:
    """`step()`, its CPU and wall seconds."""
    gc.collect()  # the garbage of what came before is not this step's
    cpu, wall = time.process_time(), time.perf_counter()
    result = step()
    return result, time.process_time() - cpu, time.perf_counter() - wall


def phases(module, export_s: float, export_cpu: float) -> dict:
    """Compile and load seconds (CPU and wall) of an exported module, with the plan's cycles."""
    program, compile_cpu, compile_wall = timed(lambda: api.compile_to_program(module, TARGET))
    simulator, load_cpu, load_wall = timed(lambda: runtime_api.load_simulator(program, TARGET, "main", verified=True))
    memory = simulator.profile.memory_per_tile
    return {
        "export_s": export_s,
        "export_cpu": export_cpu,
        "compile_cpu": compile_cpu,
        "compile_wall": compile_wall,
        "load_cpu": load_cpu,
        "load_wall": load_wall,
        "cycles": simulator.profile.cycles,
        "busiest_tile_bytes": int(memory.max()),
        "mean_tile_bytes": float(memory[memory > 0].mean()) if memory.any() else 0.0,
    }


def model_figures(name: str, quick: bool) -> dict:
    module, inputs = zoo.build(name, **(zoo.MODELS[name].reduced if quick else {}))
    imported, export_cpu, export_s = timed(lambda: torch_frontend.export(module, *inputs))
    return phases(imported, export_s, export_cpu)


class _Traced(Exception):
    """Stops `trainingModel`'s first call once the joint step is traced and imported."""

    def __init__(self, step: object) -> None:
        self.step = step


def _stop(step: object, target: str, **options: object) -> None:
    raise _Traced(step)


def training_figures(full: bool) -> dict:
    """ResNet-50's training step, batch 2, as `ipu-run --model resnet50 --train --batch 2`
    builds it (its loss, plain SGD at lr 0.01, fixed seed; `full`: 224x224, else the zoo's
    reduced configuration): traced and imported by `trainingModel`'s first call, which stops
    there (the export's CPU seconds), then compiled and loaded here as a zoo model is."""
    net, example = zoo.build("resnet50", batch=2, **({} if full else zoo.MODELS["resnet50"].reduced))
    with torch.no_grad():
        output_shape = tuple(copy.deepcopy(net).eval()(*example).shape)
    model = _WithLoss(net, "resnet50")
    options = Options().target(TARGET).randomSeed(0)
    trained = TrainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.01), _stop, fx_import.importer_class())
    batch = _batch(example, model, "resnet50", output_shape, 0)
    gc.collect()
    cpu, wall = time.process_time(), time.perf_counter()
    try:
        trained(*batch)
    except _Traced as traced:
        step = traced.step
    return phases(step, time.perf_counter() - wall, time.process_time() - cpu)


def row_of(input_: str, figures: dict, make_row: Callable, goal: str | None) -> dict:
    """`goal`: "zoo" (issue 27's), "training" (issue 25's, the full-size step) or None."""
    f = figures
    spread = f["busiest_tile_bytes"] / max(1.0, f["mean_tile_bytes"])
    figure = (
        f"compile {f['compile_cpu']:.2f} s CPU ({f['compile_wall']:.1f} s wall), load {f['load_cpu']:.2f} s CPU "
        f"({f['load_wall']:.1f} s wall); export {f['export_cpu']:.2f} s CPU ({f['export_s']:.1f} s wall); {f['cycles']:,} cycles; "
        f"busiest tile {f['busiest_tile_bytes']:,} B, mean {f['mean_tile_bytes']:,.0f} B ({spread:.2f}x)"
    )
    total = f["export_cpu"] + f["compile_cpu"] + f["load_cpu"]
    met = {
        "zoo": f["compile_cpu"] < GOAL_COMPILE_S and f["load_cpu"] <= f["compile_cpu"],
        "training": total <= GOAL_TRAINING_STEP_S,
        None: None,
    }[goal]
    goal_text = {
        "zoo": f"compile < {GOAL_COMPILE_S:g} s, load <= compile (issue 27)",
        "training": f"trace + import + compile + load <= {GOAL_TRAINING_STEP_S:g} s CPU (issue 25), {total:.1f} s",
        None: "-",
    }[goal]
    return make_row(
        "compile",
        "compile and load time",
        input_,
        figure,
        f["load_cpu"] / f["compile_cpu"],
        "compile (load / compile)",
        goal_text,
        met,
        **f,
    )


def ipu_run(arguments: list[str], environment: dict[str, str]) -> dict:
    """`ipu-run ARGUMENTS` in a process of its own: wall and CPU seconds, peak resident set,
    its printed phases (`name: seconds s`) and its exit status."""
    command = [str(Path(sys.executable).with_name("ipu-run")), *arguments]
    load = os.getloadavg()[0]
    with tempfile.TemporaryFile("w+") as log:
        wall = time.perf_counter()
        child = subprocess.Popen(command, env=environment, stdout=log, stderr=subprocess.STDOUT, text=True)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own CPU seconds and peak resident set
        wall = time.perf_counter() - wall
        child.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        output = log.read()
    phases = {name: float(seconds) for name, seconds in re.findall(r"^(\w+):\s+([\d.]+) s\b", output, re.MULTILINE)}
    figures = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_bytes": usage.ru_maxrss * 1024, "load_average": load}
    figures |= {"phases": phases, "status": child.returncode}
    if child.returncode:
        figures["output"] = output[-2000:]  # what went wrong, for results.json
    return figures


def end_to_end(arguments: list[str]) -> dict[str, dict]:
    """`ipu-run ARGUMENTS` cold (fresh program and numba caches), then warm (the same caches)."""
    with tempfile.TemporaryDirectory(prefix="ipu-mlir-end-to-end-") as caches:
        environment = {k: v for k, v in os.environ.items() if k not in (cache.DIR_ENV, cache.OFF_ENV)}
        environment |= {"XDG_CACHE_HOME": f"{caches}/xdg", "NUMBA_CACHE_DIR": f"{caches}/numba"}
        return {state: ipu_run(arguments, environment) for state in ("cold", "warm")}


def end_to_end_rows(quick: bool, make_row: Callable) -> list[dict]:
    """`ipu-run --model resnet50` (`quick`: ResNet-18 at 32x32) cold and warm."""
    arguments = ["--model", "resnet18", "--size", "32"] if quick else ["--model", "resnet50"]
    result = []
    for state, f in end_to_end(arguments).items():
        goal = None if quick else GOAL_END_TO_END_S[state]
        phases = ", ".join(f"{name} {seconds:.1f}" for name, seconds in f["phases"].items())
        figure = (
            f"{f['wall_s']:.1f} s wall, {f['cpu_s']:.1f} s CPU, peak {f['peak_bytes'] / 2**30:.2f} GiB, "
            f"load average {f['load_average']:.1f} on {os.cpu_count()} cores; phases (s): {phases}"
            + ("" if f["status"] == 0 else f"; exit status {f['status']}")
        )
        met = None if goal is None else f["status"] == 0 and f["wall_s"] < goal
        input_ = f"ipu-run {' '.join(arguments)}, {state} ({commit()})"
        goal_text = "-" if goal is None else f"< {goal:g} s wall (issue 27)"
        result.append(make_row("compile", "file to checked answer", input_, figure, None, "-", goal_text, met, **f))
    return result


def rows(quick: bool, make_row: Callable, models: list[str] | None = None, training: bool = True, ends: bool = True) -> list[dict]:
    """One row per zoo model, then the training step's, then the end-to-end rows; `make_row` is
    bench/run.py's `row`."""
    size = "reduced" if quick else "ipu-run --model's size"
    result = [row_of(f"{name} ({size}, gc200, {commit()})", model_figures(name, quick), make_row, "zoo") for name in models or ONE_IPU]
    if training:
        input_ = f"ResNet-50 training step, {'reduced' if quick else '224x224'}, batch 2 (gc200, {commit()})"
        result.append(row_of(input_, training_figures(not quick), make_row, None if quick else "training"))
    if ends:
        result += end_to_end_rows(quick, make_row)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the zoo's reduced configurations")
    parser.add_argument("--models", nargs="+", choices=list(zoo.MODELS), default=None, help="default: every zoo model")
    parser.add_argument("--no-training", action="store_true", help="leave out the training step")
    parser.add_argument("--no-end-to-end", action="store_true", help="leave out ipu-run --model resnet50 cold and warm")
    parser.add_argument("--end-to-end", action="store_true", help="only ipu-run --model resnet50 cold and warm")
    args = parser.parse_args()

    def show(section, what, input_, figure, ratio, peer, goal="-", met=None, **raw) -> dict:
        print(f"{input_}: {figure}" + ("" if met is None else f" [{'met' if met else 'missed'}: {goal}]"), flush=True)
        return raw

    if args.end_to_end:
        end_to_end_rows(args.quick, show)
    else:
        rows(args.quick, show, args.models, not args.no_training, not args.no_end_to_end)


if __name__ == "__main__":
    main()
