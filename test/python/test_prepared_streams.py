"""Host streams of the later plan made once (runtime/streams.py `prepare`): a stream into a
buffer bound to an array keeps its tile-memory view, a stream out keeps its items and where they
lie in a result. Each run still reads the inputs it is given and returns fresh arrays."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.frontends.api import compile_to_program
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.streams import DeviceToHost, HostToDevice
from ipu_mlir.target import load_target

# 67 x 53: edge blocks in both dimensions, so each stream has several classes of blocks
PROGRAM = """
func.func @main(%x: tensor<67x53xf32>, %y: tensor<67x53xf32>) -> tensor<67x53xf32> {
  %e = tensor.empty() : tensor<67x53xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x, %y : tensor<67x53xf32>, tensor<67x53xf32>) outs(%e : tensor<67x53xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %m, %a : f32
    linalg.yield %s : f32
  } -> tensor<67x53xf32>
  return %r : tensor<67x53xf32>
}
"""


@pytest.mark.parametrize("target", ["tiny", "gc200"])
def test_prepared_streams_read_each_runs_inputs_into_fresh_outputs(target):
    simulator = Simulator(compile_to_program(load_module(PROGRAM), target), load_target(target), verified=True)
    rng = np.random.default_rng(6)
    runs = [[rng.standard_normal((67, 53)).astype(np.float32) for _ in range(2)] for _ in range(4)]
    outputs = [simulator.run(inputs)[0] for inputs in runs]
    streams = [step for step in simulator._later.steps if isinstance(step, (HostToDevice, DeviceToHost))]
    assert len(streams) == 3 and all(stream.fixed is not None for stream in streams)  # prepared
    assert sum(len(stream.blocks) for stream in streams) > 3  # edge blocks: several views a stream
    for (x, y), output in zip(runs, outputs):  # each run its own inputs, each output its own array
        np.testing.assert_array_equal(output, x * y + x)
    transposed = [np.asfortranarray(a) for a in runs[0]]  # inputs of other strides: the same values
    np.testing.assert_array_equal(simulator.run(transposed)[0], outputs[0])
