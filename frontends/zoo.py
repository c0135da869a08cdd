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

torch is imported when a model is built: the classes are defined on first use.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

from ipu_mlir.frontends.torch import BeginBlock

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


def _scaled(channels: int, width: float) -> int:
    return max(1, int(round(channels * width)))


def _randomize_batchnorm(module: Any, seed: int) -> None:
    import torch

    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for layer in module.modules():
            if isinstance(layer, torch.nn.BatchNorm2d):
                n = layer.num_features
                layer.running_mean.copy_(torch.randn(n, generator=generator) * 0.1)
                layer.running_var.copy_(torch.rand(n, generator=generator) + 0.5)
                layer.weight.copy_(torch.rand(n, generator=generator) + 0.5)
                layer.bias.copy_(torch.randn(n, generator=generator) * 0.1)


def _image(batch: int, size: int, seed: int) -> tuple:
    import torch

    return (torch.randn(batch, 3, size, size, generator=torch.Generator().manual_seed(seed + 2)),)


def _tokens(batch: int, seq: int, vocab: int, seed: int) -> tuple:
    import torch

    return (torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(seed + 2)),)


# --- vision (torchvision's definitions) ---------------------------------------------------


@functools.cache
def _vision() -> SimpleNamespace:
    import torch
    from torch import nn

    class AlexNet(nn.Module):
        def __init__(self, num_classes: int = 1000, width: float = 1.0, dropout: float = 0.5) -> None:
            super().__init__()
            c = [_scaled(n, width) for n in (64, 192, 384, 256, 256)]
            hidden = _scaled(4096, width)
            self.features = nn.Sequential(
                nn.Conv2d(3, c[0], kernel_size=11, stride=4, padding=2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2),
                nn.Conv2d(c[0], c[1], kernel_size=5, padding=2),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2),
                nn.Conv2d(c[1], c[2], kernel_size=3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(c[2], c[3], kernel_size=3, padding=1),
                nn.ReLU(inplace=True),
                nn.Conv2d(c[3], c[4], kernel_size=3, padding=1),
                nn.ReLU(inplace=True),
                nn.MaxPool2d(kernel_size=3, stride=2),
            )
            self.avgpool = nn.AdaptiveAvgPool2d((6, 6))
            self.classifier = nn.Sequential(
                nn.Dropout(p=dropout),
                nn.Linear(c[4] * 6 * 6, hidden),
                nn.ReLU(inplace=True),
                nn.Dropout(p=dropout),
                nn.Linear(hidden, hidden),
                nn.ReLU(inplace=True),
                nn.Linear(hidden, num_classes),
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.features(x)
            x = self.avgpool(x)
            x = torch.flatten(x, 1)
            return self.classifier(x)

    class VGG(nn.Module):
        def __init__(self, features: nn.Module, channels: int, num_classes: int = 1000, width: float = 1.0, dropout: float = 0.5) -> None:
            super().__init__()
            hidden = _scaled(4096, width)
            self.features = features
            self.avgpool = nn.AdaptiveAvgPool2d((7, 7))
            self.classifier = nn.Sequential(
                nn.Linear(channels * 7 * 7, hidden),
                nn.ReLU(True),
                nn.Dropout(p=dropout),
                nn.Linear(hidden, hidden),
                nn.ReLU(True),
                nn.Dropout(p=dropout),
                nn.Linear(hidden, num_classes),
            )

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.features(x)
            x = self.avgpool(x)
            x = torch.flatten(x, 1)
            return self.classifier(x)

    def vgg_layers(config: list, width: float) -> tuple[nn.Sequential, int]:
        layers: list[nn.Module] = []
        in_channels = 3
        for v in config:
            if v == "M":
                layers += [nn.MaxPool2d(kernel_size=2, stride=2)]
            else:
                v = _scaled(v, width)
                layers += [nn.Conv2d(in_channels, v, kernel_size=3, padding=1), nn.ReLU(inplace=True)]
                in_channels = v
        return nn.Sequential(*layers), in_channels

    def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1) -> nn.Conv2d:
        return nn.Conv2d(
            in_planes, out_planes, kernel_size=3, stride=stride, padding=dilation, groups=groups, bias=False, dilation=dilation
        )

    def conv1x1(in_planes: int, out_planes: int, stride: int = 1) -> nn.Conv2d:
        return nn.Conv2d(in_planes, out_planes, kernel_size=1, stride=stride, bias=False)

    class BasicBlock(nn.Module):
        expansion = 1

        def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
            super().__init__()
            self.conv1 = conv3x3(inplanes, planes, stride)
            self.bn1 = nn.BatchNorm2d(planes)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(planes, planes)
            self.bn2 = nn.BatchNorm2d(planes)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class Bottleneck(nn.Module):
        expansion = 4  # torchvision's ResNet V1.5: the stride sits on the 3x3 convolution

        def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Module | None = None) -> None:
            super().__init__()
            self.conv1 = conv1x1(inplanes, planes)
            self.bn1 = nn.BatchNorm2d(planes)
            self.conv2 = conv3x3(planes, planes, stride)
            self.bn2 = nn.BatchNorm2d(planes)
            self.conv3 = conv1x1(planes, planes * self.expansion)
            self.bn3 = nn.BatchNorm2d(planes * self.expansion)
            self.relu = nn.ReLU(inplace=True)
            self.downsample = downsample
            self.stride = stride

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            identity = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.relu(self.bn2(self.conv2(out)))
            out = self.bn3(self.conv3(out))
            if self.downsample is not None:
                identity = self.downsample(x)
            out += identity
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self, block: type, layers: list[int], num_classes: int = 1000, width: float = 1.0) -> None:
            super().__init__()
            self.inplanes = _scaled(64, width)
            self.conv1 = nn.Conv2d(3, self.inplanes, kernel_size=7, stride=2, padding=3, bias=False)
            self.bn1 = nn.BatchNorm2d(self.inplanes)
            self.relu = nn.ReLU(inplace=True)
            self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
            self.layer1 = self._make_layer(block, _scaled(64, width), layers[0])
            self.layer2 = self._make_layer(block, _scaled(128, width), layers[1], stride=2)
            self.layer3 = self._make_layer(block, _scaled(256, width), layers[2], stride=2)
            self.layer4 = self._make_layer(block, _scaled(512, width), layers[3], stride=2)
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(_scaled(512, width) * block.expansion, num_classes)

        def _make_layer(self, block: type, planes: int, blocks: int, stride: int = 1) -> nn.Sequential:
            downsample = None
            if stride != 1 or self.inplanes != planes * block.expansion:
                downsample = nn.Sequential(
                    conv1x1(self.inplanes, planes * block.expansion, stride), nn.BatchNorm2d(planes * block.expansion)
                )
            layers = [block(self.inplanes, planes, stride, downsample)]
            self.inplanes = planes * block.expansion
            layers += [block(self.inplanes, planes) for _ in range(1, blocks)]
            return nn.Sequential(*layers)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.maxpool(self.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            x = torch.flatten(self.avgpool(x), 1)
            return self.fc(x)

    def make_divisible(v: float, divisor: int = 8) -> int:
        new_v = max(divisor, int(v + divisor / 2) // divisor * divisor)
        return new_v + divisor if new_v < 0.9 * v else new_v

    class Conv2dNormActivation(nn.Sequential):  # torchvision.ops.misc: Conv2d, BatchNorm2d, ReLU6
        def __init__(self, in_channels: int, out_channels: int, kernel_size: int = 3, stride: int = 1, groups: int = 1) -> None:
            padding = (kernel_size - 1) // 2
            super().__init__(
                nn.Conv2d(in_channels, out_channels, kernel_size, stride, padding, groups=groups, bias=False),
                nn.BatchNorm2d(out_channels),
                nn.ReLU6(inplace=True),
            )
            self.out_channels = out_channels

    class InvertedResidual(nn.Module):
        def __init__(self, inp: int, oup: int, stride: int, expand_ratio: int) -> None:
            super().__init__()
            self.stride = stride
            hidden_dim = int(round(inp * expand_ratio))
            self.use_res_connect = stride == 1 and inp == oup
            layers: list[nn.Module] = []
            if expand_ratio != 1:
                layers.append(Conv2dNormActivation(inp, hidden_dim, kernel_size=1))
            layers += [
                Conv2dNormActivation(hidden_dim, hidden_dim, stride=stride, groups=hidden_dim),
                nn.Conv2d(hidden_dim, oup, 1, 1, 0, bias=False),
                nn.BatchNorm2d(oup),
            ]
            self.conv = nn.Sequential(*layers)
            self.out_channels = oup

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + self.conv(x) if self.use_res_connect else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes: int = 1000, width_mult: float = 1.0, round_nearest: int = 8, dropout: float = 0.2) -> None:
            super().__init__()
            input_channel = make_divisible(32 * width_mult, round_nearest)
            self.last_channel = make_divisible(1280 * max(1.0, width_mult), round_nearest)
            settings = [[1, 16, 1, 1], [6, 24, 2, 2], [6, 32, 3, 2], [6, 64, 4, 2], [6, 96, 3, 1], [6, 160, 3, 2], [6, 320, 1, 1]]
            features: list[nn.Module] = [Conv2dNormActivation(3, input_channel, stride=2)]
            for t, c, n, s in settings:
                output_channel = make_divisible(c * width_mult, round_nearest)
                for i in range(n):
                    features.append(InvertedResidual(input_channel, output_channel, s if i == 0 else 1, expand_ratio=t))
                    input_channel = output_channel
            features.append(Conv2dNormActivation(input_channel, self.last_channel, kernel_size=1))
            self.features = nn.Sequential(*features)
            self.classifier = nn.Sequential(nn.Dropout(p=dropout), nn.Linear(self.last_channel, num_classes))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.features(x)
            x = nn.functional.adaptive_avg_pool2d(x, (1, 1))
            x = torch.flatten(x, 1)
            return self.classifier(x)

    return SimpleNamespace(**locals())


def _vision_model(make: Callable[[SimpleNamespace], Any], batch: int, size: int, seed: int) -> tuple[Any, tuple]:
    import torch

    torch.manual_seed(seed)
    module = make(_vision())
    _randomize_batchnorm(module, seed)
    return module.eval(), _image(batch, size, seed)


def alexnet(batch: int = 1, size: int = 224, width: float = 1.0, num_classes: int = 1000, seed: int = 0) -> tuple[Any, tuple]:
    return _vision_model(lambda v: v.AlexNet(num_classes, width), batch, size, seed)


_VGG16 = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512, "M"]


def vgg16(batch: int = 1, size: int = 224, width: float = 1.0, num_classes: int = 1000, seed: int = 0) -> tuple[Any, tuple]:
    def make(v: SimpleNamespace) -> Any:
        features, channels = v.vgg_layers(_VGG16, width)
        return v.VGG(features, channels, num_classes, width)

    return _vision_model(make, batch, size, seed)


def resnet18(batch: int = 1, size: int = 224, width: float = 1.0, num_classes: int = 1000, seed: int = 0) -> tuple[Any, tuple]:
    return _vision_model(lambda v: v.ResNet(v.BasicBlock, [2, 2, 2, 2], num_classes, width), batch, size, seed)


def resnet50(batch: int = 1, size: int = 224, width: float = 1.0, num_classes: int = 1000, seed: int = 0) -> tuple[Any, tuple]:
    return _vision_model(lambda v: v.ResNet(v.Bottleneck, [3, 4, 6, 3], num_classes, width), batch, size, seed)


def mobilenet_v2(batch: int = 1, size: int = 224, width: float = 1.0, num_classes: int = 1000, seed: int = 0) -> tuple[Any, tuple]:
    return _vision_model(lambda v: v.MobileNetV2(num_classes, width), batch, size, seed)


# --- transformers (Hugging Face's BertModel and GPT2LMHeadModel) --------------------------


@functools.cache
def _text() -> SimpleNamespace:
    import torch
    from torch import nn

    class BertEmbeddings(nn.Module):
        def __init__(self, vocab: int, hidden: int, max_positions: int, type_vocab: int = 2, eps: float = 1e-12) -> None:
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab, hidden)
            self.position_embeddings = nn.Embedding(max_positions, hidden)
            self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.dropout = nn.Dropout(0.1)
            self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)
            self.register_buffer("token_type_ids", torch.zeros((1, max_positions), dtype=torch.long), persistent=False)

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            seq = input_ids.shape[1]
            position_ids = self.position_ids[:, :seq]
            token_type_ids = self.token_type_ids[:, :seq].expand(input_ids.shape[0], seq)
            x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids) + self.position_embeddings(position_ids)
            return self.dropout(self.LayerNorm(x))

    class BertSelfAttention(nn.Module):
        def __init__(self, hidden: int, heads: int) -> None:
            super().__init__()
            self.num_attention_heads, self.attention_head_size = heads, hidden // heads
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
            self.dropout = nn.Dropout(0.1)

        def heads(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(x.shape[0], x.shape[1], self.num_attention_heads, self.attention_head_size).permute(0, 2, 1, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
            probs = self.dropout(nn.functional.softmax(scores, dim=-1))
            context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            return context.view(x.shape[0], x.shape[1], -1)

    class BertSelfOutput(nn.Module):
        def __init__(self, hidden: int, eps: float = 1e-12) -> None:
            super().__init__()
            self.dense = nn.Linear(hidden, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
            return self.LayerNorm(self.dropout(self.dense(x)) + residual)

    class BertAttention(nn.Module):
        def __init__(self, hidden: int, heads: int) -> None:
            super().__init__()
            self.self = BertSelfAttention(hidden, heads)
            self.output = BertSelfOutput(hidden)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.output(self.self(x), x)

    class BertIntermediate(nn.Module):
        def __init__(self, hidden: int, intermediate: int) -> None:
            super().__init__()
            self.dense = nn.Linear(hidden, intermediate)
            self.intermediate_act_fn = nn.GELU()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.intermediate_act_fn(self.dense(x))

    class BertOutput(nn.Module):
        def __init__(self, hidden: int, intermediate: int, eps: float = 1e-12) -> None:
            super().__init__()
            self.dense = nn.Linear(intermediate, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
            return self.LayerNorm(self.dropout(self.dense(x)) + residual)

    class BertLayer(nn.Module):
        def __init__(self, hidden: int, heads: int, intermediate: int) -> None:
            super().__init__()
            self.attention = BertAttention(hidden, heads)
            self.intermediate = BertIntermediate(hidden, intermediate)
            self.output = BertOutput(hidden, intermediate)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.attention(x)
            return self.output(self.intermediate(x), x)

    class BertEncoder(nn.Module):
        def __init__(self, layers: int, hidden: int, heads: int, intermediate: int) -> None:
            super().__init__()
            self.layer = nn.ModuleList([BertLayer(hidden, heads, intermediate) for _ in range(layers)])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layer:
                x = layer(x)
            return x

    class BertPooler(nn.Module):
        def __init__(self, hidden: int) -> None:
            super().__init__()
            self.dense = nn.Linear(hidden, hidden)
            self.activation = nn.Tanh()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.activation(self.dense(x[:, 0]))

    class BertModel(nn.Module):
        """Token ids in; the last hidden states and the pooled output out (HF's BertModel
        without an attention mask: every token attends to every token)."""

        def __init__(self, layers: int, hidden: int, heads: int, intermediate: int, vocab: int, max_positions: int) -> None:
            super().__init__()
            self.embeddings = BertEmbeddings(vocab, hidden, max_positions)
            self.encoder = BertEncoder(layers, hidden, heads, intermediate)
            self.pooler = BertPooler(hidden)

        def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            hidden_states = self.encoder(self.embeddings(input_ids))
            return hidden_states, self.pooler(hidden_states)

    class Conv1D(nn.Module):  # GPT-2's linear layer: weight stored (in, out)
        def __init__(self, nf: int, nx: int) -> None:
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)
            nn.init.normal_(self.bias, std=0.02)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            shape = x.size()[:-1] + (self.nf,)
            return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(shape)

    class GPT2Attention(nn.Module):
        def __init__(self, hidden: int, heads: int, max_positions: int) -> None:
            super().__init__()
            # HF's eager attention: a causal mask kept as a buffer, sliced to the sequence.
            mask = torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions)
            self.register_buffer("bias", mask, persistent=False)
            self.num_heads, self.head_dim = heads, hidden // heads
            self.c_attn = Conv1D(3 * hidden, hidden)
            self.c_proj = Conv1D(hidden, hidden)
            self.attn_dropout = nn.Dropout(0.1)
            self.resid_dropout = nn.Dropout(0.1)

        def split(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(x.shape[0], x.shape[1], self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            hidden = x.shape[-1]
            q, k, v = (self.split(t) for t in self.c_attn(x).split(hidden, dim=2))
            weights = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            seq = x.shape[1]
            causal = self.bias[:, :, :seq, :seq]
            weights = torch.where(causal, weights, torch.tensor(torch.finfo(weights.dtype).min, dtype=weights.dtype))
            weights = self.attn_dropout(nn.functional.softmax(weights, dim=-1))
            out = torch.matmul(weights, v).permute(0, 2, 1, 3).contiguous().view(x.shape[0], seq, hidden)
            return self.resid_dropout(self.c_proj(out))

    class GPT2MLP(nn.Module):
        def __init__(self, hidden: int, inner: int) -> None:
            super().__init__()
            self.c_fc = Conv1D(inner, hidden)
            self.c_proj = Conv1D(hidden, inner)
            self.act = nn.GELU(approximate="tanh")  # HF's gelu_new
            self.dropout = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.dropout(self.c_proj(self.act(self.c_fc(x))))

    class GPT2Block(nn.Module):
        def __init__(self, hidden: int, heads: int, max_positions: int, eps: float = 1e-5) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden, eps=eps)
            self.attn = GPT2Attention(hidden, heads, max_positions)
            self.ln_2 = nn.LayerNorm(hidden, eps=eps)
            self.mlp = GPT2MLP(hidden, 4 * hidden)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2Model(nn.Module):
        def __init__(self, layers: int, hidden: int, heads: int, vocab: int, max_positions: int) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(max_positions, hidden)
            self.drop = nn.Dropout(0.1)
            self.h = nn.ModuleList([GPT2Block(hidden, heads, max_positions) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
            x = self.drop(self.wte(input_ids) + self.wpe(positions))
            for block in self.h:
                x = block(x)
            return self.ln_f(x)

    class GPT2LMHeadModel(nn.Module):
        """Token ids in, next-token logits out; the LM head shares the token embedding."""

        def __init__(self, layers: int, hidden: int, heads: int, vocab: int, max_positions: int) -> None:
            super().__init__()
            self.transformer = GPT2Model(layers, hidden, heads, vocab, max_positions)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
            self.lm_head.weight = self.transformer.wte.weight

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return self.lm_head(self.transformer(input_ids))

    return SimpleNamespace(**locals())


def _text_model(make: Callable[[SimpleNamespace], Any], seed: int) -> Any:
    import torch

    torch.manual_seed(seed)
    return make(_text()).eval()


def bert(
    batch: int = 1,
    seq: int = 128,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int | None = None,
    vocab: int = 30522,
    max_positions: int = 512,
    seed: int = 0,
    layers_per_ipu: tuple[int, ...] | None = None,
) -> tuple[Any, tuple]:
    """BERT (HF `BertModel`, BERT-base's sizes by default): token ids (batch, seq) in; hidden
    states and pooled output out. `layers_per_ipu` splits the encoder's layers over IPUs 0, 1,
    ... with `BeginBlock` (the embeddings on IPU 0, the pooler on the last)."""
    module = _text_model(lambda t: t.BertModel(layers, hidden, heads, intermediate or 4 * hidden, vocab, max(max_positions, seq)), seed)
    _split(module.encoder.layer, "encoder.layer", layers_per_ipu)
    return module, _tokens(batch, seq, vocab, seed)


def _split(layers: Any, path: str, layers_per_ipu: tuple[int, ...] | None) -> None:
    """Marks where each IPU's share of `layers` begins (PopTorch's `BeginBlock`), the first
    IPU's at the model's start; Graphcore ran BERT-Large as [3, 7, 7, 7] over 4 IPUs."""
    if layers_per_ipu is None:
        return
    if sum(layers_per_ipu) != len(layers) or min(layers_per_ipu) < 1:
        raise ValueError(f"layers_per_ipu {list(layers_per_ipu)} must be positive counts summing to the {len(layers)} layers")
    for ipu, first in enumerate(itertools.accumulate(layers_per_ipu[:-1]), start=1):
        BeginBlock(layers[first], f"{path}.{first}", ipu_id=ipu)


def bert_encoder(
    batch: int = 1, seq: int = 128, layers: int = 12, hidden: int = 768, heads: int = 12, intermediate: int | None = None, seed: int = 0
) -> tuple[Any, tuple]:
    """BERT-base's encoder stack alone (HF `BertEncoder`): embedded tokens (batch, seq, hidden) in."""
    import torch

    module = _text_model(lambda t: t.BertEncoder(layers, hidden, heads, intermediate or 4 * hidden), seed)
    return module, (torch.randn(batch, seq, hidden, generator=torch.Generator().manual_seed(seed + 2)),)


def gpt2(
    batch: int = 1,
    seq: int = 128,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    vocab: int = 50257,
    max_positions: int = 1024,
    seed: int = 0,
    layers_per_ipu: tuple[int, ...] | None = None,
) -> tuple[Any, tuple]:
    """GPT-2 (HF `GPT2LMHeadModel`, GPT-2 small's sizes by default): token ids (batch, seq) in,
    logits (batch, seq, vocab) out. `layers_per_ipu` splits the blocks over IPUs as `bert`'s."""
    module = _text_model(lambda t: t.GPT2LMHeadModel(layers, hidden, heads, vocab, max(max_positions, seq)), seed)
    _split(module.transformer.h, "transformer.h", layers_per_ipu)
    return module, _tokens(batch, seq, vocab, seed)


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
