"""Where a training step's cold compile goes (issue 25, point 9): the joint step of a zoo model
as bench/training.py builds it (`ipu-run --train`'s loss, SGD with momentum, gc200), traced,
imported, compiled and loaded once, each phase in CPU and wall seconds of this process.

    .venv/bin/python bench/training_compile.py [--model resnet50] [--batch 2] [--layers N] [--reduced] [--profile DIR] [--save DIR]

- trace: `make_fx` of the step with the decompositions, then its functionalized retrace
  (frontends/joint_trace.py `trace`);
- import: torch-mlir's `stateless_fx_import` and the generic-form text parsed into our context
  (frontends/joint.py `_import`);
- compile: the default pipeline; the pass manager's timing report (wall seconds per pass) goes
  to stderr;
- load: `load_simulator`.

CPU seconds are the figure to compare on a shared machine: wall time there is mostly other
jobs'. `--profile DIR` writes a cProfile of each phase (`DIR/PHASE.prof`, read with pstats);
`--save DIR` writes the step's L0 and its L3 text, whose sha256 is printed (a change meant to
keep the compiled program the same keeps it).
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import hashlib
import os
import resource
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/run.py
sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402
from training import model_and_batch  # noqa: E402 (bench/training.py's model, loss and batch)

from ipu_mlir.frontends import api, fx_import, joint, joint_trace, zoo  # noqa: E402
from ipu_mlir.frontends.options import Options  # noqa: E402
from ipu_mlir.frontends.training import TrainingModel  # noqa: E402
from ipu_mlir.lowering import pipelines  # noqa: E402
from ipu_mlir.runtime import api as runtime_api  # noqa: E402


class _Traced(Exception):
    """Stops `trainingModel`'s first call once the joint step is traced and imported."""

    def __init__(self, module: object) -> None:
        self.module = module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch", type=int, default=2)
    parser.add_argument("--layers", type=int, help="the zoo model's layers (bench/training.py's BERT-base layer: 1)")
    parser.add_argument("--reduced", action="store_true", help="the zoo's reduced configuration of the model")
    parser.add_argument("--profile", type=Path, help="a cProfile of each phase here")
    parser.add_argument("--save", type=Path, help="the step's L0 and L3 here")
    args = parser.parse_args()
    for folder in (args.profile, args.save):
        if folder:
            folder.mkdir(parents=True, exist_ok=True)

    def timed(phase: str, step):  # noqa: ANN001, ANN202
        gc.collect()  # the garbage of what came before is not this phase's
        profile = cProfile.Profile() if args.profile else None
        cpu, wall = time.process_time(), time.perf_counter()
        if profile:
            profile.enable()
        result = step()
        if profile:
            profile.disable()
            profile.dump_stats(args.profile / f"{phase}.prof")
        print(f"{phase}: {time.process_time() - cpu:.1f} s CPU, {time.perf_counter() - wall:.1f} s wall", flush=True)
        return result

    options = dict(zoo.MODELS[args.model].reduced) if args.reduced else {}
    options |= {"layers": args.layers} if args.layers else {}
    model, inputs = model_and_batch(args.model, args.batch, options)

    # the trace and the import timed apart: joint's own two steps, wrapped
    trace, import_ = joint_trace.trace, joint._import
    joint_trace.trace = lambda *a: timed("trace", lambda: trace(*a))
    joint._import = lambda *a: timed("import", lambda: import_(*a))

    def stop(module: object, target: str, **_: object) -> None:
        raise _Traced(module)

    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    trained = TrainingModel(model, Options().target("gc200"), optimizer, stop, fx_import.importer_class())
    try:
        trained(*inputs)
    except _Traced as traced:
        module = traced.module
    if args.save:
        (args.save / "step.l0.mlir").write_text(module.operation.get_asm(print_generic_op_form=True, enable_debug_info=True))

    build = pipelines.build_pass_manager

    def timing_pass_manager(pipeline, context=None):  # noqa: ANN001, ANN202
        pass_manager = build(pipeline, context)
        pass_manager.enable_timing()  # its report goes to stderr when it is freed
        return pass_manager

    pipelines.build_pass_manager = timing_pass_manager
    program = timed("compile", lambda: api.compile_to_program(module, "gc200"))
    text = program.operation.get_asm(enable_debug_info=False)
    print(f"L3: {len(text):,} characters, sha256 {hashlib.sha256(text.encode()).hexdigest()[:16]}")
    if args.save:
        (args.save / "step.l3.mlir").write_text(text)
    simulator = timed("load", lambda: runtime_api.load_simulator(program, "gc200", verified=True))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    print(f"simulated step: {simulator.profile.cycles:,} cycles; peak resident {peak:.2f} GiB")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
