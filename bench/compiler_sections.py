"""The sections of `make bench` (bench/run.py) measuring the compiler: `scaling` (compile time
and IR size by depth), `plan` (matmul and convolution plans against the roofline), `memory`
(peak bytes per tile with and without reuse), `tm_tensor` and `fidelity`.
"""

from __future__ import annotations

import gc
import math
import time

import compile_scaling
import compile_time
import fidelity
import matmul_roofline
import simulator_vs_numpy
import tm_tensor
from measuring import row
from simulator_sections import zoo_build, zoo_models, zoo_program

from ipu_mlir.frontends import zoo
from ipu_mlir.lowering.memory_plan import chosen_plan, plan_memory
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime.api import load_module
from ipu_mlir.target import load_target
from ipu_mlir.target.diagnostics import IpuError

# --- compile-time scaling, plan quality, memory, TMTensor ----------------------------------

LINEAR = "linear: <= 2.2 per 2x depth"


def scaling_rows(args) -> list[dict]:
    rows = []
    depths = [2, 4] if args.quick else [10, 20, 40, 80]
    previous = None
    for layers in depths:  # MLP: from L1, the passes after conversion (compile_scaling.py)
        seconds, ops, _ = compile_scaling.compile_seconds(layers, "gc200")
        rows.append(scaling_row(f"MLP stack, {layers} layers (L1, gc200)", seconds, ops, previous, layers))
        previous = (layers, seconds)
    previous = None
    for layers in depths:  # CNN: from L0, the whole default pipeline
        module = load_module(simulator_vs_numpy.cnn(layers, 2, 16, 8, "gc200"))
        with module.context:
            gc.collect()  # garbage of the sections before (loaded models) is not this compile's
            start = time.process_time()
            compile_module(module)
            seconds = time.process_time() - start
            ops = compile_scaling.op_count(module)
        rows.append(scaling_row(f"CNN stack, {layers} layers (L0, 2x16x8x8, gc200)", seconds, ops, previous, layers))
        previous = (layers, seconds)
    previous = None
    options = {k: v for k, v in zoo.MODELS["bert_encoder"].reduced.items() if k != "layers"} if args.quick else {}
    for layers in [1, 2] if args.quick else [1, 2, 4, 8, 12]:
        result = compile_scaling.bert_seconds(layers, "gc200", **options)
        size = "reduced" if args.quick else "BERT-base"
        rows.append(scaling_row(f"BERT encoder, {layers} layers ({size}, gc200)", result["cpu"], result["ops"], previous, layers))
        previous = (layers, result["cpu"])
    return rows


def scaling_row(input_: str, seconds: float, ops: int, previous: tuple[int, float] | None, layers: int) -> dict:
    per_doubling = (seconds / previous[1]) ** (1 / math.log2(layers / previous[0])) if previous else None
    met = None if per_doubling is None else per_doubling <= 2.2
    figure = f"{seconds:.2f} s CPU, {ops:,} L3 ops ({ops / layers:.0f} per layer)"
    return row(
        "scaling", "compile time", input_, figure, per_doubling, "previous row (ratio per 2x depth)", LINEAR, met, seconds=seconds, ops=ops
    )


def plan_rows(args) -> list[dict]:
    rows = []
    sizes = [128, 256] if args.quick else [128, 256, 512, 1024, 2048, 4096]
    for target in ("gc2", "gc200"):
        for dtype in ("f32", "f16"):
            for n in sizes:
                input_ = f"matmul {n}^3 {dtype} on {target}"
                try:
                    r = matmul_roofline.measure(n, target, dtype)
                except IpuError as error:  # e.g. out of tile memory: the goal is missed, and the row says why
                    said = f"refused: {str(error).splitlines()[0]}"
                    rows.append(row("plan", "estimated cycles", input_, said, None, "any-plan lower bound", "compiles", False))
                    continue
                of_roofline, of_bound = r["roofline"] / r["cycles"], r["cycles"] / r["any_plan"]
                figure = f"{r['cycles']:,} cycles; any-plan bound {r['any_plan']:,.0f}; roofline {r['roofline']:,.0f} ({of_roofline:.0%})"
                goal, met = "<= 1.25x the any-plan bound", of_bound <= 1.25
                if target == "gc200" and dtype == "f32" and n >= 2048:
                    goal, met = goal + "; >= 67% of roofline", met and of_roofline >= 0.67
                rows.append(row("plan", "estimated cycles", input_, figure, of_bound, "any-plan lower bound", goal, met, **r))
    for shape in matmul_roofline.RESNET50_CONVS[:2] if args.quick else matmul_roofline.RESNET50_CONVS:
        c, f, kernel, stride, size = shape
        input_ = f"ResNet-50 conv {c}->{f} {kernel}x{kernel}/{stride} on {size}x{size} f32 on gc200"
        r = matmul_roofline.measure_conv(shape)
        of_roofline, of_bound = r["roofline"] / r["cycles"], r["cycles"] / r["any_plan"]
        figure = f"{r['cycles']:,} cycles; busiest-vertex bound {r['any_plan']:,.0f}; roofline {r['roofline']:,.0f} ({of_roofline:.0%})"
        goal = "<= 1.25x the any-plan bound"
        rows.append(row("plan", "estimated cycles", input_, figure, of_bound, "any-plan lower bound", goal, of_bound <= 1.25, **r))
    return rows


def memory_rows(args) -> list[dict]:
    rows = []
    for name in zoo_models(args) if args.quick else sorted(compile_time.ONE_IPU):
        module, inputs = zoo_build(name, args)
        program = zoo_program(name, module, inputs, args)
        if isinstance(program, IpuError):
            rows.append(row("memory", "peak bytes per tile", name, f"refused: {str(program).splitlines()[0]}", None, "no reuse"))
            continue
        target = load_target("gc200")
        with program.context:
            # The plan ipu-memory-plan keeps: weights resident, or streamed by each run when they
            # do not all fit (full-size GPT-2); a resident plan that does not fit is not the program's.
            plan = chosen_plan(program.operation, target)
            reuse, alone = int(plan.footprint.max()), int(plan_memory(plan.liveness, target, reuse=False).footprint.max())
        label = f"{name} ({'reduced' if args.quick else 'full size'})"
        weights = "weights resident" if plan.liveness.weights_resident else "weights streamed by each run"
        fits = "fits" if plan.fits() else "does NOT fit"
        figure = (
            f"{reuse / 1024:.1f} KiB with reuse ({weights}; {fits} in {target.tile_memory_bytes // 1024} KiB) "
            f"vs {alone / 1024:.1f} KiB without"
        )
        raw = dict(reuse=reuse, no_reuse=alone, weights_resident=plan.liveness.weights_resident, fits=plan.fits())
        rows.append(row("memory", "peak bytes per tile", label, figure, reuse / alone, "no liveness reuse", **raw))
    return rows


def tm_tensor_rows(args) -> list[dict]:
    rows = []
    for name, model, inputs in tm_tensor.cases()[: 2 if args.quick else None]:
        r = tm_tensor.measure(name, model, inputs, "gc200")
        if "refused" in r:
            rows.append(row("tm_tensor", "compile + simulate", name, f"refused: {r['refused']}", None, "PyTorch"))
            continue
        figure = f"compile {r['compile_s']:.1f} s, simulate {r['simulate_s']:.2f} s, {r['cycles']:,} cycles, max abs error {r['error']:.1e}"
        rows.append(row("tm_tensor", "compile + simulate", name, figure, None, "PyTorch (error)", **r))
    return rows


def fidelity_rows(args) -> list[dict]:
    rows = []
    for f in fidelity.figures():  # seconds: --quick changes nothing
        figure = f"{f.ours_text} vs published {fidelity.show(f.published)} {f.unit}"
        rows.append(row("fidelity", f.what, f.input, figure, f.ratio, f.source, fidelity.GOAL, f.met, **f.raw))
    return rows
