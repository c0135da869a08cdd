"""The oracle (runtime/oracle.py): non-finite values by position and kind, finite ones by
tolerance, integers exactly; and ipu-run --check printing its verdict."""

from __future__ import annotations

import numpy as np
import pytest

from ipu_mlir.runtime.oracle import compare, compare_all
from ipu_mlir.tools import ipu_run

NAN, INF = np.nan, np.inf


def _f32(*values: float) -> np.ndarray:
    return np.array(values, dtype=np.float32)


def test_nan_where_the_reference_has_nan_is_ok() -> None:
    result = compare(_f32(1.0, NAN, 3.0), _f32(1.0, NAN, 3.0))
    assert result.ok and result.nonfinite_mismatches == 0, result.describe()


def test_same_signed_infinities_are_ok() -> None:
    assert compare(_f32(INF, -INF, 2.0), _f32(INF, -INF, 2.0)).ok


def test_nan_against_a_number_fails_either_way() -> None:
    for got, want in ((_f32(1.0, NAN), _f32(1.0, 2.0)), (_f32(1.0, 2.0), _f32(1.0, NAN))):
        result = compare(got, want)
        assert not result.ok and result.nonfinite_mismatches == 1 and result.first == (1,), result.describe()


def test_nan_against_an_infinity_fails() -> None:
    assert not compare(_f32(NAN), _f32(INF)).ok


def test_opposite_infinities_fail() -> None:
    result = compare(_f32(0.0, INF), _f32(0.0, -INF))
    assert not result.ok and result.nonfinite_mismatches == 1
    assert "1 non-finite mismatches, first at (1,): simulated inf, reference -inf: FAILED" in result.describe()


def test_an_infinity_in_the_reference_hides_no_finite_error() -> None:
    result = compare(_f32(INF, 1.0, 5.0), _f32(INF, 1.0, 2.0))
    assert not result.ok and result.max_abs == 3.0 and result.nonfinite_mismatches == 0, result.describe()
    assert compare(_f32(INF, 1.0, 2.0 + 1e-5), _f32(INF, 1.0, 2.0)).ok


def test_finite_error_is_relative_to_the_largest_finite_reference() -> None:
    assert compare(_f32(100.0, 1e-3), _f32(100.0, 0.0)).ok  # 1e-3 <= 1e-4 x 100
    assert not compare(_f32(100.0, 2e-2), _f32(100.0, 0.0)).ok
    assert compare(_f32(0.0, 0.5), _f32(0.0, 0.5 + 1e-4), rtol=1e-3, min_scale=1.0).ok


def test_multi_dimensional_first_place() -> None:
    got = np.zeros((2, 3), np.float32)
    want = got.copy()
    got[1, 2] = NAN
    assert compare(got, want).first == (1, 2)


def test_integer_outputs_are_exact() -> None:
    assert compare(np.array([1, 2, 3], np.int32), np.array([1, 2, 3], np.int32)).ok
    result = compare(np.array([1, 2, 4], np.int32), np.array([1, 2, 3], np.int32))
    assert not result.ok and result.differing == 1 and result.first == (2,), result.describe()
    assert not compare(np.array([True, False]), np.array([True, True])).ok


def test_shape_or_dtype_mismatch_fails() -> None:
    assert not compare(_f32(1.0, 2.0), np.array([1.0, 2.0])).ok
    assert not compare(_f32(1.0, 2.0), _f32(1.0)).ok


def test_scalars() -> None:
    assert compare(np.float32(NAN), np.float32(NAN)).ok
    assert not compare(np.array(NAN, np.float32), np.array(1.0, np.float32)).ok


def test_compare_all_counts_outputs() -> None:
    lines, failed = compare_all([_f32(1.0)], [_f32(1.0), _f32(2.0)])
    assert failed and lines[-1] == "check: FAILED: 1 simulated outputs, 2 reference outputs"


L0_DIVIDE = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.div ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


@pytest.mark.parametrize(
    "a, b",
    [((0.0, 1.0, -1.0, 2.0), (0.0, 0.0, 0.0, 4.0))],  # NaN, +inf, -inf and 0.5, identical on both sides
)
def test_ipu_run_check_passes_identical_non_finite_outputs(tmp_path, capsys, a, b) -> None:
    program = tmp_path / "divide.mlir"
    program.write_text(L0_DIVIDE)
    np.save(tmp_path / "a.npy", np.array(a, np.float32))
    np.save(tmp_path / "b.npy", np.array(b, np.float32))
    status = ipu_run.main([str(program), "--target", "tiny", "--input", str(tmp_path / "a.npy"), str(tmp_path / "b.npy"), "--check"])
    out = capsys.readouterr().out
    assert status == 0 and "check output 0: max abs error 0, max rel error 0 (rtol 0.0001): ok" in out, out
