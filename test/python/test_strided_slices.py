"""Strided `tensor.extract_slice` / `insert_slice`: the exchange's stepped copies against a
brute-force model, and whole programs against upstream MLIR's ExecutionEngine and PyTorch.

A strided slice is an exchange like any slice: `plan_transfers` with a source step (extract)
or a destination step (insert) per dimension, which becomes an offset step of the copies' grids.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from mlir import ir  # noqa: F401  (torch-mlir's libraries load after upstream MLIR's, and both before the
from torch_mlir import fx  # noqa: F401  ExecutionEngine runs: other orders abort or break the JIT's symbol lookup)

from ipu_mlir.frontends import api
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.lowering.exchange import plan_transfers
from ipu_mlir.lowering.layout import Layout
from ipu_mlir.runtime import reference

TARGETS = ("tiny", "gc200")


# --- plan_transfers with steps, element by element ----------------------------------------------


def _boxes(layout: Layout):
    for parts in itertools.product(*[range(d.count) for d in layout.dims]):
        tile = layout.first_tile + sum(j * d.stride for j, d in zip(parts, layout.dims))
        yield tile, [d.intervals[j] for j, d in zip(parts, layout.dims)]


def _moved(shape, src: Layout, dst: Layout, shift, box, steps) -> dict[tuple[int, ...], float]:
    """Destination coordinates -> the value the copies write there (each written once)."""
    tensor = np.arange(math.prod(shape), dtype=float).reshape(shape)
    memory = {tile: tensor[tuple(slice(lo, hi) for lo, hi in region)].reshape(-1) for tile, region in _boxes(src)}
    where = {}  # (tile, flat offset) -> destination coordinates
    for tile, region in _boxes(dst):
        extents = [hi - lo for lo, hi in region]
        for index in itertools.product(*[range(e) for e in extents]):
            where[tile, int(np.ravel_multi_index(index, extents))] = tuple(lo + i for (lo, _), i in zip(region, index))
    written: dict[tuple[int, ...], float] = {}
    transfers = plan_transfers(src, dst, shift, box, steps)
    for t in transfers:
        src_tiles, dst_tiles = t.src_tiles.tiles(), t.dst_tiles.tiles()
        for flat, index in enumerate(itertools.product(*[range(n) for n in t.dst_tiles.sizes])):
            src_at = t.src_offset[0] + sum(i * s for i, s in zip(index, t.src_offset[1:]))
            dst_at = t.dst_offset[0] + sum(i * s for i, s in zip(index, t.dst_offset[1:]))
            for e in range(t.size):
                key = where[dst_tiles[flat], dst_at + e]
                assert key not in written, f"{key} written twice"
                written[key] = memory[src_tiles[flat]][src_at + e]
    return written, len(transfers)


@pytest.mark.parametrize("src_block,dst_block", [((10, 9), (2, 3)), ((4, 4), (3, 5)), ((3, 9), (1, 1)), ((10, 2), (4, 5))])
def test_extract_with_source_steps(src_block, dst_block):
    shape, offsets, sizes, strides = (10, 9), (1, 0), (3, 5), (3, 2)  # x[1::3, ::2]
    src = Layout.blocks(shape, src_block, 0, (-(-shape[1] // src_block[1]), 1))
    dst = Layout.blocks(sizes, dst_block, 40, (-(-sizes[1] // dst_block[1]), 1))
    box = tuple((o, o + s * (n - 1) + 1) for o, n, s in zip(offsets, sizes, strides))
    written, _ = _moved(shape, src, dst, tuple(-o for o in offsets), box, tuple((s, 1) for s in strides))
    tensor = np.arange(math.prod(shape), dtype=float).reshape(shape)
    expected = tensor[1::3, ::2]
    assert written == {index: expected[index] for index in itertools.product(*map(range, sizes))}


@pytest.mark.parametrize("src_block,dst_block", [((5, 5), (12, 12)), ((2, 3), (5, 4)), ((1, 5), (3, 12))])
def test_insert_with_destination_steps(src_block, dst_block):
    shape, result, offsets, strides = (5, 5), (12, 12), (1, 2), (2, 2)
    src = Layout.blocks(shape, src_block, 0, (-(-shape[1] // src_block[1]), 1))
    dst = Layout.blocks(result, dst_block, 30, (-(-result[1] // dst_block[1]), 1))
    written, _ = _moved(shape, src, dst, offsets, None, tuple((1, s) for s in strides))
    tensor = np.arange(math.prod(shape), dtype=float).reshape(shape)
    assert written == {(1 + 2 * i, 2 + 2 * j): tensor[i, j] for i, j in itertools.product(range(5), range(5))}


@pytest.mark.parametrize("seed", range(12))
def test_random_strided_slices(seed):
    """Random layouts, offsets, sizes and steps: an extract reads exactly its elements, an
    insert writes exactly its elements, each once."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 14, size=2))
    strides = tuple(int(s) for s in rng.integers(1, 5, size=2))
    offsets = tuple(int(rng.integers(0, n)) for n in shape)
    sizes = tuple(int(rng.integers(1, (n - o - 1) // s + 2)) for n, o, s in zip(shape, offsets, strides))
    tensor = np.arange(math.prod(shape), dtype=float).reshape(shape)
    region = tuple(slice(o, o + s * (n - 1) + 1, s) for o, n, s in zip(offsets, sizes, strides))

    def layout(of, first):
        block = tuple(int(rng.integers(1, n + 1)) for n in of)
        return Layout.blocks(of, block, first, (-(-of[1] // block[1]), 1))

    box = tuple((o, o + s * (n - 1) + 1) for o, n, s in zip(offsets, sizes, strides))
    written, _ = _moved(shape, layout(shape, 0), layout(sizes, 200), tuple(-o for o in offsets), box, tuple((s, 1) for s in strides))
    assert written == {index: tensor[region][index] for index in itertools.product(*map(range, sizes))}
    source = np.arange(math.prod(sizes), dtype=float).reshape(sizes)
    written, _ = _moved(sizes, layout(sizes, 0), layout(shape, 200), offsets, None, tuple((1, s) for s in strides))
    coordinates = np.indices(shape)[(slice(None), *region)].reshape(2, -1).T
    assert written == {tuple(int(c) for c in xy): v for xy, v in zip(coordinates, source.reshape(-1))}


def test_stepped_copies_do_not_grow_with_tiles():
    counts = []
    for tiles in (16, 256, 1472):
        n = tiles * 8
        src = Layout.blocks((n, 6), (8, 6), 0, (1, 0))
        dst = Layout.blocks((n // 2, 3), (4, 3), 0, (1, 0))
        counts.append(len(plan_transfers(src, dst, None, ((0, n - 1), (1, 6)), ((2, 1), (2, 1)))))
    assert counts[0] == counts[1] == counts[2] <= 2


# --- programs against the ExecutionEngine ------------------------------------------------------

PROGRAMS = {
    # x[1::3, :, ::2], torch-mlir's two slices, then work on the result
    "extract": """
func.func @main(%x: tensor<31x3x40xf32>) -> tensor<10x3x20xf32> {
  %a = tensor.extract_slice %x[1, 0, 0] [10, 3, 40] [3, 1, 1] : tensor<31x3x40xf32> to tensor<10x3x40xf32>
  %b = tensor.extract_slice %a[0, 0, 0] [10, 3, 20] [1, 1, 2] : tensor<10x3x40xf32> to tensor<10x3x20xf32>
  %e = tensor.empty() : tensor<10x3x20xf32>
  %r = linalg.exp ins(%b : tensor<10x3x20xf32>) outs(%e : tensor<10x3x20xf32>) -> tensor<10x3x20xf32>
  return %r : tensor<10x3x20xf32>
}""",
    # into a computed tensor (not zeros): the elements between the strided ones stay
    "insert": """
func.func @main(%x: tensor<6x7xf32>, %y: tensor<20x30xf32>) -> tensor<20x30xf32> {
  %e = tensor.empty() : tensor<20x30xf32>
  %n = linalg.negf ins(%y : tensor<20x30xf32>) outs(%e : tensor<20x30xf32>) -> tensor<20x30xf32>
  %i = tensor.insert_slice %x into %n[2, 1] [6, 7] [3, 4] : tensor<6x7xf32> into tensor<20x30xf32>
  return %i : tensor<20x30xf32>
}""",
    # both strides and rank reduction at once
    "rank-reducing": """
func.func @main(%x: tensor<4x9x64xi32>, %y: tensor<5x8xi32>) -> (tensor<5x16xi32>, tensor<5x8xi32>) {
  %s = tensor.extract_slice %x[1, 0, 3] [1, 5, 16] [1, 2, 4] : tensor<4x9x64xi32> to tensor<5x16xi32>
  %r = tensor.extract_slice %x[3, 2, 0] [1, 4, 8] [1, 1, 8] : tensor<4x9x64xi32> to tensor<4x8xi32>
  %i = tensor.insert_slice %r into %y[0, 0] [4, 8] [1, 1] : tensor<4x8xi32> into tensor<5x8xi32>
  return %s, %i : tensor<5x16xi32>, tensor<5x8xi32>
}""",
    # a zero-padded, input-dilated image (ConvTranspose2d's pattern) read by a convolution
    "dilate-conv": """
func.func @main(%x: tensor<1x4x16x16xf32>, %w: tensor<8x4x3x3xf32>) -> tensor<1x8x32x32xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x34x34xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<1x4x34x34xf32>) -> tensor<1x4x34x34xf32>
  %d = tensor.insert_slice %x into %z[0, 0, 1, 1] [1, 4, 16, 16] [1, 1, 2, 2] : tensor<1x4x16x16xf32> into tensor<1x4x34x34xf32>
  %oe = tensor.empty() : tensor<1x8x32x32xf32>
  %o = linalg.fill ins(%zero : f32) outs(%oe : tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  %c = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%d, %w : tensor<1x4x34x34xf32>, tensor<8x4x3x3xf32>) outs(%o : tensor<1x8x32x32xf32>) -> tensor<1x8x32x32xf32>
  return %c : tensor<1x8x32x32xf32>
}""",
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_matches_the_execution_engine(name: str, target: str) -> None:
    text = PROGRAMS[name]
    program = api.compile_to_program(api.load_module(text), target)
    simulator = api.load_simulator(program, target)
    inputs = api.random_inputs(simulator.arguments, seed=7)
    outputs = simulator.run(inputs)
    expected = reference.run_reference(text, inputs)
    for got, want in zip(outputs, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    # one exchange per slice, a handful of copies whatever the target's tile count
    ops = [op.operation.name for function in program.body.operations for region in function.regions for op in region.blocks[0].operations]
    assert 0 < ops.count("ipu.copy") <= 30


@pytest.mark.parametrize("seed", range(4))
def test_random_strided_insert_matches_the_execution_engine(seed: int) -> None:
    """An insert into a computed tensor keeps every element outside the strided positions:
    the boxes before, after and between them cover the rest exactly once."""
    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(4, 24, size=3))
    strides = tuple(int(s) for s in rng.integers(1, 4, size=3))
    offsets = tuple(int(rng.integers(0, n // 2)) for n in shape)
    sizes = tuple(int(rng.integers(1, (n - o - 1) // s + 2)) for n, o, s in zip(shape, offsets, strides))
    big, small = "x".join(map(str, shape)), "x".join(map(str, sizes))
    text = f"""
func.func @main(%x: tensor<{small}xf32>, %y: tensor<{big}xf32>) -> tensor<{big}xf32> {{
  %e = tensor.empty() : tensor<{big}xf32>
  %n = linalg.negf ins(%y : tensor<{big}xf32>) outs(%e : tensor<{big}xf32>) -> tensor<{big}xf32>
  %i = tensor.insert_slice %x into %n{list(offsets)} {list(sizes)} {list(strides)} : tensor<{small}xf32> into tensor<{big}xf32>
  return %i : tensor<{big}xf32>
}}"""
    simulator = api.load_simulator(text, "tiny")
    inputs = api.random_inputs(simulator.arguments, seed=seed)
    np.testing.assert_array_equal(simulator.run(inputs)[0], reference.run_reference(text, inputs)[0])


# --- PyTorch programs ----------------------------------------------------------------------------


class _Lambda(torch.nn.Module):
    def __init__(self, function):
        super().__init__()
        self.function = function

    def forward(self, *inputs):
        return self.function(*inputs)


def _conv_transpose() -> torch.nn.Module:
    """torch-mlir lowers it to a strided insert_slice of the input into zeros (the input
    dilation, with the padding and output_padding around it), then a convolution."""
    torch.manual_seed(0)
    return torch.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1)


def _focus(x):
    """YOLOv5's Focus, space-to-depth by strided slices: four phases side by side."""
    return torch.cat([x[:, :, ::2, ::2], x[:, :, 1::2, ::2], x[:, :, ::2, 1::2], x[:, :, 1::2, 1::2]], 1)


def _interleave(x, y):
    """Two signals interleaved along the last dimension: strided writes (slice_scatter)."""
    out = torch.zeros(x.shape[:-1] + (2 * x.shape[-1],))
    return torch.slice_scatter(torch.slice_scatter(out, x, -1, 0, None, 2), y, -1, 1, None, 2)


TORCH = {
    "every-other": (lambda: _Lambda(lambda x: x[::2] * 2.0), [(9, 5)]),
    "two-strides": (lambda: _Lambda(lambda x: x[1::3, :, ::2] + 1.0), [(31, 3, 40)]),
    "conv-transpose": (_conv_transpose, [(1, 4, 9, 9)]),
    "focus": (lambda: _Lambda(_focus), [(1, 3, 16, 16)]),
    "interleave": (lambda: _Lambda(_interleave), [(2, 3, 8), (2, 3, 8)]),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", list(TORCH))
def test_pytorch_program_matches_pytorch(name: str, target: str) -> None:
    make, shapes = TORCH[name]
    module = make().eval()
    generator = torch.Generator().manual_seed(3)
    inputs = [torch.randn(shape, generator=generator) for shape in shapes]
    compiled = torch_frontend.compile(module, *inputs, target=target)
    got, want = compiled(*inputs), torch_frontend.run_eager(module, *inputs)
    assert got.shape == want.shape
    assert float((got - want).abs().max()) <= 1e-5 * max(1.0, float(want.abs().max()))
