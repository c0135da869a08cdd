"""`ipu.ring_all_reduce` in the simulator: the step, its price, and the replicas' meeting point.

The step gathers the replica's `source` (as a device-to-host stream would), reduces it with
every replica of its group and scatters their sum (or mean) into `dest`. The group is the
replicas' threads in one process (`Group`: runtime/replicated.py runs one simulator per
replica, one thread each) or the ranks of an MPI world, one replica each
(runtime/distributed.py's `Ring`). Both sum in GCL's ring order (`ring_sum`): the tensor cut
into R chunks, chunk c summed from replica c's part on around the ring (c, c + 1, ...,
c - 1), so every replica receives the same bytes, and the MPI ring, whose reduce-scatter really
passes the partial sums on, the same bytes as the threads. A plain `Simulator` running it
stops with an error naming the op: one replica alone has nothing to reduce with.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from mlir import ir

from ipu_mlir.dialects import ipu
from ipu_mlir.target import Target, cost_model

from .memory import SimulationError, Site
from .streams import DeviceToHost, HostToDevice
from .superstep import Superstep

__all__ = [
    "Group",
    "ReplicaStopped",
    "RingAllReduce",
    "member",
    "plan_ring_all_reduce",
    "price_ring_all_reduce",
    "ring_chunks",
    "ring_sum",
    "site_record",
]

member = threading.local()  # the replica group and index of the thread running a replica


class RingAllReduce:
    """An `ipu.ring_all_reduce` step: gathers the replica's `source` (as a device-to-host
    stream would), reduces it over the replicas, scatters the result into `dest`."""

    def __init__(self, site: Site, gather: DeviceToHost, scatter: HostToDevice, replicas: int, mean: bool):
        self.site, self.gather, self.scatter, self.replicas, self.mean = site, gather, scatter, replicas, mean
        self.buffers = (gather.buffer, scatter.buffer)

    def run(self, values: list, check: bool) -> None:
        group = getattr(member, "group", None)
        if group is None or group.size != self.replicas:
            raise self.site.error(
                f"all-reduces over {self.replicas} replicas: run the program with runtime.replicated.ReplicatedSimulator"
                f"(replicas={self.replicas}), one simulator per replica"
            )
        self.gather.run(values, check)
        values[self.scatter.value] = group.reduce(member.index, values[self.gather.value], self.mean)
        self.scatter.run(values, check)


def plan_ring_all_reduce(op: ipu.RingAllReduceOp, site: Site, buffers: tuple, slot: int, target: Target) -> RingAllReduce:
    """The step of `op` (its `source` and `dest` buffers; `slot`: the value slot it reduces in)."""
    source, dest = buffers
    gather = DeviceToHost(source, op, op.type, slot, site, target)
    scatter = HostToDevice(dest, op, op.type, slot, site, target)
    return RingAllReduce(site, gather, scatter, op.replicas, op.reduction == "mean")


def price_ring_all_reduce(
    record: dict[str, str],
    ring: Sequence[int],
    dtype: ir.Type,
    elements_per_tile: np.ndarray,
    element_bytes: int,
    repeat: int,
    target: Target,
) -> tuple[Superstep, Superstep]:
    """GCL's ring over the IPUs `ring` (one a replica) as two supersteps, each R - 1 times
    (`repeat` x): reduce-scatter (each IPU sends 1 / R of the tensor to the ring's next IPU over
    the IPU-Links, and its tiles add the chunk they received) then all-gather (the reduced
    chunks passed on). Each ring step is an exchange phase over the links
    (target.cost_model.link_cycles, poplibs' IPU model's figures) after a global sync.
    Assumption: the tiles' own exchange of the chunks overlaps the links' (as
    `Superstep.finish` assumes for any link phase). `elements_per_tile`: the tensor's elements
    on each tile of the target (replica 0's copy)."""
    replicas = len(ring)
    num_bytes = int(elements_per_tile.sum()) * element_bytes
    flows = cost_model.ring_step_flows(num_bytes, ring)
    scatter = Superstep(ops=[{**record, "phase": "reduce-scatter"}], repeat=repeat * (replicas - 1), link_flows=dict(flows))
    sizes, which = np.unique(-(-elements_per_tile // replicas), return_inverse=True)  # each tile adds its share of a chunk
    adds = np.array([cost_model.elementwise_cycles(int(n), 1, dtype, target) if n else 0 for n in sizes], np.int64)
    scatter.compute_cycles_per_tile = adds[which.reshape(-1)]
    gather = Superstep(ops=[{**record, "phase": "all-gather"}], repeat=repeat * (replicas - 1), link_flows=dict(flows))
    for step in (scatter, gather):
        step.sync = "global"
        step.finish(target)
    return scatter, gather


def site_record(op: ipu.RingAllReduceOp) -> dict[str, str]:
    return {"op": "ipu.ring_all_reduce", "source": op.source, "dest": op.dest, "replicas": str(op.replicas)}


def ring_chunks(elements: int, replicas: int) -> list[slice]:
    """The R chunks of a flattened tensor the ring passes around (numpy's array_split's)."""
    bounds = np.cumsum([0] + [len(part) for part in np.array_split(np.empty(elements, np.int8), replicas)])
    return [slice(int(low), int(high)) for low, high in zip(bounds[:-1], bounds[1:])]


def ring_sum(parts: list[np.ndarray], mean: bool) -> np.ndarray:
    """The replicas' `parts` (replica order) summed as GCL's ring sums them: chunk c from replica
    c's part on around the ring, each replica adding its own to the partial sum it received
    (runtime/distributed.py's `Ring` does it with messages, in this order); the mean divides
    by R (a power of two: exact)."""
    replicas = len(parts)
    flat = [part.reshape(-1) for part in parts]
    total = np.empty_like(flat[0])
    for c, chunk in enumerate(ring_chunks(total.size, replicas)):
        partial = flat[c][chunk].copy()
        for step in range(1, replicas):
            partial += flat[(c + step) % replicas][chunk]
        total[chunk] = partial
    if mean:
        total /= replicas
    return total.reshape(parts[0].shape)


class ReplicaStopped(SimulationError):
    """Raised in the replicas that wait at an all-reduce for one that failed."""


class Group:
    """The replicas' meeting point: each all-reduce waits for all of them."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.deposits: list[np.ndarray | None] = [None] * size
        self.mean = False
        self.result: np.ndarray | None = None
        self.barrier = threading.Barrier(size, action=self._reduce)

    def _reduce(self) -> None:
        self.result = ring_sum(self.deposits, self.mean)

    def reduce(self, index: int, local: np.ndarray, mean: bool) -> np.ndarray:
        self.deposits[index], self.mean = local, mean
        try:
            self.barrier.wait()
        except threading.BrokenBarrierError:
            raise ReplicaStopped("another replica stopped before this all-reduce") from None
        return self.result
