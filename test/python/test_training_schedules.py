"""Schedulers between trainingModel calls: OneCycleLR cycles the learning rate and SGD's momentum
or Adam's betas, all device variables written before the next call (frontends/optimizers.py);
a change of a compiled-in hyper-parameter is refused in one line naming it."""

from __future__ import annotations

import copy

import pytest

from ipu_mlir.target.diagnostics import IpuError

torch = pytest.importorskip("torch")
nn = torch.nn
ipu_torch = pytest.importorskip("ipu_mlir.frontends.torch")

TARGET = "tiny"


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x, labels):  # noqa: ANN001, ANN201
        y = self.fc2(torch.relu(self.fc1(x)))
        return y, nn.functional.cross_entropy(y, labels)


@pytest.mark.parametrize(
    ("make_optimizer", "max_lr"),
    [
        (lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9, nesterov=True), 0.5),
        (lambda params: torch.optim.Adam(params, lr=0.01), 0.05),
        (lambda params: torch.optim.AdamW(params, lr=0.01, weight_decay=0.1), 0.05),
    ],
    ids=["sgd-momentum", "adam-betas", "adamw-betas"],
)
def test_one_cycle_lr_cycles_momentum_and_betas_on_the_device(make_optimizer, max_lr: float) -> None:  # noqa: ANN001
    torch.manual_seed(0)
    net = Classifier()
    reference = copy.deepcopy(net)
    optimizer, torch_optimizer = make_optimizer(net.parameters()), make_optimizer(reference.parameters())
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr, total_steps=8)
    torch_schedule = torch.optim.lr_scheduler.OneCycleLR(torch_optimizer, max_lr, total_steps=8)
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), optimizer)
    x, labels = torch.randn(4, 8), torch.randint(0, 4, (4,))
    for _ in range(5):
        model(x, labels)
        schedule.step()
        torch_optimizer.zero_grad()
        reference(x, labels)[1].backward()
        torch_optimizer.step()
        torch_schedule.step()
    model.copyWeightsToHost()
    for ours, theirs in zip(net.parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)  # Adam: bias correction in f32 here


def test_a_compiled_in_hyper_parameter_changed_is_refused_by_name() -> None:
    net = Classifier()
    optimizer = torch.optim.Adam(net.parameters(), lr=0.01)
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), optimizer)
    x, labels = torch.randn(4, 8), torch.randint(0, 4, (4,))
    model(x, labels)
    optimizer.param_groups[0]["weight_decay"] = 0.01
    with pytest.raises(IpuError, match=r"^error: the optimizer's weight_decay 0 -> 0.01 \(param group 0\) changed after compilation"):
        model(x, labels)
    with pytest.raises(IpuError, match=r"^error: setOptimizer: eps 1e-08 -> 0.001 \(param group 0\): it is compiled into"):
        model.setOptimizer(torch.optim.Adam(net.parameters(), lr=0.01, eps=1e-3))


@pytest.mark.parametrize(
    ("optimizer_class", "options"),
    [("SGD", {"lr": 0.5, "momentum": 0.9}), ("Adam", {"lr": 0.05, "loss_scaling": 64.0}), ("AdamW", {"lr": 0.05})],
)
def test_max_grad_norm_clips_the_global_norm_as_torch_clip_grad_norm(optimizer_class: str, options: dict) -> None:
    """PopTorch's `max_grad_norm` against torch's loop with `clip_grad_norm_` (which divides by
    norm + 1e-6: 1e-6 relative apart); the norms here are 3-10x the limit, so every step clips."""
    poptorch = pytest.importorskip("ipu_mlir.poptorch")
    torch.manual_seed(0)
    net = Classifier()
    reference = copy.deepcopy(net)
    optimizer = getattr(poptorch.optim, optimizer_class)(net.parameters(), max_grad_norm=0.1, **options)
    torch_options = {key: value for key, value in options.items() if key != "loss_scaling"}
    torch_optimizer = getattr(torch.optim, optimizer_class)(reference.parameters(), **torch_options)
    model = ipu_torch.trainingModel(net, ipu_torch.Options().target(TARGET), optimizer)
    x, labels = torch.randn(4, 8) * 4, torch.randint(0, 4, (4,))
    norms = []
    for _ in range(4):
        model(x, labels)
        torch_optimizer.zero_grad()
        reference(x, labels)[1].backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(reference.parameters(), 0.1)))
        torch_optimizer.step()
    assert min(norms) > 0.3
    model.copyWeightsToHost()
    for ours, theirs in zip(net.parameters(), reference.parameters()):
        torch.testing.assert_close(ours, theirs, rtol=1e-4, atol=1e-5)
