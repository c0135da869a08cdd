"""The BSP simulator: runs an L3 `ipu` program on a model of its target, enforcing BSP rules.

    simulator = Simulator(module, load_target("tiny"))   # walks the IR once into a plan
    outputs = simulator.run([x])                          # runs the plan: numpy only
    print(simulator.profile.summary())                    # cycles, exchange, memory: static

**Plan, then run.** The constructor reads every attribute once and turns the program into
steps holding strided views, index arrays and compiled codelets; `run` never looks at the IR.
A vertex group is one codelet call over the axes of its tile grid, an `ipu.copy` a few
strided numpy assignments (a gather and a scatter when its sides are not affine in its grid), a
host stream a few strided assignments (runtime/streams.py). Costs depend on shapes only, so the
profile is built while planning.

**Memory** (runtime/memory.py). Each `ipu.buffer` is an array of rows, one per tile in the
checked first run, one per class of tiles holding the same bytes afterwards
(runtime/replicas.py), plus a `written` mask while checking. Loading builds the checked
plan and writes the weights into it; the second run builds the later plan, writes the weights
into it (one array for both where their rows agree: `Simulator`), runs once its steps whose
results are the same on every run (a weight's exchange into the layout its reader needs:
`Planner._hoisted` in runtime/planner.py), and binds each other buffer of it to one array, so
its steps' views are made once (runtime/steps.py). Buffers with `offset`s (the
memory plan) whose tiles intersect and whose byte ranges overlap alias: writing one forgets
the other's data over the shared bytes, so reading it afterwards is an error naming the
buffer that overwrote it.

**Static checks are the verifier's** (dialects/verifier.py, run by the constructor unless
the caller verified already): symbols, tile grids within the target, copies, streams and
codelet views within their buffers, signatures. The simulator checks only what running the
program shows, **the dynamic BSP checks**, each an error naming the op, its location, the tile
and the bytes: two writers of the same bytes, or a reader of bytes another op writes, within
one compute set or exchange phase (also through buffers whose memory-plan offsets alias); an
exchange after compute in the same superstep; reading memory never written (or last written
through an aliasing buffer); out of memory with unplaced buffers.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from mlir import ir

from ipu_mlir.dialects import verifier
from ipu_mlir.target import Target, target_of

from . import distributed
from .blas import one_blas_thread
from .memory import (
    Buffer,
    SimulationError,
    bind_arrays,
)
from .partials_in_place import elide
from .planner import Planner, Variable, accesses
from .profile import Profile, buffer_lives
from .replicas import tile_classes
from .steps import Copy, prepare
from .streams import HostToDevice


def _verify(module: ir.Module, target: Target) -> None:
    """Raises the verifier's first error (the others listed after its message), if any."""
    errors = [e for e in verifier.verify(module.operation, target) if e.severity == "error"]
    if errors:
        raise SimulationError(errors[0].message + "".join(f"\n{e}" for e in errors[1:]), errors[0].location)


@contextlib.contextmanager
def _no_collection():
    """Python's cyclic garbage collector held off while loading: planning allocates millions of
    objects that all live on (steps, regions, grids), and each full collection walks every one
    of them again (BERT-12: about 1,800 collections, 2 s of an 11 s load). Whatever garbage
    the load leaves is collected later as usual."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@dataclass
class _Plan:
    """What runs need of a planner: its steps, the buffers each step frees, all buffers."""

    steps: list
    release: list[list[Buffer]]
    buffers: list[Buffer]
    check: bool
    variables: dict[str, Variable]
    transient: list[Buffer] | None = None  # the buffers a run resets and releases, known at its first run (`Simulator._run`)

    @staticmethod
    def load(planner: Planner, constants: dict[int, np.ndarray], num_slots: int, loaded: dict[str, Buffer] | None = None) -> _Plan:
        """The plan, its weights written into tile memory (the resident streams, once). A
        weight in `loaded` (another plan's, with the same rows) takes its array: the same
        bytes, which neither plan writes again. A constant only loads read
        (`Planner.load_only`) leaves `constants` after its last load: the host's copy of a
        weight is not held beside the tile memory's (BERT-Large on an m2000: 1.25 GiB)."""
        values: list = [None] * num_slots
        for slot, array in constants.items():
            values[slot] = array
        last = {step.value: index for index, step in enumerate(planner.loads) if step.value in planner.load_only}
        for index, step in enumerate(planner.loads + planner.hoisted):
            if isinstance(step, HostToDevice) and step.buffer.name in (loaded or {}):
                step.buffer.data = loaded[step.buffer.name].data
            elif isinstance(step, Copy) and step.dest.name in planner.same_bytes:
                # an earlier buffer's bytes (Planner._same_bytes): its array, shared before a
                # later hoisted step reads this buffer
                step.dest.data = planner.buffers[planner.same_bytes[step.dest.name]].data
            else:
                written = [step.buffer] if isinstance(step, HostToDevice) else accesses(step)[1]
                for buffer in written:
                    buffer.resident = False
                    buffer.reset()
                if isinstance(step, HostToDevice) and values[step.value] is None:
                    values[step.value] = planner.constant(step.value)
                step.run(values, planner.checks)
                for buffer in written:
                    buffer.resident = True
            if isinstance(step, HostToDevice) and last.get(step.value) == index:
                values[step.value] = None
                constants.pop(step.value, None)
        for slot in planner.load_only:  # those of loads another MPI rank makes (World.localize)
            constants.pop(slot, None)
        for variable in planner.variables.values():
            if not planner.checks:  # its array for good: the later plan's steps keep views of it (steps.prepare)
                variable.buffer.data = np.zeros((variable.buffer.row_count, variable.buffer.elements), variable.buffer.dtype)
        return _Plan(planner.steps, planner.release, list(planner.buffers.values()), planner.checks, planner.variables)


class Simulator:
    """An L3 program planned for a target, ready to run any number of times.

    `arguments` lists the (shape, dtype) the entry function takes; `profile` the run's costs
    (known from shapes alone, so available before `run`; with data-dependent control flow,
    `scf.if` and `scf.while`, its blocks count as often as they ran in the last run, none before).

    A program has two plans. Which bytes a step reads and writes is fixed by the plan (no
    data-dependent control flow: loops have constant bounds), so the memory checks see the
    same thing on every run: the first run that completes makes them all, on one row of memory
    per tile (the checked plan, made at load). Later runs use a second plan without checks,
    made from the first when a run first needs it (a program run once never pays for it),
    where tiles proven to hold the same bytes (runtime/replicas.py, from the program alone)
    share a row: exchange then moves each distinct block once, and codelets read replicated
    operands as broadcasts. Weights streamed from constants into buffers of their own are
    written into each plan's memory as it is made and stay there (`Profile.load_bytes`); a
    weight whose tiles are each a class of their own is held once, in one array both plans
    read."""

    def __init__(self, module: ir.Module, target: Target | None = None, entry: str = "main", verified: bool = False, replica: bool = False):
        """Verifies `module` (unless `verified`: the caller ran dialects.verifier for this
        target) and plans it; a verifier error is raised as a SimulationError at its op.
        `replica`: one replica of a replicated program (runtime/replicated.py), run whole on
        this process whatever the MPI world."""
        self.target = target or target_of(module.operation)
        world = distributed.current()  # on several MPI ranks: this rank's IPUs only (runtime/distributed.py)
        self.world = world if world is not None and world.size > 1 and not replica else None
        self._module = module  # compiled codelets may keep referring to its ops
        if not verified:  # the static rules are the verifier's; the simulator checks what runs
            _verify(module, self.target)
        with _no_collection():
            self._plan(module, entry)

    def _plan(self, module: ir.Module, entry: str) -> None:
        with module.context:  # messages may build attributes
            planner = Planner(module.operation, self.target, entry)
            if self.world is not None:
                self.world.localize(planner)
        self.entry = entry
        self.arguments = planner.arguments
        self._constants, self._results, self._num_slots = planner.constants, planner.results, len(planner.slots)
        self._variable_types = {name: (v.shape, v.dtype) for name, v in planner.variables.items()}
        sets = {name: compute_set.buffers for name, compute_set in planner.compute_sets.items()}
        lives = buffer_lives(planner.supersteps, planner.buffers.values(), sets)
        held = {variable.buffer.name for variable in planner.variables.values()}
        for life in lives:
            if life.name in held:
                life.kind = "variable"

        costs = planner.supersteps, planner.memory_per_tile, planner.vertices, planner.edges, lives, planner.load_bytes
        self._build_profile = lambda: Profile.build(self.target, entry, *costs)  # not the planner: it goes with the checked plan
        self._counts, self._counted = planner.counts, planner.counted
        for superstep, _, _ in self._counted:  # data-dependent control flow: counted by runs, none yet
            superstep.repeat = 0
        self.profile = self._build_profile()
        self._one_run, self._written = self.profile, set()  # the profile of a run, before `iterations` scales it
        with one_blas_thread():  # loading runs the weight-only steps
            self._checked: _Plan | None = _Plan.load(planner, self._constants, self._num_slots)  # until a run completes
        # The later plan is derived from the checked one when first needed (`_later`): a
        # program run once (ipu-run) never plans it. Variables the checked run leaves wait in
        # `_carried` for it.
        self._planner, self._later_plan, self._elided = planner, None, 0
        self._carried: dict[str, np.ndarray] = {}

    @property
    def _later(self) -> _Plan:
        """The plan of runs after the checked one: the checked planner's tiles split into
        classes of replicas (runtime/replicas.py) and planned again, weights written, buffers
        bound to arrays; made on first use, once."""
        if self._later_plan is None:
            with _no_collection():
                self._later_plan = self._plan_later(self._planner)
            self._planner = None  # with it the checked plan's weights, except those the later plan shares
            for name, array in self._carried.items():
                self._later_plan.variables[name].write(array, False)
            self._carried = {}
        return self._later_plan

    def _plan_later(self, planner: Planner) -> _Plan:
        with self._module.context:
            tiles = {buffer.name: buffer.tiles for buffer in planner.buffers.values()}
            classes = tile_classes(tiles, planner.writes, self.target.num_tiles)
            later = Planner(self._module.operation, self.target, self.entry, classes, planner)
            self._elided = elide(later)  # partial sums summed where the products left them
            if self.world is not None:
                self.world.localize(later)
        with one_blas_thread():  # loading runs the weight-only steps
            loaded = {stream.buffer.name: stream.buffer for stream in planner.loads if stream.buffer.name in later.unreplicated}
            plan = _Plan.load(later, later.constants, self._num_slots, loaded)
        names = [
            name
            for name, buffer in later.buffers.items()
            if name in later.last_use and not buffer.resident and (self.world is None or self.world.holds(buffer))
        ]
        bind_arrays([(later.buffers[name], later.first_use[name], later.last_use[name]) for name in names])
        prepare(plan.steps)
        return plan

    @property
    def elided(self) -> int:
        """How many copies of partial sums the later plan leaves out (runtime/partials_in_place.py)."""
        self._later  # noqa: B018 (planned on first use)
        return self._elided

    # --- Device variables (`ipu.variable`): state kept in tile memory from run to run ---------

    def variables(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        """Each device variable's (shape, dtype), by name, in declaration order."""
        return dict(self._variable_types)

    def write_variable(self, name: str, array: np.ndarray) -> None:
        """Writes the variable `name` into tile memory (Poplar's `Engine::writeTensor`): once
        after load, and whenever the host changes it. Not a stream of any run."""
        shape, dtype = self._variable(name)
        if isinstance(array, np.generic):  # a numpy scalar: a 0-d array
            array = np.asarray(array)
        if not isinstance(array, np.ndarray) or array.shape != shape or array.dtype != dtype:
            got = f"{'x'.join(map(str, array.shape)) or 'scalar'} {array.dtype}" if isinstance(array, np.ndarray) else type(array).__name__
            raise SimulationError(f"device variable '{name}' is a {'x'.join(map(str, shape)) or 'scalar'} {dtype} array, got {got}")
        for plan in (self._checked, self._later_plan if self._checked is not None else self._later):
            if plan is not None:
                plan.variables[name].write(array, plan.check)
        self._written.add(name)

    def read_variable(self, name: str) -> np.ndarray:
        """The variable `name` as the device holds it now (Poplar's `Engine::readTensor`)."""
        self._variable(name)
        if name not in self._written:
            raise SimulationError(f"device variable '{name}' was never written: write_variable('{name}', array) first")
        plan = self._checked or self._later
        return plan.variables[name].read(plan.check)

    def _variable(self, name: str) -> tuple[tuple[int, ...], np.dtype]:
        known = self.variables()
        if name not in known:
            listed = ", ".join(f"'{n}'" for n in known) or "none"
            raise SimulationError(f"@{self.entry} has no device variable '{name}' (its variables: {listed})")
        return known[name]

    # --- Runs ---------------------------------------------------------------------------------

    def run(self, inputs: Sequence[np.ndarray], iterations: int | None = None) -> list[np.ndarray]:
        """Runs the program on `inputs` (numpy arrays of exactly the streamed arguments' shapes
        and types) and returns its streamed results. With `iterations=N`, runs it N times on the
        device (Poplar's Repeat around the program, PopTorch's deviceIterations): each input has
        a leading axis of N, one slice streamed in per iteration, and each output is stacked
        along a new leading axis of N. Device variables carry from one iteration to the next."""
        unwritten = [name for name in self._variable_types if name not in self._written]
        if unwritten:
            raise SimulationError(
                f"device variable '{unwritten[0]}' was never written: write_variable('{unwritten[0]}', array) before running"
                + (f" ({len(unwritten)} unwritten)" if len(unwritten) > 1 else "")
            )
        if iterations is None:
            self.check_inputs(inputs)
            outputs = self._run(inputs)
            self.profile = self._one_run
            return outputs if self.world is None else self.world.collect([outputs])[0]
        if not isinstance(iterations, int) or isinstance(iterations, bool) or iterations < 1:
            raise SimulationError(f"iterations must be a positive integer, got {iterations!r}")
        self.check_inputs(inputs, iterations)
        if self.profile.iterations != iterations:
            self.profile = self._one_run if iterations == 1 else self._one_run.repeated(iterations)
        outputs, runs = [], []
        for i in range(iterations):
            outputs.append(self._run([x[i] for x in inputs]))
            runs.append(self._one_run)
        if self._counted:  # data-dependent control flow: each iteration as its blocks ran
            self.profile = Profile.summed(runs)
        if self.world is not None and self.world.rank:  # rank 0 returns the outputs
            return self.world.collect(outputs)[0]
        return [np.stack(column) for column in zip(*(outputs if self.world is None else self.world.collect(outputs)))]

    def _run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        plan = self._checked or self._later
        values: list = [None] * self._num_slots
        values[: len(inputs)] = inputs
        for slot, array in self._constants.items():
            values[slot] = array
        if plan.transient is None:  # resident buffers (weights, bound arrays) keep theirs: a run skips them
            plan.transient = [buffer for buffer in plan.buffers if not buffer.resident]
        for buffer in plan.transient:
            buffer.reset()
        for count in self._counts:
            count.runs = 0
        try:
            # the later plan's vertex groups write without entering np.errstate each (VertexGroup.writer)
            with one_blas_thread(), contextlib.nullcontext() if plan.check else np.errstate(all="ignore"):
                for step, dead in zip(plan.steps, plan.release):
                    step.run(values, plan.check)
                    for buffer in dead:  # past its last use: its memory goes back before the next step
                        buffer.release()
            if self._checked is not None:  # the checks are made: its memory (a row per tile) goes, its variables move
                for name, variable in self._checked.variables.items():
                    if name in self._written:
                        if self._later_plan is None:
                            self._carried[name] = variable.read(True)
                        else:
                            self._later_plan.variables[name].write(variable.read(True), False)
            self._checked = None
        finally:
            for buffer in plan.transient:
                buffer.release()
        if self._counted:  # the profile of this run: each block of data-dependent control flow as often as it ran
            for superstep, count, repeat in self._counted:
                superstep.repeat = repeat * count.runs
            self._one_run = self._build_profile()
        if self.world is not None:  # whole on rank 0 once collected (World.collect)
            return self.world.results(values, self._results)
        return [values[slot] for slot in self._results]

    def check_inputs(self, inputs: Sequence[np.ndarray], iterations: int | None = None) -> None:
        if len(inputs) != len(self.arguments):
            raise SimulationError(f"@{self.entry} takes {len(self.arguments)} inputs, got {len(inputs)}")
        for index, (value, (shape, dtype)) in enumerate(zip(inputs, self.arguments)):
            if iterations is not None:  # one slice per iteration along a leading axis
                shape = (iterations, *shape)
            if isinstance(value, np.ndarray) and value.shape == shape and value.dtype == dtype:
                continue  # the message only for a wrong input: a run's check is its fixed cost (21 inputs: 0.33 -> 0.01 ms)
            expected = f"{'x'.join(map(str, shape)) or 'scalar'} {dtype}" + (f" ({iterations} iterations)" if iterations else "")
            if not isinstance(value, np.ndarray):
                raise SimulationError(f"input #{index} of @{self.entry}: expected a numpy array ({expected}), got {type(value).__name__}")
            if value.shape != shape or value.dtype != dtype:
                got = f"{'x'.join(map(str, value.shape)) or 'scalar'} {value.dtype}"
                raise SimulationError(f"input #{index} of @{self.entry}: expected {expected}, got {got}")
