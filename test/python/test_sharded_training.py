"""Training over the IPUs of an m2000 with PopTorch's ShardedExecution (docs/many-ipus.md):
each layer's forward, backward and update on the IPU holding its weights, checked against
PyTorch's own training loop by test_training's rule, and the device variables checked to lie on
their layer's IPU."""

from __future__ import annotations

import re

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_training import train_both  # noqa: E402

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.target import load_target  # noqa: E402

TILES_PER_IPU = load_target("m2000").chip.num_tiles


class MLP(nn.Module):
    def __init__(self, widths=(8, 16, 4)):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))

    def forward(self, x, target):
        for index, layer in enumerate(self.layers):
            x = layer(x) if index == len(self.layers) - 1 else torch.relu(layer(x))
        return x, nn.functional.mse_loss(x, target)


class Transformer(nn.Module):
    """An embedding, three encoder layers and a head: four blocks for four IPUs."""

    def __init__(self, vocab=32, width=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.layers = nn.ModuleList(nn.TransformerEncoderLayer(width, 2, 32, dropout=0.0, batch_first=True) for _ in range(3))
        self.head = nn.Linear(width, vocab)

    def forward(self, ids, labels):
        x = self.embed(ids)
        for layer in self.layers:
            x = layer(x)
        logits = self.head(x)
        return nn.functional.cross_entropy(logits.flatten(0, 1), labels.flatten())


def variable_ipus(program):
    """The IPU each device variable's first tile is on, by name, from the L3 program."""
    found = re.findall(r'mapping = \{[^}]*tiles = array<i64: (\d+)[^}]*\}, name = "([^"]+)"', str(program))
    return {name: int(tile) // TILES_PER_IPU for tile, name in found}


def train_sharded(model, make_optimizer, batches, options=None, **kwargs):
    """train_both on an m2000 (ShardedExecution unless `options` say otherwise); also the variables' IPUs."""
    programs = []
    original = ipu_torch.trainingModel

    def capturing(*args, **options):
        trained = original(*args, **options)
        inner = trained._compile_program
        trained._compile_program = lambda *a, **k: programs.append(inner(*a, **k)) or programs[-1]
        return trained

    options = options or ipu_torch.Options().setExecutionStrategy(ipu_torch.ShardedExecution())
    ipu_torch.trainingModel = capturing
    try:
        result = train_both(model, make_optimizer, batches, options=options, target="m2000", **kwargs)
    finally:
        ipu_torch.trainingModel = original
    return result, variable_ipus(programs[0])


def layer_of(variable):
    """`opt:exp_avg:layers.1.weight` -> `layers.1`."""
    return variable.rpartition(":")[2].rpartition(".")[0]


def test_mlp_over_two_ipus_with_begin_block_sgd_momentum():
    torch.manual_seed(0)
    model = MLP()
    ipu_torch.BeginBlock(model.layers[1], ipu_id=1)
    batches = [(torch.randn(4, 8), torch.randn(4, 4)) for _ in range(3)]
    (losses, reference, worst), ipus = train_sharded(model, lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), batches)
    assert worst < 1e-4 and losses == pytest.approx(reference, rel=1e-5)
    placed = {name: ipu for name, ipu in ipus.items() if name.startswith(("param:", "opt:momentum_buffer:"))}
    assert len(placed) == 8
    assert placed == {name: 0 if layer_of(name) == "layers.0" else 1 for name in placed}


@pytest.mark.parametrize("accumulation", [1, 2])
def test_mlp_balanced_over_four_ipus_adam(accumulation):
    """No BeginBlock: the forward balanced by memory over the 4 IPUs; each layer's Adam state
    (and accumulated gradients) with its parameters."""
    torch.manual_seed(1)
    model = MLP((32, 64, 64, 64, 8))
    batches = [(torch.randn(8 * accumulation, 32), torch.randn(8 * accumulation, 8)) for _ in range(3)]
    (_, _, worst), ipus = train_sharded(model, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3), batches, accumulation=accumulation)
    assert worst < 1e-4
    by_layer = {}
    for name, ipu in ipus.items():
        if name.startswith(("param:", "opt:exp_avg", "accum:grad:")):
            by_layer.setdefault(layer_of(name), set()).add(ipu)
    assert all(len(found) == 1 for found in by_layer.values()), by_layer
    assert len({ipu for found in by_layer.values() for ipu in found}) >= 3  # spread over the IPUs


def test_transformer_over_four_ipus_with_begin_blocks_adam():
    torch.manual_seed(2)
    model = Transformer()
    for ipu, layer in enumerate([*model.layers], start=1):
        ipu_torch.BeginBlock(layer, ipu_id=ipu)
    batches = [(torch.randint(0, 32, (2, 8)), torch.randint(0, 32, (2, 8))) for _ in range(3)]
    # left out, as test_training does: elements whose gradient is zero in exact arithmetic (the
    # embedding rows no batch uses, the key bias), where Adam scales rounding noise up to +-lr
    unused = torch.ones(32, dtype=torch.bool)
    unused[torch.cat([ids.flatten() for ids, _ in batches])] = False
    noise = {"embed.weight": unused, **{f"layers.{k}.self_attn.in_proj_bias": slice(16, 32) for k in range(3)}}
    (losses, reference, worst), ipus = train_sharded(model, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3), batches, noise=noise)
    assert worst < 1e-4 and losses == pytest.approx(reference, rel=1e-4)
    expected = {"embed": 0, "layers.0": 1, "layers.1": 2, "layers.2": 3, "head": 3}
    for name, ipu in ipus.items():
        if name.startswith(("param:", "opt:exp_avg")):
            layer = layer_of(name)
            block = next(block for block in expected if layer == block or layer.startswith(block + "."))
            assert ipu == expected[block], (name, ipu)
