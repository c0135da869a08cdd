"""The L1 compute ops, one file per op, and their registry (`registry.py`): import this
package and every built-in record is registered."""

from . import conv, gather, generic, matmul, scatter  # noqa: F401  (registers the records)
from .registry import (
    REGISTRY,
    ComputeOp,
    Example,
    Piece,
    SerialCut,
    codelet_cycles,
    converter_of,
    record_of,
    register_op,
    space_of,
    tile_cycles,
)

__all__ = [
    "REGISTRY", "ComputeOp", "Example", "Piece", "SerialCut", "codelet_cycles", "converter_of", "record_of", "register_op",
    "space_of", "tile_cycles",
]  # fmt: skip
