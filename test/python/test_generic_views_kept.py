"""A linalg.generic's operand view over the iteration space is kept for the array it was made
of (runtime/generic_body.py `_viewer`): the same array again reuses it and reads its values of
now, any other array (even of the same shape) gets its own."""

from __future__ import annotations

import numpy as np
from test_codelet import GENERIC_VIEWS, codelet, floats, per_tile

from ipu_mlir.runtime import generic_body


def expected(x: np.ndarray, bias: np.ndarray) -> np.ndarray:
    return per_tile(lambda a, b: ((a + b) * 3 - a[:, :1]).T, x, bias)


def test_views_follow_the_array_given(monkeypatch):
    made = []
    monkeypatch.setattr(generic_body, "as_strided", lambda *a, **k: made.append(1) or np.lib.stride_tricks.as_strided(*a, **k))
    kernel = codelet(GENERIC_VIEWS)
    x, other, bias = floats((4, 6)), floats((4, 6)), floats((6,))
    wide = floats((4, 12))[:, :, ::2]  # the same shape laid out apart
    for value in (x, other, x, wide, x):
        (got,) = kernel([value, bias])
        np.testing.assert_allclose(got, expected(value, bias), rtol=1e-6)
    x[...] = floats((4, 6))  # new values in the same array: the kept view reads them
    (got,) = kernel([x, bias])
    np.testing.assert_allclose(got, expected(x, bias), rtol=1e-6)
    calls = len(made)
    kernel([x, bias])
    assert len(made) == calls  # the same arrays again: no view made
