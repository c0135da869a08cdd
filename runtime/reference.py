"""The reference: L0 programs run by upstream MLIR's ExecutionEngine (a JIT), to check the
simulator against.

    outputs = run_reference("model.mlir", [x, w], entry="main")

The module is parsed again, from text, in a fresh `ir.Context`: the caller's module is never
changed and the project's dialects and passes play no part, only upstream's.

Only upstream dialects parse: an op of another (`ipu.matmul` in an L1 file, an unregistered
`tm_tensor.scan`) is refused at its location, naming it (`frontends.api.reference_outputs`
rewrites TOSA and TMTensor input with upstream passes and plain linalg first).

Aggregate ops, which `convert-linalg-to-loops` does not lower, are decomposed first
(`_decompose_aggregates`): upstream's transform `structured.decompose_interface`, run by the
transform interpreter, rewrites each op implementing `AggregatedOpInterface` into the
structured ops defining it (`linalg.softmax`: a max reduction, an exp of the difference, a sum,
a division; MLIR 22 registers no pass doing it, and `linalg-generalize-named-ops` leaves it
alone). Any other linalg op that is not structured (`linalg.winograd_*`, `linalg.pack`) is
refused at its location.

Lowering, one pass at a time so that a failure names its pass (`file:line:col` of the op, the
pass, the message):

- `convert-elementwise-to-linalg`: `arith` / `math` ops on whole tensors become
  `linalg.generic` (one-shot-bufferize does not bufferize them).
- `one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops
  function-boundary-type-conversion=identity-layout-map}`: tensors become memrefs, signatures
  included (a loop yielding a new tensor gets a fresh buffer per iteration instead of being
  refused: time-stepping programs yield one); identity layouts make
  arguments and results plain row-major buffers, which is what the arrays handed over are
  (inputs are copied in C order for each run: a transposed view would be misread, and the
  program may write into its arguments). With `copy-before-write` when an `scf.index_switch`
  yields a tensor: the analysis misses that its result aliases what a case yields, and wrote a
  later `outs` into that buffer in place (docs/mlir-notes.md).
- `buffer-results-to-out-params{modify-public-functions hoist-static-allocs}`: results become
  arguments the caller allocates, so numpy owns every output and nothing needs copying out of
  or freeing in the JIT's heap. `modify-public-functions` is essential and off by default:
  without it the public entry keeps its results, its C interface then takes the result
  descriptor as its *first* argument, the first input's descriptor is overwritten by it, the
  outputs stay zero, and a result of higher rank than that input writes past the ctypes struct
  (measured: a segfault; the cause of the "corrupted double-linked list" at exit seen before).
  `_check_out_params` therefore checks the signature after this pass.
- `buffer-deallocation-pipeline`, `convert-bufferization-to-memref`: temporaries are freed.
- `convert-linalg-to-loops` (also the `linalg.map` that `tensor.pad` bufferizes into): plain
  loops in iteration order, so reductions accumulate sequentially.
- `lower-affine`, `convert-scf-to-cf`, `expand-strided-metadata` (subviews and reshapes as
  pointer arithmetic), `lower-affine` again: the offset of a subview of a buffer whose offset
  is only known at run time (an `scf.index_switch` result) is an `affine.apply`, which no later
  pass lowers (the JIT then failed on an unrealized cast; fuzz_control seeds 48, 62).
- `_store_booleans_as_bytes`: this LLVM 22 build *aborts the process* when
  finalize-memref-to-llvm meets a load or store of `i1` (assertion `integralElementType.
  getWidth() >= 8`), so boolean buffers become `i8` ones holding 0 / 1 (numpy's bool layout).
- `arith-expand` (e.g. `ceildivsi`; with `include-bf16`, conversions to and from bf16 as integer
  ops rounding to nearest even: LLVM's `fptrunc` to bfloat on an AVX512-BF16 host flushes
  subnormals to 0, fuzz_control seed 2370), `convert-math-to-llvm` (ops with an LLVM intrinsic),
  `convert-math-to-libm` (the rest: `tanh`, `erf`, ... call the process's libm),
  `finalize-memref-to-llvm`, `convert-arith-to-llvm`, `convert-cf-to-llvm`,
  `convert-func-to-llvm` (`llvm.emit_c_interface` on the entry gives the `_mlir_ciface_`
  wrapper that `ExecutionEngine.invoke` calls), `reconcile-unrealized-casts`.

`dense_resource` blobs survive all of it as LLVM global initializers (except boolean ones: the
bindings can neither read nor retype a blob, so those are refused with a clear error).

Running: each argument is passed as `pointer(pointer(descriptor))`; `libmlir_c_runner_utils.so`
provides `memrefCopy` (copies of strided buffers, e.g. a returned `extract_slice`); without it
the JIT fails to link ("Symbols not found: [ memrefCopy ]"). The program runs twice, into
outputs filled with 0x00 bytes and then 0xFF bytes: an output element the program does not
write (returning a `tensor.empty`, accumulating into one) differs between the runs and is an
error rather than a plausible zero. The JIT runs in this process (once out-params are
checked, it writes only into numpy-owned buffers of the right size; 300 runs in one process
exit cleanly, measured), except after torch-mlir's own LLVM was loaded before `mlir`'s (a
script importing `torch_mlir.fx` first): `mlir`'s libLLVM.so then reads torch-mlir's copy of
LLVM's libcall name table and the JIT links its `memset` to `getc` (`_libcall_names_interposed`),
so the JIT runs in a fresh Python process, which imports `mlir` first (measured on the FP8 FFN:
1.43 s a call instead of 1.10 s). A program with an integer division runs there too: a zero
divisor traps (SIGFPE), which would kill this process without a word; the fresh one's death is
reported as the undefined behaviour it is.
"""

from __future__ import annotations

import ctypes
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import mlir
import numpy as np
from mlir import ir, passmanager
from mlir.dialects import arith, linalg
from mlir.dialects.transform import interpreter
from mlir.execution_engine import ExecutionEngine
from mlir.runtime import np_to_memref

from ipu_mlir.dialects import ops_named
from ipu_mlir.dialects.packing import lower_packs
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.element_types import FLOAT_DTYPES, is_float

from .promotion import promoted, uses_narrow_floats

TO_BUFFERS = (
    "func.func(convert-elementwise-to-linalg)",
    "one-shot-bufferize{bufferize-function-boundaries allow-return-allocs-from-loops"
    " function-boundary-type-conversion=identity-layout-map}",
    "buffer-results-to-out-params{modify-public-functions hoist-static-allocs}",
)
# buffer-results-to-out-params{hoist-static-allocs} of LLVM 22 crashes the process (a segfault in
# updateReturnOps) when one buffer is returned twice (`return %v, %v`): such an entry copies its
# results into the out-params instead (found by test/fuzz).
OUT_PARAMS_COPYING = "buffer-results-to-out-params{modify-public-functions}"
TO_LOOPS = (
    "buffer-deallocation-pipeline",
    "convert-bufferization-to-memref",
    "func.func(convert-linalg-to-loops)",
    "lower-affine",
    "convert-scf-to-cf",
    "expand-strided-metadata",
    "lower-affine",
)
TO_LLVM = (
    "arith-expand{include-bf16=true}",
    "convert-math-to-llvm",
    "convert-math-to-libm",
    "finalize-memref-to-llvm",
    "convert-arith-to-llvm",
    "convert-cf-to-llvm",
    "convert-func-to-llvm",
    "reconcile-unrealized-casts",
)

# Signless integers read as signed, as arith's signed ops and torch-mlir take them.
DTYPES = {
    **FLOAT_DTYPES,
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
}

_LIB = Path(list(mlir.__path__)[0]) / "lib"
SHARED_LIBS = (str(_LIB / "libmlir_c_runner_utils.so"), str(_LIB / "libmlir_runner_utils.so"))


def shared_libs() -> list[str]:
    """The runner utilities register LLVM's command-line options when loaded; torch-mlir's
    extension, imported after them, registers its own copy again and aborts the process
    (docs/mlir-notes.md). Loading its native module first (0.3 s, no torch) makes either
    order safe, so a `--check` run may be followed by the torch front end."""
    if importlib.util.find_spec("torch_mlir") is not None:
        importlib.import_module("torch_mlir._mlir_libs._mlir")
    return list(SHARED_LIBS)


Source = str | os.PathLike | ir.Module
Signature = list[tuple[tuple[int, ...], np.dtype]]


class ReferenceRunError(IpuError):
    """The reference cannot run the program: unreadable, no such entry, unsupported types, a
    lowering failure, or outputs the program does not write."""


class ReferenceInputError(ReferenceRunError, ValueError):
    """Inputs that do not match the entry's arguments in number, shape or element type."""


def run_reference(module: Source, inputs: Sequence[np.ndarray], entry: str = "main", f16_in_f32: bool = True) -> list[np.ndarray]:
    """Runs function `entry` of an L0 module (an `ir.Module`, MLIR text, or a file path) on
    `inputs`, in argument order, and returns its results as new numpy arrays of the results'
    shapes and element types. The inputs are not modified.

    With `f16_in_f32` (the default), a program using f16, bf16 or FP8 runs in f32
    (runtime/promotion.py): the narrow inputs widened exactly, the narrow results rounded at
    the end, the program's own conversions into f16 rounded, and every bf16 or FP8 op rounded
    into its type. Loops of f16 additions rounded at every step drift far from the exact sum
    (4096 values in [0, 1.15): 2272 where the sum is 2350.2), and the simulator's sums do not,
    so the reference stays the one closer to the truth. A program the promotion cannot handle
    (e.g. bit casts of f16) runs in its own types."""
    with ir.Context(), ir.Location.unknown():
        clone = _parse(module)
        # before lowering: what the program may leave undefined
        undefined = {UNDEFINED_FOR_SOME_OPERANDS[op.name] for op in ops_named(clone.operation, UNDEFINED_FOR_SOME_OPERANDS)}
        _decompose_aggregates(clone)
        func = _only_the_entry(clone, _find_entry(clone, entry))
        function_type = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
        arguments = _signature(function_type.inputs, "argument", entry, func)
        results = _signature(function_type.results, "result", entry, func)
        arrays = _check_inputs(inputs, arguments, entry)
        wanted = results
        if f16_in_f32 and uses_narrow_floats(clone):
            _run_passes(clone, TO_BUFFERS[:1])  # element-wise ops on tensors into generics: promoted per element
            wide = promoted(clone)
            if wide is not None:
                clone, func = wide, _find_entry(wide, entry)
                arrays = [a.astype(np.float32) if is_float(a.dtype) and a.dtype.itemsize < 4 else a for a in arrays]
                results = [(shape, np.dtype(np.float32) if is_float(dtype) and dtype.itemsize < 4 else dtype) for shape, dtype in results]
        func.attributes["llvm.emit_c_interface"] = ir.UnitAttr.get()
        if "sym_visibility" in func.attributes:
            del func.attributes["sym_visibility"]  # a private entry would get no C interface
        _run_passes(clone, TO_BUFFERS[:1])
        _run_passes(clone, (_bufferize(clone),))
        _run_passes(clone, TO_BUFFERS[-1:] if not _returns_a_buffer_twice(_find_entry(clone, entry)) else (OUT_PARAMS_COPYING,))
        _check_out_params(clone, entry, len(arguments) + len(results))
        _run_passes(clone, TO_LOOPS)
        _store_booleans_as_bytes(clone)
        _run_passes(clone, TO_LLVM)
        run = _run_in_fresh_process if _libcall_names_interposed() or _DIVISION in undefined else _run_jit
        first, second = run(clone, entry, arrays, results)
    for index, (a, b) in enumerate(zip(first, second)):
        if a.tobytes() != b.tobytes():
            poison = sorted(undefined - {_DIVISION})
            raise ReferenceRunError(
                f"result #{index} of @{entry} is not entirely written by the program: it depends on the initial contents "
                "of its buffer (a tensor.empty returned, or read as the `outs` of an accumulation?)"
                + (f", or it is poison, which MLIR makes of {' and of '.join(poison)}" if poison else "")
            )
    return [output.astype(dtype) for output, (_, dtype) in zip(second, wanted)]


def _parse(source: Source) -> ir.Module:
    try:
        if isinstance(source, ir.Module):
            return ir.Module.parse(source.operation.get_asm(enable_debug_info=True))
        text = os.fspath(source)
        if isinstance(source, os.PathLike) or not ("{" in text or "\n" in text):
            try:
                Path(text).read_bytes()  # a clear message for a missing or unreadable file
            except OSError as error:
                raise ReferenceRunError(f"cannot read '{text}': {error.strerror}") from None
            return ir.Module.parseFile(text)
        return ir.Module.parse(text)
    except ir.MLIRError as error:
        raise _unknown_op(source) or _from_mlir(error, "cannot parse the module") from None


def _unknown_op(source: Source) -> ReferenceRunError | None:
    """The refusal of the first op of no upstream dialect in `source`, at its own location
    (an `ipu` op of an L1 file, a TMTensor op), if that is why it does not parse."""
    context = ir.Context.current
    context.allow_unregistered_dialects = True
    try:
        text = source.operation.get_asm(enable_debug_info=True) if isinstance(source, ir.Module) else os.fspath(source)
        module = ir.Module.parseFile(text) if not ("{" in text or "\n" in text) else ir.Module.parse(text)
    except ir.MLIRError:
        return None
    finally:
        context.allow_unregistered_dialects = False
    unknown: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if not context.is_registered_operation(op.name):
            unknown.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    if not unknown:
        return None
    return ReferenceRunError(
        f"'{unknown[0].name}' is not an upstream MLIR op: the reference runs upstream dialects only (L0 programs, not ipu ops)",
        unknown[0].location,
    )


def _decompose_aggregates(module: ir.Module) -> None:
    """Rewrites every aggregate linalg op (`AggregatedOpInterface`: linalg.softmax) into the
    structured ops defining it; refuses, at its location, a linalg op neither structured nor
    aggregate."""
    try:
        lower_packs(module.operation)
    except IpuError as error:
        raise ReferenceRunError(error.message, error.location) from None
    found: dict[str, ir.Location] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.startswith("linalg.") and op.name not in ("linalg.yield", "linalg.index") and linalg.get_indexing_maps(op) is None:
            found.setdefault(op.name, op.location)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    for name, location in found.items():
        script = ir.Module.parse(_DECOMPOSE.replace("OP_NAME", name))
        try:
            interpreter.apply_named_sequence(module.operation, script.body.operations[0], script)
        except (ir.MLIRError, ValueError):  # the bindings raise ValueError for a failed transform
            raise ReferenceRunError(
                f"'{name}' cannot be run by the reference: upstream neither lowers it to loops nor decomposes it "
                "(transform.structured.decompose_interface)",
                location,
            ) from None


# The transform script decomposing each op named OP_NAME.
_DECOMPOSE = """
module attributes {transform.with_named_sequence} {
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %ops = transform.structured.match ops{["OP_NAME"]} in %root : (!transform.any_op) -> !transform.any_op
    %parts = transform.structured.decompose_interface %ops : (!transform.any_op) -> !transform.any_op
    transform.yield
  }
}
"""


def _bufferize(module: ir.Module) -> str:
    """One-shot-bufferize, copying before every write when a `scf.index_switch` yields a tensor:
    MLIR 22's analysis does not see that the switch's result aliases what its cases yield, so a
    later in-place write into a yielded tensor (`linalg.fill ... outs(%a)` after a default
    yielding `%a`) also changed the switch's result (docs/mlir-notes.md; fuzz_control seed
    1662). `scf.if` is analysed right."""
    switches: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "scf.index_switch" and any(isinstance(r.type, ir.RankedTensorType) for r in op.results):
            switches.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return TO_BUFFERS[1][:-1] + " copy-before-write}" if switches else TO_BUFFERS[1]


def _returns_a_buffer_twice(func: ir.Operation) -> bool:
    returned = [list(block.operations)[-1].operands for block in func.regions[0].blocks]
    return any(values[i] == values[j] for values in returned for i in range(len(values)) for j in range(i))


def _find_entry(module: ir.Module, entry: str) -> ir.Operation:
    names = []
    for op in module.body.operations:
        if op.operation.name != "func.func":
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name == entry:
            if len(op.regions[0].blocks) == 0:
                raise ReferenceRunError(f"@{entry} is only a declaration: it has no body to run", op.location)
            return op.operation
        names.append(f"@{name}")
    raise ReferenceRunError(f"no function @{entry} in the module (functions: {', '.join(names) or 'none'})")


def _only_the_entry(module: ir.Module, func: ir.Operation) -> ir.Operation:
    """The module reduced to `func` and what it calls, inlined: the other functions need not
    lower (upstream's Linalg/CPU/test-collapse-tensor.mlir returns a dynamic shape from the
    function its `main` calls, which no out-param can hold)."""
    entry = ir.StringAttr(func.attributes["sym_name"]).value
    for op in module.body.operations:
        if op.operation.name == "func.func" and len(op.regions[0].blocks):
            name = ir.StringAttr(op.attributes["sym_name"]).value
            op.attributes["sym_visibility"] = ir.StringAttr.get("private" if name != entry else "public")
    _run_passes(module, ("inline", "symbol-dce"))
    return _find_entry(module, entry)


def _signature(types: Sequence[ir.Type], what: str, entry: str, func: ir.Operation) -> Signature:
    signature = []
    for index, type_ in enumerate(types):
        ranked = isinstance(type_, ir.RankedTensorType) and type_.has_static_shape and type_.encoding is None
        dtype = DTYPES.get(str(type_.element_type)) if ranked else None
        if dtype is None:
            supported = ", ".join(DTYPES)
            message = f"{what} #{index} of @{entry} has type {type_}: the reference runs statically shaped tensors of {supported} only"
            raise ReferenceRunError(message, func.location)
        signature.append((tuple(type_.shape), dtype))
    return signature


def _check_inputs(inputs: Sequence[np.ndarray], arguments: Signature, entry: str) -> list[np.ndarray]:
    if len(inputs) != len(arguments):
        raise ReferenceInputError(f"@{entry} takes {len(arguments)} input{'s' * (len(arguments) != 1)}, got {len(inputs)}")
    arrays = []
    for index, (value, (shape, dtype)) in enumerate(zip(inputs, arguments)):
        array = np.asarray(value)
        if array.shape != shape or array.dtype != dtype:
            raise ReferenceInputError(f"input #{index} of @{entry}: expected shape {shape} {dtype}, got shape {array.shape} {array.dtype}")
        arrays.append(array)
    return arrays


def _run_passes(module: ir.Module, passes: Sequence[str]) -> None:
    for name in passes:
        try:
            passmanager.PassManager.parse(f"builtin.module({name})").run(module.operation)
        except ir.MLIRError as error:
            raise _from_mlir(error, f"lowering to LLVM failed in pass '{name}'") from None


def _check_out_params(module: ir.Module, entry: str, expected_arguments: int) -> None:
    function_type = ir.FunctionType(ir.TypeAttr(_find_entry(module, entry).attributes["function_type"]).value)
    if function_type.results or len(function_type.inputs) != expected_arguments:
        raise ReferenceRunError(f"internal error: @{entry} does not return its results through out-params: {function_type}")


def _store_booleans_as_bytes(module: ir.Module) -> None:
    """Retypes every `memref<...xi1>` to `i8` elements; loads are truncated, stores extended."""
    i1, i8 = ir.IntegerType.get_signless(1), ir.IntegerType.get_signless(8)

    def widen(type_: ir.Type) -> ir.Type:
        if isinstance(type_, ir.MemRefType) and type_.element_type == i1:
            return ir.MemRefType.get(type_.shape, i8, type_.layout, type_.memory_space)
        if isinstance(type_, ir.FunctionType):
            return ir.FunctionType.get([widen(t) for t in type_.inputs], [widen(t) for t in type_.results])
        return type_

    ops: list[ir.Operation] = []
    module.operation.walk(lambda op: ops.append(op) or ir.WalkResult.ADVANCE)  # rewritten after the walk
    for op in ops:
        for region in op.regions:
            for block in region.blocks:
                for argument in block.arguments:
                    argument.set_type(widen(argument.type))
        for result in op.results:
            result.set_type(widen(result.type))
        if op.name in ("func.func", "memref.global"):
            key = "function_type" if op.name == "func.func" else "type"
            op.attributes[key] = ir.TypeAttr.get(widen(ir.TypeAttr(op.attributes[key]).value))
        if op.name == "memref.global" and "initial_value" in op.attributes:
            value = op.attributes["initial_value"]
            if isinstance(value.type, ir.RankedTensorType) and value.type.element_type == i1:
                if not isinstance(value, ir.DenseIntElementsAttr):
                    raise ReferenceRunError(
                        "a boolean dense_resource constant is not supported by the reference: use dense<...>", op.location
                    )
                op.attributes["initial_value"] = ir.DenseElementsAttr.get(_bool_array(value).astype(np.int8), context=op.context)
        elif op.name == "memref.load" and op.results[0].type == i1:
            op.results[0].set_type(i8)
            with ir.InsertionPoint.after(op), op.location:
                boolean = arith.trunci(i1, op.results[0])
            op.results[0].replace_all_uses_except(boolean, boolean.owner.operation)
        elif op.name == "memref.store" and op.operands[0].type == i1:
            with ir.InsertionPoint(op), op.location:
                op.operands[0] = arith.extui(i8, op.operands[0])
    try:
        module.operation.verify()
    except ir.MLIRError as error:
        raise _from_mlir(error, "internal error: storing booleans as bytes broke the module") from None


def _bool_array(value: ir.DenseIntElementsAttr) -> np.ndarray:
    """The elements of a boolean dense attribute. numpy's view of a *splat* i1 attribute reads
    past its one stored bit (measured: `dense<true> : tensor<16x16xi1>` gave half false, varying
    between runs), so splats are expanded from their value."""
    if value.is_splat:
        return np.full(ir.ShapedType(value.type).shape, bool(ir.IntegerAttr(value.get_splat_value()).value))
    return np.array(value)


def _run_jit(module: ir.Module, entry: str, arrays: list[np.ndarray], results: Signature) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """The outputs of `entry` of LLVM-dialect `module` run by the JIT in this process, into
    outputs filled with 0x00 bytes and then with 0xFF bytes."""
    try:
        engine = ExecutionEngine(module, opt_level=2, shared_libs=shared_libs(), enable_object_dump=False)
        first = _invoke(engine, entry, arrays, results, fill=0x00)
    except RuntimeError as error:
        raise ReferenceRunError(f"the JIT cannot compile or link @{entry}: {error} (unresolved symbols are on stderr)") from None
    return first, _invoke(engine, entry, arrays, results, fill=0xFF)


# LLVM's table of runtime-library function names (memset, memcpy, fmodf...), which code
# generation indexes to name the functions its calls link to.
_LIBCALL_NAMES = b"_ZN4llvm5RTLIB19RuntimeLibcallsInfo34RuntimeLibcallImplNameTableStorageE"


def _libcall_names_interposed() -> bool:
    """Whether the libLLVM.so under `mlir` reads another library's copy of LLVM's libcall name
    table. torch-mlir bundles its own LLVM 22, of another revision, exporting the same versioned
    symbol (`LLVM_22.1`); imported before `mlir`, its copy is the one the dynamic linker binds
    (LD_DEBUG=bindings: libLLVM.so's own reference bound to libTorchMLIRAggregateCAPI.so). The
    JIT then names its calls from a table of other offsets: the `memset` of a zero fill linked
    to `getc` (gdb), an output never zeroed, "glibc detected an invalid stdio handle", a
    segfault, or "Symbols not found: [ ockfile ]". dlsym on libLLVM.so's handle finds the
    binding that library got."""
    loaded = {line.split()[-1] for line in Path("/proc/self/maps").read_text().splitlines() if "/libLLVM" in line}
    libc = ctypes.CDLL(None)
    libc.dlsym.restype, libc.dlsym.argtypes = ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_char_p]
    libc.dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
    for path in loaded:
        try:
            handle = ctypes.CDLL(path, mode=os.RTLD_NOLOAD)
        except OSError:
            continue
        address, info = libc.dlsym(handle._handle, _LIBCALL_NAMES), _DlInfo()
        if address and libc.dladdr(address, ctypes.byref(info)) and os.path.realpath(info.dli_fname.decode()) != os.path.realpath(path):
            return True
    return False


# Integer divisions, which x86 traps (SIGFPE) on a zero divisor or INT_MIN / -1: undefined
# behaviour in MLIR, and a signal no Python code can catch in the process that takes it.
_INTEGER_DIVISIONS = ("divsi", "divui", "remsi", "remui", "ceildivsi", "ceildivui", "floordivsi")
_DIVISION = f"an integer division by zero or of the most negative value by -1 ({', '.join(_INTEGER_DIVISIONS)}: undefined behaviour)"
# Ops whose result MLIR makes poison for some operands (the JIT may then leave an output
# unwritten, which the two runs' fills show).
_CONVERSION = "a float-to-int conversion of NaN, infinity or a value out of range (fptosi, fptoui: poison)"
_SHIFT = "a shift by the bit width or more (shli, shrsi, shrui: poison)"
# What MLIR leaves undefined, by op: where a program does it, no reference result exists.
UNDEFINED_FOR_SOME_OPERANDS = {f"arith.{name}": _DIVISION for name in _INTEGER_DIVISIONS} | {
    f"arith.{name}": what for names, what in (("fptosi fptoui", _CONVERSION), ("shli shrsi shrui", _SHIFT)) for name in names.split()
}


class _DlInfo(ctypes.Structure):
    _fields_ = [
        ("dli_fname", ctypes.c_char_p),
        ("dli_fbase", ctypes.c_void_p),
        ("dli_sname", ctypes.c_char_p),
        ("dli_saddr", ctypes.c_void_p),
    ]


def _run_in_fresh_process(
    module: ir.Module, entry: str, arrays: list[np.ndarray], results: Signature
) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """`_run_jit` in a new Python process, which imports `mlir` before anything else, so that its
    LLVM binds its own symbols: the module as bytecode, the arrays as .npy files."""
    with tempfile.TemporaryDirectory(prefix="ipu-reference-") as scratch:
        directory = Path(scratch)
        with open(directory / "module.mlirbc", "wb") as stream:
            module.operation.write_bytecode(stream)
        for index, array in enumerate(arrays):
            np.save(directory / f"input{index}.npy", array)
        signature = [[list(shape), dtype.str] for shape, dtype in results]
        (directory / "call.json").write_text(json.dumps({"entry": entry, "inputs": len(arrays), "results": signature}))
        code = "import mlir.ir, sys; from ipu_mlir.runtime.reference import _fresh_process_main; _fresh_process_main(sys.argv[1])"
        status = subprocess.run([sys.executable, "-c", code, scratch], check=False).returncode
        if (directory / "error.txt").exists():
            raise ReferenceRunError((directory / "error.txt").read_text())
        if status == -signal.SIGFPE:
            raise ReferenceRunError(
                f"the ExecutionEngine stopped @{entry} on SIGFPE: an integer division by zero or INT_MIN / -1, "
                "undefined behaviour in MLIR: there is no reference for these inputs"
            )
        if status != 0:
            raise ReferenceRunError(f"the reference's JIT process for @{entry} died (exit status {status})")
        outputs = [[np.load(directory / f"{fill}{index}.npy") for index in range(len(results))] for fill in ("first", "second")]
    return outputs[0], outputs[1]


def _fresh_process_main(scratch: str) -> None:
    """The fresh process of `_run_in_fresh_process`: runs the call described in `scratch`."""
    directory = Path(scratch)
    call = json.loads((directory / "call.json").read_text())
    arrays = [np.load(directory / f"input{index}.npy") for index in range(call["inputs"])]
    results = [(tuple(shape), np.dtype(dtype)) for shape, dtype in call["results"]]
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.parse((directory / "module.mlirbc").read_bytes())
        try:
            first, second = _run_jit(module, call["entry"], arrays, results)
        except ReferenceRunError as error:
            (directory / "error.txt").write_text(error.message)
            raise SystemExit(1) from None
    for fill, outputs in (("first", first), ("second", second)):
        for index, output in enumerate(outputs):
            np.save(directory / f"{fill}{index}.npy", output)


def _invoke(engine: ExecutionEngine, entry: str, inputs: list[np.ndarray], results: Signature, fill: int) -> list[np.ndarray]:
    arrays = [np.array(array, order="C") for array in inputs]  # fresh copies: see the module docstring
    outputs = [np.full(int(np.prod(shape)) * dtype.itemsize, fill, np.uint8).view(dtype).reshape(shape) for shape, dtype in results]
    # The descriptors point into `arrays` and `outputs`, which outlive the call.
    descriptors = [ctypes.pointer(ctypes.pointer(np_to_memref.get_ranked_memref_descriptor(a))) for a in arrays + outputs]
    engine.invoke(entry, *descriptors)
    return outputs


def _from_mlir(error: ir.MLIRError, what: str) -> ReferenceRunError:
    diagnostics = list(error.error_diagnostics)
    if not diagnostics:
        return ReferenceRunError(f"{what}: {error}")
    first = diagnostics[0]
    notes = "".join(f"\n  note: {note.message}" for note in first.notes)
    return ReferenceRunError(f"{what}: {first.message}{notes}", first.location)
