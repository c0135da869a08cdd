"""Python passes: how they are declared and registered, and the pipeline text that mixes them
with upstream MLIR passes.

A pass is a dataclass deriving from `ModulePass`, registered with `@register_pass`:

    @register_pass
    @dataclass
    class SetTarget(ModulePass):
        '''Record the target machine in the module.   <- summary line, then a before/after example
        ...'''

        name = "ipu-set-target"
        target: str = field(metadata={"help": "target name or path of a target .toml file"})

        def run(self, module: ir.Operation) -> None:
            ...

Its fields are its options (`str`, `int`, `float` or `bool`; a field without default is a
required option). A number's metadata may bound it: `minimum` and `maximum` (inclusive),
`above` (exclusive), e.g. `field(default=0.6, metadata={"help": ..., "above": 0, "maximum": 1})`
for a fraction in (0, 1]; a value out of bounds, or a float that is not finite, is an error
at the option in the pipeline text. Pipelines spell them with dashes, MLIR style: field `tile_budget` is
`ipu-foo{tile-budget=0.5}`. `run` raises `IpuError` to fail; the error is emitted as an MLIR
diagnostic at its location.

`build_pass_manager("builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))")`
gives a PassManager running the Python passes and the upstream ones in the order written.
"""

from __future__ import annotations

import abc
import dataclasses
import difflib
import functools
import inspect
import math
import os
import re
import sys
import tempfile
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

from mlir import ir, passmanager

from ipu_mlir.target.diagnostics import IpuError

_OPTION_TYPES = (str, int, float, bool)
_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number"}
_PASS_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]*")
_TRUE = frozenset({"true", "1"})
_FALSE = frozenset({"false", "0"})
_METADATA_KEYS = frozenset({"help", "minimum", "maximum", "above"})


class PipelineError(Exception):
    """A pipeline or pass-option string that cannot be built; `offset` points into the pipeline
    text when known."""

    def __init__(self, message: str, offset: int | None = None):
        super().__init__(message)
        self.message = message
        self.offset = offset


class ModulePass(abc.ABC):
    """Base of every Python pass: runs once on the whole `builtin.module`."""

    name: ClassVar[str]
    # The docstring as written: `@dataclass` fills in a signature when there is none, which must
    # not pass for a summary.
    _written_doc: ClassVar[str | None]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._written_doc = cls.__dict__.get("__doc__")

    @abc.abstractmethod
    def run(self, module: ir.Operation) -> None:
        """Transforms or checks `module` in place; raises `IpuError` (or an ExceptionGroup of
        them) on failure."""

    @classmethod
    def summary(cls) -> str:
        return cls.description().splitlines()[0]

    @classmethod
    def description(cls) -> str:
        return inspect.cleandoc(cls._written_doc or "")

    @classmethod
    def options(cls) -> tuple[PassOption, ...]:
        return _options_of(cls)


@dataclass(frozen=True)
class PassOption:
    """One option of a pass, as pipelines spell it."""

    name: str
    field_name: str
    type: type
    help: str
    default: object = dataclasses.MISSING
    minimum: float | None = None
    maximum: float | None = None
    above: float | None = None

    @property
    def required(self) -> bool:
        return self.default is dataclasses.MISSING

    def usage(self) -> str:
        default = "required" if self.required else f"default: {_format_value(self.default)}"
        bounds = f"{self.bounds()}; " if self.bounds() else ""
        return f"{self.name}=<{self.type.__name__}>  {self.help} ({bounds}{default})"

    def bounds(self) -> str:
        """The bounds in words (`> 0 and <= 1`), or ''."""
        bounds = ((">", self.above), (">=", self.minimum), ("<=", self.maximum))
        return " and ".join(f"{word} {_format_value(bound)}" for word, bound in bounds if bound is not None)

    def check(self, value: object) -> str | None:
        """Why `value` is out of this option's bounds, or None."""
        if self.type is float and not math.isfinite(typing.cast(float, value)):
            return "must be finite"
        number = typing.cast(float, value)
        below = (self.above is not None and number <= self.above) or (self.minimum is not None and number < self.minimum)
        if below or (self.maximum is not None and number > self.maximum):
            return f"must be {self.bounds()}"
        return None


_REGISTRY: dict[str, type[ModulePass]] = {}


def register_pass(cls: type[ModulePass]) -> type[ModulePass]:
    """Class decorator adding a `ModulePass` dataclass to the registry under `cls.name`."""
    where = f"pass class {cls.__qualname__}"
    if not (isinstance(cls, type) and issubclass(cls, ModulePass)):
        raise TypeError(f"{where}: a pass must derive from ModulePass")
    if "__dataclass_fields__" not in cls.__dict__:
        raise TypeError(f"{where}: a pass must be a @dataclass (put @register_pass above @dataclass)")
    name = cls.__dict__.get("name")
    if not isinstance(name, str) or not _PASS_NAME.fullmatch(name):
        raise TypeError(
            f'{where}: set the class attribute `name` (without type annotation) to the pipeline name, e.g. name = "ipu-my-pass"'
        )
    if not cls.description():
        raise TypeError(f"{where}: a pass needs a docstring: a one-line summary, then a before/after example")
    if inspect.isabstract(cls):
        raise TypeError(f"{where}: a pass must define run(self, module)")
    _options_of(cls)  # rejects unsupported option fields now rather than at first use
    registered = _REGISTRY.get(name)
    # The same class registered again (a plugin loaded twice) replaces itself.
    if registered is not None and (registered.__module__, registered.__qualname__) != (cls.__module__, cls.__qualname__):
        raise ValueError(f"{where}: pass name '{name}' is already taken by {registered.__module__}.{registered.__qualname__}")
    if registered is None and _is_upstream_pass(name):
        raise ValueError(f"{where}: pass name '{name}' is already an upstream MLIR pass")
    _REGISTRY[name] = cls
    return cls


def registered_passes() -> list[type[ModulePass]]:
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def lookup_pass(name: str) -> type[ModulePass] | None:
    return _REGISTRY.get(name)


def did_you_mean(name: str) -> str:
    """`; did you mean 'x'?` naming registered passes spelled like `name`, or ''."""
    close = difflib.get_close_matches(name, _REGISTRY, n=3, cutoff=0.8)  # names share "ipu-"
    return f"; did you mean {' or '.join(repr(candidate) for candidate in close)}?" if close else ""


def build_pass(name: str, options: str = "") -> ModulePass:
    """The registered pass `name` configured from an option string like `target=tiny budget=0.5`."""
    cls = _REGISTRY.get(name)
    if cls is None:
        raise PipelineError(f"no Python pass named '{name}'{did_you_mean(name)}")
    by_name = {option.name: option for option in cls.options()}
    values: dict[str, object] = {}
    for key, text in _split_options(name, options):
        if not by_name:
            raise PipelineError(f"pass '{name}' takes no options, got '{key}'")
        option = by_name.get(key)
        if option is None:
            raise PipelineError(f"pass '{name}' has no option '{key}'; valid options: {', '.join(by_name)}")
        if option.field_name in values:
            raise PipelineError(f"option '{key}' of pass '{name}' is given twice")
        values[option.field_name] = _checked_value(name, option, text)
    missing = [option.name for option in cls.options() if option.required and option.field_name not in values]
    if missing:
        raise PipelineError(f"pass '{name}' needs option {', '.join(missing)} (e.g. {name}{{{missing[0]}=...}})")
    return cls(**values)


def add_pass(pass_manager: passmanager.PassManager, pass_: ModulePass) -> None:
    """Appends `pass_` to `pass_manager`; its `IpuError`s become MLIR error diagnostics."""

    def run(operation: ir.Operation, handle: passmanager.ExternalPass) -> None:
        try:
            pass_.run(operation)
        except* IpuError as failure:
            for error in _leaves(failure):
                (error.location or operation.location).emit_error(error.message)
            handle.signal_pass_failure()

    pass_manager.add(run, name=type(pass_).__name__, argument=pass_.name, description=pass_.summary())


@dataclass(frozen=True)
class PipelineElement:
    """`name`, `name{options}` or `name(nested, ...)`, spanning `text[start:end]`."""

    name: str
    options: str | None
    nested: tuple[PipelineElement, ...] | None
    start: int
    end: int


def parse_pipeline(text: str) -> tuple[PipelineElement, ...]:
    """The elements of `builtin.module(a,b{x=1},func.func(c))`, or of a bare `a,b{x=1},...`."""
    parser = _PipelineParser(text)
    elements = parser.parse_list(closing=None)
    if len(elements) == 1 and elements[0].name == "builtin.module" and elements[0].nested is not None:
        return elements[0].nested
    return elements


def build_pass_manager(pipeline: str, context: ir.Context | None = None) -> passmanager.PassManager:
    """A PassManager on `builtin.module` running `pipeline`, in order; Python passes must be at
    the top level (the bindings cannot nest them)."""
    pass_manager = passmanager.PassManager("builtin.module", context)
    _add_pipeline(pass_manager, pipeline)
    return pass_manager


@dataclass(frozen=True)
class NamedPipeline:
    """A pipeline under a name, like upstream's `--pass-pipeline='builtin.module(name{opt=..})'`:
    `expand(options)` gives its text for the option string given in braces."""

    name: str
    summary: str
    expand: typing.Callable[[str], str]


_PIPELINES: dict[str, NamedPipeline] = {}


def register_pipeline(pipeline: NamedPipeline) -> NamedPipeline:
    _PIPELINES[pipeline.name] = pipeline
    return pipeline


def registered_pipelines() -> list[NamedPipeline]:
    return sorted(_PIPELINES.values(), key=lambda p: p.name)


def _add_pipeline(pass_manager: passmanager.PassManager, pipeline: str) -> None:
    for element in parse_pipeline(pipeline):
        if element.name in _PIPELINES:
            try:
                _add_pipeline(pass_manager, _PIPELINES[element.name].expand(element.options or ""))
            except PipelineError as error:
                raise PipelineError(f"in pipeline '{element.name}': {error.message}", element.start) from None
            continue
        if element.name in _REGISTRY:
            if element.nested is not None:
                raise PipelineError(
                    f"'{element.name}' is a pass, not an operation: give its options in braces, {element.name}{{...}}", element.start
                )
            try:
                add_pass(pass_manager, build_pass(element.name, element.options or ""))
            except PipelineError as error:
                raise PipelineError(error.message, element.start) from None
            continue
        _reject_nested_python_passes(element, anchor=None)
        failure = _add_upstream(pass_manager, pipeline[element.start : element.end])
        if failure is not None:
            message, column = _upstream_error(failure)
            unknown = re.match(r"'(.*)' does not refer to a registered pass or pass pipeline", message)
            if unknown:
                name = unknown.group(1)
                message = (
                    f"unknown pass '{name}': not an upstream MLIR pass nor a Python pass{did_you_mean(name)}"
                    " (ipu-opt --list-passes lists the Python passes)"
                )
            raise PipelineError(message, element.start + column) from None


class _PipelineParser:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def parse_list(self, closing: str | None) -> tuple[PipelineElement, ...]:
        elements: list[PipelineElement] = []
        self._skip_space()
        if self._at(closing) or self.pos == len(self.text):
            return self._end_list(closing, elements)
        while True:
            elements.append(self._parse_element())
            self._skip_space()
            if self._at(","):
                self.pos += 1
                self._skip_space()
                continue
            return self._end_list(closing, elements)

    def _end_list(self, closing: str | None, elements: list[PipelineElement]) -> tuple[PipelineElement, ...]:
        if closing is None and self.pos < len(self.text):
            if self._at(")"):
                raise PipelineError("unbalanced ')'", self.pos)
            raise PipelineError(f"expected ',' between passes, found '{self.text[self.pos]}'", self.pos)
        if closing is not None:
            if not self._at(closing):
                raise PipelineError("missing ')' closing the nested pipeline", self.pos)
            self.pos += 1
        return tuple(elements)

    def _parse_element(self) -> PipelineElement:
        start = self.pos
        match = _PASS_NAME.match(self.text, self.pos)
        if match is None:
            found = f"'{self.text[self.pos]}'" if self.pos < len(self.text) else "end of pipeline"
            raise PipelineError(f"expected a pass name, found {found}", self.pos)
        self.pos = match.end()
        options = nested = None
        if self._at("{"):
            end = _skip_balanced(self.text, self.pos, "{", "}")
            options = self.text[self.pos + 1 : end - 1]
            self.pos = end
        elif self._at("("):
            self.pos += 1
            nested = self.parse_list(closing=")")
        return PipelineElement(match.group(), options, nested, start, self.pos)

    def _at(self, char: str | None) -> bool:
        return char is not None and self.text.startswith(char, self.pos)

    def _skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1


def _skip_balanced(text: str, start: int, opening: str, closing: str) -> int:
    """The offset just past the `closing` matching `text[start] == opening`; quoted text and
    nested pairs are skipped."""
    depth = 0
    pos = start
    while pos < len(text):
        char = text[pos]
        if char in "'\"":
            end = text.find(char, pos + 1)
            if end < 0:
                raise PipelineError(f"unterminated {char} quote", pos)
            pos = end
        elif char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    raise PipelineError(f"missing '{closing}' matching this '{opening}'", start)


def _split_options(pass_name: str, text: str) -> Iterator[tuple[str, str | None]]:
    """`key=value` pairs separated by spaces; values may be quoted ('..', "..") or braced."""
    pos = 0
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return
        key_end = pos
        while key_end < len(text) and not text[key_end].isspace() and text[key_end] != "=":
            key_end += 1
        key = text[pos:key_end]
        if not key:
            raise PipelineError(f"pass '{pass_name}': expected an option name before '=' in '{text}'")
        if key_end == len(text) or text[key_end] != "=":
            yield key, None
            pos = key_end
            continue
        value_start = key_end + 1
        opening = text[value_start : value_start + 1]
        try:
            if opening in ("'", '"'):
                value_end = text.index(opening, value_start + 1) + 1
                value = text[value_start + 1 : value_end - 1]
            elif opening == "{":
                value_end = _skip_balanced(text, value_start, "{", "}")
                value = text[value_start + 1 : value_end - 1]
            else:
                value_end = value_start
                while value_end < len(text) and not text[value_end].isspace():
                    value_end += 1
                value = text[value_start:value_end]
        except (ValueError, PipelineError):
            raise PipelineError(f"pass '{pass_name}': unterminated value of option '{key}' in '{text}'") from None
        yield key, value
        pos = value_end


def _parse_value(pass_name: str, option: PassOption, text: str | None) -> object:
    if text is None:
        if option.type is bool:
            return True
        raise PipelineError(f"option '{option.name}' of pass '{pass_name}' needs a value: {option.name}=<{option.type.__name__}>")
    if option.type is bool:
        if text.lower() in _TRUE or text.lower() in _FALSE:
            return text.lower() in _TRUE
    elif option.type is str:
        return text
    else:
        try:
            return option.type(text)
        except ValueError:
            pass
    raise PipelineError(f"option '{option.name}' of pass '{pass_name}' expects {_TYPE_WORDS[option.type]}, got '{text}'")


def _checked_value(pass_name: str, option: PassOption, text: str | None) -> object:
    value = _parse_value(pass_name, option, text)
    problem = option.check(value) if option.type in (int, float) else None
    if problem:
        raise PipelineError(f"option '{option.name}' of pass '{pass_name}' {problem}, got {text}")
    return value


def _format_value(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return repr(value) if isinstance(value, str) else str(value)


@functools.cache
def _options_of(cls: type[ModulePass]) -> tuple[PassOption, ...]:
    hints = typing.get_type_hints(cls)
    options = []
    for field in dataclasses.fields(cls):
        where = f"option {field.name} of pass class {cls.__qualname__}"
        if field.name == "name":
            raise TypeError(f"{where}: write `name = ...` without a type annotation; it is the pass's pipeline name, not an option")
        if hints[field.name] not in _OPTION_TYPES:
            raise TypeError(f"{where}: an option must be str, int, float or bool, not {hints[field.name]}")
        help_text = field.metadata.get("help")
        if not help_text:
            raise TypeError(f"{where}: describe the option with field(metadata={{'help': ...}})")
        unknown = sorted(set(field.metadata) - _METADATA_KEYS)
        if unknown:
            raise TypeError(f"{where}: unknown metadata key '{unknown[0]}' (allowed: {', '.join(sorted(_METADATA_KEYS))})")
        bounds = {key: field.metadata[key] for key in ("minimum", "maximum", "above") if key in field.metadata}
        if bounds and hints[field.name] not in (int, float):
            raise TypeError(f"{where}: only int and float options take bounds")
        if any(isinstance(bound, bool) or not isinstance(bound, int | float) for bound in bounds.values()):
            raise TypeError(f"{where}: bounds must be numbers")
        options.append(PassOption(field.name.replace("_", "-"), field.name, hints[field.name], help_text, field.default, **bounds))
    return tuple(options)


def _reject_nested_python_passes(element: PipelineElement, anchor: str | None) -> None:
    if anchor is not None and element.name in _REGISTRY:
        raise PipelineError(
            f"'{element.name}' is a Python pass: it runs on the whole module and cannot be nested "
            f"under '{anchor}'; put it at the top level, e.g. builtin.module({element.name})",
            element.start,
        )
    for inner in element.nested or ():
        _reject_nested_python_passes(inner, element.name)


def _upstream_error(text: str) -> tuple[str, int]:
    """The message of an upstream pipeline-parser error, and its 0-based column."""
    located = re.search(r"MLIR Textual PassPipeline Parser:\d+:(\d+): error: (.*)", text)
    if located:
        return located.group(2), int(located.group(1)) - 1
    # LLVM's option parser prefixes its messages with the (here empty) program name.
    lines = [line.strip().removeprefix(": ") for line in text.splitlines() if line.strip()]
    return "; ".join(lines), 0


def _add_upstream(pass_manager: passmanager.PassManager, text: str) -> str | None:
    """Adds upstream pipeline text; returns the parser's complaint if it is rejected, including
    what LLVM's option parser wrote straight to file descriptor 2 (e.g. why a value is invalid)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as captured:
        os.dup2(captured.fileno(), 2)
        try:
            pass_manager.add(text)
            return None
        except ValueError as error:
            captured.seek(0)
            return captured.read() + str(error)
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _leaves(group: BaseExceptionGroup) -> Iterator[IpuError]:
    for error in group.exceptions:
        if isinstance(error, BaseExceptionGroup):
            yield from _leaves(error)
        else:
            yield error


@functools.cache
def _probe_context() -> ir.Context:
    return ir.Context()


def _is_upstream_pass(name: str) -> bool:
    try:
        passmanager.PassManager("builtin.module", _probe_context()).add(name)
    except ValueError:
        return False
    return True
