"""`torch.cond` through torch-mlir's importer, which has no handler for it ("Higher-order
operation 'cond' not implemented in the FxImporter"): a `torch.prim.If` on the predicate, each
region calling its branch's function and yielding the results, as torch-mlir's own
`_import_hop_while_loop` builds `torch.prim.Loop` around its condition and body functions.
torch-mlir's backend pipeline then inlines the calls and lowers the If to `scf.if`, which the
compiler runs as data-dependent control flow (docs/control-flow.md)."""

from __future__ import annotations

from typing import Any


def install_cond_import() -> None:
    """Gives torch-mlir's graph importer `_import_hop_cond` (its handlers are looked up by name
    on the class; there is no registry to add one to), unless it has one of its own."""
    from torch_mlir.extras.fx_importer import GraphNodeImporter

    if not hasattr(GraphNodeImporter, "_import_hop_cond"):
        GraphNodeImporter._import_hop_cond = _import_hop_cond


def _import_hop_cond(self: Any, loc: Any, node: Any, hop: Any) -> None:
    """`cond(pred, true_fn, false_fn, operands)`: the branches are get_attr nodes of submodules
    the importer has already imported as functions (as for while_loop)."""
    from torch_mlir.ir import Block, FlatSymbolRefAttr, InsertionPoint, Operation

    predicate, true_node, false_node, operands = node.args
    root = node.graph.owning_module
    callees = [self.fx_importer._graph_module_to_func_name[id(getattr(root, branch.target))] for branch in (true_node, false_node)]
    values = [self._import_argument(loc, operand) for operand in operands]
    results = node.meta["val"]
    result_types = [self._cc.value_info_to_type(value) for value in results]
    condition = Operation.create(
        "torch.aten.Bool.Tensor", results=[self._cc.torch_bool_type], operands=[self._import_argument(loc, predicate)], loc=loc
    ).result
    branch = Operation.create("torch.prim.If", results=result_types, operands=[condition], regions=2, loc=loc)
    for region, callee in zip(branch.regions, callees):
        block = Block.create_at_start(region, [])
        with InsertionPoint(block):
            call = Operation.create(
                "func.call", attributes={"callee": FlatSymbolRefAttr.get(callee)}, results=result_types, operands=values, loc=loc
            )
            Operation.create("torch.prim.If.yield", results=[], operands=list(call.results), loc=loc)
    self._multi_result_nodes.add(node)  # its getitem nodes pick a result each
    for index, value in enumerate(branch.results):
        self.bind_node_value(node, value, index)
