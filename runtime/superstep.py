"""One superstep of a simulated run as the profile counts it (`Superstep`: the ops between two
syncs, their compute, exchange, link and sync cycles per tile), and an exchange's messages
counted per tile (`Traffic`, `listed_traffic`). `Profile` (profile.py) adds the supersteps up.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ipu_mlir.target import Target, cost_model


@dataclass
class Superstep:
    """The ops between two syncs: an exchange phase, compute sets and host streams.

    Per-tile arrays have one entry per tile of the target (None: no such phase)."""

    ops: list[dict[str, str]] = field(default_factory=list)
    repeat: int = 1
    compute_cycles_per_tile: np.ndarray | None = None
    bytes_received_per_tile: np.ndarray | None = None
    bytes_sent_per_tile: np.ndarray | None = None
    # Of the bytes received, those every tile of the receiver's super tile received alike (one
    # message to all of them): they come over the super tile's shared exchange bus.
    shared_bytes_per_tile: np.ndarray | None = None
    local_bytes_per_tile: np.ndarray | None = None  # copied within a tile by `ipu.copy` (not exchange)
    host_bytes: int = 0
    sync: str | None = None  # "internal", "external", "global", or None when no sync ends it
    exchange_cycles: int = 0
    sync_cycles: int = 0
    # Bytes between IPUs over the IPU-Links, per (source IPU, destination IPU): multi-IPU targets.
    link_flows: dict[tuple[int, int], int] = field(default_factory=dict)
    link_cycles: int = 0

    @property
    def link_bytes(self) -> int:
        return sum(self.link_flows.values())

    @property
    def kind(self) -> str:
        parts = [
            name
            for name, present in (
                ("host", self.host_bytes > 0),
                ("exchange", self.bytes_received_per_tile is not None),
                ("compute", self.compute_cycles_per_tile is not None),
            )
            if present
        ]
        return "+".join(parts) or "sync"

    @property
    def compute_cycles(self) -> int:
        """The slowest tile's compute: BSP waits for it at the sync."""
        return 0 if self.compute_cycles_per_tile is None else int(self.compute_cycles_per_tile.max())

    @property
    def exchange_bytes(self) -> int:
        return 0 if self.bytes_received_per_tile is None else int(self.bytes_received_per_tile.sum())

    @property
    def cycles(self) -> int:
        return self.compute_cycles + self.exchange_cycles + self.sync_cycles

    def add_host(self, num_bytes: int, op: dict[str, str]) -> None:
        self.host_bytes += num_bytes
        self.ops.append(op)

    def add_exchange(
        self,
        senders: np.ndarray,
        receivers: np.ndarray,
        message_bytes: int,
        num_tiles: int,
        op: dict[str, str],
        sources=None,
        source_starts=None,
        tiles_per_bus: int = 1,
    ) -> None:
        """Each sender tile sends, and each receiver tile receives, one message (tiles repeat).
        With `sources` (the source tile of each receiver's message), a message whose source is
        its receiver does not go through the exchange: the tile copies it itself at memory speed
        (`cost_model.copy_work`, added to the superstep's compute by `finish`). A multicast
        (fewer senders than receivers) is still sent once. With `source_starts` too (where each
        message starts on its source tile), a message that every tile of a super tile (runs of
        `tiles_per_bus` tiles from 0) receives comes over their shared bus (`shared_bytes_per_tile`)."""
        self.add_traffic(listed_traffic(senders, receivers, num_tiles, sources, source_starts, tiles_per_bus), message_bytes, op)

    def add_traffic(self, traffic: Traffic, message_bytes: int, op: dict[str, str]) -> None:
        """An exchange's messages, counted per tile (`listed_traffic`, or runtime/traffic.py
        from a copy's affine forms), each of `message_bytes`."""
        self.ops.append(op)
        num_tiles = traffic.num_tiles
        if traffic.local is not None:
            if self.local_bytes_per_tile is None:
                self.local_bytes_per_tile = np.zeros(num_tiles, np.int64)
            self.local_bytes_per_tile += traffic.local * message_bytes
        if traffic.received is None:
            return
        if self.bytes_received_per_tile is None:
            self.bytes_received_per_tile, self.bytes_sent_per_tile = np.zeros(num_tiles, np.int64), np.zeros(num_tiles, np.int64)
            self.shared_bytes_per_tile = np.zeros(num_tiles, np.int64)
        self.bytes_received_per_tile += traffic.received * message_bytes
        self.bytes_sent_per_tile += traffic.sent * message_bytes
        if traffic.shared is not None:
            self.shared_bytes_per_tile += traffic.shared * message_bytes

    def add_compute(self, cycles_per_tile: np.ndarray, op: dict[str, str]) -> None:
        """A compute set; those of one superstep run back to back on each tile."""
        if self.compute_cycles_per_tile is None:
            self.compute_cycles_per_tile = np.zeros_like(cycles_per_tile)
        self.compute_cycles_per_tile += cycles_per_tile
        self.ops.append(op)

    def finish(self, target: Target) -> None:
        """Prices the exchange, the on-tile copies and the sync, once the superstep's ops are all in."""
        if self.local_bytes_per_tile is not None:
            sizes, which = np.unique(self.local_bytes_per_tile, return_inverse=True)  # few distinct sizes
            copies = np.array([cost_model.copy_work(int(b), target) for b in sizes], np.int64)[which]
            self.compute_cycles_per_tile = copies if self.compute_cycles_per_tile is None else self.compute_cycles_per_tile + copies
        if self.bytes_received_per_tile is not None:
            # The slowest receiver (bytes over a shared bus count 1/tiles_per_bus) or sender.
            received, shared, share = self.bytes_received_per_tile, self.shared_bytes_per_tile, target.exchange_tiles_per_shared_bus
            tile = int(np.argmax(share * (received - shared) + shared))
            receiving = cost_model.exchange_cycles(int(received[tile]), target, int(shared[tile]))
            self.exchange_cycles = max(receiving, cost_model.exchange_cycles(int(self.bytes_sent_per_tile.max()), target))
        if self.link_flows:
            # Assumption: the IPU-Links stream while the tiles exchange, so the phase lasts as
            # long as the slower of the two (poplibs' model prices the links alone).
            self.link_cycles = cost_model.link_cycles(self.link_flows, target)
            self.exchange_cycles = max(self.exchange_cycles, self.link_cycles)
        sync = cost_model.global_sync_cycles if self.sync == "global" else cost_model.sync_cycles
        self.sync_cycles = sync(target) if self.sync else 0

    def to_dict(self, index: int, tiles_per_ipu: int = 0) -> dict:
        """The superstep's record; with `tiles_per_ipu` (a multi-IPU target), its compute names
        the IPUs whose tiles work (the report's lane per IPU)."""
        record = {"index": index, "kind": self.kind, "repeat": self.repeat, "ops": self.ops, "cycles": self.cycles}
        if self.compute_cycles_per_tile is not None:
            per_tile = self.compute_cycles_per_tile
            record["compute"] = {"cycles": self.compute_cycles, "mean_cycles": float(per_tile.mean()), "cycles_per_tile": per_tile.tolist()}
            if tiles_per_ipu:
                record["compute"]["ipus"] = np.unique(np.flatnonzero(per_tile) // tiles_per_ipu).tolist()
        if self.bytes_received_per_tile is not None:
            record["exchange"] = {
                "cycles": self.exchange_cycles,
                "bytes": self.exchange_bytes,
                "bytes_received_per_tile": self.bytes_received_per_tile.tolist(),
                "bytes_sent_per_tile": self.bytes_sent_per_tile.tolist(),
            }
        if self.host_bytes:
            record["host_bytes"] = self.host_bytes
        if self.link_flows:
            flows = [{"from": src, "to": dst, "bytes": n} for (src, dst), n in sorted(self.link_flows.items())]
            record["links"] = {"cycles": self.link_cycles, "bytes": self.link_bytes, "flows": flows}
        record["sync"] = {"kind": self.sync, "cycles": self.sync_cycles} if self.sync else None
        return record


@dataclass(frozen=True)
class Traffic:
    """An exchange's messages counted per tile of the target: received through the exchange
    (None: every message was local), sent, copied on their own tile (None: none was), and of
    those received, the ones over the receiver's shared bus (None: not a multicast)."""

    num_tiles: int
    received: np.ndarray | None
    sent: np.ndarray | None
    local: np.ndarray | None
    shared: np.ndarray | None


def listed_traffic(
    senders: np.ndarray,
    receivers: np.ndarray,
    num_tiles: int,
    sources=None,
    source_starts=None,
    tiles_per_bus: int = 1,
) -> Traffic:
    """`Superstep.add_exchange`'s messages, from their listed tiles, counted per tile."""
    local_counts = None
    if sources is not None:
        sources = np.asarray(sources)
        local = sources == receivers
        if local.any():
            local_counts = np.bincount(receivers[local], minlength=num_tiles)
            senders = senders[~local] if len(senders) == len(receivers) else senders
            receivers, sources = receivers[~local], sources[~local]
            source_starts = None if source_starts is None else np.asarray(source_starts)[~local]
            if not len(receivers):
                return Traffic(num_tiles, None, None, local_counts, None)
    received, sent = np.bincount(receivers, minlength=num_tiles), np.bincount(senders, minlength=num_tiles)
    multicast = tiles_per_bus > 1 and len(senders) < len(receivers)  # only a multicast shares
    shared_counts = None
    if multicast and source_starts is not None:
        shared = _bus_shared(receivers, sources, np.asarray(source_starts), tiles_per_bus)
        shared_counts = np.bincount(receivers[shared], minlength=num_tiles)
    return Traffic(num_tiles, received, sent, local_counts, shared_counts)


def _bus_shared(receivers: np.ndarray, sources: np.ndarray, starts: np.ndarray, tiles_per_bus: int) -> np.ndarray:
    """Which receivers get their message over their super tile's shared bus: those whose
    super tile's every tile receives the same message (same source tile and start)."""
    message = np.unique(np.stack([sources, starts]), axis=1, return_inverse=True)[1].reshape(-1)
    span = int(receivers.max()) + 1
    pairs = np.unique(message * span + receivers)  # each receiver of a message once
    groups, counts = np.unique(pairs // span * span + pairs % span // tiles_per_bus, return_counts=True)
    return counts[np.searchsorted(groups, message * span + receivers // tiles_per_bus)] == tiles_per_bus
