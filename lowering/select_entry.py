"""`ipu-select-entry`: keep the one public function a module is compiled for."""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from ipu_mlir.target.diagnostics import IpuError

from .pass_registry import ModulePass, register_pass
from .resident import check_residents


def public_functions(module: ir.Operation) -> list[ir.OpView]:
    """The module's public `func.func`s with a body, in order."""
    return [
        op
        for op in module.regions[0].blocks[0].operations
        if op.operation.name == "func.func" and "sym_visibility" not in op.attributes and len(op.regions[0].blocks)
    ]


def resolve_entry(module: ir.Operation, entry: str | None) -> str:
    """The name of the function compiled: `entry` if given, else `main` if public, else the
    only public function. Raises an `IpuError` naming the candidates when that is ambiguous."""
    names = [ir.StringAttr(f.attributes["sym_name"]).value for f in public_functions(module)]
    listed = ", ".join(f"@{n}" for n in names) or "none"
    if entry:
        if entry not in names:
            raise IpuError(f"no public function @{entry} to compile (public functions: {listed})")
        return entry
    if "main" in names:
        return "main"
    if len(names) == 1:
        return names[0]
    if not names:
        raise IpuError("nothing to compile: the module has no public function with a body")
    raise IpuError(f"the module has {len(names)} public functions ({listed}): choose the entry (entry=NAME, --entry NAME)")


@register_pass
@dataclass
class SelectEntry(ModulePass):
    """Keep the entry public and make every other public function private (for symbol-dce).

    Upstream `symbol-dce` then drops the functions the entry does not call. An L3 module holds
    one program and its buffers are module-level symbols, so the compiler takes one entry.
    Without `entry`, it is `main` if public, else the only public function;
    several public functions and no `main` is an error naming them. The entry's device
    variables (`ipu.resident` argument and result attributes, docs/contracts.md) are checked
    here: string names, one argument and at most one result per name, a result of its
    variable's type.

    Before, with `ipu-select-entry{entry=f}`:

        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { ... }
        func.func @g(%x: tensor<4xf32>) -> tensor<4xf32> { ... }

    After:

        func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> { ... }
        func.func private @g(%x: tensor<4xf32>) -> tensor<4xf32> { ... }
    """

    name = "ipu-select-entry"

    entry: str = field(default="", metadata={"help": "the public function to compile (default: main, or the only public function)"})

    def run(self, module: ir.Operation) -> None:
        chosen = resolve_entry(module, self.entry or None)
        for function in public_functions(module):
            if ir.StringAttr(function.attributes["sym_name"]).value != chosen:
                function.attributes["sym_visibility"] = ir.StringAttr.get("private", module.context)
            else:
                check_residents(function)
