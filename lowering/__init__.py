"""Conversion, planning and scheduling passes, all registered by name for `ipu-opt` pipelines.

Importing this package imports every module in it, so a pass file dropped into `lowering/`
registers itself; docs/writing-passes.md shows how to write one.
"""

from __future__ import annotations

import importlib
import pkgutil

from .pass_registry import (
    ModulePass,
    PipelineError,
    add_pass,
    build_pass,
    build_pass_manager,
    lookup_pass,
    register_pass,
    registered_passes,
)

__all__ = [
    "ModulePass",
    "PipelineError",
    "add_pass",
    "build_pass",
    "build_pass_manager",
    "lookup_pass",
    "register_pass",
    "registered_passes",
]

for _module in pkgutil.iter_modules(__path__):
    if not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
