"""The oracle: whether a simulated output matches its reference (upstream MLIR's
ExecutionEngine, PyTorch, numpy). Every checker in the project compares through `compare`:
`ipu-run --check` and `--model`, the differential tests, the zoo tests and the fuzzer.

Non-finite values compare by position and kind: NaN where the reference has NaN, an infinity
of the same sign where it has one. Finite values compare by tolerance, relative to the
output's largest finite reference magnitude (so that values near zero do not fail alone), over
the places where both are finite; an infinity in the reference hides no error elsewhere.
Integers and booleans match exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import ml_dtypes
import numpy as np

from ipu_mlir.target.element_types import FP8_DTYPES, is_float

# Relative tolerance by element type; integers and booleans must match exactly. f32's is the
# one ipu-run --check has always used; f16's and f64's follow their precision (assumption).
# bf16's is 8 of its steps at 1 (eps 2^-7), FP8's one step of the format at the output's largest
# value (eps 2^-3 for E4M3, 2^-2 for E5M2): both sides round every bf16 and FP8 op, so only sums
# taken in another order (tiles, pairs) differ, f32 ones by a rounding at most, sums in bf16
# itself by a few steps (assumption: 8, for reductions of up to a few thousand terms).
DEFAULT_RTOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-10, "bfloat16": 2**-4}
DEFAULT_RTOL |= {str(dtype): float(ml_dtypes.finfo(dtype).eps) for dtype in FP8_DTYPES}


@dataclass(frozen=True)
class Comparison:
    """One output against its reference. `rtol` 0 means exact."""

    ok: bool
    rtol: float
    max_abs: float = 0.0
    max_rel: float = 0.0
    # Elements whose non-finite value (on either side) is not matched by the same on the other.
    nonfinite_mismatches: int = 0
    # Exact comparisons: elements that differ.
    differing: int = 0
    # The first mismatching element, non-finite or (for exact comparisons) differing.
    first: tuple[int, ...] | None = None
    first_values: tuple[object, object] | None = None
    # A shape or element type that differs: nothing else was compared.
    mismatch: str | None = None

    def describe(self) -> str:
        """One line: the errors, the tolerance, the non-finite mismatches, and ok or FAILED."""
        verdict = "ok" if self.ok else "FAILED"
        if self.mismatch:
            return f"{verdict}: {self.mismatch}"
        tolerance = f"rtol {self.rtol:g}" if self.rtol else "exact"
        text = f"max abs error {self.max_abs:.3g}, max rel error {self.max_rel:.3g} ({tolerance})"
        if self.differing:
            text += f", {self.differing} elements differ"
        if self.nonfinite_mismatches:
            text += f", {self.nonfinite_mismatches} non-finite mismatches"
        if self.first is not None and self.first_values is not None:
            got, want = self.first_values
            text += f", first at {self.first}: simulated {got}, reference {want}"
        return f"{text}: {verdict}"


def compare(got: np.ndarray, want: np.ndarray, rtol: float | None = None, min_scale: float = 0.0) -> Comparison:
    """`got` against `want`; `rtol` defaults by element type (`DEFAULT_RTOL`), and the finite
    error may be up to `rtol` times the largest finite |want|, or `min_scale` if larger."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return Comparison(False, 0.0, mismatch=f"simulated {got.shape} {got.dtype}, reference {want.shape} {want.dtype}")
    floating = got.dtype.kind in "fc" or is_float(got.dtype)
    if rtol is None:
        rtol = DEFAULT_RTOL.get(str(got.dtype), 0.0) if floating else 0.0
    g, w = np.atleast_1d(got), np.atleast_1d(want)
    if not floating:
        differ = g != w
        count = int(np.count_nonzero(differ))
        wide_g, wide_w = g.astype(np.float64), w.astype(np.float64)
        max_abs = float(np.abs(wide_g - wide_w).max(initial=0.0))
        scale = float(np.abs(wide_w).max(initial=0.0))
        return Comparison(count == 0, 0.0, max_abs, max_abs / scale if scale else max_abs, differing=count, **_first(differ, got, want))
    g, w = g.astype(np.float64), w.astype(np.float64)
    finite_g, finite_w = np.isfinite(g), np.isfinite(w)
    both_finite = finite_g & finite_w
    # Same kind: both NaN, or equal infinities (inf == inf holds only with the same sign).
    same_nonfinite = (np.isnan(g) & np.isnan(w)) | (np.isinf(g) & (g == w))
    nonfinite_bad = ~both_finite & ~same_nonfinite
    error = np.abs(np.where(both_finite, g, 0.0) - np.where(both_finite, w, 0.0))
    scale = float(np.abs(w[finite_w]).max(initial=0.0))
    max_abs = float(error.max(initial=0.0))
    bound = rtol * max(scale, min_scale, np.finfo(np.float64).tiny)
    count = int(np.count_nonzero(nonfinite_bad))
    ok = count == 0 and (max_abs <= bound if rtol else max_abs == 0.0)
    return Comparison(
        ok, rtol, max_abs, max_abs / scale if scale else max_abs, nonfinite_mismatches=count, **_first(nonfinite_bad, got, want)
    )


def compare_all(outputs: list[np.ndarray], expected: list) -> tuple[list[str], bool]:
    """Each output against its reference: one line per output (`check output <i>: ...`), and
    whether any failed (including a different number of outputs)."""
    lines = []
    failed = False
    for index, (got, want) in enumerate(zip(outputs, expected)):
        comparison = compare(got, np.asarray(want))
        lines.append(f"check output {index}: {comparison.describe()}")
        failed |= not comparison.ok
    if len(outputs) != len(expected):
        lines.append(f"check: FAILED: {len(outputs)} simulated outputs, {len(expected)} reference outputs")
        failed = True
    return lines, failed


def _first(bad: np.ndarray, got: np.ndarray, want: np.ndarray) -> dict:
    if not bad.any():
        return {}
    index = np.unravel_index(int(np.argmax(bad)), bad.shape)
    place = tuple(int(i) for i in index)
    at = place if got.ndim else ()
    return {"first": place, "first_values": (got[at].item(), want[at].item())}
