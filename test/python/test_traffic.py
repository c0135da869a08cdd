"""An exchange's per-tile counts from a copy's affine forms (`runtime/traffic.py`) against the
profile's listed form (`runtime/superstep.py`'s `listed_traffic`), on random forms and on whole
zoo programs (their profiles must not move by a byte)."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.dialects.attrs import TileGrid
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo
from ipu_mlir.runtime import planner as planner_module
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.runtime.superstep import Traffic, listed_traffic
from ipu_mlir.runtime.traffic import copy_traffic

TILES = 8


def random_form(rng: np.random.Generator, sizes: tuple[int, ...], first_limit: int) -> TileGrid:
    """Tiles or starts over a grid of `sizes`: strides -1, 1 or 2, about half of them 0."""
    strides = tuple(int(s) if rng.random() < 0.5 else 0 for s in rng.choice([-1, 1, 2], len(sizes)))
    low = sum(min(0, (n - 1) * s) for n, s in zip(sizes, strides))
    high = sum(max(0, (n - 1) * s) for n, s in zip(sizes, strides))
    if high - low >= first_limit:
        return TileGrid(0, sizes, (0,) * len(sizes))
    return TileGrid(int(rng.integers(-low, first_limit - high)), sizes, strides)


def fields(traffic: Traffic) -> list:
    return [None if a is None else a.tolist() for a in (traffic.received, traffic.sent, traffic.local, traffic.shared)]


def test_counts_from_forms_are_the_listed_counts():
    rng = np.random.default_rng(7)
    compared = {"local": 0, "all local": 0, "shared": 0, "listed only": 0}
    for _ in range(1500):
        sizes = tuple(int(n) for n in rng.integers(1, 4, int(rng.integers(1, 5))))
        dst, src, starts = (random_form(rng, sizes, limit) for limit in (TILES, TILES, 4))
        # as the simulator sends them: a message repeated along an axis moving neither its source nor its start, once
        once = tuple(1 if (s, a) == (0, 0) else n for n, s, a in zip(sizes, src.strides, starts.strides))
        senders = TileGrid(src.first, once, src.strides)
        for per_bus in (1, 2, 4):
            formed = copy_traffic(dst, src, starts, senders, per_bus, TILES)
            listed = listed_traffic(senders.tiles(), dst.tiles(), TILES, src.tiles(), starts.tiles(), per_bus)
            if formed is None:  # a multicast whose moving axes repeat a destination tile
                compared["listed only"] += 1
                continue
            assert fields(formed) == fields(listed), (dst, src, starts, per_bus)
            compared["local"] += listed.local is not None
            compared["all local"] += listed.received is None
            compared["shared"] += listed.shared is not None and bool(listed.shared.any())
    assert min(compared.values()) > 20, compared


def test_a_broadcast_counts_its_sender_once_and_its_own_tile_locally():
    # Tile 2 sends the same 3 elements to tiles 0-3: tile 2's own is local, the others share
    # buses pairwise, (0, 1) both receiving it, 3 alone in (2, 3) receiving it.
    dst, src, starts = TileGrid(0, (4,), (1,)), TileGrid(2, (4,), (0,)), TileGrid(5, (4,), (0,))
    traffic = copy_traffic(dst, src, starts, TileGrid(2, (1,), (0,)), 2, TILES)
    assert traffic.received.tolist() == [1, 1, 0, 1, 0, 0, 0, 0]
    assert traffic.local.tolist() == [0, 0, 1, 0, 0, 0, 0, 0]
    assert traffic.sent.tolist() == [0, 0, 1, 0, 0, 0, 0, 0]
    assert traffic.shared.tolist() == [1, 1, 0, 0, 0, 0, 0, 0]


def compiled(name: str):
    config = dict(zoo.MODELS[name].reduced)
    module, inputs = zoo.build(name, **config)
    return torch_frontend.compile_program(torch_frontend.export(module, *inputs), "gc200", module)


@pytest.mark.parametrize("name", ["resnet18", "bert_encoder"])
def test_a_programs_profile_from_forms_is_its_profile_from_listed_messages(name: str, monkeypatch):
    program = compiled(name)
    formed = Simulator(program).profile.to_json()
    calls = []

    def listed(*forms):
        calls.append(forms)  # every copy then counts its listed messages

    monkeypatch.setattr(planner_module, "copy_traffic", listed)
    assert Simulator(program).profile.to_json() == formed
    assert len(calls) > 10
