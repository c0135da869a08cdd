"""The PyTorch front end: an `nn.Module` exported by torch-mlir, compiled, run on the simulator.

    compiled = ipu_mlir.frontends.torch.compile(model.eval(), x, target="gc200")
    y = compiled(x)                      # torch tensors in, torch tensors out (numpy: numpy)
    print(compiled.profile.summary())

The module is exported with torch.export and torch-mlir's FX importer to linalg-on-tensors (the
steps of `torch_mlir.fx.export_and_import`), printed in generic form without its weights
(torch-mlir's own `tm_tensor` ops then parse here as unregistered ops), given its weights as
views of the tensors' storage, and compiled unmodified by the default pipeline. The one thing added on the way is
where each op comes from: torch-mlir's FX importer turns a node's stack trace into file:line
call sites; this front end's location hook keeps one frame of it, the innermost in the
model's own code (none for a model built of torch's layers), and wraps it in two name
locations, the module path of the layer (`torch.export` keeps `node.meta["nn_module_stack"]`)
and the ATen op the node calls:

    loc("layer1.0.bn1"("aten.reciprocal"("model.py":88:0)))

torch-mlir's lowering keeps those locations on the linalg ops it makes, so the compiler's
errors carry them; `compile` reports the layer, its class and the PyTorch op with them.

torch is imported inside the functions here: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

import functools
import hashlib
import io
import math
import os
import re
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import PARTIALS_ATTR, encode_partials
from ipu_mlir.dialects.resources import framed_blob, is_resource
from ipu_mlir.frontends import api, cache
from ipu_mlir.frontends.fx_import import (
    ATEN_PREFIXES,
    RESOURCE,
    decompositions,
    importer_class,
    model_line,
    output_tree,
    quiet_shape_guards,
    refuse_mutations,
    signal_behind,
    unsigned_results,
)
from ipu_mlir.frontends.inference_model import InferenceModel, numpy_value, torch_value
from ipu_mlir.frontends.inputs import Signature
from ipu_mlir.frontends.options import Options, OutputMode, PipelinedExecution, ReductionType, ShardedExecution
from ipu_mlir.frontends.phases import Phases
from ipu_mlir.frontends.recompute import recomputationCheckpoint
from ipu_mlir.frontends.training import TrainingModel
from ipu_mlir.lowering.shard import BEGIN_BLOCKS_ATTR
from ipu_mlir.runtime.profile import Profile, write_profile
from ipu_mlir.runtime.program_summary import PHASE_PREFIX
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import DEFAULT_TARGET, load_target
from ipu_mlir.target.diagnostics import IpuError

OUTPUT_TREE_ATTR = "ipu.output_tree"  # the forward's output structure (torch's pytree, serialized)
UNSIGNED_RESULTS_ATTR = "ipu.unsigned_results"  # the positions of its unsigned integer outputs

__all__ = [
    "BeginBlock",
    "CompiledModule",
    "InferenceModel",
    "Options",
    "OutputMode",
    "PipelinedExecution",
    "ReductionType",
    "ShardedExecution",
    "compile",
    "compile_program",
    "export",
    "inferenceModel",
    "recomputationCheckpoint",
    "run_eager",
    "torch_origin",
    "trainingModel",
]

_NOT_LAYER = (*ATEN_PREFIXES, PHASE_PREFIX)  # location names other than a layer's


def compile(
    module: Any,
    *example_inputs: Any,
    target: str = DEFAULT_TARGET,
    progress: Callable[[str], None] | None = None,
    cache_key: str | None = None,
    use_cache: bool = True,
    micro_batches: int = 1,
    replicas: int = 1,
    partials_type: str | None = None,
    example_kwargs: dict | None = None,
) -> CompiledModule:
    """Exports `module` (an `nn.Module` in eval mode) on `example_inputs`, compiles it for `target`
    and loads it into the simulator (weights once). `progress` gets each phase's time as a line
    (`compiled.timings` keeps them). The program cache (frontends/cache.py) keys the compile on
    the exported program; `cache_key`, a name for the module's code and configuration (the zoo's
    `resnet50 batch 1 size 224`), keys it on that, the weights and the inputs' shapes instead,
    and a hit skips the export too (`compiled.imported` is then None). `micro_batches` > 1
    pipelines the sharded model over that many slices of the batch, `replicas` > 1 runs that
    many data-parallel replicas of it. `partials_type` ("f16" or "f32") is the partial sums' type
    of f16 products (ipu-partials-type; PopTorch's `Precision.setPartialsType`). The inputs, and
    `example_kwargs`, may be tensors in tuples, lists and dicts, and Python values, which are
    compiled in as constants (frontends/inputs.py), as PopTorch does."""
    phases = Phases(progress)
    signature, example_inputs = Signature.of(module, example_inputs, example_kwargs or {})
    exported = module if signature.plain else signature.bound_module(module)
    lookup = time.perf_counter()
    name = f"{cache_key} {micro_batches} {replicas}" + (f" partials {partials_type}" if partials_type else "")
    key = _model_key(name, module, signature, example_inputs, target) if use_cache and cache_key else None
    program = cache.load(key, make_context()) if key else None
    imported = None
    if program is not None:
        phases.seconds["compile"] = time.perf_counter() - lookup  # the weights hashed, the program read
        phases.report("compile", f"{target}, from the program cache")
    else:
        with phases.phase("export", "torch-mlir, linalg-on-tensors"):
            imported = export(exported, *example_inputs)
            if partials_type is not None:
                with imported.context:
                    imported.operation.attributes[PARTIALS_ATTR] = encode_partials(partials_type)
        with phases.phase("compile", target):
            # one entry per program: under the model's key when there is one, else the export's
            program = compile_program(
                imported, target, module, micro_batches=micro_batches, replicas=replicas, use_cache=use_cache and not key
            )
            with program.context:  # the outputs' structure and types, kept with the program (and in its cache entry)
                for name in (OUTPUT_TREE_ATTR, UNSIGNED_RESULTS_ATTR):
                    if name in imported.operation.attributes:
                        program.operation.attributes[name] = ir.Attribute.parse(str(imported.operation.attributes[name]))
        if key:
            cache.store(key, program)
    with phases.phase("load"):
        compiled = CompiledModule(program, target, imported, verified=True)  # compile_program's pipeline ends in ipu-verify
    compiled.signature, compiled.module = signature, module
    compiled.timings = phases.seconds
    if os.environ.get("IPU_MLIR_REPORT"):  # as PopTorch's autoReport: the profile, for `ipu-vis report`
        path = write_profile(compiled.profile, os.path.join(os.environ["IPU_MLIR_REPORT"], f"{type(module).__name__}.json"))
        if progress:
            progress(f"wrote {path}")
    return compiled


def _model_key(name: str, module: Any, signature: Signature, tensors: list, target: str) -> str:
    """The cache key of `name`'s program: its weights and buffers (0.15 s to hash ResNet-50's
    against 12.5 s to export it), the inputs' shapes and types, structure and constants, the target's figures."""
    import torch

    weights = hashlib.sha256()
    for path, tensor in module.state_dict().items():
        array = tensor.detach().cpu().contiguous()
        weights.update(f"{path} {array.dtype} {tuple(array.shape)}\0".encode())
        weights.update(array.reshape(-1).view(torch.uint8).numpy())
    inputs = " ".join(f"{tuple(value.shape)} {value.dtype}" for value in tensors) + f" {signature.spec} {signature.constants}"
    return cache.key("torch", name, type(module).__qualname__, weights.digest(), inputs, repr(load_target(target)))


def trainingModel(model: Any, options: Options | None = None, optimizer: Any = None) -> TrainingModel:  # noqa: N802 (PopTorch's name)
    """PopTorch's `trainingModel` on the simulated chip (frontends/training.py, docs/training.md):
    `model`'s forward returns the loss or (output, loss); `optimizer` is torch.optim.SGD, Adam
    or AdamW (default: SGD, lr 0.01, as PopTorch)."""
    import torch

    if options is not None and options.execution_strategy.pipelined and options.Training.gradient_accumulation == 1:
        raise IpuError(
            "trainingModel: PipelinedExecution needs Training.gradientAccumulation(G) with G at least the pipeline stages "
            "(2 x IPUs - 1, PopART's rule); got 1"
        )
    if optimizer is None:
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    return TrainingModel(model, options or Options(), optimizer, functools.partial(_compile_step, model=model), importer_class())


def _compile_step(step: ir.Module, target: str, model: Any, **options: Any) -> ir.Module:
    """compile_program on a training step, the layers where `BeginBlock` begins a block marked
    on it as on an exported model (ipu-shard places each layer's backward and update with it)."""
    blocks = _begin_blocks(model)
    if blocks:
        _mark_blocks(step, blocks)
    return compile_program(step, target, module=model, **options)


def inferenceModel(model: Any, options: Options | None = None) -> InferenceModel:  # noqa: N802 (PopTorch's name)
    """PopTorch's `inferenceModel`: `model` (or a trainingModel's model) in eval mode,
    `deviceIterations` micro-batches per call."""
    if isinstance(model, TrainingModel):
        model = model.model
    return InferenceModel(model, options or Options(), compile)


def export(module: Any, *example_inputs: Any) -> ir.Module:
    """torch-mlir's linalg-on-tensors output for `module` on `example_inputs`, in an ipu_mlir
    context, with layer names and ATen ops in its locations (the module docstring), where each
    layer set by `BeginBlock` begins (`ipu.begin_blocks`, read by ipu-shard).

    The steps of `torch_mlir.fx.export_and_import`, run here: its pipelines print the whole
    module with its weights as hex before each lowering, for an error report
    (`run_pipeline_with_repro_report`: 2 bytes of text a weight byte, held while the pipeline
    runs). torch.export's program is dropped once imported, torch-mlir's module once moved."""
    import torch
    from torch_mlir import ir as torch_ir
    from torch_mlir import passmanager as torch_passmanager
    from torch_mlir.dialects import torch as torch_dialect

    context = torch_ir.Context()
    torch_dialect.register_dialect(context)
    context.emit_error_diagnostics = True  # as torch-mlir's own runs: errors to the handler, not the exception
    errors: list[tuple[Any, str]] = []  # torch-mlir's error diagnostics, kept for the message (not printed)
    context.attach_diagnostic_handler(lambda d: errors.append((str(d.location), d.message)) or True)
    importer = importer_class()(context=context)
    inputs = tuple(torch_value(value) for value in example_inputs)
    with warnings.catch_warnings():  # torch.export's deprecation notices about its own internals
        warnings.simplefilter("ignore", FutureWarning)
        try:
            with quiet_shape_guards():
                program = torch.export.export(module, inputs, strict=False).run_decompositions(decompositions())
            refuse_mutations(program, module)
            tree, unsigned = output_tree(program), unsigned_results(program)
            importer.import_frozen_program(program, func_name="main")
            del program
        except IpuError:
            raise
        except Exception as error:  # torch.export's or the importer's own refusal: one line, no traceback
            if (signal := signal_behind(error)) is not None:
                raise signal from None
            first = str(error).strip().splitlines()[0] if str(error).strip() else "no message"
            raise IpuError(
                f"cannot export {type(module).__name__} with torch.export and torch-mlir: {type(error).__name__}: {first}"
                + model_line(error)
            ) from None
    imported = importer.module
    try:
        with context:
            for pipeline in _TORCH_MLIR_PIPELINES:
                torch_passmanager.PassManager.parse(pipeline).run(imported.operation)
    except torch_ir.MLIRError:
        raise _export_error(errors, module) from None
    exported = _into_context(imported, importer.weights, _begin_blocks(module))
    with exported.context:
        if tree is not None:
            exported.operation.attributes[OUTPUT_TREE_ATTR] = ir.StringAttr.get(tree)
        if unsigned:
            exported.operation.attributes[UNSIGNED_RESULTS_ATTR] = ir.DenseI64ArrayAttr.get(unsigned)
    return exported


# torch_mlir.fx.export_and_import's lowering to linalg-on-tensors (fx.py, compiler_utils.py).
_TORCH_MLIR_PIPELINES = (
    "builtin.module(func.func(torch-match-quantized-custom-ops), torchdynamo-export-to-torch-backend-pipeline{ extra-library=})",
    "builtin.module(torch-backend-to-linalg-on-tensors-backend-pipeline{allow-non-finites=True})",
)


def _read_blobs(imported: Any, keys: set[str], weights: dict[str, np.ndarray]) -> bool:
    """Adds to `weights` the blobs of `keys` torch-mlir made itself (a boolean buffer, which its
    import converts to a new uint8 tensor: GPT-2's causal mask), read from its bytecode as
    dialects/resources.py reads ours; False if one cannot be read."""
    from torch_mlir import ir as torch_ir

    found: dict[str, Any] = {}

    def collect(op: Any) -> Any:
        if op.name == "arith.constant" and (match := RESOURCE.match(str(op.attributes["value"]))) and match.group(1) in keys:
            found[match.group(1)] = op.attributes["value"]
        return torch_ir.WalkResult.ADVANCE

    imported.operation.walk(collect)
    for key in keys:
        if key not in found:
            return False
        shaped = torch_ir.ShapedType(found[key].type)
        if not shaped.element_type.width or shaped.element_type.width % 8:
            return False
        itemsize = shaped.element_type.width // 8
        with imported.context, torch_ir.Location.unknown():
            scratch = torch_ir.Module.create()
            scratch.operation.attributes["blob"] = found[key]
            stream = io.BytesIO()
            scratch.operation.write_bytecode(stream)
        data = framed_blob(stream.getbuffer(), math.prod(shaped.shape) * itemsize)
        if data is None:
            return False
        weights[key] = np.frombuffer(data, f"u{itemsize}")
    return True


def BeginBlock(layer: Any, user_id: str | None = None, ipu_id: int = 0) -> Any:  # noqa: N802 (PopTorch's name)
    """PopTorch's `BeginBlock`: `layer` (a submodule of the model) and the ops after it run on
    IPU `ipu_id` until the next block begins (ipu-shard; a multi-IPU target). Returns `layer`.
    `user_id` is PopTorch's name for the block, accepted and unused."""
    if not isinstance(ipu_id, int) or isinstance(ipu_id, bool) or ipu_id < 0:
        raise IpuError(f"BeginBlock: ipu_id must be a non-negative integer, got {ipu_id!r}")
    layer._ipu_mlir_begin_block = ipu_id
    return layer


def _begin_blocks(module: Any) -> dict[str, int]:
    """The IPU of each layer of `module` where `BeginBlock` begins a block, by module path."""
    named = module.named_modules() if hasattr(module, "named_modules") else ()
    blocks = {path: layer._ipu_mlir_begin_block for path, layer in named if hasattr(layer, "_ipu_mlir_begin_block")}
    if "" in blocks:
        raise IpuError("BeginBlock marks the whole model: mark the layer where each block begins")
    return blocks


def _into_context(imported: Any, weights: dict[str, np.ndarray], blocks: dict[str, int]) -> ir.Module:
    """torch-mlir's module in an ipu_mlir context, its weights not copied: the ops are printed
    without their blobs (`large_resource_limit=0`) and parsed here, then each `dense_resource`
    constant is given a blob in this context made from the same array (a view of the torch
    tensor's storage, kept alive by the blob): printing the blobs as hex and parsing them again
    cost 2 bytes of text a weight byte, twice (bench/big_models.py). Blobs torch-mlir made
    itself (a boolean buffer) are read from its bytecode; if one cannot be, the whole module
    is printed with its blobs.

    Generic form: torch-mlir's TMTensor ops (cumsum, sort, scatter) then parse in our context as
    unregistered ops, which ipu-convert-tm-tensor rewrites; their custom form would not parse."""
    module = _lean_copy(imported, weights)
    if module is None:
        module = api.load_module(imported.operation.get_asm(print_generic_op_form=True, enable_debug_info=True))
    if blocks:
        _mark_blocks(module, blocks)
    return module


def _mark_blocks(module: ir.Module, blocks: dict[str, int]) -> None:
    """`ipu.begin_blocks` (layer path -> IPU) on @main, for ipu-shard."""
    with module.context:
        marks = ir.DictAttr.get({path: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), ipu) for path, ipu in blocks.items()})
        for op in module.body.operations:
            if op.operation.name == "func.func" and ir.StringAttr(op.attributes["sym_name"]).value == "main":
                op.attributes[BEGIN_BLOCKS_ATTR] = marks


def _lean_copy(imported: Any, weights: dict[str, np.ndarray]) -> ir.Module | None:
    """`imported` parsed here without its blobs, each then given the array of `weights` it was
    made from; None if a blob is not in `weights` or not the value of a constant."""
    text = imported.operation.get_asm(print_generic_op_form=True, enable_debug_info=True, large_resource_limit=0)
    keys = RESOURCE.findall(text)
    if not all(key in weights for key in keys) and not _read_blobs(imported, set(keys) - set(weights), weights):
        return None
    module = api.load_module(text)
    del text
    replaced = 0

    def attach(op: ir.Operation) -> ir.WalkResult:
        nonlocal replaced
        if op.name == "arith.constant" and is_resource(value := op.attributes["value"]):
            key = RESOURCE.match(str(value)).group(1)
            with module.context, op.location:
                op.attributes["value"] = ir.DenseResourceElementsAttr.get_from_buffer(weights[key], key, value.type)
            replaced += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(attach)
    return module if replaced == len(keys) else None


def compile_program(
    imported: ir.Module,
    target: str = DEFAULT_TARGET,
    module: Any = None,
    memory_fraction: float | None = None,
    micro_batches: int = 1,
    replicas: int = 1,
    use_cache: bool = False,
) -> ir.Module:
    """The default pipeline on `imported` (left as it is), the planner using `memory_fraction`
    of each tile (default: the target's), through the program cache if `use_cache`. A refusal is re-raised with the PyTorch layer (and its
    class, given the `module`) and op its location carries."""
    try:
        compile_ = api.cached_compile if use_cache else api.compile_to_program
        return compile_(imported, target, memory_fraction=memory_fraction, micro_batches=micro_batches, replicas=replicas)
    except IpuError as error:
        origin = torch_origin(error.location, module)
        if not origin:
            raise
        raise IpuError(f"{error.message}\n  from PyTorch: {origin}", error.location, error.severity) from None


def run_eager(module: Any, *inputs: Any) -> Any:
    """PyTorch's own outputs for `inputs` (numpy arrays or tensors), without autograd, on one
    thread (as the simulator's BLAS: runtime/blas.py). On a loaded machine a second thread
    waits for a core at every op: ResNet-50's forward took 0.7-2.5 CPU s and 2-8 s wall on this
    2-core machine's two threads, 0.13-0.23 CPU s and 0.4-0.9 s wall on one (load average 12)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            return module(*(torch_value(value) for value in inputs))
    finally:
        torch.set_num_threads(threads)


def torch_origin(location: ir.Location | None, module: Any = None) -> str:
    """'aten.reciprocal in layer1.0.bn1 (BatchNorm2d) at model.py:88' from a location this
    front end made, '' when it carries no layer or op. The source line is the innermost frame
    outside torch itself (the model's own code)."""
    names, frames = _unwrap(location)
    op = next((name for name in names if name.startswith(ATEN_PREFIXES)), "")
    layer = next((name for name in names if not name.startswith(_NOT_LAYER)), "")
    if not op and not layer:
        return ""
    parts = [op or "an op"]
    if layer:
        kind = _layer_class(module, layer)
        parts.append(f"in {layer}" + (f" ({kind})" if kind else ""))
    own = [frame for frame in frames if f"{os.sep}torch{os.sep}" not in frame[0]]
    if own:
        parts.append(f"at {own[-1][0]}:{own[-1][1]}")
    return " ".join(parts)


def _export_error(errors: list[tuple[str, str]], module: Any) -> IpuError:
    """torch-mlir's first error as one line: the ATen op, layer and model line its location
    names (read from its text: torch-mlir's location objects are of its own bindings,
    `loc("fc"("aten.mm"("model.py":12:0)))`)."""
    if not errors:
        return IpuError("torch-mlir cannot lower the model to linalg (it gave no diagnostic)")
    location, message = errors[0]
    names = re.findall(r'"([^"]+)"\(', location)  # name locations; file locations are "file":line:col
    op = next((name for name in names if name.startswith(ATEN_PREFIXES)), "an op")
    layer = next((name for name in names if not name.startswith(_NOT_LAYER)), "")
    kind = _layer_class(module, layer) if layer else ""
    where = f" in {layer}" + (f" ({kind})" if kind else "") if layer else ""
    source = re.search(r'"([^"]+)":(\d+):\d+', location)
    where += f" at {source[1]}:{source[2]}" if source else ""
    return IpuError(f"torch-mlir cannot lower {op}{where} to linalg: {message.splitlines()[0]}")


class CompiledModule:
    """A compiled PyTorch module on the simulator: `compiled(*inputs)` takes numpy arrays or
    torch tensors (of the example inputs' shapes and types) and returns the outputs the same
    way, one value or a tuple. The weights are constants of the program, loaded once."""

    def __init__(self, program: ir.Module, target: str, imported: ir.Module | None = None, verified: bool = False):
        self.program = program  # the L3 program
        self.imported = imported  # torch-mlir's output, as compiled
        self.simulator: Simulator = api.load_simulator(program, target, verified=verified)
        self.timings: dict[str, float] = {}  # seconds per phase, as `compile` measured them
        # how a call's arguments bind to the program's tensors (set by `compile`)
        self.signature: Signature | None = None
        self.module: Any = None

    @property
    def profile(self) -> Profile:
        return self.simulator.profile

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        if self.signature is not None:
            inputs = tuple(self.signature.tensors(self.module, inputs, kwargs))
        elif kwargs:
            raise IpuError(f"keyword arguments ({', '.join(kwargs)}): this program was compiled for positional tensors")
        as_torch = not inputs or any(type(value).__module__.startswith("torch") for value in inputs)
        arrays = [numpy_value(value) for value in inputs]
        # the program's integers are signless: an unsigned input (a uint8 image) is passed as its bits
        arrays = [array.view(f"i{array.dtype.itemsize}") if array.dtype.kind == "u" else array for array in arrays]
        outputs = self.simulator.run(arrays)
        if UNSIGNED_RESULTS_ATTR in self.program.operation.attributes:
            outputs = list(outputs)
            for index in ir.DenseI64ArrayAttr(self.program.operation.attributes[UNSIGNED_RESULTS_ATTR]):
                outputs[index] = np.asarray(outputs[index]).view(f"u{np.asarray(outputs[index]).dtype.itemsize}")
        if as_torch:
            outputs = [torch_value(np.asarray(output, order="C")) for output in outputs]  # 0-d stays 0-d
        if OUTPUT_TREE_ATTR in self.program.operation.attributes:  # the forward's dict, list or nesting
            from torch.utils import _pytree as pytree

            tree = ir.StringAttr(self.program.operation.attributes[OUTPUT_TREE_ATTR]).value
            return pytree.tree_unflatten(outputs, pytree.treespec_loads(tree))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _unwrap(location: ir.Location | None) -> tuple[list[str], list[tuple[str, int]]]:
    """The names (outermost first) and file frames (outermost call first) in `location`."""
    names: list[str] = []
    frames: list[tuple[str, int]] = []

    def walk(loc: ir.Location) -> None:
        if loc.is_a_name():
            names.append(loc.name_str)
            walk(loc.child_loc)
        elif loc.is_a_callsite():
            walk(loc.caller)
            walk(loc.callee)
        elif loc.is_a_file():
            frames.append((loc.filename, loc.start_line))
        elif loc.is_a_fused():
            for inner in loc.locations:
                if not names and not frames:
                    walk(inner)

    if location is not None:
        walk(location)
    return names, frames


def _layer_class(module: Any, path: str) -> str:
    if module is None or not hasattr(module, "get_submodule"):
        return ""
    try:
        return type(module.get_submodule(path)).__name__
    except AttributeError:
        return ""
