"""The zoo's vision models: torchvision's definitions layer for layer, with its attribute names
(`features.0`, `layer1.0.conv1`, `downsample.0`, `classifier.6`), `width` scaling every channel
count; built through `zoo.build` (frontends/zoo.py).

torch is imported when a model is built: the classes are defined on first use.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any


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
