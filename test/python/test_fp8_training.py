"""FP8 training (frontends/mixed_precision.py, `Precision.setFP8Training`; docs/training.md
"FP8 training"): the simulated step against PyTorch's own loop doing the same casts with
torch.float8_e4m3fn / float8_e5m2 and the same scales, the products in the compiled program
FP8 ones, and the run-time (amax) scales keeping finite where a static scale overflows."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.lowering.pass_registry import build_pass_manager  # noqa: E402
from ipu_mlir.lowering.pipelines import STEPS  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

TARGET = "tiny"
E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
STATIC = {"weight": 4, "activation": 3, "gradient": 12}  # the MLP's: its weights < 2^-1, inputs < 2^5, gradients > 2^-12
# The simulated step and PyTorch's loop do the same casts and products, but sum the products'
# f32 terms in different orders (numpy's matmul, PyTorch's mm): the losses and weights agree
# to f32's rounding unless a difference moves a value across an FP8 rounding boundary at a
# later cast (a step of E4M3: 2^-3). Measured over 5 steps of the MLP: 6e-8 of the largest
# weight, where FP8 is 0.05 away from f32 training and casting the gradients to E4M3 rather
# than E5M2 puts the weights 0.08 (amax scales) and 1.0 (static) away.
WEIGHT_RTOL = 1e-5


class MLP(nn.Module):
    def __init__(self, sizes=(16, 32, 8)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(sizes, sizes[1:]))

    def forward(self, x, target):
        for index, layer in enumerate(self.layers):
            x = layer(x)
            x = torch.relu(x) if index < len(self.layers) - 1 else x
        return nn.functional.mse_loss(x, target)


class Block(nn.Module):
    """A pre-norm transformer block (causal self-attention, 2 heads, GELU MLP) and a linear
    read-out, on real-valued inputs: its six linear layers are FP8, attention's own products f32."""

    def __init__(self, d=16, heads=2):
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.out = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.up, self.down, self.head = nn.Linear(d, 4 * d), nn.Linear(4 * d, d), nn.Linear(d, d)

    def forward(self, x, target):
        b, s, d = x.shape
        q, k, v = self.qkv(self.norm1(x)).split(d, dim=-1)
        q, k, v = (t.reshape(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
        attention = nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.out(attention.transpose(1, 2).reshape(b, s, d))
        x = x + self.down(nn.functional.gelu(self.up(self.norm2(x))))
        return nn.functional.mse_loss(self.head(x), target)


def log2_scale(x, dtype):
    """The recipe's scale, written apart from the library's: the largest k with amax * 2^k at
    or below the format's largest value, within Poplar's [-32, 32)."""
    largest, amax = torch.finfo(dtype).max, float(x.detach().abs().max())
    if amax == 0:
        return 31
    k = math.floor(math.log2(largest / amax))
    while amax * 2.0**k > largest:
        k -= 1
    while amax * 2.0 ** (k + 1) <= largest:
        k += 1
    return min(max(k, -32), 31)


def reference_linear(static):
    """PyTorch's FP8 linear product: E4M3 casts in the forward, the E5M2 gradient (and E5M2
    casts of x and the weight) in the backward, f32 products scaled back by the powers of two."""

    def cast(x, dtype, role):
        k = static[role] if static else log2_scale(x, dtype)
        return (x * 2.0**k).to(dtype), k

    def product(a, a_k, b, b_k):
        return (a.float() @ b.float()) * 2.0 ** -(a_k + b_k)

    class Linear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight):
            ctx.save_for_backward(x, weight)
            (xq, x_k), (wq, w_k) = cast(x, E4M3, "activation"), cast(weight, E4M3, "weight")
            return product(xq, x_k, wq.t(), w_k)

        @staticmethod
        def backward(ctx, grad):
            x, weight = ctx.saved_tensors
            (gq, g_k), (xq, x_k), (wq, w_k) = cast(grad, E5M2, "gradient"), cast(x, E5M2, "activation"), cast(weight, E5M2, "weight")
            return product(gq, g_k, wq, w_k), product(gq.t(), g_k, xq, x_k)

    def linear(x, weight, bias=None):
        y = Linear.apply(x.reshape(-1, x.shape[-1]), weight).reshape(*x.shape[:-1], weight.shape[0])
        return y if bias is None else y + bias

    return linear


def reference_loop(model, batches, lr, static=None, loss_scale=1.0, fp8=True):
    """PyTorch's loop: every nn.Linear through `reference_linear`, the loss times `loss_scale`,
    SGD in f32 on the f32 weights with the gradients divided by it, a step with a non-finite
    gradient skipped. (losses, weights)."""
    model = copy.deepcopy(model)
    linear = reference_linear(static)
    if fp8:
        for module in model.modules():
            if isinstance(module, nn.Linear):
                module.forward = lambda x, m=module: linear(x, m.weight, m.bias)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        loss = model(*batch)
        (loss * loss_scale).backward()
        grads = [p.grad for p in model.parameters()]
        if all(bool(g.isfinite().all()) for g in grads):
            for g in grads:
                g /= loss_scale
            optimizer.step()
        losses.append(float(loss.detach()))
    return losses, {name: p.detach().clone() for name, p in model.named_parameters()}


def train(model, batches, lr, static=None, loss_scale=None, target=TARGET):
    model = copy.deepcopy(model)
    options = ipu_torch.Options().target(target)
    options.Precision.setFP8Training(True, static)
    if loss_scale:
        options.Training.setLossScaling(loss_scale)
    trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=lr))
    losses = [float(trained(*batch)) for batch in batches]
    trained.copyWeightsToHost()
    return trained, losses, {name: p.detach().clone() for name, p in model.named_parameters()}


def mlp_batches(count, scale=1.0):
    """`count` batches of inputs and a fixed random teacher's outputs: a loss the MLP can lower."""
    generator = torch.Generator().manual_seed(1)
    teacher = torch.randn(16, 8, generator=generator) / 4
    inputs = [torch.randn(8, 16, generator=generator) for _ in range(count)]
    return [(x * scale, torch.tanh(x @ teacher)) for x in inputs]


def worst(ours, theirs):
    return max(float((ours[name] - theirs[name]).abs().max() / theirs[name].abs().max()) for name in theirs)


def l1_products(trained):
    """(operand element types, ipu.quarter or None) of every ipu.matmul of the compiled step at L1."""
    from mlir import ir

    from ipu_mlir.frontends import api

    module = api.copy_module(trained.step.module)
    with module.context:
        build_pass_manager("builtin.module(" + ",".join(STEPS[: STEPS.index("cse") + 1]) + ")").run(module.operation)
        found = []

        def visit(op):
            if op.name == "ipu.matmul":
                types = tuple(str(ir.RankedTensorType(v.type).element_type) for v in op.operands)
                found.append((types, str(op.attributes["ipu.quarter"]) if "ipu.quarter" in op.attributes else None))
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit)
    return found


@pytest.mark.parametrize("static", [None, STATIC], ids=["amax", "static"])
def test_fp8_mlp_matches_pytorch_fp8_loop_and_runs_fp8_products(static):
    """5 SGD steps of an FP8 MLP (loss scale 256 with the static scales): losses and weights
    those of PyTorch's loop with the same casts, within WEIGHT_RTOL; the loss falls; FP8 is
    visibly not f32 training; and all 5 products of the step (2 forward, 3 backward: the input
    needs no gradient) are FP8 `ipu.matmul`s with QUARTER metadata, none an f32 one."""
    torch.manual_seed(0)
    model, batches = MLP(), mlp_batches(5)
    loss_scale = 256.0 if static else None
    trained, losses, weights = train(model, batches, 0.5, static, loss_scale)
    ref_losses, ref_weights = reference_loop(model, batches, 0.5, static, loss_scale or 1.0)
    _, f32_weights = reference_loop(model, batches, 0.5, fp8=False)
    assert np.allclose(losses, ref_losses, rtol=1e-5), (losses, ref_losses)
    assert worst(weights, ref_weights) < WEIGHT_RTOL, worst(weights, ref_weights)
    assert worst(weights, f32_weights) > 100 * WEIGHT_RTOL  # the comparison can tell FP8 from f32
    assert losses[-1] < 0.9 * losses[0]
    products = l1_products(trained)
    assert len(products) == 5, products
    forward = [p for p in products if p[0] == ("f8E4M3FN", "f8E4M3FN")]
    backward = [p for p in products if p[0] == ("f8E5M2", "f8E5M2")]
    assert len(forward) == 2 and len(backward) == 3, products
    assert all("e4m3fn" in q for _, q in forward) and all("e5m2" in q for _, q in backward)
    if static:  # the scales are the metadata's: -(3 + 4) forward, -(12 + 4) and -(12 + 3) backward
        scales = sorted(int(q.split("log2_scale = ")[1].split(" ")[0]) for _, q in products)
        assert scales == [-16, -15, -15, -7, -7], scales


def test_amax_scales_stay_finite_where_a_static_scale_overflows():
    """Inputs 64 times larger: with the static activation scale 2^3 they reach 448 (E4M3's
    largest) and their casts give NaN, so every step is skipped and the loss is NaN; the scales
    from each tensor's amax keep every cast finite and the loss falls."""
    torch.manual_seed(0)
    model, batches = MLP(), mlp_batches(4, scale=64.0)
    _, losses, weights = train(model, batches, 1e-3, STATIC)
    assert all(math.isnan(loss) for loss in losses)
    assert worst(weights, dict(model.named_parameters())) == 0  # no step applied
    _, losses, weights = train(model, batches, 1e-3)
    assert all(math.isfinite(loss) for loss in losses) and losses[-1] < losses[0], losses
    ref_losses, ref_weights = reference_loop(model, batches, 1e-3)
    assert worst(weights, ref_weights) < WEIGHT_RTOL


def test_fp8_transformer_block_trains_as_pytorch_fp8_loop():
    """A small transformer block in FP8 with amax scales: 6 steps, the loss falls, the losses and
    weights within PyTorch's FP8 loop's (its LayerNorm, softmax and GELU in f32 on both sides)."""
    torch.manual_seed(0)
    model = Block()
    generator = torch.Generator().manual_seed(2)
    batches = [(torch.randn(2, 8, 16, generator=generator), torch.randn(2, 8, 16, generator=generator)) for _ in range(6)]
    trained, losses, weights = train(model, batches, 0.2)
    ref_losses, ref_weights = reference_loop(model, batches, 0.2)
    assert losses[-1] < 0.95 * losses[0], losses
    assert np.allclose(losses, ref_losses, rtol=1e-4), (losses, ref_losses)
    assert worst(weights, ref_weights) < 10 * WEIGHT_RTOL, worst(weights, ref_weights)
    products = l1_products(trained)
    fp8 = [p for p in products if p[1] is not None]
    assert len(fp8) == 5 * 3, products  # 5 linear layers, each a forward and two backward products
    assert len(products) - len(fp8) == 6, products  # attention's two products and their 4 gradients, in f32


def test_fp8_linear_layers_of_an_f16_model_with_master_weights():
    """An f16 model: FP8 products into f32, rounded to f16 for the rest of the layer;
    f32 master weights. The loss falls and the products are FP8 (dropping the option fails it)."""
    torch.manual_seed(0)
    model = MLP().half()
    options = ipu_torch.Options().target(TARGET)
    options.Precision.setFP8Training(True).setMasterWeights(True)
    trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.5))
    losses = [float(trained(x.half(), t.half())) for x, t in mlp_batches(5)]
    assert losses[-1] < 0.9 * losses[0], losses
    assert [q is not None for _, q in l1_products(trained)] == [True] * 5


@pytest.mark.parametrize("dtype", [E4M3, E5M2])
def test_amax_scale_at_the_edges(dtype):
    """`fp8_log2_scale` against the rule written apart, where log2's rounding could decide: an
    amax exactly the format's largest value times a power of two, one f32 step either side of
    it, all zeros, and amaxes whose k Poplar's range clamps."""
    from ipu_mlir.frontends.mixed_precision import fp8_log2_scale

    largest = torch.finfo(dtype).max
    amaxes = [largest * 2.0**e for e in (-20, -3, 0, 5)]
    amaxes += [float(np.nextafter(np.float32(a), np.float32(s))) for a in amaxes for s in (0, np.inf)]
    amaxes += [0.0, 1e-30, 1e30, 2.0**-149]
    for amax in amaxes:
        x = torch.tensor([0.5 * amax, -amax], dtype=torch.float32)
        assert int(fp8_log2_scale(x, dtype)) == log2_scale(x, dtype), amax
    assert int(fp8_log2_scale(torch.tensor([largest]), dtype)) == 0 and int(fp8_log2_scale(torch.tensor([0.0]), dtype)) == 31


def test_fp8_training_refuses_bad_scales():
    precision = ipu_torch.Options().Precision
    with pytest.raises(IpuError, match="setFP8Training takes True or False"):
        precision.setFP8Training("yes")
    with pytest.raises(IpuError, match="log2_scales takes a dict of weight, activation, gradient"):
        precision.setFP8Training(True, {"weight": 1})
    with pytest.raises(IpuError, match=r"the gradient log2 scale must be an integer in \[-32, 32\)"):
        precision.setFP8Training(True, {"weight": 1, "activation": 2, "gradient": 40})
    with pytest.raises(IpuError, match=r"the gradient and weight log2 scales sum to 33: .* must be in \[-32, 32\)"):
        precision.setFP8Training(True, {"weight": 11, "activation": 6, "gradient": 22})
