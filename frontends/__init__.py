"""Front ends: what users bring (MLIR files, and later PyTorch modules), compiled and run."""
