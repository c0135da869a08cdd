"""numpy's BLAS on one thread while the simulator computes.

A vertex group is many small per-tile products (a tile holds at most a few hundred KiB), and
OpenBLAS hands each product over some size to a second thread. On a loaded 2-core machine that
thread waits for a core at every product: VGG-16's first run took 83 s against 3 s on one
thread (docs/ipu-run.md). Results are the same bytes either way (OpenBLAS splits a product's
rows and columns between threads, never its sums). The limit holds only inside the simulator's
calls, so a caller's own numpy keeps its threads (threadpoolctl, the library scikit-learn uses
for this; entering the limit costs about 12 us).
"""

from __future__ import annotations

import contextlib
import functools

from threadpoolctl import ThreadpoolController


@functools.cache
def _controller() -> ThreadpoolController:
    return ThreadpoolController()  # finds the loaded BLAS libraries once (about 0.3 ms)


def one_blas_thread() -> contextlib.AbstractContextManager:
    return _controller().limit(limits=1, user_api="blas")
