"""Replicas of a pipelined or sharded training step (PopTorch's replicationFactor with
PipelinedExecution or ShardedExecution, docs/many-ipus.md): R replicas of a K-IPU step on R x K
IPUs, each replica's micro-batches through its own pipeline, each IPU's gradients all-reduced
over the ring of IPUs holding the same stage once per update. Checked against PyTorch's loop over
the R x G micro-batches of each step, their mean gradient, by test_training's rule (within 1e-4 of
each tensor's largest magnitude after 3 steps)."""

from __future__ import annotations

import copy
import os
import re

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from test_sharded_training import MLP, Transformer  # noqa: E402
from test_training import relative_difference  # noqa: E402

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.target.diagnostics import IpuError  # noqa: E402


def train_replicated(model, make_optimizer, batches, options, replicas, target, accumulation, noise=None):
    """(simulated losses, largest relative difference over the parameters, the L3 program):
    `batches` (one tuple per call, one update each) through `replicas` replicas and through
    PyTorch's loop over the call's replicas x accumulation micro-batches; each replica's loss
    checked against its slice's."""
    reference = copy.deepcopy(model).train()
    optimizer, reference_optimizer = make_optimizer(model), make_optimizer(reference)
    options.replicationFactor(replicas).target(target).Training.gradientAccumulation(accumulation)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=optimizer)
    programs = []
    inner = trained._compile_program or ipu_torch.training._compile
    trained._compile_program = lambda *a, **k: programs.append(inner(*a, **k)) or programs[-1]
    losses = []
    for batch in batches:
        result = trained(*batch)
        loss = result[-1] if isinstance(result, tuple) else result
        assert loss.shape == (replicas,)  # the last micro-batch's loss on each replica
        losses.append(loss.detach())
        # the host batch is G micro-batches of the replicas' R slices each (PopTorch's order)
        micro = [tuple(value.chunk(accumulation)[g] for value in batch) for g in range(accumulation)]
        reference_optimizer.zero_grad()
        for inputs in micro:
            last = []
            for replica in range(replicas):
                result = reference(*(value.chunk(replicas)[replica] for value in inputs))
                loss = result[-1] if isinstance(result, tuple) else result
                last.append(loss.detach())
                (loss / (accumulation * replicas)).backward()
        reference_optimizer.step()
        # each replica's loss is its own slice's: the slices went to the right replicas
        assert torch.allclose(losses[-1], torch.stack(last), rtol=1e-4, atol=1e-6), (losses[-1], last)
    trained.copyWeightsToHost()
    ours, theirs = dict(model.state_dict()), reference.state_dict()
    for name, part in (noise or {}).items():
        ours[name], theirs[name] = ours[name].clone(), theirs[name].clone()
        ours[name][part] = theirs[name][part] = 0
    worst = max(relative_difference(ours[name], theirs[name]) for name in theirs)
    return losses, worst, str(programs[0])


def pipelined():
    return ipu_torch.Options().setExecutionStrategy(ipu_torch.PipelinedExecution())


def test_mlp_pipelined_over_two_ipus_two_replicas_sgd_momentum():
    """2 replicas x 2 IPUs of an m2000: 3 pipeline stages, so 3 micro-batches a step."""
    torch.manual_seed(0)
    model = MLP()
    ipu_torch.BeginBlock(model.layers[1], ipu_id=1)
    batches = [(torch.randn(24, 8), torch.randn(24, 4)) for _ in range(3)]
    _, worst, program = train_replicated(
        model, lambda m: torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9), batches, pipelined(), 2, "m2000", 3
    )
    assert worst < 1e-4
    rings = re.findall(r'"ipu.ring_all_reduce".*?ring = array<i64: ([\d, ]+)>', program)
    assert sorted(rings) == ["0, 2", "1, 3"]  # each IPU's gradients over the IPUs of its stage


@pytest.mark.skipif(not os.environ.get("IPU_TRAIN_FULL"), reason="9 minutes on a loaded 2-core machine: make train-full")
def test_transformer_pipelined_over_four_ipus_two_replicas_adam():
    """2 replicas x 4 IPUs of a pod16: 7 pipeline stages, 8 micro-batches a step (531 s on this
    machine at load 12, so `make train-full` runs it, `make test` skips it)."""
    torch.manual_seed(2)
    model = Transformer()
    for ipu, layer in enumerate([*model.layers], start=1):
        ipu_torch.BeginBlock(layer, ipu_id=ipu)
    batches = [(torch.randint(0, 32, (32, 8)), torch.randint(0, 32, (32, 8))) for _ in range(3)]
    unused = torch.ones(32, dtype=torch.bool)
    unused[torch.cat([ids.flatten() for ids, _ in batches])] = False
    noise = {"embed.weight": unused, **{f"layers.{k}.self_attn.in_proj_bias": slice(16, 32) for k in range(3)}}
    _, worst, program = train_replicated(
        model, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3), batches, pipelined(), 2, "pod16", 8, noise=noise
    )
    assert worst < 1e-4
    rings = re.findall(r'"ipu.ring_all_reduce".*?ring = array<i64: ([\d, ]+)>', program)
    assert sorted(rings) == ["0, 4", "1, 5", "2, 6", "3, 7"]


def test_mlp_sharded_over_two_ipus_two_replicas_accumulated():
    """ShardedExecution with gradient accumulation: each IPU's all-reduce in an scf.if on the
    last micro-batch of a group (once per update), joined per IPU under that condition."""
    torch.manual_seed(1)
    model = MLP((8, 16, 16, 4))
    ipu_torch.BeginBlock(model.layers[2], ipu_id=1)
    batches = [(torch.randn(8, 8), torch.randn(8, 4)) for _ in range(3)]
    options = ipu_torch.Options().setExecutionStrategy(ipu_torch.ShardedExecution())
    _, worst, program = train_replicated(model, lambda m: torch.optim.Adam(m.parameters(), lr=1e-3), batches, options, 2, "m2000", 2)
    assert worst < 1e-4
    rings = re.findall(r'"ipu.ring_all_reduce".*?ring = array<i64: ([\d, ]+)>', program)
    assert sorted(rings) == ["0, 2", "1, 3"]
    assert program.count("scf.if") >= 2  # the rings run once per update


def test_more_ipus_than_the_target_has_refused():
    torch.manual_seed(0)
    model = MLP()
    ipu_torch.BeginBlock(model.layers[1], ipu_id=1)
    options = pipelined().replicationFactor(4).target("m2000")
    options.Training.gradientAccumulation(3)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=torch.optim.SGD(model.parameters(), lr=0.1))
    with pytest.raises(IpuError) as error:
        trained(torch.randn(48, 8), torch.randn(48, 4))
    message = str(error.value).splitlines()[0]  # the line after it names the op's source
    assert "ipu-replicate: 4 replicas of 2 IPU(s) need 8 IPUs, but target 'm2000' has 4" in message
