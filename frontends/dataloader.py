"""PopTorch's `poptorch.DataLoader`: torch's DataLoader whose batches hold one call's micro-batches.

    opts = Options().deviceIterations(4)
    opts.Training.gradientAccumulation(2)
    loader = DataLoader(opts, dataset, batch_size=8, shuffle=True)   # batches of 8 x 4 x 2 = 64
    for x, labels in loader:
        loss = model(x, labels)

As PopTorch's (poptorch `python/__init__.py`, `DataLoader.__init__`), each batch is the
*combined batch size*, `batch_size x deviceIterations x replicationFactor x
gradientAccumulation`, drawn by torch's own `DataLoader` (so shuffling, workers and
`collate_fn` are torch's), and `drop_last` defaults to True: a call takes only whole
combined batches.

torch is imported at the top: this module is the PopTorch face's and needs it.
"""

from __future__ import annotations

import enum
from typing import Any

import torch

from ipu_mlir.frontends.options import Options
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["DataLoader", "DataLoaderMode"]


class DataLoaderMode(enum.Enum):
    """PopTorch's `poptorch.DataLoaderMode`. `Async` loads in a worker process there; here it
    loads as `Sync` does, the same batches in the same order."""

    Sync = 0
    Async = 1
    AsyncRebatched = 2


class DataLoader(torch.utils.data.DataLoader):
    """torch's DataLoader of one call's micro-batches at a time (PopTorch's `poptorch.DataLoader`)."""

    def __init__(
        self,
        options: Options,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        num_workers: int = 0,
        drop_last: bool = True,
        persistent_workers: bool | None = None,
        auto_distributed_partitioning: bool = True,
        mode: DataLoaderMode = DataLoaderMode.Sync,
        async_options: dict | None = None,
        rebatched_worker_size: int | None = None,
        batch_sampler: Any = None,
        **kwargs: Any,
    ) -> None:
        if not isinstance(options, Options):
            raise IpuError(f"DataLoader: its first argument is the Options the model runs with, got {type(options).__name__}")
        if mode not in (DataLoaderMode.Sync, DataLoaderMode.Async):
            raise IpuError(f"DataLoader: mode {mode!r} is not supported: give DataLoaderMode.Sync or Async")
        if batch_sampler is not None or rebatched_worker_size is not None:
            raise IpuError("DataLoader: batch_sampler and rebatched_worker_size are not supported: give batch_size")
        if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
            raise IpuError(f"DataLoader: batch_size takes a positive integer or None, got {batch_size!r}")
        self._options = options
        self._combined_batch_size = None if batch_size is None else batch_size * self.batches_per_call(options)
        if persistent_workers is None:
            persistent_workers = num_workers > 0
        super().__init__(
            dataset,
            batch_size=self._combined_batch_size,
            shuffle=bool(shuffle),
            num_workers=num_workers,
            drop_last=drop_last,
            persistent_workers=persistent_workers,
            **kwargs,
        )

    @staticmethod
    def batches_per_call(options: Options) -> int:
        """Micro-batches one call takes: deviceIterations x replicationFactor x gradientAccumulation."""
        return options.device_iterations * options.replication_factor * options.Training.gradient_accumulation

    @property
    def combinedBatchSize(self) -> int | None:  # noqa: N802 (PopTorch's name)
        """Elements of the dataset one call of the model consumes."""
        return self._combined_batch_size

    @property
    def options(self) -> Options:
        return self._options

    def terminate(self) -> None:
        """PopTorch's: stops an `Async` loader's worker; there is none here."""
