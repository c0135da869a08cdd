"""`ipu-fuse-compute-sets` (L3): run an element-wise consumer in its producer's compute set.

The pass's docstring (`ipu-opt --help-pass ipu-fuse-compute-sets`) explains it, with a before/after example.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir
from mlir.dialects import func
from mlir.rewrite import GreedyRewriteConfig, RewritePatternSet, apply_patterns_and_fold_greedily

from ipu_mlir.dialects import ipu

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


def apply_execute_pattern(module: ir.Operation, rewrite) -> None:
    """Applies `rewrite` as a pattern on every `ipu.execute`, until nothing changes; no
    folding, which would touch codelet bodies."""
    patterns = RewritePatternSet()
    patterns.add("ipu.execute", rewrite)
    config = GreedyRewriteConfig()
    config.enable_folding = False
    config.enable_constant_cse = False
    apply_patterns_and_fold_greedily(module, patterns.freeze(), config)


def _name(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


class _Fuser:
    def __init__(self, module: ir.Operation):
        self.module = module
        self.body = module.regions[0].blocks[0]
        self.symbols = {_name(op): op for op in self.body.operations if "sym_name" in op.attributes}
        self.sequence = Sequence(module)
        # How many times ops name each buffer; fusing keeps the counts of every buffer it keeps.
        self.uses: dict[str, int] = {}
        module.walk(self.count_uses)

    def count_uses(self, op) -> ir.WalkResult:
        if op.name.startswith("ipu.") and op.name != "ipu.buffer":
            for name in op.attributes:
                attr = op.attributes[name]
                for element in (list(attr) if isinstance(attr, ir.ArrayAttr) else [attr]):
                    if isinstance(element, ir.FlatSymbolRefAttr):
                        self.uses[element.value] = self.uses.get(element.value, 0) + 1
        return ir.WalkResult.ADVANCE

    def rewrite(self, first, rewriter) -> bool:
        """Returns True when the pattern does not apply (the bindings' convention)."""
        match = self.match(first)
        if match is None:
            return True
        sync, copies, second, groups_a, groups_b, produced = match
        replaced = [self.symbols.pop(first.compute_set), self.symbols.pop(second.compute_set)]
        fused_name = self.fresh(f"{first.compute_set}_{second.compute_set}")
        compute_set = ipu.compute_set_function(fused_name, loc=first.location, ip=ir.InsertionPoint(self.body))
        self.symbols[fused_name] = compute_set.operation
        with ir.InsertionPoint(compute_set.regions[0].blocks[0]), first.location:
            for a, b in zip(groups_a, groups_b):
                codelet = self.fuse_codelets(a, b, produced)
                inputs = a.inputs + [name for name in b.inputs if name != produced]
                ipu.vertex_group(codelet, a.tiles, inputs, b.outputs)
            func.ReturnOp([])
        for copy in copies:
            self.sequence.move_before(copy, first.operation)
        first.attributes["compute_set"] = ir.FlatSymbolRefAttr.get(fused_name)
        codelets = {g.codelet for g in groups_a + groups_b}
        for op in (sync, second.operation):
            self.sequence.remove(op)
            rewriter.erase_op(op)
        for op in replaced + [self.symbols.pop(name) for name in codelets] + [self.symbols.pop(produced)]:
            rewriter.erase_op(op.operation)
        return False

    def match(self, first):
        sync = self.sequence.after(first.operation)
        if sync is None or sync.name != "ipu.sync":
            return None
        copies, op = [], self.sequence.after(sync)
        while op is not None and op.name == "ipu.copy":
            copies.append(op)
            op = self.sequence.after(op)
        if op is None or op.name != "ipu.execute":
            return None
        second = op.opview
        groups_a = self.groups(first)
        groups_b = self.groups(second)
        if not groups_a or len(groups_a) != len(groups_b):
            return None
        produced = {name for g in groups_a for name in g.outputs}
        if len(produced) != 1:
            return None
        (produced,) = produced
        read_by_a = {name for g in groups_a for name in g.inputs}
        for a, b in zip(groups_a, groups_b):
            if a.attributes["tiles"] != b.attributes["tiles"] or produced not in b.inputs or produced in b.outputs:
                return None
            if set(b.outputs) & (read_by_a | {produced}):
                return None
        for copy in (c.opview for c in copies):
            if produced in (copy.source, copy.dest) or copy.dest in read_by_a:
                return None
        if self.other_uses(produced, groups_a + groups_b):
            return None
        return sync, copies, second, groups_a, groups_b, produced

    def groups(self, execute: ipu.ExecuteOp) -> list[ipu.VertexGroupOp]:
        return groups_of(self.symbols, execute)

    def other_uses(self, buffer: str, allowed: list) -> bool:
        """Whether any op but the vertex groups `allowed` names `buffer`."""
        return self.uses.get(buffer, 0) > sum(g.inputs.count(buffer) + g.outputs.count(buffer) for g in allowed)

    def fresh(self, stem: str) -> str:
        name, count = stem, 0
        while name in self.symbols:
            count += 1
            name = f"{stem}_{count}"
        return name

    def fuse_codelets(self, a, b, produced: str) -> str:
        """A codelet running A's codelet then B's, with A's result for `produced` passed on."""
        codelet_a, codelet_b = self.symbols[a.codelet], self.symbols[b.codelet]
        kept = [i for i, name in enumerate(b.inputs) if name != produced]
        type_a = ir.FunctionType(ir.TypeAttr(codelet_a.attributes["function_type"]).value)
        type_b = ir.FunctionType(ir.TypeAttr(codelet_b.attributes["function_type"]).value)
        name = self.fresh(f"{_name(codelet_a)}_{_name(codelet_b)}")
        fused = ipu.codelet_function(name, list(type_a.inputs) + [type_b.inputs[i] for i in kept], list(type_b.results), ip=ir.InsertionPoint(self.body))
        self.symbols[name] = fused.operation
        block = fused.regions[0].blocks[0]
        args = list(block.arguments)
        with ir.InsertionPoint(block):
            (result,) = _inline(codelet_a, args[: len(type_a.inputs)])
            rest = iter(args[len(type_a.inputs) :])
            results = _inline(codelet_b, [result if name == produced else next(rest) for name in b.inputs])
            func.ReturnOp(results)
        return name


def groups_of(symbols: dict, execute: ipu.ExecuteOp) -> list[ipu.VertexGroupOp]:
    """The vertex groups of the compute set `execute` runs (none if it is not in `symbols`)."""
    compute_set = symbols.get(execute.compute_set)
    if compute_set is None:
        return []
    return [op for op in compute_set.regions[0].blocks[0].operations if isinstance(op, ipu.VertexGroupOp)]


class Sequence:
    """The order of the ops of the blocks holding `ipu.execute`s, as links: the patterns ask
    for an op's neighbours in O(1) (the bindings can only list a whole block)."""

    def __init__(self, module: ir.Operation):
        self.next: dict[ir.Operation, ir.Operation | None] = {}
        self.previous: dict[ir.Operation, ir.Operation | None] = {}
        blocks = []

        def visit(op):
            if op.name == "ipu.execute" and all(op.block != b for b in blocks):
                blocks.append(op.block)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for block in blocks:
            ops = [op.operation for op in block.operations]
            for before, after in zip([None] + ops, ops + [None]):
                if after is not None:
                    self.previous[after] = before
                if before is not None:
                    self.next[before] = after

    def after(self, op: ir.Operation) -> ir.Operation | None:
        return self.next.get(op)

    def before(self, op: ir.Operation) -> ir.Operation | None:
        return self.previous.get(op)

    def remove(self, op: ir.Operation) -> None:
        before, after = self.previous.pop(op, None), self.next.pop(op, None)
        if before is not None:
            self.next[before] = after
        if after is not None:
            self.previous[after] = before

    def move_before(self, op: ir.Operation, anchor: ir.Operation) -> None:
        self.remove(op)
        before = self.previous[anchor]
        self.previous[op], self.next[op] = before, anchor
        self.previous[anchor] = op
        if before is not None:
            self.next[before] = op
        op.move_before(anchor)


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
