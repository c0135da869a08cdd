"""Errors with source locations, shared by the verifier, the passes and the tools.

Everything that rejects user input raises or returns an `IpuError`: a message plus the MLIR
location it is about, printed the way mlir-opt prints diagnostics (`file:line:col: error: ...`).
"""

from __future__ import annotations

from mlir import ir


def format_location(location: ir.Location | None) -> str:
    """`file:line:col` for a file location (looking through names and call sites), else ''."""
    if location is None:
        return ""
    if location.is_a_file():
        return f"{location.filename}:{location.start_line}:{location.start_col}"
    if location.is_a_name():
        return format_location(location.child_loc)
    if location.is_a_callsite():
        return format_location(location.callee)
    if location.is_a_fused():
        for inner in location.locations:
            text = format_location(inner)
            if text:
                return text
    return ""


class IpuError(Exception):
    """A user-facing error about the IR, optionally attached to a location."""

    def __init__(self, message: str, location: ir.Location | None = None, severity: str = "error"):
        super().__init__(message)
        self.message = message
        self.location = location
        self.severity = severity

    def __str__(self) -> str:
        where = format_location(self.location)
        return f"{where}: {self.severity}: {self.message}" if where else f"{self.severity}: {self.message}"


def op_error(op: ir.Operation | ir.OpView, message: str) -> IpuError:
    """An error about `op`, worded like MLIR's own op verifiers: `'ipu.x' op <message>`."""
    operation = op.operation
    return IpuError(f"'{operation.name}' op {message}", operation.location)
