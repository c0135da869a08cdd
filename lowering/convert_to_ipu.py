"""`ipu-convert-to-ipu` (L0 -> L1): linalg on tensors to `ipu.matmul`, `ipu.conv` and `linalg.generic`.

The pass's docstring (`ipu-opt --help-pass ipu-convert-to-ipu`) explains it, with a before/after
example; docs/contracts.md fixes what L0 and L1 contain.

Steps, in order:

1. upstream `inline`, `symbol-dce`; scalars become 0-d tensors (`scalars.py`, after a
   `canonicalize` folding those computed from constants); results of multi-result generics nobody reads (and no
   other result reads the accumulator of) stop being computed, and with `drop-asserts`
   `cf.assert`s go; then `canonicalize`, which erases what they leave; embedding lookups and
   `tensor.extract`s at coordinates computed from the inputs become `ipu.gather`s (`gathers.py`);
2. check the input: types (static shapes, element types), dialects, and every op that will
   not be converted, before anything moves, so that errors point at the ops as written;
3. rewrite the named ops a compute op's record converts (`ComputeOp.converts`, in
   `dialects/ops/`): contractions (matmul, batch_matmul, matvec, vecmat, ...) to `ipu.matmul`
   and 2-d convolutions (NCHW, NHWC, depthwise, grouped) to `ipu.conv`, with `linalg.generic`
   transposes, casts and reshapes around them;
4. upstream `convert-elementwise-to-linalg` (arith and math on tensors),
   `linalg-generalize-named-ops` (everything else named, pooling included), `canonicalize`;
   arg-reductions (argmax, max with index) become single-result generics (`arg_reductions.py`);
   outputs indexed by a constant (keepdim reductions) are computed squeezed and expanded;
   then large trees of element-wise generics are fused in linear time (`fuse_trees.py`), the
   rest by `linalg-fuse-elementwise-ops`; `canonicalize`, `cse`; the additions of a pipelined
   training step's running gradient sums are kept out of fusion (`accumulations.py`);
5. give the planner data it can place: slices inserted into a `tensor.empty` side by side
   become a `tensor.concat`; other reads of a `tensor.empty` (the window-shape operand of a
   pooling) read a zero splat constant; rank-reducing slices become full-rank slices and
   reshapes; each compute op's record normalizes it (`ComputeOp.normalize`: zero pads that now
   feed an ipu.conv join its padding); a generic with several independent results becomes one
   generic per result (`normalize_l1.py`, which also squeezes keepdim outputs in step 4);
6. check every op against the L1 whitelist (a safety net: step 2 rejects what it can see).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mlir import ir, passmanager
from mlir.dialects import linalg

from ipu_mlir.dialects import tm_tensor
from ipu_mlir.dialects.ops import REGISTRY, converter_of
from ipu_mlir.dialects.ops import tensor_builders as tb
from ipu_mlir.dialects.ops.convert import pad_value
from ipu_mlir.dialects.packing import lower_packs
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.element_types import FLOAT_DTYPES

from .accumulations import GENERALIZE as GENERALIZE_ACCUMULATIONS
from .accumulations import keep_accumulations_apart
from .arg_reductions import rewrite_arg_reductions
from .fuse_trees import fuse_elementwise_trees
from .gathers import rewrite_computed_gathers, rewrite_embedding_lookups
from .inits_as_inputs import read_inits_as_inputs
from .normalize_l1 import access_ok, normalize_tensor_ops, squeeze_unit_outputs
from .pass_registry import ModulePass, register_pass
from .scalars import CONTROL_FLOW, has_scalar_code, is_predicate, scalars_as_tensors
from .static_pads import make_pads_static

PASS_NAME = "ipu-convert-to-ipu"

_INLINE = "builtin.module(inline,symbol-dce)"
_PREPARE = "builtin.module(canonicalize)"
_GENERALIZE = "builtin.module(func.func(convert-elementwise-to-linalg,linalg-generalize-named-ops),canonicalize)"
_FUSE = "builtin.module(linalg-fuse-elementwise-ops,canonicalize,cse)"

# docs/contracts.md: element types numpy can run (the floats of target/element_types.py).
ELEMENT_TYPES = frozenset({*FLOAT_DTYPES, "i1", "i8", "i32", "i64"})
_L0_DIALECTS = frozenset({"arith", "math", "linalg", "tensor", "func", "ipu"})
# With the compute ops of the registry (`REGISTRY`: the built-in records and any a plugin adds).
_L1_DATA_OPS = frozenset({
    "arith.constant", "func.return", "tensor.empty", "tensor.extract_slice", "tensor.insert_slice", "tensor.pad",
    "tensor.expand_shape", "tensor.collapse_shape", "tensor.concat", "ipu.all_reduce",
})  # fmt: skip
_ASSERT = f"cf.assert outside a linalg.generic, a scalar run-time check ({PASS_NAME}{{drop-asserts}} erases it)"


@register_pass
@dataclass
class ConvertToIpu(ModulePass):
    """Convert linalg on tensors (L0) to the compute ops of the op registry, dialects/ops (L1).

    Calls are inlined into the entry. Contractions (`linalg.matmul`, `batch_matmul`, `matvec`,
    `vecmat`, `batch_matvec`, `batch_vecmat`, `dot`, also with transposing `indexing_maps`)
    become `ipu.matmul`; 2-d convolutions (`conv_2d_nchw_fchw`, `conv_2d_nhwc_hwcf`,
    `conv_2d_nhwc_fhwc`, `depthwise_conv_2d_nchw_chw`, `depthwise_conv_2d_nhwc_hwc[m]`,
    `conv_2d_ngchw_fgchw`, `conv_2d_ngchw_gfchw`) become `ipu.conv` in NCHW / FCHW, with
    `linalg.generic` transposes and `tensor` reshapes around them. A zero `tensor.pad` feeding a
    convolution becomes its `padding`. An `outs` that is not a zero fill is added by an
    element-wise `linalg.generic`; operands are cast when their element types differ. All other
    named ops (element-wise, fill, transpose, broadcast, reduce, map, pooling) are generalized,
    then element-wise ops are fused. For the planner, keepdim reductions compute the squeezed
    tensor, unread results of multi-result generics are not computed, pooling windows read a
    zero constant instead of a `tensor.empty`, and rank-reducing slices become reshapes.
    Scalars (tensor.extract / insert / from_elements, scalar arith and math) become 0-d tensors,
    which live on a tile (lowering/scalars.py). An `scf.for` with constant bounds stays (Poplar's
    Repeat), `scf.if`, `scf.index_switch` and `scf.while` too (If, Switch, RepeatWhileTrue, on
    a condition read from a 0-d tensor), their blocks converted like a function body. Anything
    outside L1 (docs/contracts.md) stops the pass with `'op.name' is not supported by
    ipu-convert-to-ipu`, at the op, for every such op; `cf.assert` too, unless `drop-asserts`.

    Before:

        %zero = arith.constant 0.0 : f32
        %empty = tensor.empty() : tensor<8x32xf32>
        %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<8x32xf32>) -> tensor<8x32xf32>
        %y = linalg.matmul ins(%x, %w : tensor<8x16xf32>, tensor<16x32xf32>)
                           outs(%fill : tensor<8x32xf32>) -> tensor<8x32xf32>
        %r = linalg.max ins(%y, %fill : tensor<8x32xf32>, tensor<8x32xf32>)
                        outs(%empty : tensor<8x32xf32>) -> tensor<8x32xf32>

    After:

        %cst = arith.constant 0.000000e+00 : f32
        %0 = tensor.empty() : tensor<8x32xf32>
        %1 = "ipu.matmul"(%x, %w) : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
        %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
            ins(%1 : tensor<8x32xf32>) outs(%0 : tensor<8x32xf32>) {
        ^bb0(%in: f32, %out: f32):
          %3 = arith.maximumf %in, %cst : f32
          linalg.yield %3 : f32
        } -> tensor<8x32xf32>
    """

    name = "ipu-convert-to-ipu"

    drop_asserts: bool = field(
        default=False, metadata={"help": "erase cf.assert (torch-mlir's run-time checks, e.g. no division by zero) instead of rejecting it"}
    )

    def run(self, module: ir.Operation) -> None:
        _raise_all(_check_recursion(module) + _check_registered(module))
        lower_packs(module)
        run_upstream(module, _INLINE)
        bodies = [function.regions[0].blocks[0] for function in _functions(module)]
        if any(has_scalar_code(body) for body in bodies):
            run_upstream(module, _PREPARE)  # scalars computed from constants folded: bounds, coordinates
            for body in bodies:
                scalars_as_tensors(body)
        for block in _blocks(module):
            _forget_unused_results(block, self.drop_asserts)
        run_upstream(module, _PREPARE)
        for block in _blocks(module):
            make_pads_static(block)
            rewrite_embedding_lookups(block)
            rewrite_computed_gathers(block)
            _drop_casts_into_concats(block)
        _raise_all(_check_module(module, _check_input_op))
        for block in _blocks(module):
            rewrite_named_ops(block)
        run_upstream(module, _GENERALIZE)
        for block in _blocks(module):
            rewrite_arg_reductions(block)  # before fusion, which fuses the generics it makes
        for block in _blocks(module):
            squeeze_unit_outputs(block)  # before fusion, which moves the reshapes it adds
            read_inits_as_inputs(block)  # before fusion, which would keep them as second results
            keep_accumulations_apart(block)  # a running gradient sum's additions: named ops, not fused
        for block in _blocks(module):
            fuse_elementwise_trees(block)  # what upstream would fuse in quadratic time
        run_upstream(module, _FUSE)
        run_upstream(module, GENERALIZE_ACCUMULATIONS)
        for block in _blocks(module):
            _drop_fused_assert_copies(block)
        for block in _blocks(module):
            normalize_tensor_ops(block)
        _raise_all(_check_module(module, _check_l1_op))


def _drop_casts_into_concats(block: ir.Block) -> None:
    """A `tensor.cast` from a static shape to a dynamic one that only `tensor.concat`s read is
    dropped: the concat takes the static operand as it is. torch-mlir's `torch.roll` (and its
    `cat` of slices) casts each slice to `?` along the joined dim before concatenating into a
    static result; canonicalize does not fold those casts."""
    for op in list(block.operations):
        if op.operation.name != "tensor.cast":
            continue
        source, result = op.operands[0], op.results[0]
        if not ir.RankedTensorType(source.type).has_static_shape:
            continue
        if all(use.owner.name == "tensor.concat" for use in result.uses):
            result.replace_all_uses_with(source)
            op.operation.erase()


def _is_l1(name: str) -> bool:
    return name in _L1_DATA_OPS or name in REGISTRY


def rewrite_named_ops(block: ir.Block) -> None:
    """Every named op a compute op's record converts, replaced by what its `convert` builds
    (left as it is, to be generalized, when that is None)."""
    for op in list(block.operations):
        record = converter_of(op.operation.name)
        if record is None:
            continue
        with ir.InsertionPoint(op), op.location:
            result = record.convert(op)
        if result is not None:
            op.results[0].replace_all_uses_with(result)
            op.operation.erase()


def run_upstream(module: ir.Operation, pipeline: str) -> None:
    """Runs an upstream pass pipeline on `module`; its errors are raised as IpuErrors.

    The errors are collected into the MLIRError (not sent to the context's handler, as ipu-opt
    sets up) so they are reported once, by the pass that ran the pipeline.
    """
    context = module.context
    emitted = context.emit_error_diagnostics
    context.emit_error_diagnostics = False
    try:
        passmanager.PassManager.parse(pipeline, context).run(module)
    except ir.MLIRError as failure:
        errors = [IpuError(d.message, d.location) for d in failure.error_diagnostics]
        _raise_all(errors or [IpuError(f"{pipeline} failed", module.location)])
    finally:
        context.emit_error_diagnostics = emitted


def unsupported(op: ir.Operation | ir.OpView, reason: str = "") -> IpuError:
    """`'op.name' is not supported by ipu-convert-to-ipu[: reason]`, at the op."""
    operation = op.operation
    message = f"'{operation.name}' is not supported by {PASS_NAME}"
    return IpuError(f"{message}: {reason}" if reason else message, operation.location)


def _raise_all(errors: list[IpuError]) -> None:
    if errors:
        raise ExceptionGroup(f"{len(errors)} errors in {PASS_NAME}", errors)


def _functions(module: ir.Operation) -> list[ir.OpView]:
    return [op for op in module.regions[0].blocks[0].operations if op.operation.name == "func.func" and len(op.regions[0].blocks)]


def _blocks(module: ir.Operation) -> list[ir.Block]:
    """The functions' bodies and the blocks of the control flow in them (`CONTROL_FLOW`), outer
    first: the rewrites run on each, so a loop body or a branch is converted like a function body."""
    blocks = [function.regions[0].blocks[0] for function in _functions(module)]
    for block in blocks:  # grows as control flow is found: nested blocks come after their parents
        blocks.extend(
            inner for op in block.operations if op.operation.name in CONTROL_FLOW for region in op.regions for inner in region.blocks
        )
    return blocks


def _drop_fused_assert_copies(block: ir.Block) -> None:
    """Erases the result-less generics elementwise fusion leaves behind when it fuses a
    producer holding a `cf.assert`: the side effect keeps the emptied producer alive, while
    each consumer it fused into runs a clone of the assert over the producer's whole domain
    (fusion requires a projected permutation on the fused operand). A result-less generic
    whose every assert has no clone elsewhere stays, and ipu-plan names it."""
    asserts: dict[tuple[str, str], int] = {}
    found: list[tuple[ir.OpView, list[tuple[str, str]]]] = []
    for op in block.operations:
        if op.operation.name != "linalg.generic":
            continue
        keys = [
            (ir.StringAttr(i.attributes["msg"]).value, str(i.location))
            for i in op.regions[0].blocks[0].operations
            if i.operation.name == "cf.assert"
        ]
        for key in keys:
            asserts[key] = asserts.get(key, 0) + 1
        if not len(op.results) and keys:
            found.append((op, keys))
    for op, keys in found:
        if all(asserts[key] > 1 for key in keys):
            for key in keys:
                asserts[key] -= 1
            op.operation.erase()


def _forget_unused_results(block: ir.Block, drop_asserts: bool) -> None:
    """Yields a constant for each unused result of a multi-result generic, so that
    canonicalize drops the result and whatever computed it; erases `cf.assert`s if asked."""
    doomed = []
    for op in block.operations:
        if op.operation.name == "linalg.generic" and len(op.results) > 1:
            block = op.regions[0].blocks[0]
            terminator = list(block.operations)[-1]
            num_inputs = len(op.operands) - len(op.results)
            for index, result in enumerate(op.results):
                accumulator = block.arguments[num_inputs + index]
                others = [v for k, v in enumerate(terminator.operands) if k != index]
                if not list(result.uses) and not any(_reads(v, accumulator) for v in others):  # arg-max reads the max
                    with ir.InsertionPoint(terminator), op.location:
                        zero = tb.zero_attr(ir.RankedTensorType(result.type).element_type)
                        constant = ir.Operation.create("arith.constant", results=[zero.type], attributes={"value": zero})
                    terminator.operands[index] = constant.results[0]
        if drop_asserts:
            op.operation.walk(lambda inner: _collect(inner, "cf.assert", doomed))
    for assertion in doomed:
        assertion.erase()


def _reads(value: ir.Value, argument: ir.BlockArgument) -> bool:
    """True if the body value `value` is computed from the block argument `argument`."""
    pending = [value]
    while pending:
        current = pending.pop()
        if current == argument:
            return True
        if not isinstance(current.owner, ir.Block) and current.owner.operation.parent == argument.owner.owner:
            pending.extend(current.owner.operands)
    return False


def _collect(op: ir.Operation, name: str, into: list) -> ir.WalkResult:
    if op.name == name:
        into.append(op)
    return ir.WalkResult.ADVANCE


# --- checks -----------------------------------------------------------------------------------


def _check_recursion(module: ir.Operation) -> list[IpuError]:
    """The calls that close a cycle of the call graph, with the cycle: the inliner leaves them
    (they would later read as calls to a function without body)."""
    calls: dict[str, list[tuple[str, ir.Operation]]] = {}
    for function in _functions(module):
        found: list[ir.Operation] = []
        function.operation.walk(lambda op, found=found: _collect(op, "func.call", found))
        calls[ir.StringAttr(function.attributes["sym_name"]).value] = [
            (ir.FlatSymbolRefAttr(call.attributes["callee"]).value, call) for call in found
        ]
    errors: list[IpuError] = []
    done: set[str] = set()

    def visit(path: list[str]) -> None:
        for callee, call in calls[path[-1]]:
            if callee in path:
                cycle = " -> ".join(f"@{name}" for name in [*path[path.index(callee) :], callee])
                errors.append(unsupported(call, f"recursion ({cycle}): calls are inlined, and an IPU program has no call stack"))
            elif callee in calls and callee not in done:
                visit([*path, callee])
        done.add(path[-1])

    for name in calls:
        if name not in done:
            visit([name])
    return errors


def _check_registered(module: ir.Operation) -> list[IpuError]:
    """Ops of dialects nobody registered (allowed by `--allow-unregistered-dialect`, or
    torch-mlir's TMTensor ops) refused first: upstream's inliner cannot tell which symbols they
    use, and aborts the process on them."""
    unknown: list[ir.OpView] = []
    context = module.context

    def visit(op: ir.Operation) -> ir.WalkResult:
        if not context.is_registered_operation(op.name):
            unknown.append(op)
            return ir.WalkResult.SKIP  # its region's ops (tm_tensor.yield) are its own
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    hint = {tm_tensor.DIALECT: f"run ipu-convert-tm-tensor first (the default pipeline does): {tm_tensor.DIALECT} is {{}}"}
    return [
        unsupported(
            op,
            hint.get(op.name.split(".", 1)[0], "an op of a dialect nobody registered{}").format(
                tm_tensor.describe(op.name) if op.name.startswith(tm_tensor.DIALECT + ".") else ""
            ),
        )
        for op in unknown
    ]


def _check_module(module: ir.Operation, check_op: Callable[[ir.OpView], str | None]) -> list[IpuError]:
    """Every op of the module that `check_op` objects to (its reason), and every function whose
    signature is not made of static tensors."""
    errors = []
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name != "func.func":
            errors.append(unsupported(op, "only func.func at module level"))
            continue
        if not len(op.regions[0].blocks):
            continue  # a declaration; any call to it is reported
        function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        for role, types in (("argument", function_type.inputs), ("result", function_type.results)):
            for index, type_ in enumerate(types):
                problem = _type_problem(type_, scalars=False)
                if problem:
                    errors.append(unsupported(op, f"{role} #{index} has {problem}"))
        errors += _check_block(op.regions[0].blocks[0], check_op)
    return errors


def _check_block(block: ir.Block, check_op: Callable[[ir.OpView], str | None]) -> list[IpuError]:
    """The objections of `check_op` to the ops of `block`, and of the blocks of its control flow."""
    errors = []
    for inner in block.operations:
        name = inner.operation.name
        if name in CONTROL_FLOW:
            reason = _check_control_flow(inner)
        elif name in ("scf.yield", "scf.condition"):
            reason = _check_condition(inner) if name == "scf.condition" else None
        else:
            # A 0-d tensor's element read as a scalar: a predicate, or a view of a scalar the
            # rewrite made a 0-d tensor, whose readers are checked (and refused) themselves.
            view = inner.operation.name == "tensor.extract" and len(inner.operands) == 1
            reason = None if view or is_predicate(inner) else check_op(inner)
        if reason is not None:
            errors.append(unsupported(inner, reason))
        elif name in CONTROL_FLOW:
            for region in inner.regions:
                for nested in region.blocks:
                    errors += _check_block(nested, check_op)
    return errors


def _check_control_flow(op: ir.OpView) -> str | None:
    """`scf.for` becomes Poplar's Repeat: a trip count known at compile time. `scf.if` its If,
    `scf.while` its RepeatWhileTrue and `scf.index_switch` its Switch, on a condition read from
    a device scalar (a predicate, which the scalars' rewrite makes of the `i1` or index it
    computes). Only tensors flow in and out (they become buffers; scalars are 0-d tensors by now)."""
    name = op.operation.name
    if name == "scf.for":
        for role, value in zip(("a lower bound", "an upper bound", "a step"), op.operands):
            if not isinstance(value.owner, ir.OpView) or value.owner.operation.name != "arith.constant":
                return f"{role} that is not a constant (Repeat needs its trip count at compile time)"
    elif name in ("scf.if", "scf.index_switch") and not _is_predicate_value(op.operands[0]):
        return "a condition that is not computed on the device (a scalar of the function's tensors)"
    carried = op.operands[3:] if name == "scf.for" else op.operands[1:] if name in ("scf.if", "scf.index_switch") else op.operands
    for value in (*carried, *op.results):
        problem = _type_problem(value.type, scalars=False)
        if problem:
            return f"a value of {problem} flowing through it"
    return None


def _check_condition(op: ir.OpView) -> str | None:
    if not _is_predicate_value(op.operands[0]):
        return "a condition that is not computed on the device (an i1 of the function's tensors)"
    return None


def _is_predicate_value(value: ir.Value) -> bool:
    return isinstance(value.owner, ir.OpView) and is_predicate(value.owner)


def _type_problem(type_: ir.Type, scalars: bool) -> str | None:
    """Why a value of `type_` cannot be in L0/L1, or None."""
    if isinstance(type_, ir.RankedTensorType):
        if not type_.has_static_shape:
            return f"dynamic shapes ({type_})"
        if type_.encoding is not None:
            return f"tensor encodings ({type_})"
        if 0 in type_.shape:
            return f"zero-size tensors ({type_})"
        if str(type_.element_type) not in ELEMENT_TYPES:
            return f"element type {type_.element_type} ({type_})"
        return None
    if scalars and isinstance(type_, (ir.IntegerType, ir.FloatType, ir.IndexType)):
        return None
    return f"type {type_} (only statically shaped tensors)"


def _check_input_op(op: ir.OpView) -> str | None:
    """Before the rewrites: the types of every value, and every op that stays as it is."""
    name = op.operation.name
    if name.split(".")[0] not in _L0_DIALECTS and name != "cf.assert":
        return ""
    if name == "func.return":
        return None  # the function's signature is checked
    for value in (*op.operands, *op.results):
        problem = _type_problem(value.type, scalars=True)
        if problem:
            return problem
    if name == "linalg.generic":
        return _check_generic(op)  # scalar operands are fine here: fusion folds constant ones
    if _is_l1(name):
        return _check_l1_op(op)
    if name == "func.call":
        return "a call that could not be inlined (a function without body)"
    if name == "cf.assert":
        if _is_false_constant(op.operands[0]):
            return f'a cf.assert that always fails: "{ir.StringAttr(op.attributes["msg"]).value}"'
        return _ASSERT
    if name.startswith("linalg."):
        # Named ops become ipu ops or are generalized; ops that are not structured cannot be.
        return None if converter_of(name) or linalg.get_indexing_maps(op) is not None else ""
    if name.startswith(("arith.", "math.")):
        # Element-wise on tensors: converted to linalg.generic.
        tensors = all(isinstance(v.type, ir.RankedTensorType) for v in (*op.operands, *op.results))
        return None if tensors else "scalar arithmetic outside linalg.generic"
    return ""


def _check_l1_op(op: ir.OpView) -> str | None:
    """After the rewrites: the L1 whitelist of docs/contracts.md."""
    name = op.operation.name
    if not _is_l1(name):
        return ""
    if name == "func.return":
        return None  # the function's signature is checked
    if name in ("tensor.extract_slice", "tensor.insert_slice") and len(op.operands) != (1 if name == "tensor.extract_slice" else 2):
        return "dynamic offsets, sizes or strides"  # static strides of any size are exchanges (ipu-schedule)
    if name == "tensor.pad" and len(op.operands) != 1:
        return "dynamic padding"  # before its `index` operands are blamed
    for value in (*op.operands, *op.results):
        problem = _type_problem(value.type, scalars=name == "arith.constant")
        if problem:
            return problem if name != "linalg.generic" else f"operand or result of {problem}"
    if name == "linalg.generic":
        return _check_generic(op)
    if name == "tensor.pad":
        if pad_value(op) is None:
            return "a padding value that is not a constant"
    elif name in ("tensor.expand_shape", "tensor.empty") and len(op.operands) != (1 if name == "tensor.expand_shape" else 0):
        return "dynamic shapes"
    return None


def _check_generic(op: ir.OpView) -> str | None:
    for iterator in ir.ArrayAttr(op.attributes["iterator_types"]):
        if str(iterator) not in ("#linalg.iterator_type<parallel>", "#linalg.iterator_type<reduction>"):
            return f"iterator {iterator}"
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    num_inputs = len(op.operands) - len(op.results)
    for index, (value, amap) in enumerate(zip(op.operands, maps)):
        shape = ir.RankedTensorType(value.type).shape if isinstance(value.type, ir.ShapedType) else []
        output = index >= num_inputs
        if not all(access_ok(expr, size, window_ok=not output) for expr, size in zip(amap.results, shape)):
            return f"indexing map {amap} of operand #{index}"
        dims = [expr.position for expr in amap.results if isinstance(expr, ir.AffineDimExpr)]
        if len(set(dims)) != len(dims):
            return f"indexing map {amap} of operand #{index} repeats a dimension"
    region = op.regions[0]
    for inner in region.blocks[0].operations:
        inner_name = inner.operation.name
        if inner_name == "linalg.index":
            return "linalg.index in the body (ipu-index-to-iota makes it an input)"
        if inner_name == "cf.assert":
            if _is_false_constant(inner.operands[0]):
                return f'a cf.assert that always fails: "{ir.StringAttr(inner.attributes["msg"]).value}"'
            continue  # a run-time check: the simulator checks it on every element
        if inner_name == "tensor.extract":  # ipu-convert-to-ipu made the others gathers
            return "'tensor.extract' at coordinates computed from an output (a gather's coordinates come from the inputs)"
        if inner_name != "linalg.yield" and inner_name.split(".")[0] not in ("arith", "math"):
            return f"'{inner_name}' in the body (only arith and math)"
        if len(inner.regions):
            return f"'{inner_name}' with regions in the body"
        for value in inner.operands:
            if not _defined_inside(value, op) and not _is_scalar_constant(value):
                return "a body using a value from outside that is not a scalar constant"
    return None


def _is_false_constant(value: ir.Value) -> bool:
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.operation.name != "arith.constant":
        return False
    return ir.IntegerAttr(owner.attributes["value"]).value == 0


def _defined_inside(value: ir.Value, op: ir.OpView) -> bool:
    owner = value.owner
    parent = owner.owner if isinstance(owner, ir.Block) else owner.parent
    return parent == op.operation


def _is_scalar_constant(value: ir.Value) -> bool:
    owner = value.owner
    return not isinstance(owner, ir.Block) and owner.name == "arith.constant" and not isinstance(value.type, ir.ShapedType)
