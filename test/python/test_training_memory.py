"""Memory of a training step as Poplar plans it (docs/training.md, Memory): recomputation
checkpoints (`recomputationCheckpoint`, frontends/recompute.py) and `setAvailableMemoryProportion`
read by the planner, each checked against PyTorch's own training loop."""

from __future__ import annotations

import copy

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends.recompute import recompute  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402

TARGET = "tiny"  # 16 tiles of 64 KiB: activations of a narrow MLP at a large batch dominate


class DeepMLP(nn.Module):
    """Eight narrow tanh layers: at batch 512 on `tiny`, the activations kept for backward
    outweigh the parameters (8 KiB a tile each against 256 B)."""

    def __init__(self, checkpoints: bool, width: int = 32, depth: int = 8):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.head = nn.Linear(width, 4)
        self.checkpoints = checkpoints

    def forward(self, x, target):
        for index, layer in enumerate(self.layers):
            x = torch.tanh(layer(x))
            if self.checkpoints and index % 2 == 1:
                x = ipu_torch.recomputationCheckpoint(x)
        y = self.head(x)
        return y, nn.functional.mse_loss(y, target)


def train(checkpoints: bool, batch: int, steps: int = 5, proportion: float | None = None):
    """(the trained model's profile, the largest relative parameter difference from PyTorch's
    loop after `steps` SGD steps from the same weights on the same batches)."""
    torch.manual_seed(0)
    net = DeepMLP(checkpoints)
    reference = copy.deepcopy(net)
    options = ipu_torch.Options().target(TARGET)
    if proportion is not None:
        options.setAvailableMemoryProportion({"IPU0": proportion})
    model = ipu_torch.trainingModel(net, options=options, optimizer=torch.optim.SGD(net.parameters(), lr=0.05))
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.05)
    generator = torch.Generator().manual_seed(1)
    for _ in range(steps):
        x, target = torch.randn(batch, 32, generator=generator), torch.randn(batch, 4, generator=generator)
        model(x, target)
        reference_optimizer.zero_grad()
        reference(x, target)[1].backward()
        reference_optimizer.step()
    model.copyWeightsToHost()
    worst = max(
        float((ours - theirs).abs().max() / theirs.abs().max())
        for ours, theirs in zip(net.state_dict().values(), reference.state_dict().values())
    )
    return model.profile, worst


def test_checkpoints_lower_the_peak_and_match_pytorch():
    kept, kept_worst = train(checkpoints=False, batch=512)
    recomputed, recomputed_worst = train(checkpoints=True, batch=512)
    assert kept_worst < 1e-4 and recomputed_worst < 1e-4
    # docs/training.md's table; cycles measured: 232,600 -> 314,957
    assert (kept.peak_memory_per_tile, recomputed.peak_memory_per_tile) == (64_620, 53_868)
    assert recomputed.compute_cycles > kept.compute_cycles  # the recomputed forward is work


def test_checkpoints_let_a_step_that_does_not_fit_run():
    with pytest.raises(IpuError, match=r"Out of memory on tile 0: 68652 bytes used .* activations and inputs live at superstep"):
        train(checkpoints=False, batch=640, steps=1)
    profile, worst = train(checkpoints=True, batch=640)
    assert profile.peak_memory_per_tile == 54_828 and worst < 1e-4  # docs/training.md's table


class CheckpointedCNN(nn.Module):
    """Conv, BatchNorm in train mode (its running statistics updated in forward), max-pool, a
    second conv, a checkpoint after each block."""

    def __init__(self):
        super().__init__()
        self.conv, self.bn, self.pool = nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.MaxPool2d(2)
        self.conv2, self.fc = nn.Conv2d(8, 8, 3, padding=1), nn.Linear(8 * 4 * 4, 10)

    def forward(self, x, labels):
        h = ipu_torch.recomputationCheckpoint(self.pool(torch.relu(self.bn(self.conv(x)))))
        h = ipu_torch.recomputationCheckpoint(torch.relu(self.conv2(h)))
        return nn.functional.cross_entropy(self.fc(self.pool(h).flatten(1)), labels)


class CheckpointedEncoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.first, self.second = (nn.TransformerEncoderLayer(16, 2, 32, dropout=0.0, batch_first=True) for _ in range(2))
        self.head = nn.Linear(16, 4)

    def forward(self, x, target):
        y = self.head(self.second(ipu_torch.recomputationCheckpoint(self.first(x))))
        return y, nn.functional.mse_loss(y, target)


class CheckpointedEmbedding(nn.Module):
    """An embedding looked up at an index computed from the integer input: the backward reads
    that index, recomputed from the input, which must stay an integer."""

    def __init__(self):
        super().__init__()
        self.embedding, self.head = nn.Embedding(12, 8), nn.Linear(8, 4)

    def forward(self, tokens, target):
        y = self.head(torch.tanh(ipu_torch.recomputationCheckpoint(self.embedding(tokens + 1))))
        return y, nn.functional.mse_loss(y, target)


@pytest.mark.parametrize(
    "make, inputs",
    [
        (CheckpointedCNN, lambda g: (torch.randn(4, 3, 16, 16, generator=g), torch.randint(0, 10, (4,), generator=g))),
        (CheckpointedEncoder, lambda g: (torch.randn(2, 6, 16, generator=g), torch.randn(2, 6, 4, generator=g))),
        (CheckpointedEmbedding, lambda g: (torch.randint(0, 10, (2, 5), generator=g), torch.randn(2, 5, 4, generator=g))),
    ],
    ids=["cnn-batchnorm-maxpool", "transformer-encoder", "embedding-of-a-computed-index"],
)
def test_checkpointed_models_match_pytorch(make, inputs):
    torch.manual_seed(0)
    net = make()
    reference = copy.deepcopy(net)
    optimizer = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    model = ipu_torch.trainingModel(net, options=ipu_torch.Options().target(TARGET), optimizer=optimizer)
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.05, momentum=0.9)
    generator = torch.Generator().manual_seed(2)
    for _ in range(5):
        batch = inputs(generator)
        model(*batch)
        reference_optimizer.zero_grad()
        result = reference(*batch)
        (result[-1] if isinstance(result, tuple) else result).backward()
        reference_optimizer.step()
    model.copyWeightsToHost()
    theirs = reference.state_dict()
    for name, ours in net.state_dict().items():
        scale = max(float(theirs[name].double().abs().max()), 1e-12)
        assert float((ours.double() - theirs[name].double()).abs().max()) / scale < 1e-4, name


def test_without_checkpoints_the_graph_is_left_as_it_is():
    from torch.fx.experimental.proxy_tensor import make_fx

    graph = make_fx(lambda x: torch.tanh(x).sum())(torch.randn(4))
    before = graph.code
    assert recompute(graph, 1) == 0 and graph.code == before


def test_recomputation_checkpoint_is_an_identity_in_pytorch():
    x = torch.randn(3, requires_grad=True)
    y = ipu_torch.recomputationCheckpoint(x * 2)
    y.sin().sum().backward()
    assert torch.equal(y, x * 2) and torch.allclose(x.grad, 2 * (x * 2).cos())
    a, b = ipu_torch.recomputationCheckpoint(x, x + 1)
    assert torch.equal(a, x) and torch.equal(b, x + 1)
    assert isinstance(ipu_torch.recomputationCheckpoint([x, x]), list)
    with pytest.raises(IpuError, match="recomputationCheckpoint takes tensors, got int"):
        ipu_torch.recomputationCheckpoint(3)


def test_checkpoints_in_inference_are_identities():
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.first, self.second = nn.Linear(8, 8), nn.Linear(8, 2)

        def forward(self, x):
            return self.second(ipu_torch.recomputationCheckpoint(torch.relu(self.first(x))))

    torch.manual_seed(0)
    net, x = Net().eval(), torch.randn(4, 8)
    model = ipu_torch.inferenceModel(net, ipu_torch.Options().target(TARGET))
    assert torch.allclose(model(x), net(x), rtol=1e-5, atol=1e-6)


def test_available_memory_proportion_is_read_by_the_planner():
    default, default_worst = train(checkpoints=False, batch=256, steps=5)
    smaller, smaller_worst = train(checkpoints=False, batch=256, steps=5, proportion=0.1)
    assert default_worst < 1e-4 and smaller_worst < 1e-4
    # measured: 106 -> 206 supersteps (ops cut into more, smaller pieces), 129,478 -> 174,584 cycles
    assert smaller.supersteps > default.supersteps
    with pytest.raises(IpuError, match=r"does not fit in 1310 bytes per tile .*memory-fraction: setAvailableMemoryProportion 0\.02\)"):
        train(checkpoints=False, batch=256, steps=1, proportion=0.02)


class TiedEmbedding(nn.Module):
    """A language model's head tied to its embedding (GPT-2's): SGD momentum's update of the
    352x128 table reads two gradients (the head's and the lookup's) and the old buffer."""

    def __init__(self):
        super().__init__()
        self.embedding, self.norm = nn.Embedding(352, 128), nn.LayerNorm(128)

    def forward(self, tokens, target):
        logits = self.norm(self.embedding(tokens)) @ self.embedding.weight.t()
        return logits, nn.functional.cross_entropy(logits.flatten(0, 1), target.flatten())


def test_a_momentum_update_written_over_its_buffer_fits_and_matches_pytorch():
    """On tiny (39,321 bytes a tile for an op), the update's pieces are 3 x 11,264 bytes: the
    new momentum is written over the old (lowering/resident.py, `overwritten_variable`).
    Counted as a fourth piece, the step was refused (45,060 bytes)."""
    torch.manual_seed(0)
    net = TiedEmbedding()
    reference = copy.deepcopy(net)
    model = ipu_torch.trainingModel(
        net, options=ipu_torch.Options().target(TARGET), optimizer=torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    )
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9)
    generator = torch.Generator().manual_seed(1)
    for _ in range(3):
        tokens, target = torch.randint(0, 352, (1, 8), generator=generator), torch.randint(0, 352, (1, 8), generator=generator)
        model(tokens, target)
        reference_optimizer.zero_grad()
        reference(tokens, target)[1].backward()
        reference_optimizer.step()
    model.copyWeightsToHost()
    theirs = reference.state_dict()
    for name, ours in net.state_dict().items():
        assert float((ours - theirs[name]).abs().max() / theirs[name].abs().max()) < 1e-4, name
