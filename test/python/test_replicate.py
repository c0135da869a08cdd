"""ipu-replicate end to end on an m2000: each replica's rows of the output equal, bit for bit, the
unreplicated program's on that slice of the batch (sharded over the replica's share of the IPUs),
match upstream MLIR's ExecutionEngine, and the replicas compute in the same supersteps."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir
from test_shard import _inputs, mlp

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends.api import reference_outputs
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.runtime import api as runtime_api
from ipu_mlir.target import load_target

WIDTHS = [256, 1024, 1024, 1024, 256]
BATCH = 64


def simulate(text: str, pipeline: str):
    with make_context():
        module = ir.Module.parse(text)
        build_pass_manager(pipeline).run(module.operation)
        return runtime_api.load_simulator(module, None, "main", verified=True)


@pytest.mark.parametrize("replicas", [2, 4])
def test_replicas_equal_the_unreplicated_program_on_their_slices(replicas: int) -> None:
    text = mlp(WIDTHS, batch=BATCH)
    inputs = _inputs(text)
    replicated = simulate(text, default_pipeline("m2000", replicas=replicas))
    (got,) = replicated.run(inputs)
    rows = BATCH // replicas
    one = simulate(mlp(WIDTHS, batch=rows), default_pipeline("m2000").replace(",ipu-shard,", f",ipu-shard{{ipus={4 // replicas}}},"))
    for r in range(replicas):
        (expected,) = one.run([inputs[0][r * rows : (r + 1) * rows], *inputs[1:]])
        assert np.array_equal(got[r * rows : (r + 1) * rows], expected), f"replica {r}"
    (reference,) = reference_outputs(text, inputs, "main")
    np.testing.assert_allclose(got, reference, rtol=1e-4, atol=1e-4 * np.abs(reference).max())
    tiles = load_target("m2000").tiles_per_ipu
    busiest = max(
        np.unique(np.flatnonzero(s.compute_cycles_per_tile) // tiles).size
        for s in replicated.profile.steps
        if s.compute_cycles_per_tile is not None
    )
    assert busiest == replicas  # the replicas' first layers in one superstep


def test_replicas_and_micro_batches_together_are_refused_in_inference() -> None:
    from ipu_mlir.lowering.pass_registry import PipelineError

    with pytest.raises(PipelineError, match="pipelined replicas .* are implemented for training only"):
        default_pipeline("m2000", micro_batches=4, replicas=2)
    steps = default_pipeline("m2000", micro_batches=4, replicas=2, training=True)
    assert steps.index("ipu-shard{replicas=2}") < steps.index("ipu-pipeline") < steps.index("ipu-replicate")
