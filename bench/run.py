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
import gc
import json
import math
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path

import big_models
import compile_scaling
import compile_time
import fidelity
import iree_models
import matmul_roofline
import mpi_scaling
import numpy as np
import numpy_models
import pipeline
import precision
import precision_training
import replicated_training
import simulator_vs_numpy
import solvers
import tm_tensor
import torch
import torch_mlir.fx  # noqa: F401 -- before the ExecutionEngine: after it, LLVM aborts ("print-inst-addrs registered more than once")
import training
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.lowering.memory_plan import chosen_plan, plan_memory
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime import reference
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import load_target
from ipu_mlir.target.diagnostics import IpuError

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


def medians(sides: list[Callable[[], object]], repeat: int) -> list[float]:
    """Median wall seconds of each side over `repeat` rounds, each round running every side once."""
    return [statistics.median(record) for record in simulator_vs_numpy.interleaved(sides, repeat)]


def row(section: str, what: str, input_: str, figure: str, ratio: float | None, peer: str, goal: str = "-", met=None, **raw) -> dict:
    """One result, printed as it is measured: the progress line."""
    print(f"[bench]   {input_} vs {peer}: {figure}" + ("" if ratio is None else f" (ratio {ratio:.3g})"), flush=True)
    return dict(section=section, what=what, input=input_, figure=figure, ratio=ratio, peer=peer, goal=goal, met=met, raw=raw)


def one_thread(step: Callable[[], object]) -> Callable[[], object]:
    def run() -> object:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return step()
        finally:
            torch.set_num_threads(threads)

    return run


# --- the MLP / CNN programs ----------------------------------------------------------------


def programs(quick: bool) -> list[dict]:
    """The L0 programs of bench/simulator_vs_numpy.py with numpy and PyTorch versions of them."""
    layers, batch, width, image = (2, 16, 64, 8) if quick else (12, 256, 512, 16)

    def torch_mlp(inputs):
        y = inputs[0]
        for weight, bias in zip(inputs[1::2], inputs[2::2]):
            y = torch.relu(y @ weight + bias)
        return y

    def torch_cnn(inputs):
        y = inputs[0]
        for weight, bias in zip(inputs[1::2], inputs[2::2]):
            y = torch.relu(torch.nn.functional.conv2d(y, weight, bias, padding=1))
        return y

    # full size: 64 channels, as 12 layers of 128 put every layer's weights on tile 0 (out of memory)
    cnn_width, cnn_batch = (width // 4, batch // 4) if quick else (width // 8, batch // 16)
    return [
        dict(
            name="mlp",
            title=f"MLP {layers} x (matmul {batch}x{width}x{width} + bias + ReLU)",
            text=simulator_vs_numpy.model(layers, batch, width, "gc200"),
            numpy=simulator_vs_numpy.numpy_mlp,
            torch=torch_mlp,
            scale=width,
        ),
        dict(
            name="cnn",
            title=f"CNN {layers} x (conv 3x3 {cnn_width}->{cnn_width} on {cnn_batch}x{cnn_width}x{image}x{image} + bias + ReLU)",
            text=simulator_vs_numpy.cnn(layers, cnn_batch, cnn_width, image, "gc200"),
            numpy=simulator_vs_numpy.numpy_cnn,
            torch=torch_cnn,
            scale=cnn_width * 9,
        ),
    ]


def inputs_for(arguments, scale: int) -> list[np.ndarray]:
    rng = np.random.default_rng(0)
    return [(rng.standard_normal(shape, dtype=np.float32) / np.sqrt(scale)).astype(dtype) for shape, dtype in arguments]


def compiled_program(program: dict) -> tuple[Simulator, list[np.ndarray]]:
    module = load_module(program["text"])
    with module.context:
        compile_module(module)
    simulator = Simulator(module)
    return simulator, inputs_for(simulator.arguments, program["scale"])


def runtime_rows(args) -> list[dict]:
    rows = []
    for program in programs(args.quick):
        simulator, inputs = compiled_program(program)
        simulator.run(inputs)  # the first run makes the BSP memory checks: not the steady run
        tensors = [torch.from_numpy(a) for a in inputs]
        with torch.no_grad():
            sim, eager1, eager, numpy_s = medians(
                [
                    partial(simulator.run, inputs),
                    one_thread(partial(program["torch"], tensors)),
                    partial(program["torch"], tensors),
                    partial(program["numpy"], inputs),
                ],
                args.repeat,
            )
        rows += steady_run_rows(program["title"], sim, eager1, eager, numpy_s)
    for name in zoo_models(args):
        rows += zoo_runtime_rows(name, args)
    return rows


def zoo_models(args) -> list[str]:
    return ["resnet18", "bert_encoder"] if args.quick else ["alexnet", "resnet50", "bert_encoder", "mobilenet_v2", "gpt2"]


def zoo_build(name: str, args):
    """The model at full size (`--quick`: its reduced, test-size configuration)."""
    return zoo.build(name, **(zoo.MODELS[name].reduced if args.quick else {}))


PROGRAMS: dict[tuple[str, bool], ir.Module | IpuError] = {}  # compiled once for the runtime and memory sections


def zoo_program(name: str, module, inputs, args) -> ir.Module | IpuError:
    """The model's L3 program for gc200, or the compiler's refusal."""
    if (name, args.quick) not in PROGRAMS:
        try:
            PROGRAMS[name, args.quick] = torch_frontend.compile_program(torch_frontend.export(module, *inputs), "gc200", module)
        except IpuError as error:
            PROGRAMS[name, args.quick] = error
    return PROGRAMS[name, args.quick]


def zoo_runtime_rows(name: str, args) -> list[dict]:
    module, inputs = zoo_build(name, args)
    label = f"{name} ({'reduced' if args.quick else 'full size'}, {', '.join('x'.join(map(str, v.shape)) for v in inputs)})"
    program = zoo_program(name, module, inputs, args)
    if isinstance(program, IpuError):
        return [row("runtime", "simulator steady run", label, f"refused: {str(program).splitlines()[0]}", None, "PyTorch eager")]
    compiled = torch_frontend.CompiledModule(program, "gc200")
    arrays = [value.detach().numpy() for value in inputs]
    compiled.simulator.run(arrays)
    compiled.simulator.run(arrays)  # the second run plans the unchecked runs
    numpy_model = numpy_models.NumpyModel(module, inputs)
    with torch.no_grad():
        sim, eager1, eager, numpy_s = medians(
            [
                lambda: compiled.simulator.run(arrays),
                one_thread(lambda: module(*inputs)),
                lambda: module(*inputs),
                lambda: numpy_model(*arrays),
            ],
            args.repeat,
        )
    return steady_run_rows(label, sim, eager1, eager, numpy_s)


def steady_run_rows(label: str, sim: float, eager1: float, eager: float, numpy_s: float) -> list[dict]:
    """The simulator's steady run against each peer, with issue 12's goals: at most 3x PyTorch
    eager on one thread and 2x numpy (the default thread count has no goal: it is erratic here)."""
    peers = (
        ("PyTorch eager, 1 thread", eager1, 3.0),
        (f"PyTorch eager, {torch.get_num_threads()} threads", eager, None),
        ("numpy", numpy_s, 2.0),
    )
    return [
        row(
            "runtime",
            "simulator steady run",
            label,
            f"{sim * 1e3:.1f} ms vs {seconds * 1e3:.1f} ms",
            sim / seconds,
            peer,
            "-" if goal is None else f"<= {goal:g}x (issue 12)",
            None if goal is None else bool(sim / seconds <= goal),
            sim_s=sim,
            peer_s=seconds,
        )
        for peer, seconds, goal in peers
    ]


# --- upstream MLIR's ExecutionEngine and xDSL's interpreter -------------------------------


def execution_engine(text: str) -> tuple[Callable[[list[np.ndarray]], list[np.ndarray]], float]:
    """runtime/reference.py's lowering and JIT, with the compile timed apart from the runs:
    (a function running the program, the compile seconds)."""
    start = time.perf_counter()
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        func = reference._find_entry(module, "main")
        function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        results = reference._signature(function_type.results, "result", "main", func)
        func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        for passes in (reference.TO_BUFFERS, reference.TO_LOOPS, reference.TO_LLVM):
            reference._run_passes(module, passes)
        engine = ExecutionEngine(module, opt_level=2, shared_libs=reference.shared_libs(), enable_object_dump=False)
    return (lambda inputs: reference._invoke(engine, "main", inputs, results, fill=0)), time.perf_counter() - start


XDSL_BUFFERS = (
    "func.func(convert-elementwise-to-linalg),one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},buffer-results-to-out-params{modify-public-functions hoist-static-allocs}"
)


def run_xdsl(text: str, form: str) -> Callable[[list[np.ndarray]], list[np.ndarray]]:
    """A function running `text` in xDSL's interpreter: bufferized by upstream MLIR (xDSL
    interprets memrefs), as linalg or lowered to loops, printed generically and parsed by xDSL.
    The results are the out-params buffer-results-to-out-params appends."""
    # xDSL is the optional `bench` extra (pyproject.toml): imported only when this section runs.
    from xdsl.context import Context
    from xdsl.dialects import get_all_dialects
    from xdsl.interpreter import Interpreter
    from xdsl.interpreters import register_implementations
    from xdsl.interpreters.shaped_array import ShapedArray
    from xdsl.interpreters.utils.ptr import TypedPtr
    from xdsl.parser import Parser

    passes = XDSL_BUFFERS + (",func.func(convert-linalg-to-loops),lower-affine" if form == "loops" else "")
    with make_context() as context:
        module = ir.Module.parse(text)
        build_pass_manager(f"builtin.module({passes},canonicalize)", context).run(module.operation)
        generic = module.operation.get_asm(print_generic_op_form=True)
    xdsl_context = Context(allow_unregistered=True)
    for name, dialect in get_all_dialects().items():
        xdsl_context.register_dialect(name, dialect)
    parsed = Parser(xdsl_context, generic).parse_module()
    interpreter = Interpreter(parsed)
    register_implementations(interpreter, xdsl_context)
    shapes = [list(t.get_shape()) for t in parsed.body.block.ops.first.function_type.inputs.data]

    def run(inputs: list[np.ndarray]) -> list[np.ndarray]:
        buffers = [np.ascontiguousarray(a, np.float32) for a in inputs] + [np.zeros(s, np.float32) for s in shapes[len(inputs) :]]
        arrays = [ShapedArray(TypedPtr.new_float32(b.ravel().tolist()), list(b.shape)) for b in buffers]
        interpreter.call_op("main", tuple(arrays))
        return [np.array(a.data, np.float32).reshape(a.shape) for a in arrays[len(inputs) :]]

    return run


def reference_rows(args) -> list[dict]:
    rows = []
    for program in programs(args.quick):
        simulator, inputs = compiled_program(program)
        simulator.run(inputs)
        run, compile_s = execution_engine(program["text"])
        (expected,) = run(inputs)
        sim, jit = medians([partial(simulator.run, inputs), partial(run, inputs)], args.repeat)
        (got,) = simulator.run(inputs)
        error = float(np.abs(got - expected).max() / np.abs(expected).max())
        rows.append(
            row(
                "reference",
                "simulator steady run",
                program["title"],
                f"{sim * 1e3:.1f} ms vs {jit * 1e3:.1f} ms run (+ {compile_s:.2f} s JIT compile); rel. error {error:.1e}",
                sim / jit,
                "MLIR ExecutionEngine (-O2)",
                sim_s=sim,
                peer_s=jit,
                peer_compile_s=compile_s,
                error=error,
            )
        )
    return rows


def xdsl_rows(args) -> list[dict]:
    """xDSL's interpreter on the programs bufferized by upstream MLIR: as linalg on memrefs and
    lowered to loops (scf / memref / arith). Small inputs: it interprets every scalar op."""
    rows = []
    for program in programs(quick=True):
        simulator, inputs = compiled_program(program)
        simulator.run(inputs)
        for form in ("linalg", "loops"):
            try:
                run = run_xdsl(program["text"], form)
                (got,) = run(inputs)
            except Exception as error:  # a refusal is the row's figure, whatever xDSL raised (often a bare assert)
                frame = traceback.extract_tb(error.__traceback__)[-1]
                said = (
                    str(error).splitlines()[0]
                    if str(error)
                    else f"{type(error).__name__} at {Path(frame.filename).name}:{frame.lineno}: {frame.line}"
                )
                rows.append(row("xdsl", f"xDSL interpreter ({form})", program["title"], f"refused: {said}", None, "xDSL interpreter"))
                continue
            (expected,) = simulator.run(inputs)
            error = float(np.abs(got - expected).max() / np.abs(expected).max())
            sim, interpreted = medians([partial(simulator.run, inputs), partial(run, inputs)], 1)
            rows.append(
                row(
                    "xdsl",
                    f"simulator vs xDSL interpreter ({form})",
                    program["title"],
                    f"{sim * 1e3:.1f} ms vs {interpreted * 1e3:.1f} ms; rel. difference {error:.1e}",
                    sim / interpreted,
                    "xDSL interpreter",
                    sim_s=sim,
                    peer_s=interpreted,
                    error=error,
                )
            )
    return rows


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


def compile_rows(args) -> list[dict]:
    return compile_time.rows(args.quick, row)


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
