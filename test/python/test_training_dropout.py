"""Dropout and random ops in training, drawn on the device (frontends/random_ops.py, docs/training.md).

The device's masks are a hash of (seed, micro-batch counter, element); PyTorch's own loop draws
the same ones through `same_random_ops`, so the parameters after the steps compare as in
test_training.py (rtol 1e-4 of each tensor's largest magnitude)."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends.random_ops import same_random_ops, uniform  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

TARGET = "tiny"
SEED = 1234


def train_both(model, make_optimizer, batches, iterations=1, accumulation=1, noise=None):
    """(simulated losses, PyTorch's losses, largest relative difference of the parameters and
    buffers) after `batches` calls of `iterations` x `accumulation` micro-batches each, both
    drawing masks with SEED; PyTorch's micro-batch k draws as the device's k-th run of the step."""
    reference = copy.deepcopy(model).train()
    optimizer, reference_optimizer = make_optimizer(model), make_optimizer(reference)
    options = ipu_torch.Options().deviceIterations(iterations).randomSeed(SEED).target(TARGET)
    options.Training.gradientAccumulation(accumulation)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=optimizer)
    losses, reference_losses, micro_batch = [], [], 0
    for batch in batches:
        losses.append(float(trained(*batch).detach()))
        micro = list(zip(*(value.chunk(iterations * accumulation) for value in batch)))
        for first in range(0, len(micro), accumulation):
            reference_optimizer.zero_grad()
            for inputs in micro[first : first + accumulation]:
                with same_random_ops(SEED, micro_batch):
                    loss = reference(*inputs)
                    (loss / accumulation).backward()
                micro_batch += 1
            reference_optimizer.step()
        reference_losses.append(float(loss.detach()))
    trained.copyWeightsToHost()
    ours, theirs = dict(model.state_dict()), reference.state_dict()
    for name, part in (noise or {}).items():
        ours[name], theirs[name] = ours[name].clone(), theirs[name].clone()
        ours[name][part] = theirs[name][part] = 0
    worst = max(float((ours[n].double() - theirs[n].double()).abs().max() / theirs[n].double().abs().max()) for n in theirs)
    return losses, reference_losses, worst


def batches(seed, calls, *shapes):
    generator = torch.Generator().manual_seed(seed)
    return [tuple(torch.randn(shape, generator=generator) for shape in shapes) for _ in range(calls)]


class DropoutMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.drop, self.fc2 = nn.Linear(8, 32), nn.Dropout(0.5), nn.Linear(32, 4)

    def forward(self, x, target):
        return nn.functional.mse_loss(self.fc2(self.drop(torch.relu(self.fc1(x)))), target)


class Encoder(nn.Module):
    """nn.TransformerEncoderLayer with its default dropout, 0.1: in the attention's weights
    (SDPA's dropout_p), after it, in the feed-forward block and after it."""

    def __init__(self):
        super().__init__()
        self.layer = nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True)
        self.head = nn.Linear(16, 3)

    def forward(self, x, target):
        return nn.functional.mse_loss(self.head(self.layer(x)), target)


def test_mlp_dropout_half_sgd_two_device_iterations():
    torch.manual_seed(0)
    data = batches(1, 5, (8, 8), (8, 4))
    losses, reference, worst = train_both(DropoutMLP(), lambda m: torch.optim.SGD(m.parameters(), lr=0.1), data, iterations=2)
    assert worst < 1e-4
    np.testing.assert_allclose(losses, reference, rtol=1e-5)


def test_accumulated_micro_batches_draw_fresh_masks():
    torch.manual_seed(0)
    data = batches(2, 5, (12, 8), (12, 4))
    make = lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9)  # noqa: E731
    losses, reference, worst = train_both(DropoutMLP(), make, data, iterations=2, accumulation=3)
    assert worst < 1e-4
    np.testing.assert_allclose(losses, reference, rtol=1e-5)


# The attention's key bias has a zero gradient in exact arithmetic (test_training.py says why).
def test_transformer_encoder_layer_default_dropout_adamw():
    torch.manual_seed(0)
    data = batches(3, 5, (2, 6, 16), (2, 6, 3))
    make = lambda m: torch.optim.AdamW(m.parameters(), lr=0.01, weight_decay=0.05)  # noqa: E731
    losses, reference, worst = train_both(Encoder(), make, data, noise={"layer.self_attn.in_proj_bias": slice(16, 32)})
    assert worst < 1e-4
    np.testing.assert_allclose(losses, reference, rtol=1e-4)


class Draws(nn.Module):
    """Every random op the device draws: rand_like, rand, uniform_, bernoulli (p and tensor), bernoulli_, native_dropout."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        y = self.fc(x)
        noise = torch.rand_like(y) + torch.rand(y.shape) + torch.empty_like(y).uniform_(-1, 2)
        gate = torch.bernoulli(torch.full_like(y, 0.3)) + torch.bernoulli(torch.sigmoid(y.detach()))
        kept = torch.empty_like(y)
        alias = kept.view(-1)
        kept.bernoulli_(0.4)  # in place: read after it through a view taken before
        gate = gate + alias.view_as(y) + torch.native_dropout(y, 0.3, True)[0]
        return y * noise * gate, (y * noise * gate).square().mean()


def test_every_random_op_matches_the_host_generator():
    torch.manual_seed(0)
    data = [(torch.randn(4, 8),) for _ in range(5)]
    model = Draws()
    reference = copy.deepcopy(model)
    options = ipu_torch.Options().randomSeed(SEED).target(TARGET)
    trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.01))
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.01)
    for step, (x,) in enumerate(data):
        output, _ = trained(x)
        reference_optimizer.zero_grad()
        with same_random_ops(SEED, step):
            expected, loss = reference(x)
            loss.backward()
        reference_optimizer.step()
        np.testing.assert_allclose(output.numpy(), expected.detach().numpy(), rtol=1e-5, atol=1e-6)
    assert sorted(trained.step.module.operation.get_asm().count(f"arith.{op}") > 0 for op in ("xori", "muli", "shrsi")) == [True] * 3


class Masks(nn.Module):
    """Returns its dropout's mask (scaled): ones through dropout."""

    def __init__(self, p, shape=(64, 64)):
        super().__init__()
        self.fc, self.drop, self.shape = nn.Linear(4, 4), nn.Dropout(p), shape

    def forward(self, x):
        mask = self.drop(torch.ones(self.shape))
        return mask, self.fc(x).sum() * mask.mean()


def test_masks_keep_one_minus_p_and_differ_between_steps_and_micro_batches():
    model = Masks(0.25)
    options = ipu_torch.Options().deviceIterations(3).randomSeed(SEED).target(TARGET)
    trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.0))
    masks = [trained(torch.randn(3, 4))[0].numpy() != 0 for _ in range(3)]
    for call, mask in enumerate(masks):  # the last micro-batch of each call is the step counter's 3 call + 2
        np.testing.assert_array_equal(mask, uniform(torch.tensor(SEED), torch.tensor(3 * call + 2), 0, (64, 64)).numpy() < 0.75)
        assert abs(mask.mean() - 0.75) < 0.02  # 4096 elements: 3 standard deviations is 0.02
    for first, second in ((0, 1), (1, 2), (0, 2)):
        assert abs((masks[first] == masks[second]).mean() - (0.75**2 + 0.25**2)) < 0.03  # independent masks agree this often
    # micro-batches within one call: the host generator's masks of steps 0, 1 and 2 differ
    steps = [uniform(torch.tensor(SEED), torch.tensor(step), 0, (64, 64)).numpy() < 0.75 for step in range(3)]
    assert all(abs((steps[0] == other).mean() - 0.625) < 0.03 for other in steps[1:])


def test_a_draw_at_f32_of_the_keep_probability_is_dropped():
    """Seed 301 draws f32(0.9) at element 1857 of step 0: 0.9's f32 is below 0.9, so it is kept
    by a comparison in f32 and dropped by one in f64 (torch-mlir's `aten.lt.Scalar`). Exactly,
    the draw is below 0.9: kept, on both sides."""
    seed, step = torch.tensor(301, dtype=torch.int32), torch.tensor(0, dtype=torch.int32)
    draws = uniform(seed, step, 0, (4096,)).numpy()
    assert draws[1857] == np.float32(0.9)
    model = Masks(0.1, (4096,))
    options = ipu_torch.Options().randomSeed(301).target(TARGET)
    trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.0))
    np.testing.assert_array_equal(trained(torch.randn(1, 4))[0].numpy() != 0, draws.astype(np.float64) < 0.9)
    host_model, x = Masks(0.1, (4096,)), torch.randn(1, 4)
    with same_random_ops(301, 0):
        host = host_model(x)[0].detach().numpy()
    np.testing.assert_array_equal(host != 0, draws.astype(np.float64) < 0.9)


def test_uniform_statistics_and_offsets():
    seed = torch.tensor(7, dtype=torch.int32)
    u = uniform(seed, torch.tensor(0, dtype=torch.int32), 0, (1 << 18,)).numpy().astype(np.float64)
    assert u.min() >= 0 and u.max() < 1
    assert abs(u.mean() - 0.5) < 0.003 and abs(u.var() - 1 / 12) < 0.002
    counts = np.histogram(u, bins=64, range=(0, 1))[0]
    chi2 = float(((counts - u.size / 64) ** 2 / (u.size / 64)).sum())
    assert chi2 < 120  # 63 degrees of freedom: p < 1e-5 above 120
    assert abs(np.corrcoef(u[:-1], u[1:])[0, 1]) < 0.01  # neighbours
    other_seed = uniform(seed + 1, torch.tensor(0, dtype=torch.int32), 0, (1 << 18,)).numpy()
    assert abs(np.corrcoef(u, other_seed)[0, 1]) < 0.01
    later = uniform(seed, torch.tensor(0, dtype=torch.int32), 1000, (1000,)).numpy()
    np.testing.assert_array_equal(later, u[1000:2000])  # an offset continues the stream


def test_eval_mode_has_no_dropout():
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.ReLU(), nn.Linear(16, 4))
    model = ipu_torch.inferenceModel(net, ipu_torch.Options().deviceIterations(2).target(TARGET))
    x = torch.randn(4, 8)
    with torch.no_grad():
        expected = net.eval()(x)
    np.testing.assert_allclose(model(x).numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(model(x).numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_seed_decides_the_masks_and_no_random_variables_without_random_ops():
    def last_mask(seed):
        model = Masks(0.5)
        options = ipu_torch.Options().randomSeed(seed).target(TARGET)
        trained = ipu_torch.trainingModel(model, options, torch.optim.SGD(model.parameters(), lr=0.0))
        return trained(torch.randn(1, 4))[0].numpy(), trained

    first, trained = last_mask(5)
    assert {"random:seed", "random:step"} <= set(trained.device.variables())
    assert int(trained.device.read_variable("random:step")) == 1
    np.testing.assert_array_equal(first, last_mask(5)[0])
    assert (first != last_mask(6)[0]).mean() > 0.3
    model = nn.Linear(4, 1)
    plain = ipu_torch.trainingModel(_WithLoss(model), ipu_torch.Options().target(TARGET), torch.optim.SGD(model.parameters(), lr=0.1))
    plain(torch.randn(2, 4))
    assert not any(name.startswith("random:") for name in plain.device.variables())


class _WithLoss(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, x):
        return self.net(x).square().mean()


def test_unsupported_random_ops_and_seeds_are_named():
    class Noise(nn.Module):
        def forward(self, x):
            return x + torch.randn_like(x)

    class Normal(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.noise = nn.Linear(4, 4), Noise()

        def forward(self, x):
            return self.noise(self.fc(x)).square().mean()

    model = Normal()
    trained = ipu_torch.trainingModel(model, ipu_torch.Options().target(TARGET), torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(
        IpuError,
        match=r"training with random op aten\.randn_like\.default \(in layer noise\) is not supported on the device \(dropout, bernoulli",
    ):
        trained(torch.randn(2, 4))
    for bad in (-1, 1 << 31, 2.5, True):
        with pytest.raises(IpuError, match=r"randomSeed takes an integer in \[0, 2\^31\)"):
            ipu_torch.Options().randomSeed(bad)
