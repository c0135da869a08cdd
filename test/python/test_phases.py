"""Per-phase timings and the progress line (frontends/phases.py): each phase says its time when
it ends; past PROGRESS_AFTER seconds a terminal's stderr counts the seconds on one line, erased
at the end; a stream that is not a terminal gets nothing."""

from __future__ import annotations

import io
import re
import time

import numpy as np
import pytest

from ipu_mlir.frontends import api, phases
from ipu_mlir.frontends.phases import Phases


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_each_phase_says_its_time() -> None:
    lines: list[str] = []
    timer = Phases(lines.append, stream=io.StringIO())
    with timer.phase("export", "torch-mlir"):
        time.sleep(0.05)
    with timer.phase("compile"):
        pass
    assert re.fullmatch(r"export: {12}0\.\d\d s \(torch-mlir\)", lines[0]), lines
    assert re.fullmatch(r"compile: {11}0\.\d\d s", lines[1]), lines
    assert timer.seconds["export"] >= 0.05 and set(timer.seconds) == {"export", "compile"}


@pytest.mark.parametrize("stream, shown", [(Terminal(), True), (io.StringIO(), False)])
def test_a_long_phase_counts_on_a_terminal_only(monkeypatch: pytest.MonkeyPatch, stream: io.StringIO, shown: bool) -> None:
    monkeypatch.setattr(phases, "PROGRESS_AFTER", 0.05)
    monkeypatch.setattr(phases, "_TICK", 0.05)
    timer = Phases(stream=stream)
    with timer.phase("load"):
        time.sleep(0.4)
    with timer.phase("run"):  # short: no line
        pass
    text = stream.getvalue()
    if shown:
        assert text.startswith("\rload... 0 s") and text.endswith("\r\033[K") and "run..." not in text
    else:
        assert text == ""


def test_a_phase_that_fails_erases_its_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(phases, "PROGRESS_AFTER", 0.01)
    stream = Terminal()
    with pytest.raises(KeyboardInterrupt), Phases(stream=stream).phase("compile"):
        time.sleep(0.1)
        raise KeyboardInterrupt
    assert stream.getvalue().endswith("\r\033[K")


def test_api_run_reports_its_phases() -> None:
    program = "func.func @main(%x: tensor<8xf32>) -> tensor<8xf32> {\n  return %x : tensor<8xf32>\n}\n"
    lines: list[str] = []
    api.run(program, [np.ones(8, np.float32)], target="tiny", use_cache=False, progress=lines.append)
    assert [line.split(":")[0] for line in lines] == ["compile", "load", "run"]
