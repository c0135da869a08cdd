"""A vertex group's writes into its output views (runtime/steps.py, `Assign`): item views
made once are reused only for results laid out as the first, and give plain assignment's bytes."""

from __future__ import annotations

import numpy as np
import pytest
from test_codelet import codelet

from ipu_mlir.runtime.codelet import CodeletError
from ipu_mlir.runtime.memory import Site
from ipu_mlir.runtime.regions import grid_region
from ipu_mlir.runtime.steps import Assign, VertexGroup


def test_results_laid_out_alike_reuse_the_items_others_are_assigned_plainly():
    memory = np.zeros((6, 40), np.float32)
    view = memory[:, 4:12].reshape(2, 3, 8)  # rows of 8 contiguous elements: 32-byte items
    into = Assign(view)
    rng = np.random.default_rng(0)
    results = [
        rng.standard_normal((2, 3, 8)).astype(np.float32),  # makes the items
        rng.standard_normal((2, 3, 8)).astype(np.float32),  # reuses them
        rng.standard_normal((2, 8, 3)).astype(np.float32).transpose(0, 2, 1),  # another layout
        np.broadcast_to(rng.standard_normal((1, 3, 8)).astype(np.float32), (2, 3, 8)),  # a broadcast
        rng.standard_normal((2, 3, 8)).astype(np.float32),  # the first layout again
        rng.standard_normal((1, 3, 8)).astype(np.float32),  # broadcast by numpy's rules
    ]
    for result in results:
        into(result)
        np.testing.assert_array_equal(view, np.broadcast_to(result, view.shape))
        assert not memory[:, :4].any() and not memory[:, 12:].any()  # nothing outside the view
    assert into.layout == ((2, 3, 8), results[4].strides, np.dtype(np.float32))


# --- Vertex groups writing into their output view in later runs (`VertexGroup.direct`) -------

AXPY = """func.func @f(%x: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
      iterator_types = ["parallel"]} ins(%x, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %0 = arith.mulf %a, %c : f32
    %1 = arith.subf %0, %c : f32
    linalg.yield %1 : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}"""
TWO_RESULTS = AXPY.replace("-> tensor<4xf32> {\n  %e", "-> (tensor<4xf32>, tensor<4xf32>) {\n  %e").replace(
    "return %r : tensor<4xf32>", "return %r, %r : tensor<4xf32>, tensor<4xf32>"
)
MATMUL = """func.func @f(%a: tensor<2x4xf32>, %b: tensor<4x3xf32>) -> tensor<2x3xf32> {
  %0 = "ipu.matmul"(%a, %b) : (tensor<2x4xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}"""
SIZES = (2, 3)  # the vertex groups' grid
SCRAMBLED = np.array([4, 0, 5, 2, 1, 3])  # rows not affine in the grid: a gather each run
ALL, FIRST_ONLY = (True, True), (False, True)  # grid axes kept; the first cut to one point (a replica)


class Memory:
    """A buffer bound to one array (memory.bind_arrays), read and written as `Buffer` does then."""

    def __init__(self, rows: int, elements: int):
        self.data, self.dtype, self.name = np.zeros((rows, elements), np.float32), np.dtype(np.float32), "memory"

    def read(self, region, site, check):
        return region.read(self.data)

    def write(self, region, values, check):
        region.write(self.data, values)


def edge(memory: Memory, rows, shape: tuple[int, ...], kept=ALL):
    return memory, grid_region(np.asarray(rows), np.arange(6), SIZES, shape, kept)


def axpy_edges(x: Memory, b: Memory, out: Memory):
    """x gathered, b one row per point of the second axis (a replica), out in rows laid out by
    the grid's last axis first (a transposed view) with two spare elements each."""
    return [edge(x, SCRAMBLED, (4,)), edge(b, [[3, 4, 5]] * 2, (4,), FIRST_ONLY)], [edge(out, [[0, 2, 4], [1, 3, 5]], (4,))]


def case_gathered_input():
    x, b, out = Memory(6, 4), Memory(6, 5), Memory(6, 6)
    return [x, b, out], *axpy_edges(x, b, out), AXPY, True


def case_strided_output():
    x, b, out = Memory(6, 4), Memory(6, 5), Memory(14, 4)
    inputs, _ = axpy_edges(x, b, out)
    return [x, b, out], inputs, [edge(out, [[1, 3, 5], [7, 9, 11]], (4,))], AXPY, True


def case_output_over_an_input():
    """b's rows (a view) are rows the group writes, read at other points than those writing
    them: written in place, point (0, 1) would change what point (1, 0) reads."""
    x, out = Memory(6, 4), Memory(6, 6)
    inputs, outputs = axpy_edges(x, out, out)
    inputs[1] = edge(out, [[2, 3, 4]] * 2, (4,), FIRST_ONLY)
    return [x, out], inputs, outputs, AXPY, False


def case_replicated_output():
    x, b, out = Memory(6, 4), Memory(6, 5), Memory(6, 6)
    inputs, _ = axpy_edges(x, b, out)
    return [x, b, out], inputs, [edge(out, [[0, 1, 2]] * 2, (4,), FIRST_ONLY)], AXPY, False


def case_several_outputs():
    x, b, out, more = Memory(6, 4), Memory(6, 5), Memory(6, 6), Memory(6, 4)
    inputs, outputs = axpy_edges(x, b, out)
    return [x, b, out, more], inputs, [*outputs, edge(more, np.arange(6), (4,))], TWO_RESULTS, False


def case_matmul():
    a, b, out = Memory(6, 8), Memory(6, 12), Memory(6, 7)
    inputs = [edge(a, SCRAMBLED, (2, 4)), edge(b, [[3, 4, 5]] * 2, (4, 3), FIRST_ONLY)]
    return [a, b, out], inputs, [edge(out, [[0, 2, 4], [1, 3, 5]], (2, 3))], MATMUL, True


CASES = [case_gathered_input, case_strided_output, case_output_over_an_input, case_replicated_output, case_several_outputs, case_matmul]


def later_runs(case, direct: bool, seeds: list[int]) -> tuple[list[bytes], list[bool]]:
    """The memories' bytes after each run: the first checked (no views), the others later
    runs (views made once; with `direct`, the codelet may write into its output view), each on
    new random contents; and the codelet's calls: what `into` returned, "new" for a new result."""
    memories, inputs, outputs, text, _ = case()
    kernel, tried = codelet(text, batch_rank=len(SIZES)), []

    class Spy:  # the codelet, telling what each call to `into` returned and each call for a new result
        into = staticmethod(lambda *args: tried.append(kernel.into(*args)) or tried[-1])
        __call__ = staticmethod(lambda *args: tried.append("new") or kernel(*args))

    group = VertexGroup(Site("ipu.vertex_group", None), np.arange(6), "f", Spy(), CodeletError, inputs, outputs)
    states = []
    for run, seed in enumerate(seeds):
        for memory in memories:
            memory.data[...] = np.random.default_rng([seed, memory.data.size]).standard_normal(memory.data.shape)
        if run == 1:
            group.prepare()
            if not direct:
                group.direct = None  # results copied into the output views through `Assign`
        group.run(check=run == 0)
        states.append(b"".join(memory.data.tobytes() for memory in memories))
    return states, tried


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__[5:])
def test_later_runs_write_in_place_with_the_bytes_of_the_checked_run_and_of_new_results(case):
    seeds = [1, 2, 3, 1]
    states, tried = later_runs(case, True, seeds)
    copied, _ = later_runs(case, False, seeds)
    assert states == copied  # a new result assigned into the views: what later runs did before
    assert states[3] == states[0]  # the checked run's bytes on the same contents
    assert len(set(states[:3])) == 3  # the contents did change between runs
    later = ["new"] if case is case_several_outputs else [True] if case()[-1] else [False, "new"]
    assert tried == ["new", *later * 3]  # the checked run makes a new result


def test_a_checked_run_of_the_cases_gives_numpy_bytes():
    memories, inputs, outputs, _, _ = case_gathered_input()
    x, b, out = memories
    x.data[...], b.data[...] = np.arange(24).reshape(6, 4), np.arange(30).reshape(6, 5) / 8
    group = VertexGroup(Site("ipu.vertex_group", None), np.arange(6), "f", codelet(AXPY, 2), CodeletError, inputs, outputs)
    group.prepare()
    group.run(check=False)
    xs, bs = x.data[SCRAMBLED].reshape(2, 3, 4), b.data[[3, 4, 5], :4]
    want = xs * bs - bs
    assert out.data[[0, 2, 4, 1, 3, 5], :4].tobytes() == want.reshape(6, 4).tobytes()
    assert not out.data[:, 4:].any()
