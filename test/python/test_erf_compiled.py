"""f32 erf compiled (dialects/ops/semantics.py `_erf_blocks`): op for op the numpy evaluation
in f64 (`_erf_narrow`, whose accuracy test_codelet checks against math.erf), so the same bytes."""

import numpy as np

from ipu_mlir.dialects.ops import semantics
from ipu_mlir.dialects.ops.semantics import elementwise_kernel

RNG = np.random.default_rng(11)


def test_compiled_f32_erf_is_the_numpy_evaluation_byte_for_byte():
    x = np.concatenate(
        [
            np.linspace(-6, 6, 1_000_003),  # both polynomials and the clamp, blocks and a partial one
            RNG.standard_normal(500_000) * 10 ** RNG.uniform(-30, 2, 500_000),
            [0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 2.0, -2.0, 4.0, -4.0, 1e-45, -1e-45],
        ]
    ).astype(np.float32)
    kernel = elementwise_kernel("math.erf", [np.dtype(np.float32)], np.dtype(np.float32), None)
    want = semantics._erf_narrow(x.astype(np.float64)).astype(np.float32)
    got = kernel(x)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    strided = x.reshape(-1, 5)[:, ::2]  # a view: the same values, laid out apart
    assert kernel(strided).tobytes() == want.reshape(-1, 5)[:, ::2].tobytes()
