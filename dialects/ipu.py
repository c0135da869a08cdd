"""Typed Python views and builders for the `ipu` dialect (defined in `ipu.irdl.mlir`).

MLIR hands out these classes for `ipu.*` ops wherever it returns op views (iterating a block,
`op.opview`), the way it does for generated upstream dialect bindings:

    for op in block.operations:
        if isinstance(op, ipu.MatmulOp):
            print(op.lhs.type, op.rhs.type)

The builders create ops at the current insertion point and infer result types:

    with ctx, ir.Location.unknown(), ir.InsertionPoint(block):
        product = ipu.matmul(a, b)                      # -> MatmulOp
        ipu.sync("internal")

Accessors decode attributes into `attrs` dataclasses and raise `MalformedAttribute` for
malformed ones; `verifier.verify` reports those as errors on the op.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from mlir import ir
from mlir._mlir_libs import _mlir
from mlir.dialects import func

from .attrs import MalformedAttribute, TileGrid, TileMapping, decode_mapping, i64_value

_I64 = lambda: ir.IntegerType.get_signless(64)  # noqa: E731  (needs a live context)


@_mlir.register_dialect
class _Dialect(ir.Dialect):
    DIALECT_NAMESPACE = "ipu"


def _register(cls):
    cls._ODS_REGIONS = (0, True)
    return _mlir.register_operation(_Dialect)(cls)


def _symbol(op: ir.OpView, name: str) -> str:
    try:
        return ir.FlatSymbolRefAttr(op.attributes[name]).value
    except (ValueError, TypeError):
        raise MalformedAttribute(f"expected '{name}' to be a flat symbol reference, got {op.attributes[name]}") from None


def _symbols(op: ir.OpView, name: str) -> list[str]:
    attr = op.attributes[name]
    try:
        return [ir.FlatSymbolRefAttr(element).value for element in ir.ArrayAttr(attr)]
    except (ValueError, TypeError):
        raise MalformedAttribute(f"expected '{name}' to be an array of symbol references, got {attr}") from None


def _i64_array(op: ir.OpView, name: str) -> tuple[int, ...]:
    attr = op.attributes[name]
    if not isinstance(attr, ir.DenseI64ArrayAttr):
        raise MalformedAttribute(f"expected '{name}' to be array<i64: ...>, got {attr}")
    return tuple(attr)


def _int(op: ir.OpView, name: str) -> int:
    return i64_value(op.attributes[name], f"'{name}'")


def _grid(op: ir.OpView, name: str) -> TileGrid:
    try:
        return TileGrid.decode(op.attributes[name])
    except MalformedAttribute as error:
        raise MalformedAttribute(f"'{name}': {error}") from None


def _mapping(op: ir.OpView, name: str) -> TileMapping:
    try:
        return decode_mapping(op.attributes[name])
    except MalformedAttribute as error:
        raise MalformedAttribute(f"'{name}': {error}") from None


def _attribute(name: str, decode) -> property:
    """A read-only property decoding attribute `name` with `decode(op, name)`."""
    return property(lambda self: decode(self, name))


def _operand(index: int) -> property:
    return property(lambda self: self.operands[index])


def _result(index: int) -> property:
    return property(lambda self: self.results[index])


def _ref(name: str) -> ir.FlatSymbolRefAttr:
    return ir.FlatSymbolRefAttr.get(name)


def _create(name: str, *, results=(), operands=(), attributes=None, loc=None, ip=None) -> ir.OpView:
    return ir.Operation.create(name, results=list(results), operands=list(operands), attributes=attributes or {}, loc=loc, ip=ip).opview


# --- L1 -------------------------------------------------------------------------------------


@_register
class MatmulOp(ir.OpView):
    OPERATION_NAME = "ipu.matmul"

    lhs = _operand(0)
    rhs = _operand(1)
    result = _result(0)


def matmul(lhs: ir.Value, rhs: ir.Value, *, element_type: ir.Type | None = None, loc=None, ip=None) -> MatmulOp:
    """`lhs @ rhs` over the last two dimensions; the result element type defaults to lhs's."""
    lhs_type, rhs_type = ir.RankedTensorType(lhs.type), ir.RankedTensorType(rhs.type)
    shape = list(lhs_type.shape[:-1]) + [rhs_type.shape[-1]]
    result = ir.RankedTensorType.get(shape, element_type or lhs_type.element_type)
    return _create("ipu.matmul", results=[result], operands=[lhs, rhs], loc=loc, ip=ip)


@_register
class GatherOp(ir.OpView):
    OPERATION_NAME = "ipu.gather"

    table = _operand(0)
    indices = _operand(1)
    rows = _operand(2)
    result = _result(0)


def gather(table: ir.Value, indices: ir.Value, rows: ir.Value, *, loc=None, ip=None) -> GatherOp:
    """`table[indices[n..], :]`; `rows` holds each table row's number (an iota)."""
    table_type, indices_type = ir.RankedTensorType(table.type), ir.RankedTensorType(indices.type)
    result = ir.RankedTensorType.get([*indices_type.shape, table_type.shape[-1]], table_type.element_type)
    return _create("ipu.gather", results=[result], operands=[table, indices, rows], loc=loc, ip=ip)


@_register
class ConvOp(ir.OpView):
    OPERATION_NAME = "ipu.conv"

    input = _operand(0)
    filter = _operand(1)
    result = _result(0)
    strides = _attribute("strides", _i64_array)
    dilations = _attribute("dilations", _i64_array)
    padding = _attribute("padding", _i64_array)  # (top, left, bottom, right)
    groups = _attribute("groups", _int)


def conv_output_shape(
    input_shape: Sequence[int],
    filter_shape: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    padding: Sequence[int],
) -> list[int]:
    """N x F x OH x OW for an NCHW input and an F x C/groups x KH x KW filter."""
    spatial = []
    for axis in range(2):
        padded = input_shape[2 + axis] + padding[axis] + padding[2 + axis]
        reach = dilations[axis] * (filter_shape[2 + axis] - 1) + 1
        spatial.append((padded - reach) // strides[axis] + 1)
    return [input_shape[0], filter_shape[0], *spatial]


def conv(
    input: ir.Value,
    filter: ir.Value,
    *,
    strides: Sequence[int] = (1, 1),
    dilations: Sequence[int] = (1, 1),
    padding: Sequence[int] = (0, 0, 0, 0),
    groups: int = 1,
    element_type: ir.Type | None = None,
    loc=None,
    ip=None,
) -> ConvOp:
    """The result element type defaults to the input's."""
    input_type, filter_type = ir.RankedTensorType(input.type), ir.RankedTensorType(filter.type)
    shape = conv_output_shape(input_type.shape, filter_type.shape, strides, dilations, padding)
    result = ir.RankedTensorType.get(shape, element_type or input_type.element_type)
    attributes = {
        "strides": ir.DenseI64ArrayAttr.get(list(strides)),
        "dilations": ir.DenseI64ArrayAttr.get(list(dilations)),
        "padding": ir.DenseI64ArrayAttr.get(list(padding)),
        "groups": ir.IntegerAttr.get(_I64(), groups),
    }
    return _create("ipu.conv", results=[result], operands=[input, filter], attributes=attributes, loc=loc, ip=ip)


# --- L2 -------------------------------------------------------------------------------------

MAPPING_ATTR = "ipu.mapping"
"""The discardable attribute giving the tile mapping of an op's result or a function argument."""


@_register
class ExchangeOp(ir.OpView):
    OPERATION_NAME = "ipu.exchange"

    source = _operand(0)
    result = _result(0)
    mapping = _attribute("mapping", _mapping)


def exchange(source: ir.Value, mapping: TileMapping, *, loc=None, ip=None) -> ExchangeOp:
    return _create("ipu.exchange", results=[source.type], operands=[source], attributes={"mapping": mapping.encode()}, loc=loc, ip=ip)


# --- L3 -------------------------------------------------------------------------------------


@_register
class BufferOp(ir.OpView):
    OPERATION_NAME = "ipu.buffer"

    @property
    def sym_name(self) -> str:
        return ir.StringAttr(self.attributes["sym_name"]).value

    @property
    def type(self) -> ir.MemRefType:
        try:
            return ir.MemRefType(ir.TypeAttr(self.attributes["type"]).value)
        except (ValueError, TypeError):
            raise MalformedAttribute(f"expected 'type' to be a memref type, got {self.attributes['type']}") from None

    tiles = _attribute("tiles", _grid)

    @property
    def offset(self) -> int | None:
        return _int(self, "offset") if "offset" in self.attributes else None

    @property
    def bytes_per_tile(self) -> int:
        return _bytes(self.type)


def _bytes(shaped: ir.ShapedType) -> int:
    return math.prod(shaped.shape) * element_bytes(shaped.element_type)


def element_bytes(element_type: ir.Type) -> int:
    """Bytes one element takes in tile memory (i1 is stored as a byte)."""
    return max(1, (element_type.width + 7) // 8)


def buffer(name: str, type: ir.MemRefType, tiles: TileGrid, *, offset: int | None = None, loc=None, ip=None) -> BufferOp:
    attributes = {"sym_name": ir.StringAttr.get(name), "type": ir.TypeAttr.get(type), "tiles": tiles.encode()}
    if offset is not None:
        attributes["offset"] = ir.IntegerAttr.get(_I64(), offset)
    return _create("ipu.buffer", attributes=attributes, loc=loc, ip=ip)


@_register
class VariableOp(ir.OpView):
    """A device variable: the host tensor `name` (`type`, laid out by `mapping`) kept in `buffer`
    from run to run, written and read by the host by name, never streamed by a run."""

    OPERATION_NAME = "ipu.variable"

    @property
    def variable_name(self) -> str:  # not `name`: OpView's, the op's name, is used generically
        return ir.StringAttr(self.attributes["name"]).value

    buffer = _attribute("buffer", _symbol)
    mapping = _attribute("mapping", _mapping)

    @property
    def type(self) -> ir.Type:
        try:
            return ir.TypeAttr(self.attributes["type"]).value
        except (ValueError, TypeError):
            raise MalformedAttribute(f"expected 'type' to be a type, got {self.attributes['type']}") from None


def variable(name: str, buffer: str, type: ir.RankedTensorType, mapping: TileMapping, *, loc=None, ip=None) -> VariableOp:
    attributes = {"name": ir.StringAttr.get(name), "buffer": _ref(buffer), "type": ir.TypeAttr.get(type), "mapping": mapping.encode()}
    return _create("ipu.variable", attributes=attributes, loc=loc, ip=ip)


RESIDENT_ATTR = "ipu.resident"
"""The L0 argument / result attribute naming a device variable (`docs/contracts.md`)."""


@_register
class HostToDeviceOp(ir.OpView):
    OPERATION_NAME = "ipu.host_to_device"

    source = _operand(0)
    buffer = _attribute("buffer", _symbol)
    mapping = _attribute("mapping", _mapping)


def host_to_device(source: ir.Value, buffer: str, mapping: TileMapping, *, loc=None, ip=None) -> HostToDeviceOp:
    attributes = {"buffer": _ref(buffer), "mapping": mapping.encode()}
    return _create("ipu.host_to_device", operands=[source], attributes=attributes, loc=loc, ip=ip)


@_register
class DeviceToHostOp(ir.OpView):
    OPERATION_NAME = "ipu.device_to_host"

    result = _result(0)
    buffer = _attribute("buffer", _symbol)
    mapping = _attribute("mapping", _mapping)


def device_to_host(result_type: ir.RankedTensorType, buffer: str, mapping: TileMapping, *, loc=None, ip=None) -> DeviceToHostOp:
    attributes = {"buffer": _ref(buffer), "mapping": mapping.encode()}
    return _create("ipu.device_to_host", results=[result_type], attributes=attributes, loc=loc, ip=ip)


@_register
class CopyOp(ir.OpView):
    OPERATION_NAME = "ipu.copy"

    source = _attribute("source", _symbol)
    dest = _attribute("dest", _symbol)
    size = _attribute("size", _int)
    src_tiles = _attribute("src_tiles", _grid)
    dst_tiles = _attribute("dst_tiles", _grid)
    # Element offsets as (base, stride per grid dimension).
    src_offset = _attribute("src_offset", _i64_array)
    dst_offset = _attribute("dst_offset", _i64_array)


def copy(
    source: str,
    dest: str,
    *,
    size: int,
    src_tiles: TileGrid,
    dst_tiles: TileGrid,
    src_offset: Sequence[int] | None = None,
    dst_offset: Sequence[int] | None = None,
    loc=None,
    ip=None,
) -> CopyOp:
    """Each tile of `src_tiles` sends `size` elements to the matching tile of `dst_tiles`.

    Offsets default to 0 on every tile.
    """
    zeros = [0] * (1 + len(dst_tiles.sizes))
    attributes = {
        "source": _ref(source),
        "dest": _ref(dest),
        "size": ir.IntegerAttr.get(_I64(), size),
        "src_tiles": src_tiles.encode(),
        "dst_tiles": dst_tiles.encode(),
        "src_offset": ir.DenseI64ArrayAttr.get(list(src_offset) if src_offset is not None else zeros),
        "dst_offset": ir.DenseI64ArrayAttr.get(list(dst_offset) if dst_offset is not None else zeros),
    }
    return _create("ipu.copy", attributes=attributes, loc=loc, ip=ip)


REDUCTIONS = ("sum", "mean")  # of `ipu.all_reduce` and `ipu.ring_all_reduce`: PopTorch's ReductionType


def _reduction(op: ir.OpView, name: str) -> str:
    return ir.StringAttr(op.attributes[name]).value


# On an `ipu.all_reduce` of a replica spanning K IPUs (set by ipu-replicate): by replica, the IPU
# holding its copy of the tensor (s, s + K, ...), ipu-schedule's `ring` for `ipu.ring_all_reduce`.
RING_ATTR = "ipu.ring"


@_register
class AllReduceOp(ir.OpView):
    """The sum (or mean) of a tensor over the data-parallel replicas (L1)."""

    OPERATION_NAME = "ipu.all_reduce"

    source = _operand(0)
    result = _result(0)
    replicas = _attribute("replicas", _int)
    reduction = _attribute("reduction", _reduction)


def all_reduce(source: ir.Value, replicas: int, reduction: str, *, loc=None, ip=None) -> AllReduceOp:
    attributes = {"replicas": ir.IntegerAttr.get(_I64(), replicas), "reduction": ir.StringAttr.get(reduction)}
    return _create("ipu.all_reduce", results=[source.type], operands=[source], attributes=attributes, loc=loc, ip=ip)


@_register
class RingAllReduceOp(ir.OpView):
    """`ipu.all_reduce` on buffers (L3): GCL's ring over the replicas' IPUs."""

    OPERATION_NAME = "ipu.ring_all_reduce"

    source = _attribute("source", _symbol)
    dest = _attribute("dest", _symbol)
    mapping = _attribute("mapping", _mapping)
    replicas = _attribute("replicas", _int)
    ring = _attribute("ring", _i64_array)  # by replica, the IPU holding its copy of the tensor
    reduction = _attribute("reduction", _reduction)

    @property
    def type(self) -> ir.Type:
        try:
            return ir.TypeAttr(self.attributes["type"]).value
        except (ValueError, TypeError):
            raise MalformedAttribute(f"expected 'type' to be a type, got {self.attributes['type']}") from None


def ring_all_reduce(
    source: str,
    dest: str,
    type: ir.RankedTensorType,
    mapping: TileMapping,
    ring: Sequence[int],
    reduction: str,
    *,
    loc=None,
    ip=None,
) -> RingAllReduceOp:
    """`ring`: by replica, the IPU holding its copy (its length is the replica count)."""
    attributes = {
        "source": _ref(source),
        "dest": _ref(dest),
        "type": ir.TypeAttr.get(type),
        "mapping": mapping.encode(),
        "replicas": ir.IntegerAttr.get(_I64(), len(ring)),
        "ring": ir.DenseI64ArrayAttr.get(list(ring)),
        "reduction": ir.StringAttr.get(reduction),
    }
    return _create("ipu.ring_all_reduce", attributes=attributes, loc=loc, ip=ip)


@_register
class SyncOp(ir.OpView):
    OPERATION_NAME = "ipu.sync"

    @property
    def kind(self) -> str:
        return ir.StringAttr(self.attributes["kind"]).value


def sync(kind: str = "internal", *, loc=None, ip=None) -> SyncOp:
    return _create("ipu.sync", attributes={"kind": ir.StringAttr.get(kind)}, loc=loc, ip=ip)


@_register
class PredicateOp(ir.OpView):
    OPERATION_NAME = "ipu.predicate"

    result = _result(0)
    buffer = _attribute("buffer", _symbol)
    tile = _attribute("tile", _int)


def predicate(buffer: str, tile: int, result_type: ir.Type | None = None, *, loc=None, ip=None) -> PredicateOp:
    """The element at `tile` of `buffer` as an `i1` (a condition) or an `index` (a switch's)."""
    attributes = {"buffer": _ref(buffer), "tile": ir.IntegerAttr.get(ir.IntegerType.get_signless(64), tile)}
    result_type = result_type or ir.IntegerType.get_signless(1)
    return _create("ipu.predicate", results=[result_type], attributes=attributes, loc=loc, ip=ip)


@_register
class ExecuteOp(ir.OpView):
    OPERATION_NAME = "ipu.execute"

    compute_set = _attribute("compute_set", _symbol)


def execute(compute_set: str, *, loc=None, ip=None) -> ExecuteOp:
    return _create("ipu.execute", attributes={"compute_set": _ref(compute_set)}, loc=loc, ip=ip)


@_register
class VertexGroupOp(ir.OpView):
    OPERATION_NAME = "ipu.vertex_group"

    codelet = _attribute("codelet", _symbol)
    tiles = _attribute("tiles", _grid)
    inputs = _attribute("inputs", _symbols)
    outputs = _attribute("outputs", _symbols)

    @property
    def num_vertices(self) -> int:
        return self.tiles.count

    @property
    def num_edges(self) -> int:
        return self.tiles.count * (len(self.inputs) + len(self.outputs))


def vertex_group(codelet: str, tiles: TileGrid, inputs: Sequence[str], outputs: Sequence[str], *, loc=None, ip=None) -> VertexGroupOp:
    attributes = {
        "codelet": _ref(codelet),
        "tiles": tiles.encode(),
        "inputs": ir.ArrayAttr.get([_ref(name) for name in inputs]),
        "outputs": ir.ArrayAttr.get([_ref(name) for name in outputs]),
    }
    return _create("ipu.vertex_group", attributes=attributes, loc=loc, ip=ip)


# Unit attributes marking the roles of `func.func`s.
COMPUTE_SET_ATTR = "ipu.compute_set"
CODELET_ATTR = "ipu.codelet"
PROGRAM_ATTR = "ipu.program"


def _marked_function(name: str, inputs: Sequence[ir.Type], results: Sequence[ir.Type], marker: str, private: bool, loc, ip) -> func.FuncOp:
    function = func.FuncOp(name, (list(inputs), list(results)), visibility="private" if private else None, loc=loc, ip=ip)
    function.attributes[marker] = ir.UnitAttr.get()
    function.add_entry_block()
    return function


def program_function(name: str, inputs: Sequence[ir.Type], results: Sequence[ir.Type], *, loc=None, ip=None) -> func.FuncOp:
    """The L3 entry function (`ipu.program`), with an empty entry block to fill."""
    return _marked_function(name, inputs, results, PROGRAM_ATTR, False, loc, ip)


def compute_set_function(name: str, *, loc=None, ip=None) -> func.FuncOp:
    """A compute set (`ipu.compute_set`): fill its entry block with vertex groups and a return."""
    return _marked_function(name, [], [], COMPUTE_SET_ATTR, True, loc, ip)


def codelet_function(name: str, inputs: Sequence[ir.Type], results: Sequence[ir.Type], *, loc=None, ip=None) -> func.FuncOp:
    """A codelet (`ipu.codelet`) on one tile's slices: tensor inputs, tensor results."""
    return _marked_function(name, inputs, results, CODELET_ATTR, True, loc, ip)
