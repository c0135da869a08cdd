"""torch-mlir's TMTensor ops (cumsum, sort, topk, index_put, scatter, scatter_add, index_add),
compiled through `ipu_mlir.frontends.torch` unmodified, against PyTorch and the ExecutionEngine
reference, on tiny and gc200; their generics are cut across tiles like any other reduction."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch  # the test extra installs torch and torch-mlir
from mlir import ir

from ipu_mlir.frontends import api
from ipu_mlir.frontends import torch as ipu_torch
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.target.diagnostics import IpuError


class Cumsum(torch.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.cumsum(x, dim=self.dim) * 0.5


class Sort(torch.nn.Module):
    def __init__(self, dim: int = -1, descending: bool = False):
        super().__init__()
        self.dim, self.descending = dim, descending

    def forward(self, x):
        return torch.sort(x, dim=self.dim, descending=self.descending)

    def stable(self, x):
        """What torch-mlir's sort computes (a stable sort): PyTorch's default sort makes no
        promise about the order of equal values (on CPU it differs), and torch-mlir cannot
        export `stable=True` (aten.sort.stable is not legalized)."""
        return torch.sort(x, dim=self.dim, descending=self.descending, stable=True)


class Topk(torch.nn.Module):
    def __init__(self, k: int = 5, largest: bool = True):
        super().__init__()
        self.k, self.largest = k, largest

    def forward(self, x):
        return torch.topk(x, k=self.k, largest=self.largest)


class ScatterAdd(torch.nn.Module):
    def forward(self, x, index, src):
        return x.scatter_add(1, index, src)


class Scatter(torch.nn.Module):
    def forward(self, x, index, src):
        return x.scatter(1, index, src)


class IndexPut(torch.nn.Module):
    def __init__(self, accumulate: bool):
        super().__init__()
        self.accumulate = accumulate

    def forward(self, x, rows, values):
        return x.index_put((rows,), values, accumulate=self.accumulate)


class IndexAdd(torch.nn.Module):
    def forward(self, x, rows, values):
        return x.index_add(0, rows, values)


class IndexPut2d(torch.nn.Module):
    def forward(self, x, rows, columns, values):
        return x.index_put((rows, columns), values, accumulate=True)


class ScatterReduce(torch.nn.Module):
    """torch-mlir's scatter_reduce: mean scatters the sum and a count (`original + 1` at each
    indexed position, a region combining the original with a constant), then divides."""

    def __init__(self, reduce: str, include_self: bool = True):
        super().__init__()
        self.reduce, self.include_self = reduce, include_self

    def forward(self, x, index, src):
        return x.scatter_reduce(0, index, src, reduce=self.reduce, include_self=self.include_self)


def _ties(*shape: int) -> torch.Tensor:
    """Floats with many equal values (a stable sort must keep their order)."""
    return torch.randint(-3, 4, shape).float()


def _distinct_columns(rows: int, columns: int) -> torch.Tensor:
    """Each row a permutation of 0..columns-1: scatter's overwrite with no duplicate target."""
    return torch.stack([torch.randperm(columns) for _ in range(rows)])


def _cases() -> dict[str, tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]:
    torch.manual_seed(0)
    x = torch.randn(4, 24)
    return {
        "cumsum": (Cumsum(1), (x,)),
        "cumsum-dim0-3d": (Cumsum(0), (torch.randn(5, 3, 4),)),
        "cumsum-log-step": (Cumsum(1), (torch.randn(4, 1024),)),  # too long for one masked reduction
        "cumsum-int": (Cumsum(1), (torch.randint(-5, 5, (3, 10)),)),
        "sort": (Sort(), (x,)),
        "sort-ties": (Sort(), (_ties(3, 20),)),
        "sort-descending-dim0-ties": (Sort(0, descending=True), (_ties(12, 3),)),
        "topk": (Topk(), (x,)),  # by selection: 5 rounds
        "topk-smallest-int": (Topk(3, largest=False), (torch.randperm(40).reshape(2, 20),)),
        "topk-20": (Topk(20), (x,)),  # k beyond SELECTION_MAX_K: ranked, the first 20 permuted
        "scatter_add": (ScatterAdd(), (x, torch.randint(0, 24, (4, 9)), torch.randn(4, 9))),
        "scatter": (Scatter(), (x, _distinct_columns(4, 24)[:, :7], torch.randn(4, 7))),
        "index_put": (IndexPut(False), (x, torch.tensor([3, 0]), torch.randn(2, 24))),
        "index_put-negative": (IndexPut(False), (x, torch.tensor([-1, 1]), torch.randn(2, 24))),
        "index_put-accumulate": (IndexPut(True), (x, torch.tensor([1, 3, 1, 1]), torch.randn(4, 24))),
        "index_add": (IndexAdd(), (x, torch.tensor([2, 0, 2]), torch.randn(3, 24))),
        # ipu.scatter cut along the updates too (a second stage combines the pieces)
        "scatter_add-many": (ScatterAdd(), (torch.randn(8, 64), torch.randint(0, 64, (8, 128)), torch.randn(8, 128))),
        "scatter_add-int": (ScatterAdd(), (torch.randint(-9, 9, (4, 16)), torch.randint(0, 16, (4, 40)), torch.randint(-9, 9, (4, 40)))),
        "index_put-accumulate-duplicates": (IndexPut(True), (torch.randn(6, 8), torch.tensor([1, -1, 1, 5, 1]), torch.randn(5, 8))),
        "index_put-2d": (IndexPut2d(), (torch.randn(6, 8), torch.tensor([1, 5, 1, -6]), torch.tensor([0, 7, 0, 3]), torch.randn(4))),
        "index_add-3d": (IndexAdd(), (torch.randn(5, 3, 4), torch.tensor([4, 0, 4, 2]), torch.randn(4, 3, 4))),
        "scatter_reduce-mean": (ScatterReduce("mean"), (torch.randn(3, 8), torch.randint(0, 3, (5, 8)), torch.randn(5, 8))),
        "scatter_reduce-mean-exclude-self": (
            ScatterReduce("mean", include_self=False),
            (torch.randn(3, 8), torch.randint(0, 3, (5, 8)), torch.randn(5, 8)),
        ),
        "scatter_reduce-prod": (ScatterReduce("prod"), (torch.randn(3, 8), torch.randint(0, 3, (5, 8)), torch.randn(5, 8))),
        "scatter_reduce-amin-exclude-self": (
            ScatterReduce("amin", include_self=False),
            (torch.randn(3, 8), torch.randint(0, 3, (5, 8)), torch.randn(5, 8)),
        ),
    }


CASES = _cases()


@pytest.mark.parametrize("target", ["tiny", "gc200"])
@pytest.mark.parametrize("name", list(CASES))
def test_matches_pytorch_and_the_reference(name: str, target: str) -> None:
    model, inputs = CASES[name]
    compiled = ipu_torch.compile(model, *inputs, target=target)
    expected = getattr(model, "stable", model)(*inputs)
    expected = expected if isinstance(expected, tuple) else (expected,)
    got = compiled(*inputs)
    got = got if isinstance(got, tuple) else (got,)
    reference = api.reference_outputs(compiled.imported, [t.numpy() for t in inputs], "main")
    assert len(got) == len(expected) == len(reference)
    for simulated, wanted, engine in zip(got, expected, reference):
        assert simulated.dtype == wanted.dtype  # sort and topk indices are i64, as in PyTorch
        if wanted.dtype.is_floating_point:
            np.testing.assert_allclose(simulated.numpy(), wanted.numpy(), rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(engine, wanted.numpy(), rtol=1e-5, atol=1e-5)
        else:  # indices and integer sums: exactly, equal values in a stable order
            np.testing.assert_array_equal(simulated.numpy(), wanted.numpy())
            np.testing.assert_array_equal(engine, wanted.numpy())
    again = compiled(*inputs)
    again = again if isinstance(again, tuple) else (again,)
    assert [g.numpy().tobytes() for g in got] == [a.numpy().tobytes() for a in again]  # every run alike


NAN_ROWS = torch.tensor(
    [
        [1.0, float("nan"), -2.0, 3.0, float("nan"), float("inf"), 0.5, -float("inf")],
        [float("nan"), float("nan"), float("nan"), 2.0, 1.0, float("nan"), 0.0, 5.0],
    ]
)


@pytest.mark.parametrize("model", [Sort(), Sort(descending=True), Topk(3), Topk(6, largest=False), Topk(8)], ids=str)
def test_nan_goes_where_pytorch_puts_it(model: torch.nn.Module) -> None:
    """NaN is above every value: last ascending, first descending (torch-mlir's `ole` / `oge`
    comparator is false on NaN, which a plain rewrite of it would mis-order). Sorts match
    PyTorch's stable sort; topk's values match, and its indices (PyTorch orders equal values
    in no promised way) name those values, once each."""
    compiled = ipu_torch.compile(model, NAN_ROWS, target="tiny")
    values, indices = compiled(NAN_ROWS)
    reference = api.reference_outputs(compiled.imported, [NAN_ROWS.numpy()], "main")
    expected = getattr(model, "stable", model)(NAN_ROWS)
    for got in (values.numpy(), reference[0]):
        np.testing.assert_array_equal(got, expected[0].numpy())  # NaNs compare equal here
    if isinstance(model, Sort):
        for got in (indices.numpy(), reference[1]):
            np.testing.assert_array_equal(got, expected[1].numpy())
    for got in (indices.numpy(), reference[1]):
        np.testing.assert_array_equal(np.take_along_axis(NAN_ROWS.numpy(), got, axis=1), expected[0].numpy())
        assert all(len(set(row)) == len(row) for row in got.tolist())


def _planned_tiles(model: torch.nn.Module, *inputs: torch.Tensor) -> list[int]:
    """Tiles of each reduction generic over three or more loops and of each `ipu.scatter`,
    after ipu-plan on gc200."""
    module = ipu_torch.export(model, *inputs)
    pipeline = (
        "builtin.module(ipu-convert-tm-tensor,ipu-select-entry,symbol-dce,ipu-index-to-iota,ipu-fold-constants,"
        "ipu-convert-to-ipu,canonicalize,cse,ipu-plan{target=gc200})"
    )
    with module.context:
        build_pass_manager(pipeline, module.context).run(module.operation)
    tiles = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.generic" and "ipu.tiles" in op.attributes:
            iterators = [str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]
            if len(iterators) >= 3 and any("reduction" in it for it in iterators):
                grid = list(ir.DenseI64ArrayAttr(op.attributes["ipu.tiles"]))
                tiles.append(math.prod(grid[1::2]))
        if op.name == "ipu.scatter":
            tiles.append(math.prod(list(ir.DenseI64ArrayAttr(op.attributes["ipu.tiles"]))[1::2]))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return tiles


@pytest.mark.parametrize(
    "model,inputs",
    [
        (Cumsum(1), (torch.randn(16, 256),)),
        (Sort(), (torch.randn(16, 256),)),
        (ScatterAdd(), (torch.randn(16, 256), torch.randint(0, 256, (16, 64)), torch.randn(16, 64))),
    ],
    ids=["cumsum", "sort", "scatter_add"],
)
def test_rewritten_ops_are_cut_across_tiles(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> None:
    tiles = _planned_tiles(model, *inputs)
    assert tiles and min(tiles) >= 64, tiles


def test_attention_is_refused_naming_the_op_and_the_pytorch_op() -> None:
    text = """
    "builtin.module"() ({
      "func.func"() <{function_type = (tensor<2x4x8xf32>) -> tensor<2x4x8xf32>, sym_name = "main"}> ({
      ^bb0(%q: tensor<2x4x8xf32>):
        %e = "tensor.empty"() : () -> tensor<2x4x8xf32>
        %0 = "tm_tensor.attention"(%q, %q, %q, %e) : (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
            -> tensor<2x4x8xf32> loc("model.py":7:3)
        "func.return"(%0) : (tensor<2x4x8xf32>) -> ()
      }) : () -> ()
    }) : () -> ()
    """
    with pytest.raises(IpuError) as failure:
        api.load_simulator(text, target="tiny")
    assert str(failure.value).startswith("model.py:7:3: error: 'tm_tensor.attention' op is not converted by ipu-convert-tm-tensor")
    assert "emitted for aten.scaled_dot_product_attention" in str(failure.value)
