"""The compiled-program cache (frontends/cache.py): a hit skips the compiler, a change of
program, target, entry or memory fraction misses, concurrent writers leave one whole entry,
a corrupted entry is ignored and written again, and `--no-cache` / IPU_MLIR_NO_CACHE write
nothing."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from ipu_mlir.dialects import make_context
from ipu_mlir.frontends import api, cache, zoo
from ipu_mlir.tools import ipu_run

PROGRAM = """
func.func @main(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
  %e = tensor.empty() : tensor<256xf32>
  %r = linalg.add ins(%x, %y : tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<256xf32>) -> tensor<256xf32>
  return %r : tensor<256xf32>
}
"""
INPUTS = [np.arange(256, dtype=np.float32), np.ones(256, dtype=np.float32)]


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(cache.OFF_ENV, raising=False)  # test/conftest.py turns the cache off for the other tests
    monkeypatch.setenv(cache.DIR_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The compiler's calls, counted."""
    calls: list[str] = []
    compile_to_program = api.compile_to_program

    def counted(module, target, *args, **kwargs):
        calls.append(str(target))
        return compile_to_program(module, target, *args, **kwargs)

    monkeypatch.setattr(api, "compile_to_program", counted)
    return calls


def _entries(directory: Path) -> list[Path]:
    return sorted(directory.glob("*.mlirbc"))


def test_hit_skips_the_compiler(cache_dir: Path, compiles: list[str]) -> None:
    first, _ = api.run(PROGRAM, INPUTS, target="tiny")
    assert len(compiles) == 1 and len(_entries(cache_dir)) == 1
    second, _ = api.run(PROGRAM, INPUTS, target="tiny")
    assert len(compiles) == 1, "the second run compiled again"
    np.testing.assert_array_equal(second[0], INPUTS[0] + INPUTS[1])
    np.testing.assert_array_equal(first[0], second[0])


def test_a_change_of_program_target_or_option_misses(cache_dir: Path, compiles: list[str]) -> None:
    api.run(PROGRAM, INPUTS, target="tiny")
    api.run(PROGRAM, INPUTS, target="gc2")
    api.run(PROGRAM, INPUTS, target="tiny", memory_fraction=0.5)
    subtract = PROGRAM.replace("linalg.add", "linalg.sub")
    outputs, _ = api.run(subtract, INPUTS, target="tiny")
    np.testing.assert_array_equal(outputs[0], INPUTS[0] - INPUTS[1])
    assert compiles == ["tiny", "gc2", "tiny", "tiny"]
    assert len(_entries(cache_dir)) == 4


def test_keys_delimit_their_parts() -> None:
    assert cache.key("ab", "c") != cache.key("a", "bc")
    assert cache.key("a", None) != cache.key("a", "")


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data[:-10] + bytes(10),  # bytes of the program changed
        lambda data: b"not a cache entry",
        lambda data: b"",
    ],
)
def test_a_corrupted_entry_is_ignored_and_written_again(cache_dir: Path, compiles: list[str], damage) -> None:
    api.run(PROGRAM, INPUTS, target="tiny")
    (entry,) = _entries(cache_dir)
    whole = entry.read_bytes()
    entry.write_bytes(damage(whole))
    outputs, _ = api.run(PROGRAM, INPUTS, target="tiny")
    np.testing.assert_array_equal(outputs[0], INPUTS[0] + INPUTS[1])
    assert len(compiles) == 2, "the damaged entry was used"
    assert entry.read_bytes() == whole


def test_changed_weight_bytes_are_caught(cache_dir: Path, compiles: list[str]) -> None:
    """Bytecode keeps weights as raw bytes: a changed one still parses, as another number."""
    weights = 1000 + np.arange(256, dtype=np.float32) / 4
    constant = f"%w = arith.constant dense<[{', '.join(map(str, weights))}]> : tensor<256xf32>"
    program = PROGRAM.replace("%e = tensor.empty()", f"{constant}\n  %e = tensor.empty()").replace("ins(%x, %y", "ins(%x, %w")
    api.run(program, INPUTS, target="tiny")
    (entry,) = _entries(cache_dir)
    whole = entry.read_bytes()
    assert whole.count(weights[1].tobytes()) == 1
    entry.write_bytes(whole.replace(weights[1].tobytes(), np.float32(7).tobytes()))
    outputs, _ = api.run(program, INPUTS, target="tiny")
    np.testing.assert_array_equal(outputs[0], INPUTS[0] + weights)
    assert len(compiles) == 2 and entry.read_bytes() == whole


def test_an_unparsable_payload_with_a_valid_checksum_is_a_miss(cache_dir: Path) -> None:
    with make_context() as context:
        module = api.load_module(PROGRAM)
        cache.store("k", module)
        assert cache.load("k", context) is not None
        payload = b"ML\xefR garbage"
        entry = cache_dir / "k.mlirbc"
        entry.write_bytes(cache.MAGIC + len(payload).to_bytes(8, "little") + hashlib.sha256(payload).digest() + payload)
        assert cache.load("k", context) is None


WRITER = """
import sys
from ipu_mlir.frontends import api, cache
module = api.load_module(open(sys.argv[1]).read())
for _ in range(int(sys.argv[2])):
    cache.store("shared", module)
"""


def test_concurrent_writers_leave_one_whole_entry(cache_dir: Path, tmp_path: Path) -> None:
    source = tmp_path / "program.mlir"
    source.write_text(PROGRAM)
    writers = [subprocess.Popen([sys.executable, "-c", WRITER, str(source), "15"]) for _ in range(3)]
    seen = 0
    with make_context() as context:
        expected = str(api.load_module(PROGRAM))
        while any(writer.poll() is None for writer in writers):
            module = cache.load("shared", context)  # absent at first, then whole: never half written
            assert module is not None or seen == 0, "a reader met a half-written entry"
            if module is not None:
                assert str(module) == expected
                seen += 1
        assert all(writer.wait() == 0 for writer in writers)
        assert str(cache.load("shared", context)) == expected
    assert [path.name for path in cache_dir.iterdir()] == ["shared.mlirbc"], "a temporary file was left behind"
    assert seen > 0


def test_off_writes_nothing(cache_dir: Path, compiles: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    api.run(PROGRAM, INPUTS, target="tiny", use_cache=False)
    monkeypatch.setenv(cache.OFF_ENV, "1")
    api.run(PROGRAM, INPUTS, target="tiny")
    assert len(compiles) == 2 and not cache_dir.exists()


def test_an_unwritable_directory_only_turns_it_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cache.OFF_ENV, raising=False)
    blocker = tmp_path / "a file"
    blocker.write_text("")
    monkeypatch.setenv(cache.DIR_ENV, str(blocker / "cache"))
    outputs, _ = api.run(PROGRAM, INPUTS, target="tiny")
    np.testing.assert_array_equal(outputs[0], INPUTS[0] + INPUTS[1])


def test_least_recently_used_entries_go_first(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with make_context():
        module = api.load_module(PROGRAM)
        cache.store("old", module)
        size = (cache_dir / "old.mlirbc").stat().st_size
        os.utime(cache_dir / "old.mlirbc", (1, 1))
        monkeypatch.setenv(cache.SIZE_ENV, str(2 * size))
        cache.store("new", module)
        cache.store("newer", module)
    assert sorted(path.stem for path in _entries(cache_dir)) == ["new", "newer"]


def test_ipu_run_model_skips_export_and_compile(cache_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch) -> None:
    model = zoo.MODELS["bert_encoder"]
    narrow = dataclasses.replace(model, builder=functools.partial(model.builder, hidden=32, heads=2))
    monkeypatch.setitem(zoo.MODELS, "bert_encoder", narrow)
    command = ["--model", "bert_encoder", "--size", "4", "--layers", "1", "--target", "tiny"]
    assert ipu_run.main(command) == 0
    cold = capsys.readouterr().out
    assert "export:" in cold and "from the program cache" not in cold
    assert ipu_run.main(command) == 0
    warm = capsys.readouterr().out
    assert "export:" not in warm and re.search(r"^compile: +\d+\.\d\d s \(tiny, from the program cache\)$", warm, re.M), warm
    assert "(rtol 0.0001): ok" in warm
    assert len(_entries(cache_dir)) == 1

    # other weights, same name and configuration: another program
    def perturbed(**options):
        module, inputs = narrow.builder(**options)
        with torch.no_grad():
            next(module.parameters()).add_(1.0)
        return module, inputs

    monkeypatch.setitem(zoo.MODELS, "bert_encoder", dataclasses.replace(model, builder=perturbed))
    assert ipu_run.main(command) == 0
    assert "export:" in capsys.readouterr().out
    assert ipu_run.main([*command, "--no-cache"]) == 0
    assert "export:" in capsys.readouterr().out
    assert len(_entries(cache_dir)) == 2
