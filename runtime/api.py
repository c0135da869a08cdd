"""Loading L3 programs into the simulator: parse, verify, plan the runs.

    simulator = load_simulator("model.l3.mlir", target="tiny")
    outputs = simulator.run([x, w]); print(simulator.profile.summary())

The runtime takes L3 only; `ipu_mlir.frontends.api.run` compiles L0/L1 input first.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu, make_context, tm_tensor
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import IpuError, format_location
from ipu_mlir.target.element_types import is_float

from .program_summary import program_summary
from .simulator import Simulator

Source = str | os.PathLike | ir.Module


def load_simulator(module_or_path: Source, target: str | None = None, entry: str = "main", verified: bool = False) -> Simulator:
    """An L3 program ready to run: parsed, verified (unless `verified`: the default pipeline's
    ipu-verify just checked it for this target), planned for the simulator. L0/L1 input is
    the caller's to compile first (`ipu_mlir.frontends.api` does both)."""
    module = load_module(module_or_path)
    if not is_program(module, entry):
        raise IpuError(f"not an L3 program: no function @{entry} marked '{ipu.PROGRAM_ATTR}' (compile it first: ipu-compile)")
    simulator = Simulator(module, target_of(module.operation, target), entry, verified)  # verifies it first unless verified
    simulator.profile.summarize = functools.partial(_summary, module)  # the report's layers, FLOPs and vertex groups, when asked
    return simulator


def _summary(module: ir.Module) -> dict:
    with module.context:
        return program_summary(module)


def load_module(source: Source) -> ir.Module:
    """A module from an `ir.Module` (returned as is), MLIR text, or a file path. Parse errors
    become `IpuError`s located at file:line:col."""
    if isinstance(source, ir.Module):
        return source
    context = make_context()
    text = str(source)
    looks_like_text = not isinstance(source, os.PathLike) and ("{" in text or "\n" in text)
    # torch-mlir's TMTensor ops come in generic form, as ops of a dialect the bindings do not
    # know; they parse as unregistered ops for ipu-convert-tm-tensor, and the context keeps
    # allowing them so that copies of the module parse too. Any other unknown op stops here.
    context.allow_unregistered_dialects = True
    with context:
        try:
            if looks_like_text:
                module = ir.Module.parse(text)
            else:
                Path(text).read_text(encoding="utf-8")  # a clear message for a missing, unreadable or binary file
                module = ir.Module.parseFile(text)
            context.allow_unregistered_dialects = _refuse_unknown_ops(module)
            return module
        except OSError as error:
            raise IpuError(f"cannot read '{text}': {error.strerror}") from None
        except UnicodeDecodeError as error:
            raise IpuError(f"cannot read '{text}': not UTF-8 text ({error.reason})") from None
        except ir.MLIRError as error:
            module = _tm_tensor_custom_form(error, text if looks_like_text else None, text)
            if module is None:
                raise from_mlir(error, "cannot parse" + ("" if looks_like_text else f" '{text}'")) from None
            context.allow_unregistered_dialects = _refuse_unknown_ops(module)
            return module


def _tm_tensor_custom_form(error: ir.MLIRError, text: str | None, path: str) -> ir.Module | None:
    """The module of a text holding torch-mlir's TMTensor ops in their custom form, read through
    torch-mlir's printer (dialects/tm_tensor.py), or None (not that case, or torch-mlir absent)."""
    if not any(tm_tensor.NOT_FOUND in d.message for d in error.error_diagnostics):
        return None
    source = text if text is not None else Path(path).read_text(encoding="utf-8")
    try:
        generic = tm_tensor.generic_form(source, "-" if text is not None else path)
    except tm_tensor.CustomFormError as refused:
        where = ir.Location.file(refused.file, refused.line, refused.column) if refused.line else None
        raise IpuError(f"{refused.message} (torch-mlir's parser, reading its TMTensor ops)", where) from None
    if generic is None:
        return None
    try:
        return ir.Module.parse(generic)
    except ir.MLIRError:
        return None


def program_names(module: ir.Module) -> list[str]:
    """The functions of `module` marked `ipu.program` (L3 entry points), in order."""
    return [
        ir.StringAttr(op.attributes["sym_name"]).value
        for op in module.body.operations
        if op.operation.name == "func.func" and ipu.PROGRAM_ATTR in op.attributes
    ]


def is_program(module: ir.Module, entry: str | None = None) -> bool:
    """Whether `module` is already L3: `entry` (default: any function) is marked `ipu.program`."""
    names = program_names(module)
    return entry in names if entry else bool(names)


def random_inputs(arguments: Sequence[tuple[tuple[int, ...], np.dtype]], seed: int) -> list[np.ndarray]:
    """Deterministic inputs for (shape, dtype) arguments: floats uniform in [-1, 1), signed
    integers in [-8, 8), unsigned in [0, 16), booleans fair coins."""
    rng = np.random.default_rng(seed)
    inputs = []
    for shape, dtype in arguments:
        dtype = np.dtype(dtype)
        if is_float(dtype):
            values = (rng.random(shape) * 2 - 1).astype(dtype)
            values = np.minimum(values, np.nextafter(dtype.type(1), dtype.type(0)))  # rounding must not reach 1
        elif dtype.kind == "b":
            values = rng.integers(0, 2, shape).astype(bool)
        else:
            values = rng.integers(0 if dtype.kind == "u" else -8, 16 if dtype.kind == "u" else 8, shape).astype(dtype)
        inputs.append(np.asarray(values))  # rank 0: np.minimum gives a numpy scalar, not an array
    return inputs


def from_mlir(error: ir.MLIRError, what: str) -> IpuError:
    diagnostics = list(error.error_diagnostics)
    if not diagnostics:
        return IpuError(f"{what}: {error}")
    first = diagnostics[0]
    rest = "".join(f"\n{format_location(d.location)}: error: {d.message}" for d in diagnostics[1:])
    return IpuError(_unknown_dialect(first.message) + rest, first.location)


_UNKNOWN_DIALECT = re.compile(r"Dialect `(\w+)' not found for custom op '([\w.]+)'")


def _unknown_dialect(message: str) -> str:
    """The parser's "Dialect `x' not found" said as what it means for a user: the op is not supported."""
    found = _UNKNOWN_DIALECT.search(message)
    if not found:
        return message
    dialect, op = found.groups()
    if dialect == tm_tensor.DIALECT:
        text = (
            f"'{op}' is written in the custom form of {tm_tensor.describe(op)}, which the MLIR bindings cannot parse: "
            "print the module in generic form (torch-mlir's get_asm(print_generic_op_form=True), as ipu_mlir.frontends.torch does)"
        )
    else:
        text = _not_supported(op)
    return message[: found.start()] + text + message[found.end() :]


def _not_supported(op: str) -> str:
    return f"'{op}' is not supported: ipu-mlir and the MLIR bindings do not know the {op.split('.', 1)[0]} dialect"


def _refuse_unknown_ops(module: ir.Module) -> bool:
    """Whether `module` holds TMTensor ops; unregistered ops of other dialects are refused."""
    context = module.context
    unknown: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if not context.is_registered_operation(op.name):
            unknown.append(op)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for op in unknown:
        if not op.name.startswith(tm_tensor.DIALECT + "."):
            raise IpuError(_not_supported(op.name), op.location)
    return bool(unknown)
