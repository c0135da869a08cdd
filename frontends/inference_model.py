"""PopTorch's `inferenceModel` on the simulator (`frontends.torch.inferenceModel` makes one).

    model = ipu_torch.inferenceModel(net.eval(), ipu_torch.Options().deviceIterations(2))
    y = model(x)                   # x's first axis holds 2 micro-batches; their outputs concatenated

The model is compiled for one micro-batch by frontends.torch's `compile` (passed in: that
module imports this one) and follows a trainingModel of the same model as PopTorch's does.

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from unittest import mock

import numpy as np

from ipu_mlir.frontends import api, cache
from ipu_mlir.frontends.inputs import Signature
from ipu_mlir.frontends.mixed_precision import to_numpy, to_torch
from ipu_mlir.frontends.options import Options
from ipu_mlir.frontends.training import micro_batches, trainer_of
from ipu_mlir.target.diagnostics import IpuError

if TYPE_CHECKING:  # frontends.torch imports this module
    from ipu_mlir.frontends.torch import CompiledModule

__all__ = ["InferenceModel", "numpy_value", "torch_value"]


class InferenceModel:
    """`inferenceModel`'s result: the model compiled for one micro-batch by `compile`; a call
    runs `deviceIterations` of them and returns their outputs as `Options.outputMode` says
    (PopTorch's default for inference, `OutputMode.All`: every output, concatenated along the
    first axis). The weights are constants of the program: when a trainingModel of the same
    model has trained since (PopTorch copies the new weights to the device), the next call
    copies them to the host and compiles again."""

    def __init__(self, model: Any, options: Options, compile_model: Callable[..., Any]) -> None:
        self.model, self.options = model.eval(), options
        self._compile_model = compile_model  # frontends.torch's `compile` (it imports this module)
        self.compiled: CompiledModule | None = None
        self._weights_version: int | None = None  # the trainer's host_weights_version compiled in
        self._attached = True

    def compile(self, *inputs: Any, **kwargs: Any) -> None:
        """PopTorch's `compile`: compiles and loads for inputs like these (a call's), running nothing."""
        self._follow_trainer()
        if self.compiled is not None:
            return
        pipelined, replicas = self.options.pipeline_micro_batches, self.options.replication_factor
        # one program a micro-batch (each the replicas'), or one over the call's micro-batches (pipelined)
        inputs, kwargs = self._micro_batch(inputs, kwargs, 0, 1 if pipelined > 1 else self.options.device_iterations)
        self.model.eval()  # a trainingModel of the same model may have set train mode since
        cache_directory = self.options.executable_cache
        # Options.enableExecutableCaching(path): the program cache in `path`, even where IPU_MLIR_NO_CACHE is set
        environment = {cache.DIR_ENV: cache_directory, cache.OFF_ENV: ""} if cache_directory else {}
        with mock.patch.dict(os.environ, environment):
            self.compiled = self._compile_model(self.model, *inputs, target=self.options.target_name, micro_batches=max(pipelined, 1),
                                    replicas=replicas, partials_type=self.options.Precision.partials_type,
                                    use_cache=cache_directory is not None, example_kwargs=kwargs)  # fmt: skip
        self._attached = True

    def _micro_batch(self, inputs: tuple, kwargs: dict, index: int, count: int) -> tuple[tuple, dict]:
        """The arguments of micro-batch `index` of `count` in a call's: each tensor's slice of its
        first axis (f64 ones in f32, as PopTorch's), the Python values as they are."""
        signature, tensors = Signature.of(self.model, inputs, kwargs)
        return signature.bind([array[index] for array in micro_batches(tensors, count)])

    def _follow_trainer(self) -> None:
        """As PopTorch's inference model of a trained model: the trainer's weights to the host
        when the device moved them, and a program compiled with them."""
        trainer = trainer_of(self.model)
        if trainer is None:
            return
        trainer.copyWeightsToHostIfNeeded()
        if trainer.host_weights_version != self._weights_version:
            self.compiled, self._weights_version = None, trainer.host_weights_version

    def __call__(self, *inputs: Any, **kwargs: Any) -> Any:
        self.compile(*inputs, **kwargs)
        if not self._attached:
            self.attachToDevice()
        from torch.utils import _pytree as pytree

        if self.options.pipeline_micro_batches > 1:  # PipelinedExecution: one program over the call's micro-batches
            args, kwargs = self._micro_batch(inputs, kwargs, 0, 1)  # numpy arrays: torch tensors back, as below
            return pytree.tree_map(torch_value, self.compiled(*args, **kwargs))

        iterations = self.options.device_iterations
        runs = []
        for index in range(iterations):
            args, named = self._micro_batch(inputs, kwargs, index, iterations)
            runs.append(self.compiled(*args, **named))
        flat = [pytree.tree_flatten(run) for run in runs]  # each leaf of the forward's output structure
        outputs = [  # each leaf's values over the iterations, as the output mode returns them
            torch_value(self.options.returned(np.stack([numpy_value(value) for value in values]), training=False))
            for values in zip(*(leaves for leaves, _ in flat))
        ]
        return pytree.tree_unflatten(outputs, flat[0][1])

    def isAttachedToDevice(self) -> bool:  # noqa: N802 (PopTorch's name)
        return self.compiled is not None and self._attached

    def detachFromDevice(self) -> None:  # noqa: N802 (PopTorch's name)
        """PopTorch's: the device released until attachToDevice() or the next call. The weights
        are the program's constants: nothing to copy back."""
        if self.compiled is None:
            raise IpuError("detachFromDevice: the model has not been compiled or has been destroyed")
        if not self._attached:
            raise IpuError("detachFromDevice: the device is not attached")
        self.compiled.simulator, self._attached = None, False

    def attachToDevice(self) -> None:  # noqa: N802 (PopTorch's name)
        if self.compiled is None:
            raise IpuError("attachToDevice: the model has not been compiled or has been destroyed")
        if self._attached:
            raise IpuError("attachToDevice: the device is already attached")
        self.compiled.simulator = api.load_simulator(self.compiled.program, self.options.target_name, verified=True)
        self._attached = True

    def copyWeightsToDevice(self) -> None:  # noqa: N802 (PopTorch's name)
        """The host model's weights to the device: here, the next call compiles them in."""
        self.compiled = None

    def destroy(self) -> None:
        """PopTorch's: the program and the device released; a later call compiles again."""
        self.compiled = None


def numpy_value(value: Any) -> np.ndarray:
    """A numpy array as it is, a torch tensor as one (bf16 and FP8 through their bits)."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.startswith("torch"):
        return to_numpy(value)
    raise IpuError(f"expected a numpy array or a torch tensor, got {type(value).__name__}")


def torch_value(value: Any) -> Any:
    """A numpy array as a torch tensor (ml_dtypes' bf16 and FP8 as torch's), anything else as it is."""
    return to_torch(value) if isinstance(value, np.ndarray) else value
