"""PopTorch's `trainingModel` on the simulated chip (`frontends.torch.trainingModel` makes one).

    opts = Options().deviceIterations(2)
    model = ipu_torch.trainingModel(net, options=opts, optimizer=torch.optim.SGD(net.parameters(), lr=0.1))
    loss = model(x, labels)        # 2 micro-batches: x's first axis is 2 x the micro-batch
    model.copyWeightsToHost()      # parameters and buffers back into `net`

As in PopTorch, the model's forward returns the loss, or `(output, loss)`; the first call
compiles (frontends/joint.py builds the joint step) and writes the parameters, buffers and
optimizer state into device variables once; each call then runs `deviceIterations x
gradientAccumulation` micro-batches on the device and returns what forward returns for the
last of them (PopTorch's default output mode for training, `OutputMode.Final`). A learning rate
changed between calls (by a scheduler, or `setOptimizer`) is written to its device variable
before the next call: no recompilation.

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from ipu_mlir.frontends import api
from ipu_mlir.frontends.joint import JointStep, build_step
from ipu_mlir.frontends.optimizers import rule_of
from ipu_mlir.frontends.options import Options, ReductionType
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["TrainingModel", "micro_batches"]


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
        self.optimizer = optimizer
        self.step: JointStep | None = None  # built by the first call
        self.device: Simulator | None = None  # holds the device variables between calls
        self.timings: dict[str, float] = {}  # seconds: export, compile and load (first call), run (last call)
        self._lrs: list[float] = []

    def __call__(self, *inputs: Any) -> Any:
        import torch

        arrays = micro_batches(inputs, self.options.micro_batches_per_call)
        if self.device is None:
            self._compile(tuple(torch.from_numpy(array[0]) for array in arrays))
        self._check_batch(arrays)
        self._write_learning_rates()
        start = time.perf_counter()
        results = self.device.run(arrays, iterations=self.options.micro_batches_per_call)
        self.timings["run"] = time.perf_counter() - start
        last = [torch.from_numpy(np.asarray(result[-1], order="C")) for result in results]  # a 0-d loss stays 0-d
        return tuple(last) if self.step.output_is_tuple else last[0]

    def setOptimizer(self, optimizer: Any) -> None:  # noqa: N802 (PopTorch's name)
        """A new optimizer of the same kind and constants: its learning rates take effect at the
        next call. Other changes need a new trainingModel (they are constants of the program)."""
        rule = rule_of(optimizer)
        if rule != self.rule:
            raise IpuError("setOptimizer: only the learning rate may change after compilation (the others are compiled in)")
        self.optimizer = optimizer

    def copyWeightsToHost(self) -> None:  # noqa: N802 (PopTorch's name)
        """The device's parameters and buffers (BatchNorm running statistics) into the host model."""
        import torch

        if self.device is None:
            return
        tensors = {f"param:{name}": p for name, p in self.model.named_parameters()}
        tensors.update({f"buffer:{name}": b for name, b in self.model.named_buffers()})
        with torch.no_grad():
            for variable in self.step.variables:
                if variable.updated and variable.name in tensors:
                    tensors[variable.name].copy_(torch.from_numpy(self.device.read_variable(variable.name)))

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
            self.model,
            self.optimizer,
            self.rule,
            micro_batch,
            training.gradient_accumulation,
            training.reduction is ReductionType.Mean,
            self._importer,
            self.random_seed,
        )
        middle = time.perf_counter()
        target, fraction = self.options.target_name, self.options.memory_fraction
        try:
            program = (self._compile_program or _compile)(self.step.module, target, memory_fraction=fraction)
        except IpuError as error:  # the planner's refusal names its option: say which of ours set it
            if fraction is not None and "memory-fraction)" in error.message:
                error.message = error.message.replace("memory-fraction)", f"memory-fraction: setAvailableMemoryProportion {fraction!r})")
            raise
        self.device = api.load_simulator(program, target, verified=True)  # the default pipeline ends in ipu-verify
        self.timings.update(export=middle - start, compile_and_load=time.perf_counter() - middle)
        for variable in self.step.variables:
            self.device.write_variable(variable.name, variable.value)
        self._lrs = [float(group["lr"]) for group in self.optimizer.param_groups]

    def _check_batch(self, arrays: list[np.ndarray]) -> None:
        if len(arrays) != len(self.step.batch):
            raise IpuError(f"the model was compiled for {len(self.step.batch)} inputs, got {len(arrays)}")
        per_call = self.options.micro_batches_per_call
        for index, (array, (shape, dtype)) in enumerate(zip(arrays, self.step.batch)):
            if array.shape[1:] != shape or array.dtype != dtype:
                expected = _describe((shape[0] * per_call, *shape[1:]), dtype) if shape else f"{per_call} {dtype}"
                got = _describe((array.shape[0] * array.shape[1], *array.shape[2:]), array.dtype)
                raise IpuError(f"input #{index}: the model was compiled for {expected}, got {got}")

    def _write_learning_rates(self) -> None:
        lrs = [float(group["lr"]) for group in self.optimizer.param_groups]
        if len(lrs) != len(self._lrs) or rule_of(self.optimizer) != self.rule:
            raise IpuError(
                "the optimizer's param groups or hyper-parameters other than lr changed after compilation (make a new trainingModel)"
            )
        for index, lr in enumerate(lrs):
            if lr != self._lrs[index]:
                self.device.write_variable("hyper:lr" if index == 0 else f"hyper:lr:{index}", np.array(lr, np.float32))
        self._lrs = lrs


def micro_batches(inputs: tuple, count: int) -> list[np.ndarray]:
    """Each input (a tensor whose first axis holds `count` micro-batches) as an array of shape
    (count, micro-batch, ...)."""
    arrays = []
    for index, value in enumerate(inputs):
        if not type(value).__module__.startswith("torch"):
            raise IpuError(f"input #{index}: expected a torch tensor, got {type(value).__name__}")
        array = value.detach().cpu().numpy()
        if array.ndim == 0 or array.shape[0] % count:
            raise IpuError(
                f"input #{index}: its first axis ({_describe(array.shape, array.dtype)}) must hold {count} micro-batches"
                " (deviceIterations x gradientAccumulation)"
            )
        arrays.append(np.ascontiguousarray(array.reshape(count, array.shape[0] // count, *array.shape[1:])))
    return arrays


def _describe(shape: tuple, dtype: Any) -> str:
    return f"{'x'.join(map(str, shape)) or 'scalar'} {np.dtype(dtype)}"


def _compile(module: Any, target: str, memory_fraction: float | None = None) -> Any:
    return api.compile_to_program(module, target, memory_fraction=memory_fraction)
