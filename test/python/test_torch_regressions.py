"""Wrong numbers and crashes the PyTorch-level fuzzer (test/fuzz/fuzz_pytorch.py) found, each
the minimized model checked against PyTorch eager, and a fixed-seed run of the fuzzer itself."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
nn = torch.nn

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "fuzz"))
import fuzz_pytorch  # noqa: E402

TARGET = "tiny"


class Lambda(nn.Module):
    def __init__(self, function) -> None:  # noqa: ANN001
        super().__init__()
        self.function = function

    def forward(self, *inputs):  # noqa: ANN002, ANN201
        return self.function(*inputs)


def test_a_0d_output_stays_0d() -> None:
    """Fuzzer seed 6: `x.sum()` came back of shape (1,), PyTorch's is (): np.ascontiguousarray
    makes a 0-d array 1-d."""
    model, x = Lambda(lambda x: x.sum()), torch.randn(2, 4)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    assert got.shape == torch.Size([])
    torch.testing.assert_close(got, model(x), rtol=1e-5, atol=1e-6)


def test_a_training_models_0d_loss_stays_0d() -> None:
    """The same for trainingModel's loss, a 0-d tensor in PyTorch."""
    net = nn.Linear(3, 2)
    model = Lambda(lambda x, t: nn.functional.mse_loss(net(x), t))
    model.net = net
    trained = ipu_torch.trainingModel(model, ipu_torch.Options().target(TARGET), torch.optim.SGD(model.parameters(), lr=0.1))
    x, t = torch.randn(4, 3), torch.randn(4, 2)
    assert trained(x, t).shape == torch.Size([])


@pytest.mark.parametrize("approximate", ["tanh", "none"])
def test_gelu_matches_aten(approximate) -> None:  # noqa: ANN001
    """Fuzzer seed 285: GELU(approximate="tanh") was off by 5e-5 near |x| = 1 (torch-mlir's
    lowering takes sqrt(2/pi) as 0.797724); simulator and ExecutionEngine agreed, PyTorch not."""
    model, x = nn.GELU(approximate=approximate), torch.linspace(-4, 4, 33)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=0, atol=2e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int32])
def test_fmod_by_a_number(dtype) -> None:  # noqa: ANN001
    """Fuzzer seed 25: torch.fmod(x, 1.5) was refused (torch-mlir lowers fmod only by a tensor)."""
    model, x = Lambda(lambda x: torch.fmod(x, 3 if dtype == torch.int32 else 1.5)), (torch.randn(3, 5) * 8).to(dtype)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=0, atol=0)


class MaskedAttention(nn.Module):
    """Fuzzer seed 65, minimized: a causal mask kept as a plain tensor attribute (not a buffer)."""

    def __init__(self) -> None:
        super().__init__()
        self.attention = nn.MultiheadAttention(4, 2)
        self.mask = torch.triu(torch.ones(3, 3, dtype=torch.bool), 1)

    def forward(self, x, target):  # noqa: ANN001, ANN201
        y = self.attention(x, x, x, attn_mask=self.mask, need_weights=False)[0]
        return y, nn.functional.mse_loss(y, target)


def test_training_with_a_tensor_attribute() -> None:
    """make_fx's fake tracing refused the real tensor (an AssertionError and a traceback); it
    is now a constant of the step, and the parameters match PyTorch's loop."""
    torch.manual_seed(0)
    batches = [(torch.randn(3, 2, 4), torch.randn(3, 2, 4)) for _ in range(2)]
    options = {"device_iterations": 1, "accumulation": 1, "optimizer": {"kind": "SGD", "lr": 0.05, "groups": False, "momentum": 0.9}}
    assert fuzz_pytorch.check_training(MaskedAttention(), batches, options, TARGET) == ("ok", "")


class IndexedByBuffer(nn.Module):
    """Fuzzer seed 111, minimized: advanced indexing by a buffer (Swin's relative position
    index), or by a tensor kept as a plain attribute (a lifted constant)."""

    def __init__(self, as_buffer: bool) -> None:
        super().__init__()
        if as_buffer:
            self.register_buffer("index", torch.tensor([-1, 2, 1]))
        else:
            self.index = torch.tensor([-1, 2, 1])

    def forward(self, x):  # noqa: ANN001, ANN201
        return x[:, self.index] * 2


@pytest.mark.parametrize("as_buffer", [True, False])
def test_indexing_by_a_buffer(as_buffer) -> None:  # noqa: ANN001
    """torch-mlir's frozen import refused the tensor in aten.index.Tensor's list of indices
    ("Heterogeneous lists are not supported"); frontends.torch reads it with a get_attr."""
    model, x = IndexedByBuffer(as_buffer), torch.randn(2, 4, 3)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=0, atol=0)


class Upsample(nn.Module):
    def __init__(self, layer: nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x, target):  # noqa: ANN001, ANN201
        y = self.layer(x)
        return y, nn.functional.mse_loss(y, target)


@pytest.mark.parametrize(
    "options", [{"stride": 2, "output_padding": 1}, {"stride": 3, "padding": 1, "dilation": 2, "groups": 2}, {"kernel_size": (1, 2)}]
)
def test_training_a_transposed_convolution(options) -> None:  # noqa: ANN001
    """Fuzzer seeds 121 and 229: trainingModel refused ConvTranspose2d (torch-mlir has no
    lowering of its convolution_backward); joint.py now writes that backward as forward
    convolutions, and the parameters match PyTorch's loop."""
    torch.manual_seed(0)
    model = Upsample(nn.ConvTranspose2d(4, 2, **{"kernel_size": 3, **options}))
    x = torch.randn(2, 4, 3, 5)
    t = torch.randn(model.layer(x).shape)
    batches = [(x, t), (torch.randn(x.shape), torch.randn(t.shape))]
    spec = {"device_iterations": 1, "accumulation": 1, "optimizer": {"kind": "SGD", "lr": 0.05, "groups": False, "momentum": 0.9}}
    assert fuzz_pytorch.check_training(model, batches, spec, TARGET) == ("ok", "")


@pytest.mark.parametrize(
    "layer",
    [
        lambda: nn.Conv1d(4, 4, 3, stride=2, padding=1, groups=2),
        lambda: nn.Conv1d(4, 4, 1, stride=3, padding=1, dilation=2, groups=4),
        lambda: nn.ConvTranspose1d(4, 2, 3, stride=2, output_padding=1, groups=2),
    ],
)
def test_training_a_1d_convolution(layer) -> None:  # noqa: ANN001
    """Fuzzer seed 413: trainingModel refused a grouped Conv1d (torch-mlir cannot lower its
    convolution_backward); joint.py now computes it as the 2-d one of height 1."""
    torch.manual_seed(0)
    model = Upsample(layer())
    x = torch.randn(2, 4, 7)
    t = torch.randn(model.layer(x).shape)
    batches = [(x, t), (torch.randn(x.shape), torch.randn(t.shape))]
    spec = {"device_iterations": 1, "accumulation": 1, "optimizer": {"kind": "SGD", "lr": 0.05, "groups": False, "momentum": 0.9}}
    assert fuzz_pytorch.check_training(model, batches, spec, TARGET) == ("ok", "")


@pytest.mark.parametrize("seed", [108, 109, 133, 285, 413, 760])
def test_fuzz_seeds(seed) -> None:  # noqa: ANN001
    """A fixed-seed run of the fuzzer (`make fuzz-torch` runs many), a few seconds a seed:
    inference (108: Embedding, 133: Linear and SiLU, 285: a residual Linear and GELU's tanh
    form) and training (109: LayerNorm, Adam, gradient accumulation; 413: a convolution reading
    only padding, after a LayerNorm over one element; 760: AdamW on a shift before log_softmax,
    whose exact gradient is zero and ours f32 noise) cases that match PyTorch."""
    record = fuzz_pytorch.run_case(seed)
    assert record["outcome"] in ("ok", "refused"), record


@pytest.mark.parametrize("pad", [[-1, 1], [1, -1], [0, 0, -1, 1], [-3, 1], [-1, 2]])
def test_a_negative_pad_width(pad) -> None:  # noqa: ANN001
    """Fuzzer seed 413: torch-mlir folds a `constant_pad_nd` that keeps its operand's shape to
    the operand, so `F.pad(x, [-1, 1])` (a shift) returned x; a negative width is now a slice."""
    model, x = Lambda(lambda x: nn.functional.pad(x, pad, value=0.5)), torch.arange(1.0, 13.0).reshape(2, 2, 3)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=0, atol=0)


@pytest.mark.parametrize("optimizer", ["SGD", "AdamW"])
def test_training_a_convolution_that_reads_only_padding(optimizer) -> None:  # noqa: ANN001
    """Fuzzer seed 413, minimized: a grouped Conv1d whose one output position reads only padding
    (length 1, stride 3, padding 1, dilation 2). Its input gradient, a pad of [-1, 1], came back
    as the output gradient itself, and the Linear before it trained on that (0.045 off). Under
    AdamW the Linear's exact gradient is zero: the fuzzer's rule must still see the wrong one."""
    torch.manual_seed(0)
    model = Upsample(nn.Sequential(nn.Linear(1, 1), nn.Conv1d(2, 4, 1, stride=3, padding=1, dilation=2, groups=2)))
    batches = [(torch.randn(3, 2, 1), torch.randn(3, 4, 1)) for _ in range(2)]
    settings = {"momentum": 0.0} if optimizer == "SGD" else {"weight_decay": 0.0}
    spec = {"device_iterations": 1, "accumulation": 1, "optimizer": {"kind": optimizer, "lr": 0.05, "groups": False, **settings}}
    assert fuzz_pytorch.check_training(model, batches, spec, TARGET) == ("ok", "")


NAN = float("nan")
ODD_ROWS = torch.tensor([[1.0, NAN, -2.0, float("inf")], [-0.0, float("-inf"), 3e38, 1e-40], [2.0, 5.0, 5.0, -1.0], [NAN, 0.5, NAN, 0.0]])
BOUNDS = torch.tensor([-1.0, 0.0, NAN, 0.5])
SELECTING = {
    "clamp": lambda x: x.clamp(-1.0, 1.0),
    "clamp_low_above_high": lambda x: x.clamp(2.0, 1.0),
    "clamp_tensors": lambda x: x.clamp(BOUNDS, BOUNDS + 1),
    "hardtanh": nn.functional.hardtanh,
    "relu6": nn.functional.relu6,
    "minimum": lambda x: torch.minimum(x, x.flip(1)),
    "maximum": lambda x: torch.maximum(x.flip(0), x),
    "argmax": lambda x: x.argmax(1),
    "argmin_keepdim": lambda x: x.argmin(0, keepdim=True),
    "argmax_all": lambda x: x.argmax(),
    "argmax_all_keepdim": lambda x: x[:, 2:].argmax(keepdim=True),
    "max_dim": lambda x: x.max(1),
    "min_dim_keepdim": lambda x: x.min(0, keepdim=True),
}


@pytest.mark.parametrize("name", SELECTING)
def test_nan_through_ops_that_select(name) -> None:  # noqa: ANN001
    """The fuzzer's odd inputs: torch-mlir lowers these ops to compares and selects that drop
    NaN (clamp's `cmpf ult` made NaN the bound, argmax's `ogt` skipped it); ATen keeps NaN,
    and its argmax / argmin point at the first NaN (frontends/torch.py's decompositions)."""
    model = Lambda(SELECTING[name])
    got = ipu_torch.compile(model, ODD_ROWS, target=TARGET, use_cache=False)(ODD_ROWS)
    torch.testing.assert_close(got, model(ODD_ROWS), rtol=0, atol=0, equal_nan=True)


SHAPE_KEEPING = {
    "circular_pad_of_two_dims": lambda x: nn.functional.pad(x, [1, 1, 2, 0], mode="circular"),
    "roll_a_whole_turn": lambda x: x.roll(4, -1),
    "roll_more_than_a_turn": lambda x: x.roll((-7, 5), (2, 3)),
    "roll_flattened": lambda x: x.roll(5),
}


@pytest.mark.parametrize("name", SHAPE_KEEPING)
def test_valid_programs_once_refused(name) -> None:  # noqa: ANN001
    """Fuzzer seeds 1267 and 1206: ATen's circular pad reads a slice of its `empty` output
    (rows it fills later), refused as "a tensor with no storage"; torch-mlir's roll by a whole
    turn cut a zero-size slice, refused as such. Both run now, exactly as ATen."""
    model, x = Lambda(SHAPE_KEEPING[name]), torch.randn(2, 1, 3, 4)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=0, atol=0)


SCALAR_SOFTMAX = """
import torch
from ipu_mlir.frontends import torch as ipu_torch

class Softmaxes(torch.nn.Module):
    def forward(self, x):
        return x.softmax(0), x.log_softmax(-1)

for value in (0.7, float("inf"), float("nan")):
    x = torch.tensor(value)
    got = ipu_torch.compile(Softmaxes(), x, target="tiny", use_cache=False)(x)
    for ours, theirs in zip(got, Softmaxes()(x)):
        torch.testing.assert_close(ours, theirs, rtol=0, atol=0, equal_nan=True)
"""


def test_softmax_of_a_0d_tensor() -> None:
    """Fuzzer seed 1289: torch-mlir's pipeline never ended on the softmax of a 0-d tensor (it
    emitted diagnostics until memory ran out), and refused its log_softmax. In a process of
    its own, with a time limit, so that a hang fails rather than stops the suite."""
    import subprocess

    done = subprocess.run([sys.executable, "-c", SCALAR_SOFTMAX], capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_reciprocal_of_zero_and_nan() -> None:
    """Fuzzer seed 5054 (odd values): torch-mlir's reciprocal asserts that no element is zero
    (a compare false for NaN too): NaN and +-0 failed at run time; ATen gives NaN and +-inf."""
    model, x = Lambda(torch.reciprocal), torch.tensor([NAN, 0.0, -0.0, 4.0, float("inf"), 1e-40])
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=0, atol=0, equal_nan=True)


def _odd_neighbours(shape: tuple) -> torch.Tensor:
    """Normal values with +-3e38 side by side (their difference overflows), an infinity of each
    sign and a NaN, each next to finite values."""
    x = torch.randn(shape, generator=torch.Generator().manual_seed(0)).flatten()
    x[1], x[2], x[7], x[11], x[-2] = 3e38, -3e38, float("inf"), float("-inf"), NAN
    return x.reshape(shape)


INTERPOLATING = {
    "linear": ((1, 2, 7), dict(scale_factor=2.5, mode="linear")),
    "bilinear": ((1, 2, 4, 5), dict(scale_factor=1.5, mode="bilinear")),
    "bilinear_corners": ((2, 1, 4, 5), dict(size=(7, 6), mode="bilinear", align_corners=True)),
    "trilinear": ((1, 1, 3, 3, 4), dict(scale_factor=2, mode="trilinear")),
}


@pytest.mark.parametrize("name", INTERPOLATING)
def test_linear_interpolation_of_huge_and_infinite_values(name) -> None:  # noqa: ANN001
    """Fuzzer seed 1454: PyTorch's decomposition of bilinear interpolation (low + (high - low) *
    w) overflowed to inf between 3e38 and -3e38 where ATen (low * (1 - w) + high * w) stays
    finite, and gave NaN beside an infinity where ATen gives it; now ATen's order."""
    shape, options = INTERPOLATING[name]
    model, x = Lambda(lambda x: nn.functional.interpolate(x, **options)), _odd_neighbours(shape)
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    torch.testing.assert_close(got, model(x), rtol=1e-6, atol=1e-6, equal_nan=True)


def test_layer_norm_whose_variance_overflows_is_nan() -> None:
    """Fuzzer seed 1370: a LayerNorm row holding 3e38 (or 1e20: a spread whose square passes
    f32's largest) has an infinite f32 variance and an rsqrt of 0, and came out as the bias,
    finite and wrong (the f64 result is finite and different). Such a row is NaN now, as ATen's
    own f32 kernel gives for 3e38 (for 1e20 ATen gives the bias); other rows are untouched."""
    model = nn.LayerNorm(4).eval()
    with torch.no_grad():
        model.bias.fill_(0.25)
    x = torch.tensor([[1.0, -2.0, 0.5, 3.0], [1.0, 3e38, 0.5, 3.0], [1e20, -2.0, 0.5, 3.0], [-0.0, 1e-40, 0.0, 2.0]])
    got = ipu_torch.compile(model, x, target=TARGET, use_cache=False)(x)
    assert got[1:3].isnan().all()
    torch.testing.assert_close(got[[0, 3]], model(x)[[0, 3]], rtol=1e-6, atol=1e-6)


def test_pytorchs_own_overflow_excuses_only_nan_or_the_exact_value() -> None:
    """The fuzzer's rule (fuzz_pytorch._overflow_excused): where PyTorch's f32 output breaks
    down against f64 (a GroupNorm over sums of 1e38s: PyTorch 0, f64 -0.209; GELU(inf): NaN,
    f64 inf), our NaN or the f64 value passes and is counted; our NaN where PyTorch is right,
    or a value matching neither PyTorch nor f64, is still wrong."""
    exact = torch.tensor([-0.209, 1.5, -1.3], dtype=torch.float64)
    right = exact.float()
    overflowed = torch.tensor([0.0, NAN, -1.3])
    compare = fuzz_pytorch._compare
    assert compare(torch.tensor([NAN, NAN, -1.3]), overflowed, exact) == ("", 1)
    assert compare(torch.tensor([-0.209, 1.5, -1.3]), overflowed, exact) == ("", 1)  # the exact value
    assert compare(torch.tensor([NAN, 1.5, -1.3]), right, exact)[0]
    assert compare(torch.tensor([0.0, 0.25, -1.3]), overflowed, exact)[0]  # silent, matching neither
    infinite = torch.tensor([math.inf, 2.0], dtype=torch.float64)  # seed 1802: ATen's f32 GELU(inf) is NaN
    assert compare(torch.tensor([math.inf, 2.0]), torch.tensor([NAN, 2.0]), infinite) == ("", 1)
    assert compare(torch.tensor([-math.inf, 2.0]), torch.tensor([NAN, 2.0]), infinite)[0]


@pytest.mark.parametrize("beta", [1.0, 0.5])
def test_smooth_l1_gradient_of_nan_is_nan(beta) -> None:  # noqa: ANN001
    """Fuzzer seed 61 (training, odd values in the batch): PyTorch's decomposition of smooth
    L1's backward takes sign(x - target) outside beta, and sign(NaN) is 0, so a NaN in the batch
    gave the weights a zero gradient where ATen's kernel (and PyTorch's loop) gives NaN: one
    weight stayed finite that PyTorch's made NaN. Now ATen's kernel."""

    class SmoothL1(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Linear(3, 2)

        def forward(self, x, t):  # noqa: ANN001, ANN202
            y = self.net(x)
            return y, nn.functional.smooth_l1_loss(y, t, beta=beta)

    torch.manual_seed(0)
    model = SmoothL1()
    x, t = torch.randn(4, 3), torch.randn(4, 2) * 2
    t[2, 1], t[3, 0] = NAN, float("inf")  # one weight row NaN, as in PyTorch
    spec = {"device_iterations": 1, "accumulation": 1, "optimizer": {"kind": "SGD", "lr": 0.1, "groups": False, "momentum": 0.0}}
    assert fuzz_pytorch.check_training(model, [(x, t)], spec, TARGET) == ("ok", "")
    assert model.net.weight.isnan().any() and not model.net.weight.isnan().all()
