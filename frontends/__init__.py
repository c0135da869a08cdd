"""Front ends: what users bring (MLIR files: api; PyTorch modules: torch; the model zoo: zoo), compiled and run."""
