"""Training replicated over the IPUs of an m2000 (replicationFactor 4) checked against PyTorch's
loop on the 4x batch (docs/many-ipus.md, "Replicated training"): parameters within rtol 1e-4 of
each tensor's largest magnitude after 3 steps, as test_training.py's rule."""

from __future__ import annotations

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.dialects import ipu  # noqa: E402
from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends.joint import build_step  # noqa: E402
from ipu_mlir.frontends.optimizers import rule_of  # noqa: E402
from ipu_mlir.runtime import api as runtime_api  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

REPLICAS, MICRO_BATCH, STEPS = 4, 2, 3


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(16, 32), nn.Linear(32, 8)

    def forward(self, x, y):
        out = self.fc2(torch.relu(self.fc1(x)))
        return out, nn.functional.mse_loss(out, y)


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv, self.bn, self.fc = nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.Linear(4 * 4 * 4, 5)

    def forward(self, x, labels):
        h = nn.functional.max_pool2d(torch.relu(self.bn(self.conv(x))), 2)
        return nn.functional.cross_entropy(self.fc(h.flatten(1)), labels)


def largest_difference(ours: dict, theirs: dict) -> float:
    return max(float((ours[k] - theirs[k]).abs().max() / theirs[k].abs().max().clamp(min=1e-12)) for k in theirs)


def batches(make, count=STEPS):
    generator = torch.Generator().manual_seed(1)
    return [make(generator) for _ in range(count)]


def replicated(model, reduction=None):
    options = ipu_torch.Options().replicationFactor(REPLICAS).target("m2000")
    if reduction is not None:
        options.Training.accumulationAndReplicationReductionType(reduction)
    return ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))


@pytest.mark.parametrize("reduction", ["Mean", "Sum"])
def test_mlp_over_four_replicas_equals_the_step_on_the_four_fold_batch(reduction):
    torch.manual_seed(0)
    model = MLP()
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    trained = replicated(model, getattr(ipu_torch.ReductionType, reduction))
    data = batches(lambda g: (torch.randn(REPLICAS * MICRO_BATCH, 16, generator=g), torch.randn(REPLICAS * MICRO_BATCH, 8, generator=g)))
    for x, y in data:
        out, losses = trained(x, y)
        reference_optimizer.zero_grad()
        reference_out, loss = reference(x, y)
        # Mean: the replicas' mean gradient, the 4x batch's; Sum: their sum, 4 times that
        (loss * (REPLICAS if reduction == "Sum" else 1)).backward()
        reference_optimizer.step()
        assert out.shape == (REPLICAS * MICRO_BATCH, 8) and losses.shape == (REPLICAS,)
        # each replica's loss is its slice's: their mean is the 4x batch's
        assert abs(float(losses.mean()) - float(loss)) < 1e-5
    trained.copyWeightsToHost()
    assert largest_difference(dict(model.state_dict()), reference.state_dict()) < 1e-4
    for variable in trained.step.variables:  # one update, identical on every replica
        if variable.name.startswith("param:"):
            held = trained.device.read_variables(variable.name)
            assert all(np.array_equal(held[0], other) for other in held[1:]), variable.name


def test_device_iterations_and_accumulation_split_each_micro_batch_over_the_replicas():
    """deviceIterations 2 x gradientAccumulation 2 x 2 replicas: the host batch holds 4
    micro-batches of 2 x the micro-batch, each split over the replicas; the Mean of the
    accumulated and replicated gradients is the accumulated mean over whole micro-batches. The
    all-reduce runs once per update, after the accumulation (GCL's), not per micro-batch: a
    call's link bytes are 2 updates' rings."""
    torch.manual_seed(0)
    model = MLP()
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    options = ipu_torch.Options().deviceIterations(2).replicationFactor(2).target("m2000")
    options.Training.gradientAccumulation(2)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    per_call, rows = 4, 2 * MICRO_BATCH
    for x, y in batches(lambda g: (torch.randn(per_call * rows, 16, generator=g), torch.randn(per_call * rows, 8, generator=g)), 2):
        trained(x, y)
        for group in range(2):  # an update per 2 micro-batches
            reference_optimizer.zero_grad()
            for micro in range(2 * group, 2 * group + 2):
                part = slice(micro * rows, (micro + 1) * rows)
                (reference(x[part], y[part])[1] / 2).backward()
            reference_optimizer.step()
        gradient_bytes = 4 * sum(p.numel() for p in model.parameters())
        assert trained.profile.iterations == 4 and trained.profile.link_bytes == 2 * (2 * (2 - 1) * gradient_bytes)
    trained.copyWeightsToHost()
    assert largest_difference(dict(model.state_dict()), reference.state_dict()) < 1e-4
    step = build_step(model, torch.optim.SGD(model.parameters(), lr=0.1), rule_of(reference_optimizer), (x[:2], y[:2]), 2, replicas=2)
    rings = []
    ipu_torch.compile_program(step.module, "m2000", replicas=2).operation.walk(
        lambda op: (op.name == "ipu.ring_all_reduce" and rings.append(op.parent.name)) or 0
    )
    assert rings == ["scf.if"]  # Poplar's If on the group's last micro-batch


def test_batch_norm_statistics_are_each_replicas_own():
    """PopTorch computes BatchNorm's batch statistics per replica: the reference runs each
    replica's slice through the model apart (gradients summed, as the all-reduce does) and
    keeps replica 0's running statistics, as copyWeightsToHost reads them."""
    torch.manual_seed(0)
    model = SmallCNN()
    reference = copy.deepcopy(model)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    trained = replicated(model)
    data = batches(
        lambda g: (torch.randn(REPLICAS * MICRO_BATCH, 3, 8, 8, generator=g), torch.randint(0, 5, (REPLICAS * MICRO_BATCH,), generator=g))
    )
    for x, labels in data:
        trained(x, labels)
        reference_optimizer.zero_grad()
        before = {name: buffer.clone() for name, buffer in reference.named_buffers()}
        for r in reversed(range(REPLICAS)):  # replica 0 last: its running statistics stay
            for name, buffer in reference.named_buffers():
                buffer.copy_(before[name])
            part = slice(r * MICRO_BATCH, (r + 1) * MICRO_BATCH)
            (reference(x[part], labels[part]) / REPLICAS).backward()
        reference_optimizer.step()
    trained.copyWeightsToHost()
    assert largest_difference(dict(model.state_dict()), reference.state_dict()) < 1e-4


def test_ir_does_not_grow_with_the_replicas():
    """One replica's program whatever the count: the same ops for 2 and 4 replicas, one
    ipu.ring_all_reduce for all the gradients (joined, as PopART merges collectives)."""
    torch.manual_seed(0)
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    sample = (torch.randn(MICRO_BATCH, 16), torch.randn(MICRO_BATCH, 8))
    counts = []
    for replicas in (2, 4):
        step = build_step(model, optimizer, rule_of(optimizer), sample, replicas=replicas)
        program = ipu_torch.compile_program(step.module, "m2000", replicas=replicas)
        names = _op_names(program)
        counts.append(len(names))
        assert names.count("ipu.ring_all_reduce") == 1  # fc1 and fc2's weights and biases together
    assert counts[0] == counts[1]


def _op_names(program) -> list[str]:
    names = []
    program.operation.walk(lambda op: names.append(op.name) or 0)
    return names


def test_the_ring_is_priced_over_the_ipu_links():
    """2 (R - 1) ring steps, each every IPU sending 1 / R of the gradients over the links after
    a global sync: the profile's link bytes are 2 (R - 1) x the gradients' bytes."""
    torch.manual_seed(0)
    model = MLP()
    trained = replicated(model)
    trained(torch.randn(REPLICAS * MICRO_BATCH, 16), torch.randn(REPLICAS * MICRO_BATCH, 8))
    gradient_bytes = 4 * sum(p.numel() for p in model.parameters())
    profile = trained.profile
    assert profile.link_bytes == 2 * (REPLICAS - 1) * gradient_bytes
    rings = [s for s in profile.steps if any(op.get("op") == "ipu.ring_all_reduce" for op in s.ops)]
    assert len(rings) == 2 and {s.repeat for s in rings} == {REPLICAS - 1}  # reduce-scatter, all-gather
    assert all(s.sync == "global" and s.link_cycles > 0 for s in rings)


def test_a_lone_simulator_refuses_the_all_reduce():
    torch.manual_seed(0)
    model = MLP()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    step = build_step(model, optimizer, rule_of(optimizer), (torch.randn(2, 16), torch.randn(2, 8)), replicas=4)
    program = ipu_torch.compile_program(step.module, "m2000", replicas=4)
    simulator = runtime_api.load_simulator(program, "m2000")
    for variable in step.variables:
        simulator.write_variable(variable.name, variable.value)
    with pytest.raises(IpuError, match=r"all-reduces over 4 replicas: run the program with runtime.replicated.ReplicatedSimulator"):
        simulator.run([np.zeros((2, 16), np.float32), np.zeros((2, 8), np.float32)])
    assert ipu.AllReduceOp  # the L1 op the front end emits


@pytest.mark.parametrize(
    ("replicas", "target", "message"),
    [
        (3, "m2000", r"ipu-replicate: replicas=3 is not a power of two \(GCL's ring all-reduce needs one\)"),
        (4, "gc200", r"ipu-shard: ipus=1 over replicas=4, but target 'gc200' has 1 IPU\(s\)"),
    ],
)
def test_refusals(replicas, target, message):
    model = MLP()
    options = ipu_torch.Options().replicationFactor(replicas).target(target)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(IpuError, match=message):
        trained(torch.randn(replicas * 2, 16), torch.randn(replicas * 2, 8))


def test_a_batch_not_divisible_by_the_replicas_is_refused():
    model = MLP()
    trained = replicated(model)
    with pytest.raises(IpuError, match=r"input #0: its first axis \(6x16 float32\) must hold 4 micro-batches .*x replicationFactor\)"):
        trained(torch.randn(6, 16), torch.randn(6, 8))


def test_a_depthwise_convolution_traces_with_replicas():
    """The rewritten grouped convolution backward (frontends/joint.py) returns its weight
    gradient contiguous, as ATen's: the replicas' flattening view was recorded on it (before,
    MobileNetV2's replicated step stopped: "Cannot view a tensor with shape [48, 1, 3, 3]")."""

    class Depthwise(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(4, 4, 3, stride=2, padding=1, groups=4)  # MobileNetV2's downsampling

        def forward(self, x, y):
            return nn.functional.mse_loss(self.conv(x), y)

    model = Depthwise()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    step = build_step(model, optimizer, rule_of(optimizer), (torch.randn(2, 4, 8, 8), torch.randn(2, 4, 4, 4)), replicas=2)
    assert any(op.operation.name == "ipu.all_reduce" for op in step.module.body.operations[0].regions[0].blocks[0].operations)
