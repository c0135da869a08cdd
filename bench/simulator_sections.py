"""The sections of `make bench` (bench/run.py) timing the simulator's steady run against its
peers: `runtime` (PyTorch eager and numpy on the MLP / CNN programs and the zoo models),
`reference` (upstream MLIR's ExecutionEngine) and `xdsl` (xDSL's interpreter).
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import numpy_models
import simulator_vs_numpy
import torch
import torch_mlir.fx  # noqa: F401 -- before the ExecutionEngine: after it, LLVM aborts ("print-inst-addrs registered more than once")
from measuring import medians, one_thread, row
from mlir import ir
from mlir.execution_engine import ExecutionEngine

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime import reference
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target.diagnostics import IpuError

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
