"""`torch.compile(model, backend="ipu")`: TorchDynamo's graphs compiled for the simulated IPU.

    compiled = torch.compile(model.eval(), backend="ipu", options={"target": "tiny"})
    y = compiled(x)                       # each graph dynamo captures runs on the simulator

The backend is found by name through the `torch_dynamo_backends` entry point (pyproject.toml),
as torch's backend registry looks up out-of-tree backends. Dynamo hands it one FX graph per
piece of the model between graph breaks (a `print`, a branch on a tensor's value), with
example inputs; each graph is compiled separately, as dynamo does, and the Python between them
runs as usual.

A graph is compiled for concrete shapes only: the first call with a new signature (the shapes
and dtypes of its tensors, the values of its integers) exports it with torch-mlir and compiles
it (`frontends.torch`), later calls with that signature reuse it. Dynamo recompiles on a new
shape by itself and, after one, may hand over a graph with symbolic sizes (its automatic
dynamic shapes); those sizes are integers by the time the graph is called, so no symbolic
shape reaches torch-mlir either way.

The graph's parameters and buffers (dynamo passes the module's state as inputs) become
constants of the program, loaded once; one changed in place since (its version counter moved)
compiles the graph again. Inference only: outputs carry no autograd history.

Options (`torch.compile(..., options={...})`): `target` (default gc200) and `profile_dir` (also
`IPU_MLIR_REPORT`: each compiled graph writes its profile there, runtime/profile.py's
`write_profile`). `backend_options` is where the training issue's `Options` class will be read.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.runtime.profile import write_profile
from ipu_mlir.target import DEFAULT_TARGET, load_target
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["BackendOptions", "backend_options", "ipu_backend"]

REPORT_ENVIRONMENT = "IPU_MLIR_REPORT"


@dataclass(frozen=True)
class BackendOptions:
    target: str = DEFAULT_TARGET
    profile_dir: str | None = None  # where each compiled graph writes its profile


def backend_options(options: Mapping[str, Any] | None) -> BackendOptions:
    """The backend's options from `torch.compile(..., options=...)`: a plain dict today (the
    training issue's `Options` will be converted here); unknown keys are refused by name."""
    given = dict(options or {})
    known = set(BackendOptions.__dataclass_fields__)
    unknown = sorted(set(given) - known)
    if unknown:
        raise IpuError(f"unknown ipu backend option {', '.join(map(repr, unknown))}; known: {', '.join(sorted(known))}")
    given.setdefault("profile_dir", os.environ.get(REPORT_ENVIRONMENT) or None)
    result = BackendOptions(**given)
    load_target(result.target)  # an unknown target is refused now, not at the first call
    return result


def ipu_backend(
    graph_module: Any, example_inputs: list[Any], options: Mapping[str, Any] | None = None, mode: str | None = None
) -> Callable:
    """Dynamo's backend entry point: `graph_module` (an FX `GraphModule` of torch-level ops)
    and its example inputs in, a callable running it on the simulator out. torch.compile's
    `mode` is accepted and not used: there is one pipeline."""
    return _SimulatedGraph(graph_module, _constant_inputs(graph_module, example_inputs), backend_options(options))


def _constant_inputs(graph_module: Any, example_inputs: list[Any]) -> list[int]:
    """Positions of the inputs that are the module's state: its parameters and buffers (a
    batch norm's running statistics), which dynamo passes as inputs (its source names them)."""
    import torch

    placeholders = [node for node in graph_module.graph.nodes if node.op == "placeholder"]
    constants = []
    for index, (node, value) in enumerate(zip(placeholders, example_inputs)):
        source = getattr(node.meta.get("grapharg"), "source", None)
        if isinstance(value, torch.nn.Parameter) or "._buffers[" in str(getattr(source, "name", "")):
            constants.append(index)
    return constants


class _SimulatedGraph:
    """One dynamo graph, compiled once per call signature."""

    count = 0  # graphs made in this process: names their profiles

    def __init__(self, graph_module: Any, parameters: list[int], options: BackendOptions):
        _clean_layer_names(graph_module)
        self.graph_module = graph_module
        self.parameters = parameters  # positions of the parameters and buffers: constants of the program
        self.options = options
        self.compiled: dict[tuple, tuple[torch_frontend.CompiledModule, tuple]] = {}
        _SimulatedGraph.count += 1
        self.name = f"graph{_SimulatedGraph.count}"

    def __call__(self, *inputs: Any) -> Any:
        import torch

        signature = tuple(_signature(value) for value in inputs)
        versions = tuple(inputs[index]._version for index in self.parameters)
        compiled, compiled_versions = self.compiled.get(signature, (None, None))
        if compiled is None or compiled_versions != versions:
            compiled = self._compile(inputs)
            self.compiled[signature] = (compiled, versions)
        tensors = [value for index, value in enumerate(inputs) if index not in self.parameters and isinstance(value, torch.Tensor)]
        outputs = compiled(*tensors)
        return list(outputs) if isinstance(outputs, tuple) else [outputs]

    def _compile(self, inputs: tuple) -> torch_frontend.CompiledModule:
        import torch
        from torch.fx import traceback as fx_traceback

        frozen = _frozen(self.graph_module, inputs, set(self.parameters))
        activations = [value for index, value in enumerate(inputs) if index in frozen.activations]
        # Dynamo's node metadata (each node's module path) is kept through torch.export's
        # trace of the graph only when it interprets the graph with node metadata preserved.
        with fx_traceback.preserve_node_meta(), torch.no_grad():
            imported = torch_frontend.export(frozen, *activations)
        program = torch_frontend.compile_program(imported, self.options.target)
        compiled = torch_frontend.CompiledModule(program, self.options.target, imported, verified=True)
        if self.options.profile_dir:
            shapes = "_".join("x".join(map(str, value.shape)) for value in activations)
            write_profile(compiled.profile, os.path.join(self.options.profile_dir, f"{self.name}_{shapes}.json"))
        return compiled


def _frozen(graph_module: Any, inputs: tuple, parameters: set[int]) -> Any:
    """The graph as a module taking its tensors other than parameters (what torch.export
    traces), its parameters buffers (constants of the program), its integer inputs fixed to
    their values in `inputs`."""
    import torch

    class Frozen(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.activations = [i for i, value in enumerate(inputs) if i not in parameters and isinstance(value, torch.Tensor)]
            self.fixed = {i: value for i, value in enumerate(inputs) if i not in parameters and i not in self.activations}
            for i in parameters:
                self.register_buffer(f"input{i}", inputs[i].detach())
            self.interpreter = torch.fx.Interpreter(graph_module)
            self.count = len(inputs)

        def forward(self, *activations: Any) -> tuple:
            given = dict(zip(self.activations, activations)) | self.fixed
            arguments = [given[i] if i in given else getattr(self, f"input{i}") for i in range(self.count)]
            return tuple(self.interpreter.run(*arguments))

    return Frozen()


def _signature(value: Any) -> tuple:
    shape = getattr(value, "shape", None)
    return ("tensor", tuple(shape), str(value.dtype)) if shape is not None else ("value", value)


def _clean_layer_names(graph_module: Any) -> None:
    """Dynamo's module paths as `torch.export` writes them: "L['self'].layers._modules['0'].fc"
    and "L['self'].layers[0].fc" become "layers.0.fc" (the front end's locations take the innermost)."""
    for node in graph_module.graph.nodes:
        stack = node.meta.get("nn_module_stack")
        if stack:
            node.meta["nn_module_stack"] = {key: (_module_path(path), kind) for key, (path, kind) in stack.items()}


def _module_path(path: str) -> str:
    path = re.sub(r"^L\['[^']*'\]\.?", "", path)
    path = re.sub(r"\._modules\['([^']*)'\]", r".\1", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    return path.strip(".")
