"""Multi-IPU systems as targets: the built-in system files load on their chip, every figure is
cited, the totals are the datasheets', the IPU-Link and global-sync prices are poplibs' IPU
model's (lib/poplibs_test/Util.cpp at 7eac0f26), and bad system files are refused."""

from __future__ import annotations

import math
import tomllib
from pathlib import Path

import pytest

from ipu_mlir.target import BUILTIN_TARGETS_DIR, load_target
from ipu_mlir.target import cost_model as cm
from ipu_mlir.target.diagnostics import IpuError

SYSTEMS = {
    "m2000": ("gc200", 4),
    "pod16": ("gc200", 16),
    "pod64": ("gc200", 64),
    "bow2000": ("bow", 4),
    "bowpod16": ("bow", 16),
    "bowpod64": ("bow", 64),
}
SYSTEM_FIGURES = [
    "num_ipus",
    "card_links",
    "rung_links",
    "rail_links",
    "link_bits_per_second",
    "sync_seconds_per_hop",
    "gw_links_per_machine",
    "gw_link_bits_per_second",
]


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_system_is_its_chip_times_its_ipus(name: str) -> None:
    chip_name, ipus = SYSTEMS[name]
    system, chip = load_target(name), load_target(chip_name)
    assert (system.num_ipus, system.chip, system.tiles_per_ipu) == (ipus, chip, chip.num_tiles)
    assert system.num_tiles == ipus * chip.num_tiles and system.clock_hz == chip.clock_hz
    assert system.ipu_of_tile(chip.num_tiles - 1) == 0 and system.ipu_of_tile(chip.num_tiles) == 1
    document = tomllib.loads((BUILTIN_TARGETS_DIR / f"{name}.toml").read_text())
    assert all(document[f].get("source", "").strip() for f in SYSTEM_FIGURES)
    assert set(SYSTEM_FIGURES) <= set(system.provenance) and "num_ipus" in system.provenance["num_tiles"]


def test_datasheet_totals() -> None:
    # IPU-M2000 datasheet: 1 PFLOPS FP16; Bow-2000: 1.4 PFLOPS; Bow Pod16 datasheet: 5.6 PFLOPS.
    assert load_target("m2000").peak_flops("f16") == pytest.approx(1e15, rel=1e-6)
    assert load_target("bow2000").peak_flops("f16") == pytest.approx(1.4e15, rel=0.01)
    assert load_target("bowpod16").peak_flops("f16") == pytest.approx(5.6e15, rel=0.01)
    assert load_target("m2000").total_memory_bytes == 4 * load_target("gc200").total_memory_bytes  # 3.6 GB


def test_global_sync_is_poplibs_hops() -> None:
    for name, ipus in (("m2000", 4), ("pod16", 16), ("pod64", 64), ("bowpod64", 64)):
        target = load_target(name)
        hops = 1 + (ipus // 2) // 2
        assert cm.global_sync_cycles(target) == math.ceil(15e-9 * target.clock_hz * hops * 2)
    assert [cm.global_sync_cycles(load_target(n)) for n in ("m2000", "pod16", "pod64")] == [80, 200, 677]
    assert cm.global_sync_cycles(load_target("gc200")) == load_target("gc200").sync_cycles  # one hop


def test_ladder_routes() -> None:
    assert cm.link_route(0, 1) == [(0, "card")]
    assert cm.link_route(0, 2) == [(0, "up")]
    assert cm.link_route(0, 3) == [(0, "rung"), (1, "up")]
    assert cm.link_route(7, 0) == [(7, "rung"), (6, "down"), (4, "down"), (2, "down")]
    assert cm.link_route(3, 3) == []


def test_link_cycles_is_bytes_over_the_busiest_link_group() -> None:
    m2000 = load_target("m2000")
    link = 128 * 2**30 * 0.85 / 8  # bytes per second per link
    mib = 2**20
    assert cm.link_cycles({(0, 1): mib}, m2000) == math.ceil(mib / (4 * link) * m2000.clock_hz)  # 4 card links
    assert cm.link_cycles({(0, 2): mib}, m2000) == math.ceil(mib / (2 * link) * m2000.clock_hz)  # 2 rail links
    # Two flows up the same rail share it; flows over different links overlap.
    assert cm.link_cycles({(0, 2): mib, (1, 2): mib}, m2000) == math.ceil(2 * mib / (2 * link) * m2000.clock_hz)
    assert cm.link_cycles({(0, 1): mib, (2, 3): mib}, m2000) == cm.link_cycles({(0, 1): mib}, m2000)
    assert cm.link_cycles({}, m2000) == 0


def system_file(tmp_path: Path, **changes: str) -> Path:
    lines = (BUILTIN_TARGETS_DIR / "m2000.toml").read_text().splitlines()
    for key, value in changes.items():
        lines = [f"{key} = {value}" if line.startswith(f"{key} =") else line for line in lines]
    path = tmp_path / "system.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"num_ipus": '{ value = 3, source = "x" }'}, "field 'num_ipus' must be even and at least 2 (a ladder of IPU pairs), got 3"),
        ({"ipu_link_topology": '"torus"'}, "field 'ipu_link_topology' must be one of ladder, got 'torus'"),
        ({"chip": '"m2000"'}, "field 'chip' must name a chip target, not the system 'm2000'"),
        ({"chip": '"gc9"'}, "unknown target 'gc9'"),
        ({"rail_links": "2"}, "field 'rail_links' must be a table"),
        ({"card_links": '{ value = 4, derived = "x" }'}, "field 'card_links' needs a 'source' or an 'assumption'"),
    ],
)
def test_bad_system_files_are_refused(tmp_path: Path, changes: dict[str, str], message: str) -> None:
    with pytest.raises(IpuError) as error:
        load_target(str(system_file(tmp_path, **changes)))
    assert message in error.value.message


@pytest.mark.parametrize("name", sorted(SYSTEMS))
def test_docs_tables_match_system_files(name: str) -> None:
    docs = (Path(__file__).parents[2] / "docs" / "targets.md").read_text()
    target = load_target(name)
    section = docs.split(f"#### {name}\n", 1)[1].split("\n#", 1)[0]
    for figure in SYSTEM_FIGURES:
        assert f"| `{figure}` | {getattr(target.system, figure):,} | {target.provenance[figure]} |" in section


def test_docs_example_values() -> None:
    """The values docs/targets.md's Systems example states in its comments."""
    m2000 = load_target("m2000")
    assert (m2000.num_ipus, m2000.tiles_per_ipu, m2000.num_tiles, m2000.chip.name) == (4, 1472, 5888, "gc200")
    assert cm.link_cycles({(0, 1): 2**20}, m2000) == 23819
    assert [cm.global_sync_cycles(load_target(n)) for n in ("bow2000", "bowpod16", "bowpod64")] == [111, 278, 944]


def test_system_figures_are_bounded(tmp_path: Path) -> None:
    with pytest.raises(IpuError) as error:
        load_target(str(system_file(tmp_path, num_ipus='{ value = 2048, source = "x" }')))
    assert "field 'num_ipus' must be at most 1,024, got 2,048" in error.value.message
