"""Errors with source locations, shared by the verifier, the passes and the tools.

Everything that rejects user input raises or returns an `IpuError`: a message plus the MLIR
location it is about, printed the way mlir-opt prints diagnostics (`file:line:col: error: ...`).
"""

from __future__ import annotations

from mlir import ir


def format_location(location: ir.Location | None) -> str:
    """`file:line:col` for a file location (looking through names and call sites); else, for
    name locations only, the names (`layers.0.self_attn (aten.permute)`, as the PyTorch front end
    names an op of a layer defined inside torch); else ''."""
    return _file_location(location) or _names_text(location)


def describe_location(location: ir.Location | None) -> str:
    """What an op's location says, for a message about something else it made: the names and
    the file position, `layers.0.fc1 (aten.mm) at model.py:12:0`, either alone, or ''."""
    where, names = _file_location(location), _names_text(location)
    return f"{names} at {where}" if names and where else names or where


def _names_text(location: ir.Location | None) -> str:
    names = []
    while location is not None and location.is_a_name():
        names.append(location.name_str)
        location = location.child_loc
    if not names:
        return ""
    return names[0] + (f" ({', '.join(names[1:])})" if len(names) > 1 else "")


def _file_location(location: ir.Location | None) -> str:
    if location is None:
        return ""
    if location.is_a_file():
        return f"{location.filename}:{location.start_line}:{location.start_col}"
    if location.is_a_name():
        return _file_location(location.child_loc)
    if location.is_a_callsite():
        return _file_location(location.callee)
    if location.is_a_fused():
        for inner in location.locations:
            text = _file_location(inner)
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
