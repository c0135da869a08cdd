"""`import ipu_mlir.poptorch as poptorch`: a PopTorch script's conventions, checked against PyTorch (docs/poptorch.md).

A PopTorch-style script (poptorch.DataLoader, identity_loss, poptorch.optim.SGD with loss
scaling, outputMode, compile, detach and attach) trains as PyTorch's own loop does; LAMB
matches a reference written in numpy from the paper; each refusal is one line."""

from __future__ import annotations

import copy
import doctest
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

import ipu_mlir.poptorch as poptorch  # noqa: E402
from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

TARGET = "tiny"


class Regressor(nn.Module):
    """A PopTorch-style model: (output, loss), the loss a custom one marked by identity_loss."""

    def __init__(self, reduction: str = "mean"):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)
        self.reduction = reduction

    def forward(self, x, target):
        y = self.fc2(torch.tanh(self.fc1(x)))
        return y, poptorch.identity_loss((y - target) ** 2 + 0.1 * y.abs(), reduction=self.reduction)


def relative_difference(ours, theirs):
    ours, theirs = torch.as_tensor(ours).double(), torch.as_tensor(theirs).double()
    return float((ours - theirs).abs().max() / max(float(theirs.abs().max()), 1e-12))


def worst_difference(model, reference):
    theirs = reference.state_dict()
    return max(relative_difference(value.detach(), theirs[name].detach()) for name, value in model.state_dict().items())


def test_popTorch_script_trains_as_pytorch():
    """DataLoader batches of batch_size x deviceIterations x gradientAccumulation, identity_loss,
    poptorch.optim.SGD(loss_scaling=1024), OutputMode.All, compile, detach / attach: the
    parameters after 5 calls (10 updates) within 1e-4 of PyTorch's loop, every micro-batch's loss returned."""
    torch.manual_seed(0)
    net = Regressor()
    reference = copy.deepcopy(net)
    dataset = torch.utils.data.TensorDataset(torch.randn(90, 8), torch.randn(90, 4))
    opts = poptorch.Options().deviceIterations(2).outputMode(poptorch.OutputMode.All).target(TARGET)
    opts.Training.gradientAccumulation(2)
    loader = poptorch.DataLoader(opts, dataset, batch_size=4, shuffle=False)
    assert (loader.combinedBatchSize, len(loader)) == (16, 5)  # 90 // 16: drop_last, PopTorch's default
    optimizer = poptorch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, loss_scaling=1024.0)
    model = poptorch.trainingModel(net, options=opts, optimizer=optimizer)
    first = next(iter(loader))
    model.compile(*first)
    assert model.isCompiled() and model.isAttachedToDevice()

    torch_optimizer = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
    for call, (x, target) in enumerate(loader):
        assert x.shape == (16, 8)
        if call in (2, 3):  # the state kept on the host while detached
            model.detachFromDevice()
            assert not model.isAttachedToDevice()
            assert worst_difference(net, reference) < 1e-4  # the weights came back on detaching
        if call == 2:
            model.attachToDevice()  # at call 3, the call attaches
        _, losses = model(x, target)
        expected = []
        for step in range(2):
            torch_optimizer.zero_grad()
            for micro in range(2):
                rows = slice(4 * (2 * step + micro), 4 * (2 * step + micro + 1))
                _, loss = reference(x[rows], target[rows])
                (loss / 2).backward()
                expected.append(float(loss.detach()))
            torch_optimizer.step()
        assert losses.shape == (4,)  # OutputMode.All: each micro-batch's loss
        np.testing.assert_allclose(losses.numpy(), expected, rtol=1e-4)
    model.copyWeightsToHost()
    assert worst_difference(net, reference) < 1e-4
    # the device's momentum is the host optimizer's after copyWeightsToHost, as PopTorch's
    buffers = [optimizer.state[p]["momentum_buffer"] for p in net.parameters()]
    references = [torch_optimizer.state[p]["momentum_buffer"] for p in reference.parameters()]
    assert max(relative_difference(ours, theirs) for ours, theirs in zip(buffers, references)) < 1e-4


def test_loss_scaling_is_compiled_in():
    """The scale reaches the step: a loss scaling that overflows f32 (1e38 x a loss above 10)
    leaves non-finite weights, which it cannot if the scale were dropped."""
    torch.manual_seed(1)
    net = Regressor(reduction="sum")
    model = poptorch.trainingModel(net, poptorch.Options().target(TARGET), poptorch.optim.SGD(net.parameters(), lr=0.01, loss_scaling=1e38))
    model(torch.randn(4, 8) * 10, torch.randn(4, 4) * 100)
    model.copyWeightsToHost()
    assert not all(bool(torch.isfinite(p).all()) for p in net.parameters())


def test_identity_loss_none_backpropagates_ones():
    """reduction="none": the unreduced loss returned, the backward pass from a gradient of ones
    (PopTorch's user guide), so the weights move as with "sum"."""
    torch.manual_seed(2)
    net = Regressor(reduction="none")
    reference = copy.deepcopy(net)
    model = poptorch.trainingModel(net, poptorch.Options().target(TARGET), torch.optim.SGD(net.parameters(), lr=0.01))
    x, target = torch.randn(3, 8), torch.randn(3, 4)
    _, loss = model(x, target)
    model.copyWeightsToHost()
    torch_optimizer = torch.optim.SGD(reference.parameters(), lr=0.01)
    _, expected = reference(x, target)
    expected.sum().backward()
    torch_optimizer.step()
    assert loss.shape == (3, 4)
    np.testing.assert_allclose(loss.numpy(), expected.detach().numpy(), rtol=1e-5)
    assert worst_difference(net, reference) < 1e-5


class WithMSE(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner

    def forward(self, x, target):
        return nn.functional.mse_loss(self.inner(x), target)


def torch_gradients(net, weights, x, target):
    """PyTorch's gradients (f64) of the MSE of a copy of `net` holding `weights`."""
    probe = copy.deepcopy(net)
    with torch.no_grad():
        for name, p in probe.named_parameters():
            p.copy_(torch.from_numpy(weights[name]))
    nn.functional.mse_loss(probe(x), target).backward()
    return {name: p.grad.double().numpy() for name, p in probe.named_parameters()}


def test_adamw_without_bias_correction():
    """poptorch.optim.AdamW(bias_correction=False): decoupled weight decay, Adam's moments used
    uncorrected; 3 updates within 1e-5 of numpy's (torch's AdamW always corrects)."""
    torch.manual_seed(5)
    net = nn.Linear(8, 4)
    weights = {name: p.detach().double().numpy().copy() for name, p in net.named_parameters()}
    x, target = torch.randn(12, 8), torch.randn(12, 4)
    optimizer = poptorch.optim.AdamW(net.parameters(), lr=0.01, weight_decay=0.1, bias_correction=False)
    model = poptorch.trainingModel(WithMSE(net), poptorch.Options().deviceIterations(3).target(TARGET), optimizer)
    model(x, target)
    model.copyWeightsToHost()
    moments = {name: (0.0, 0.0) for name in weights}
    for step in range(3):
        grads = torch_gradients(net, weights, x[4 * step : 4 * (step + 1)], target[4 * step : 4 * (step + 1)])
        for name, g in grads.items():
            m, v = moments[name]
            moments[name] = m, v = 0.9 * m + 0.1 * g, 0.999 * v + 0.001 * g * g
            weights[name] = weights[name] * (1 - 0.01 * 0.1) - 0.01 * m / (np.sqrt(v) + 1e-8)
    for name, p in net.named_parameters():
        assert relative_difference(p.detach(), weights[name]) < 1e-5, name


def lamb_reference(weights, grads, state, lr, betas, eps, weight_decay, max_weight_norm, bias_correction):
    """LAMB in numpy (f64) from You et al., "Large Batch Optimization for Deep Learning: Training
    BERT in 76 minutes" (ICLR 2020, arXiv:1904.00962), Algorithm 2, with PopART's scaling function
    phi(z) = min(z, max_weight_norm) and a trust ratio of 1 where a norm is 0."""
    beta1, beta2 = betas
    state["t"] = t = state.get("t", 0) + 1
    new = {}
    for name, w in weights.items():
        g = grads[name]
        m = state[f"m:{name}"] = beta1 * state.get(f"m:{name}", 0.0) + (1 - beta1) * g
        v = state[f"v:{name}"] = beta2 * state.get(f"v:{name}", 0.0) + (1 - beta2) * g * g
        m_hat, v_hat = (m / (1 - beta1**t), v / (1 - beta2**t)) if bias_correction else (m, v)
        r = m_hat / (np.sqrt(v_hat) + eps) + weight_decay * w
        phi, r_norm = min(np.linalg.norm(w), max_weight_norm), np.linalg.norm(r)
        new[name] = w - lr * (phi / r_norm if phi > 0 and r_norm > 0 else 1.0) * r
    return new


@pytest.mark.parametrize(
    "settings",
    [
        {"lr": 0.01, "weight_decay": 0.01},
        {"lr": 0.02, "weight_decay": 0.0, "bias_correction": False, "max_weight_norm": 0.5, "betas": (0.8, 0.99)},
    ],
    ids=["defaults", "no-bias-correction-clamped"],
)
def test_lamb_matches_the_paper(settings):
    """poptorch.optim.LAMB on the device, 5 updates (deviceIterations 5), within 1e-5 of the
    numpy reference fed PyTorch's gradients; the host step (PopTorch's) agrees too."""
    torch.manual_seed(3)
    net = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    start = {name: p.detach().double().numpy().copy() for name, p in net.named_parameters()}
    host = copy.deepcopy(net)
    x, target = torch.randn(20, 8), torch.randn(20, 4)
    optimizer = poptorch.optim.LAMB(net.parameters(), **settings)
    model = poptorch.trainingModel(WithMSE(net), poptorch.Options().deviceIterations(5).target(TARGET), optimizer)
    model(x, target)
    model.copyWeightsToHost()

    defaults = {"betas": (0.9, 0.999), "eps": 1e-8, "max_weight_norm": 65500.0, "bias_correction": True}
    weights, state = start, {}
    host_optimizer = poptorch.optim.LAMB(host.parameters(), **settings)
    for step in range(5):
        rows = slice(4 * step, 4 * (step + 1))
        grads = torch_gradients(net, weights, x[rows], target[rows])
        weights = lamb_reference(weights, grads, state, **{**defaults, **settings})
        host_optimizer.zero_grad()
        nn.functional.mse_loss(host(x[rows]), target[rows]).backward()
        host_optimizer.step()
    for name, p in net.named_parameters():
        assert relative_difference(p.detach(), weights[name]) < 1e-5, name
    for name, p in host.named_parameters():
        assert relative_difference(p.detach(), weights[name]) < 1e-5, name
    assert float(optimizer.state[net[0].weight]["step"]) == 5  # the device's state, in torch's format


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        ((poptorch.OutputMode.All,), [[0, 1], [2, 3], [4, 5], [6, 7]]),
        ((poptorch.OutputMode.Final,), [[6, 7]]),
        ((poptorch.OutputMode.Sum,), [[12, 16]]),
        ((poptorch.OutputMode.EveryN, 2), [[2, 3], [6, 7]]),
    ],
)
def test_output_modes_return_what_popTorch_does(mode, expected):
    """Of 4 micro-batches' outputs (rows), each mode's share; batch outputs' micro-batches concatenated."""
    options = poptorch.Options().outputMode(*mode)
    per_micro_batch = np.arange(8).reshape(4, 1, 2)  # 4 micro-batches of 1 row of 2
    np.testing.assert_array_equal(options.returned(per_micro_batch, training=True), np.array(expected), strict=True)
    losses = np.arange(4.0)
    assert options.returned(losses, training=True).tolist() == {"All": [0, 1, 2, 3], "Final": 3, "Sum": 6, "EveryN": [1, 3]}[mode[0].name]


class SumAndDouble(nn.Module):
    def forward(self, x):
        return x.sum(), x * 2


@pytest.mark.parametrize("mode", [poptorch.OutputMode.All, poptorch.OutputMode.Final, poptorch.OutputMode.Sum])
@pytest.mark.parametrize("iterations", [1, 2])
def test_inference_returns_torch_tensors_for_scalar_outputs(mode, iterations):
    """A 0-d output (one micro-batch's, the final one, or a sum) comes back as a torch tensor, as
    PopTorch's does: `.detach()`, `.item()` and torch ops work on it."""
    options = poptorch.Options().deviceIterations(iterations).outputMode(mode).target(TARGET)
    x = torch.arange(3.0 * iterations)
    total, doubled = poptorch.inferenceModel(SumAndDouble(), options)(x)
    assert isinstance(total, torch.Tensor) and isinstance(doubled, torch.Tensor)
    sums = x.reshape(iterations, 3).sum(1)
    expected = {"All": sums if iterations > 1 else sums[0], "Final": sums[-1], "Sum": sums.sum()}[mode.name]
    torch.testing.assert_close(total.detach(), expected)


def test_defaults_are_all_for_inference_and_final_for_training():
    options = poptorch.Options()
    assert options.returned(np.arange(3.0), training=False).tolist() == [0, 1, 2]
    assert options.returned(np.arange(3.0), training=True).tolist() == 2


def test_inference_model_of_a_trained_model(tmp_path):
    """poptorch.inferenceModel of a trained model (here a layer of it) sees the trained weights,
    and the weights of later training calls (PopTorch copies them to the host and device
    implicitly); enableExecutableCaching(path) keeps its program in path."""
    torch.manual_seed(4)
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    reference = copy.deepcopy(net)
    torch_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)

    class WithLoss(nn.Module):
        def __init__(self, inner):
            super().__init__()
            self.net = inner

        def forward(self, x, target):
            out = self.net(x)
            return out, nn.functional.mse_loss(out, target)

    trained = poptorch.trainingModel(WithLoss(net), poptorch.Options().target(TARGET), torch.optim.SGD(net.parameters(), lr=0.1))
    x, target, probe = torch.randn(4, 8), torch.randn(4, 4), torch.randn(6, 8)

    def train_both():
        trained(x, target)
        torch_optimizer.zero_grad()
        WithLoss(reference)(x, target)[1].backward()
        torch_optimizer.step()

    train_both()
    cache = tmp_path / "cache"
    options = poptorch.Options().deviceIterations(3).outputMode(poptorch.OutputMode.Final).enableExecutableCaching(str(cache))
    inference = poptorch.inferenceModel(trained.model.net, options.target(TARGET))
    first = inference(probe)
    assert first.shape == (2, 4)  # OutputMode.Final: the last of 3 micro-batches of 2
    with torch.no_grad():
        np.testing.assert_allclose(first.numpy(), reference(probe[4:]).numpy(), rtol=1e-5, atol=1e-6)  # the trained weights
    assert any(cache.iterdir())
    train_both()  # trains on; the inference model follows
    second = inference(probe)
    with torch.no_grad():
        np.testing.assert_allclose(second.numpy(), reference(probe[4:]).numpy(), rtol=1e-5, atol=1e-6)
    assert float((second - first).abs().max()) > 1e-4
    inference.detachFromDevice()
    assert not inference.isAttachedToDevice()
    np.testing.assert_array_equal(inference(probe).numpy(), second.numpy())  # attaches again
    with torch.no_grad():
        net[2].bias.add_(1.0)  # the host's weights changed by hand: copyWeightsToDevice, as in PopTorch
    inference.copyWeightsToDevice()
    np.testing.assert_allclose(inference(probe).numpy(), second.numpy() + 1, rtol=1e-5, atol=1e-5)


def test_face_is_the_front_end():
    """No second implementation: PopTorch's names are the front end's objects."""
    assert poptorch.trainingModel is ipu_torch.trainingModel and poptorch.inferenceModel is ipu_torch.inferenceModel
    assert poptorch.Options is ipu_torch.Options and poptorch.BeginBlock is ipu_torch.BeginBlock
    assert poptorch.recomputationCheckpoint is ipu_torch.recomputationCheckpoint
    assert poptorch.Options().useIpuModel(True).use_model and not poptorch.Options().useIpuModel(False).use_model


def _params():
    return nn.Linear(2, 2).parameters()


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: poptorch.optim.SGD(_params(), lr=0.1, accum_type=torch.float16), r"SGD\(accum_type=torch.float16\): .* float32"),
        (lambda: poptorch.optim.SGD(_params(), lr=0.1, max_grad_norm=-1.0), r"max_grad_norm=-1.0\): give a positive number"),
        (lambda: poptorch.optim.SGD(_params(), lr=0.1, loss_scaling=0), r"loss_scaling=0\): give a positive finite number"),
        (
            lambda: poptorch.optim.SGD(_params(), lr=0.1, use_combined_accum=True, velocity_scaling=8.0),
            r"velocity_scaling=8.0\): the velocity is kept unscaled",
        ),
        (lambda: poptorch.optim.Adam(_params(), first_order_momentum_accum_type=torch.float16), r"first_order_momentum_accum_type"),
        (lambda: poptorch.optim.LAMB(_params(), second_order_momentum_accum_type=torch.float16), r"LAMB\(second_order"),
        (lambda: poptorch.DataLoader(poptorch.Options(), [], mode=poptorch.DataLoaderMode.AsyncRebatched), r"AsyncRebatched"),
        (lambda: poptorch.DataLoader(poptorch.Options(), [], batch_sampler=[[0]]), r"batch_sampler .* not supported"),
        (lambda: poptorch.DataLoader("opts", []), r"first argument is the Options .* got str"),
        (lambda: poptorch.DataLoader(poptorch.Options(), [], batch_size=0), r"batch_size takes a positive integer"),
        (lambda: poptorch.identity_loss(torch.ones(2), reduction="max"), r"reduction must be 'sum', 'mean' or 'none', got 'max'"),
        (lambda: poptorch.Options().outputMode("All"), r"outputMode takes a poptorch.OutputMode"),
        (lambda: poptorch.Options().outputMode(poptorch.OutputMode.EveryN), r"output_return_period\) takes a positive integer"),
        (lambda: poptorch.Options().useIpuModel("yes"), r"useIpuModel takes True or False, got 'yes'"),
        (lambda: poptorch.Options().enableExecutableCaching(3), r"enableExecutableCaching takes a directory path or None"),
        (lambda: poptorch.trainingModel(nn.Linear(2, 2)).detachFromDevice(), r"detachFromDevice: the model has not been compiled"),
        (lambda: poptorch.trainingModel(nn.Linear(2, 2)).attachToDevice(), r"attachToDevice: the model has not been compiled"),
    ],
)
def test_refusals_are_one_line(make, message):
    with pytest.raises(IpuError, match=message) as refused:
        make()
    assert "\n" not in str(refused.value)


def test_attach_when_attached_is_refused():
    net = nn.Linear(2, 1)

    class WithLoss(nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net

        def forward(self, x):
            return self.net(x).sum()

    model = poptorch.trainingModel(WithLoss(), poptorch.Options().target(TARGET))
    model.compile(torch.ones(2, 2))
    with pytest.raises(IpuError, match=r"attachToDevice: the device is already attached$"):
        model.attachToDevice()
    model.detachFromDevice()
    with pytest.raises(IpuError, match=r"detachFromDevice: the device is not attached$"):
        model.detachFromDevice()
    model.destroy()
    assert not model.isCompiled()
    with pytest.raises(IpuError, match=r"the trainingModel was destroyed: make a new one of the model$"):
        model(torch.ones(2, 2))


def test_docs_session():
    """docs/poptorch.md's Python session, run as a doctest."""
    doc = (Path(__file__).parents[2] / "docs" / "poptorch.md").read_text()
    (session,) = re.findall(r"```pycon\n(.*?)```", doc, re.S)
    test = doctest.DocTestParser().get_doctest(session, {}, "docs/poptorch.md", "docs/poptorch.md", 0)
    result = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE).run(test)
    assert result.failed == 0 and result.attempted > 10


class CumulativeBatchNorm(nn.Module):
    """BatchNorm with momentum=None: its factor 1 / num_batches_tracked is read with float(),
    which torch's tracer cannot make a constant of."""

    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3, momentum=None)

    def forward(self, x):
        return self.bn(x).pow(2).mean()


def test_an_untraceable_training_step_names_the_model_line():
    model = poptorch.trainingModel(
        CumulativeBatchNorm(), poptorch.Options().target(TARGET), poptorch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)
    )
    with pytest.raises(IpuError) as refused:
        model(torch.randn(4, 3))
    line = CumulativeBatchNorm.forward.__code__.co_firstlineno + 1
    assert f"cannot trace the training step of CumulativeBatchNorm at {__file__}:{line} (return self.bn(x).pow(2).mean()): " in str(
        refused.value
    )
    assert "\n" not in str(refused.value)


class DictOutputs(nn.Module):
    """A training forward returning its outputs in a dict and a list beside the loss."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 3)

    def forward(self, x, target):
        y = self.fc(x)
        return {"logits": y, "extra": [y.sum(1), y.max()]}, nn.functional.mse_loss(y, target)


def test_training_outputs_in_dicts_and_lists():
    """As PopTorch's: the outputs beside the loss keep forward's structure (they were refused)."""
    torch.manual_seed(0)
    net = DictOutputs()
    reference = copy.deepcopy(net)
    model = poptorch.trainingModel(net, poptorch.Options().target(TARGET), poptorch.optim.SGD(net.parameters(), lr=0.1))
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    for _ in range(2):
        x, target = torch.randn(2, 4), torch.randn(2, 3)
        outputs, loss = model(x, target)
        reference_optimizer.zero_grad()
        expected, expected_loss = reference(x, target)
        expected_loss.backward()
        reference_optimizer.step()
        assert set(outputs) == {"logits", "extra"} and isinstance(outputs["extra"], list)
        torch.testing.assert_close(outputs["logits"], expected["logits"].detach())
        for ours, theirs in zip(outputs["extra"], expected["extra"], strict=True):
            torch.testing.assert_close(ours, theirs.detach())
        torch.testing.assert_close(loss, expected_loss.detach())
