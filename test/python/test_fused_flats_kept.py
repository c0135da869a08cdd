"""A compiled body's flat views are kept per array (runtime/fused.py `Fused._flat`): the same
arrays again, as a simulator's later runs pass them, make none; any other array, even of the
same shape and strides, gets its own and its own values; an array's new values are read."""

from __future__ import annotations

import numpy as np
import pytest
from test_codelet import codelet
from test_codelet_inplace import same_bytes
from test_fused import BODIES, body_codelet, op_by_op, spread

from ipu_mlir.runtime import fused as fused_module

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")  # NaN and inf on purpose


@pytest.fixture
def made(monkeypatch):
    """The flat views made (as_strided calls of runtime/fused.py)."""
    calls = []
    original = fused_module.as_strided
    monkeypatch.setattr(fused_module, "as_strided", lambda *a, **k: calls.append(1) or original(*a, **k))
    return calls


def inputs(tiles: int = 5) -> list[np.ndarray]:
    return [spread((tiles, 4, 6), np.float32), spread((tiles, 4), np.float32), spread((tiles, 4, 6), np.float32)]


def test_other_arrays_of_one_layout_read_their_own_values(made, monkeypatch):
    text = body_codelet(BODIES["constants either side"], "f32")
    kernel, numpys = codelet(text), op_by_op(text, monkeypatch)
    first, second = inputs(), inputs()
    wide = [np.ascontiguousarray(np.repeat(x, 2, axis=-1))[..., ::2] if x.ndim == 3 else x for x in inputs()]  # strided
    for arrays in (first, second, first, wide, second):
        (want,) = numpys(arrays)
        out = np.full(want.shape, 7, np.float32)
        assert kernel.into(arrays, out)
        assert same_bytes(out, want)
    first[0][...] = spread(first[0].shape, np.float32)  # new values in a kept array: read
    (want,) = numpys(first)
    out = np.empty_like(want)
    assert kernel.into(first, out)
    assert same_bytes(out, want)


def test_the_same_arrays_again_make_no_view(made, monkeypatch):
    """A writer's call (steps.VertexGroup.prepare makes one per group) on its fixed views:
    flat views made on the first call only; a second group's arrays keep theirs too."""
    text = body_codelet(BODIES["residual"], "f32")
    kernel, numpys = codelet(text), op_by_op(text, monkeypatch)
    groups = [(inputs(), np.empty((5, 4, 8), np.float32)[:, :, 1:7]) for _ in range(2)]  # outputs: views of tile rows
    writers = [kernel.writer(arrays, out) for arrays, out in groups]
    for write in writers:
        assert write()
    count = len(made)
    assert count > 0  # the compiled pass ran
    for _ in range(3):
        for write, (arrays, out) in zip(writers, groups):
            out[...] = 0
            assert write()
            assert same_bytes(out, numpys(arrays)[0])
    assert len(made) == count


def test_arrays_new_each_call_do_not_pile_up(made):
    """Views new on each call are kept up to KEPT_FLATS; arrays owning their data (a call's
    new result) not at all: their memory goes with them."""
    kernel = codelet(body_codelet(BODIES["residual"], "f32"))
    for _ in range(3 * fused_module.KEPT_FLATS):
        (result,) = kernel(inputs())
    (fused,) = {id(f): f for f in _fused_of(kernel)}.values()
    assert 0 < len(fused.flats) <= fused_module.KEPT_FLATS
    assert all(array.base is not None and array.base is not result.base for array, _ in fused.flats.values())


def _fused_of(kernel) -> list:
    """The Fused objects a codelet's steps hold (in their closures)."""
    found, seen, todo = [], set(), list(kernel._steps)
    while todo:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, fused_module.Fused):
            found.append(item)
        for cell in getattr(item, "__closure__", None) or ():
            try:
                todo.append(cell.cell_contents)
            except ValueError:  # an empty cell
                pass
    return found
