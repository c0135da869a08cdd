"""PopTorch's names for ipu-mlir's PyTorch front end: `import ipu_mlir.poptorch as poptorch`.

A thin face (docs/poptorch.md): each name is what `ipu_mlir.frontends` already has, under the
name PopTorch (graphcore/poptorch, `python/__init__.py`) gives it; nothing here computes.
"""

from ipu_mlir.frontends.dataloader import DataLoader, DataLoaderMode
from ipu_mlir.frontends.joint_loss import identity_loss
from ipu_mlir.frontends.options import Options, OutputMode, PipelinedExecution, ReductionType, ShardedExecution
from ipu_mlir.frontends.torch import BeginBlock, inferenceModel, recomputationCheckpoint, trainingModel
from ipu_mlir.poptorch import optim

__all__ = [
    "BeginBlock",
    "DataLoader",
    "DataLoaderMode",
    "Options",
    "OutputMode",
    "PipelinedExecution",
    "ReductionType",
    "ShardedExecution",
    "identity_loss",
    "inferenceModel",
    "optim",
    "recomputationCheckpoint",
    "trainingModel",
]
