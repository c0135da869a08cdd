"""The one reader of `dense_resource` blobs (weights from torch-mlir), for the simulator's host
constants and the codelet interpreter's constants.

The Python API cannot read a blob, but a scratch module holding just an attribute that names
one carries just that blob. Its bytecode holds the blob raw (10x faster than printing: ResNet-50's
102 MB of weights in 0.13 s instead of 1.4 s CPU): MLIR's BytecodeWriter emits a resource blob
as `emitOwnedBlobAndAlignment`: the alignment and the size as varints, padding to the alignment
(0xCB bytes), then the data. Where that frame cannot be found unambiguously, the text form is
read instead: its `dialect_resources` section prints the blob as hex (a 4-byte alignment, then
the data).

    array = dense_array(attr, np.dtype("float32"))   # dense or dense_resource; None if unreadable
"""

from __future__ import annotations

import io
import math
import re

import numpy as np
from mlir import ir, passmanager

_BLOB = re.compile(r'dialect_resources:.*?"0x([0-9A-Fa-f]*)"', re.S)


_PADDING = 0xCB  # mlir/lib/Bytecode/Writer/BytecodeWriter.cpp: EncodingEmitter::alignTo pads with kAlignmentByte


def resource_bytes(attr: ir.Attribute, num_bytes: int | None = None) -> bytes | None:
    """The data of the blob a `dense_resource` attribute names, None if it is not available.
    `num_bytes`, the blob's size when the caller knows it, lets it be read from bytecode."""
    data = _resource_buffer(attr, num_bytes)
    return None if data is None else bytes(data)


def _resource_buffer(attr: ir.Attribute, num_bytes: int | None) -> memoryview | bytes | None:
    """`resource_bytes`'s data, a view of the bytecode it was read from when it was: one copy
    of the blob, not two (a weight read by ipu-fold-constants is held while it folds)."""
    with attr.context, ir.Location.unknown():
        scratch = ir.Module.create()
        scratch.operation.attributes["blob"] = attr
        if num_bytes is not None:
            stream = io.BytesIO()
            scratch.operation.write_bytecode(stream)
            data = framed_blob(stream.getbuffer(), num_bytes)
            if data is not None:
                return data
        found = _BLOB.search(scratch.operation.get_asm(large_elements_limit=1))
    return bytes.fromhex(found.group(1))[4:] if found else None


def _varint(value: int) -> bytes:
    """MLIR bytecode's prefix varint (docs/BytecodeFormat: the count of trailing zeros of the
    first byte says how many more bytes follow)."""
    for length in range(1, 9):
        if value < 1 << (7 * length):
            return ((value << length) | (1 << (length - 1))).to_bytes(length, "little")
    return b"\0" + value.to_bytes(8, "little")


def framed_blob(data: memoryview, num_bytes: int) -> memoryview | None:
    """The `num_bytes` of the one blob framed as alignment, size, padding, data in `data`; None
    unless exactly one place in it has that frame. The blob's own frame is always among the
    places found (it lies before the data), so a single place is that frame."""
    head = bytes(data[: max(0, len(data) - num_bytes)])  # where a frame can start: a few hundred bytes
    found = []
    for alignment in (1, 2, 4, 8, 16, 32, 64):
        frame = _varint(alignment) + _varint(num_bytes)
        at = head.find(frame)
        while at >= 0:
            start = at + len(frame)
            padding = -start % alignment
            if all(b == _PADDING for b in data[start : start + padding]) and start + padding + num_bytes <= len(data):
                found.append(start + padding)
            at = head.find(frame, at + 1)
    return data[found[0] : found[0] + num_bytes] if len(found) == 1 else None


def _scalar(attr: ir.Attribute):
    for kind in (ir.BoolAttr, ir.IntegerAttr, ir.FloatAttr):
        try:
            return kind(attr).value
        except ValueError:
            continue
    raise ValueError(f"not a scalar attribute: {attr}")


def is_resource(attr: ir.Attribute) -> bool:
    """Whether `attr` is a `dense_resource` attribute (whose blob may be missing)."""
    try:
        ir.DenseResourceElementsAttr(attr)
    except ValueError:
        return False
    return True


# Floats numpy's buffer view of an attribute does not know ("Unsupported floating-point type").
_BITCAST_FLOATS = frozenset({"bf16", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ"})


def _narrow_floats(attr: ir.DenseElementsAttr, dtype: np.dtype) -> np.ndarray:
    """The elements of a bf16 or FP8 `dense` attribute, bit for bit: MLIR's folder bit casts it
    to integers of the same width, which numpy reads."""
    shaped = ir.ShapedType(attr.type)
    with attr.context, ir.Location.unknown():
        bits = ir.RankedTensorType.get(shaped.shape, ir.IntegerType.get_signless(dtype.itemsize * 8))
        scratch = ir.Module.parse(
            f"func.func @f() -> {bits} {{\n  %c = arith.constant {attr}\n"
            f"  %b = arith.bitcast %c : {attr.type} to {bits}\n  return %b : {bits}\n}}"
        )
        passmanager.PassManager.parse("builtin.module(canonicalize)").run(scratch.operation)
        folded = next(op for op in scratch.body.operations[0].regions[0].blocks[0].operations if op.name == "arith.constant")
        return np.array(folded.attributes["value"]).view(dtype)


def dense_array(attr: ir.Attribute, dtype: np.dtype) -> np.ndarray | None:
    """The elements of a `dense` or `dense_resource` attribute, flat or shaped as numpy gives
    them; None for any other attribute or a missing blob."""
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:  # numpy's view of a splat i1 attribute reads past its one stored bit
            return np.full(ir.ShapedType(attr.type).shape, _scalar(attr.get_splat_value()), dtype)
        if str(ir.ShapedType(attr.type).element_type) in _BITCAST_FLOATS:
            return _narrow_floats(attr, np.dtype(dtype))
        return np.array(attr)
    if not is_resource(attr):
        return None
    data = _resource_buffer(attr, math.prod(ir.ShapedType(attr.type).shape) * np.dtype(dtype).itemsize)
    if data is None:
        return None
    array = np.frombuffer(data, dtype)
    array.flags.writeable = False  # the attribute's value, as the bytes it was read from were
    return array
