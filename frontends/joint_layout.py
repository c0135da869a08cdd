"""The variables of the joint training step (frontends/joint.py) and the pure function over them:
`Layout` lays out the parameters, buffers, optimizer state, hyper-parameters, accumulators and
the random generator's seed and counter as device variables, and writes the step (forward,
loss, backward, update) as a function of them and one micro-batch; `unused_parameters` finds
the trainable parameters the loss does not reach. Apart from joint.py, which traces, imports
and marks the step: this module is what the step computes."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_mlir.frontends.accumulation_loop import accumulated
from ipu_mlir.frontends.joint_all_reduce import reduced_apart
from ipu_mlir.frontends.joint_loss import split_result
from ipu_mlir.frontends.joint_trace import layer_names, layer_of, phase, without_mkldnn
from ipu_mlir.frontends.mixed_precision import MixedPrecisionStep, to_numpy
from ipu_mlir.frontends.optimizers import OptimizerRule, host_state, hyper_variable, steps_taken


@dataclass
class Variable:
    name: str  # param:fc1.weight, buffer:bn1.running_mean, opt:exp_avg:fc1.weight, hyper:lr, ...
    value: np.ndarray  # its value when the step was built
    updated: bool = False  # the step has a result for it


@dataclass
class _Returns:
    """What the model's forward returns, learnt while tracing it."""

    outputs: int = 0  # tensors beside the loss
    structure: Any = None  # split_result's: None when forward returned the loss alone


class Layout:
    """The step's variables and the pure function over them."""

    def __init__(
        self,
        model: Any,
        optimizer: Any,
        rule: OptimizerRule,
        accumulation: int,
        seed: int,
        replicas: int = 1,
        mixed: MixedPrecisionStep | None = None,
    ) -> None:
        self.model, self.rule, self.accumulation, self.replicas, self.mixed = model, rule, accumulation, replicas, mixed
        self.pipelined = 0  # micro-batches in one run, a loop round one (build_step)
        self.unused: set[str] = set()  # trainable parameters the loss does not reach (`unused_parameters`)
        self.bind: Callable[[list[Any]], tuple[tuple, dict]] | None = None  # forward's arguments from the tensors (build_step)
        group_of = {id(param): index for index, group in enumerate(optimizer.param_groups) for param in group["params"]}
        self.params = dict(model.named_parameters())
        self.trainable = {name: group_of[id(p)] for name, p in self.params.items() if p.requires_grad and id(p) in group_of}
        self.buffers = {**dict(model.named_buffers()), **_tensor_attributes(model)}
        hyper = [rule.hyper_values(group) for group in optimizer.param_groups]  # lr, momentum, betas: device variables
        self.hyper_names = [{key: hyper_variable(key, index) for key in values} for index, values in enumerate(hyper)]
        variables = [Variable(f"param:{name}", _array(p)) for name, p in self.params.items()]
        variables += [Variable(f"buffer:{name}", _array(b)) for name, b in self.buffers.items()]
        variables += [
            Variable(hyper_variable(key, index), np.array(value, np.float32))
            for index, values in enumerate(hyper)
            for key, value in values.items()
        ]
        if mixed is not None:
            variables += [Variable(name, value) for name, value in mixed.variables(self.params)]
        state_dtype = (lambda p: np.dtype(np.float32)) if mixed is not None else numpy_dtype  # PopTorch's accum_type f32
        if rule.counts_steps:
            variables.append(Variable("opt:step", np.array(steps_taken(optimizer), np.float32)))
        for name, group in self.trainable.items():
            param = self.params[name]
            variables += [
                Variable(f"opt:{kind}:{name}", host_state(optimizer, param, kind, state_dtype(param))) for kind in rule.state_names(group)
            ]
        if accumulation > 1:
            variables.append(Variable("accum:count", np.array(0, np.float32)))
            variables += [
                Variable(f"accum:grad:{name}", np.zeros(self.params[name].shape, state_dtype(self.params[name]))) for name in self.trainable
            ]
        variables += [Variable("random:seed", np.array(seed, np.int32)), Variable("random:step", np.array(0, np.int32))]
        self.variables = variables
        self.returns = _Returns()

    def step_function(self, mean: bool) -> Any:
        import torch
        from torch.func import functional_call, grad_and_value

        names = [variable.name for variable in self.variables]
        model, rule, returns, accumulation, mixed = self.model, self.rule, self.returns, self.accumulation, self.mixed

        def step(*flat: Any) -> list[Any]:
            values = dict(zip(names, flat))
            trainable = {name: values[f"param:{name}"] for name in self.trainable}
            frozen = {name: values[f"param:{name}"] for name in self.params if name not in self.trainable}
            buffers = {name: values[f"buffer:{name}"] for name in self.buffers}

            def loss_of(params: dict, buffers: dict, batch: tuple) -> Any:
                with phase("forward"), layer_names(model), mixed.linears() if mixed else contextlib.nullcontext():
                    buffers = {name: value.clone() for name, value in buffers.items()}  # updated in place by BatchNorm
                    args, kwargs = self.bind(list(batch)) if self.bind else (tuple(batch), {})
                    result = functional_call(model, {**params, **frozen, **buffers}, tuple(args), kwargs)
                    outputs, loss, returns.structure = split_result(result)
                returns.outputs = len(outputs)
                backward = rule.scaled(loss.sum() if loss.dim() else loss)  # identity_loss(reduction="none"): a gradient of ones
                if mixed is not None:  # the backward pass differentiates the scaled loss, in f32
                    return mixed.scaled(backward, values), (loss, outputs, buffers)
                return backward, (loss, outputs, buffers)

            with phase("backward"):
                grads, (_, (loss, outputs, buffers)) = grad_and_value(loss_of, has_aux=True)(trainable, buffers, flat[len(names) :])
            if self.pipelined:  # summed over the step's micro-batches: the loop round the above (accumulation_loop.py)
                for name, grad in grads.items():
                    with layer_of(name):
                        grads[name] = accumulated(grad) / self.pipelined if mean else accumulated(grad)
            with phase("update"):
                return update(values, trainable, grads, loss, outputs, buffers)

        def update(values: dict, trainable: dict, grads: dict, loss: Any, outputs: list, new_buffers: dict) -> list[Any]:
            new = {f"buffer:{name}": value for name, value in new_buffers.items()}
            apply = None
            if mixed is not None:
                grads = mixed.unscaled(grads, values)
            if accumulation > 1:
                count = values["accum:count"] + 1
                apply = count == accumulation
                new["accum:count"] = torch.where(apply, torch.zeros_like(count), count)
                for name, grad in list(grads.items()):
                    with layer_of(name):
                        total = values[f"accum:grad:{name}"] + grad
                        grads[name] = total / accumulation if mean else total
                        new[f"accum:grad:{name}"] = torch.where(apply, torch.zeros_like(total), total)
            if self.replicas > 1:  # the update's gradients, the same on every replica
                grads = reduced_apart(grads, apply)
            if mixed is not None:  # an inf or NaN gradient skips the update; dynamic scaling moves the scale
                finite = mixed.all_finite(grads)
                scale = mixed.next_scale(values, finite)
                if apply is not None:  # the scale moves with the update: on the last micro-batch of each group
                    scale = {key: torch.where(apply, value, values[key]) for key, value in scale.items()}
                new.update(scale)
                apply = finite if apply is None else apply & finite
            grads = rule.clipped(grads)  # PopTorch's max_grad_norm, on the gradients the update takes
            step_count, offset = values.get("opt:step"), 0
            for name, group in self.trainable.items():
                if name in self.unused:  # torch's optimizers skip a parameter whose .grad is None: no decay, no momentum
                    continue
                with layer_of(name):  # ipu-shard: a parameter's update on its layer's IPU
                    state = {kind: values[f"opt:{kind}:{name}"] for kind in rule.state_names(group)}
                    weight = trainable[name] if mixed is None else mixed.weight(name, values, trainable[name])
                    hyper = {key: values[variable] for key, variable in self.hyper_names[group].items()}
                    param, state = rule.update(group, weight, grads[name], state, hyper, step_count)
                    updated = {f"opt:{kind}:{name}": value for kind, value in state.items()}
                    if mixed is not None:  # `param` is the f32 weight: kept as the master copy, narrowed for the forward
                        if f"master:{name}" in values:
                            updated[f"master:{name}"] = param
                        param, offset = mixed.narrowed(name, param, values, offset), offset + param.numel()
                    updated[f"param:{name}"] = param
                    for key, value in updated.items():
                        new[key] = value if apply is None else torch.where(apply, value, values[key])
            new["random:step"] = values["random:step"] + 1  # fresh random numbers each micro-batch
            if step_count is not None:
                new["opt:step"] = step_count + 1 if apply is None else step_count + apply.to(step_count.dtype)
            return [*outputs, loss, *(new.get(name, values[name]) for name in names)]

        return step


def unused_parameters(layout: Layout, batch: tuple) -> set[str]:
    """The trainable parameters the loss does not depend on (a head the forward never calls, a
    parameter read only through a comparison): after `loss.backward()` their `.grad` is None,
    and torch.optim's SGD, Adam and AdamW leave them and their state as they are, weight decay
    and momentum included, where `grad_and_value`'s zero gradient would apply them. Found by a
    forward and backward on fake tensors; where that fails, none (every parameter updated)."""
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.func import functional_call

    try:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode, warnings.catch_warnings(), without_mkldnn():
            warnings.simplefilter("ignore")
            fake = {name: mode.from_tensor(p.detach()).requires_grad_(name in layout.trainable) for name, p in layout.params.items()}
            buffers = {name: mode.from_tensor(value.detach().clone()) for name, value in layout.buffers.items()}
            values = [mode.from_tensor(value.chunk(layout.pipelined)[0] if layout.pipelined else value) for value in batch]
            args, kwargs = layout.bind(values) if layout.bind else (tuple(values), {})
            _, loss, _ = split_result(functional_call(layout.model, {**fake, **buffers}, tuple(args), kwargs))
            trained = list(layout.trainable)
            grads = torch.autograd.grad(loss.sum(), [fake[name] for name in trained], allow_unused=True)
    except Exception:  # noqa: BLE001 (an op fake tensors cannot run: the update as before)
        return set()
    return {name for name, grad in zip(trained, grads) if grad is None}


def _tensor_attributes(model: Any) -> dict[str, Any]:
    """The tensors a module keeps as plain attributes, neither parameters nor buffers (a causal
    mask as `self.mask = torch.triu(...)`): variables of the step as buffers are, since the fake
    tracing refuses a real tensor (`functional_call` swaps plain attributes too)."""
    import torch

    return {
        f"{prefix}.{name}" if prefix else name: value
        for prefix, module in model.named_modules()
        for name, value in vars(module).items()
        if isinstance(value, torch.Tensor) and not isinstance(value, torch.nn.Parameter)
    }


def _array(tensor: Any) -> np.ndarray:
    return np.array(to_numpy(tensor), copy=True)


def numpy_dtype(tensor: Any) -> np.dtype:
    return to_numpy(tensor).dtype
