"""Running programs from Python: the library face of `ipu-run`, compiling when needed.

    outputs, profile = run("model.mlir", [x, w], target="tiny")
    print(profile.summary()); profile.to_json()

An L3 program (a function marked `ipu.program`) runs as it is, after verification; anything
else is taken as L0/L1 and compiled with the default pipeline first. This is the one place
(with the tools) that chains the compiler and the simulator: `runtime` takes L3 only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from ipu_mlir.frontends import cache
from ipu_mlir.frontends.phases import Phases
from ipu_mlir.lowering.pass_registry import PipelineError, build_pass_manager
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.lowering.select_entry import resolve_entry
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.runtime.api import Source, from_mlir, is_program, load_module, program_names, random_inputs
from ipu_mlir.runtime.profile import Profile
from ipu_mlir.runtime.reference import run_reference
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import target_of
from ipu_mlir.target.diagnostics import IpuError

__all__ = [
    "cached_compile",
    "compile_to_program",
    "is_program",
    "load_module",
    "load_simulator",
    "random_inputs",
    "reference_outputs",
    "run",
]


def run(
    module_or_path: Source,
    inputs: Sequence[np.ndarray],
    target: str | None = None,
    entry: str | None = None,
    memory_fraction: float | None = None,
    use_cache: bool = True,
    progress: Callable[[str], None] | None = None,
) -> tuple[list[np.ndarray], Profile]:
    """Simulates `entry` (default: main, or the only public function) of a module (an `ir.Module`, a path, or MLIR text) on `inputs`, in
    the order of the entry's arguments. `target` (a name or a .toml path) overrides the
    module's `ipu.target`. Raises `IpuError` for bad input and for BSP violations. `progress`
    (e.g. print) gets each phase's time: compile, load, run."""
    phases = Phases(progress)
    simulator = load_simulator(module_or_path, target, entry, memory_fraction=memory_fraction, use_cache=use_cache, phases=phases)
    with phases.phase("run"):
        outputs = simulator.run(list(inputs))
    return outputs, simulator.profile


def load_simulator(
    module_or_path: Source,
    target: str | None = None,
    entry: str | None = None,
    verified: bool = False,
    memory_fraction: float | None = None,
    micro_batches: int = 1,
    use_cache: bool = True,
    phases: Phases | None = None,
) -> Simulator:
    """The program planned and ready to run: parsed, compiled if not L3 yet, verified (once: the
    default pipeline ends in ipu-verify; `verified` says an L3 `module_or_path` came from it
    for this target). `entry` names the function (default: main, or the only public function,
    or the only program). `memory_fraction` is the planner's share of each tile's memory when
    compiling (PopTorch's `availableMemoryProportion`; default: the target's). Device variables
    (`ipu.resident`) are then the simulator's `variables()`, `write_variable`, `read_variable`.
    A compiled program comes from the program cache (frontends/cache.py) unless `use_cache` is False;
    `phases` times the compile and the load (frontends/phases.py). `micro_batches` > 1 pipelines the
    sharded program (ipu-pipeline)."""
    phases = phases or Phases()
    module = load_module(module_or_path)
    programs = program_names(module)
    if entry in programs or (entry is None and len(programs) == 1):
        with phases.phase("load"):
            return runtime_api.load_simulator(module, target, entry or programs[0], verified)
    entry = resolve_entry(module.operation, entry)
    compile_ = cached_compile if use_cache else compile_to_program
    with phases.phase("compile"):
        program = compile_(module, target, entry, memory_fraction, micro_batches)
    with phases.phase("load"):
        return runtime_api.load_simulator(program, target, entry, verified=True)


def reference_outputs(module_or_path: Source, inputs: Sequence[np.ndarray], entry: str) -> list[np.ndarray]:
    """`entry` run by upstream MLIR's ExecutionEngine on `inputs`: the independent reference
    for `--check`. TOSA input goes through `ipu-import-tosa` first, which runs only upstream
    passes (tosa-to-linalg and friends; nothing on TOSA-free input), and torch-mlir's TMTensor
    ops through `ipu-convert-tm-tensor`, a rewrite into plain linalg generics (the ExecutionEngine
    cannot run unregistered ops; PyTorch checks that rewrite), so the reference still owes
    nothing to our planner, scheduler or simulator."""
    module = load_module(module_or_path)
    with module.context:
        copy = copy_module(module)
    build_pass_manager("builtin.module(ipu-import-tosa,ipu-convert-tm-tensor{linalg-only=true})", module.context).run(copy.operation)
    return run_reference(copy.operation.get_asm(enable_debug_info=True), inputs, entry)


def compile_to_program(
    module: ir.Module,
    target: str | None,
    entry: str | None = None,
    memory_fraction: float | None = None,
    micro_batches: int = 1,
    replicas: int = 1,
) -> ir.Module:
    """The default pipeline on a copy of `module` (the caller's module is left alone);
    `micro_batches` > 1 pipelines the sharded program (ipu-pipeline), `replicas` > 1 replicates it
    (ipu-replicate)."""
    with module.context:
        copy = copy_module(module)
        try:
            return compile_module(copy, target, entry, memory_fraction, micro_batches, replicas)
        except ir.MLIRError as error:
            raise from_mlir(error, "compilation failed") from None
        except PipelineError as error:
            raise IpuError(f"cannot compile with the default pipeline: {error.message}") from None


def cached_compile(
    module: ir.Module,
    target: str | None,
    entry: str | None = None,
    memory_fraction: float | None = None,
    micro_batches: int = 1,
    replicas: int = 1,
) -> ir.Module:
    """`compile_to_program` through the program cache, keyed by the module's content, the
    target's every figure, the entry, the memory fraction, the micro-batches and replicas."""
    target_figures = repr(target_of(module.operation, target))
    key = cache.key("module", cache.module_digest(module), target_figures, entry, repr(memory_fraction), str(micro_batches), str(replicas))
    program, _ = cache.compiled(
        key, lambda: compile_to_program(module, target, entry, memory_fraction, micro_batches, replicas), module.context
    )
    return program


def copy_module(module: ir.Module) -> ir.Module:
    """A copy of `module` in its context, op by op: weights (`dense_resource` blobs) are shared,
    not printed as hex and parsed again (4 of BERT-base's 11 CPU seconds of compile)."""
    copy = ir.Module.create(module.operation.location)
    for name in module.operation.attributes:  # ipu.target, sym_name, ...
        copy.operation.attributes[name] = module.operation.attributes[name]
    at_end = ir.InsertionPoint(copy.body)
    for op in module.body.operations:
        op.operation.clone(ip=at_end)
    return copy
