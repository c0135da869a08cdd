"""Pipelined training (PopTorch's PipelinedExecution with gradient accumulation) over the IPUs of
an m2000 (docs/many-ipus.md): a step's micro-batches flow through the stages in PopART's order,
each layer's gradients summed on its IPU, one update a step; checked against PyTorch's loop with
the same gradient accumulation (their mean, PopTorch's default reduction) by test_training's
rule."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_sharded_training import MLP, Transformer, layer_of, train_sharded  # noqa: E402

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402


def pipelined():
    return ipu_torch.Options().setExecutionStrategy(ipu_torch.PipelinedExecution())


def test_mlp_over_two_ipus_sgd_momentum():
    """2 IPUs: 3 pipeline stages, so 3 micro-batches a step; 2 device iterations a call."""
    torch.manual_seed(0)
    model = MLP()
    ipu_torch.BeginBlock(model.layers[1], ipu_id=1)
    batches = [(torch.randn(24, 8), torch.randn(24, 4)) for _ in range(2)]
    (losses, reference, worst), ipus = train_sharded(
        model,
        lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9),
        batches,
        options=pipelined().deviceIterations(2),
        accumulation=3,
    )
    assert worst < 1e-4 and losses == pytest.approx(reference, rel=1e-5)
    placed = {name: ipu for name, ipu in ipus.items() if name.startswith(("param:", "opt:momentum_buffer:"))}
    assert placed == {name: 0 if layer_of(name) == "layers.0" else 1 for name in placed}


def test_transformer_over_four_ipus_adam():
    """4 IPUs: 7 pipeline stages, 8 micro-batches a step."""
    torch.manual_seed(2)
    model = Transformer()
    for ipu, layer in enumerate([*model.layers], start=1):
        ipu_torch.BeginBlock(layer, ipu_id=ipu)
    batches = [(torch.randint(0, 32, (16, 8)), torch.randint(0, 32, (16, 8))) for _ in range(3)]
    unused = torch.ones(32, dtype=torch.bool)
    unused[torch.cat([ids.flatten() for ids, _ in batches])] = False
    noise = {"embed.weight": unused, **{f"layers.{k}.self_attn.in_proj_bias": slice(16, 32) for k in range(3)}}
    (losses, reference, worst), _ = train_sharded(
        model, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3), batches, options=pipelined(), accumulation=8, noise=noise
    )
    assert worst < 1e-4 and losses == pytest.approx(reference, rel=1e-4)


@pytest.mark.parametrize("accumulation", [1, 2])
def test_too_few_micro_batches_refused(accumulation):
    torch.manual_seed(0)
    model = MLP()
    ipu_torch.BeginBlock(model.layers[1], ipu_id=1)
    options = pipelined().target("m2000")
    options.Training.gradientAccumulation(accumulation)
    with pytest.raises(IpuError) as error:
        trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
        trained(torch.randn(4 * accumulation, 8), torch.randn(4 * accumulation, 4))
    message = str(error.value).splitlines()[0]
    assert "pipeline stages" in message and "PopART's rule" in message
    if accumulation == 2:
        assert "gradient accumulation of 2 micro-batches is fewer than the 3 pipeline stages" in message


def test_running_gradient_sum_reads_one_micro_batch_at_a_time():
    """Each micro-batch's gradient is added into the running sum as it arrives: after
    ipu-convert-to-ipu the step is one loop round one micro-batch (frontends/accumulation_loop.py),
    the last micro-batch after it, and no op reads more than the sum, a gradient and the momentum
    of the embedding's size; when the front end unrolled the micro-batches, fused additions read all G gradients at once
    (BERT-Large's token embedding at G 7: 765 KB a tile)."""
    from mlir import ir

    from ipu_mlir.frontends.api import copy_module
    from ipu_mlir.lowering.pass_registry import build_pass_manager

    class Embedded(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.Sequential(nn.Embedding(64, 16), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 4))

        def forward(self, ids, target):
            return nn.functional.mse_loss(self.layers(ids), target)

    torch.manual_seed(0)
    model = Embedded()
    ipu_torch.BeginBlock(model.layers[3], ipu_id=1)
    options = pipelined().target("m2000")
    options.Training.gradientAccumulation(5)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9))
    trained(torch.randint(0, 64, (5, 8)), torch.randn(5, 8, 4))
    module = copy_module(trained.step.module)
    pipeline = "builtin.module(ipu-convert-tm-tensor,ipu-select-entry,symbol-dce,ipu-index-to-iota,ipu-fold-constants,ipu-convert-to-ipu)"
    with module.context, ir.Location.unknown():
        build_pass_manager(pipeline).run(module.operation)
        embedding = ir.RankedTensorType.get([64, 16], ir.F32Type.get())
    ops = _nested(module.body.operations[-1].regions[0].blocks[0])
    loops = [op for op in ops if "ipu.accumulate" in op.attributes]
    assert len(loops) == 1  # the micro-batches: one loop round one micro-batch's forward and backward
    # it yields the gradient sums alone: a loss yielded too would keep the MSE's difference out of
    # the backward's fusion (the loss is the last micro-batch's, after the loop)
    # (and the loop's counter, a tensor<i64> after ipu-convert-to-ipu)
    floats = [r for r in loops[0].results if isinstance(ir.RankedTensorType(r.type).element_type, ir.FloatType)]
    assert len(floats) == len(list(model.parameters()))
    inputs = [list(op.operands)[: len(op.operands) - len(op.results)] if op.name == "linalg.generic" else op.operands for op in ops]
    read = [sum(operand.type == embedding for operand in operands) for operands in inputs if operands is not loops[0].operands]
    assert max(read) <= 3


def _nested(block):
    """The ops of `block` and of the blocks of its ops' regions, but not those inside a generic."""
    ops = []
    for op in block.operations:
        ops.append(op)
        if op.name != "linalg.generic":
            ops += [inner for region in op.regions for nested in region.blocks for inner in _nested(nested)]
    return ops


class Balanced(nn.Module):
    """Four alike layers, one an IPU: a balanced 4-stage pipeline."""

    def __init__(self, width: int = 256):
        super().__init__()
        self.layers = nn.ModuleList(nn.Linear(width, width) for _ in range(4))

    def forward(self, x, target):
        for layer in self.layers:
            x = torch.relu(layer(x))
        return nn.functional.mse_loss(x, target)


def _step_cycles(pipelined: bool, accumulation: int, rows: int = 64, width: int = 256) -> int:
    torch.manual_seed(0)
    model = Balanced(width)
    for ipu, layer in enumerate(model.layers[1:], start=1):
        ipu_torch.BeginBlock(layer, ipu_id=ipu)
    strategy = ipu_torch.PipelinedExecution() if pipelined else ipu_torch.ShardedExecution()
    options = ipu_torch.Options().target("m2000").setExecutionStrategy(strategy)
    options.Training.gradientAccumulation(accumulation)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9))
    trained(torch.randn(rows * accumulation, width), torch.randn(rows * accumulation, width))
    return trained.profile.cycles


def test_steady_state_costs_the_slowest_stage_not_their_sum():
    """A further micro-batch of a balanced 4-stage pipeline adds one main-phase cycle: about the
    slowest stage and one link phase, not the sum of the stages that the sharded step pays for a
    micro-batch (each IPU's work in parallel in the cycle's supersteps, the cycle's crossings in
    one link phase: lowering/pipeline_training.py, ipu-schedule)."""
    per_micro_batch = _step_cycles(True, 8) - _step_cycles(True, 7)
    stages_summed = _step_cycles(False, 1)
    assert stages_summed / 4 < per_micro_batch < 0.4 * stages_summed, (per_micro_batch, stages_summed)
