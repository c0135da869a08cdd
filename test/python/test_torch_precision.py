"""PyTorch models in bf16 and with float8 casts, exported by torch-mlir and run on the simulator
(docs/precision.md): a Llama-style block in bf16 and an FFN quantizing to float8_e4m3fn with a
per-tensor scale, each against PyTorch."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

# Upstream MLIR's libraries before torch-mlir's, both before the ExecutionEngine runs: other
# orders abort or break the JIT's symbol lookup (test_strided_slices; measured here: the
# reference on the FP8 FFN segfaults with torch-mlir loaded first).
from mlir import ir  # noqa: F401

torch = pytest.importorskip("torch")
pytest.importorskip("torch_mlir.fx")

import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

import ipu_mlir.frontends.torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends import api  # noqa: E402
from ipu_mlir.runtime import oracle  # noqa: E402


class RMSNorm(nn.Module):
    """Llama's: the mean square in f32, the result back in the input's type, times the weight."""

    def __init__(self, d: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(d))

    def forward(self, x):
        wide = x.float()
        return (wide * torch.rsqrt(wide.pow(2).mean(-1, keepdim=True) + self.eps)).type_as(x) * self.weight


def rotate_half(x):
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


class LlamaBlock(nn.Module):
    """Pre-norm attention with rotary position embeddings and a causal mask, then a SwiGLU MLP."""

    def __init__(self, d: int = 64, heads: int = 4, hidden: int = 172, seq: int = 16):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.attn_norm, self.mlp_norm = RMSNorm(d), RMSNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))
        self.gate, self.up, self.down = nn.Linear(d, hidden, bias=False), nn.Linear(d, hidden, bias=False), nn.Linear(hidden, d, bias=False)
        inverse = 1.0 / (10000 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(seq).float(), inverse)
        self.register_buffer("cos", torch.cat((angles, angles), -1).cos(), persistent=False)
        self.register_buffer("sin", torch.cat((angles, angles), -1).sin(), persistent=False)

    def forward(self, x):
        b, s, d = x.shape
        h = self.attn_norm(x)
        q, k, v = (p(h).view(b, s, self.heads, self.head_dim).transpose(1, 2) for p in (self.q, self.k, self.v))
        cos, sin = self.cos.to(x.dtype), self.sin.to(x.dtype)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        attended = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.o(attended.transpose(1, 2).reshape(b, s, d))
        h = self.mlp_norm(x)
        return x + self.down(F.silu(self.gate(h)) * self.up(h))


def test_bf16_llama_block_matches_pytorch():
    """The block in bf16, exported and run: bf16 tensors in and out, within bf16's --check
    tolerance of PyTorch's bf16 result (8 steps of 2^-7 at the largest output: both round
    every op into bf16 and sum products in f32, and differ where one rounds an intermediate
    the other does not, half a step each). The f32 model is further from both than they are
    from each other (bf16 itself, not the simulator, is the error)."""
    torch.manual_seed(0)
    model = LlamaBlock().eval()
    x = torch.randn(1, 16, 64)
    exact = model(x).detach().numpy()
    model, x = model.to(torch.bfloat16), x.to(torch.bfloat16)
    compiled = ipu_torch.compile(model, x, target="gc200")
    got = compiled(x)
    assert got.dtype == torch.bfloat16 and got.shape == (1, 16, 64)
    want = model(x).detach()
    simulated, pytorch = (t.view(torch.int16).numpy().view(ml_dtypes.bfloat16) for t in (got, want))
    comparison = oracle.compare(simulated, pytorch)
    assert comparison.ok, comparison.describe()
    assert comparison.max_rel < 2**-5  # measured 0.005 (one step at the largest output)
    # Most elements are PyTorch's to the bit (measured: 155 of 1024 differ; rounding toward
    # zero instead of to nearest even makes it 562)
    assert np.count_nonzero(simulated != pytorch) < simulated.size // 4
    to_exact = np.abs(pytorch.astype(np.float64) - exact).max()
    assert np.abs(simulated.astype(np.float64) - exact).max() <= 2 * to_exact


F8 = torch.float8_e4m3fn
F8_MAX = float(torch.finfo(F8).max)  # 448


def quantize(t):
    """Per-tensor scaled float8_e4m3fn: the largest |t| maps to 448 (no saturation needed)."""
    scale = t.abs().amax().clamp(min=1e-12) / F8_MAX
    return (t / scale).clamp(-F8_MAX, F8_MAX).to(F8), scale


class FP8Linear(nn.Module):
    """A linear layer whose weight is stored in FP8 with a scale, and whose input is quantized
    the same way on every call: x.to(float8) * scale, dequantized to f32 for the product."""

    def __init__(self, weight):
        super().__init__()
        quantized, scale = quantize(weight)
        self.register_buffer("wq", quantized)
        self.register_buffer("ws", scale)

    def forward(self, x):
        xq, xs = quantize(x)
        return F.linear(xq.to(torch.float32) * xs, self.wq.to(torch.float32) * self.ws)


class FP8FFN(nn.Module):
    def __init__(self, d: int = 64, hidden: int = 256):
        super().__init__()
        self.up = FP8Linear(torch.randn(hidden, d) / d**0.5)
        self.down = FP8Linear(torch.randn(d, hidden) / hidden**0.5)

    def forward(self, x):
        return self.down(F.gelu(self.up(x)))


def test_fp8_ffn_matches_pytorch():
    """Quantization rounds bit for bit as PyTorch's (APFloat's, test_element_types), so the
    FFN matches PyTorch's at f32's tolerance: one f8 value rounded to a neighbour would move
    an output by eps(E4M3) = 2^-3 of a product, about 1e-3 of the largest output, and fail."""
    torch.manual_seed(0)
    model, x = FP8FFN().eval(), torch.randn(8, 64)
    compiled = ipu_torch.compile(model, x, target="gc200")
    got = compiled(x).numpy()
    comparison = oracle.compare(got, model(x).detach().numpy())
    assert comparison.ok, comparison.describe()
    # --check's reference on the exported program: its FP8 weights are dense_resource blobs,
    # widened to f32 by the reference, its quantization rounded by the reference's own code
    (reference,) = api.reference_outputs(compiled.imported, [x.numpy()], "main")
    comparison = oracle.compare(got, reference)
    assert comparison.ok, comparison.describe()


def test_fp8_linear_error_is_bounded_by_the_format():
    """Against the unquantized f32 layer: x and w each round to E4M3 within half a step, 2^-4
    of each value (normal values; the scale puts the largest at 448, so the smallest that matter
    are normal), so each product within 2^-4 + 2^-4 + 2^-8 and the output within that times
    sum |x| |w|, element by element (measured: at most 0.16 of the bound)."""
    torch.manual_seed(1)
    weight, x = torch.randn(48, 64) / 8, torch.randn(8, 64)
    layer = FP8Linear(weight).eval()
    got = ipu_torch.compile(layer, x, target="gc200")(x).numpy().astype(np.float64)
    xs, ws = x.numpy().astype(np.float64), weight.numpy().astype(np.float64)
    bound = (2**-4 + 2**-4 + 2**-8) * (np.abs(xs) @ np.abs(ws).T)
    assert np.all(np.abs(got - xs @ ws.T) <= bound)
    assert np.abs(got - xs @ ws.T).max() > 0  # quantized indeed


class Pow2FP8Linear(nn.Module):
    """Graphcore's FP8 inference recipe in PyTorch: x and W in float8_e4m3fn with power-of-two
    scales fixed ahead (2^5 and 2^6 here), dequantized for an f32 product: what ipu-fp8-matmul
    makes one FP8 matmul with log2 scale -11."""

    def __init__(self, weight):
        super().__init__()
        self.register_buffer("wq", (weight * 2.0**6).to(F8))

    def forward(self, x):
        xq = (x * 2.0**5).clamp(-F8_MAX, F8_MAX).to(F8)
        return F.linear(xq.to(torch.float32) * 2.0**-5, self.wq.to(torch.float32) * 2.0**-6)


def _quarter_products(program) -> list[str]:
    return [line for line in str(program).splitlines() if '"ipu.matmul"' in line and "ipu.quarter" in line]


def test_pow2_scaled_fp8_ffn_runs_as_fp8_products():
    """Both products of a power-of-two-scaled FP8 FFN become FP8 matmuls with QUARTER
    metadata (docs/precision.md): the result is PyTorch's and the reference's (f32's
    tolerance: only the order of f32 sums may differ) and the simulated time on c600 falls
    against the same program compiled without ipu-fp8-matmul (measured: 1,407 -> 963 cycles)."""
    from ipu_mlir.lowering.pass_registry import build_pass_manager
    from ipu_mlir.lowering.pipelines import default_pipeline
    from ipu_mlir.runtime import api as runtime_api

    torch.manual_seed(2)
    model = nn.Sequential(Pow2FP8Linear(torch.randn(256, 64) / 8), nn.GELU(), Pow2FP8Linear(torch.randn(64, 256) / 16)).eval()
    x = torch.randn(16, 64)
    compiled = ipu_torch.compile(model, x, target="c600", use_cache=False)
    got = compiled(x).numpy()
    assert oracle.compare(got, model(x).detach().numpy()).ok
    (reference,) = api.reference_outputs(compiled.imported, [x.numpy()], "main")
    comparison = oracle.compare(got, reference)
    assert comparison.ok, comparison.describe()
    program = api.compile_to_program(compiled.imported, "c600")
    products = _quarter_products(program)  # the two products and their codelets
    assert products and all("log2_scale = -11 : i32" in line for line in products), products
    with compiled.imported.context:
        unrecognized = api.copy_module(compiled.imported)
        build_pass_manager(default_pipeline("c600").replace("ipu-fp8-matmul,", ""), unrecognized.context).run(unrecognized.operation)
    assert not _quarter_products(unrecognized)
    simulator = runtime_api.load_simulator(unrecognized, "c600", "main", verified=True)
    (wide,) = simulator.run([x.numpy()])
    np.testing.assert_array_equal(got, wide)  # the same bits, in less time
    assert compiled.profile.cycles < simulator.profile.cycles, (compiled.profile.cycles, simulator.profile.cycles)
