"""PopTorch's `trainingModel` on the simulated chip (`frontends.torch.trainingModel` makes one).

    opts = Options().deviceIterations(2)
    model = ipu_torch.trainingModel(net, options=opts, optimizer=torch.optim.SGD(net.parameters(), lr=0.1))
    loss = model(x, labels)        # 2 micro-batches: x's first axis is 2 x the micro-batch
    model.copyWeightsToHost()      # parameters, buffers and the optimizer's state back to the host

As in PopTorch, the model's forward returns the loss, or `(output, loss)`; the first call
compiles (frontends/joint.py builds the joint step) and writes the parameters, buffers and
optimizer state into device variables once; each call then runs `deviceIterations x
gradientAccumulation` micro-batches on the device and returns what forward returns for the
last of them (PopTorch's default output mode for training, `OutputMode.Final`). Python values
among forward's arguments (and the defaults a call leaves out) are constants of the step, as
PopTorch's (frontends/inputs.py); a later call with another value is refused. A learning rate,
SGD momentum or Adam betas changed between calls (by a scheduler, or `setOptimizer`) is written
to its device variable before the next call: no recompilation.

The host side follows the device as PopTorch's does (poptorch `_poplar_executor.py`):
`copyWeightsToHost()` writes the parameters and buffers into the model and the optimizer's
state (momentum buffers; Adam's step, exp_avg, exp_avg_sq) into the torch optimizer, and
`model.state_dict()` and `optimizer.state_dict()` after a call read the device first, so a
checkpoint holds what the device trained. The other way, `copyWeightsToDevice()` (and `load_state_dict`,
which calls it) writes the host model's parameters and buffers to the device, and
`optimizer.load_state_dict(...)` marks the optimizer's state to be written before the next call.
`detachFromDevice()` keeps every device variable on the host and releases the simulator until
`attachToDevice()` (or the next call) loads the program again; `destroy()` lets the model go.

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

from ipu_mlir.dialects.attrs import PARTIALS_ATTR, encode_partials
from ipu_mlir.frontends import api
from ipu_mlir.frontends.inputs import Signature
from ipu_mlir.frontends.joint import JointStep, build_step
from ipu_mlir.frontends.mixed_precision import MixedPrecisionStep, to_numpy, to_torch
from ipu_mlir.frontends.optimizers import host_state, hyper_variable, load_host_state, rule_of, steps_taken
from ipu_mlir.frontends.options import Options, ReductionType
from ipu_mlir.runtime.replicated import ReplicatedSimulator
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import load_target
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["TrainingModel", "micro_batches", "trainer_of"]

_TRAINERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # a host model and its layers -> their TrainingModel


def trainer_of(model: Any) -> TrainingModel | None:
    """The TrainingModel training `model` (or a model `model` is a layer of), if one does (and was not destroyed)."""
    trainer = _TRAINERS.get(model)
    trainer = trainer() if trainer is not None else None
    return trainer if trainer is not None and trainer.step is not None else None


class TrainingModel:
    """`frontends.torch.trainingModel`'s result. `compile_program(module, target, memory_fraction=)` compiles the
    joint step and `importer` imports it into torch-mlir (frontends.torch gives its own: errors
    then name the PyTorch op)."""

    def __init__(
        self, model: Any, options: Options, optimizer: Any, compile_program: Callable | None = None, importer: type | None = None
    ) -> None:
        self.model, self.options = model.train(), options
        self._compile_program, self._importer = compile_program, importer
        self.rule = rule_of(optimizer)
        self.step: JointStep | None = None  # built by the first call
        self.signature: Signature | None = None  # how the compiled call's arguments bind to forward (frontends/inputs.py)
        self.device: Simulator | None = None  # holds the device variables between calls
        self.timings: dict[str, float] = {}  # seconds: export, compile and load (first call), run (last call)
        self._hyper: list[dict[str, float]] = []  # each param group's device-variable hyper-parameters, as on the device
        self.replicas = options.replication_factor  # data-parallel replicas, a simulator each (one IPU, or a sharded step's IPUs)
        # PipelinedExecution: the micro-batches of a step in one run (0: one micro-batch a run)
        self.pipelined = options.Training.gradient_accumulation if options.execution_strategy.pipelined else 0
        self._host_state_stale = False  # the device updated the optimizer state since the host last read it
        self._host_weights_stale = False  # the device updated the parameters since copyWeightsToHost
        # model.state_dict() copies the weights to the host first, as PopTorch's wrapped model does
        self._model_hook = model.register_state_dict_pre_hook(lambda *_: self.copyWeightsToHostIfNeeded())
        self._device_state_stale = False  # the host loaded an optimizer state the device has not seen
        self._hooks: list[Any] = []
        self._follow(optimizer)
        self.program: Any = None  # the compiled step, kept to attach again after detachFromDevice
        self._detached: dict[str, np.ndarray] | None = None  # every device variable, while detached
        self.host_weights_version = 0  # copyWeightsToHost calls: an inferenceModel of the model follows it
        self.destroyed = False
        for module in model.modules():  # an inferenceModel of the model, or of a layer of it, follows this one
            _TRAINERS[module] = weakref.ref(self)

    def _batches(self, inputs: tuple, kwargs: dict) -> list[list[np.ndarray]]:
        """Each replica's share of a call's inputs, cut into micro-batches."""
        if self.destroyed:
            raise IpuError("the trainingModel was destroyed: make a new one of the model")
        if self.step is None:  # its Python values are compiled in; a later call must pass the same
            self.signature, tensors = Signature.of(self.model, inputs, kwargs, defaults=True)
        else:  # the shapes and types are checked per micro-batch (_check_batch)
            tensors = self.signature.tensors(self.model, inputs, kwargs, check_types=False)
        arrays = micro_batches(tuple(tensors), self.options.micro_batches_per_call, self.replicas)
        shards = replica_slices(arrays, self.replicas)
        if self.pipelined:  # a run takes a step's micro-batches (each replica's own), pipelined over its IPUs
            shards = [[array.reshape(self.options.device_iterations, -1, *array.shape[2:]) for array in shard] for shard in shards]
        return shards

    def compile(self, *inputs: Any, **kwargs: Any) -> None:
        """PopTorch's `compile`: builds, compiles and loads the step for inputs like these (a
        call's), running nothing; the device variables hold the model's weights after it."""
        if self.step is None:
            self._compile(tuple(to_torch(array[0]) for array in self._batches(inputs, kwargs)[0]))

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        shards = self._batches(inputs, kwargs)
        if self.step is None:
            self._compile(tuple(to_torch(array[0]) for array in shards[0]))
        elif self.device is None:  # detached: attach as PopTorch's call does
            self.attachToDevice()
        self._check_batch(shards[0])
        self._write_hyper_parameters()
        if self._device_state_stale:
            self._write_optimizer_state()
        start = time.perf_counter()
        iterations = len(shards[0][0])
        if self.replicas > 1:
            # each output as PopTorch returns it: the replicas' along the first axis (a scalar: one per replica)
            per_replica = self.device.run(shards, iterations=iterations)
            results = [np.stack([r[k] for r in per_replica], axis=1) for k in range(len(per_replica[0]))]
            results = [a if a.ndim == 2 else a.reshape(a.shape[0], -1, *a.shape[3:]) for a in results]
        else:
            results = self.device.run(shards[0], iterations=iterations)
        results = [self.options.returned(np.asarray(result), training=True) for result in results]  # Options.outputMode
        self.timings["run"] = time.perf_counter() - start
        self._host_state_stale = self._host_weights_stale = True
        last = [to_torch(np.asarray(result, order="C")) for result in results]  # a 0-d loss stays 0-d
        if self.step.output_structure is None:
            return last[0]
        from torch.utils import _pytree as pytree

        return pytree.tree_unflatten(last, self.step.output_structure)  # forward's tuple, list or dict

    def setOptimizer(self, optimizer: Any) -> None:  # noqa: N802 (PopTorch's name)
        """A new optimizer of the same kind and constants: its learning rates take effect at the
        next call. Other changes need a new trainingModel (they are constants of the program).
        As PopTorch's: the old optimizer gets the device's state first; a new one that carries
        a state (loaded from a checkpoint) has it written before the next call, one without
        keeps the device's."""
        rule = rule_of(optimizer)
        if rule != self.rule:
            raise IpuError(f"setOptimizer: {self.rule.difference(rule)}: {_COMPILED_IN}")
        if optimizer is self.optimizer:
            return
        self._read_optimizer_state()
        self._follow(optimizer)
        self._device_state_stale = self.device is not None and bool(optimizer.state)

    def copyWeightsToHostIfNeeded(self) -> bool:  # noqa: N802 (PopTorch's name)
        """copyWeightsToHost() if the device trained since the last: whether it copied."""
        stale = self._host_weights_stale
        if stale:
            self.copyWeightsToHost()
        return stale

    def copyWeightsToHost(self) -> None:  # noqa: N802 (PopTorch's name)
        """The device's parameters and buffers (BatchNorm running statistics) into the host
        model, and its optimizer state into the torch optimizer."""
        import torch

        if self.device is None:
            return
        self._host_weights_stale = False
        self.host_weights_version += 1
        tensors = self._host_tensors()
        with torch.no_grad():
            for variable in self.step.variables:
                if variable.updated and variable.name in tensors:
                    tensors[variable.name].copy_(to_torch(self.device.read_variable(variable.name)))
        self._read_optimizer_state()

    def copyWeightsToDevice(self) -> None:  # noqa: N802 (PopTorch's name)
        """The host model's parameters and buffers onto the device (before the first call the
        first call writes them). The host's parameters are the device's only after
        copyWeightsToHost() (or model.state_dict()): change them after that, not before."""
        if self.device is None:
            return
        self._host_weights_stale = False  # the host's are now the device's
        tensors = self._host_tensors()
        for variable in self.step.variables:
            if variable.name in tensors:
                self.device.write_variable(variable.name, np.array(to_numpy(tensors[variable.name]), copy=True))

    def isCompiled(self) -> bool:  # noqa: N802 (PopTorch's name)
        return self.step is not None

    def isAttachedToDevice(self) -> bool:  # noqa: N802 (PopTorch's name)
        return self.device is not None

    def detachFromDevice(self) -> None:  # noqa: N802 (PopTorch's name)
        """PopTorch's: the weights and optimizer state copied to the host first; here every
        device variable (the step counters, accumulators, random state too) is kept on the host
        and the simulator released, until attachToDevice() or the next call."""
        if self.step is None:
            raise IpuError("detachFromDevice: the model has not been compiled or has been destroyed")
        if self.device is None:
            raise IpuError("detachFromDevice: the device is not attached")
        self.copyWeightsToHostIfNeeded()
        self._read_optimizer_state()
        self._detached = {variable.name: self.device.read_variable(variable.name) for variable in self.step.variables}
        self.device = None

    def attachToDevice(self) -> None:  # noqa: N802 (PopTorch's name)
        """The program loaded again with the variables kept at detachFromDevice(), then, as
        PopTorch's, the host model's weights and the optimizer's state written to it."""
        if self.step is None:
            raise IpuError("attachToDevice: the model has not been compiled or has been destroyed")
        if self.device is not None:
            raise IpuError("attachToDevice: the device is already attached")
        self.device = self._load(self.program)
        for name, value in self._detached.items():
            self.device.write_variable(name, value)
        self._detached = None
        self.copyWeightsToDevice()
        self._device_state_stale = bool(self.optimizer.state)

    def destroy(self) -> None:
        """PopTorch's: the weights and optimizer state to the host, then the program and the
        device released and the model and optimizer let go (their hooks removed); a later
        call is refused."""
        if self.device is not None:
            self.copyWeightsToHostIfNeeded()
            self._read_optimizer_state()
        self.step = self.device = self.program = self._detached = None
        for hook in [self._model_hook, *self._hooks]:
            hook.remove()
        self._hooks, self.destroyed = [], True

    def load_state_dict(self, state_dict: dict, strict: bool = True) -> Any:
        """The host model's `load_state_dict`, then copyWeightsToDevice(), as PopTorch's."""
        result = self.model.load_state_dict(state_dict, strict)
        self.copyWeightsToDevice()
        return result

    def _host_tensors(self) -> dict[str, Any]:
        tensors = {f"param:{name}": p for name, p in self.model.named_parameters()}
        tensors.update({f"buffer:{name}": b for name, b in self.model.named_buffers()})
        return tensors

    def _follow(self, optimizer: Any) -> None:
        """Hooks on `optimizer` (and off the previous one): its state_dict() reads the device's
        state first; its load_state_dict() marks the loaded state for the device."""
        for hook in self._hooks:
            hook.remove()
        self.optimizer = optimizer
        self._hooks = [
            optimizer.register_state_dict_pre_hook(lambda _: self._read_optimizer_state()),
            optimizer.register_load_state_dict_post_hook(lambda _: self._loaded_on_host()),
        ]

    def _loaded_on_host(self) -> None:
        self._host_state_stale = False  # the loaded state replaces what the device had
        self._device_state_stale = self.device is not None

    def _optimizer_variables(self) -> list[tuple[str, Any, str]]:
        """(variable, parameter, state kind) of each optimizer state variable."""
        params = dict(self.model.named_parameters())
        found = []
        for variable in self.step.variables:
            if variable.name.startswith("opt:") and variable.name != "opt:step":
                _, kind, name = variable.name.split(":", 2)
                found.append((variable.name, params[name], kind))
        return found

    def _read_optimizer_state(self) -> None:
        """The device's optimizer state into the torch optimizer, when the device is ahead."""
        if self.device is None or not self._host_state_stale:
            return
        self._host_state_stale = False
        if not self.rule.counts_steps:
            return  # plain SGD keeps no state
        states: dict[Any, dict[str, np.ndarray]] = {}
        for name, param, kind in self._optimizer_variables():
            states.setdefault(param, {})[kind] = self.device.read_variable(name)
        load_host_state(self.optimizer, self.rule, float(self.device.read_variable("opt:step")), states)

    def _write_optimizer_state(self) -> None:
        """The torch optimizer's state (loaded on the host) onto the device."""
        self._device_state_stale = False
        if not self.rule.counts_steps:
            return
        self.device.write_variable("opt:step", np.array(steps_taken(self.optimizer), np.float32))
        for name, param, kind in self._optimizer_variables():
            self.device.write_variable(name, host_state(self.optimizer, param, kind, self.device.read_variable(name).dtype))

    @property
    def random_seed(self) -> int:
        """The seed of the step's random ops: `Options.randomSeed`'s, else torch.initial_seed()'s low 31 bits."""
        import torch

        seed = self.options.random_seed
        return seed if seed is not None else torch.initial_seed() % (1 << 31)

    @property
    def profile(self) -> Any:
        return self.device.profile

    def _compile(self, micro_batch: tuple) -> None:
        start = time.perf_counter()
        training = self.options.Training
        self.step = build_step(
            self.model.train(),  # an inferenceModel of the same model may have set eval mode since
            self.optimizer,
            self.rule,
            micro_batch,
            1 if self.pipelined else training.gradient_accumulation,
            training.reduction is ReductionType.Mean,
            self._importer,
            self.random_seed,
            self.replicas,
            self._mixed_precision(),
            self.pipelined,
            self.signature.bind,
        )
        middle = time.perf_counter()
        target, fraction = self.options.target_name, self.options.memory_fraction
        if self.options.Precision.partials_type is not None:  # read by ipu-partials-type (Precision.setPartialsType)
            with self.step.module.context:
                self.step.module.operation.attributes[PARTIALS_ATTR] = encode_partials(self.options.Precision.partials_type)
        pipeline = {"micro_batches": self.pipelined} if self.pipelined else {}
        try:
            program = (self._compile_program or _compile)(
                self.step.module, target, memory_fraction=fraction, replicas=self.replicas, **pipeline
            )
        except IpuError as error:  # the planner's refusal names its option: say which of ours set it
            if fraction is not None and "memory-fraction)" in error.message:
                error.message = error.message.replace("memory-fraction)", f"memory-fraction: setAvailableMemoryProportion {fraction!r})")
            raise
        self.program, self.device = program, self._load(program)
        self.timings.update(export=middle - start, compile_and_load=time.perf_counter() - middle)
        for variable in self.step.variables:
            self.device.write_variable(variable.name, variable.value)
        self._hyper = [self.rule.hyper_values(group) for group in self.optimizer.param_groups]

    def _load(self, program: Any) -> Simulator | ReplicatedSimulator:
        target = self.options.target_name
        if self.replicas > 1:  # one simulator per replica, their all-reduces in lockstep
            return ReplicatedSimulator(program, load_target(target), self.replicas, verified=True)
        return api.load_simulator(program, target, verified=True)  # the default pipeline ends in ipu-verify

    def _mixed_precision(self) -> MixedPrecisionStep | None:
        """The master weights, loss scaling and stochastic rounding the options ask for, if any."""
        precision, scaling = self.options.Precision, self.options.Training.loss_scaling
        if not (precision.master_weights or precision.stochastic_rounding or precision.fp8 or scaling is not None):
            return None
        return MixedPrecisionStep(precision, scaling, dict(self.model.named_parameters()))

    @property
    def loss_scale(self) -> float | None:
        """The device's loss scale now (dynamic loss scaling changes it), None without loss scaling."""
        has_scale = self.step is not None and any(v.name == "scale:loss" for v in self.step.variables)
        return float(self.device.read_variable("scale:loss")) if has_scale else None

    def masterWeights(self) -> dict[str, np.ndarray]:  # noqa: N802 (PopTorch's style)
        """The f32 master copies of the f16 / bf16 weights on the device, by parameter name."""
        names = [v.name for v in self.step.variables if v.name.startswith("master:")] if self.step else []
        return {name.removeprefix("master:"): self.device.read_variable(name) for name in names}

    def _check_batch(self, arrays: list[np.ndarray]) -> None:
        if len(arrays) != len(self.step.batch):
            raise IpuError(f"the model was compiled for {len(self.step.batch)} inputs, got {len(arrays)}")
        per_call = len(arrays[0]) if arrays else 1
        for index, (array, (shape, dtype)) in enumerate(zip(arrays, self.step.batch)):
            if array.shape[1:] != shape or array.dtype != dtype:
                expected = _describe((shape[0] * per_call, *shape[1:]), dtype) if shape else f"{per_call} {dtype}"
                got = _describe((array.shape[0] * array.shape[1], *array.shape[2:]), array.dtype)
                raise IpuError(f"input #{index}: the model was compiled for {expected}, got {got}")

    def _write_hyper_parameters(self) -> None:
        """The learning rates, momentum and betas a scheduler (or setOptimizer) changed, to their device variables."""
        rule = rule_of(self.optimizer)
        if rule != self.rule:
            raise IpuError(f"the optimizer's {self.rule.difference(rule)} changed after compilation: {_COMPILED_IN}")
        hyper = [rule.hyper_values(group) for group in self.optimizer.param_groups]
        for index, (values, before) in enumerate(zip(hyper, self._hyper)):
            for key, value in values.items():
                if value != before[key]:
                    self.device.write_variable(hyper_variable(key, index), np.array(value, np.float32))
        self._hyper = hyper


_COMPILED_IN = "it is compiled into the program (make a new trainingModel); the learning rate, SGD's momentum and Adam's betas may change"


def micro_batches(inputs: tuple, count: int, replicas: int = 1) -> list[np.ndarray]:
    """Each input (a tensor whose first axis holds `count` micro-batches of each of `replicas`)
    as an array of shape (count, replicas x micro-batch, ...); a float64 one in float32, as
    PopTorch's (the IPU has no 64-bit floats; data made with numpy is float64)."""
    arrays = []
    for index, value in enumerate(inputs):
        if not type(value).__module__.startswith("torch"):
            raise IpuError(f"input #{index}: expected a torch tensor, got {type(value).__name__} {value!r:.40}")
        array = to_numpy(value)
        array = array.astype(np.float32) if array.dtype == np.float64 else array
        if array.ndim == 0 or array.shape[0] % (count * replicas):
            raise IpuError(
                f"input #{index}: its first axis ({_describe(array.shape, array.dtype)}) must hold {count * replicas} micro-batches"
                " (deviceIterations x gradientAccumulation" + (" x replicationFactor)" if replicas > 1 else ")")
            )
        arrays.append(np.ascontiguousarray(array.reshape(count, array.shape[0] // count, *array.shape[1:])))
    return arrays


def replica_slices(arrays: list[np.ndarray], replicas: int) -> list[list[np.ndarray]]:
    """Each replica's inputs: the r-th of `replicas` equal slices of every micro-batch (axis
    1), as PopTorch splits each step's batch over the replicas."""
    if replicas == 1:
        return [arrays]
    return [[np.ascontiguousarray(np.split(array, replicas, axis=1)[r]) for array in arrays] for r in range(replicas)]


def _describe(shape: tuple, dtype: Any) -> str:
    return f"{'x'.join(map(str, shape)) or 'scalar'} {np.dtype(dtype)}"


def _compile(module: Any, target: str, memory_fraction: float | None = None, replicas: int = 1, micro_batches: int = 1) -> Any:
    return api.compile_to_program(module, target, memory_fraction=memory_fraction, replicas=replicas, micro_batches=micro_batches)
