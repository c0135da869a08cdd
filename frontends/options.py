"""PopTorch's `Options`, the part of it that means something on the simulated chip.

    opts = Options().deviceIterations(4)
    opts.Training.gradientAccumulation(2)
    model = trainingModel(net, options=opts, optimizer=torch.optim.SGD(net.parameters(), lr=0.1))

Method names are PopTorch's (`poptorch.Options`, `opts.Training.*`), each returning the options
so that calls chain as they do there. `target` (a target name or .toml path) is ours.
"""

from __future__ import annotations

import enum
import os

import numpy as np

from ipu_mlir.frontends.mixed_precision import LossScaling, PrecisionOptions, training_loss_scaling
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["Options", "OutputMode", "PipelinedExecution", "ReductionType", "ShardedExecution"]


class ReductionType(enum.Enum):
    """How accumulated gradients are combined (PopTorch's `poptorch.ReductionType`)."""

    Mean = "mean"
    Sum = "sum"


class OutputMode(enum.Enum):
    """What a call returns of its micro-batches' outputs (PopTorch's `poptorch.OutputMode`):
    `All` of them, the `Final` one, their `Sum`, or `EveryN` (each N-th); `Default` is `All`
    for inference, `Final` for training."""

    Final = "final"
    EveryN = "every_n"
    All = "all"
    Sum = "sum"
    Default = "default"


class _TrainingOptions:
    def __init__(self, owner: Options) -> None:
        self._owner = owner
        self.gradient_accumulation = 1
        # PopTorch's default: "Mean (default): Reduce gradients by calculating the mean of them"
        # (poptorch/options.py, _TrainingOptions.accumulationAndReplicationReductionType).
        self.reduction = ReductionType.Mean
        self.loss_scale: float | None = None
        self.automatic_loss_scaling: dict | None = None

    def gradientAccumulation(self, count: int) -> _TrainingOptions:  # noqa: N802 (PopTorch's name)
        """Micro-batches whose gradients are combined before one optimizer step."""
        self.gradient_accumulation = _positive("gradientAccumulation", count)
        return self

    def accumulationAndReplicationReductionType(self, reduction: ReductionType) -> _TrainingOptions:  # noqa: N802
        if not isinstance(reduction, ReductionType):
            raise IpuError(f"accumulationAndReplicationReductionType takes ReductionType.Mean or ReductionType.Sum, got {reduction!r}")
        self.reduction = reduction
        return self

    def setLossScaling(self, scale: float) -> _TrainingOptions:  # noqa: N802 (PopTorch: the optimizer's loss_scaling)
        """Static loss scaling of an f16 / bf16 model (frontends/mixed_precision.py); with
        `setAutomaticLossScaling`, the initial scale."""
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not 0 < scale < float("inf"):
            raise IpuError(f"setLossScaling takes a positive finite number, got {scale!r}")
        self.loss_scale = float(scale)
        return self

    def setAutomaticLossScaling(self, enabled: bool, growth_interval: int = 2000) -> _TrainingOptions:  # noqa: N802 (PopTorch's)
        """Dynamic loss scaling as torch.amp.GradScaler: halve the scale and skip the step on an
        inf or NaN gradient, double it after `growth_interval` good steps."""
        if not isinstance(enabled, bool):
            raise IpuError(f"setAutomaticLossScaling takes True or False, got {enabled!r}")
        self.automatic_loss_scaling = {"growth_interval": _positive("growth_interval", growth_interval)} if enabled else None
        return self

    @property
    def loss_scaling(self) -> LossScaling | None:
        dynamic = self.automatic_loss_scaling
        return training_loss_scaling(self.loss_scale, dynamic is not None, **(dynamic or {}))


class _PrecisionOptions(PrecisionOptions):
    """`Options.Precision`: PopTorch's `_PrecisionOptions`, with the partials type of f16 products."""

    def __init__(self) -> None:
        super().__init__()
        self.partials_type: str | None = None  # None: the compiler's default (docs/precision.md)

    def setPartialsType(self, dtype) -> _PrecisionOptions:  # noqa: ANN001, N802 (PopTorch's name: a torch dtype)
        """The type f16 matmuls and convolutions keep their partial sums in: `torch.float16`
        (faster, rounded into f16 chunk by chunk) or `torch.float32` (ipu-partials-type)."""
        names = {"torch.float32": "f32", "torch.float16": "f16"}
        if str(dtype) not in names:
            raise IpuError(f"setPartialsType takes torch.float32 or torch.float16, got {dtype!r}")
        self.partials_type = names[str(dtype)]
        return self


class ShardedExecution:
    """PopTorch's `ShardedExecution`: the model's layers on the IPUs of the target (ipu-shard,
    by the `BeginBlock(ipu_id=...)` annotations or by memory balance), one IPU at a time."""

    pipelined = False


class PipelinedExecution(ShardedExecution):
    """PopTorch's `PipelinedExecution`: the sharded layers as pipeline stages, the call's
    micro-batches (`deviceIterations` x `gradientAccumulation`) flowing through them
    (ipu-pipeline). The stages are the IPUs ipu-shard placed layers on. In training, each
    step's `gradientAccumulation` micro-batches, at least 2 x IPUs - 1 (PopART's rule), flow
    forward and back before the step's one update."""

    pipelined = True


class Options:
    """What a `trainingModel` or `inferenceModel` runs: the device iterations and gradient
    accumulation of one call, the target, and the available memory proportion."""

    def __init__(self) -> None:
        self.device_iterations = 1
        self.target_name = "gc200"
        self.available_memory_proportion: dict[str, float] = {}
        self.random_seed: int | None = None  # None: torch.initial_seed()'s low 31 bits, at compilation
        self.Training = _TrainingOptions(self)  # noqa: N815 (PopTorch's attribute)
        self.Precision = _PrecisionOptions()  # noqa: N815 (PopTorch's attribute)
        self.execution_strategy: ShardedExecution = ShardedExecution()
        self.replication_factor = 1
        self.output_mode, self.output_return_period = OutputMode.Default, 1
        self.use_model = False  # PopTorch's useIpuModel (its default, hardware): the simulator either way
        self.executable_cache: str | None = ""  # enableExecutableCaching: "" the program cache's own directory, None off

    def outputMode(self, output_mode: OutputMode, output_return_period: int | None = None) -> Options:  # noqa: N802 (PopTorch's)
        """What each call returns of its micro-batches' outputs (`returned`); `EveryN` takes N."""
        if not isinstance(output_mode, OutputMode):
            raise IpuError(f"outputMode takes a poptorch.OutputMode, got {output_mode!r}")
        if output_mode is OutputMode.EveryN:
            self.output_return_period = _positive("outputMode(OutputMode.EveryN, output_return_period)", output_return_period)
        self.output_mode = output_mode
        return self

    def useIpuModel(self, use_model: bool) -> Options:  # noqa: N802 (PopTorch's name)
        """Accepted as PopTorch's: the IPU Model (True) or hardware (False); both run on the simulator here."""
        if not isinstance(use_model, bool):
            raise IpuError(f"useIpuModel takes True or False, got {use_model!r}")
        self.use_model = use_model
        return self

    def enableExecutableCaching(self, path: str | None) -> Options:  # noqa: N802 (PopTorch's name)
        """Compiled programs kept in `path` (frontends/cache.py's directory), None: no caching."""
        if path is not None and not isinstance(path, str | os.PathLike):
            raise IpuError(f"enableExecutableCaching takes a directory path or None, got {path!r}")
        self.executable_cache = None if path is None else os.fspath(path)
        return self

    def returned(self, outputs: np.ndarray, training: bool) -> np.ndarray:
        """Of one output's values for each micro-batch of a call (axis 0), what the call returns
        (PopTorch's output modes): all of them (a batch output's micro-batches concatenated,
        a scalar's stacked), the final one, their sum, or every N-th. A scalar's one value is a
        0-d array (numpy's indexing and sum give a numpy scalar, which is not turned into a tensor)."""
        mode = self.output_mode
        if mode is OutputMode.Default:
            mode = OutputMode.Final if training else OutputMode.All
        if mode is OutputMode.Final or len(outputs) == 1:  # one micro-batch: its outputs as they are (PopART's anchors)
            return np.asarray(outputs[-1])
        if mode is OutputMode.Sum:
            return np.asarray(outputs.sum(axis=0))
        if mode is OutputMode.EveryN:
            outputs = outputs[self.output_return_period - 1 :: self.output_return_period]
        return outputs.reshape(-1, *outputs.shape[2:]) if outputs.ndim > 1 else outputs

    def replicationFactor(self, count: int) -> Options:  # noqa: N802 (PopTorch's name)
        """Data-parallel replicas (ipu-replicate), each on its share of the target's IPUs and of
        each micro-batch; a power of two. In training, each replica runs the whole step (one IPU,
        or its IPUs when sharded or pipelined) and the gradients are all-reduced once per update."""
        self.replication_factor = _positive("replicationFactor", count)
        return self

    def setExecutionStrategy(self, strategy: ShardedExecution) -> Options:  # noqa: N802 (PopTorch's name)
        """`PipelinedExecution()` pipelines the sharded model over the call's micro-batches;
        `ShardedExecution()` (the default) runs its IPUs one after another."""
        if not isinstance(strategy, ShardedExecution):
            raise IpuError(f"setExecutionStrategy takes PipelinedExecution() or ShardedExecution(), got {strategy!r}")
        self.execution_strategy = strategy
        return self

    def deviceIterations(self, count: int) -> Options:  # noqa: N802 (PopTorch's name)
        """Steps (of `gradientAccumulation` micro-batches each) one call runs on the device."""
        self.device_iterations = _positive("deviceIterations", count)
        return self

    def setAvailableMemoryProportion(self, proportions: dict[str, float]) -> Options:  # noqa: N802
        """PopTorch's per-IPU share of tile memory the planner may use ({"IPU0": 0.3}): ipu-plan's
        `memory-fraction` (one chip: the smallest share given)."""
        for ipu_name, value in proportions.items():
            if not (isinstance(value, (int, float)) and 0 < value <= 1):
                raise IpuError(f"setAvailableMemoryProportion: {ipu_name} must be in (0, 1], got {value!r}")
        self.available_memory_proportion = dict(proportions)
        return self

    def randomSeed(self, seed: int) -> Options:  # noqa: N802 (PopTorch's name)
        """The seed of the random ops (dropout) of a training step on the device
        (frontends/random_ops.py): the same seed draws the same masks."""
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 1 << 31:
            raise IpuError(f"randomSeed takes an integer in [0, 2^31), got {seed!r}")
        self.random_seed = seed
        return self

    def target(self, name: str) -> Options:
        """The simulated chip: a built-in target name (gc200, gc2, tiny) or a .toml path."""
        self.target_name = name
        return self

    @property
    def memory_fraction(self) -> float | None:
        """ipu-plan's share of each tile (`setAvailableMemoryProportion`), None: the target's."""
        return min(self.available_memory_proportion.values(), default=None)

    @property
    def micro_batches_per_call(self) -> int:
        return self.device_iterations * self.Training.gradient_accumulation

    @property
    def pipeline_micro_batches(self) -> int:
        """ipu-pipeline's `micro-batches`: the call's micro-batches under `PipelinedExecution`,
        else 1 (no pipeline)."""
        return self.micro_batches_per_call if self.execution_strategy.pipelined else 1


def _positive(name: str, count: int) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise IpuError(f"{name} takes a positive integer, got {count!r}")
    return count
