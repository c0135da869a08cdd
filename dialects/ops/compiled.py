"""Kernels compiled with numba, for the loops numpy cannot express without temporaries or a
Python loop (depthwise taps, partial sums, f32 erf and powers). Each compiled kernel does the
same IEEE operations in the same order as the numpy code it replaces, with no fused
multiply-add (numba does not contract without fastmath), so the bytes do not change.

numba is imported, and a kernel compiled, the first time that kernel runs: a program that
reaches none never pays numba's import (0.4 s). The machine code is cached on disk (numba's
`cache=True`: __pycache__ beside the kernel's file, or ~/.cache/numba when that is read-only),
so a kernel's first compile (about 1.2 s CPU an element type) is paid once per install and a
cached one loads in about 0.2 s."""

from __future__ import annotations

import functools
from collections.abc import Callable


@functools.cache
def compiled(kernel: Callable, error_model: str = "python") -> Callable:
    """`kernel` (a plain Python function over arrays and numbers) compiled by numba's njit;
    `error_model="numpy"` for a kernel dividing floats as IEEE does (x / 0 is inf or NaN, where
    numba's default raises ZeroDivisionError)."""
    import numba  # here, not at the top: see the module's docstring

    return numba.njit(cache=True, error_model=error_model)(kernel)
