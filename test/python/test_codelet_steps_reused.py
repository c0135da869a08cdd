"""Values a codelet's steps make once and give again (runtime/codelet.py `_fill`: the broadcast
of the last value filled with; runtime/generic_body.py `_full`: a body value already spread
over the loops, viewed, not broadcast): a new fill value is broadcast anew, and a reduction's
view of an input stays read-only, so combining its init never writes into the caller's array."""

from __future__ import annotations

import numpy as np
from test_codelet import codelet, floats, generic

SUM_BODY = "  ^bb0(%a: f32, %o: f32):\n    %0 = arith.addf %a, %o : f32\n    linalg.yield %0 : f32"


def sum_rows(n: int, init: str) -> str:
    return generic(
        ["(d0, d1) -> (d0, d1)", "(d0, d1) -> (d0)"],
        ["parallel", "reduction"],
        [("%x", f"tensor<4x{n}xf32>")],
        [(init, "tensor<4xf32>")],
        SUM_BODY,
        "tensor<4xf32>",
    )


SUM_FROM_FILL = f"""func.func @f(%x: tensor<4x6xf32>, %s: f32) -> tensor<4xf32> {{
  %z = tensor.empty() : tensor<4xf32>
  %f = linalg.fill ins(%s : f32) outs(%z : tensor<4xf32>) -> tensor<4xf32>
  %q = {sum_rows(6, "%f")}
  return %q : tensor<4xf32>
}}"""

# a sum over a loop of one element: the reduction is a view of the input itself
SUM_OF_ONE = f"""func.func @f(%x: tensor<4x1xf32>, %i: tensor<4xf32>) -> tensor<4xf32> {{
  %q = {sum_rows(1, "%i")}
  return %q : tensor<4xf32>
}}"""


def test_a_fill_of_a_new_value_is_broadcast_anew():
    kernel = codelet(SUM_FROM_FILL)
    x = floats((4, 6))
    for s in (1.5, -2.0, 1.5, 0.0):
        scalar = np.full((3,), s, np.float32)  # a new array each call, as arguments are
        (got,) = kernel([x, scalar])
        np.testing.assert_allclose(got, x.sum(axis=-1) + s, rtol=1e-5, atol=1e-5)


def test_a_reduction_over_one_element_does_not_write_its_input():
    kernel = codelet(SUM_OF_ONE)
    x, init = floats((4, 1)), floats((4,))
    before = x.copy()
    for _ in range(2):
        (got,) = kernel([x, init])
        assert got.tobytes() == (x[..., 0] + init).tobytes()
        assert x.tobytes() == before.tobytes()
