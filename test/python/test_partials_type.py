"""The partials type of f16 products (docs/precision.md; Poplar's partialsType, PopTorch's
`Precision.setPartialsType`): f16 partials round the sum into f16 chunk by chunk as numpy does
in the same order, f32 partials sum in f32, and each costs what the cost model says."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import make_context
from ipu_mlir.dialects.attrs import PARTIALS_ATTR, encode_partials
from ipu_mlir.frontends import api
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.target import cost_model, load_target
from ipu_mlir.target.diagnostics import IpuError

# k kept whole on each of 4 tiles (a pinned partition: m, n, k blocks), so the sum over k is one
# tile's, in the kernel's order; a cut k adds tiles' partial sums in the result's type.
M, K, N, BLOCK = 64, 256, 64, 32
PROGRAM = f"""
func.func @main(%a: tensor<{M}x{K}xf16>, %b: tensor<{K}x{N}xf16>) -> tensor<{M}x{N}xf16> {{
  %r = "ipu.matmul"(%a, %b) {{ipu.partition = array<i64: {BLOCK}, {BLOCK}, {K}>}}
         : (tensor<{M}x{K}xf16>, tensor<{K}x{N}xf16>) -> tensor<{M}x{N}xf16>
  return %r : tensor<{M}x{N}xf16>
}}
"""


def run(partials: str | None, target: str = "gc200") -> tuple[np.ndarray, int, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    a, b = rng.random((M, K)).astype(np.float16), rng.random((K, N)).astype(np.float16)  # positive: sums reach 64
    with make_context():
        module = ir.Module.parse(PROGRAM)
        if partials is not None:
            module.operation.attributes[PARTIALS_ATTR] = encode_partials(partials)
        simulator = runtime_api.load_simulator(api.compile_to_program(module, target), target, "main", verified=True)
    (output,) = simulator.run([a, b])
    return np.asarray(output), simulator.profile.cycles, a, b


def half_partials_reference(a: np.ndarray, b: np.ndarray, chunk: int = 16) -> np.ndarray:
    """numpy's f16 accumulation: each run of `chunk` products summed in f32, added to the f16
    partial and rounded to f16, in order along k."""
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    partial = np.zeros((a.shape[0], b.shape[1]), np.float16)
    for start in range(0, a.shape[1], chunk):
        partial = (partial.astype(np.float32) + a32[:, start : start + chunk] @ b32[start : start + chunk]).astype(np.float16)
    return partial


def test_half_partials_differ_as_numpy_f16_accumulation():
    """f16 partials give numpy's f16 accumulation bit for bit, f32 partials the f32 sum rounded
    once; they differ (by up to 2 f16 steps at 64: 0.125) exactly where numpy's two differ."""
    half, half_cycles, a, b = run("f16")
    wide, wide_cycles, _, _ = run("f32")
    reference_half = half_partials_reference(a, b)
    reference_wide = (a.astype(np.float32) @ b.astype(np.float32)).astype(np.float16)
    np.testing.assert_array_equal(half, reference_half)
    np.testing.assert_array_equal(wide, reference_wide)
    assert (half != wide).sum() == (reference_half != reference_wide).sum() > M * N // 4


def test_partials_type_prices_as_the_cost_model():
    """On gc200 f32 partials drive 8 conv units against f16's 16 (poplibs' getNumConvUnits):
    the run costs the difference of the cost model's work for a tile's piece, no more. gc2 (Mk1)
    drives 8 units either way. An unmarked product is priced with f32 partials, Poplar's
    default, as it sums in f32."""
    _, half_cycles, _, _ = run("f16")
    _, wide_cycles, _, _ = run("f32")
    _, default_cycles, _, _ = run(None)
    gc200 = load_target("gc200")
    piece = [cost_model.matmul_work(1, BLOCK, BLOCK, K, "f16", gc200, partials) for partials in ("f16", "f32")]
    assert wide_cycles - half_cycles == piece[1] - piece[0] > 0, (half_cycles, wide_cycles, piece)
    assert default_cycles == wide_cycles > half_cycles
    half = cost_model.dtype_info("f16")
    assert [cost_model.conv_units(half, gc200, wide) for wide in (False, True)] == [16, 8]
    assert [cost_model.conv_units(half, load_target("gc2"), wide) for wide in (False, True)] == [8, 8]


def test_module_attribute_must_name_f16_or_f32():
    with make_context():
        module = ir.Module.parse(PROGRAM)
        module.operation.attributes[PARTIALS_ATTR] = ir.TypeAttr.get(ir.BF16Type.get())
        with pytest.raises(IpuError, match=r"module attribute 'ipu.partials': expected f16 or f32, got bf16"):
            api.compile_to_program(module, "gc200")


def test_options_set_partials_type():
    """PopTorch's `opts.Precision.setPartialsType(torch.float16)` reaches the compiler: an f16
    model's products carry `ipu.partials = f16`; any other dtype is refused in one line."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir.fx")
    import ipu_mlir.frontends.torch as ipu_torch

    options = ipu_torch.Options()
    with pytest.raises(IpuError, match=r"setPartialsType takes torch.float32 or torch.float16, got torch.bfloat16"):
        options.Precision.setPartialsType(torch.bfloat16)
    assert options.Precision.setPartialsType(torch.float16) is options.Precision
    torch.manual_seed(0)
    model = torch.nn.Linear(64, 32).half().eval()
    x = torch.randn(8, 64).half()
    inference = ipu_torch.inferenceModel(model, options)
    got = inference(x)
    products = [line for line in str(inference.compiled.program).splitlines() if '"ipu.matmul"' in line]
    assert products and all("ipu.partials = f16" in line for line in products), products
    np.testing.assert_allclose(got.float().numpy(), model(x).float().detach().numpy(), rtol=1e-2, atol=1e-2)


CONV = """
func.func @main(%x: tensor<1x32x6x6xf16>, %w: tensor<8x32x3x3xf16>) -> tensor<1x8x4x4xf16> {
  %y = "ipu.conv"(%x, %w) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>,
                           ipu.partition = array<i64: 1, 8, 4, 4, 32, 3, 3>, ipu.partials = f16}
         : (tensor<1x32x6x6xf16>, tensor<8x32x3x3xf16>) -> tensor<1x8x4x4xf16>
  return %y : tensor<1x8x4x4xf16>
}
"""


def test_half_partials_convolution_sums_taps_in_chunks():
    """A convolution's taps, in (c, kh, kw) order as the im2col product takes them, summed into
    f16 partials 16 at a time: numpy's f16 accumulation over the same columns."""
    rng = np.random.default_rng(1)
    x, w = rng.random((1, 32, 6, 6)).astype(np.float16), rng.random((8, 32, 3, 3)).astype(np.float16)
    with make_context():
        simulator = runtime_api.load_simulator(api.compile_to_program(ir.Module.parse(CONV), "gc200"), "gc200", "main", verified=True)
    (got,) = simulator.run([x, w])
    columns = np.stack([x[0, :, i : i + 4, j : j + 4] for i in range(3) for j in range(3)], axis=1)  # c, (kh kw), oh, ow
    expected = half_partials_reference(w.reshape(8, 32 * 9), columns.reshape(32 * 9, 16)).reshape(1, 8, 4, 4)
    np.testing.assert_array_equal(np.asarray(got), expected)
    assert not np.array_equal(
        expected,
        np.einsum("fk,kp->fp", w.reshape(8, -1).astype(np.float32), columns.reshape(-1, 16).astype(np.float32))
        .astype(np.float16)
        .reshape(1, 8, 4, 4),
    )


def test_training_model_takes_the_partials_type():
    """`trainingModel` passes `Precision.setPartialsType` to the compiler too: every product of
    an f16 MLP's step (forward and backward) carries the partials type, and the losses with f16
    partials are within f16's tolerance of those with f32 partials."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir.fx")
    import ipu_mlir.frontends.torch as ipu_torch

    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = torch.nn.Linear(64, 64), torch.nn.Linear(64, 4)

        def forward(self, x, target):
            return torch.nn.functional.mse_loss(self.fc2(torch.relu(self.fc1(x))), target)

    generator = torch.Generator().manual_seed(1)
    data = [(torch.randn(16, 64, generator=generator).half(), torch.randn(16, 4, generator=generator).half()) for _ in range(3)]
    losses = {}
    for partials in (torch.float16, torch.float32):
        torch.manual_seed(0)
        model = MLP().half()
        options = ipu_torch.Options().target("tiny")
        options.Precision.setPartialsType(partials).setMasterWeights(True)
        options.Training.setLossScaling(256.0)
        trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.05))
        losses[partials] = [float(trained(*batch)) for batch in data]
        chosen = str(partials).replace("torch.float", "f")
        products = [line for line in str(api.compile_to_program(trained.step.module, "tiny")).splitlines() if '"ipu.matmul"' in line]
        assert products and all(f"ipu.partials = {chosen}" in line for line in products), products
    np.testing.assert_allclose(losses[torch.float16], losses[torch.float32], rtol=2**-8)


@pytest.mark.parametrize("dtype", ["f16", "bf16"])
def test_unmarked_half_products_priced_with_float_partials(dtype):
    """Poplar's partialsType defaults to float (poplin's MatMulOptions, ConvOptions): an unmarked
    f16 or bf16 product costs what one marked f32 does, more than one marked f16."""
    gc200 = load_target("gc200")
    matmul = [cost_model.matmul_work(1, M, N, K, dtype, gc200, partials) for partials in (None, "f32", "f16")]
    conv = [cost_model.conv_work(1, 64, 8, 8, 32, 3, 3, dtype, gc200, partials) for partials in (None, "f32", "f16")]
    assert matmul[0] == matmul[1] > matmul[2], matmul
    assert conv[0] == conv[1] > conv[2], conv


def test_fp8_products_priced_with_half_partials():
    """Poplar sums QUARTER operands into half partials only (poplin's validateLayerParams)."""
    quarter = cost_model.dtype_info("f8E4M3FN")
    assert not cost_model.partials_are_float(quarter, None)
