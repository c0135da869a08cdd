"""Device variables and the device loop (docs/contracts.md): an L0 training step whose
parameters and learning rate carry `ipu.resident`, compiled, then run by the simulator with
its state in tile memory from run to run. Checked against numpy step by step; the profile's
host streams carry the batch and the loss only. Hand-written L0, independent of torch."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from ipu_mlir.dialects import ipu, make_context
from ipu_mlir.dialects.program import Program
from ipu_mlir.frontends import api
from ipu_mlir.lowering.memory_plan import analyze_liveness
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime.memory import SimulationError
from ipu_mlir.target import load_target
from ipu_mlir.target.diagnostics import IpuError


def mlp_step(B=4, I=16, H=32, O=8) -> str:  # noqa: E741
    """One SGD step of relu(x @ w1) @ w2 against targets t, loss sum((out - t)^2): forward,
    backward (the gradient of the loss without its factor 2) and update, w1, w2 and lr resident."""
    return f"""
#id = affine_map<(d0, d1) -> (d0, d1)>
#sc = affine_map<(d0, d1) -> ()>
#red = affine_map<(d0, d1) -> ()>
func.func @main(%w1: tensor<{I}x{H}xf32> {{ipu.resident = "param:w1"}}, %w2: tensor<{H}x{O}xf32> {{ipu.resident = "param:w2"}},
                %lr: tensor<f32> {{ipu.resident = "hyper:lr"}}, %x: tensor<{B}x{I}xf32>, %t: tensor<{B}x{O}xf32>)
    -> (tensor<{I}x{H}xf32> {{ipu.resident = "param:w1"}}, tensor<{H}x{O}xf32> {{ipu.resident = "param:w2"}}, tensor<f32>) {{
  %zero = arith.constant 0.0 : f32
  %eh = tensor.empty() : tensor<{B}x{H}xf32>
  %zh = linalg.fill ins(%zero : f32) outs(%eh : tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %a = linalg.matmul ins(%x, %w1 : tensor<{B}x{I}xf32>, tensor<{I}x{H}xf32>) outs(%zh : tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %h = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%a : tensor<{B}x{H}xf32>)
      outs(%eh : tensor<{B}x{H}xf32>) {{
  ^bb0(%v: f32, %o: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }} -> tensor<{B}x{H}xf32>
  %eo = tensor.empty() : tensor<{B}x{O}xf32>
  %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<{B}x{O}xf32>) -> tensor<{B}x{O}xf32>
  %out = linalg.matmul ins(%h, %w2 : tensor<{B}x{H}xf32>, tensor<{H}x{O}xf32>) outs(%zo : tensor<{B}x{O}xf32>) -> tensor<{B}x{O}xf32>
  %d = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%out, %t : tensor<{B}x{O}xf32>, tensor<{B}x{O}xf32>)
      outs(%eo : tensor<{B}x{O}xf32>) {{
  ^bb0(%u: f32, %v: f32, %o: f32):
    %r = arith.subf %u, %v : f32
    linalg.yield %r : f32
  }} -> tensor<{B}x{O}xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {{indexing_maps = [#id, #red], iterator_types = ["reduction", "reduction"]}}
      ins(%d : tensor<{B}x{O}xf32>)
      outs(%zl : tensor<f32>) {{
  ^bb0(%v: f32, %acc: f32):
    %sq = arith.mulf %v, %v : f32
    %r = arith.addf %sq, %acc : f32
    linalg.yield %r : f32
  }} -> tensor<f32>
  %eht = tensor.empty() : tensor<{H}x{B}xf32>
  %ht = linalg.transpose ins(%h : tensor<{B}x{H}xf32>) outs(%eht : tensor<{H}x{B}xf32>) permutation = [1, 0]
  %ew2 = tensor.empty() : tensor<{H}x{O}xf32>
  %zw2 = linalg.fill ins(%zero : f32) outs(%ew2 : tensor<{H}x{O}xf32>) -> tensor<{H}x{O}xf32>
  %g2 = linalg.matmul ins(%ht, %d : tensor<{H}x{B}xf32>, tensor<{B}x{O}xf32>) outs(%zw2 : tensor<{H}x{O}xf32>) -> tensor<{H}x{O}xf32>
  %ew2t = tensor.empty() : tensor<{O}x{H}xf32>
  %w2t = linalg.transpose ins(%w2 : tensor<{H}x{O}xf32>) outs(%ew2t : tensor<{O}x{H}xf32>) permutation = [1, 0]
  %dh0 = linalg.matmul ins(%d, %w2t : tensor<{B}x{O}xf32>, tensor<{O}x{H}xf32>) outs(%zh : tensor<{B}x{H}xf32>) -> tensor<{B}x{H}xf32>
  %dh = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%dh0, %a : tensor<{B}x{H}xf32>, tensor<{B}x{H}xf32>)
      outs(%eh : tensor<{B}x{H}xf32>) {{
  ^bb0(%g: f32, %v: f32, %o: f32):
    %pos = arith.cmpf ogt, %v, %zero : f32
    %r = arith.select %pos, %g, %zero : f32
    linalg.yield %r : f32
  }} -> tensor<{B}x{H}xf32>
  %ext = tensor.empty() : tensor<{I}x{B}xf32>
  %xt = linalg.transpose ins(%x : tensor<{B}x{I}xf32>) outs(%ext : tensor<{I}x{B}xf32>) permutation = [1, 0]
  %ew1 = tensor.empty() : tensor<{I}x{H}xf32>
  %zw1 = linalg.fill ins(%zero : f32) outs(%ew1 : tensor<{I}x{H}xf32>) -> tensor<{I}x{H}xf32>
  %g1 = linalg.matmul ins(%xt, %dh : tensor<{I}x{B}xf32>, tensor<{B}x{H}xf32>) outs(%zw1 : tensor<{I}x{H}xf32>) -> tensor<{I}x{H}xf32>
  %nw1 = linalg.generic {{indexing_maps = [#id, #id, #sc, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%w1, %g1, %lr : tensor<{I}x{H}xf32>, tensor<{I}x{H}xf32>, tensor<f32>)
      outs(%ew1 : tensor<{I}x{H}xf32>) {{
  ^bb0(%w: f32, %g: f32, %l: f32, %o: f32):
    %m = arith.mulf %l, %g : f32
    %r = arith.subf %w, %m : f32
    linalg.yield %r : f32
  }} -> tensor<{I}x{H}xf32>
  %nw2 = linalg.generic {{indexing_maps = [#id, #id, #sc, #id], iterator_types = ["parallel", "parallel"]}}
      ins(%w2, %g2, %lr : tensor<{H}x{O}xf32>, tensor<{H}x{O}xf32>, tensor<f32>)
      outs(%ew2 : tensor<{H}x{O}xf32>) {{
  ^bb0(%w: f32, %g: f32, %l: f32, %o: f32):
    %m = arith.mulf %l, %g : f32
    %r = arith.subf %w, %m : f32
    linalg.yield %r : f32
  }} -> tensor<{H}x{O}xf32>
  return %nw1, %nw2, %loss : tensor<{I}x{H}xf32>, tensor<{H}x{O}xf32>, tensor<f32>
}}
"""


def numpy_step(w1, w2, lr, x, t):
    a = x @ w1
    h = np.maximum(a, 0)
    d = h @ w2 - t
    g2 = h.T @ d
    g1 = x.T @ ((d @ w2.T) * (a > 0))
    return w1 - lr * g1, w2 - lr * g2, (d * d).sum()


def loaded(text: str, target: str = "tiny"):
    return api.load_simulator(text, target=target)


def initial(seed: int = 1):
    rng = np.random.default_rng(seed)
    w1 = (rng.standard_normal((16, 32)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((32, 8)) * 0.3).astype(np.float32)
    return rng, w1, w2, np.array(0.01, np.float32)


def write(sim, w1, w2, lr) -> None:
    for name, value in (("param:w1", w1), ("param:w2", w2), ("hyper:lr", lr)):
        sim.write_variable(name, value)


def batches(rng, count: int):
    return [(rng.standard_normal((4, 16)).astype(np.float32), rng.standard_normal((4, 8)).astype(np.float32)) for _ in range(count)]


@pytest.mark.parametrize("target", ["tiny", "gc200"])
def test_training_step_state_evolves_as_numpy(target):
    sim = loaded(mlp_step(), target)
    assert sim.variables() == {
        "param:w1": ((16, 32), np.dtype(np.float32)),
        "param:w2": ((32, 8), np.dtype(np.float32)),
        "hyper:lr": ((), np.dtype(np.float32)),
    }
    assert sim.arguments == [((4, 16), np.dtype(np.float32)), ((4, 8), np.dtype(np.float32))]  # the batch only
    rng, w1, w2, lr = initial()
    write(sim, w1, w2, lr)
    for x, t in batches(rng, 5):  # the first run is the checked one, the others the later plan
        (loss,) = sim.run([x, t])
        w1, w2, expected = numpy_step(w1, w2, lr, x, t)
        np.testing.assert_allclose(loss, expected, rtol=1e-5)
        np.testing.assert_allclose(sim.read_variable("param:w1"), w1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sim.read_variable("param:w2"), w2, rtol=1e-5, atol=1e-6)
    # host streams: the batch in, the loss out; no parameter, no learning rate
    assert sim.profile.host_bytes == x.nbytes + t.nbytes + loss.nbytes == 388
    assert sim.profile.load_bytes == 0


def test_updates_are_computed_in_place():
    """Each parameter's update is written straight into its variable's buffer: no copy of a
    new value, no buffer for it."""
    with make_context():
        module = compile_module(ir.Module.parse(mlp_step()), "tiny")
        program = Program(module.operation)
        held = {op.buffer: op.variable_name for op in program.variables()}
        assert sorted(held.values()) == ["hyper:lr", "param:w1", "param:w2"]
        writers: dict[str, list[str]] = {}

        def record(op):
            if op.name in ("ipu.copy", "ipu.vertex_group"):
                for name in program.writes(op):
                    writers.setdefault(name, []).append(op.name)
            return ir.WalkResult.ADVANCE

        module.operation.walk(record)
    by_name = {name: writers.get(buffer, []) for buffer, name in held.items()}
    assert by_name == {"param:w1": ["ipu.vertex_group"], "param:w2": ["ipu.vertex_group"], "hyper:lr": []}


def test_device_iterations_equal_single_runs():
    """`iterations=N` runs the step N times on device, a slice of each input per iteration:
    the same bytes as N single runs; one profile of N iterations."""
    rng, w1, w2, lr = initial(2)
    data = batches(rng, 3)
    single, looped = loaded(mlp_step()), loaded(mlp_step())
    for sim in (single, looped):
        write(sim, w1, w2, lr)
    losses = [single.run([x, t])[0] for x, t in data]
    one = single.profile
    (stacked,) = looped.run([np.stack([x for x, _ in data]), np.stack([t for _, t in data])], iterations=3)
    assert stacked.shape == (3,) and stacked.tobytes() == np.stack(losses).tobytes()
    for name in ("param:w1", "param:w2"):
        assert looped.read_variable(name).tobytes() == single.read_variable(name).tobytes()
    profile = looped.profile
    assert profile.iterations == 3 and one.iterations == 1
    assert profile.cycles == 3 * one.cycles and profile.supersteps == 3 * one.supersteps
    assert profile.host_bytes == 3 * one.host_bytes == 3 * 388
    assert "device loop:       3 runs of the program in one call" in profile.summary()
    assert "(388 per iteration)" in profile.summary()
    # and again, from the later plan's state on
    (more,) = looped.run([np.stack([x for x, _ in data[:2]]), np.stack([t for _, t in data[:2]])], iterations=2)
    assert more.shape == (2,)


def test_learning_rate_written_between_runs_takes_effect():
    """A read-only variable rewritten by the host (a scheduler's new learning rate) is read
    by the next run: nothing reading it was run once at load."""
    sim = loaded(mlp_step())
    rng, w1, w2, lr = initial(3)
    write(sim, w1, w2, lr)
    data = batches(rng, 3)
    for x, t in data[:2]:
        sim.run([x, t])
    sim.write_variable("hyper:lr", np.array(0.0, np.float32))
    before = sim.read_variable("param:w1")
    sim.run(list(data[2]))
    assert sim.read_variable("param:w1").tobytes() == before.tobytes()
    sim.write_variable("hyper:lr", np.array(0.5, np.float32))
    sim.run(list(data[2]))
    assert not np.array_equal(sim.read_variable("param:w1"), before)


def test_variable_errors():
    sim = loaded(mlp_step())
    x, t = np.zeros((4, 16), np.float32), np.zeros((4, 8), np.float32)
    with pytest.raises(SimulationError, match=r"device variable 'param:w1' was never written: write_variable\('param:w1', array\) first"):
        sim.read_variable("param:w1")
    with pytest.raises(SimulationError, match=r"device variable 'param:w1' was never written: .* before running \(3 unwritten\)"):
        sim.run([x, t])
    with pytest.raises(SimulationError, match=r"@main has no device variable 'w1' \(its variables: 'param:w1', 'param:w2', 'hyper:lr'\)"):
        sim.write_variable("w1", np.zeros((16, 32), np.float32))
    with pytest.raises(SimulationError, match=r"device variable 'param:w1' is a 16x32 float32 array, got 32x16 float32"):
        sim.write_variable("param:w1", np.zeros((32, 16), np.float32))
    with pytest.raises(SimulationError, match=r"device variable 'hyper:lr' is a scalar float32 array, got float"):
        sim.write_variable("hyper:lr", 0.1)
    with pytest.raises(SimulationError, match=r"device variable 'hyper:lr' is a scalar float32 array, got scalar float64"):
        sim.write_variable("hyper:lr", np.float64(0.1))
    sim.write_variable("hyper:lr", np.float32(0.1))  # a numpy scalar is a 0-d array
    assert sim.read_variable("hyper:lr") == np.float32(0.1)
    _, w1, w2, lr = initial()
    write(sim, w1, w2, lr)
    with pytest.raises(SimulationError, match=r"input #0 of @main: expected 2x4x16 float32 \(2 iterations\), got 4x16 float32"):
        sim.run([x, t], iterations=2)
    with pytest.raises(SimulationError, match=r"iterations must be a positive integer, got 0"):
        sim.run([x, t], iterations=0)


ACCUMULATE = """
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
func.func @main(%w: tensor<64xf32> {ipu.resident = "param:w"}, %acc: tensor<64xf32> {ipu.resident = "accum:w"},
                %lr: tensor<f32> {ipu.resident = "hyper:lr"}, %x: tensor<64xf32>, %apply: tensor<f32>)
    -> (tensor<64xf32> {ipu.resident = "param:w"}, tensor<64xf32> {ipu.resident = "accum:w"}, tensor<64xf32>) {
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %g = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %x : tensor<64xf32>, tensor<64xf32>)
      outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%acc, %g : tensor<64xf32>, tensor<64xf32>)
      outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %nw = linalg.generic {indexing_maps = [#id, #id, #sc, #sc, #id], iterator_types = ["parallel"]}
      ins(%w, %sum, %lr, %apply : tensor<64xf32>, tensor<64xf32>, tensor<f32>, tensor<f32>)
      outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32, %l: f32, %p: f32, %o: f32):
    %m = arith.mulf %l, %s : f32
    %k = arith.mulf %m, %p : f32
    %r = arith.subf %a, %k : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %nacc = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%sum, %apply : tensor<64xf32>, tensor<f32>)
      outs(%e : tensor<64xf32>) {
  ^bb0(%s: f32, %p: f32, %o: f32):
    %keep = arith.subf %one, %p : f32
    %r = arith.mulf %s, %keep : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %nw, %nacc, %g : tensor<64xf32>, tensor<64xf32>, tensor<64xf32>
}
"""


def test_gradient_accumulation_in_the_device_loop():
    """The form offered for gradient accumulation: the accumulated gradient is a device
    variable, and a streamed 0/1 per iteration says whether this micro-batch applies the update
    (and empties the accumulator). iterations = 2 x 4 micro-batches: two updates, each of the
    sum of four gradients, as numpy computes them."""
    sim = loaded(ACCUMULATE)
    rng = np.random.default_rng(4)
    w = rng.standard_normal(64).astype(np.float32)
    lr = np.array(0.125, np.float32)
    sim.write_variable("param:w", w)
    sim.write_variable("accum:w", np.zeros(64, np.float32))
    sim.write_variable("hyper:lr", lr)
    xs = rng.standard_normal((8, 64)).astype(np.float32)
    applies = np.array([0, 0, 0, 1, 0, 0, 0, 1], np.float32)
    (grads,) = sim.run([xs, applies], iterations=8)
    acc = np.zeros(64, np.float32)
    for x, apply, grad in zip(xs, applies, grads):
        g = w * x
        np.testing.assert_array_equal(grad, g)
        acc = acc + g
        w = w - lr * acc * apply
        acc = acc * (np.float32(1) - apply)
    np.testing.assert_allclose(sim.read_variable("param:w"), w, rtol=1e-6)
    assert not sim.read_variable("accum:w").any()
    assert sim.profile.host_bytes == 8 * (64 * 4 + 4 + 64 * 4)  # x, apply in; the gradient out


RESET = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%v: tensor<64xf32> {ipu.resident = "state:v"}, %k: tensor<1024xf32> {ipu.resident = "param:frozen"})
    -> (tensor<64xf32> {ipu.resident = "state:v"}, tensor<1024xf32>) {
  %twos = arith.constant dense<2.0> : tensor<64xf32>
  %e = tensor.empty() : tensor<1024xf32>
  %y = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%k : tensor<1024xf32>) outs(%e : tensor<1024xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.mulf %a, %a : f32
    linalg.yield %r : f32
  } -> tensor<1024xf32>
  return %twos, %y : tensor<64xf32>, tensor<1024xf32>
}
"""


def test_variables_the_program_does_not_read_or_write():
    """A variable set from a constant (a reset) is set by every run, not once at load: the host
    may write it in between. A read-only variable over several tiles (a frozen parameter) keeps
    a row per tile in later runs: its tiles' slices differ, though no op of the program writes
    them."""
    sim = loaded(RESET)
    frozen = np.arange(1024, dtype=np.float32)
    sim.write_variable("param:frozen", frozen)
    for value in (1.0, 3.0, 5.0):  # the checked run, then two of the later plan
        sim.write_variable("state:v", np.full(64, value, np.float32))
        assert (sim.read_variable("state:v") == value).all()
        (squares,) = sim.run([])
        assert (sim.read_variable("state:v") == 2.0).all()
        np.testing.assert_array_equal(squares, frozen * frozen)
    assert sim.profile.host_bytes == 4096


def test_forward_activations_live_until_their_backward_use():
    """The liveness memory plan on a joint graph: the forward pre-activation (the first
    matmul's result) stays live past the loss, to the backward ReLU mask reading it; variables
    for the whole program."""
    with make_context():
        module = compile_module(ir.Module.parse(mlp_step()), "tiny")
        program = Program(module.operation)
        main = program.function("main", ipu.PROGRAM_ATTR)
        ops = list(main.regions[0].blocks[0].operations)
        first_compute = next(op for op in ops if op.operation.name == "ipu.execute")
        (activation,) = program.writes(first_compute)
        loss = next(op for op in ops if op.operation.name == "ipu.device_to_host").buffer
        live = analyze_liveness(module.operation, load_target("tiny").num_tiles)
        steps = dict(zip(live.names, live.live_steps.tolist()))
        for name in live.variables:
            assert steps[name] == [0, live.num_steps - 1]
    assert steps[activation][1] > steps[loss][0]  # kept past the loss for the backward pass


def test_memory_fraction_compile_option():
    """PopTorch's availableMemoryProportion: the planner's budget per tile, through the API."""
    sim = api.load_simulator(mlp_step(), target="tiny", memory_fraction=0.3)
    assert sim.variables()["param:w1"] == ((16, 32), np.dtype(np.float32))
    with pytest.raises(IpuError, match=r"memory fraction 1.5 is not in \(0, 1\] \(availableMemoryProportion\)"):
        api.load_simulator(mlp_step(), target="tiny", memory_fraction=1.5)


def test_step_against_the_execution_engine():
    """Upstream MLIR's ExecutionEngine runs the L0 step with the variables as plain arguments
    and their new values as plain results: the simulator's streamed results and the variables
    it updated in place match them, over two steps (the second from the first's results)."""
    text = mlp_step()
    sim = loaded(text)
    rng, w1, w2, lr = initial(5)
    write(sim, w1, w2, lr)
    for x, t in batches(rng, 2):
        (loss,) = sim.run([x, t])
        w1, w2, expected = api.reference_outputs(text, [w1, w2, lr, x, t], "main")
        np.testing.assert_allclose(loss, expected, rtol=1e-5)
        np.testing.assert_allclose(sim.read_variable("param:w1"), w1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(sim.read_variable("param:w2"), w2, rtol=1e-5, atol=1e-6)


COUNTED = """
#id = affine_map<(d0) -> (d0)>
#sc = affine_map<(d0) -> ()>
#s0 = affine_map<() -> ()>
func.func @main(%w: tensor<64xf32> {ipu.resident = "param:w"}, %acc: tensor<64xf32> {ipu.resident = "accum:w"},
                %count: tensor<i32> {ipu.resident = "accum:count"}, %x: tensor<64xf32>)
    -> (tensor<64xf32> {ipu.resident = "param:w"}, tensor<64xf32> {ipu.resident = "accum:w"},
        tensor<i32> {ipu.resident = "accum:count"}) {
  %one = arith.constant 1 : i32
  %group = arith.constant 4 : i32
  %zero = arith.constant 0 : i32
  %fzero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<64xf32>
  %ec = tensor.empty() : tensor<i32>
  %next = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%count : tensor<i32>) outs(%ec : tensor<i32>) {
  ^bb0(%c: i32, %o: i32):
    %n = arith.addi %c, %one : i32
    %last = arith.cmpi sge, %n, %group : i32
    %r = arith.select %last, %zero, %n : i32
    linalg.yield %r : i32
  } -> tensor<i32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%acc, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.addf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %nw = linalg.generic {indexing_maps = [#id, #id, #sc, #id], iterator_types = ["parallel"]}
      ins(%w, %sum, %next : tensor<64xf32>, tensor<64xf32>, tensor<i32>) outs(%e : tensor<64xf32>) {
  ^bb0(%a: f32, %s: f32, %n: i32, %o: f32):
    %applied = arith.cmpi eq, %n, %zero : i32
    %u = arith.subf %a, %s : f32
    %r = arith.select %applied, %u, %a : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  %nacc = linalg.generic {indexing_maps = [#id, #sc, #id], iterator_types = ["parallel"]}
      ins(%sum, %next : tensor<64xf32>, tensor<i32>) outs(%e : tensor<64xf32>) {
  ^bb0(%s: f32, %n: i32, %o: f32):
    %applied = arith.cmpi eq, %n, %zero : i32
    %r = arith.select %applied, %fzero, %s : f32
    linalg.yield %r : f32
  } -> tensor<64xf32>
  return %nw, %nacc, %next : tensor<64xf32>, tensor<64xf32>, tensor<i32>
}
"""


def test_gradient_accumulation_with_a_device_counter():
    """The same form with the group's position kept on device (an i32 counter variable) instead
    of streamed: 6 iterations of groups of 4, one update and two gradients left accumulated."""
    sim = loaded(COUNTED)
    rng = np.random.default_rng(6)
    w = rng.standard_normal(64).astype(np.float32)
    sim.write_variable("param:w", w)
    sim.write_variable("accum:w", np.zeros(64, np.float32))
    sim.write_variable("accum:count", np.array(0, np.int32))
    xs = rng.standard_normal((6, 64)).astype(np.float32)
    assert sim.run([xs], iterations=6) == []
    np.testing.assert_allclose(sim.read_variable("param:w"), w - (((xs[0] + xs[1]) + xs[2]) + xs[3]), rtol=1e-6)
    np.testing.assert_array_equal(sim.read_variable("accum:w"), xs[4] + xs[5])
    assert sim.read_variable("accum:count") == 2
    assert sim.profile.host_bytes == 6 * 64 * 4  # the micro-batches only


def test_profile_marks_variables(tmp_path):
    """The profile's buffers say which are device variables (live in every superstep), and
    ipu-vis report draws them in a colour of their own."""
    from ipu_mlir.vis.report import Views

    sim = loaded(mlp_step())
    rng, w1, w2, lr = initial()
    write(sim, w1, w2, lr)
    sim.run(list(batches(rng, 1)[0]))
    path = tmp_path / "profile.json"
    path.write_text(sim.profile.to_json())
    buffers = sim.profile.to_dict()["buffers"]
    variables = [b for b in buffers if b["kind"] == "variable"]
    assert len(variables) == 3 and all((b["first_step"], b["last_step"]) == (0, len(sim.profile.steps) - 1) for b in variables)
    assert Views.load(str(path)).memory_by_buffer() is not None


LOOP = """
#id = affine_map<(d0) -> (d0)>
func.func @main(%w: tensor<256xf32> {ipu.resident = "param:w"},
                %x: tensor<256xf32>) -> (tensor<256xf32> {ipu.resident = "param:w"}, tensor<256xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<256xf32>
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%u = %w) -> tensor<256xf32> {
    %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
        ins(%u, %x : tensor<256xf32>, tensor<256xf32>)
        outs(%e : tensor<256xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %h = arith.constant 0.5 : f32
      %m = arith.mulf %a, %h : f32
      %s = arith.addf %m, %b : f32
      linalg.yield %s : f32
    } -> tensor<256xf32>
    scf.yield %n : tensor<256xf32>
  }
  return %r, %w : tensor<256xf32>, tensor<256xf32>
}
"""
RUNNING = """
#in = affine_map<(d0, d1) -> (d0, d1)>
#out = affine_map<(d0, d1) -> (d1)>
#id = affine_map<(d0) -> (d0)>
func.func @main(%rm: tensor<512xf32> {ipu.resident = "buffer:rm"},
                %x: tensor<64x512xf32>) -> (tensor<512xf32> {ipu.resident = "buffer:rm"}) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<512xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<512xf32>) -> tensor<512xf32>
  %s = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["reduction", "parallel"]}
      ins(%x : tensor<64x512xf32>)
      outs(%z : tensor<512xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %a, %acc : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  %n = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%rm, %s : tensor<512xf32>, tensor<512xf32>)
      outs(%e : tensor<512xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %k = arith.constant 0.9 : f32
    %q = arith.constant 0.0015625 : f32
    %m = arith.mulf %a, %k : f32
    %t = arith.mulf %b, %q : f32
    %r = arith.addf %m, %t : f32
    linalg.yield %r : f32
  } -> tensor<512xf32>
  return %n : tensor<512xf32>
}
"""


@pytest.mark.parametrize("target", ["tiny", "gc200"])
@pytest.mark.parametrize(
    "text, name, shape, streamed",
    [(LOOP, "param:w", (256,), [(256,)]), (RUNNING, "buffer:rm", (512,), [(64, 512)])],
    ids=["loop-carries-a-variable", "running-mean"],
)
def test_variable_updates_against_the_execution_engine(text, name, shape, streamed, target):
    """A variable carried through an scf.for (Repeat) and also streamed out as it was; a
    running mean updated from a reduction over the batch cut across tiles. Three steps each,
    the ExecutionEngine given the variable as an argument and its result fed to the next step."""
    sim = loaded(text, target)
    rng = np.random.default_rng(7)
    value = rng.standard_normal(shape).astype(np.float32)
    sim.write_variable(name, value)
    for _ in range(3):
        inputs = [rng.standard_normal(s).astype(np.float32) for s in streamed]
        outputs = sim.run(inputs)
        value, *expected = api.reference_outputs(text, [value, *inputs], "main")
        np.testing.assert_allclose(sim.read_variable(name), value, rtol=1e-6, atol=1e-6)
        for got, want in zip(outputs, expected, strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6)


TRACKED = """
#s0 = affine_map<() -> ()>
func.func @main(%n: tensor<i64> {ipu.resident = "buffer:bn.num_batches_tracked"}, %w: tensor<8xf16> {ipu.resident = "param:h"})
    -> (tensor<i64> {ipu.resident = "buffer:bn.num_batches_tracked"}, tensor<8xf16>) {
  %one = arith.constant 1 : i64
  %e = tensor.empty() : tensor<i64>
  %r = linalg.generic {indexing_maps = [#s0, #s0], iterator_types = []} ins(%n : tensor<i64>) outs(%e : tensor<i64>) {
  ^bb0(%c: i64, %o: i64):
    %x = arith.addi %c, %one : i64
    linalg.yield %x : i64
  } -> tensor<i64>
  return %r, %w : tensor<i64>, tensor<8xf16>
}
"""


def test_integer_and_half_variables_and_a_parameter_streamed_out():
    """BatchNorm's i64 num_batches_tracked counted on device, and an f16 parameter the step
    returns as a plain result: streamed out of the variable's buffer each run, never in."""
    sim = loaded(TRACKED, "gc200")
    sim.write_variable("buffer:bn.num_batches_tracked", np.array(5, np.int64))
    half = np.arange(8, dtype=np.float16)
    sim.write_variable("param:h", half)
    for count in (6, 7, 8):
        (out,) = sim.run([])
        assert out.dtype == np.float16 and out.tobytes() == half.tobytes()
        assert sim.read_variable("buffer:bn.num_batches_tracked") == count
    assert sim.profile.host_bytes == half.nbytes
