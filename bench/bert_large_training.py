"""BERT-Large phase-1 training on a Bow Pod16 (issue 26): 4 replicas x 4-IPU pipelines, seq 128,
simulated sequences per second beside Graphcore's published 5,179 seq/s.

    .venv/bin/python bench/bert_large_training.py [--depths 1] [--accumulation 7 14] [--optimizer lamb]   # 6+ GB: one at a time
    .venv/bin/python bench/bert_large_training.py --report                               # the table of the results so far

What is simulated: one replica's pipelined training step (PopTorch's PipelinedExecution,
lowering/pipeline_training.py) of BERT at BERT-Large's width (hidden 1024, 16 heads, FFN 4096,
vocabulary 30522, seq 128) with `depth` encoder layers on each of a Bow Pod16's first 4 IPUs
(BeginBlock; the embeddings on IPU 0, the heads on IPU 3), micro-batch 1 sequence, f32, LAMB
(Graphcore's optimizer; `--optimizer sgd`: SGD with momentum), G micro-batches a step. The 4
replicas are alike, so one is run; the all-reduce of each IPU's gradients over the ring of the
4 IPUs holding its stage (IPUs s, s + 4, s + 8, s + 12) is priced with the planner's own
pricing of `ipu.ring_all_reduce` (runtime/all_reduce.py) on the gradients' bytes of that IPU,
spread over its tiles, the rings one after another (what ipu-replicate compiles for
`replicationFactor(4)`, docs/many-ipus.md).

Full depth ([3, 7, 7, 7], 24 layers) is not simulated: the unrolled step's compile and load grow
with depth x G beyond what this machine can give one job. docs/many-ipus.md projects it from the
measured rows, each step of the projection labelled.

Departures from Graphcore's run, each an assumption of this bench: f32 (Graphcore: FP16 with
FP32 master weights); micro-batch 1 (Graphcore's is larger); the masked-LM head predicts the
first 20 positions (Graphcore's phase 1 masks 20 tokens of 128) with its own decoder weight on
IPU 3 (BERT ties it to the token embedding, and Graphcore puts it with the embedding on IPU 0);
no dropout (random ops in a pipelined step are refused); the masked-LM loss picks the labels'
log-probabilities by a one-hot product, not cross-entropy's gather (the same value: the other
terms are exact zeros; with the gather, its inputs, 244 KB a tile, took IPU 3's tiles past
their memory). `--frozen both` freezes the two vocabulary-sized weights (the token embedding,
the decoder), `--frozen decoder` the decoder: with them trained, their update and state do not
fit a tile's memory at depth 1 (docs/many-ipus.md, the memory plan's refusals), though their
micro-batches' gradients are now summed as they arrive (lowering/accumulations.py), no longer
in one op reading all G.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch
from mlir import ir
from torch import nn

import ipu_mlir.frontends.torch as ipu_torch
from ipu_mlir.dialects import ipu, make_context
from ipu_mlir.frontends import zoo
from ipu_mlir.poptorch.optim import LAMB
from ipu_mlir.runtime.all_reduce import price_ring_all_reduce
from ipu_mlir.target import load_target

TARGET, REPLICAS, IPUS, SEQ, MASKED = "bowpod16", 4, 4, 128, 20
# The planner's share of each tile: the vocabulary-sized tensors' momentum update (the token
# embedding on IPU 0, the masked-LM decoder on IPU 3, 30522 x 1024 f32 each) needs 425 KB a
# tile at the leanest cut, beyond the default 0.6's 383 KB (GPT-2 small's embedding likewise).
MEMORY_PROPORTION = 0.85
# Graphcore's BERT-Large phase-1 (seq 128) training throughput on a Bow Pod16 (4 replicas x 4
# IPUs), as issue 26 quotes it from Graphcore's performance results page.
PUBLISHED = 5_179
# What `--frozen` freezes, as the report says it.
FROZEN = {"none": "", "decoder": " (decoder frozen)", "both": " (token embedding and decoder frozen)"}
RESULTS = Path(__file__).parent / "results" / "bert_large_training.json"


class Pretraining(nn.Module):
    """BERT with phase 1's two losses: masked-LM cross-entropy on `MASKED` positions, next-sentence
    cross-entropy on the pooled output."""

    def __init__(self, depth: int, frozen: str = "none") -> None:
        super().__init__()
        self.bert, _ = zoo.build("bert_large", seq=SEQ, layers=IPUS * depth, layers_per_ipu=(depth,) * IPUS)
        for parent in self.bert.modules():  # no dropout: a pipelined step refuses random ops
            for name, child in parent.named_children():
                if isinstance(child, nn.Dropout):
                    setattr(parent, name, nn.Identity())
        self.mlm = nn.Linear(1024, 30522)
        self.nsp = nn.Linear(1024, 2)
        if frozen == "both":  # the two vocabulary-sized weights (module docstring)
            self.bert.embeddings.word_embeddings.weight.requires_grad_(False)
        if frozen in ("both", "decoder"):
            self.mlm.weight.requires_grad_(False)

    def forward(self, ids: torch.Tensor, masked_labels: torch.Tensor, next_sentence: torch.Tensor) -> torch.Tensor:
        hidden, pooled = self.bert(ids)
        log_probabilities = self.mlm(hidden[:, :MASKED]).log_softmax(-1)
        # cross-entropy's value without its gather (module docstring): the labels' log-probabilities picked by a one-hot product
        picked = log_probabilities * (masked_labels.unsqueeze(-1) == torch.arange(log_probabilities.shape[-1]))
        mlm = -picked.sum(-1).mean()
        return mlm + nn.functional.cross_entropy(self.nsp(pooled), next_sentence)


def measure(depth: int, accumulation: int, optimizer_name: str, frozen: str) -> dict:
    """One replica's step of G = `accumulation` micro-batches at `depth` layers an IPU: its
    cycles, each IPU's gradient elements, and the phases' seconds."""
    torch.manual_seed(0)
    model = Pretraining(depth, frozen).train()
    ipu_torch.BeginBlock(model.mlm, ipu_id=IPUS - 1)
    options = ipu_torch.Options().target(TARGET).setExecutionStrategy(ipu_torch.PipelinedExecution())
    options.setAvailableMemoryProportion({f"IPU{i}": MEMORY_PROPORTION for i in range(IPUS)})
    options.Training.gradientAccumulation(accumulation)
    trained_parameters = [p for p in model.parameters() if p.requires_grad]
    if optimizer_name == "lamb":
        optimizer = LAMB(trained_parameters, lr=1e-4)
    else:
        optimizer = torch.optim.SGD(trained_parameters, lr=1e-4, momentum=0.9)
    trained = ipu_torch.trainingModel(model, options=options, optimizer=optimizer)
    programs = []
    compile_program = trained._compile_program
    trained._compile_program = lambda *a, **k: programs.append(compile_program(*a, **k)) or programs[-1]
    g = torch.Generator().manual_seed(1)
    batch = (
        torch.randint(0, 30522, (accumulation, SEQ), generator=g),
        torch.randint(0, 30522, (accumulation, MASKED), generator=g),
        torch.randint(0, 2, (accumulation,), generator=g),
    )
    start = time.perf_counter()
    loss = trained(*batch)
    first_call = time.perf_counter() - start
    assert torch.isfinite(loss).all()
    per_ipu = np.zeros(IPUS, np.int64)
    tiles_per_ipu = load_target(TARGET).tiles_per_ipu
    trained_names = {f"param:{name}" for name, p in model.named_parameters() if p.requires_grad}
    for op in programs[0].body.operations:
        if op.operation.name == "ipu.variable" and (variable := ipu.VariableOp(op.operation)).variable_name in trained_names:
            per_ipu[variable.mapping.all_tiles().min_tile // tiles_per_ipu] += int(np.prod(ir.RankedTensorType(variable.type).shape))
    return {
        "depth": depth,
        "accumulation": accumulation,
        "optimizer": optimizer_name,
        "frozen": frozen,
        "step_cycles": trained.profile.cycles,
        "gradient_elements_per_ipu": per_ipu.tolist(),
        "first_call_s": round(first_call, 1),
        **{f"{phase}_s": round(seconds, 1) for phase, seconds in trained.timings.items()},
    }


def all_reduce_cycles(elements_per_ipu: list[int]) -> int:
    """The rings of the 4 IPUs' gradients (f32), one after another, each over the IPUs of its
    stage in the 4 replicas, the gradients spread evenly over their IPU's tiles."""
    target = load_target(TARGET)
    cycles = 0
    with make_context():
        f32 = ir.F32Type.get()
        for ipu, size in enumerate(elements_per_ipu):
            spread = np.zeros(target.num_tiles, np.int64)
            per_tile = -(-size // target.tiles_per_ipu)
            first = ipu * target.tiles_per_ipu
            spread[first : first + target.tiles_per_ipu] = np.clip(size - np.arange(target.tiles_per_ipu) * per_tile, 0, per_tile)
            ring = [ipu + replica * IPUS for replica in range(REPLICAS)]
            for superstep in price_ring_all_reduce({"op": "ipu.ring_all_reduce"}, ring, f32, spread, 4, 1, target):
                cycles += superstep.cycles * superstep.repeat
    return cycles


def full_depth_elements(split: tuple[int, ...] = (3, 7, 7, 7)) -> list[int]:
    """Each IPU's parameter elements of the model at full depth, split as Graphcore ran it: the
    embeddings and the first layers on IPU 0, the pooler and heads with the last layers (built on
    torch's meta device: shapes only)."""
    with torch.device("meta"):
        model = Pretraining(1)
        model.bert.encoder.layer = nn.ModuleList([type(model.bert.encoder.layer[0])(1024, 16, 4096) for _ in range(sum(split))])
    first = np.cumsum((0,) + split)
    per_ipu = [0] * len(split)
    for name, parameter in model.named_parameters():
        parts = name.split(".")
        if parts[:3] == ["bert", "encoder", "layer"]:
            ipu_id = int(np.searchsorted(first, int(parts[3]), side="right")) - 1
        else:
            ipu_id = 0 if parts[:2] == ["bert", "embeddings"] else len(split) - 1
        per_ipu[ipu_id] += parameter.numel()
    return per_ipu


def _setup(row: dict) -> tuple:
    return row["depth"], row["optimizer"], row["frozen"]


def report(rows: list[dict]) -> list[str]:
    """A markdown table of the measured rows: the simulated seq/s of 4 replicas at each depth and
    G (one update: G micro-batches through the pipeline, then the rings); then, for each setup
    measured at two G, its steady state: the cycles a further micro-batch adds to the step."""
    clock = load_target(TARGET).clock_hz
    lines = [
        "| layers an IPU | optimizer | G | step (one replica) | all-reduce (4 rings) | simulated seq/s (4 replicas) | published |",
        "|---|---|---|---|---|---|---|",
    ]
    rows = sorted(rows, key=lambda r: (_setup(r), r["accumulation"]))
    for row in rows:
        seconds = (row["step_cycles"] + row["all_reduce_cycles"]) / clock
        depth, optimizer, frozen = _setup(row)
        lines.append(
            f"| {depth} | {optimizer}{FROZEN[frozen]} | {row['accumulation']} "
            f"| {row['step_cycles']:,} cycles = {row['step_cycles'] / clock * 1e3:.1f} ms "
            f"| {row['all_reduce_cycles']:,} cycles = {row['all_reduce_cycles'] / clock * 1e3:.1f} ms "
            f"| {REPLICAS * row['accumulation'] / seconds:,.1f} | {PUBLISHED:,} |"
        )
    for setup in sorted({_setup(row) for row in rows}):
        measured = [row for row in rows if _setup(row) == setup]
        if len(measured) < 2:
            continue
        first, last = measured[0], measured[-1]
        per_micro_batch = (last["step_cycles"] - first["step_cycles"]) / (last["accumulation"] - first["accumulation"])
        overhead = first["step_cycles"] - first["accumulation"] * per_micro_batch
        lines.append(
            f"depth {setup[0]}, {setup[1]}{FROZEN[setup[2]]}: steady state {per_micro_batch:,.0f} cycles a micro-batch "
            f"(G {first['accumulation']} -> {last['accumulation']}), fill, flush and update {overhead:,.0f} cycles: "
            f"{REPLICAS * clock / per_micro_batch:,.1f} seq/s as G grows (projected, rings and fill amortized)"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--depths", type=int, nargs="+", default=[1], help="encoder layers on each IPU")
    parser.add_argument("--accumulation", type=int, nargs="+", default=[7], help="micro-batches a step (>= 2 x 4 - 1)")
    parser.add_argument("--optimizer", choices=["lamb", "sgd"], default="lamb", help="LAMB (Graphcore's) or SGD with momentum")
    parser.add_argument("--frozen", choices=list(FROZEN), default="none", help="the vocabulary-sized weights frozen")
    parser.add_argument("--report", action="store_true", help="print the table of bench/results/bert_large_training.json only")
    args = parser.parse_args()
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else []
    if args.report:
        elements = full_depth_elements()
        cycles = all_reduce_cycles(elements)
        print("\n".join(report(rows)))
        print(f"full depth [3, 7, 7, 7]: gradient elements per IPU {elements}, {4 * sum(elements):,} bytes; 4 rings {cycles:,} cycles")
        return
    for depth in args.depths:
        for accumulation in args.accumulation:
            row = measure(depth, accumulation, args.optimizer, args.frozen)
            row["all_reduce_cycles"] = all_reduce_cycles(row["gradient_elements_per_ipu"])
            row["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
            print(json.dumps(row), flush=True)
            key = (_setup(row), accumulation)
            rows = [r for r in rows if (_setup(r), r["accumulation"]) != key] + [row]
            RESULTS.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
