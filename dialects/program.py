"""The L3 program analysis: what SSA use-lists would give if L3 named buffers by value.

L3 names buffers, compute sets and codelets by symbol, so passes and the simulator ask the
same questions of a module: which op a symbol names, which buffers an op reads and writes,
which vertex groups a compute set holds, and which ops neighbour an op in program order.
`Program` answers them, once per module, in time linear in its size:

    program = Program(module)
    program.lookup("matmul_cs0")          # the op, through the module's ir.SymbolTable
    program.reads(execute)                # ("arg0", "w0"): the buffers its vertex groups read
    program.writes(copy)                  # ("matmul_in0",)
    program.groups("matmul_cs0")          # its ipu.vertex_group ops
    program.supersteps(block)             # [Superstep(exchange, compute, sync), ...]

Reads and writes by op (symbols of `ipu.buffer`s):

| op                   | reads                       | writes          |
|----------------------|-----------------------------|-----------------|
| `ipu.host_to_device` | -                           | `buffer`        |
| `ipu.device_to_host` | `buffer`                    | -               |
| `ipu.copy`           | `source`                    | `dest`          |
| `ipu.vertex_group`   | `inputs`                    | `outputs`       |
| `ipu.execute`        | its compute set's groups' inputs | their outputs |
| `ipu.variable`       | `buffer` (the host's read)  | `buffer` (the host's write) |
| `ipu.ring_all_reduce` | `source`                   | `dest`          |

Passes that rewrite the module keep the analysis in step through `insert` and `forget`
(`OpOrder` keeps the order of a block's ops the same way).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from mlir import ir

from . import ipu

_UNKNOWN = object()


class Program:
    """Symbols, accesses and compute sets of one module (the nearest `builtin.module`)."""

    def __init__(self, module: ir.Operation | ir.Module):
        module = module.operation
        self.module = module
        self.body = module.regions[0].blocks[0]
        self.table = ir.SymbolTable(module)
        self._forgotten: set[str] = set()  # erased symbols the table still lists (it cannot drop without erasing)
        self._found: dict[str, ir.OpView | None] = {}
        self._groups: dict[str, list[ipu.VertexGroupOp]] = {}
        self._execute_effects: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._uses: dict[str, int] | None = None

    # --- Symbols --------------------------------------------------------------------------

    def lookup(self, name: str) -> ir.OpView | None:
        """The op `name` names in the module, None if none (asked of the symbol table once
        per name: passes and the verifier ask for the same buffers many times)."""
        found = self._found.get(name, _UNKNOWN)
        if found is _UNKNOWN:
            try:
                found = None if name in self._forgotten else self.table[name]
            except KeyError:
                found = None
            self._found[name] = found
        return found

    def __contains__(self, name: str) -> bool:
        return name in self.table  # forgotten names too: they are not free for new symbols

    def function(self, name: str, marker: str) -> ir.OpView | None:
        """The `func.func` `name` if it carries `marker` (ipu.compute_set, ipu.codelet, ipu.program)."""
        found = self.lookup(name)
        if found is None or found.operation.name != "func.func" or marker not in found.attributes:
            return None
        return found

    def buffer(self, name: str) -> ipu.BufferOp | None:
        found = self.lookup(name)
        return found if isinstance(found, ipu.BufferOp) else None

    def buffers(self) -> list[ipu.BufferOp]:
        """The module's buffers in declaration order."""
        return [op for op in self.body.operations if isinstance(op, ipu.BufferOp)]

    def variables(self) -> list[ipu.VariableOp]:
        """The module's device variables in declaration order."""
        return [op for op in self.body.operations if isinstance(op, ipu.VariableOp)]

    def functions(self, marker: str) -> list[ir.OpView]:
        """The module's `func.func`s carrying `marker`, in order."""
        return [op for op in self.body.operations if op.operation.name == "func.func" and marker in op.attributes]

    def fresh(self, stem: str) -> str:
        """`stem`, or `stem_1`, `stem_2`, ...: the first name no symbol of the module has."""
        name, count = stem, 0
        while name in self:
            count += 1
            name = f"{stem}_{count}"
        return name

    def insert(self, op: ir.OpView) -> None:
        """Registers a symbol op just created in the module's body."""
        self.table.insert(op.operation)
        self._found.pop(ir.StringAttr(op.attributes["sym_name"]).value, None)

    def forget(self, op: ir.OpView) -> None:
        """Unregisters a symbol op about to be erased (by a rewriter, which must see the erase)."""
        name = ir.StringAttr(op.attributes["sym_name"]).value
        self._forgotten.add(name)
        self._found[name] = None
        self._groups.pop(name, None)
        self._execute_effects.pop(name, None)

    # --- Compute sets ---------------------------------------------------------------------

    def groups(self, compute_set: str) -> list[ipu.VertexGroupOp]:
        """The vertex groups of compute set `compute_set` (none if it names no compute set)."""
        if compute_set not in self._groups:
            function = self.function(compute_set, ipu.COMPUTE_SET_ATTR)
            if function is None:
                return []
            ops = function.regions[0].blocks[0].operations
            self._groups[compute_set] = [op for op in ops if isinstance(op, ipu.VertexGroupOp)]
        return self._groups[compute_set]

    # --- Accesses -------------------------------------------------------------------------

    def reads(self, op: ir.OpView | ir.Operation) -> tuple[str, ...]:
        """The buffers `op` reads, in the order it names them (an execute: over its groups)."""
        return self.accesses(op)[0]

    def writes(self, op: ir.OpView | ir.Operation) -> tuple[str, ...]:
        return self.accesses(op)[1]

    def accesses(self, op: ir.OpView | ir.Operation) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(reads, writes) of `op`; both empty for an op touching no buffer."""
        op = op.opview if isinstance(op, ir.Operation) else op
        name = op.operation.name
        if name == "ipu.execute":
            compute_set = op.compute_set
            if compute_set not in self._execute_effects:
                groups = self.groups(compute_set)
                self._execute_effects[compute_set] = (
                    tuple(b for g in groups for b in g.inputs),
                    tuple(b for g in groups for b in g.outputs),
                )
            return self._execute_effects[compute_set]
        return direct_accesses(op)

    def use_count(self, buffer: str) -> int:
        """How many times ops of the module name `buffer` as a read or write (one walk, then
        cached: rewrites that keep a buffer keep its count)."""
        if self._uses is None:
            uses: dict[str, int] = {}

            def count(op: ir.Operation) -> ir.WalkResult:
                if op.name in _DIRECT:
                    for names in direct_accesses(op.opview):
                        for b in names:
                            uses[b] = uses.get(b, 0) + 1
                return ir.WalkResult.ADVANCE

            self.module.walk(count)
            self._uses = uses
        return self._uses.get(buffer, 0)

    # --- Supersteps -----------------------------------------------------------------------

    def supersteps(self, block: ir.Block) -> list[Superstep]:
        """The supersteps of a program block: each an exchange phase, compute sets, and the
        sync closing it (None for the last, if no sync ends it). Other ops (streams, loops,
        constants) go to `other` of the superstep they appear in."""
        steps, current = [], Superstep()
        for op in block.operations:
            name = op.operation.name
            if name == "ipu.copy":
                current.exchange.append(op)
            elif name == "ipu.execute":
                current.compute.append(op)
            elif name == "ipu.sync":
                current.sync = op
                steps.append(current)
                current = Superstep()
            else:
                current.other.append(op)
        if current.exchange or current.compute or current.other:
            steps.append(current)
        return steps


@dataclass
class Superstep:
    exchange: list[ir.OpView] = field(default_factory=list)
    compute: list[ir.OpView] = field(default_factory=list)
    sync: ir.OpView | None = None
    other: list[ir.OpView] = field(default_factory=list)


_DIRECT = (
    "ipu.host_to_device",
    "ipu.device_to_host",
    "ipu.copy",
    "ipu.vertex_group",
    "ipu.variable",
    "ipu.predicate",
    "ipu.ring_all_reduce",
)


def direct_accesses(op: ir.OpView) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(reads, writes) of an op naming buffers itself: streams, copies, vertex groups."""
    name = op.operation.name
    if name == "ipu.vertex_group":
        return tuple(op.inputs), tuple(op.outputs)
    if name in ("ipu.copy", "ipu.ring_all_reduce"):
        return (op.source,), (op.dest,)
    if name == "ipu.host_to_device":
        return (), (op.buffer,)
    if name in ("ipu.device_to_host", "ipu.predicate"):
        return (op.buffer,), ()
    if name == "ipu.variable":  # outside the program: the host's accesses, between runs
        return (op.buffer,), (op.buffer,)
    return (), ()


class OpOrder:
    """The order of the ops of the blocks holding `ipu.execute`s, as links: rewrite patterns ask
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

    def run_after(self, op: ir.Operation, name: str) -> tuple[list[ir.Operation], ir.Operation | None]:
        """The ops named `name` right after `op`, and the first op after them."""
        found, op = [], self.after(op)
        while op is not None and op.name == name:
            found.append(op)
            op = self.after(op)
        return found, op

    def run_before(self, op: ir.Operation, name: str) -> list[ir.Operation]:
        """The ops named `name` right before `op`, nearest first."""
        found, op = [], self.before(op)
        while op is not None and op.name == name:
            found.append(op)
            op = self.before(op)
        return found

    def next_superstep(self, execute: ir.Operation) -> tuple[ir.Operation, list[ir.Operation], ir.Operation] | None:
        """For a compute set ending its superstep: (its sync, the next exchange phase's copies,
        the next op), or None when no sync follows `execute` directly."""
        sync = self.after(execute)
        if sync is None or sync.name != "ipu.sync":
            return None
        copies, following = self.run_after(sync, "ipu.copy")
        return sync, copies, following

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


def names(ops: Iterable[ir.OpView]) -> list[str]:
    return [ir.StringAttr(op.attributes["sym_name"]).value for op in ops]
