"""A 0-d bf16 / FP8 array back as a torch tensor keeps its shape: `to_torch` made it 1-d
(`np.ascontiguousarray` returns at least one dimension), so a bf16 model's training loss came
back as shape (1,) where PyTorch's is () (fuzz_pytorch seeds 3012 and 3114)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from ipu_mlir.frontends import torch as ipu_torch  # noqa: E402
from ipu_mlir.frontends.mixed_precision import to_torch  # noqa: E402


@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn])
@pytest.mark.parametrize("shape", [(), (1,), (2, 3)])
def test_narrow_array_keeps_its_shape(dtype, shape):
    array = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape).astype(dtype)
    tensor = to_torch(array)
    assert tuple(tensor.shape) == shape
    assert tensor.float().tolist() == array.astype(np.float32).tolist()


def test_bf16_training_loss_is_a_scalar():
    torch.manual_seed(0)
    model = torch.nn.Linear(3, 2).bfloat16()

    class Loss(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = model

        def forward(self, x):  # noqa: ANN001, ANN202
            return self.linear(x).pow(2).mean()

    net = Loss()
    trained = ipu_torch.trainingModel(net, options=ipu_torch.Options().target("tiny"), optimizer=torch.optim.SGD(net.parameters(), lr=0.1))
    x = torch.randn(4, 3).bfloat16()
    expected = net(x)
    loss = trained(x)
    assert loss.shape == expected.shape == ()
    assert abs(float(loss) - float(expected)) <= 2**-6 * abs(float(expected))
