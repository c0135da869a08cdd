"""A vertex group's writes into its output views (runtime/steps.py, `_Assign`): item views
made once are reused only for results laid out as the first, and give plain assignment's bytes."""

from __future__ import annotations

import numpy as np

from ipu_mlir.runtime.steps import _Assign


def test_results_laid_out_alike_reuse_the_items_others_are_assigned_plainly():
    memory = np.zeros((6, 40), np.float32)
    view = memory[:, 4:12].reshape(2, 3, 8)  # rows of 8 contiguous elements: 32-byte items
    into = _Assign(view)
    rng = np.random.default_rng(0)
    results = [
        rng.standard_normal((2, 3, 8)).astype(np.float32),  # makes the items
        rng.standard_normal((2, 3, 8)).astype(np.float32),  # reuses them
        rng.standard_normal((2, 8, 3)).astype(np.float32).transpose(0, 2, 1),  # another layout
        np.broadcast_to(rng.standard_normal((1, 3, 8)).astype(np.float32), (2, 3, 8)),  # a broadcast
        rng.standard_normal((2, 3, 8)).astype(np.float32),  # the first layout again
        rng.standard_normal((1, 3, 8)).astype(np.float32),  # broadcast by numpy's rules
    ]
    for result in results:
        into(result)
        np.testing.assert_array_equal(view, np.broadcast_to(result, view.shape))
        assert not memory[:, :4].any() and not memory[:, 12:].any()  # nothing outside the view
    assert into.layout == ((2, 3, 8), results[4].strides, np.dtype(np.float32))
