"""torch-mlir's TMTensor ops (`tm_tensor.*`) as this project meets them: unregistered ops in
generic form (the MLIR bindings do not know the dialect), named here with the ATen ops that
lead torch-mlir to emit them, for messages. `ipu-convert-tm-tensor` rewrites them.

A file holding them in their custom form (what `str(module)` of torch-mlir's output writes)
cannot be parsed by the MLIR bindings; `generic_form` has torch-mlir's own `torch-mlir-opt`
(shipped in its wheel) print it in generic form, locations kept, for the parsers to read.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess

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


NOT_FOUND = "Dialect `tm_tensor' not found for custom op"


class CustomFormError(Exception):
    """torch-mlir's parser refused the text too: its first error (`message`) and where it is
    in the source (`file`, `line`, `column`; line 0 when it named none)."""

    def __init__(self, file: str, line: int, column: int, message: str):
        super().__init__(message)
        self.file, self.line, self.column, self.message = file, line, column, message


def generic_form(text: str, source_name: str) -> str | None:
    """`text` printed in generic form by torch-mlir's `torch-mlir-opt`, its locations naming
    `source_name`; None when torch-mlir is not installed. Raises CustomFormError with
    torch-mlir's first error when its parser refuses the text too."""
    spec = importlib.util.find_spec("torch_mlir")
    if spec is None or not spec.submodule_search_locations:
        return None
    tool = os.path.join(next(iter(spec.submodule_search_locations)), "_mlir_libs", "torch-mlir-opt")
    if not os.access(tool, os.X_OK):
        return None
    done = subprocess.run([tool, "--mlir-print-op-generic", "--mlir-print-debuginfo", "-"], input=text, capture_output=True, text=True)
    if done.returncode != 0:
        first = next((line for line in done.stderr.splitlines() if ": error: " in line), "")
        located = re.match(r"<stdin>:(\d+):(\d+): error: (.*)", first)
        if located:
            raise CustomFormError(source_name, int(located[1]), int(located[2]), located[3].strip())
        raise CustomFormError(source_name, 0, 0, first.split(": error: ", 1)[-1].strip() or "torch-mlir-opt failed")
    quoted = '"' + source_name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return re.sub(r'"<stdin>":(?=\d+:\d+)', lambda _: quoted + ":", done.stdout)
