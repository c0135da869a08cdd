"""A model zoo: common PyTorch models written out, with seeded random weights, nothing downloaded.

    module, inputs = zoo.build("resnet18", batch=1, size=32)
    module, inputs = zoo.build("bert", seq=32, layers=2, hidden=64, heads=4)

The vision models follow torchvision's definitions layer for layer, with its attribute names
(`features.0`, `layer1.0.conv1`, `downsample.0`, `classifier.6`), so the compiler's locations
name the layers a torchvision user knows; the transformers follow Hugging Face's `BertModel`
and `GPT2LMHeadModel` (`encoder.layer.0.attention.self.query`, `transformer.h.0.attn.c_attn`).
torchvision's wheel does not load against the CPU torch here, hence the copies. `width`
scales every channel count (and a transformer's sizes are options) to make reduced models for
tests; `MODELS[name].reduced` is the configuration the tests use.

Weights are PyTorch's default initialization under `torch.manual_seed(seed)`, plus random
BatchNorm statistics and affine parameters (the defaults, mean 0 and variance 1, would make
BatchNorm an identity a test cannot see). Modules are returned in eval mode.

The definitions: `zoo_vision.py` (the torchvision models), `zoo_transformers.py` (BERT, GPT-2).
torch is imported when a model is built: the classes are defined on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ipu_mlir.frontends.zoo_transformers import bert, bert_encoder, gpt2
from ipu_mlir.frontends.zoo_vision import alexnet, mobilenet_v2, resnet18, resnet50, vgg16

__all__ = ["MODELS", "ZooModel", "build"]


@dataclass(frozen=True)
class ZooModel:
    name: str
    summary: str
    builder: Callable[..., tuple[Any, tuple]]
    kind: str  # "vision" (size is the image side) or "text" (size is the sequence length)
    reduced: dict = field(default_factory=dict)  # a small configuration, for tests
    target: str = "gc200"  # what it runs on at full size (`ipu-run --model`'s default)


def build(
    name: str, batch: int = 1, size: int | None = None, layers: int | None = None, seed: int = 0, **options: Any
) -> tuple[Any, tuple]:
    """(module in eval mode, example inputs) of zoo model `name`. `size` is the image side of a
    vision model, the sequence length of a transformer; `layers` a transformer's layer count."""
    if name not in MODELS:
        raise KeyError(f"no model '{name}' in the zoo (known: {', '.join(MODELS)})")
    model = MODELS[name]
    if size is not None:
        options["size" if model.kind == "vision" else "seq"] = size
    if layers is not None:
        if model.kind == "vision":
            raise ValueError(f"'{name}' has a fixed layer structure: --layers applies to the transformers")
        options["layers"] = layers
    return model.builder(batch=batch, seed=seed, **options)


MODELS: dict[str, ZooModel] = {
    model.name: model
    for model in [
        ZooModel("alexnet", "AlexNet (torchvision)", alexnet, "vision", dict(size=224, width=0.0625, num_classes=10)),
        ZooModel("vgg16", "VGG-16 (torchvision, no BatchNorm)", vgg16, "vision", dict(size=224, width=0.0625, num_classes=10)),
        ZooModel("resnet18", "ResNet-18 (torchvision)", resnet18, "vision", dict(size=32, width=0.125, num_classes=10)),
        ZooModel("resnet50", "ResNet-50 (torchvision V1.5)", resnet50, "vision", dict(size=32, width=0.125, num_classes=10)),
        ZooModel("mobilenet_v2", "MobileNetV2 (torchvision)", mobilenet_v2, "vision", dict(size=32, width=0.25, num_classes=10)),
        ZooModel(
            "bert",
            "BERT-base (HF BertModel): 12 layers, hidden 768, 12 heads, seq 128",
            bert,
            "text",
            dict(seq=16, layers=2, hidden=64, heads=4, vocab=100, max_positions=32),
        ),
        ZooModel(
            "bert_large",
            "BERT-Large (HF BertModel): 24 layers, hidden 1024, 16 heads, seq 128, layers [3, 7, 7, 7] over an m2000's IPUs",
            functools.partial(bert, layers=24, hidden=1024, heads=16, layers_per_ipu=(3, 7, 7, 7)),
            "text",
            dict(seq=16, layers=4, hidden=64, heads=4, vocab=100, max_positions=32, layers_per_ipu=(1, 1, 1, 1)),
            "m2000",
        ),
        ZooModel(
            "bert_encoder",
            "BERT-base's encoder stack (HF BertEncoder), embedded tokens in",
            bert_encoder,
            "text",
            dict(seq=16, layers=2, hidden=64, heads=4),
        ),
        ZooModel(
            "gpt2",
            "GPT-2 small (HF GPT2LMHeadModel): 12 layers, hidden 768, 12 heads, seq 128",
            gpt2,
            "text",
            dict(seq=16, layers=2, hidden=64, heads=4, vocab=100, max_positions=32),
        ),
        ZooModel(
            "gpt2_medium",
            "GPT-2 medium (HF GPT2LMHeadModel): 24 layers, hidden 1024, 16 heads, seq 128, sharded over an m2000",
            functools.partial(gpt2, layers=24, hidden=1024, heads=16),
            "text",
            dict(seq=16, layers=4, hidden=64, heads=4, vocab=100, max_positions=32),
            "m2000",
        ),
    ]
}
