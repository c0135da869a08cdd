"""ipu-mlir: an MLIR-based compiler and BSP simulator for a Graphcore-IPU-style tile machine.

The packages (README.md): `target`, `dialects`, `lowering`, `runtime`, `frontends`, `vis`, `tools`.
"""

__version__ = "0.1.0"
