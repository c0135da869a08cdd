"""One load (issue 27): a simulator plans the checked run at load and the later runs' plan (tiles
in classes of replicas, runtime/replicas.py) when a second run first needs it, so a program run
once (`ipu-run`) plans once; the later plan, made after the checked run, gives the bytes and
the profile it gave when both were made at load. A weight written into tile memory at load
leaves the host's side: the simulator holds one copy of it, not two."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.frontends.api import compile_to_program
from ipu_mlir.runtime import planner as planner_module
from ipu_mlir.runtime import simulator as simulator_module
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import load_target

RNG = np.random.default_rng(27)
W1, B1, W2 = (RNG.standard_normal(shape).astype(np.float32) for shape in ((32, 64), (64,), (64, 16)))


def _dense(array: np.ndarray) -> str:
    shape = "x".join(map(str, array.shape))
    return f'dense<"0x{array.tobytes().hex().upper()}"> : tensor<{shape}xf32>'


MLP = f"""module {{
  func.func @main(%x: tensor<8x32xf32>) -> tensor<8x16xf32> {{
    %zero = arith.constant 0.0 : f32
    %w1 = arith.constant {_dense(W1)}
    %b1 = arith.constant {_dense(B1)}
    %w2 = arith.constant {_dense(W2)}
    %e1 = tensor.empty() : tensor<8x64xf32>
    %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %m1 = linalg.matmul ins(%x, %w1 : tensor<8x32xf32>, tensor<32x64xf32>) outs(%f1 : tensor<8x64xf32>) -> tensor<8x64xf32>
    %h = linalg.generic {{indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}}
        ins(%m1, %b1 : tensor<8x64xf32>, tensor<64xf32>) outs(%e1 : tensor<8x64xf32>) {{
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }} -> tensor<8x64xf32>
    %e2 = tensor.empty() : tensor<8x16xf32>
    %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %y = linalg.matmul ins(%h, %w2 : tensor<8x64xf32>, tensor<64x16xf32>) outs(%f2 : tensor<8x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }}
}}
"""


# tiny sums the second matmul's partials in place (runtime/partials_in_place.py); gc200 moves the
# weights into their matmuls' layouts once, at load (`Planner._hoisted`): each a step of the later plan only
@pytest.fixture(scope="module", params=["tiny", "gc200"])
def program(request):
    return compile_to_program(load_module(MLP), request.param), request.param


def loaded(program) -> Simulator:
    module, target = program
    return Simulator(module, load_target(target), verified=True)


def test_a_program_run_once_is_planned_once(program, monkeypatch):
    plans = []
    planner = simulator_module.Planner
    monkeypatch.setattr(simulator_module, "Planner", lambda *args: plans.append(len(args)) or planner(*args))
    simulator = loaded(program)
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    simulator.run([x])
    assert len(plans) == 1 and simulator._later_plan is None  # the checked plan only
    simulator.run([x])
    simulator.run([x])
    assert len(plans) == 2  # the later plan, made once, for the second run


def test_the_later_plan_is_derived_once_however_many_runs(program, monkeypatch):
    """Each plan is built once: the checked one at load, the later one (tile classes, the
    elision of partial sums' copies, a planner walk) at the second run, never again."""
    calls = {"Planner": 0, "tile_classes": 0, "elide": 0}
    for name in calls:
        original = getattr(simulator_module, name)

        def counted(*args, _name=name, _original=original):
            calls[_name] += 1
            return _original(*args)

        monkeypatch.setattr(simulator_module, name, counted)
    simulator = loaded(program)
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    outputs = [simulator.run([x])[0].tobytes()]
    assert calls == {"Planner": 1, "tile_classes": 0, "elide": 0}
    outputs += [simulator.run([x])[0].tobytes() for _ in range(4)]
    assert calls == {"Planner": 2, "tile_classes": 1, "elide": 1}
    assert len(set(outputs)) == 1


def test_the_later_plan_made_when_needed_gives_the_bytes_it_gave_made_at_load(program):
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    expected = np.maximum(x @ W1 + B1, 0) @ W2
    at_load, when_needed = loaded(program), loaded(program)
    at_load._later  # noqa: B018 (planned now, before the checked run, as loading did before issue 27)
    first = [at_load.run([x])[0] for _ in range(3)]
    second = [when_needed.run([x])[0] for _ in range(3)]
    assert when_needed.elided == at_load.elided
    np.testing.assert_allclose(first[0], expected, rtol=1e-5, atol=1e-4)
    assert {a.tobytes() for a in first + second} == {first[0].tobytes()}
    assert when_needed.profile.to_json() == at_load.profile.to_json()


def test_a_weight_in_tile_memory_is_not_held_on_the_host_too(program, monkeypatch):
    reads = []
    read = planner_module._host_constant
    monkeypatch.setattr(planner_module, "_host_constant", lambda *args: reads.append(1) or read(*args))
    simulator = loaded(program)
    at_load = len(reads)
    loads = simulator._planner.loads
    assert loads and not any(stream.value in simulator._constants for stream in loads)  # the three weights: in tile memory only
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    expected = np.maximum(x @ W1 + B1, 0) @ W2
    for _ in range(3):  # the later plan reads the weights it streams again from the program
        np.testing.assert_allclose(simulator.run([x])[0], expected, rtol=1e-5, atol=1e-4)
    assert simulator._planner is None  # the checked plan's planner, its buffers with it, gone once the later plan is made
    assert len(reads) == at_load  # the later plan takes the weights' arrays from the checked plan: none read again


def test_a_loaded_weight_the_later_plan_streams_again_is_read_from_the_program():
    """@w lies on tiles 0-2 and its weight is streamed to tile 0 only: tiles 1 and 2, never
    written, are one class of replicas, so the later plan's @w has rows of its own and streams
    the weight again, which the simulator no longer holds: it is read from the program."""
    from test_resident_weights import ONE_TILE, weights_program
    from test_simulator import buffer, d2h, h2d

    simulator = weights_program(
        [buffer("w", 4, "0, 3, 1"), buffer("x", 4, "0, 1, 1")],
        [h2d("%arg0", "x", ONE_TILE, "tensor<4xf32>"), d2h("%0", "w", ONE_TILE, "tensor<4xf32>"),
         d2h("%1", "x", ONE_TILE, "tensor<4xf32>")],
    )  # fmt: skip
    assert simulator._constants == {}  # the weight: in tile memory only
    x = np.array([5, 6, 7, 8], np.float32)
    runs = [[o.tolist() for o in simulator.run([x])] for _ in range(3)]
    assert runs == [[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]] * 3
    assert {b.name: b.row_count for b in simulator._later.buffers}["w"] == 2  # tile 0, and tiles 1-2 as one
