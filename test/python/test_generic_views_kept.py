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


def test_views_of_groups_sharing_a_plan_are_all_kept(monkeypatch):
    """Codelets of equal bodies share one compiled plan (runtime/planner.py): each group's
    arrays keep their views while the groups take turns, and arrays new on every call do not
    pile up past KEPT_VIEWS."""
    made = []
    monkeypatch.setattr(generic_body, "as_strided", lambda *a, **k: made.append(1) or np.lib.stride_tricks.as_strided(*a, **k))
    kernel = codelet(GENERIC_VIEWS)
    groups, bias = [floats((4, 6)) for _ in range(3)], floats((6,))
    for x in groups:
        kernel([x, bias])
    calls = len(made)
    for x in groups * 2:
        (got,) = kernel([x, bias])
        np.testing.assert_allclose(got, expected(x, bias), rtol=1e-6)
    assert len(made) == calls  # every group's views kept
    view = generic_body._viewer([[(1, 1)], [(2, 1)]], (0, 0), (4, 6), 1)  # (1, 4, 6) as itself
    (kept,) = [cell.cell_contents for cell in view.__closure__ if isinstance(cell.cell_contents, dict)]
    for _ in range(3 * generic_body.KEPT_VIEWS):
        fresh = np.arange(24, dtype=np.float32).reshape(1, 4, 6)
        np.testing.assert_array_equal(view(fresh), fresh)
    assert 0 < len(kept) <= generic_body.KEPT_VIEWS
