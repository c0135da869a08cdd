"""Lean export (issue 27 point 4) and the models it unlocks over several IPUs (issue 26 point 5),
at reduced size: BERT-Large split [1, 1, 1, 1] over an m2000 by BeginBlock, GPT-2 medium sharded
by memory balance, each against PyTorch. Full size: `make big-models` (bench/big_models.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch
from mlir import ir

from ipu_mlir.dialects.resources import dense_array, is_resource
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.runtime import oracle
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.tools import ipu_run


def _constants(module: ir.Module) -> list[np.ndarray]:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "arith.constant" and is_resource(op.attributes["value"]):
            found.append(dense_array(op.attributes["value"], np.dtype(np.float32)))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return found


def _peak_growth(step) -> int:
    """Bytes the process's resident set grew to at its highest during `step()` (Linux)."""

    def status(field: str) -> int:
        line = next(line for line in Path("/proc/self/status").read_text().splitlines() if line.startswith(field + ":"))
        return int(line.split()[1]) * 1024

    before = status("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")
    step()
    return status("VmHWM") - before


def test_export_shares_the_weights_with_torch() -> None:
    # The blobs are views of the tensors' storage: a weight changed in place after the export
    # shows in the module (a copy, or the hex round trip, would not). GPT-2's causal mask, a
    # boolean buffer torch-mlir converts itself, is read from torch-mlir's blob.
    model, (ids,) = zoo.build("gpt2", **zoo.MODELS["gpt2"].reduced)
    imported = torch_frontend.export(model, ids)
    weight = model.transformer.h[0].mlp.c_fc.weight
    before = [array.copy() for array in _constants(imported)]
    with torch.no_grad():
        weight.add_(1.0)
    changed = [index for index, (old, new) in enumerate(zip(before, _constants(imported))) if not np.array_equal(old, new)]
    assert len(changed) == 1 and np.array_equal(_constants(imported)[changed[0]].reshape(weight.shape), weight.detach().numpy())


def test_export_peak_memory_is_not_a_multiple_of_the_weights() -> None:
    # 64 MiB of weights: printing them as hex and parsing the text again grew the process by
    # more than 2x that; kept as views, the export adds a fraction of them.
    torch.manual_seed(0)
    model = torch.nn.Sequential(*(torch.nn.Linear(2048, 2048, bias=False) for _ in range(4))).eval()
    weights = sum(p.numel() * p.element_size() for p in model.parameters())
    x = torch.randn(2, 2048)
    growth = _peak_growth(lambda: torch_frontend.export(model, x))
    assert growth < 0.5 * weights, f"export grew the process by {growth / weights:.2f}x the weight bytes"


@pytest.mark.parametrize("name", ["bert_large", "gpt2_medium"])
def test_big_model_over_an_m2000_matches_pytorch(name: str) -> None:
    module, inputs = zoo.build(name, **zoo.MODELS[name].reduced)
    compiled = torch_frontend.compile(module, *inputs, target=zoo.MODELS[name].target, use_cache=False)
    got, expected = compiled(*inputs), torch_frontend.run_eager(module, *inputs)
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    for value, reference in zip(got, expected):
        comparison = oracle.compare(value.numpy(), reference.numpy())
        assert comparison.ok, f"{name}: {comparison.describe()}"
    profile = compiled.profile
    assert profile.global_syncs >= 3 and profile.link_bytes > 0  # the activations cross IPU 0 -> 1 -> 2 -> 3


def test_bert_large_blocks_begin_where_begin_block_says() -> None:
    module, inputs = zoo.build("bert_large", **zoo.MODELS["bert_large"].reduced)
    imported = torch_frontend.export(module, *inputs)
    blocks = ir.DictAttr(imported.body.operations[0].attributes["ipu.begin_blocks"])
    assert {named.name: ir.IntegerAttr(named.attr).value for named in blocks} == {
        "encoder.layer.1": 1,
        "encoder.layer.2": 2,
        "encoder.layer.3": 3,
    }
    with pytest.raises(ValueError, match=r"layers_per_ipu \[3, 7, 7, 7\] must be positive counts summing to the 8 layers"):
        zoo.build("bert_large", layers=8)
    with pytest.raises(IpuError, match="BeginBlock: ipu_id must be a non-negative integer, got -1"):
        torch_frontend.BeginBlock(module.encoder.layer[0], ipu_id=-1)


def test_ipu_run_model_bert_large_layers_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert ipu_run.main(["--model", "bert_large", "--layers", "8"]) == 1
    assert capsys.readouterr().err == "ipu-run: error: layers_per_ipu [3, 7, 7, 7] must be positive counts summing to the 8 layers\n"


def test_gpt2_medium_pipelined_over_four_ipus_matches_pytorch() -> None:
    # One block an IPU, 4 micro-batches of the batch of 4 flowing through them (ipu-pipeline).
    module, (ids,) = zoo.build("gpt2_medium", batch=4, **{**zoo.MODELS["gpt2_medium"].reduced, "layers_per_ipu": (1, 1, 1, 1)})
    compiled = torch_frontend.compile(module, ids, target="m2000", micro_batches=4, use_cache=False)
    comparison = oracle.compare(compiled(ids).numpy(), torch_frontend.run_eager(module, ids).numpy())
    assert comparison.ok, comparison.describe()
    # Pipelined: each of its M + S - 1 cycles but the first opens with one link phase (a global
    # sync) for what crosses into it (ipu-schedule merges a cycle's crossings).
    assert compiled.profile.global_syncs >= 4 + 4 - 2


def test_bert_large_pipelined_over_four_ipus_matches_pytorch() -> None:
    # BERT-Large's split [1, 1, 1, 1] by BeginBlock, 4 micro-batches of the batch of 4. Its
    # token-type ids, a zero row broadcast over the batch and looked up in their embedding, are
    # made once at the micro-batch's shape (ipu-pipeline refused them as a value of the whole batch).
    module, (ids,) = zoo.build("bert_large", batch=4, **zoo.MODELS["bert_large"].reduced)
    compiled = torch_frontend.compile(module, ids, target="m2000", micro_batches=4, use_cache=False)
    for value, reference in zip(compiled(ids), torch_frontend.run_eager(module, ids)):
        comparison = oracle.compare(value.numpy(), reference.numpy())
        assert comparison.ok, comparison.describe()
    assert compiled.profile.global_syncs >= 4 + 4 - 2  # a link phase a cycle (M + S - 1), but the first
