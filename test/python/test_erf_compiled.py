"""f32 erf compiled (dialects/ops/erf.py `_erf_blocks`): op for op the numpy evaluation
in f64 (`_erf_narrow`, whose accuracy test_codelet checks against math.erf), so the same bytes."""

import numpy as np

from ipu_mlir.dialects.ops import erf
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
    want = erf._erf_narrow(x.astype(np.float64)).astype(np.float32)
    got = kernel(x)
    assert got.dtype == np.float32 and got.tobytes() == want.tobytes()
    strided = x.reshape(-1, 5)[:, ::2]  # a view: the same values, laid out apart
    assert kernel(strided).tobytes() == want.reshape(-1, 5)[:, ::2].tobytes()


def test_compiled_f32_erf_far_elements_gathered_per_block_keep_their_bytes():
    """The elements at |x| >= 2 are gathered in the blocks (512 elements) holding any: blocks
    with none, one, all, or a few of them at the edges, far NaNs and infinities, a last
    partial block."""
    size = 512 * 8 + 77
    near, far = RNG.uniform(-1.9, 1.9, size), RNG.uniform(2.0, 5.0, size) * RNG.choice([-1, 1], size)
    x = near.copy()
    x[512:1024] = far[512:1024]  # a whole block far
    x[1024 + RNG.choice(512, 40, replace=False)] = far[:40]  # a few anywhere in a block
    x[[1535, 1536, 2047, 2048, -1, -77]] = far[-6:]  # at the blocks' edges and in the partial one
    x[2048:2560:3] = far[2048:2560:3]  # every third
    x[[2600, 2601, 2602]] = [np.inf, -np.inf, np.nan]
    x[3600] = far[3600]  # the only one in its block
    x = x.astype(np.float32)
    want = erf._erf_narrow(x.astype(np.float64)).astype(np.float32)
    assert erf.erf_rounded(x).tobytes() == want.tobytes()
    assert erf.erf_rounded(x[:5]).tobytes() == want[:5].tobytes()  # one partial block
