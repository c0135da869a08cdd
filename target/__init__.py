"""Machine descriptions: one TOML file per target, every figure with where it comes from.

A target file (`target/targets/<name>.toml`, or any file in the same schema) holds a `name`, a
`description` and one table per figure of `Target`:

    num_tiles = { value = 1472, source = "GC200 datasheet: 1472 IPU-Tiles" }

Each figure needs a `source`, an `assumption` (why the value is reasonable), or both, and may
say how it was `derived` from other figures. `load_target` rejects anything else, so an
uncited number cannot reach the planner or the cost model. docs/targets.md has the tables.

A *system* file (`m2000.toml`, `pod16.toml`, ...) names a `chip` target instead of giving the
chip figures, and adds the system's (`SystemFigures`): IPUs, IPU-Link topology and rates.
Its `Target` is the chip's with `num_tiles` the whole system's: tiles are numbered globally,
IPU `i` holding tiles `[i * tiles_per_ipu, (i + 1) * tiles_per_ipu)` (docs/contracts.md).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import os
import tomllib
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mlir import ir

from .diagnostics import IpuError

BUILTIN_TARGETS_DIR = Path(str(resources.files(__package__).joinpath("targets")))
DEFAULT_TARGET = "gc200"
TARGET_ATTR = "ipu.target"


@dataclass(frozen=True)
class Target:
    """One IPU chip as the planner and the simulator see it.

    Figures named `..._per_cycle` are per tile and per cycle of `clock_hz`. `provenance` maps
    each figure's name to its source (and derivation), or to "assumption: <why>".
    """

    name: str
    description: str
    num_tiles: int
    tile_memory_bytes: int
    worker_threads: int
    clock_hz: int
    fp32_fma_per_cycle: int
    # AMP (matrix unit) rate with half-precision inputs.
    fp16_fma_per_cycle: int
    # AMP rate with FP8 inputs (QUARTER: f8E4M3FNUZ / f8E5M2FNUZ and the OCP formats); a chip
    # without FP8 arithmetic converts them to half and runs at fp16_fma_per_cycle.
    fp8_fma_per_cycle: int
    # The matrix unit as poplibs' AMP vertices use it (target.cost_model.amp_work): output
    # channels per weight load, the bytes of weights each conv unit holds, and the rate at
    # which the supervisor loads them.
    amp_conv_units: int
    # Conv units with half inputs summing into float partials (poplibs' getNumConvUnits:
    # getFp16InFp32OutConvUnitsPerTile; amp_conv_units is the half-partials and float figure).
    amp_conv_units_f32_partials: int
    amp_weight_bytes_per_conv_unit: int
    amp_weight_load_bytes_per_cycle: int
    memory_latency_cycles: int
    memory_read_bytes_per_cycle: int
    memory_write_bytes_per_cycle: int
    exchange_bytes_per_cycle: int
    # Tiles of a super tile, sharing one exchange bus: data that all of them receive arrives
    # this many times as fast (target.cost_model.exchange_cycles); 1: no sharing.
    exchange_tiles_per_shared_bus: int
    # One BSP sync of all tiles of the chip.
    sync_cycles: int
    host_link_bytes_per_second: int
    ipu_link_count: int
    # Nominal rate of one link; `ipu_link_efficiency` is the fraction of it actually achieved.
    ipu_link_bytes_per_second: int
    ipu_link_efficiency: float
    # The planner's default bound on one op's temporary memory, as a fraction of a tile's.
    planner_memory_fraction: float
    provenance: Mapping[str, str] = field(compare=False, repr=False)
    # None for one chip; a multi-IPU system's figures otherwise.
    system: SystemFigures | None = field(default=None, compare=False, repr=False)

    @property
    def num_ipus(self) -> int:
        return self.system.num_ipus if self.system else 1

    @property
    def tiles_per_ipu(self) -> int:
        return self.num_tiles // self.num_ipus

    @property
    def chip(self) -> Target:
        """The target of one IPU of this system (itself for a chip): what `ipu-plan` plans on."""
        return load_target(self.system.chip) if self.system else self

    def ipu_of_tile(self, tile: int) -> int:
        return tile // self.tiles_per_ipu

    @property
    def total_memory_bytes(self) -> int:
        return self.num_tiles * self.tile_memory_bytes

    @property
    def planner_memory_budget_bytes(self) -> int:
        return math.floor(self.tile_memory_bytes * self.planner_memory_fraction)

    def fma_per_cycle(self, dtype: str | ir.Type) -> int:
        """Per-tile FMAs per cycle for an element type named the MLIR way (`f32`) or numpy's
        (`float32`)."""
        figure = _FMA_FIGURE_BY_DTYPE.get(str(dtype))
        if figure is None:
            supported = ", ".join(sorted(_FMA_FIGURE_BY_DTYPE))
            raise IpuError(f"target '{self.name}' has no {dtype} arithmetic; supported: {supported}")
        return getattr(self, figure)

    def peak_flops(self, dtype: str | ir.Type) -> float:
        """Whole-chip peak, counting an FMA as two floating-point operations."""
        return 2.0 * self.fma_per_cycle(dtype) * self.num_tiles * self.clock_hz

    def seconds(self, cycles: float) -> float:
        return cycles / self.clock_hz


@dataclass(frozen=True)
class SystemFigures:
    """Several chips joined by IPU-Links, as poplibs' IPU model (lib/poplibs_test/Util.cpp)
    sees them: a ladder of IPU pairs. IPUs `2c` and `2c + 1` share a card, joined by
    `card_links`; every IPU also has `rung_links` to its card partner for routed traffic and
    `rail_links` up to IPU `i + 2` and down to `i - 2` (target.cost_model.link_route)."""

    chip: str
    topology: str
    num_ipus: int
    card_links: int
    rung_links: int
    rail_links: int
    link_bits_per_second: float
    sync_seconds_per_hop: float
    gw_links_per_machine: int
    gw_link_bits_per_second: float


_FMA_FIGURE_BY_DTYPE = {
    "f32": "fp32_fma_per_cycle",
    "float32": "fp32_fma_per_cycle",
    "f16": "fp16_fma_per_cycle",
    "float16": "fp16_fma_per_cycle",
    # The IPU has no bf16 arithmetic: priced as f16 (assumption, docs/precision.md).
    "bf16": "fp16_fma_per_cycle",
    "bfloat16": "fp16_fma_per_cycle",
    **{name: "fp8_fma_per_cycle" for name in ("f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E5M2FNUZ")},
    **{name: "fp8_fma_per_cycle" for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz")},
}
_TEXT_FIELDS = ("name", "description")
_FIGURE_TYPES: dict[str, type] = {name: hint for name, hint in typing.get_type_hints(Target).items() if hint in (int, float)}
_FRACTION_FIELDS = frozenset({"ipu_link_efficiency", "planner_memory_fraction"})
# Largest value of each whole-number figure (assumption: 16 to 1000 times the largest of any
# IPU generation's, gc2/gc200; a machine beyond them is a typo). num_tiles also bounds the
# planner's and the simulator's work, which grows with the tile count.
_MAXIMA: dict[str, int] = {
    "num_tiles": 1 << 16,
    "tile_memory_bytes": 1 << 30,
    "worker_threads": 64,
    "clock_hz": 100_000_000_000,
    "fp32_fma_per_cycle": 4096,
    "fp16_fma_per_cycle": 4096,
    "fp8_fma_per_cycle": 4096,
    "amp_conv_units": 1024,
    "amp_conv_units_f32_partials": 1024,
    "amp_weight_bytes_per_conv_unit": 1 << 16,
    "amp_weight_load_bytes_per_cycle": 4096,
    "memory_latency_cycles": 10_000,
    "memory_read_bytes_per_cycle": 4096,
    "memory_write_bytes_per_cycle": 4096,
    "exchange_bytes_per_cycle": 4096,
    "exchange_tiles_per_shared_bus": 1024,
    "sync_cycles": 1_000_000,
    "host_link_bytes_per_second": 10**14,
    "ipu_link_count": 1024,
    "ipu_link_bytes_per_second": 10**14,
    # Systems (assumption, as above): 1,024 IPUs is a POD1024, the largest Graphcore listed;
    # the system's tile count, num_ipus x the chip's, bounds the simulator's work likewise.
    "num_ipus": 1024,
    "card_links": 64,
    "rung_links": 64,
    "rail_links": 64,
    "link_bits_per_second": 10**15,
    "gw_links_per_machine": 64,
    "gw_link_bits_per_second": 10**15,
}
# Smallest: a tile holds at least 1 KiB; the clock runs at 1 MHz or more (assumption: far
# below any real part, above values that are surely a unit mistake).
_MINIMA: dict[str, int] = {"tile_memory_bytes": 1024, "clock_hz": 1_000_000}
_FIGURE_KEYS = frozenset({"value", "source", "assumption", "derived"})
_SYSTEM_TEXT_FIELDS = ("name", "description", "chip", "ipu_link_topology")
_SYSTEM_FIGURE_TYPES: dict[str, type] = {name: hint for name, hint in typing.get_type_hints(SystemFigures).items() if hint in (int, float)}
_TOPOLOGIES = ("ladder",)


def builtin_targets() -> list[str]:
    return sorted(path.stem for path in BUILTIN_TARGETS_DIR.glob("*.toml"))


def load_target(name_or_path: str) -> Target:
    """A built-in target by name (`gc200`), or a target file by path (anything ending in
    `.toml` or containing a path separator; relative paths are relative to the working
    directory)."""
    if name_or_path.endswith(".toml") or "/" in name_or_path or os.sep in name_or_path:
        return _load_file(Path(name_or_path))
    names = builtin_targets()
    if name_or_path not in names:
        raise IpuError(f"unknown target '{name_or_path}'; built-in targets: {', '.join(names)} (or give the path of a .toml target file)")
    return _load_file(BUILTIN_TARGETS_DIR / f"{name_or_path}.toml")


def target_of(module_op: ir.Module | ir.Operation | ir.OpView, override: str | None = None) -> Target:
    """The target `module_op` is compiled for: `override` (e.g. a pass's `target=` option) if
    given, else the module's `ipu.target` string attribute (a name or a path), else `DEFAULT_TARGET`."""
    if override is not None:
        return load_target(override)
    operation = module_op.operation
    if TARGET_ATTR not in operation.attributes:
        return load_target(DEFAULT_TARGET)
    attribute = operation.attributes[TARGET_ATTR]
    if not isinstance(attribute, ir.StringAttr):
        raise IpuError(
            f"'{TARGET_ATTR}' must be a string naming a target or a .toml file, got {attribute}",
            operation.location,
        )
    try:
        return load_target(attribute.value)
    except IpuError as error:
        # Point at the attribute that chose the target, not just at the file.
        raise IpuError(error.message, operation.location) from None


def _load_file(path: Path) -> Target:
    """The target in `path`, parsed once per distinct content: every later look-up of the
    same file (each pass's `target_of`, the verifier's, the simulator's) reads its bytes and
    finds the parsed target (`_parsed`); an edited file is parsed anew."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise IpuError(f"target file '{path}' does not exist") from None
    except OSError as error:
        raise IpuError(f"cannot read target file '{path}': {error.strerror}") from None
    return _parsed(str(path), data)


@functools.lru_cache(maxsize=64)
def _parsed(origin: str, data: bytes) -> Target:
    try:
        document = tomllib.loads(data.decode("utf-8"))
    except tomllib.TOMLDecodeError as error:
        raise IpuError(f"{origin}: invalid TOML: {error}") from None
    except UnicodeDecodeError as error:
        before = error.object[: error.start]
        line, column = before.count(b"\n") + 1, error.start - (before.rfind(b"\n") + 1) + 1
        byte = error.object[error.start]
        raise IpuError(f"{origin}: invalid TOML: not UTF-8 text (byte {byte:#04x} at line {line}, column {column})") from None
    return _parse_target(document, origin)


def _parse_target(document: dict[str, Any], origin: str) -> Target:
    if "chip" in document:
        return _parse_system(document, origin)
    unknown = sorted(set(document) - set(_TEXT_FIELDS) - set(_FIGURE_TYPES))
    if unknown:
        raise IpuError(f"{origin}: unknown field '{unknown[0]}'")
    texts = {name: _text_field(document, name, origin) for name in _TEXT_FIELDS}
    figures: dict[str, int | float] = {}
    provenance: dict[str, str] = {}
    for name, kind in _FIGURE_TYPES.items():
        if name == "fp8_fma_per_cycle" and name not in document:  # optional: files written before FP8
            figures[name] = figures["fp16_fma_per_cycle"]
            provenance[name] = "assumption: not given in the file; no FP8 arithmetic, FP8 converted to half (fp16_fma_per_cycle)"
            continue
        if name == "amp_conv_units_f32_partials" and name not in document:  # optional: files written before partials
            figures[name] = figures["amp_conv_units"]
            provenance[name] = "assumption: not given in the file; half inputs drive as many conv units into float partials as into half"
            continue
        figures[name], provenance[name] = _figure(document, name, kind, origin)
    return Target(**texts, **figures, provenance=types.MappingProxyType(provenance))


def _parse_system(document: dict[str, Any], origin: str) -> Target:
    """A system file: its chip's figures, `num_tiles` over all IPUs, and `SystemFigures`."""
    unknown = sorted(set(document) - set(_SYSTEM_TEXT_FIELDS) - set(_SYSTEM_FIGURE_TYPES))
    if unknown:
        raise IpuError(f"{origin}: unknown field '{unknown[0]}'")
    texts = {name: _text_field(document, name, origin) for name in _SYSTEM_TEXT_FIELDS}
    if texts["ipu_link_topology"] not in _TOPOLOGIES:
        raise IpuError(f"{origin}: field 'ipu_link_topology' must be one of {', '.join(_TOPOLOGIES)}, got '{texts['ipu_link_topology']}'")
    chip = load_target(texts["chip"])
    if chip.system is not None:
        raise IpuError(f"{origin}: field 'chip' must name a chip target, not the system '{chip.name}'")
    figures: dict[str, int | float] = {}
    provenance = dict(chip.provenance)
    for name, kind in _SYSTEM_FIGURE_TYPES.items():
        figures[name], provenance[name] = _figure(document, name, kind, origin)
    if figures["num_ipus"] < 2 or figures["num_ipus"] % 2:
        # poplibs' model: "IPU modeling does not support an odd number of IPUs".
        raise IpuError(f"{origin}: field 'num_ipus' must be even and at least 2 (a ladder of IPU pairs), got {figures['num_ipus']}")
    system = SystemFigures(chip=chip.name, topology=texts["ipu_link_topology"], **figures)
    provenance["num_tiles"] = f"derived: num_ipus {system.num_ipus} x {chip.name}'s {chip.num_tiles} tiles, numbered globally"
    return dataclasses.replace(
        chip,
        name=texts["name"],
        description=texts["description"],
        num_tiles=chip.num_tiles * system.num_ipus,
        provenance=types.MappingProxyType(provenance),
        system=system,
    )


def _text_field(document: dict[str, Any], name: str, origin: str) -> str:
    if name not in document:
        raise IpuError(f"{origin}: missing field '{name}'")
    text = document[name]
    if not isinstance(text, str) or not text.strip():
        raise IpuError(f"{origin}: field '{name}' must be a non-empty string")
    return text


def _figure(document: dict[str, Any], name: str, kind: type, origin: str) -> tuple[int | float, str]:
    """The value of figure `name` and its provenance text, after checking both."""

    def invalid(problem: str) -> IpuError:
        return IpuError(f"{origin}: field '{name}' {problem}")

    if name not in document:
        raise IpuError(f"{origin}: missing field '{name}'")
    entry = document[name]
    if not isinstance(entry, dict):
        raise invalid('must be a table: { value = ..., source = "..." } or { value = ..., assumption = "..." }')
    unknown = sorted(set(entry) - _FIGURE_KEYS)
    if unknown:
        raise invalid(f"has unknown key '{unknown[0]}' (allowed: value, source, assumption, derived)")
    if "value" not in entry:
        raise invalid("has no 'value'")
    value = entry["value"]
    # bool is an int in Python but never a figure; an int is a fine float.
    accepted = (int,) if kind is int else (int, float)
    if isinstance(value, bool) or not isinstance(value, accepted):
        raise invalid(f"must be {'an integer' if kind is int else 'a number'}, got {value!r}")
    if not math.isfinite(value):
        raise invalid(f"must be finite, got {value}")
    if value <= 0:
        raise invalid(f"must be positive, got {value}")
    if name in _FRACTION_FIELDS and value > 1:
        raise invalid(f"must be at most 1, got {value}")
    if name in _MAXIMA and value > _MAXIMA[name]:
        raise invalid(f"must be at most {_MAXIMA[name]:,}, got {value:,}")
    if name in _MINIMA and value < _MINIMA[name]:
        raise invalid(f"must be at least {_MINIMA[name]:,}, got {value:,}")
    for key in ("source", "assumption", "derived"):
        if key in entry and (not isinstance(entry[key], str) or not entry[key].strip()):
            raise invalid(f"needs a non-empty string as '{key}'")
    if "source" not in entry and "assumption" not in entry:
        raise invalid("needs a 'source' or an 'assumption'")
    return kind(value), _provenance_text(entry)


def _provenance_text(entry: dict[str, Any]) -> str:
    parts = [entry["source"]] if "source" in entry else []
    if "derived" in entry:
        parts.append(f"derived: {entry['derived']}")
    if "assumption" in entry:
        parts.append(f"assumption: {entry['assumption']}")
    return "; ".join(parts)
