"""What the compiler's passes remember while they run, and that it cannot go stale: each memo
is given two questions alike but in what it must key on."""

from __future__ import annotations

from mlir import ir

from ipu_mlir.lowering.resident import names_memoized, overwritten_variable, resident_names
from ipu_mlir.runtime.api import load_module

STEP = """
#id = affine_map<(d0) -> (d0)>
func.func @step(%w: tensor<8xf32> {ipu.resident = "w"}, %m: tensor<8xf32> {ipu.resident = "m"}, %g: tensor<8xf32>)
    -> (tensor<8xf32> {ipu.resident = "m"}, tensor<8xf32>) {
  %e = tensor.empty() : tensor<8xf32>
  %new = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%m, %g : tensor<8xf32>, tensor<8xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  return %new, %g : tensor<8xf32>, tensor<8xf32>
}
"""


def _step() -> tuple[ir.Module, ir.OpView, ir.OpView]:
    module = load_module(STEP)
    function = module.body.operations[0]
    generic = next(op for op in function.regions[0].blocks[0].operations if op.operation.name == "linalg.generic")
    return module, function, generic


def test_resident_names_follow_the_attributes_inside_the_memo():
    """The memo keys on the function's signature attributes: results renamed inside the memo's
    scope (as ipu-plan rewrites `arg_attrs`) are read afresh, not answered from the first."""
    module, function, generic = _step()
    with module.context, names_memoized():
        assert resident_names(function) == ({0: "w", 1: "m"}, {0: "m"})
        assert overwritten_variable(generic) == 0  # the momentum's new value written over its old
        function.attributes["res_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get({}), ir.DictAttr.get({})])
        assert resident_names(function) == ({0: "w", 1: "m"}, {})
        assert overwritten_variable(generic) is None  # no longer a variable's new value
        function.attributes["res_attrs"] = ir.ArrayAttr.get(
            [ir.DictAttr.get({"ipu.resident": ir.StringAttr.get("w")}), ir.DictAttr.get({})]
        )
        assert resident_names(function) == ({0: "w", 1: "m"}, {0: "w"})
        assert overwritten_variable(generic) is None  # w's new value, computed from m: not over m


def test_two_functions_alike_but_for_their_variables():
    """Two functions whose types are equal but whose variables differ get their own names."""
    module = load_module(STEP + STEP.replace("@step", "@other").replace('"w"', '"v"').split("\n", 2)[2])
    first, second = module.body.operations
    with module.context, names_memoized():
        assert resident_names(first)[0] == {0: "w", 1: "m"}
        assert resident_names(second)[0] == {0: "v", 1: "m"}


def test_block_parts_are_remembered_by_every_argument():
    """`Parts.blocks` is remembered: cuts alike but in one argument each are not confused."""
    from ipu_mlir.lowering.layout import Parts

    first = Parts.blocks(10, 4, 1)
    assert first == Parts(((0, 4), (4, 8), (8, 10)), 1)
    assert Parts.blocks(10, 4, 2) == Parts(((0, 4), (4, 8), (8, 10)), 2)
    assert Parts.blocks(10, 5, 1) == Parts(((0, 5), (5, 10)), 1)
    assert Parts.blocks(12, 4, 1) == Parts(((0, 4), (4, 8), (8, 12)), 1)
    assert Parts.blocks(10, 4, 1) is first
