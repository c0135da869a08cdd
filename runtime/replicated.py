"""Data-parallel replicas in the simulator: one simulator per replica, all-reduces in lockstep.

A replicated training program (`ipu.ring_all_reduce`, docs/many-ipus.md) is one replica's
program: every replica runs it on its own IPU and its own slice of the batch. The
`ReplicatedSimulator` loads it once per replica (each with its own tile memory and device
variables) and runs the replicas side by side, one thread each; an all-reduce
(runtime/all_reduce.py) waits for every replica to reach it. Between all-reduces the replicas
are independent, as on the IPUs.

Under MPI (`mpiexec -n R`, `distributed.start()` first) each rank loads and runs its own
replica only, the rank's number its index, and the all-reduces are messages around the ring of
ranks (runtime/distributed.py's `Ring`); `run` and `read_variables` gather every replica's
results to every rank, so a caller sees the same as in one process.

    device = ReplicatedSimulator(program, target, replicas=4)
    device.write_variable("param:w", w)                 # the same value on every replica
    outputs = device.run([inputs_of_replica_0, ...], iterations=2)   # a list per replica
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from mlir import ir

from ipu_mlir.target import Target

from . import distributed
from .all_reduce import Group, ReplicaStopped, member
from .memory import SimulationError
from .simulator import Simulator

__all__ = ["ReplicatedSimulator"]


class ReplicatedSimulator:
    """`replicas` simulators of one program, run side by side (module docstring)."""

    def __init__(self, module: ir.Module, target: Target, replicas: int, verified: bool = False):
        world = distributed.current()
        self.world = world if world is not None and world.size > 1 else None
        if self.world is not None and self.world.size != replicas:
            raise SimulationError(f"{replicas} replicas on {self.world.size} MPI ranks: run one replica a rank (mpiexec -n {replicas})")
        self.replicas = replicas
        first = Simulator(module, target, verified=verified, replica=True)
        others = 0 if self.world is not None else replicas - 1
        self.simulators = [first] + [Simulator(module, target, verified=True, replica=True) for _ in range(others)]
        self.arguments = first.arguments

    @property
    def profile(self):
        """One replica's: the replicas run alike, the all-reduces priced over the ring."""
        return self.simulators[0].profile

    def variables(self) -> dict:
        return self.simulators[0].variables()

    def write_variable(self, name: str, array: np.ndarray) -> None:
        for simulator in self.simulators:
            simulator.write_variable(name, array)

    def read_variable(self, name: str) -> np.ndarray:
        return self.simulators[0].read_variable(name)

    def read_variables(self, name: str) -> list[np.ndarray]:
        """The variable as each replica holds it."""
        if self.world is not None:
            return self.world.gather_all(self.simulators[0].read_variable(name))
        return [simulator.read_variable(name) for simulator in self.simulators]

    def run(self, inputs: Sequence[Sequence[np.ndarray]], iterations: int | None = None) -> list[list[np.ndarray]]:
        """Each replica's run (`Simulator.run`) on its own inputs; their outputs, per replica."""
        if len(inputs) != self.replicas:
            raise SimulationError(f"expected inputs for {self.replicas} replicas, got {len(inputs)}")
        if self.world is not None:  # this rank's replica, its all-reduces over the ranks
            member.group, member.index = distributed.Ring(self.world), self.world.rank
            try:
                outputs = self.simulators[0].run(inputs[self.world.rank], iterations=iterations)
            finally:
                member.group = None
            return self.world.gather_all(outputs)
        group = Group(len(self.simulators))
        outputs: list = [None] * len(self.simulators)
        errors: list = [None] * len(self.simulators)

        def replica(index: int) -> None:
            member.group, member.index = group, index
            try:
                outputs[index] = self.simulators[index].run(inputs[index], iterations=iterations)
            except BaseException as error:  # noqa: BLE001 (re-raised by the caller's thread)
                errors[index] = error
                group.barrier.abort()  # the others stop at their next all-reduce
            finally:
                member.group = None

        threads = [threading.Thread(target=replica, args=(index,), name=f"replica {index}") for index in range(len(inputs))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        # the replica that failed, not those it left waiting
        first = next((e for e in errors if e is not None and not isinstance(e, ReplicaStopped)), None) or next(
            (e for e in errors if e), None
        )
        if first is not None:
            raise first
        return outputs
