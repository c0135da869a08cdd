"""An im2col convolution's later runs by chunks (dialects/ops/columns.py): `Im2col.into` on the
same arrays every call, its columns gathered and multiplied a chunk of tiles at a time in
scratch memory shared by every kernel. Each call writes the bytes of a new result (the checked
run's), whatever the layout, the element type, where the chunks fall, and whatever another
kernel left in or did to the scratch."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_codelet import _conv_reference, codelet, conv

from ipu_mlir.dialects.ops import columns
from ipu_mlir.dialects.ops.columns import Chunks

RNG = np.random.default_rng(5)

CASES = [  # input, filter, strides, dilations, padding, groups
    ((1, 3, 9, 9), (4, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 1),
    ((2, 4, 9, 8), (6, 4, 3, 2), (2, 1), (1, 2), (0, 1, 2, 0), 1),  # two images, strided, dilated, padded on two sides
    ((1, 6, 7, 7), (6, 2, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), 3),  # grouped, two channels a group
    ((1, 3, 6, 6), (4, 3, 3, 3), (1, 1), (1, 1), (0, 0, 0, 0), 1),  # no padding: the windows of the input itself
    ((1, 8, 5, 6), (6, 8, 1, 1), (2, 2), (1, 1), (0, 0, 0, 0), 1),  # 1 x 1 with a stride
    ((1, 1, 9, 9), (4, 1, 7, 7), (1, 1), (1, 1), (1, 1, 1, 1), 1),  # a weight gradient: columns transposed
]
GRID = (3, 2, 5)  # the input varies along axes 0 and 2, the filter along 1 and 2


def _transposed(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array.swapaxes(-1, -2)).swapaxes(-1, -2)


def _operands(input_shape, filter_shape, dtype, layout):
    memory = RNG.standard_normal((GRID[0], 1, GRID[2], 2, *input_shape)).astype(dtype)
    x = memory[:, :, :, 1]  # a strided view, as tile memory hands it over
    w = RNG.standard_normal((1, *GRID[1:], *filter_shape)).astype(dtype)
    if layout == "transposed":
        x = _transposed(x)
    return x, w


def _reference(x, w, *attributes):
    """The convolution of each grid point's input and filter, by its definition."""
    xs, ws = (np.broadcast_to(a, (*GRID, *a.shape[3:])).reshape(-1, *a.shape[3:]) for a in (x, w))
    out = [_conv_reference(a, b, *attributes) for a, b in zip(xs, ws)]
    return np.stack(out).reshape(*GRID, *out[0].shape)


def _tile_bytes(kernel, dtype) -> int:
    return kernel.n * kernel.groups * kernel.taps * kernel.oh * kernel.ow * np.dtype(dtype).itemsize


@pytest.mark.parametrize("layout", ["strided", "transposed"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("input_shape,filter_shape,strides,dilations,padding,groups", CASES)
def test_chunks_write_the_bytes_of_a_new_result(input_shape, filter_shape, strides, dilations, padding, groups, dtype, layout, monkeypatch):
    text = conv(input_shape, filter_shape, strides, dilations, padding, groups).replace("f32", "f64" if dtype == np.float64 else "f32")
    compiled = codelet(text, batch_rank=3)
    kernel = compiled._direct[0]
    x, w = _operands(input_shape, filter_shape, dtype, layout)
    # three tiles' columns a chunk: axis 0 one index at a time, axis 2 in pieces of 3 and 2
    monkeypatch.setattr(columns, "CHUNK_BYTES", 3 * _tile_bytes(kernel, dtype))
    out = np.zeros(compiled([x, w])[0].shape, dtype)
    for _ in range(3):
        assert kernel.into(x, w, out)
        product = kernel._last[3]
        assert isinstance(product, Chunks) and len(product.pieces) == 6
        new = compiled([x.copy(), w.copy()])[0]
        assert out.tobytes() == new.tobytes()
        np.testing.assert_allclose(out, _reference(x, w, strides, dilations, padding, groups), rtol=1e-4, atol=1e-4)
        x[...], w[...] = RNG.standard_normal(x.shape), RNG.standard_normal(w.shape)


def test_chunks_cover_the_grid_once_within_the_budget(monkeypatch):
    monkeypatch.setattr(columns, "CHUNK_BYTES", 100)
    for tiles, tile_bytes in [((3, 1, 5), 30), ((4, 6), 10), ((2, 3), 150), ((7,), 1), ((1, 1), 40), ((5, 1, 1), 20)]:
        pieces = columns.chunks(tiles, tile_bytes)
        seen = np.zeros(tiles, int)
        for piece in pieces:
            seen[piece] += 1
            assert seen[piece].size * tile_bytes <= max(100, tile_bytes)
        assert (seen == 1).all()
        assert len(pieces) < 2 * math.ceil(math.prod(tiles) * tile_bytes / 100)  # no chunk of a few tiles beside full ones


def test_a_kernel_reads_no_scratch_it_did_not_write_in_the_same_call():
    """Another kernel's columns, or anything, in the shared scratch between two calls: the zero
    border of the padded input is written again."""
    compiled = codelet(conv(*CASES[0]), batch_rank=3)
    kernel = compiled._direct[0]
    x, w = _operands(CASES[0][0], CASES[0][1], np.float32, "strided")
    out = np.zeros(compiled([x, w])[0].shape, np.float32)
    assert kernel.into(x, w, out)
    columns.scratch(0).fill(0x7F)  # the same buffer the kernel's views are of
    assert kernel.into(x, w, out)
    assert out.tobytes() == compiled([x.copy(), w.copy()])[0].tobytes()


def test_a_kernel_moves_to_the_scratch_another_grew():
    small = codelet(conv(*CASES[0]), batch_rank=3)
    x, w = _operands(CASES[0][0], CASES[0][1], np.float32, "strided")
    out = np.zeros(small([x, w])[0].shape, np.float32)
    assert small._direct[0].into(x, w, out)
    chunks = small._direct[0]._last[3]
    columns.scratch(columns.scratch(0).nbytes + 1)  # as a kernel of larger chunks would
    assert small._direct[0].into(x, w, out)
    assert chunks.buffer is columns.scratch(0) and all(np.shares_memory(view[3], chunks.buffer) for view in chunks.views)
    assert out.tobytes() == small([x.copy(), w.copy()])[0].tobytes()


def test_an_output_over_the_input_or_a_filter_copied_by_its_reshape_is_not_chunked(monkeypatch):
    compiled = codelet(conv(*CASES[0]), batch_rank=3)
    kernel = compiled._direct[0]
    monkeypatch.setattr(columns, "CHUNK_BYTES", 3 * _tile_bytes(kernel, np.float32))
    x, w = _operands(CASES[0][0], CASES[0][1], np.float32, "strided")
    expected = compiled([x.copy(), w.copy()])[0].tobytes()
    assert kernel.into(x, _transposed(w), out := np.zeros(compiled([x, w])[0].shape, np.float32))
    assert out.tobytes() == expected
    assert kernel._last[0] is None  # nothing kept: the reshape copied
    memory = np.zeros(x.nbytes + out.nbytes, np.uint8)
    inside = memory[: x.nbytes].view(np.float32).reshape(x.shape)
    inside[...] = x
    over = memory[: out.nbytes].view(np.float32).reshape(out.shape)  # the output where the input lies
    assert kernel.into(inside, w, over)
    assert over.tobytes() == expected  # chunks would read inputs an earlier chunk's product overwrote
    assert kernel._last[0] is None
