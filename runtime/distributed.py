"""The simulator on MPI: one simulated IPU per rank (issue 26), through `mpi4py`.

    mpiexec -n 2 ipu-run model.mlir --target m2000 --random-inputs 0   # or: ipu-run --ipus 2 ...

Every rank plans the whole program (the plans and the profile are the single process's, so
the estimated cycles are the same by construction), then keeps of each plan only what its IPUs
do (`World.localize`): its vertex groups, its host streams, the copies between its own buffers,
and, for an `ipu.copy` from one rank's IPU to another's, a `Send` on the source's rank and a
`Receive` on the destination's. Only the buffers of its IPUs get memory there.

**Messages, batched.** A `Send` snapshots its pieces; a `Receive` waits. A `Flush`, placed
after a run of copies, sends each peer everything of that run in one message and writes what
arrives in program order: one message per pair of ranks per exchange phase, not per copy. The
places are fixed by the global step list, so all ranks agree on them: a run ends before any
other step, before a copy reading a buffer the run receives into, and before a copy within one
rank writing one (exchange phases separated by a sync with no compute between them); received
pieces land in program order. A global sync is then implied by the messages: a rank waits
exactly for the data it reads, as BSP allows.

**Failures.** Receives poll with a deadline (`IPU_MLIR_MPI_TIMEOUT` seconds, default 600): a
peer that hangs or died ends the run with an error naming it, and `fail` aborts every rank
(mpiexec stops the others). `IPU_MLIR_MPI_FAULT=kill:R` or `hang:R` makes rank R die or hang at
its first exchange, for the tests.

IPUs are dealt to ranks in blocks (IPU i to rank i x ranks / IPUs used): with as many ranks
as IPUs the program uses, one each. Each buffer and vertex group must lie on one IPU, as
ipu-shard places them; device variables are not supported in a sharded program on MPI yet.

**Replicas.** A replicated training program (`ipu.ring_all_reduce`; runtime/replicated.py)
runs one replica a rank instead: each rank runs the whole one-replica program, device
variables and all, and its all-reduces are GCL's ring over the ranks (`Ring`): a
reduce-scatter then an all-gather, R - 1 steps each, every step a message to the next rank
and one from the previous, summing in `ring_sum`'s order, so the bytes are those of one
process's replicas. The ring's messages are the global syncs around it: a rank goes on only
with its neighbours' data, and waits for them with the deadline above (an MPI barrier has no
deadline, so a hung rank would hang it).
"""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .all_reduce import ring_chunks
from .memory import Buffer, SimulationError
from .regions import Strided
from .steps import Copy, Execute, Repeat
from .streams import DeviceToHost, HostToDevice

TIMEOUT_ENV = "IPU_MLIR_MPI_TIMEOUT"
FAULT_ENV = "IPU_MLIR_MPI_FAULT"
# mpiexec's environment names its world size: MPICH's Hydra (PMI) and Open MPI's
SIZE_ENVS = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
_TAG_EXCHANGE, _TAG_RESULTS, _TAG_RING, _TAG_GATHER = 26, 27, 28, 29


def launched_size() -> int:
    """How many ranks mpiexec started this process among (1 outside mpiexec)."""
    for name in SIZE_ENVS:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return 1


_current: World | None = None


def current() -> World | None:
    """The MPI world the simulators of this process run on (`start`), None for one process."""
    return _current


def start() -> World:
    """Joins the MPI world mpiexec started: from now on `Simulator`s run distributed."""
    global _current
    try:
        from mpi4py import MPI
    except ImportError:
        raise SimulationError("running on several MPI ranks needs mpi4py: pip install 'ipu-mlir[mpi]'") from None
    _current = World(MPI.COMM_WORLD, float(os.environ.get(TIMEOUT_ENV) or 600))
    return _current


class World:
    """This rank's place in the MPI world, and the messages it exchanges."""

    def __init__(self, comm, timeout: float):
        self.comm, self.rank, self.size, self.timeout = comm, comm.Get_rank(), comm.Get_size(), timeout
        fault = os.environ.get(FAULT_ENV, "")
        kind, _, rank = fault.partition(":")
        self.sending: list = []  # (request, peer) of the messages sent and not known to have arrived
        self.messages = self.bytes = 0  # exchange messages sent, and their arrays' bytes (bench/mpi_scaling.py)
        self.fault = kind if rank.isdigit() and int(rank) == self.rank and kind in ("kill", "hang") else None

    # --- Placement ------------------------------------------------------------------------

    def localize(self, planner) -> None:
        """Keeps of `planner`'s steps what this rank runs (module docstring), in place."""
        if planner.variables:
            raise SimulationError("device variables (ipu.variable) are not supported on several MPI ranks yet: run on one process")
        target = planner.target
        ipus = {name: _ipus(buffer.tiles, target) for name, buffer in planner.buffers.items()}
        for name, held in ipus.items():
            if len(held) > 1:
                raise SimulationError(
                    f"buffer @{name} lies on IPUs {', '.join(map(str, sorted(held)))}: an MPI rank simulates whole IPUs, "
                    "so each buffer must lie on one (as ipu-shard places a layer's buffers)"
                )
        used = 1 + max((min(held) for held in ipus.values() if held), default=0)
        if self.size > used:
            raise SimulationError(
                f"the program uses {used} IPU{'s' * (used > 1)}: run it on at most {used} MPI rank{'s' * (used > 1)}, not {self.size}"
            )
        self.rank_of = {name: min(held) * self.size // used for name, held in ipus.items() if held}
        self.produced: dict[int, int] = {}  # host slot -> the rank streaming it out
        planner.loads = [stream for stream in planner.loads if self._owner(stream.buffer) == self.rank]
        planner.hoisted = [step for step, _ in self._steps(planner.hoisted, [[] for _ in planner.hoisted], planner)]
        kept = self._steps(planner.steps, planner.release, planner, planner.positions)
        planner.steps, planner.release = [step for step, _ in kept], [dead for _, dead in kept]
        self.owners = [self.produced.get(slot) for slot in planner.results]  # the rank streaming each result out
        self.local = {name for name, rank in self.rank_of.items() if rank == self.rank}

    def holds(self, buffer: Buffer) -> bool:
        return buffer.name in self.local

    def _owner(self, buffer: Buffer) -> int:
        return self.rank_of[buffer.name]

    def _steps(self, steps: list, release: list, planner, positions: list[int] | None = None) -> list[tuple[object, list]]:
        """(step, buffers freed after it) of this rank, from the global `steps`, with a `Flush`
        after each run of copies that crossed ranks; `positions` (top level only) to keep the
        buffers receiving until their flush (`planner.last_use`, before memory.bind_arrays)."""
        kept: list[tuple[object, list]] = []
        batch, flushed_dead = _Batch(), []

        def flush(at: int | None) -> None:
            nonlocal batch, flushed_dead
            if positions is not None and at is not None:
                for name in batch.writes:
                    planner.last_use[name] = max(planner.last_use.get(name, 0), positions[at])
            if batch.sends or batch.receives:
                kept.append((Flush(self, batch), flushed_dead))
            batch, flushed_dead = _Batch(), []

        for index, (step, dead) in enumerate(zip(steps, release)):
            if isinstance(step, Copy):
                crossing = self._owner(step.source) != self._owner(step.dest)
                if step.source.name in batch.writes or (not crossing and step.dest.name in batch.writes):
                    flush(index - 1)  # it reads what is still in flight, or would write before a received write
                local = self._copy(step, batch)
            else:
                flush(index - 1)
                local = self._step(step, planner)
            if local is None:
                continue
            if isinstance(local, Receive) and step.dest in dead:  # it is written at the flush: freed after it
                dead = [b for b in dead if b is not step.dest]
                flushed_dead.append(step.dest)
            kept.append((local, dead))
        flush(len(steps) - 1)
        return kept

    def _copy(self, copy: Copy, batch: _Batch):
        source, dest = self._owner(copy.source), self._owner(copy.dest)
        if source == dest:
            return copy if source == self.rank else None
        batch.writes.add(copy.dest.name)
        if source == self.rank:
            batch.sends.setdefault(dest, [])
            return Send(copy, dest, batch)
        if dest == self.rank:
            batch.receives.add(source)
            return Receive(copy, source, batch)
        return None

    def _step(self, step, planner):
        if isinstance(step, Execute):
            groups = [group for group in step.groups if self._group_rank(group, planner.target) == self.rank]
            return None if not groups else step if len(groups) == len(step.groups) else Execute(groups)
        if isinstance(step, Repeat):
            body = [inner for inner, _ in self._steps(step.steps, [[] for _ in step.steps], planner)]
            return Repeat(step.count, body) if body else None
        if isinstance(step, DeviceToHost):
            self.produced[step.value] = self._owner(step.buffer)
        elif isinstance(step, HostToDevice) and self.produced.get(step.value, self._owner(step.buffer)) != self._owner(step.buffer):
            raise step.site.error("streams in a value another MPI rank streamed out: not supported on several ranks yet")
        return step if self._owner(step.buffer) == self.rank else None

    def _group_rank(self, group, target) -> int:
        ranks = {self.rank_of[buffer.name] for buffer, _ in group.inputs + group.outputs}
        source = getattr(group, "source", None)  # a sum reading its partials in place (runtime/partials_in_place.py)
        if source is not None:
            ranks.add(self.rank_of[source.name])
        if len(ranks) > 1 or len(_ipus(group.tiles, target)) > 1:
            raise group.site.error("runs on tiles of several IPUs: an MPI rank simulates whole IPUs (as ipu-shard places layers)")
        return ranks.pop()

    # --- Messages ---------------------------------------------------------------------------

    def exchange(self, sends: dict[int, list], receives: set[int]) -> dict[int, list]:
        """Sends each peer its list of arrays, one message each, and returns what each peer of
        `receives` sent, waiting at most `timeout` seconds for any of them. Sends are not
        waited for here (`collect` does): a rank runs on while its peer is still busy, so
        the stages of a sharded model overlap across device iterations."""
        self.fault_point()
        self.sending = [(request, peer) for request, peer in self.sending if not request.test()[0]]
        self.sending += [(self.comm.isend(arrays, dest=peer, tag=_TAG_EXCHANGE), peer) for peer, arrays in sends.items()]
        self.messages += len(sends)
        self.bytes += sum(array.nbytes for arrays in sends.values() for array in arrays)
        return {peer: self._receive(peer, _TAG_EXCHANGE) for peer in receives}

    def fault_point(self) -> None:
        """Where `IPU_MLIR_MPI_FAULT` strikes this rank: its first exchange or all-reduce."""
        if self.fault == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if self.fault == "hang":
            time.sleep(10 * self.timeout + 3600)

    def gather_all(self, value) -> list:
        """Every rank's `value`, in rank order, on every rank (each waited for with the deadline)."""
        requests = [(self.comm.isend(value, dest=peer, tag=_TAG_GATHER), peer) for peer in range(self.size) if peer != self.rank]
        values = [value if peer == self.rank else self._receive(peer, _TAG_GATHER) for peer in range(self.size)]
        for request, peer in requests:
            self._wait(request.test, peer)
        return values

    def results(self, values: list, slots: list[int]) -> list:
        """A run's results: this rank's streamed out ones sent to rank 0 (not waited for), the
        others None until `collect`."""
        mine = [values[slot] for slot, rank in zip(slots, self.owners) if rank == self.rank]
        if self.rank != 0 and mine:
            self.sending.append((self.comm.isend(mine, dest=0, tag=_TAG_RESULTS), 0))
        return [values[slot] if rank in (self.rank, None) else None for slot, rank in zip(slots, self.owners)]

    def collect(self, runs: list[list]) -> list[list]:
        """The runs' results whole on rank 0 (received in run order from the ranks that streamed
        them out), once every message this rank sent has arrived; None on the others."""
        if self.rank == 0:
            for outputs in runs:
                sent = {rank: iter(self._receive(rank, _TAG_RESULTS)) for rank in sorted(set(self.owners) - {0, None})}
                outputs[:] = [next(sent[rank]) if rank not in (0, None) else value for value, rank in zip(outputs, self.owners)]
        for request, peer in self.sending:
            self._wait(request.test, peer)
        self.sending = []
        return runs if self.rank == 0 else [[None] * len(outputs) for outputs in runs]

    def _receive(self, peer: int, tag: int):
        """The next message from `peer`, of any size (a matched probe, then its receive)."""

        def probe():
            message = self.comm.improbe(source=peer, tag=tag)
            return message is not None, message

        return self._wait(probe, peer).recv()

    def _wait(self, test, peer: int):
        """The value of `test()` once it is done, polled (MPI operations have no timeout of
        their own) with a sleep growing to 1 ms, so a waiting rank leaves its core to others."""
        deadline, pause = time.monotonic() + self.timeout, 1e-5
        while True:
            done, value = test()
            if done:
                return value
            if time.monotonic() > deadline:
                raise SimulationError(f"rank {self.rank}: no message from rank {peer} within {self.timeout:g} s: rank {peer} died or hangs")
            time.sleep(pause)
            pause = min(2 * pause, 1e-3)

    def fail(self, message: str) -> None:
        """Prints `message` (one line, naming this rank) and ends every rank: mpiexec's abort."""
        sys.stdout.flush()
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
        self.comm.Abort(1)


class Ring:
    """The replicas' all-reduce over the ranks, one replica each (module docstring): the
    all-reduce group of runtime/all_reduce.py, as its threads' `Group` is in one process."""

    def __init__(self, world: World) -> None:
        self.world, self.size = world, world.size

    def reduce(self, index: int, local: np.ndarray, mean: bool) -> np.ndarray:
        """GCL's ring on this rank (`index`, its rank): in the reduce-scatter's step s it sends
        the partial sum of chunk (r - s) mod R to the next rank and adds its own part to the
        chunk (r - s - 1) mod R the previous sent, so chunk c is summed from rank c's part on;
        after R - 1 steps it holds chunk r + 1 whole, and the all-gather passes the whole
        chunks on for R - 1 steps more."""
        world, replicas = self.world, self.size
        world.fault_point()
        nearest, previous = (index + 1) % replicas, (index - 1) % replicas
        own = local.reshape(-1)
        partial = own.copy()
        chunks = ring_chunks(own.size, replicas)
        sent = []
        for step in range(replicas - 1):  # reduce-scatter
            sent.append(world.comm.isend(partial[chunks[(index - step) % replicas]], dest=nearest, tag=_TAG_RING))
            chunk = chunks[(index - step - 1) % replicas]
            partial[chunk] = world._receive(previous, _TAG_RING) + own[chunk]
        whole = chunks[nearest]
        if mean:
            partial[whole] /= replicas  # a power of two: exact
        for step in range(replicas - 1):  # all-gather
            sent.append(world.comm.isend(partial[chunks[(index + 1 - step) % replicas]], dest=nearest, tag=_TAG_RING))
            partial[chunks[(index - step) % replicas]] = world._receive(previous, _TAG_RING)
        for request in sent:
            world._wait(request.test, nearest)
        return partial.reshape(local.shape)


def _ipus(tiles: np.ndarray, target) -> set[int]:
    if not tiles.size:
        return set()
    low, high = target.ipu_of_tile(int(tiles.min())), target.ipu_of_tile(int(tiles.max()))
    return {low} if low == high else set(np.unique(tiles // target.tiles_per_ipu).tolist())


@dataclass
class _Batch:
    """The crossing copies of one run of copies (an exchange phase), by peer."""

    sends: dict[int, list[np.ndarray]] = field(default_factory=dict)
    receives: set[int] = field(default_factory=set)  # the peers sending to this rank
    landing: list = field(default_factory=list)  # this run's Receives, in program order
    writes: set[str] = field(default_factory=set)  # the buffers its crossing copies write, on any rank


@dataclass
class Send:
    """An `ipu.copy` to another rank's IPU: its pieces read now (checked as the copy reads)."""

    copy: Copy
    peer: int
    batch: _Batch

    def run(self, values: list, check: bool) -> None:
        copy = self.copy
        self.batch.sends[self.peer] += [np.array(copy.source.read(reads, copy.site, check)) for reads, _ in copy.pieces]


@dataclass
class Receive:
    """An `ipu.copy` from another rank's IPU: written at the flush, in program order."""

    copy: Copy
    peer: int
    batch: _Batch

    def run(self, values: list, check: bool) -> None:
        self.batch.landing.append(self)

    def land(self, arrays, check: bool) -> None:
        dest = self.copy.dest
        for _, writes in self.copy.pieces:
            data = next(arrays)
            dest.write(writes, data if isinstance(writes, Strided) else data.reshape(-1, writes.count), check)


@dataclass
class Flush:
    """The end of a run of copies: one message to and from each peer, then the writes."""

    world: World
    batch: _Batch

    def run(self, values: list, check: bool) -> None:
        batch = self.batch
        got = self.world.exchange(batch.sends, batch.receives)
        arrays = {peer: iter(sent) for peer, sent in got.items()}
        for receive in batch.landing:  # in program order: a later copy's bytes win
            receive.land(arrays[receive.peer], check)
        batch.landing.clear()
        for sent in batch.sends.values():
            sent.clear()
