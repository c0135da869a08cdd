"""A forward's arguments as PopTorch takes them: tensors anywhere in tuples, lists and dicts,
keyword arguments, and Python values (floats, ints, bools, strings, None) compiled into the
program as constants.

PopTorch's argument parser (poptorch `python/_args_parser.py`, `validateInputs`) compiles the
non-tensor arguments into the graph and refuses a later call whose value differs ("Other types
are compiled in the graph (scalars, etc) and therefore should be an exact match to the value
used to compile the model"); so does `Signature.tensors` here, naming the argument. The program
itself takes the tensors alone, in the order pytree flattens the bound arguments;
`Signature.bound_module` is the module exported for it.

torch is imported inside the functions: the rest of ipu_mlir does not need it.
"""

from __future__ import annotations

import copy
import inspect
from dataclasses import dataclass
from typing import Any

import numpy as np

from ipu_mlir.target.diagnostics import IpuError

__all__ = ["Signature"]


class _Tensor:
    """A tensor's place among a signature's constants (None is a constant)."""

    def __repr__(self) -> str:
        return "<tensor>"


_TENSOR = _Tensor()


def _is_tensor(value: Any) -> bool:
    return isinstance(value, np.ndarray) or type(value).__module__.startswith("torch") and hasattr(value, "shape")


def _describe(value: Any) -> str:
    if _is_tensor(value):
        return f"{'x'.join(map(str, value.shape)) or 'scalar'} {str(value.dtype).removeprefix('torch.')}"
    return f"{type(value).__name__} {value!r}"


@dataclass(frozen=True)
class Signature:
    """How a call's arguments bind to `forward`'s parameters: the pytree structure of the bound
    arguments, each leaf's name (`alpha`, `pair[0]`, `batch['x']`), and each non-tensor leaf's
    value."""

    parameters: inspect.Signature
    spec: Any  # torch's TreeSpec of the bound arguments (a dict by parameter name)
    names: tuple[str, ...]
    constants: tuple[Any, ...]
    tensor_types: tuple[tuple[tuple[int, ...], str], ...]  # each tensor leaf's shape and dtype, as compiled
    defaults: bool = False  # the parameters a call leaves out are bound to their defaults (Signature.of)

    @staticmethod
    def of(module: Any, args: tuple, kwargs: dict, defaults: bool = False) -> tuple[Signature, list[Any]]:
        """The signature of a call of `module` with `args` and `kwargs`, and its tensors.
        `defaults`: the parameters the call leaves out bound to their defaults, so that passing
        a default's value matches leaving it out (trainingModel's, as PopTorch's parser fills them)."""
        from torch.utils import _pytree as pytree

        parameters = inspect.signature(module.forward)
        try:
            bound = parameters.bind(*args, **kwargs)
        except TypeError as error:
            raise IpuError(f"{type(module).__name__}.forward{parameters}: {error}") from None
        if defaults:
            bound.apply_defaults()
        leaves, spec = pytree.tree_flatten_with_path(dict(bound.arguments))
        names = tuple(_name(path) for path, _ in leaves)
        values = [value for _, value in leaves]
        constants = tuple(_TENSOR if _is_tensor(value) else value for value in values)
        tensors = [value for value in values if _is_tensor(value)]
        types = tuple((tuple(tensor.shape), str(tensor.dtype).removeprefix("torch.")) for tensor in tensors)
        return Signature(parameters, spec, names, constants, types, defaults), tensors

    @property
    def plain(self) -> bool:
        """Whether the call is positional tensors only: the module is exported as it is."""
        positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        kinds = [self.parameters.parameters[name].kind for name in self.names if name in self.parameters.parameters]
        return len(kinds) == len(self.names) and all(kind in positional for kind in kinds) and all(c is _TENSOR for c in self.constants)

    def bind(self, tensors: list[Any]) -> tuple[tuple, dict]:
        """The (args, kwargs) of a call whose tensors are `tensors` and constants this signature's."""
        from torch.utils import _pytree as pytree

        given = iter(tensors)
        leaves = [next(given) if constant is _TENSOR else constant for constant in self.constants]
        bound = inspect.BoundArguments(self.parameters, pytree.tree_unflatten(leaves, self.spec))
        return bound.args, bound.kwargs

    def tensors(self, module: Any, args: tuple, kwargs: dict, check_types: bool = True) -> list[Any]:
        """The tensors of a later call, checked against the compiled one's: the same structure,
        the same constants, the same shapes and types (one line naming the argument, else).
        `check_types=False` leaves the shapes and types to the caller (trainingModel checks
        each micro-batch's)."""
        again = "; compile the model again for it, as PopTorch asks"
        called, tensors = Signature.of(module, args, kwargs, defaults=self.defaults)
        if called.spec != self.spec:
            raise IpuError(f"the arguments ({', '.join(called.names)}) differ from the compiled ({', '.join(self.names)}){again}")
        for name, constant, value in zip(self.names, self.constants, called.constants):
            if type(constant) is not type(value) or constant != value:
                compiled = "a tensor" if constant is _TENSOR else f"the constant {constant!r}"
                raise IpuError(
                    f"argument {name}: compiled as {compiled}, got {_describe(_leaf(called, name, tensors, value))}"
                    f" (a Python value is compiled into the program: pass a tensor to change it between calls){again}"
                )
        if not check_types:
            return tensors
        for name, (shape, dtype), (new_shape, new_dtype), tensor in zip(
            self._tensor_names, self.tensor_types, called.tensor_types, tensors
        ):
            if (shape, dtype) != (new_shape, new_dtype):
                raise IpuError(
                    f"argument {name}: compiled for {'x'.join(map(str, shape)) or 'scalar'} {dtype}, got {_describe(tensor)}{again}"
                )
        return tensors

    @property
    def _tensor_names(self) -> list[str]:
        return [name for name, constant in zip(self.names, self.constants) if constant is _TENSOR]

    def bound_module(self, module: Any) -> Any:
        """`module` with a forward taking this signature's tensors alone, the constants bound: a
        shallow copy, so its layers (and their paths in the locations) are `module`'s own."""
        bound = copy.copy(module)

        def forward(*tensors: Any) -> Any:
            args, kwargs = self.bind(list(tensors))
            return module.forward(*args, **kwargs)

        bound.forward = forward
        return bound


def _leaf(signature: Signature, name: str, tensors: list[Any], constant: Any) -> Any:
    if constant is not _TENSOR:
        return constant
    return tensors[signature._tensor_names.index(name)]


def _name(path: tuple) -> str:
    """`pair[0]`, `batch['x']`: a leaf's pytree path, its first key the parameter's name."""
    head, *rest = path
    return str(head.key) + "".join(str(key) for key in rest)
