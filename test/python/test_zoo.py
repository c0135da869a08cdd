"""The model zoo at reduced size against PyTorch, and the PyTorch front end's own behaviours.

Models the compiler refuses today are strict xfails that check the exact refusal: when the
compiler learns the op, the test turns red (XPASS) and moves to the passing list.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from pathlib import Path

import numpy as np
import pytest
import torch  # torch and torch-mlir are test dependencies (pyproject.toml): no skip without them
from mlir import ir

from ipu_mlir.dialects.resources import dense_array, is_resource
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends import zoo, zoo_vision
from ipu_mlir.runtime import oracle
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.tools import ipu_run

NOT_SUPPORTED = "'linalg.generic' is not supported by ipu-convert-to-ipu: "

# name -> (configuration, None if it runs, else the compiler's refusal and the PyTorch origin the front end adds).
CASES = {
    "alexnet": (zoo.MODELS["alexnet"].reduced, None),
    "vgg16": (zoo.MODELS["vgg16"].reduced, None),
    "resnet18": (zoo.MODELS["resnet18"].reduced, None),
    "resnet50": (zoo.MODELS["resnet50"].reduced, None),
    "mobilenet_v2": (zoo.MODELS["mobilenet_v2"].reduced, None),
    "bert_encoder": (zoo.MODELS["bert_encoder"].reduced, None),
    # AdaptiveAvgPool2d((6, 6)) on a 1x1 map (an image smaller than 224): a gather at computed coordinates.
    "alexnet-small": (dict(size=63, width=0.125, num_classes=10), None),
    # Embedding lookups are ipu.gather; position ids and the causal mask iota inputs.
    "bert": (zoo.MODELS["bert"].reduced, None),
    "gpt2": (zoo.MODELS["gpt2"].reduced, None),
}


def _case(name: str):
    config, refusal = CASES[name]
    if refusal is None:
        return pytest.param(name, config, refusal, id=name)
    mark = pytest.mark.xfail(strict=True, raises=IpuError, reason=f"{refusal[0]} (from PyTorch: {refusal[1]})")
    return pytest.param(name, config, refusal, id=name, marks=mark)


@pytest.mark.parametrize("name, config, refusal", [_case(name) for name in CASES])
def test_zoo_model_matches_pytorch(name: str, config: dict, refusal: tuple[str, str] | None) -> None:
    module, inputs = zoo.build(name.split("-")[0], **config)
    try:
        compiled = torch_frontend.compile(module, *inputs, target="gc200")
    except IpuError as error:
        if refusal:  # only the refusal expected counts as the expected failure
            assert refusal[0] in str(error) and f"from PyTorch: {refusal[1]}" in str(error), str(error)
        raise
    got = compiled(*inputs)
    expected = torch_frontend.run_eager(module, *inputs)
    got, expected = (got, expected) if isinstance(got, tuple) else ((got,), (expected,))
    assert len(got) == len(expected)
    for value, reference in zip(got, expected):
        assert isinstance(value, torch.Tensor) and value.shape == reference.shape and value.dtype == reference.dtype
        comparison = oracle.compare(value.detach().numpy(), reference.detach().numpy())  # what ipu-run --model prints
        assert comparison.ok, f"{name}: {comparison.describe()}"


def test_zoo_models_follow_torchvision_and_hf_names() -> None:
    resnet, _ = zoo.build("resnet50", size=32, width=0.125)
    names = dict(resnet.named_modules())
    assert {"conv1", "bn1", "layer1.0.conv3", "layer1.0.downsample.0", "layer1.0.downsample.1", "layer4.2.bn3", "fc"} <= set(names)
    assert sum(p.numel() for p in zoo.build("resnet18")[0].parameters()) == 11_689_512  # torchvision's count
    mobilenet = dict(zoo.build("mobilenet_v2", size=32)[0].named_modules())
    assert {"features.0.0", "features.1.conv.0.0", "features.2.conv.3", "features.18.1", "classifier.1"} <= set(mobilenet)
    assert sum(p.numel() for p in zoo.build("mobilenet_v2")[0].parameters()) == 3_504_872
    alexnet = dict(zoo.build("alexnet", width=0.0625)[0].named_modules())
    assert {"features.0", "features.10", "features.12", "avgpool", "classifier.1", "classifier.6"} <= set(alexnet)
    vgg = dict(zoo.build("vgg16", width=0.0625)[0].named_modules())
    assert {"features.0", "features.28", "features.30", "classifier.0", "classifier.6"} <= set(vgg) and "features.31" not in vgg
    bert, (ids,) = zoo.build("bert", layers=1)
    assert ids.shape == (1, 128) and "encoder.layer.0.attention.self.query" in dict(bert.named_modules())
    assert sum(p.numel() for p in bert.parameters()) == 109_482_240 - 11 * 7_087_872  # HF bert-base-uncased, 11 layers fewer
    gpt2, (ids,) = zoo.build("gpt2", **zoo.MODELS["gpt2"].reduced)
    assert "transformer.h.1.attn.c_attn" in dict(gpt2.named_modules()) and gpt2.lm_head.weight is gpt2.transformer.wte.weight
    with pytest.raises(KeyError, match="no model 'resnet1' in the zoo"):
        zoo.build("resnet1")
    with pytest.raises(ValueError, match="--layers applies to the transformers"):
        zoo.build("resnet18", layers=3)


class _Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = torch.nn.Sequential()
        self.block.conv = torch.nn.Conv2d(3, 4, 3, padding=1)
        self.fc = torch.nn.Linear(64, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.block(x)).flatten(1))


class _Roll(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.roll(x, (1, -2), (0, 1))


class _Kth(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.kthvalue(x, 2, 1)[0]


class _Blocked(torch.nn.Module):
    def __init__(self, name: str, layer: torch.nn.Module) -> None:
        super().__init__()
        self.block = torch.nn.Sequential()
        self.block.add_module(name, layer)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.block(x) * 2


def test_outputs_in_the_inputs_type_and_profile() -> None:
    torch.manual_seed(0)
    net, x = _Net().eval(), torch.randn(2, 3, 4, 4)
    compiled = torch_frontend.compile(net, x, target="gc200")
    with torch.no_grad():
        expected = net(x)
    got = compiled(x)
    assert isinstance(got, torch.Tensor) and got.shape == (2, 5)
    torch.testing.assert_close(got, expected, rtol=1e-4, atol=1e-5)
    again = compiled(x.numpy())  # the second run: weights already loaded, replicas shared
    assert isinstance(again, np.ndarray)
    np.testing.assert_allclose(again, expected.numpy(), rtol=1e-4, atol=1e-5)
    assert compiled.profile.cycles > 0 and compiled.profile.vertices > 0
    assert compiled.simulator.arguments == [((2, 3, 4, 4), np.dtype("float32"))]


def test_export_reads_weights_as_arrays(monkeypatch: pytest.MonkeyPatch) -> None:
    # torch-mlir's own literal import reads a tensor element by element (tensor.tolist()), 30 of
    # ResNet-50's 40 export seconds: the front end hands it the weights' bytes instead.
    torch.manual_seed(0)
    net, x = _Net().eval(), torch.randn(2, 3, 4, 4)
    listed = []
    tolist = torch.Tensor.tolist
    monkeypatch.setattr(torch.Tensor, "tolist", lambda self: listed.append(self.numel()) or tolist(self))
    imported = torch_frontend.export(net, x)
    assert all(count <= 1 for count in listed), listed
    found = []

    def collect(op: ir.Operation) -> ir.WalkResult:
        if op.name == "arith.constant" and is_resource(op.attributes["value"]):
            found.append(np.sort(dense_array(op.attributes["value"], np.float32)))
        return ir.WalkResult.ADVANCE

    imported.operation.walk(collect)
    for weight in (p.detach().numpy() for p in net.parameters() if p.numel() > 1):  # torch-mlir may transpose: compare values
        assert any(np.array_equal(np.sort(weight, axis=None), array) for array in found)


def test_locations_name_layers_and_aten_ops() -> None:
    module, inputs = zoo.build("resnet18", **zoo.MODELS["resnet18"].reduced)
    imported = torch_frontend.export(module, *inputs)
    origins = set()
    imported.operation.walk(lambda op: origins.add(torch_frontend.torch_origin(op.location, module)) or ir.WalkResult.ADVANCE)
    line = next(number for number, text in enumerate(open(zoo_vision.__file__), 1) if "out = self.bn2(self.conv2(out))" in text)
    assert f"aten.convolution in layer1.0.conv2 (Conv2d) at {zoo_vision.__file__}:{line}" in origins
    assert any(origin.startswith("aten.convolution in layer2.0.downsample.0 (Conv2d)") for origin in origins)
    assert any(origin.startswith("aten.div.Tensor in layer4.1.bn1 (BatchNorm2d)") for origin in origins)  # reciprocal as 1 / x
    assert any(origin.startswith("aten.mm in fc (Linear)") for origin in origins)
    text = imported.operation.get_asm(enable_debug_info=True)
    assert re.search(r'loc\("layer1\.0\.conv2"\(#loc\d+\)\)', text)


def test_refusal_names_the_pytorch_op_and_layer() -> None:
    # torch.kthvalue (a tm_tensor.topk) is refused today; when the compiler takes it, pick another refused op.
    net, x = _Blocked("kth", _Kth()).eval(), torch.randn(4, 4)
    with pytest.raises(IpuError) as failure:
        torch_frontend.compile(net, x)
    message = str(failure.value)
    assert "'tm_tensor.topk' op is not converted by ipu-convert-tm-tensor" in message
    assert f"from PyTorch: aten.kthvalue in block.kth (_Kth) at {__file__}:" in message


def test_roll_runs() -> None:
    """torch.roll: torch-mlir casts each slice to a dynamic size before the concat that joins
    them (convert-to-ipu drops those casts)."""
    net, x = _Blocked("roll", _Roll()).eval(), torch.randn(4, 6)
    compiled = torch_frontend.compile(net, x, target="tiny")
    np.testing.assert_array_equal(compiled(x).numpy(), net(x).numpy())


def test_torch_origin_of_a_location() -> None:
    with ir.Context():
        frame = ir.Location.callsite(ir.Location.file("/x/torch/nn/modules/conv.py", 5, 0), [ir.Location.file("/m/model.py", 12, 0)])
        location = ir.Location.name("layer1.0.conv1", childLoc=ir.Location.name("aten.convolution", childLoc=frame))
        assert torch_frontend.torch_origin(location) == "aten.convolution in layer1.0.conv1 at /m/model.py:12"
        resnet, _ = zoo.build("resnet18", size=32, width=0.125)
        assert torch_frontend.torch_origin(location, resnet) == "aten.convolution in layer1.0.conv1 (Conv2d) at /m/model.py:12"
        assert torch_frontend.torch_origin(ir.Location.file("/m/model.py", 1, 2)) == ""


def test_ipu_run_model(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # ipu-run builds the zoo's full widths; narrower ones keep this test fast.
    for name, options in {"bert_encoder": dict(hidden=64, heads=4), "bert": dict(hidden=64, heads=4, vocab=100)}.items():
        model = zoo.MODELS[name]
        monkeypatch.setitem(zoo.MODELS, name, dataclasses.replace(model, builder=functools.partial(model.builder, **options)))
    assert ipu_run.main(["--model", "bert_encoder", "--size", "8", "--layers", "1"]) == 0
    out = capsys.readouterr().out
    # docs/ipu-run.md's session: the same lines in the same order, times and values aside
    doc = (Path(__file__).resolve().parents[2] / "docs" / "ipu-run.md").read_text()
    session = re.search(r"```console\n\$ ipu-run --model alexnet\n(.*?)\n\.\.\.\n", doc, re.S).group(1)
    assert _labels(out)[: len(_labels(session))] == _labels(session)
    assert re.search(r"^export: +\d+\.\d\d s \(torch-mlir, linalg-on-tensors\)$", out, re.M)
    assert "check output 0: max abs error" in out and "(rtol 0.0001): ok" in out and "estimated time:" in out
    assert ipu_run.main(["--model", "bert", "--size", "8", "--layers", "1"]) == 0
    assert "(rtol 0.0001): ok" in capsys.readouterr().out
    assert ipu_run.main(["--model", "resnet18", "--layers", "2"]) == 1
    assert "ipu-run: error: 'resnet18' has a fixed layer structure" in capsys.readouterr().err
    assert ipu_run.main(["--model", "resnet18", "examples/relu.mlir"]) == 1
    assert "ipu-run: error: give a program FILE or --model NAME (one of them)" in capsys.readouterr().err


def _labels(text: str) -> list[str]:
    """What each line says, its figures aside: `export:`, `check output 0:`, `target:`."""
    return [line.split(":")[0] for line in text.splitlines() if line.strip() and not line.startswith(("model:", "inputs:"))]
