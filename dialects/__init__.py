"""The `ipu` dialect: loaded from its one IRDL definition, with typed Python views on top.

`make_context()` gives an MLIR context where every upstream dialect is available and the `ipu`
dialect is loaded from `ipu.irdl.mlir` (the same file `mlir-opt --irdl-file=` reads), with the
IRDL dialects plugins add (`register_irdl`: a plugin's own ops, docs/extending.md).
"""

from __future__ import annotations

from collections.abc import Container
from importlib import resources
from pathlib import Path

from mlir import ir
from mlir._mlir_libs import _mlir
from mlir.dialects import irdl

IRDL_PATH = Path(str(resources.files(__package__).joinpath("ipu.irdl.mlir")))

# Lets MLIR find the typed OpView classes of `ipu.*` ops in `ipu_mlir.dialects.ipu`, the way
# it finds `mlir.dialects.arith` for `arith.*` ops.
_mlir.globals.append_dialect_search_prefix(__package__)


# IRDL files of plugin dialects, by path: loaded into every context made after they are added.
_PLUGIN_IRDL: dict[str, None] = {}


def register_irdl(path: str | Path) -> None:
    """Loads the IRDL dialects of the file `path` into every context `make_context` makes from
    now on, after `ipu.irdl.mlir`. A plugin adds its ops this way, in a dialect of its own
    (docs/extending.md says why not in `ipu`)."""
    _PLUGIN_IRDL[str(Path(path).resolve())] = None


def load_ipu_dialect(context: ir.Context) -> None:
    """Registers the `ipu` dialect, as defined in IRDL, in `context`, and the plugins' dialects."""
    with context, ir.Location.unknown():
        for path in (str(IRDL_PATH), *_PLUGIN_IRDL):
            irdl.load_dialects(ir.Module.parseFile(path))


def make_context() -> ir.Context:
    """A new context with all upstream dialects registered and the `ipu` dialect loaded."""
    context = ir.Context()
    load_ipu_dialect(context)
    return context


def ops_named(module: ir.Operation, names: Container[str]) -> list[ir.Operation]:
    """The ops of `module` whose name is in `names`, in walk order: collected before a pass
    rewrites them, since rewriting during the walk would invalidate it."""
    found: list[ir.Operation] = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(collect)
    return found
