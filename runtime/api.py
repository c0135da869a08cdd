"""Running programs from Python: the library face of `ipu-run`.

    outputs, profile = run("model.mlir", [x, w], target="tiny")
    print(profile.summary()); profile.to_json()

An L3 program (a function marked `ipu.program`) runs as it is, after verification; anything
else is taken as L0/L1 and compiled with the default pipeline first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu, make_context, verifier
from ipu_mlir.dialects.diagnostics import IpuError, format_location

from .profile import Profile
from .simulator import Simulator
from .target import target_of

Source = str | os.PathLike | ir.Module


def run(module_or_path: Source, inputs: Sequence[np.ndarray], target: str | None = None, entry: str = "main") -> tuple[list[np.ndarray], Profile]:
    """Simulates `entry` of a module (an `ir.Module`, a path, or MLIR text) on `inputs`, in
    the order of the entry's arguments. `target` (a name or a .toml path) overrides the
    module's `ipu.target`. Raises `IpuError` for bad input and for BSP violations."""
    simulator = load_simulator(module_or_path, target, entry)
    return simulator.run(list(inputs)), simulator.profile


def load_simulator(module_or_path: Source, target: str | None = None, entry: str = "main") -> Simulator:
    """The program planned and ready to run: parsed, compiled if not L3 yet, verified."""
    module = load_module(module_or_path)
    if not is_program(module, entry):
        module = compile_to_program(module, target)
    else:
        errors = [e for e in verifier.verify(module.operation, target_of(module.operation, target)) if e.severity == "error"]
        if errors:  # one error, the others listed after its message
            raise IpuError(errors[0].message + "".join(f"\n{e}" for e in errors[1:]), errors[0].location)
    return Simulator(module, target_of(module.operation, target), entry)


def load_module(source: Source) -> ir.Module:
    """A module from an `ir.Module` (returned as is), MLIR text, or a file path. Parse errors
    become `IpuError`s located at file:line:col."""
    if isinstance(source, ir.Module):
        return source
    context = make_context()
    text = str(source)
    looks_like_text = not isinstance(source, os.PathLike) and ("{" in text or "\n" in text)
    with context:
        try:
            if looks_like_text:
                return ir.Module.parse(text)
            Path(text).read_bytes()  # a clear message for a missing or unreadable file
            return ir.Module.parseFile(text)
        except OSError as error:
            raise IpuError(f"cannot read '{text}': {error.strerror}") from None
        except ir.MLIRError as error:
            raise _from_mlir(error, "cannot parse" + ("" if looks_like_text else f" '{text}'")) from None


def is_program(module: ir.Module, entry: str = "main") -> bool:
    """Whether `module` is already L3: `entry` is a function marked `ipu.program`."""
    for op in module.body.operations:
        if op.operation.name == "func.func" and ipu.PROGRAM_ATTR in op.attributes:
            if ir.StringAttr(op.attributes["sym_name"]).value == entry:
                return True
    return False


def compile_to_program(module: ir.Module, target: str | None) -> ir.Module:
    """The default pipeline on a copy of `module` (the caller's module is left alone)."""
    from ipu_mlir.lowering.pass_registry import PipelineError  # the compiler, only for L0/L1 input
    from ipu_mlir.lowering.pipelines import compile_module

    with module.context:
        copy = ir.Module.parse(module.operation.get_asm(enable_debug_info=True))
        try:
            return compile_module(copy, target)
        except ir.MLIRError as error:
            raise _from_mlir(error, "compilation failed") from None
        except PipelineError as error:
            raise IpuError(f"cannot compile with the default pipeline: {error.message}") from None


def random_inputs(arguments: Sequence[tuple[tuple[int, ...], np.dtype]], seed: int) -> list[np.ndarray]:
    """Deterministic inputs for (shape, dtype) arguments: floats uniform in [-1, 1), signed
    integers in [-8, 8), unsigned in [0, 16), booleans fair coins."""
    rng = np.random.default_rng(seed)
    inputs = []
    for shape, dtype in arguments:
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            values = (rng.random(shape) * 2 - 1).astype(dtype)
            values = np.minimum(values, np.nextafter(dtype.type(1), dtype.type(0)))  # rounding must not reach 1
        elif dtype.kind == "b":
            values = rng.integers(0, 2, shape).astype(bool)
        else:
            values = rng.integers(0 if dtype.kind == "u" else -8, 16 if dtype.kind == "u" else 8, shape).astype(dtype)
        inputs.append(values)
    return inputs


def _from_mlir(error: ir.MLIRError, what: str) -> IpuError:
    diagnostics = list(error.error_diagnostics)
    if not diagnostics:
        return IpuError(f"{what}: {error}")
    first = diagnostics[0]
    rest = "".join(f"\n{format_location(d.location)}: error: {d.message}" for d in diagnostics[1:])
    return IpuError(first.message + rest, first.location)
