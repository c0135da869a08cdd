"""docs/dialect.md is generated from dialects/ipu.irdl.mlir and must not go stale."""

from pathlib import Path

from ipu_mlir.dialects import IRDL_PATH
from ipu_mlir.tools import dialect_doc

REPO = Path(__file__).resolve().parents[2]
DOC = REPO / "docs" / "dialect.md"


def test_committed_doc_is_up_to_date():
    assert dialect_doc.main(["--check", str(DOC)]) == 0, "run `make docs` and commit docs/dialect.md"


def test_check_fails_on_a_stale_doc(tmp_path, capsys):
    stale = tmp_path / "dialect.md"
    stale.write_text(DOC.read_text().replace("Matrix product", "Matrix producht"))
    assert dialect_doc.main(["--check", str(stale)]) == 1
    assert f"{stale} is stale; regenerate it with `make docs`" in capsys.readouterr().err


def test_every_op_of_the_definition_is_documented():
    intro, operations = dialect_doc.read_definition(IRDL_PATH)
    names = [op.name for op in operations]
    assert names == [
        "ipu.matmul",
        "ipu.conv",
        "ipu.gather",
        "ipu.scatter",
        "ipu.all_reduce",
        "ipu.exchange",
        "ipu.buffer",
        "ipu.variable",
        "ipu.host_to_device",
        "ipu.device_to_host",
        "ipu.copy",
        "ipu.ring_all_reduce",
        "ipu.sync",
        "ipu.predicate",
        "ipu.execute",
        "ipu.vertex_group",
    ]
    for op in operations:
        assert op.doc and op.doc[0].endswith("."), f"{op.name} lacks a one-line summary"
        assert any(line.startswith("```mlir") for line in op.doc), f"{op.name} lacks an example"
        assert any("Verified" in line for line in op.doc), f"{op.name} does not say what is verified"


def test_doc_follows_the_definition(tmp_path):
    definition = tmp_path / "mini.irdl.mlir"
    definition.write_text(
        "//# # Mini\n"
        "irdl.dialect @ipu {\n"
        "  //## Section A\n"
        "\n"
        "  // Adds two things.\n"
        "  //\n"
        "  // Longer text.\n"
        "  irdl.operation @add {\n"
        '    %t = irdl.base "!builtin.tensor"\n'
        '    %u = irdl.base "!builtin.tensor"\n'
        '    %k = irdl.is "fast"\n'
        "    irdl.operands(xs: variadic %t)\n"
        "    irdl.results(r: %u)\n"
        '    irdl.attributes { "mode" = %k }\n'
        "  }\n"
        "}\n"
    )
    text = dialect_doc.generate(definition)
    assert text.startswith("# Mini\n")
    assert "## Section A\n\n### `ipu.add`\n\n**Adds two things.**\n\nLonger text.\n" in text
    assert "| `xs` | variadic ranked tensor |" in text
    assert "| `r` | ranked tensor |" in text
    assert '| `mode` | `"fast"` |' in text
