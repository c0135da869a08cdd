"""`ipu-fuse-compute-sets` (L3): run an element-wise consumer in its producer's compute set.

The pass's docstring (`ipu-opt --help-pass ipu-fuse-compute-sets`) explains it, with a before/after example.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func
from mlir.rewrite import GreedyRewriteConfig, RewritePatternSet, apply_patterns_and_fold_greedily

from ipu_mlir.dialects import ipu
from ipu_mlir.dialects.combine import COMBINE_ATTR, CombineMark
from ipu_mlir.dialects.program import OpOrder, Program
from ipu_mlir.target import target_of

from .exchange import open_link_phases
from .pass_registry import ModulePass, register_pass


@register_pass
@dataclass
class FuseComputeSets(ModulePass):
    """Fuse element-wise compute sets into the compute set producing their input (L3).

    Rewrite pattern on `ipu.execute`: when compute set A is followed (after its sync and an
    exchange phase) by compute set B whose vertex groups run on exactly A's tile grids, and B
    reads the buffer X that A writes and nothing else touches X, the two become one compute set
    whose codelets run A's body then B's on the same tile (matmul + bias + activation: one
    superstep, and X never lands in tile memory). B's exchanges move in front of A: they cannot
    depend on A, since they do not read X.

    Before:

        "ipu.execute"() {compute_set = @matmul_cs0}      // writes @matmul0
        "ipu.sync"() {kind = "internal"}
        "ipu.copy"() {source = @bias, dest = @generic_in0, ...}
        "ipu.execute"() {compute_set = @generic_cs0}     // reads @matmul0, @generic_in0
        "ipu.sync"() {kind = "internal"}

    After:

        "ipu.copy"() {source = @bias, dest = @generic_in0, ...}
        "ipu.execute"() {compute_set = @matmul_cs0_generic_cs0}
        "ipu.sync"() {kind = "internal"}
    """

    name = "ipu-fuse-compute-sets"

    def run(self, module: ir.Operation) -> None:
        apply_execute_pattern(module, _Fuser(module).rewrite)
        target = target_of(module)
        if target.num_ipus > 1:  # a consumer's copies over the IPU-Links joined its producer's phase
            for op in module.regions[0].blocks[0].operations:
                if op.operation.name == "func.func" and ipu.PROGRAM_ATTR in op.attributes:
                    open_link_phases(op.regions[0].blocks[0], target.tiles_per_ipu)


def apply_execute_pattern(module: ir.Operation, rewrite) -> None:
    """Applies `rewrite` as a pattern on every `ipu.execute`, until nothing changes; no
    folding, which would touch codelet bodies."""
    patterns = RewritePatternSet()
    patterns.add("ipu.execute", rewrite)
    config = GreedyRewriteConfig()
    config.enable_folding = False
    config.enable_constant_cse = False
    apply_patterns_and_fold_greedily(module, patterns.freeze(), config)


class _Fuser:
    def __init__(self, module: ir.Operation):
        self.module = module
        self.body = module.regions[0].blocks[0]
        self.program = Program(module)
        self.order = OpOrder(module)

    def rewrite(self, first, rewriter) -> bool:
        """Returns True when the pattern does not apply (the bindings' convention)."""
        match = self.match(first)
        if match is None:
            return True
        sync, copies, second, groups_a, groups_b, produced = match
        program = self.program
        replaced = [program.lookup(first.compute_set), program.lookup(second.compute_set)]
        fused_name = program.fresh(f"{first.compute_set}_{second.compute_set}")
        compute_set = ipu.compute_set_function(fused_name, loc=first.location, ip=ir.InsertionPoint(self.body))
        with ir.InsertionPoint(compute_set.regions[0].blocks[0]), first.location:
            for a, b in zip(groups_a, groups_b):
                codelet = self.fuse_codelets(a, b, produced)
                inputs = a.inputs + [name for name in b.inputs if name != produced]
                ipu.vertex_group(codelet, a.tiles, inputs, b.outputs)
            func.ReturnOp([])
        program.insert(compute_set)
        for copy in copies:
            self.order.move_before(copy, first.operation)
        first.attributes["compute_set"] = ir.FlatSymbolRefAttr.get(fused_name)
        codelets = {g.codelet for g in groups_a + groups_b}
        for op in (sync, second.operation):
            self.order.remove(op)
            rewriter.erase_op(op)
        for op in replaced + [program.lookup(name) for name in codelets] + [program.lookup(produced)]:
            program.forget(op)
            rewriter.erase_op(op.operation)
        return False

    def match(self, first):
        following = self.order.next_superstep(first.operation)
        if following is None:
            return None
        sync, copies, op = following
        if op is None or op.name != "ipu.execute":
            return None
        second = op.opview
        groups_a = self.program.groups(first.compute_set)
        groups_b = self.program.groups(second.compute_set)
        if not groups_a or len(groups_a) != len(groups_b):
            return None
        produced = set(self.program.writes(first))
        if len(produced) != 1:
            return None
        (produced,) = produced
        read_by_a = set(self.program.reads(first))
        for a, b in zip(groups_a, groups_b):
            if a.attributes["tiles"] != b.attributes["tiles"] or produced not in b.inputs or produced in b.outputs:
                return None
            if set(b.outputs) & (read_by_a | {produced}):
                return None
            if any(self.box_type(b, i) != self.box_type(a, None) for i, name in enumerate(b.inputs) if name == produced):
                return None  # B reads X through a reshape (a view: same bytes, another shape), maybe beside X itself
        for copy in copies:
            (source,), (dest,) = self.program.accesses(copy)
            if produced in (source, dest) or dest in read_by_a:
                return None
        if self.other_uses(produced, groups_a + groups_b):
            return None
        return sync, copies, second, groups_a, groups_b, produced

    def box_type(self, group, index: int | None) -> ir.Type:
        """The type of a group's codelet input `index`, or of its result (None)."""
        signature = ir.FunctionType(ir.TypeAttr(self.program.lookup(group.codelet).attributes["function_type"]).value)
        return signature.results[0] if index is None else signature.inputs[index]

    def other_uses(self, buffer: str, allowed: list) -> bool:
        """Whether any op but the vertex groups `allowed` names `buffer`."""
        return self.program.use_count(buffer) > sum(g.inputs.count(buffer) + g.outputs.count(buffer) for g in allowed)

    def fuse_codelets(self, a, b, produced: str) -> str:
        """A codelet running A's codelet then B's, with A's result for `produced` passed on."""
        codelet_a, codelet_b = self.program.lookup(a.codelet), self.program.lookup(b.codelet)
        kept = [i for i, name in enumerate(b.inputs) if name != produced]
        type_a = ir.FunctionType(ir.TypeAttr(codelet_a.attributes["function_type"]).value)
        type_b = ir.FunctionType(ir.TypeAttr(codelet_b.attributes["function_type"]).value)
        name = self.program.fresh(f"{a.codelet}_{b.codelet}")
        fused = ipu.codelet_function(
            name, list(type_a.inputs) + [type_b.inputs[i] for i in kept], list(type_b.results), ip=ir.InsertionPoint(self.body)
        )
        self.program.insert(fused)
        mark = CombineMark.of(codelet_a)
        if mark is not None:  # A's arguments come first: its partials stay the first
            fused.attributes[COMBINE_ATTR] = CombineMark(mark.combiner, mark.init, epilogue=True).attribute()
        block = fused.regions[0].blocks[0]
        args = list(block.arguments)
        with ir.InsertionPoint(block):
            (result,) = _inline(codelet_a, args[: len(type_a.inputs)])
            rest = iter(args[len(type_a.inputs) :])
            results = _inline(codelet_b, [result if name == produced else next(rest) for name in b.inputs])
            func.ReturnOp(results)
        return name


def _inline(function, arguments: list[ir.Value]) -> list[ir.Value]:
    """Clones `function`'s body at the insertion point with its arguments replaced."""
    block = function.regions[0].blocks[0]
    mapping = {block.arguments[i]: arguments[i] for i in range(len(arguments))}
    for op in block.operations:
        if op.operation.name == "func.return":
            return [mapping.get(v, v) for v in op.operands]
        copy = op.operation.clone()

        def remap(nested):
            for index, operand in enumerate(nested.operands):
                if operand in mapping:
                    nested.operands[index] = mapping[operand]
            return ir.WalkResult.ADVANCE

        copy.walk(remap)
        for old, new in zip(op.results, copy.results):
            mapping[old] = new
    raise AssertionError("codelet without return")
