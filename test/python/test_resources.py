"""dialects/resources.py: a `dense_resource` blob read from the scratch module's bytecode gives
the bytes its text form gives (the reference), for every element type and size; large blobs
take the bytecode path; a blob whose frame is ambiguous falls back to the text."""

from __future__ import annotations

import io

import numpy as np
import pytest
from mlir import ir

import ipu_mlir.dialects.resources as resources

TYPES = {
    np.float32: lambda: ir.F32Type.get(),
    np.float16: lambda: ir.F16Type.get(),
    np.float64: lambda: ir.F64Type.get(),
    np.int8: lambda: ir.IntegerType.get_signless(8),
    np.int64: lambda: ir.IntegerType.get_signless(64),
}


def _blob(array: np.ndarray, element_type: ir.Type) -> ir.Attribute:
    tensor = ir.RankedTensorType.get(list(array.shape), element_type)
    return ir.DenseResourceElementsAttr.get_from_buffer(memoryview(array), f"blob{array.size}", tensor)


def _text_bytes(attr: ir.Attribute) -> bytes:
    return resources.resource_bytes(attr)  # no size given: the text form only


@pytest.mark.parametrize("dtype", list(TYPES))
@pytest.mark.parametrize("size", [1, 3, 33, 129, 4097, 70_001])
def test_bytecode_read_equals_text_read(dtype, size) -> None:
    array = (np.random.default_rng(size).random(size) * 250).astype(dtype)
    with ir.Context(), ir.Location.unknown():
        attr = _blob(array, TYPES[dtype]())
        assert resources.resource_bytes(attr, array.nbytes) == _text_bytes(attr) == array.tobytes()
        assert np.array_equal(resources.dense_array(attr, np.dtype(dtype)), array)


def test_large_blob_takes_the_bytecode_path() -> None:
    array = np.arange(1 << 18, dtype=np.float32).reshape(512, 512)
    with ir.Context(), ir.Location.unknown():
        scratch = ir.Module.create()
        scratch.operation.attributes["blob"] = _blob(array, ir.F32Type.get())
        stream = io.BytesIO()
        scratch.operation.write_bytecode(stream)
        assert resources.framed_blob(stream.getbuffer(), array.nbytes) == array.tobytes()


def test_ambiguous_frame_is_not_guessed() -> None:
    # A frame (alignment 1, size 4) whose blob starts with another such frame: two candidates.
    frame = resources._varint(1) + resources._varint(4)
    assert resources.framed_blob(memoryview(frame + frame + b"\x01\x02\x03\x04"), 4) is None
    assert resources.framed_blob(memoryview(b"\x00" + frame + b"\x01\x02\x03\x04"), 4) == b"\x01\x02\x03\x04"
    aligned = resources._varint(4) + resources._varint(4) + bytes([0xCB, 0xCB]) + b"\x01\x02\x03\x04"
    assert resources.framed_blob(memoryview(aligned), 4) == b"\x01\x02\x03\x04"
