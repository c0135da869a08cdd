"""Diagnostics as ipu-opt prints them, and `--verify-diagnostics`: matching them against the
`expected-*` annotations of the input, the way mlir-opt does.

    // expected-error {{substring of the message}}       on this line
    // expected-error@+1 {{...}}    @-2, @above, @below  relative to this line
    // expected-error@12 {{...}}                         on line 12 (an ipu-opt extension)
    // expected-warning@unknown {{...}}                  at an unknown location
    // expected-note-re {{op {{[0-9]+}} is}}             {{...}} parts are regular expressions
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TextIO

from mlir import ir

from ipu_mlir.target.diagnostics import IpuError, format_location

_EXPECTED = re.compile(r"expected-(error|note|remark|warning)(-re)? *(@([+-][0-9]+|[0-9]+|above|below|unknown))? *\{\{(.*)\}\}$")


@dataclass(frozen=True)
class SourceText:
    """An input file: its name as diagnostics spell it, and its lines."""

    name: str
    text: str

    @functools.cached_property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    def line(self, number: int) -> str | None:
        return self.lines[number - 1] if 1 <= number <= len(self.lines) else None


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic copied out of MLIR (its objects only live inside the handler)."""

    severity: str  # error, warning, note or remark
    message: str
    where: str  # file:line:col, or "" when the location names no file
    notes: tuple[Diagnostic, ...] = ()

    @staticmethod
    def from_mlir(diagnostic: ir.Diagnostic) -> Diagnostic:
        return Diagnostic(
            diagnostic.severity.name.lower(),
            diagnostic.message,
            format_location(diagnostic.location),
            tuple(Diagnostic.from_mlir(note) for note in diagnostic.notes),
        )

    @staticmethod
    def from_ipu_error(error: IpuError, fallback: ir.Location) -> Diagnostic:
        return Diagnostic(error.severity, error.message, format_location(error.location or fallback))

    def position(self) -> tuple[str, int, int] | None:
        if not self.where:
            return None
        file, line, column = self.where.rsplit(":", 2)
        return file, int(line), int(column)


def render(severity: str, message: str, where: str, source: SourceText, width: int = 1, show_source: bool = True) -> str:
    """`file:line:col: severity: message`, then the source line and a caret under the column,
    as mlir-opt prints it."""
    text = f"{where or '<unknown>:0'}: {severity}: {message}\n"
    file, line, column = where.rsplit(":", 2) if where else ("", "0", "0")
    source_line = source.line(int(line)) if file == source.name else None
    if show_source and source_line is not None and int(column) > 0:
        text += f"{source_line}\n{' ' * (int(column) - 1)}^{'~' * (width - 1)}\n"
    return text


def render_diagnostic(diagnostic: Diagnostic, source: SourceText) -> str:
    text = render(diagnostic.severity, diagnostic.message, diagnostic.where, source)
    previous = diagnostic.where
    for note in diagnostic.notes:
        # Like mlir-opt, a note shows its source line only when it is somewhere else.
        text += render(note.severity, note.message, note.where, source, show_source=note.where != previous)
        previous = note.where
    return text


@dataclass
class Expectation:
    severity: str
    line: int | None  # None: expected at an unknown location
    where: str  # of the annotation itself
    text: str
    pattern: re.Pattern[str] | None
    matched: bool = False

    def matches(self, message: str) -> bool:
        return bool(self.pattern.search(message)) if self.pattern else self.text in message


@dataclass
class DiagnosticChecker:
    """Checks every reported diagnostic against the expectations in `source`; mismatches are
    written to `out` in mlir-opt's words."""

    source: SourceText
    out: TextIO
    failed: bool = False
    expectations: list[Expectation] = field(init=False)

    def __post_init__(self) -> None:
        self.expectations = list(self._parse_expectations())

    def check(self, diagnostic: Diagnostic) -> None:
        for each in (diagnostic, *diagnostic.notes):
            self._check_one(each)

    def finish(self) -> bool:
        """Reports the expectations nothing matched; True when everything matched."""
        for expected in sorted(self.expectations, key=lambda e: e.line is None):
            if not expected.matched:
                self.failed = True
                message = f'expected {expected.severity} "{expected.text}" was not produced'
                self.out.write(render("error", message, expected.where, self.source, width=max(len(expected.text), 1)))
        return not self.failed

    def _check_one(self, diagnostic: Diagnostic) -> None:
        position = diagnostic.position()
        if position is None:
            candidates = [e for e in self.expectations if e.line is None]
        elif position[0] == self.source.name:
            candidates = [e for e in self.expectations if e.line == position[1]]
        else:
            candidates = []
        near_miss = None
        for expected in candidates:
            if expected.matches(diagnostic.message):
                if expected.severity == diagnostic.severity:
                    expected.matched = True
                    return
                near_miss = expected
        self.failed = True
        if near_miss is not None:
            message = f"'{diagnostic.severity}' diagnostic emitted when expecting a '{near_miss.severity}'"
            self.out.write(render("error", message, near_miss.where, self.source))
        else:
            message = f"unexpected {diagnostic.severity}: {diagnostic.message}"
            self.out.write(render("error", message, diagnostic.where, self.source))

    def _parse_expectations(self) -> Iterator[Expectation]:
        lines = self.source.lines
        last_plain_line = 0
        waiting_for_next_line: list[Expectation] = []
        for index, line in enumerate(lines):
            number = index + 1
            match = _EXPECTED.search(line.rstrip())
            if match is None:
                for expected in waiting_for_next_line:
                    expected.line = number
                waiting_for_next_line.clear()
                last_plain_line = number
                continue
            severity, is_regex, designator, text = match.group(1, 2, 4, 5)
            where = f"{self.source.name}:{number}:{match.start() + 1}"
            pattern = self._compile(text, where) if is_regex else None
            if is_regex and pattern is None:
                continue
            expected = Expectation(severity, number, where, text, pattern)
            if designator == "unknown":
                expected.line = None
            elif designator == "above":
                expected.line = max(last_plain_line, 1)
            elif designator == "below":
                # A dangling @below (nothing after it) stays on the last line, like mlir-opt.
                expected.line = len(lines)
                waiting_for_next_line.append(expected)
            elif designator is not None:
                expected.line = number + int(designator) if designator[0] in "+-" else int(designator)
            yield expected

    def _compile(self, text: str, where: str) -> re.Pattern[str] | None:
        """`{{...}}` parts of an `expected-*-re` text are regular expressions, the rest literal."""
        parts = re.split(r"\{\{(.*?)\}\}", text)
        if "{{" in parts[-1]:
            self.failed = True
            self.out.write(render("error", "found start of regex with no end '}}'", where, self.source))
            return None
        regex = "".join(re.escape(part) if i % 2 == 0 else f"({part})" for i, part in enumerate(parts))
        try:
            return re.compile(regex)
        except re.error as error:
            self.failed = True
            self.out.write(render("error", f"invalid regex: {error}", where, self.source))
            return None
