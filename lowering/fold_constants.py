"""`ipu-fold-constants` (L0): compute at compile time what depends only on constants, and decide
the `cf.assert`s found there.

torch-mlir exports a model in eval mode with its weights as constants, and some layers compute
on the weights alone: BatchNorm's `1 / sqrt(var + eps)` is three element-wise generics on the
running variance, the last one guarded by `cf.assert %x != 0, "unimplemented: tensor with zero
element"`. Folding them gives the program one constant per layer instead of work on every run,
and decides the assert: it is erased when it holds on every element, and an error quoting its
message (at its location) when it does not. Asserts on run-time values stay for the simulator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from mlir import ir

from ipu_mlir.dialects.ops.semantics import elementwise_kernel, numpy_dtype
from ipu_mlir.dialects.ops.space import loop_extents
from ipu_mlir.dialects.resources import dense_array
from ipu_mlir.target.diagnostics import IpuError

from .pass_registry import ModulePass, register_pass

_RESHAPES = ("tensor.expand_shape", "tensor.collapse_shape")
# Results up to this many elements become inline `dense` constants; larger ones blobs.
_INLINE_ELEMENTS = 16


@register_pass
@dataclass
class FoldConstants(ModulePass):
    """Evaluate element-wise linalg.generic ops, transposes and reshapes whose inputs are all constants.

    Static slices and concatenations of constants fold too (a constant kernel's flip,
    lowering/affine_reads.py).

    A generic folds when all its iterators are parallel, its indexing maps are projected
    permutations (dims, or 0 on a unit dim), its body is arith / math ops, and its result is
    no larger than its largest input (a broadcast that would grow a constant stays as work).
    A `cf.assert` in a folded body is decided: erased if it holds everywhere, else an error.
    The arithmetic is the simulator's own (`dialects.ops.semantics`).

    Before:

        %var = arith.constant dense<[1.0, 4.0]> : tensor<2xf32>
        %r = linalg.generic {... iterator_types = ["parallel"]} ins(%var : tensor<2xf32>) outs(%e : tensor<2xf32>) {
        ^bb0(%in: f32, %out: f32):
          %s = math.sqrt %in : f32
          %nz = arith.cmpf one, %s, %zero : f32
          cf.assert %nz, "unimplemented: tensor with zero element"
          %q = arith.divf %one, %s : f32
          linalg.yield %q : f32
        } -> tensor<2xf32>

    After:

        %r = arith.constant dense<[1.000000e+00, 5.000000e-01]> : tensor<2xf32>
    """

    name = "ipu-fold-constants"

    max_elements: int = field(default=1 << 26, metadata={"help": "largest result folded, in elements (default: 2^26)", "minimum": 0})

    def run(self, module: ir.Operation) -> None:
        for function in module.regions[0].blocks[0].operations:
            if function.operation.name == "func.func" and len(function.regions[0].blocks):
                _Folder(self.max_elements).fold(function.regions[0].blocks[0])


class _Folder:
    def __init__(self, max_elements: int):
        self.max_elements = max_elements
        self.values: dict[ir.Value, np.ndarray] = {}
        self.orphans: list[ir.Value] = []
        self.count = 0

    def fold(self, block: ir.Block) -> None:
        for op in list(block.operations):
            name = op.operation.name
            if name == "arith.constant":
                continue
            if name in _RESHAPES:
                folded = self._reshape(op)
            elif name == "linalg.generic":
                folded = self._generic(op)
            elif name == "linalg.transpose":
                folded = self._transpose(op)
            elif name == "tensor.extract_slice":
                folded = self._slice(op)
            elif name == "tensor.concat":
                folded = self._concat(op)
            else:
                continue
            if folded is not None:
                self._replace(op, folded)
        for value in reversed(self.orphans):  # constants only the folded ops used
            if _is_constant(value) and not any(True for _ in value.uses):
                value.owner.operation.erase()

    # Values.

    def _constant(self, value: ir.Value) -> np.ndarray | None:
        """The value of a tensor or scalar defined by an arith.constant, None otherwise."""
        if value in self.values:
            return self.values[value]
        if not _is_constant(value):
            return None
        owner = value.owner
        dtype = _dtype(value.type)
        if dtype is None:
            return None
        attr = owner.attributes["value"]
        if isinstance(attr, (ir.IntegerAttr, ir.FloatAttr, ir.BoolAttr)):
            array = np.array(attr.value).astype(dtype)
        else:
            shape = tuple(ir.ShapedType(value.type).shape)
            array = dense_array(attr, dtype)
            if array is None or array.size != math.prod(shape):
                return None
            array = np.asarray(array, dtype).reshape(shape)
        self.values[value] = array
        return array

    def _replace(self, op: ir.OpView, array: np.ndarray) -> None:
        result = op.results[0]
        tensor = ir.RankedTensorType(result.type)
        array = np.ascontiguousarray(array.astype(_dtype(tensor), copy=False))
        with op.location, ir.InsertionPoint(op):
            if array.dtype == np.bool_:  # the bindings refuse a bool buffer given an i1 type; inferred, it is i1
                attr = ir.DenseElementsAttr.get(array)
            elif array.size <= _INLINE_ELEMENTS:
                attr = ir.DenseElementsAttr.get(array, type=tensor)
            else:
                self.count += 1
                attr = ir.DenseResourceElementsAttr.get_from_buffer(array, f"folded_{self.count}", tensor)
            constant = ir.Operation.create("arith.constant", results=[tensor], attributes={"value": attr})
        result.replace_all_uses_with(constant.results[0])
        self.values[constant.results[0]] = array
        self.orphans.extend(v for v in op.operands if v not in self.orphans)
        operands = list(op.operands)
        op.operation.erase()
        for value in operands:  # a value no op reads any more: its array is not held (a weight's copy)
            if not any(True for _ in value.uses):
                self.values.pop(value, None)

    # Ops.

    def _reshape(self, op: ir.OpView) -> np.ndarray | None:
        source = self._constant(op.operands[0])
        if source is None:
            return None
        return source.reshape(tuple(ir.RankedTensorType(op.results[0].type).shape))

    def _slice(self, op: ir.OpView) -> np.ndarray | None:
        """A static slice of a constant reordered by concatenations (a constant kernel's flip,
        lowering/affine_reads.py): slices are all the constant's uses, so together they hold
        its bytes once, not twice, and the concatenations then fold too."""
        slices = [use.owner for use in op.operands[0].uses] if len(op.operands) == 1 else []
        if not slices or any(s.name != "tensor.extract_slice" for s in slices):
            return None
        if any(use.owner.name != "tensor.concat" for s in slices for use in s.results[0].uses):
            return None
        source = self._constant(op.operands[0])
        if source is None:
            return None
        offsets, sizes, strides = (list(ir.DenseI64ArrayAttr(op.attributes[f"static_{name}"])) for name in ("offsets", "sizes", "strides"))
        window = source[tuple(slice(o, o + (n - 1) * s + 1, s) for o, n, s in zip(offsets, sizes, strides))]
        return window.reshape(tuple(ir.RankedTensorType(op.results[0].type).shape))

    def _concat(self, op: ir.OpView) -> np.ndarray | None:
        parts = [self._constant(value) for value in op.operands]
        if any(part is None for part in parts):
            return None
        return np.concatenate(parts, axis=ir.IntegerAttr(op.attributes["dim"]).value)

    def _transpose(self, op: ir.OpView) -> np.ndarray | None:
        """A constant's transpose (torch-mlir's `nn.Linear` permutes its (out, in) weight): its
        bytes in another order, folded whatever its size when it is the constant's only use, so
        the program holds the weight once, not also a transposed copy (VGG-16's 25088x4096
        classifier weight, 411 MB, twice did not fit gc200's 897 MiB). A constant used elsewhere
        too keeps its transpose as work at any size: folding would hold its bytes twice (GPT-2's
        token embedding, 154 MB, is gathered and also transposed for the logits: folded, tile 0
        ran out of memory)."""
        if not _is_constant(op.operands[0]) or sum(1 for _ in op.operands[0].uses) != 1:
            return None
        source = self._constant(op.operands[0])
        return None if source is None else source.transpose(tuple(ir.DenseI64ArrayAttr(op.attributes["permutation"])))

    def _generic(self, op: ir.OpView) -> np.ndarray | None:
        if len(op.results) != 1 or _dtype(op.results[0].type) is None:
            return None
        if any("parallel" not in str(kind) for kind in ir.ArrayAttr(op.attributes["iterator_types"])):
            return None
        num_inputs = len(op.operands) - 1
        if not all(_is_constant(v) for v in list(op.operands)[:num_inputs]):
            return None  # before reading any blob: most generics compute on run-time values
        inputs = [self._constant(v) for v in list(op.operands)[:num_inputs]]
        if not inputs or any(a is None or a.ndim == 0 for a in inputs):
            return None
        result_shape = tuple(ir.RankedTensorType(op.results[0].type).shape)
        if math.prod(result_shape) > min(self.max_elements, max(a.size for a in inputs)):
            return None
        maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
        loops = loop_extents(op)
        block = op.regions[0].blocks[0]
        if any(True for _ in block.arguments[num_inputs].uses):
            return None  # the body reads its init
        env: dict[ir.Value, np.ndarray] = {}
        for argument, array, amap in zip(block.arguments, inputs, maps):
            view = _over_loops(array, amap, loops)
            if view is None:
                return None
            env[argument] = view
        for inner in block.operations:
            name = inner.operation.name
            if name == "linalg.yield":
                # the body may yield a value defined outside it (a captured scalar)
                yielded = env.get(inner.operands[0])
                if yielded is None:
                    yielded = self._constant(inner.operands[0])
                if yielded is None:
                    return None
                out = _from_loops(np.broadcast_to(yielded, loops), maps[-1])
                return None if out is None else out.reshape(result_shape)
            if not self._evaluate(inner, env):
                return None
        return None

    def _evaluate(self, op: ir.OpView, env: dict[ir.Value, np.ndarray]) -> bool:
        """Runs one body op on whole arrays; False if it cannot be folded."""
        name = op.operation.name
        operands = []
        for value in op.operands:
            array = env.get(value)
            if array is None:
                array = self._constant(value)
            if array is None:
                return False
            operands.append(array)
        if name == "cf.assert":
            held = np.asarray(operands[0])
            if not held.all():
                message = ir.StringAttr(op.attributes["msg"]).value
                failed = int(held.size - np.count_nonzero(held))
                raise IpuError(
                    f"'cf.assert' fails at compile time on {failed} of {held.size} constant elements: \"{message}\"", op.location
                )
            return True
        if name == "arith.constant":
            value = self._constant(op.results[0])
            if value is not None:
                env[op.results[0]] = value
            return value is not None
        if len(op.results) != 1 or not name.startswith(("arith.", "math.")):
            return False
        result_dtype = _dtype(op.results[0].type)
        operand_dtypes = [_dtype(v.type) for v in op.operands]
        if result_dtype is None or any(d is None for d in operand_dtypes):  # not `None in`: dtype("f8") == None
            return False
        predicate = ir.IntegerAttr(op.attributes["predicate"]).value if name in ("arith.cmpf", "arith.cmpi") else None
        kernel = elementwise_kernel(name, operand_dtypes, result_dtype, predicate)
        if kernel is None:
            return False
        with np.errstate(all="ignore"):  # IEEE results (inf, nan) are the program's own
            env[op.results[0]] = np.asarray(kernel(*operands)).astype(result_dtype, copy=False)
        return True


def _dtype(type_: ir.Type) -> np.dtype | None:
    return numpy_dtype(ir.ShapedType(type_).element_type if isinstance(type_, ir.ShapedType) else type_)


def _is_constant(value: ir.Value) -> bool:
    return not isinstance(value.owner, ir.Block) and value.owner.operation.name == "arith.constant"


def _over_loops(array: np.ndarray, amap: ir.AffineMap, loops: tuple[int, ...]) -> np.ndarray | None:
    """`array` indexed by `amap` as an array over the loops (broadcast along loops it lacks)."""
    index, dims = [], []
    for expr, size in zip(amap.results, array.shape):
        if isinstance(expr, ir.AffineDimExpr):
            index.append(slice(None))
            dims.append(expr.position)
        elif isinstance(expr, ir.AffineConstantExpr) and expr.value == 0 and size == 1:
            index.append(0)
        else:
            return None
    if len(set(dims)) != len(dims):
        return None
    picked = array[tuple(index)]
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    picked = picked.transpose(order)
    shape = [1] * len(loops)
    for i in order:
        shape[dims[i]] = picked.shape[order.index(i)]
    return np.broadcast_to(picked.reshape(shape), loops)


def _from_loops(array: np.ndarray, amap: ir.AffineMap) -> np.ndarray | None:
    """The result indexed by `amap` (a permutation of the loops, unit dims as 0) from an array
    over the loops."""
    dims = []
    for expr in amap.results:
        if isinstance(expr, ir.AffineDimExpr):
            dims.append(expr.position)
        elif not (isinstance(expr, ir.AffineConstantExpr) and expr.value == 0):
            return None
    if sorted(dims) != list(range(array.ndim)):
        return None
    return np.ascontiguousarray(array.transpose(dims))
