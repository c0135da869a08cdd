"""The compute-op registry (dialects/ops): each L1 compute op is declared once, by its record,
and nobody else keeps a table of compute-op names."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from mlir import ir

from ipu_mlir.dialects import ipu, make_context
from ipu_mlir.dialects.ops import REGISTRY, ComputeOp, converter_of, record_of, register_op, space_of

REPO = Path(__file__).resolve().parents[2]
# The records shipped in dialects/ops (a plugin's, registered by another test, are not).
SHIPPED = sorted(name for name, record in REGISTRY.items() if type(record).__module__.startswith("ipu_mlir.dialects.ops."))
BUILT_IN = tuple(name for name in SHIPPED if name.startswith("ipu."))  # the ipu compute ops
VIEWS = {name for name, view in vars(ipu).items() if getattr(view, "OPERATION_NAME", None) in BUILT_IN}  # their typed views
# Where op names and views may appear: the records, the dialect's own definition and views.
ALLOWED = {REPO / "dialects" / "ipu.py"}


def _code_mentions(path: Path) -> list[str]:
    """Names of built-in compute ops (as strings or typed views) in code, docstrings excepted."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and node.value in BUILT_IN and id(node) not in docstrings:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: '{node.value}'")
        if isinstance(node, ast.Attribute) and node.attr in VIEWS:
            found.append(f"{path.relative_to(REPO)}:{node.lineno}: {node.attr}")
    return found


def test_no_table_of_compute_op_names_outside_the_records():
    found = []
    for package in ("dialects", "lowering", "runtime", "target", "frontends", "tools"):
        for path in sorted((REPO / package).rglob("*.py")):
            if (REPO / "dialects" / "ops") not in path.parents and path not in ALLOWED:
                found += _code_mentions(path)
    assert not found, "compute ops are named outside their records (dialects/ops):\n" + "\n".join(found)


def test_the_built_in_records():
    assert {"ipu.matmul", "ipu.conv", "linalg.generic"} <= set(REGISTRY)
    assert converter_of("linalg.batch_matmul") is REGISTRY["ipu.matmul"]
    assert converter_of("linalg.depthwise_conv_2d_nhwc_hwc") is REGISTRY["ipu.conv"]
    assert converter_of("linalg.add") is None


def test_records_give_spaces_and_extents_that_agree():
    text = """
    func.func @f(%a: tensor<2x8x4xf32>, %b: tensor<2x4x6xf32>, %x: tensor<1x4x9x9xf32>, %w: tensor<8x2x3x3xf32>)
        -> (tensor<2x8x6xf32>, tensor<1x8x4x4xf32>) {
      %m = "ipu.matmul"(%a, %b) : (tensor<2x8x4xf32>, tensor<2x4x6xf32>) -> tensor<2x8x6xf32>
      %c = "ipu.conv"(%x, %w) {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, padding = array<i64: 0, 0, 0, 0>,
                               groups = 2 : i64} : (tensor<1x4x9x9xf32>, tensor<8x2x3x3xf32>) -> tensor<1x8x4x4xf32>
      return %m, %c : tensor<2x8x6xf32>, tensor<1x8x4x4xf32>
    }"""
    module = ir.Module.parse(text, make_context())
    matmul, conv, _ = module.body.operations[0].regions[0].blocks[0].operations
    assert space_of(matmul).extents == record_of(matmul).extents(matmul) == (2, 8, 6, 4)
    assert space_of(conv).extents == record_of(conv).extents(conv) == (1, 8, 4, 4, 2, 3, 3)


def test_register_op_wants_a_dialect_qualified_name_and_one_record_per_name():
    with pytest.raises(TypeError, match="needs a `name`"):

        @register_op
        class Nameless(ComputeOp):
            pass

    with pytest.raises(ValueError, match="'ipu.matmul' is already registered by Matmul"):

        @register_op
        class AnotherMatmul(ComputeOp):
            name = "ipu.matmul"


@pytest.mark.parametrize(
    "page, before",
    [("compiler.md", "the compute ops of the op registry: "), ("contracts.md", "Compute ops (those of the op registry: ")],
)
def test_docs_list_the_registry(page: str, before: str):
    """Where a page lists every compute op, it lists the registry's."""
    text = " ".join((REPO / "docs" / page).read_text().split())
    listed = text.split(before, 1)[1].split(";", 1)[0].split(")", 1)[0]
    assert re.findall(r"`([\w.]+)`", listed) == SHIPPED
