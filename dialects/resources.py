"""The one reader of `dense_resource` blobs (weights from torch-mlir), for the simulator's host
constants and the codelet interpreter's constants.

The Python API cannot read a blob, but a module printed with an attribute naming one prints
the blob in its `dialect_resources` section, as hex: a 4-byte alignment, then the data. A
scratch module holding just that attribute prints just that blob.

    array = dense_array(attr, np.dtype("float32"))   # dense or dense_resource; None if unreadable
"""

from __future__ import annotations

import re

import numpy as np
from mlir import ir

_BLOB = re.compile(r'dialect_resources:.*?"0x([0-9A-Fa-f]*)"', re.S)


def resource_bytes(attr: ir.Attribute) -> bytes | None:
    """The data of the blob a `dense_resource` attribute names, None if it is not available."""
    with attr.context, ir.Location.unknown():
        scratch = ir.Module.create()
        scratch.operation.attributes["blob"] = attr
        found = _BLOB.search(scratch.operation.get_asm(large_elements_limit=1))
    return bytes.fromhex(found.group(1))[4:] if found else None


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


def dense_array(attr: ir.Attribute, dtype: np.dtype) -> np.ndarray | None:
    """The elements of a `dense` or `dense_resource` attribute, flat or shaped as numpy gives
    them; None for any other attribute or a missing blob."""
    if isinstance(attr, ir.DenseElementsAttr):
        if attr.is_splat:  # numpy's view of a splat i1 attribute reads past its one stored bit
            return np.full(ir.ShapedType(attr.type).shape, _scalar(attr.get_splat_value()), dtype)
        return np.array(attr)
    if not is_resource(attr):
        return None
    data = resource_bytes(attr)
    return None if data is None else np.frombuffer(data, dtype)
