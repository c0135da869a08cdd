"""torch-mlir's TMTensor ops (`tm_tensor.*`) as this project meets them: unregistered ops in
generic form (the MLIR bindings do not know the dialect), named here with the ATen ops that
lead torch-mlir to emit them, for messages. `ipu-convert-tm-tensor` rewrites them."""

from __future__ import annotations

DIALECT = "tm_tensor"
# What torch-mlir emits in its TMTensor dialect, by the ATen ops that lead there.
ORIGINS = {
    "scan": "aten.cumsum",
    "sort": "aten.sort, aten.topk, aten.argsort",
    "scatter": "aten.index_put, aten.scatter, aten.scatter_add, aten.index_add",
    "attention": "aten.scaled_dot_product_attention",
}


def describe(op_name: str) -> str:
    """ "torch-mlir's TMTensor, emitted for aten.cumsum" for 'tm_tensor.scan'."""
    origin = ORIGINS.get(op_name.split(".", 1)[-1])
    return "torch-mlir's TMTensor" + (f", emitted for {origin}" if origin else "")
