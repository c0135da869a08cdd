"""IREE's llvm-cpu backend on the zoo models' L0 files, beside the simulator, PyTorch eager and
numpy, measured side by side in one process (issue 27 point 7).

    .venv/bin/python bench/iree_models.py [--quick] [--models resnet18 bert_encoder] [--repeat 5]

Each model is exported once (`frontends.torch.export`, the L0 file `ipu-run --model` compiles)
and that same text goes to `iree-compile` (PyPI's `iree-base-compiler`, the `bench` extra) for
`llvm-cpu` on this host's CPU, run by IREE's `local-sync` driver (one thread, as PyTorch eager
is timed here: `torch.set_num_threads(1)`). The simulator runs the program ipu-mlir compiled
from the same export for gc200. Every side's output is compared with eager's before anything
is timed (largest error over the largest reference magnitude); the timings are medians of
interleaved rounds (bench/simulator_vs_numpy.py's `interleaved`), so a load spike on this
shared machine hits every side. IREE's compile time is reported apart from its runs.

bench/run.py's `iree` section calls `rows`; without the `bench` extra installed the section
says so in one row.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's BLAS on one thread, as eager (bench/run.py)

import argparse  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402
import numpy_models  # noqa: E402
import simulator_vs_numpy  # noqa: E402
import torch  # noqa: E402

from ipu_mlir.frontends import torch as torch_frontend  # noqa: E402
from ipu_mlir.frontends import zoo  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

# The ResNets are in for what iree-compile 3.13 says of them: it refuses a strided convolution
# whose windows leave the padded input's last row unread (ResNet-18 at 32x32: "'linalg.generic'
# op inferred input/output operand #1 has shape's dimension #2 to be 4, but found 3"), which
# upstream MLIR 22's verifier and ExecutionEngine take.
DEFAULT_MODELS = ("resnet18", "resnet50", "bert_encoder", "gpt2")
QUICK_MODELS = ("bert_encoder", "gpt2")


def iree_function(text: str) -> tuple[Callable[..., list[np.ndarray]], float]:
    """(a function running the L0 program `text` under IREE's llvm-cpu / local-sync, compile seconds)."""
    import iree.runtime as iree_runtime

    # The command, not iree.compiler's Python API: that loads IREE's own MLIR bindings, which
    # cannot share a process with the MLIR bindings ipu-mlir uses (undefined nanobind symbols).
    compiler = os.path.join(os.path.dirname(sys.executable), "iree-compile")
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as scratch:
        source, output = os.path.join(scratch, "model.mlir"), os.path.join(scratch, "model.vmfb")
        with open(source, "w") as file:
            file.write(text)
        command = [compiler, "--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu"]
        done = subprocess.run([*command, "--iree-llvmcpu-target-cpu=host", source, "-o", output], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip() or f"iree-compile exited with {done.returncode}")
        with open(output, "rb") as file:
            flatbuffer = file.read()
    seconds = time.perf_counter() - start
    context = iree_runtime.SystemContext(config=iree_runtime.Config("local-sync"))
    context.add_vm_module(iree_runtime.VmModule.copy_buffer(context.instance, flatbuffer))
    main = context.modules.module["main"]

    def run(*arrays: np.ndarray) -> list[np.ndarray]:
        results = main(*arrays)
        results = results if isinstance(results, tuple | list) else [results]
        return [np.asarray(result.to_host()) for result in results]

    return run, seconds


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    expected = np.asarray(expected, dtype=np.float64)
    return float(np.max(np.abs(np.asarray(got, dtype=np.float64) - expected)) / max(np.max(np.abs(expected)), 1e-30))


def _first(outputs) -> np.ndarray:  # noqa: ANN001
    value = outputs[0] if isinstance(outputs, tuple | list) else outputs
    return value.detach().numpy() if isinstance(value, torch.Tensor) else np.asarray(value)


def model_rows(name: str, quick: bool, repeat: int, row: Callable[..., dict]) -> list[dict]:
    module, inputs = zoo.build(name, **(zoo.MODELS[name].reduced if quick else {}))
    label = f"{name} ({'reduced' if quick else 'full size'}, {', '.join('x'.join(map(str, v.shape)) for v in inputs)})"
    arrays = [value.detach().numpy() for value in inputs]
    imported = torch_frontend.export(module, *inputs)
    text = imported.operation.get_asm(enable_debug_info=False)
    try:
        iree_run, iree_compile_s = iree_function(text)
    except Exception as error:  # IREE's own refusal, reported as the row
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        return [row("iree", "IREE llvm-cpu steady run", label, f"refused by iree-compile: {first[:200]}", None, "PyTorch eager, 1 thread")]
    try:
        program = torch_frontend.compile_program(imported, "gc200", module)
    except IpuError as error:
        program = error
    compiled = None if isinstance(program, IpuError) else torch_frontend.CompiledModule(program, "gc200")
    numpy_model = numpy_models.NumpyModel(module, inputs)
    torch.set_num_threads(1)
    with torch.no_grad():
        expected = _first(module(*inputs))
        errors = {"IREE": relative_error(iree_run(*arrays)[0], expected), "numpy": relative_error(_first(numpy_model(*arrays)), expected)}
        sides = {
            "IREE": lambda: iree_run(*arrays),
            "PyTorch eager, 1 thread": lambda: module(*inputs),
            "numpy": lambda: numpy_model(*arrays),
        }
        if compiled is not None:
            errors["simulator"] = relative_error(_first(compiled(*arrays)), expected)
            compiled.simulator.run(arrays)  # the second run plans the unchecked runs
            sides["simulator"] = lambda: compiled.simulator.run(arrays)
        times = dict(zip(sides, (statistics.median(t) for t in simulator_vs_numpy.interleaved(list(sides.values()), repeat))))
    iree = times["IREE"]
    accuracy = ", ".join(f"{side} {error:.1e}" for side, error in errors.items())
    others = "; ".join(f"{peer} {seconds * 1e3:.1f} ms" for peer, seconds in times.items() if peer not in ("IREE", "simulator"))
    rows = [
        row(
            "iree",
            "IREE llvm-cpu compile",
            label,
            f"{iree_compile_s:.1f} s (iree-compile {_version()})",
            None,
            "-",
            compile_s=iree_compile_s,
        ),
        row(
            "iree",
            "IREE llvm-cpu steady run",
            label,
            f"{iree * 1e3:.2f} ms; {others}; output errors vs eager: {accuracy}",
            None,
            "-",
            times_s=times,
            errors=errors,
        ),
    ]
    if "simulator" in times:
        simulator = times["simulator"]
        figure = f"{simulator * 1e3:.1f} ms vs {iree * 1e3:.2f} ms"
        rows.append(
            row("iree", "simulator steady run", label, figure, simulator / iree, "IREE llvm-cpu, 1 thread", sim_s=simulator, peer_s=iree)
        )
    if isinstance(program, IpuError):
        rows.append(row("iree", "IREE llvm-cpu steady run", label, f"simulator refused: {str(program).splitlines()[0]}", None, "simulator"))
    return rows


def _version() -> str:
    from importlib.metadata import version

    return version("iree-base-compiler")  # the wheel's metadata: importing iree.compiler would load its MLIR


def rows(args: argparse.Namespace, row: Callable[..., dict]) -> list[dict]:
    """bench/run.py's `iree` section: `row` is its row constructor."""
    try:
        import iree.runtime  # noqa: F401
    except ImportError:
        return [row("iree", "IREE llvm-cpu steady run", "-", "not installed: pip install -e '.[bench]'", None, "-")]
    models = QUICK_MODELS if args.quick else DEFAULT_MODELS
    return [line for name in models for line in model_rows(name, args.quick, args.repeat, row)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the models' reduced configurations")
    parser.add_argument("--models", nargs="+", choices=sorted(zoo.MODELS))
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    def row(section, what, input_, figure, ratio, peer, goal="-", met=None, **raw) -> dict:  # noqa: ANN001
        return {"section": section, "what": what, "input": input_, "figure": figure, "ratio": ratio, "peer": peer}

    for name in args.models or (QUICK_MODELS if args.quick else DEFAULT_MODELS):
        for line in model_rows(name, args.quick, args.repeat, row):
            ratio = "-" if line["ratio"] is None else f"{line['ratio']:.3g}"
            print(f"{line['input']} | {line['what']} | {line['figure']} | {ratio} | {line['peer']}", flush=True)


if __name__ == "__main__":
    main()
