"""Device variables emulated by streaming, until the simulator holds them itself.

The training front end talks to the device through the resident-variable API of the
contract in docs/training.md: `variables()`, `write_variable`, `read_variable`, and
`run(inputs, iterations=N)` taking and returning the streamed values only. This adapter gives
that API over today's simulator: it compiles the program with the `ipu.resident` attributes
removed, keeps each variable's value on the host, feeds it in as an argument and reads its
new value back from the results, once per iteration. Same numbers, more host traffic (every
variable crosses on every iteration): the simulator's own variables make that traffic go.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from ipu_mlir.frontends import api
from ipu_mlir.frontends.joint import RESIDENT_ATTR
from ipu_mlir.runtime.profile import Profile
from ipu_mlir.target.diagnostics import IpuError

__all__ = ["StreamedVariables"]


class StreamedVariables:
    """An L0 step program with `ipu.resident` variables, compiled and loaded for `target`.
    `compile_program(module, target)` compiles it (default: the default pipeline)."""

    def __init__(self, module: ir.Module, target: str, compile_program: Callable[[ir.Module, str], ir.Module] | None = None) -> None:
        with module.context:
            program = api.copy_module(module)
            main = next(op for op in program.body.operations if op.operation.name == "func.func")
            self._argument_names = _resident_names(main, "arg_attrs")
            self._result_names = _resident_names(main, "res_attrs")
            for key in ("arg_attrs", "res_attrs"):
                if key in main.attributes:
                    del main.attributes[key]
        compiled = (compile_program or api.compile_to_program)(program, target)
        self.simulator = api.load_simulator(compiled, target, verified=True)  # the default pipeline ends in ipu-verify
        self._shapes = dict(zip(self._argument_names, self.simulator.arguments))
        self._values: dict[str, np.ndarray] = {}

    @property
    def profile(self) -> Profile:
        return self.simulator.profile

    def variables(self) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
        return {name: shape for name, shape in self._shapes.items() if name is not None}

    def write_variable(self, name: str, array: np.ndarray) -> None:
        if name not in self._shapes or name is None:
            raise IpuError(f"no device variable '{name}'")
        shape, dtype = self._shapes[name]
        array = np.asarray(array)
        if array.shape != tuple(shape) or array.dtype != dtype:
            raise IpuError(f"device variable '{name}' is {_describe(shape, dtype)}, got {_describe(array.shape, array.dtype)}")
        self._values[name] = np.array(array, copy=True)

    def read_variable(self, name: str) -> np.ndarray:
        if name not in self._values:
            raise IpuError(f"device variable '{name}' was never written" if name in self._shapes else f"no device variable '{name}'")
        return self._values[name].copy()

    def run(self, inputs: Sequence[np.ndarray], iterations: int | None = None) -> list[np.ndarray]:
        """The streamed results of one run, or of `iterations` runs (each input then has a
        leading axis of `iterations`, each output is stacked along one)."""
        missing = [name for name in self.variables() if name not in self._values]
        if missing:
            raise IpuError(f"device variable '{missing[0]}' was never written")
        slices = [list(inputs)] if iterations is None else [[value[index] for value in inputs] for index in range(iterations)]
        runs = []
        for streamed in slices:
            feed = iter(streamed)
            arguments = [self._values[name] if name is not None else next(feed, None) for name in self._argument_names]
            if any(value is None for value in arguments) or next(feed, None) is not None:
                raise IpuError(f"the program streams {self._argument_names.count(None)} inputs, got {len(streamed)}")
            results = self.simulator.run(arguments)
            for name, value in zip(self._result_names, results):
                if name is not None:
                    self._values[name] = value
            runs.append([value for name, value in zip(self._result_names, results) if name is None])
        return runs[0] if iterations is None else [np.stack(values) for values in zip(*runs)]


def _resident_names(function: ir.Operation, key: str) -> list[str | None]:
    function_type = ir.FunctionType(ir.TypeAttr(function.attributes["function_type"]).value)
    if key not in function.attributes:
        return [None] * len(function_type.inputs if key == "arg_attrs" else function_type.results)
    names = []
    for attributes in ir.ArrayAttr(function.attributes[key]):
        attributes = ir.DictAttr(attributes)
        names.append(ir.StringAttr(attributes[RESIDENT_ATTR]).value if RESIDENT_ATTR in attributes else None)
    return names


def _describe(shape: Sequence[int], dtype: np.dtype) -> str:
    return f"{'x'.join(map(str, shape)) or 'scalar'} {np.dtype(dtype)}"
