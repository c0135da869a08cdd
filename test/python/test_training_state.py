"""The optimizer's state between the host and the device (frontends/training.py, as PopTorch's):
trained on the device, carried on by torch's own loop on the host, and back.

Each test compares with PyTorch's loop over all the steps from the same initial weights on the
same batches: every parameter and every optimizer state tensor within 1e-4 of its tensor's
largest magnitude (f32), test/python/test_training.py's rule."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_training import MLP, batches, relative_difference  # noqa: E402

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

OPTIMIZERS = {
    "sgd-nesterov": lambda m: torch.optim.SGD(m.parameters(), lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-2),
    "adam": lambda m: torch.optim.Adam(m.parameters(), lr=0.01, weight_decay=1e-2),
    "adamw": lambda m: torch.optim.AdamW(m.parameters(), lr=0.01, betas=(0.8, 0.99)),
}


def data(calls, per_call=1, seed=3):
    return batches(seed, calls, lambda g: torch.randn(4 * per_call, 8, generator=g), lambda g: torch.randn(4 * per_call, 4, generator=g))


def host_steps(model, optimizer, steps):
    for x, target in steps:
        optimizer.zero_grad()
        model(x, target)[1].backward()
        optimizer.step()


def micro(calls):
    """Each call's micro-batches of 4 rows, in order."""
    return [tuple(value[rows : rows + 4] for value in call) for call in calls for rows in range(0, len(call[0]), 4)]


def worst(model, optimizer, reference, reference_optimizer):
    """The largest relative difference over the parameters and the optimizer states."""
    ours, theirs = optimizer.state_dict(), reference_optimizer.state_dict()
    assert ours["state"].keys() == theirs["state"].keys()
    differences = [relative_difference(a, b) for a, b in zip(model.state_dict().values(), reference.state_dict().values())]
    for index, state in theirs["state"].items():
        assert ours["state"][index].keys() == state.keys(), index
        differences += [relative_difference(ours["state"][index][kind], value) for kind, value in state.items()]
    return max(differences)


def compiled(make, options=None):
    torch.manual_seed(0)
    model = MLP()
    reference = copy.deepcopy(model)
    optimizer, reference_optimizer = make(model), make(reference)
    trained = ipu_torch.trainingModel(model, options=(options or ipu_torch.Options()).target("tiny"), optimizer=optimizer)
    return model, optimizer, trained, reference, reference_optimizer


@pytest.mark.parametrize("kind", OPTIMIZERS)
def test_device_steps_then_host_steps_match_pytorch(kind):
    """4 steps on the device (2 calls of 2 device iterations), copyWeightsToHost, then 3 steps
    of torch's loop with the same optimizer: torch's 7 steps."""
    model, optimizer, trained, reference, reference_optimizer = compiled(OPTIMIZERS[kind], ipu_torch.Options().deviceIterations(2))
    device_calls, host_calls = data(2, per_call=2), data(3, seed=4)
    for call in device_calls:
        trained(*call)
    trained.copyWeightsToHost()
    host_steps(model, optimizer, host_calls)
    host_steps(reference, reference_optimizer, micro(device_calls) + host_calls)
    assert worst(model, optimizer, reference, reference_optimizer) < 1e-4


def test_state_dict_reads_the_device_without_copying_weights():
    """optimizer.state_dict() after a call is the device's state (a checkpoint), as PopTorch's."""
    model, optimizer, trained, reference, reference_optimizer = compiled(OPTIMIZERS["adam"])
    calls = data(3)
    for call in calls:
        trained(*call)
    host_steps(reference, reference_optimizer, calls)
    ours, theirs = optimizer.state_dict()["state"], reference_optimizer.state_dict()["state"]
    assert float(ours[0]["step"]) == 3.0 and ours[0]["step"].dtype == theirs[0]["step"].dtype
    assert max(relative_difference(ours[i][k], theirs[i][k]) for i in theirs for k in ("exp_avg", "exp_avg_sq")) < 1e-4
    trained.copyWeightsToHost()
    assert worst(model, optimizer, reference, reference_optimizer) < 1e-4


@pytest.mark.parametrize("kind", ["sgd-nesterov", "adamw"])
def test_a_checkpoint_loaded_on_the_host_reaches_the_device(kind):
    """The device trains 2 steps; the host then loads a checkpoint of torch's 3 steps
    (load_state_dict of the model and of the optimizer): 2 more device steps continue from it."""
    model, optimizer, trained, reference, reference_optimizer = compiled(OPTIMIZERS[kind])
    for call in data(2, seed=5):
        trained(*call)
    first, then = data(3), data(2, seed=6)
    host_steps(reference, reference_optimizer, first)
    trained.load_state_dict(reference.state_dict())
    optimizer.load_state_dict(reference_optimizer.state_dict())
    for call in then:
        trained(*call)
    host_steps(reference, reference_optimizer, then)
    trained.copyWeightsToHost()
    assert worst(model, optimizer, reference, reference_optimizer) < 1e-4


def test_a_parameter_changed_on_the_host_reaches_the_device_by_copy_weights_to_device():
    model, optimizer, trained, reference, reference_optimizer = compiled(OPTIMIZERS["sgd-nesterov"])
    first, then = data(2), data(2, seed=7)
    for call in first:
        trained(*call)
    host_steps(reference, reference_optimizer, first)
    trained.copyWeightsToHost()
    with torch.no_grad():
        for net in (model, reference):
            net.fc1.weight.mul_(0.5)
            net.fc2.bias.fill_(0.25)
    trained.copyWeightsToDevice()
    for call in then:
        trained(*call)
    host_steps(reference, reference_optimizer, then)
    trained.copyWeightsToHost()
    assert worst(model, optimizer, reference, reference_optimizer) < 1e-4


def test_set_optimizer_hands_the_state_over():
    """setOptimizer: the old optimizer gets the device's state; a new one without state keeps
    the device's, and its state_dict() then follows the device."""
    model, optimizer, trained, reference, reference_optimizer = compiled(OPTIMIZERS["adam"])
    first, then = data(2), data(2, seed=8)
    for call in first:
        trained(*call)
    host_steps(reference, reference_optimizer, first)
    fresh = OPTIMIZERS["adam"](model)
    trained.setOptimizer(fresh)
    assert float(optimizer.state_dict()["state"][0]["step"]) == 2.0
    for call in then:
        trained(*call)
    host_steps(reference, reference_optimizer, then)
    trained.copyWeightsToHost()
    assert worst(model, fresh, reference, reference_optimizer) < 1e-4
    assert float(optimizer.state_dict()["state"][0]["step"]) == 2.0  # the old one no longer follows the device


def test_model_state_dict_reads_the_device():
    """model.state_dict() after a call is the device's weights without copyWeightsToHost, as
    PopTorch's wrapped model's; the parameters themselves are not copied until then."""
    model, optimizer, trained, reference, reference_optimizer = compiled(OPTIMIZERS["sgd-nesterov"])
    calls = data(2)
    before = model.fc1.weight.detach().clone()
    for call in calls:
        trained(*call)
    host_steps(reference, reference_optimizer, calls)
    assert torch.equal(model.fc1.weight, before)
    saved = model.state_dict()
    assert max(relative_difference(saved[name], value) for name, value in reference.state_dict().items()) < 1e-4
    assert not torch.equal(model.fc1.weight, before)
