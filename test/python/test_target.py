"""Targets: the built-in files load, every figure is cited, the numbers are docs/design.md's, and
bad target files, names and attributes are rejected with exact messages."""

from __future__ import annotations

import math
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mlir import ir

import ipu_mlir.target as target_module
from ipu_mlir.target import (
    BUILTIN_TARGETS_DIR,
    DEFAULT_TARGET,
    Target,
    builtin_targets,
    cost_model,
    load_target,
    target_of,
)
from ipu_mlir.target.diagnostics import IpuError

FIGURES = [
    "num_tiles",
    "tile_memory_bytes",
    "worker_threads",
    "clock_hz",
    "fp32_fma_per_cycle",
    "fp16_fma_per_cycle",
    "fp8_fma_per_cycle",
    "amp_conv_units",
    "amp_conv_units_f32_partials",
    "amp_weight_bytes_per_conv_unit",
    "amp_weight_load_bytes_per_cycle",
    "memory_latency_cycles",
    "memory_read_bytes_per_cycle",
    "memory_write_bytes_per_cycle",
    "exchange_bytes_per_cycle",
    "exchange_tiles_per_shared_bus",
    "sync_cycles",
    "host_link_bytes_per_second",
    "ipu_link_count",
    "ipu_link_bytes_per_second",
    "ipu_link_efficiency",
    "planner_memory_fraction",
]
TINY_FILE = BUILTIN_TARGETS_DIR / "tiny.toml"
BUILTINS = ", ".join(builtin_targets())  # as messages list them
CHIPS = [name for name in builtin_targets() if load_target(name).system is None]  # systems: test_systems.py


def uncited_numbers(document: dict[str, Any]) -> list[str]:
    """Numbers in a raw target document that lack a `source` or an `assumption`. Read without the
    loader, so that a loader bug cannot hide an uncited figure."""
    uncited = []
    for key, entry in document.items():
        if isinstance(entry, (int, float)):
            uncited.append(key)
        elif isinstance(entry, dict):
            citations = [entry.get("source", ""), entry.get("assumption", "")]
            if not any(isinstance(text, str) and text.strip() for text in citations):
                uncited.append(key)
    return uncited


def tiny_variant(tmp_path: Path, field: str, value: str | None) -> Path:
    """tiny.toml with `field = <value>` instead of its own line (no line when `value` is None)."""
    lines = TINY_FILE.read_text().splitlines()
    assert any(text.startswith(f"{field} =") for text in lines)
    replacement = [] if value is None else [f"{field} = {value}"]
    edited = [new for text in lines for new in (replacement if text.startswith(f"{field} =") else [text])]
    path = tmp_path / "variant.toml"
    path.write_text("\n".join(edited) + "\n")
    return path


def test_builtin_targets_are_the_target_files_by_name():
    """A new built-in target is one file: target/targets/NAME.toml."""
    names = builtin_targets()
    assert names == sorted(names) and {"gc2", "gc200", "tiny", DEFAULT_TARGET} <= set(names)
    assert all((BUILTIN_TARGETS_DIR / f"{name}.toml").is_file() for name in names)


def test_builtin_targets_follow_the_directory(tmp_path: Path, monkeypatch):
    copy = tmp_path / "targets"
    shutil.copytree(BUILTIN_TARGETS_DIR, copy)
    (copy / "zz.toml").write_text(TINY_FILE.read_text().replace('name = "tiny"', 'name = "zz"'))
    monkeypatch.setattr(target_module, "BUILTIN_TARGETS_DIR", copy)
    assert builtin_targets()[-1] == "zz" and load_target("zz").name == "zz"
    with pytest.raises(IpuError, match=r"built-in targets: .*gc2, gc200, .*tiny, zz \("):
        load_target("gc3")


@pytest.mark.parametrize("name", CHIPS)
def test_builtin_target_loads_with_provenance_for_every_figure(name: str):
    target = load_target(name)
    assert target.name == name
    assert set(target.provenance) == set(FIGURES)
    assert all(text.strip() for text in target.provenance.values())


@pytest.mark.parametrize("name", CHIPS)
def test_every_number_in_builtin_file_is_cited(name: str):
    document = tomllib.loads((BUILTIN_TARGETS_DIR / f"{name}.toml").read_text())
    assert set(FIGURES) <= set(document)
    assert uncited_numbers(document) == []


def test_uncited_numbers_finds_bare_and_uncited_figures():
    document = tomllib.loads(
        'name = "x"\n'
        "num_tiles = 4\n"
        'clock_hz = { value = 1, derived = "by hand" }\n'
        'sync_cycles = { value = 1, source = " " }\n'
        'worker_threads = { value = 6, assumption = "like gc200" }\n'
    )
    assert uncited_numbers(document) == ["num_tiles", "clock_hz", "sync_cycles"]


def test_gc200_matches_design_table():
    gc200 = load_target("gc200")
    assert gc200.num_tiles == 1472
    assert gc200.tile_memory_bytes == 638976
    assert gc200.worker_threads == 6
    assert gc200.clock_hz == round(250e12 / (1472 * 128))
    assert gc200.clock_hz == pytest.approx(1.325e9, rel=2e-3)
    assert gc200.fp32_fma_per_cycle == 16
    assert gc200.fp16_fma_per_cycle == 64
    assert gc200.peak_flops("f32") == pytest.approx(62.5e12, rel=1e-6)
    assert gc200.peak_flops("f16") == pytest.approx(250e12, rel=1e-6)
    memory_bandwidth = (gc200.memory_read_bytes_per_cycle + gc200.memory_write_bytes_per_cycle) * gc200.num_tiles * gc200.clock_hz
    assert memory_bandwidth == pytest.approx(47.5e12, rel=0.03)
    assert gc200.exchange_bytes_per_cycle * gc200.num_tiles * gc200.clock_hz == pytest.approx(8e12, rel=0.03)
    assert gc200.ipu_link_count == 10
    assert gc200.ipu_link_count * gc200.ipu_link_bytes_per_second == 320e9
    assert gc200.host_link_bytes_per_second == 64e9


def test_gc2_matches_design_table():
    gc2 = load_target("gc2")
    assert gc2.num_tiles == 1216
    assert gc2.tile_memory_bytes == 262144
    assert gc2.worker_threads == 6
    assert gc2.clock_hz == 1.6e9
    assert gc2.fp32_fma_per_cycle == 8
    assert gc2.fp16_fma_per_cycle == 32
    assert gc2.peak_flops("f32") == pytest.approx(31.1e12, rel=1e-3)
    assert gc2.peak_flops("f16") == pytest.approx(124.5e12, rel=1e-3)
    assert gc2.memory_latency_cycles == 6
    assert gc2.memory_read_bytes_per_cycle == 16
    assert gc2.memory_write_bytes_per_cycle == 8
    assert gc2.exchange_bytes_per_cycle == 4
    assert gc2.ipu_link_bytes_per_second == 64e9
    assert gc2.host_link_bytes_per_second == 64e9


@pytest.mark.parametrize("name", ["gc2", "gc200"])
def test_amp_vertex_reaches_the_datasheet_peaks(name: str):
    # poplibs' AMP vertex: one output position per AMP_CORE_CYCLES through `amp_conv_units`
    # units of `amp_weight_bytes_per_conv_unit` weights each: the chip's FMA peaks, so the
    # vertex figures (poplibs) and the peaks (datasheets, Jia et al.) agree.
    target = load_target(name)
    for dtype in ("f32", "f16"):
        info = cost_model.dtype_info(dtype)
        per_cycle = target.amp_conv_units * cost_model.amp_in_chans_per_group(info, target) / cost_model.AMP_CORE_CYCLES[info.bytes]
        assert per_cycle == target.fma_per_cycle(dtype)


@pytest.mark.parametrize("name", ["gc2", "gc200"])
def test_sync_cycles_follow_poplibs_15ns_per_hop_formula(name: str):
    target = load_target(name)
    one_hop_there_and_back = 15e-9 * 1 * 2
    assert target.sync_cycles == math.ceil(one_hop_there_and_back * target.clock_hz)


def test_tiny_is_a_small_gc200_and_says_so():
    tiny, gc200 = load_target("tiny"), load_target("gc200")
    assert tiny.num_tiles == 16
    assert tiny.tile_memory_bytes == 64 * 1024
    per_tile = [f for f in FIGURES if f not in ("num_tiles", "tile_memory_bytes")]
    assert all(getattr(tiny, f) == getattr(gc200, f) for f in per_tile)
    machine_figures = [f for f in FIGURES if f not in ("ipu_link_efficiency", "planner_memory_fraction")]
    assert all(tiny.provenance[f].startswith("assumption: ") for f in machine_figures)
    assert "ictional" in tiny.description


@pytest.mark.parametrize("name", ["gc2", "gc200", "tiny"])
def test_planner_budget_is_poplins_default_proportion(name: str):
    target = load_target(name)
    assert target.planner_memory_fraction == 0.6
    assert "availableMemoryProportion" in target.provenance["planner_memory_fraction"]
    assert target.planner_memory_budget_bytes == math.floor(0.6 * target.tile_memory_bytes)


def test_derived_helpers():
    gc200 = load_target("gc200")
    assert gc200.total_memory_bytes == 1472 * 638976
    assert gc200.planner_memory_budget_bytes == 383385
    assert gc200.seconds(gc200.clock_hz) == 1.0
    with ir.Context():
        assert gc200.fma_per_cycle(ir.F32Type.get()) == 16
        assert gc200.fma_per_cycle(ir.F16Type.get()) == 64
    assert gc200.fma_per_cycle("float16") == 64
    with pytest.raises(IpuError) as error:
        gc200.peak_flops("f64")
    assert error.value.message.startswith("target 'gc200' has no f64 arithmetic; supported: bf16, bfloat16, f16, f32, f8E4M3FN, ")


def test_c600_fp8_peak_is_twice_fp16():
    """The C600's launch figures (c600.toml): 280 TFLOPS FP16, 560 TFLOPS FP8; the GC200 has no
    FP8 arithmetic and runs FP8 at its FP16 rate; bf16 runs at f16's everywhere (assumption)."""
    c600, gc200 = load_target("c600"), load_target("gc200")
    assert c600.peak_flops("f16") == pytest.approx(280e12, rel=1e-9)
    for name in ("f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ", "float8_e4m3fn"):
        assert c600.peak_flops(name) == pytest.approx(560e12, rel=1e-9)
        assert gc200.peak_flops(name) == gc200.peak_flops("f16")
    assert c600.peak_flops("bf16") == c600.peak_flops("f16")


@pytest.mark.parametrize("m, k, n", [(256, 256, 256), (1024, 512, 64), (64, 4096, 64)])
def test_fp8_products_run_at_the_fp8_rate(m, k, n):
    """An FP8 matmul on the C600's AMP: twice f16's input channels per weight load at f16's 4
    cycles per position, so about half the cycles of f16 into f16 partials, as FP8 always sums
    (the fixed costs of the vertex stay); on the GC200, which converts FP8 to half, those f16
    cycles."""
    c600, gc200 = load_target("c600"), load_target("gc200")
    fp8, f16 = (cost_model.matmul_work(1, m, n, k, dtype, c600, partials) for dtype, partials in (("f8E4M3FNUZ", None), ("f16", "f16")))
    assert 0.45 * f16 <= fp8 <= 0.6 * f16
    assert cost_model.matmul_work(1, m, n, k, "f8E4M3FN", gc200) == cost_model.matmul_work(1, m, n, k, "f16", gc200, "f16")
    assert cost_model.matmul_work(1, m, n, k, "bf16", c600) == cost_model.matmul_work(1, m, n, k, "f16", c600)


def test_target_is_immutable_and_hashable():
    gc200 = load_target("gc200")
    with pytest.raises(AttributeError):
        gc200.num_tiles = 4  # type: ignore[misc]
    assert {gc200: "ok"}[load_target("gc200")] == "ok"
    assert isinstance(gc200, Target)


def test_load_target_from_path(tmp_path: Path):
    text = TINY_FILE.read_text().replace('name = "tiny"', 'name = "four-tile"')
    text = text.replace("num_tiles = { value = 16,", "num_tiles = { value = 4,")
    (tmp_path / "custom.toml").write_text(text)
    (tmp_path / "no_suffix").write_text(text)
    for path in (tmp_path / "custom.toml", tmp_path / "no_suffix"):
        target = load_target(str(path))
        assert (target.name, target.num_tiles, target.tile_memory_bytes) == ("four-tile", 4, 65536)


def test_unknown_target_name_lists_builtins():
    with pytest.raises(IpuError) as error:
        load_target("gc3")
    assert error.value.message == f"unknown target 'gc3'; built-in targets: {BUILTINS} (or give the path of a .toml target file)"


def test_missing_target_file(tmp_path: Path):
    path = tmp_path / "absent.toml"
    with pytest.raises(IpuError) as error:
        load_target(str(path))
    assert error.value.message == f"target file '{path}' does not exist"


def test_invalid_toml(tmp_path: Path):
    path = tmp_path / "broken.toml"
    path.write_text("num_tiles = { value = 4\n")
    with pytest.raises(IpuError) as error:
        load_target(str(path))
    assert error.value.message.startswith(f"{path}: invalid TOML: ")


def test_target_file_not_utf8(tmp_path: Path):
    path = tmp_path / "latin1.toml"
    path.write_bytes('name = "tiny"\ndescription = "caf\xe9"\n'.encode("latin-1"))
    with pytest.raises(IpuError) as error:
        load_target(str(path))
    assert error.value.message == f"{path}: invalid TOML: not UTF-8 text (byte 0xe9 at line 2, column 19)"


def test_target_file_is_a_directory(tmp_path: Path):
    (tmp_path / "dir.toml").mkdir()
    with pytest.raises(IpuError) as error:
        load_target(str(tmp_path / "dir.toml"))
    assert error.value.message == f"cannot read target file '{tmp_path / 'dir.toml'}': Is a directory"


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("num_tiles", None, "missing field 'num_tiles'"),
        ("name", None, "missing field 'name'"),
        ("name", "3", "field 'name' must be a non-empty string"),
        (
            "sync_cycles",
            "{ value = 40 }",
            "field 'sync_cycles' needs a 'source' or an 'assumption'",
        ),
        (
            "sync_cycles",
            '{ value = 40, derived = "ceil(15 ns x 2 x clock)" }',
            "field 'sync_cycles' needs a 'source' or an 'assumption'",
        ),
        (
            "sync_cycles",
            '{ value = 40, source = "" }',
            "field 'sync_cycles' needs a non-empty string as 'source'",
        ),
        (
            "num_tiles",
            "16",
            'field \'num_tiles\' must be a table: { value = ..., source = "..." } or { value = ..., assumption = "..." }',
        ),
        ("num_tiles", '{ assumption = "x" }', "field 'num_tiles' has no 'value'"),
        (
            "num_tiles",
            '{ value = 16, assumption = "x", sorce = "y" }',
            "field 'num_tiles' has unknown key 'sorce' (allowed: value, source, assumption, derived)",
        ),
        ("num_tiles", '{ value = 16.5, assumption = "x" }', "field 'num_tiles' must be an integer, got 16.5"),
        ("num_tiles", '{ value = "16", assumption = "x" }', "field 'num_tiles' must be an integer, got '16'"),
        ("num_tiles", '{ value = true, assumption = "x" }', "field 'num_tiles' must be an integer, got True"),
        ("num_tiles", '{ value = 0, assumption = "x" }', "field 'num_tiles' must be positive, got 0"),
        ("ipu_link_count", '{ value = -1, assumption = "x" }', "field 'ipu_link_count' must be positive, got -1"),
        (
            "ipu_link_efficiency",
            '{ value = inf, assumption = "x" }',
            "field 'ipu_link_efficiency' must be finite, got inf",
        ),
        (
            "planner_memory_fraction",
            '{ value = 1.5, assumption = "x" }',
            "field 'planner_memory_fraction' must be at most 1, got 1.5",
        ),
        (
            "planner_memory_fraction",
            '{ value = "0.6", source = "poplin" }',
            "field 'planner_memory_fraction' must be a number, got '0.6'",
        ),
        (
            "num_tiles",
            '{ value = 16, assumption = "x" }\nnum_tile = { value = 16, assumption = "x" }',
            "unknown field 'num_tile'",
        ),
        ("num_tiles", '{ value = 100_000_000, assumption = "x" }', "field 'num_tiles' must be at most 65,536, got 100,000,000"),
        ("clock_hz", '{ value = 1e15, assumption = "x" }', "field 'clock_hz' must be an integer, got 1000000000000000.0"),
        (
            "clock_hz",
            '{ value = 1_000_000_000_000, assumption = "x" }',
            "field 'clock_hz' must be at most 100,000,000,000, got 1,000,000,000,000",
        ),
        ("clock_hz", '{ value = 1000, assumption = "kHz?" }', "field 'clock_hz' must be at least 1,000,000, got 1,000"),
        ("tile_memory_bytes", '{ value = 64, assumption = "x" }', "field 'tile_memory_bytes' must be at least 1,024, got 64"),
        ("worker_threads", '{ value = 1000, assumption = "x" }', "field 'worker_threads' must be at most 64, got 1,000"),
        ("sync_cycles", '{ value = 10_000_000, assumption = "x" }', "field 'sync_cycles' must be at most 1,000,000, got 10,000,000"),
    ],
)
def test_bad_target_file_is_rejected_naming_file_and_field(tmp_path: Path, field: str, value: str | None, problem: str):
    path = tiny_variant(tmp_path, field, value)
    with pytest.raises(IpuError) as error:
        load_target(str(path))
    assert error.value.message == f"{path}: {problem}"


def test_float_figure_accepts_an_integer(tmp_path: Path):
    path = tiny_variant(tmp_path, "ipu_link_efficiency", '{ value = 1, assumption = "ideal links" }')
    target = load_target(str(path))
    assert target.ipu_link_efficiency == 1.0 and isinstance(target.ipu_link_efficiency, float)
    assert target.provenance["ipu_link_efficiency"] == "assumption: ideal links"


def test_provenance_joins_source_derivation_and_assumption():
    sync = load_target("gc200").provenance["sync_cycles"]
    assert sync.startswith("poplibs lib/poplibs_test/Util.cpp")
    assert "; derived: ceil(15e-9 s x 1 hop x 2 x clock_hz)" in sync
    assert "; assumption: " in sync


def test_target_of_reads_module_attribute():
    with ir.Context():
        module = ir.Module.parse('module attributes {ipu.target = "tiny"} {}')
        assert target_of(module).name == "tiny"
        assert target_of(module.operation).name == "tiny"


def test_target_of_override_wins_over_attribute():
    with ir.Context():
        module = ir.Module.parse('module attributes {ipu.target = "tiny"} {}')
        assert target_of(module, override="gc2").name == "gc2"


def test_target_of_defaults_to_the_default_target():
    with ir.Context():
        assert target_of(ir.Module.parse("module {}")).name == DEFAULT_TARGET


def test_target_of_accepts_a_path_attribute(tmp_path: Path):
    path = tmp_path / "mine.toml"
    path.write_text(TINY_FILE.read_text().replace('name = "tiny"', 'name = "mine"'))
    with ir.Context():
        module = ir.Module.parse(f'module attributes {{ipu.target = "{path}"}} {{}}')
        assert target_of(module).name == "mine"


def test_target_of_rejects_non_string_attribute_at_module_location():
    with ir.Context():
        module = ir.Module.parse("module attributes {ipu.target = 3} {}")
        with pytest.raises(IpuError) as error:
            target_of(module)
    assert str(error.value) == ("-:1:1: error: 'ipu.target' must be a string naming a target or a .toml file, got 3 : i64")


def test_target_of_reports_unknown_target_at_module_location():
    with ir.Context():
        module = ir.Module.parse('module attributes {ipu.target = "gc9"} {}')
        with pytest.raises(IpuError) as error:
            target_of(module)
    assert str(error.value) == f"-:1:1: error: unknown target 'gc9'; built-in targets: {BUILTINS} (or give the path of a .toml target file)"


TARGETS_DOC = (Path(__file__).parents[2] / "docs" / "targets.md").read_text()


def test_docs_tables_cover_the_default_target():
    assert f"### {DEFAULT_TARGET}\n" in TARGETS_DOC


@pytest.mark.parametrize("name", [name for name in CHIPS if f"### {name}\n" in TARGETS_DOC])
def test_docs_tables_match_target_files(name: str):
    target = load_target(name)
    section = TARGETS_DOC.split(f"### {name}\n", 1)[1].split("\n#", 1)[0]
    for figure in FIGURES:
        assert f"| `{figure}` | {getattr(target, figure):,} | {target.provenance[figure]} |" in section


def test_a_target_file_is_parsed_once_per_content(tmp_path: Path, monkeypatch):
    """Every pass, the verifier and the simulator look the target up: one parse per distinct
    file content, the same Target each time; an edited file is parsed anew."""
    parses = []
    parse = target_module._parse_target
    monkeypatch.setattr(target_module, "_parse_target", lambda document, origin: parses.append(origin) or parse(document, origin))
    path = tmp_path / "mine.toml"
    path.write_text(TINY_FILE.read_text().replace('name = "tiny"', 'name = "mine"'))
    with ir.Context():
        module = ir.Module.parse(f'module attributes {{ipu.target = "{path}"}} {{}}')
        first = target_of(module)
        assert all(target_of(module) is first for _ in range(5)) and load_target(str(path)) is first
    assert parses == [str(path)]
    path.write_text(path.read_text().replace('name = "mine"', 'name = "edited"'))
    assert load_target(str(path)).name == "edited" and len(parses) == 2
