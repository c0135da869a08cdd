"""ipu-opt: mlir-opt for ipu-mlir, with the Python passes of `ipu_mlir.lowering` next to every
upstream MLIR pass in one pipeline.

    ipu-opt model.mlir --pass-pipeline='builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))' -o out.mlir
    ipu-opt tests.mlir --split-input-file --verify-diagnostics

docs/ipu-opt.md describes every flag.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib.util
import io
import os
import pkgutil
import re
import sys
import tempfile
import traceback
import typing
from collections.abc import Callable, Iterator
from pathlib import Path

from mlir import ir, passmanager

from ipu_mlir.dialects import make_context, tm_tensor, verifier
from ipu_mlir.lowering.pass_registry import (
    PipelineError,
    build_pass_manager,
    did_you_mean,
    lookup_pass,
    registered_passes,
    registered_pipelines,
)
from ipu_mlir.target.diagnostics import IpuError
from ipu_mlir.target.files import is_special, publish, staging_dir

from . import cli
from .diagnostic_check import Diagnostic, DiagnosticChecker, SourceText, render_diagnostic

SPLIT_MARKER = "// -----"
BYTECODE_MAGIC = b"ML\xefR"
STDIN_NAME = "<stdin>"
# The note MLIR adds to failed verifications; mlir-opt leaves it out under --verify-diagnostics.
_OP_DUMP_NOTE = "see current operation: "
_MULTIPLE_TOP_LEVEL_OPS = "source must contain a single top-level operation"

Report = Callable[[Diagnostic], None]


@cli.tool("ipu-opt")
def main(argv: list[str] | None = None, prog: str = "ipu-opt", nothing_to_do: str | None = None) -> int:
    """Runs ipu-opt on `argv`. Tools built on it (ipu-compile) name themselves with `prog` in
    their errors; with `nothing_to_do`, an input holding nothing but blanks and comments is
    an error with that message instead of an empty module."""
    argv = _long_flags(sys.argv[1:] if argv is None else argv)

    def fail(message: str) -> int:
        return _fail(message, prog)

    try:
        # Plugins first, so that --help and --list-passes show their passes.
        plugins, _ = _plugin_argument_parser().parse_known_args(argv)
        for plugin in plugins.load_pass_plugin:
            problem = _load_plugin(plugin)
            if problem:
                return fail(problem)
        args = _argument_parser().parse_args(argv)
    except SystemExit as exit_:  # --help, or a bad flag already reported
        return int(exit_.code or 0)
    if args.list_passes:
        print(_passes_help())
        return 0
    if args.show_dialects:
        print(f"Available Dialects: {', '.join(available_dialects())}")
        return 0
    if args.emit_bytecode and args.split_input_file:
        return fail("--emit-bytecode writes one module: it cannot be combined with --split-input-file")
    if args.help_pass:
        return _help_pass(args.help_pass)

    try:
        source, bytecode = _read_input(args.input)
    except (OSError, UnicodeDecodeError) as error:
        reason = error.strerror if isinstance(error, OSError) else f"not UTF-8 text ({error.reason})"
        return fail(f"cannot open '{args.input}': {reason}")
    if nothing_to_do is not None and bytecode is None and not _has_content(source.text):
        return fail(f"{nothing_to_do}: '{source.name}' is empty")
    if args.output != "-":
        try:
            check_writable(Path(args.output))
        except IpuError as error:
            return fail(error.message)

    checker = DiagnosticChecker(source, sys.stderr) if args.verify_diagnostics else None

    def report(diagnostic: Diagnostic) -> None:
        if checker is None:
            sys.stderr.write(render_diagnostic(diagnostic, source))
            return
        notes = tuple(note for note in diagnostic.notes if not note.message.startswith(_OP_DUMP_NOTE))
        checker.check(dataclasses.replace(diagnostic, notes=notes))

    if bytecode is not None and args.split_input_file:
        return fail(f"'{source.name}' is MLIR bytecode: --split-input-file splits text")
    chunks: list[str | bytes] = [bytecode] if bytecode is not None else split_input(source.text) if args.split_input_file else [source.text]
    outputs: list[str | bytes | None] = []
    try:
        for chunk in chunks:
            outputs.append(_process(chunk, source.name, args, report))
    except PipelineError as error:
        return fail(_describe_pipeline_error(error, args.pass_pipeline))
    processed = all(output is not None for output in outputs)
    succeeded = checker.finish() if checker is not None else processed
    text = outputs[0] or b"" if args.emit_bytecode else f"{SPLIT_MARKER}\n".join(output or "" for output in outputs)
    if args.output == "-":
        if isinstance(text, bytes):
            sys.stdout.buffer.write(text)
        else:
            sys.stdout.write(text)
        sys.stdout.flush()
    elif succeeded:
        try:
            write_atomically(Path(args.output), text)
        except OSError as error:
            return fail(f"cannot write '{args.output}': {error.strerror}")
    return 0 if succeeded else 1


def _long_flags(argv: list[str]) -> list[str]:
    """LLVM tools accept -flag as well as --flag (scripts written for mlir-opt use both);
    arguments after `--` are file names, left as they are."""
    end = argv.index("--") if "--" in argv else len(argv)
    return [re.sub(r"^-(?=[a-z][a-z-]+(=|$))", "--", argument) for argument in argv[:end]] + argv[end:]


def _has_content(text: str) -> bool:
    """Whether `text` holds anything but blanks and `//` comments."""
    return any(line.strip() and not line.strip().startswith("//") for line in text.splitlines())


def split_input(text: str) -> list[str]:
    """The chunks between `// -----` lines, each padded with newlines so that its lines keep
    their numbers in the whole file."""
    lines = text.split("\n")  # as MLIR counts lines: str.splitlines also breaks at \f and others
    chunks = []
    start = 0
    for index, line in enumerate(lines):
        if line.strip() == SPLIT_MARKER:
            chunks.append("\n" * start + "\n".join(lines[start:index]) + "\n")
            start = index + 1
    chunks.append("\n" * start + "\n".join(lines[start:]))
    return chunks


def write_atomically(path: Path, text: str | bytes) -> None:
    """Writes `path` through a temporary file renamed over it: a failed write leaves no partial
    file, and an existing one untouched."""
    temporary = stage_file(path, text)
    try:
        publish(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def stage_file(path: Path, text: str | bytes) -> Path:
    """A temporary file beside `path` holding `text`, with the mode `path` has (or would get);
    the caller puts it at `path` (`target.files.publish`) or deletes it. Nothing is left on
    failure."""
    descriptor, temporary = tempfile.mkstemp(dir=staging_dir(path), prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(descriptor, "wb" if isinstance(text, bytes) else "w") as stream:
            stream.write(text)
        os.chmod(temporary, _file_mode(path))
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return Path(temporary)


def check_writable(path: Path, what: str = "") -> None:
    """Raises `IpuError` unless a file can be created or replaced at `path`: its directory
    exists and is writable, and `path` is not a directory. Tools check every output path with
    it before writing any, so that a bad one leaves nothing behind."""
    where = f"cannot write {what + ' ' if what else ''}'{path}'"
    if is_special(path):  # written into, not replaced: its own permission decides
        if not os.access(path, os.W_OK):
            raise IpuError(f"{where}: Permission denied")
        return
    if path.is_dir():
        raise IpuError(f"{where}: Is a directory")
    directory = path.parent
    if not directory.is_dir():
        raise IpuError(f"{where}: {'Not a directory' if directory.exists() else 'No such file or directory'}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise IpuError(f"{where}: Permission denied")


def _process(chunk: str | bytes, source_name: str, args: argparse.Namespace, report: Report) -> str | bytes | None:
    """The printed result (bytecode under --emit-bytecode) of parsing `chunk` and running the
    pipeline on it; None on failure (reported through `report`)."""
    context = make_context()
    context.allow_unregistered_dialects = args.allow_unregistered_dialect
    # Errors go to the handler like every other diagnostic, instead of into MLIRError objects.
    context.emit_error_diagnostics = True
    route = _DiagnosticRoute(report)
    handler = context.attach_diagnostic_handler(route)
    try:
        with context:
            pass_manager = build_pass_manager(args.pass_pipeline)
            if args.dump_pass_pipeline:  # as mlir-opt: before anything runs, on stderr
                sys.stderr.write(f"Pass Manager with {_count_passes(pass_manager)} passes:\n{pass_manager}\n\n")
            module = _parse(chunk, source_name, route)
            if module is None or not _verify(module, report):
                return None
            try:
                ran = _run(pass_manager, module, args)
            finally:
                del pass_manager  # The timing report is printed when the PassManager is destroyed.
            if not ran or not _verify(module, report):
                return None
            if args.emit_bytecode:
                buffer = io.BytesIO()
                module.write_bytecode(buffer)
                return buffer.getvalue()
            return module.get_asm(
                print_generic_op_form=args.mlir_print_op_generic,
                enable_debug_info=args.mlir_print_debuginfo,
                large_elements_limit=args.mlir_elide_elementsattrs_if_larger,
            )
    finally:
        handler.detach()


class _DiagnosticRoute:
    """The context's diagnostic handler: passes diagnostics on to `report`, or holds them back
    while a parse is being tried."""

    def __init__(self, report: Report):
        self.report = report
        self.held: list[Diagnostic] | None = None

    def __call__(self, diagnostic: ir.Diagnostic) -> bool:
        copy = Diagnostic.from_mlir(diagnostic)
        if self.held is not None:
            self.held.append(copy)
        else:
            self.report(copy)
        return True

    @contextlib.contextmanager
    def hold(self) -> Iterator[list[Diagnostic]]:
        self.held = []
        try:
            yield self.held
        finally:
            self.held = None


def _parse(text: str | bytes, source_name: str, route: _DiagnosticRoute) -> ir.Operation | None:
    """The `builtin.module` of `text`: its one top-level module, or a module made around its
    top-level ops, like mlir-opt does. Bytecode holds a module."""
    with route.hold() as held:
        try:
            parsed = (
                ir.Module.parse(text).operation if isinstance(text, bytes) else ir.Operation.parse(text, source_name=source_name).operation
            )
        except ir.MLIRError:
            parsed = None
    if parsed is None and len(held) == 1 and held[0].message.startswith(_MULTIPLE_TOP_LEVEL_OPS):
        return _parse_several_top_level_ops(text, source_name, route)
    if parsed is None and any(tm_tensor.NOT_FOUND in diagnostic.message for diagnostic in held):
        return _parse_tm_tensor_custom_form(text, source_name, route, held)
    for diagnostic in held:
        route.report(diagnostic)
    if parsed is None or parsed.name == "builtin.module":
        return parsed
    module = ir.Module.create(ir.Location.file(source_name, 0, 0))
    module.body.append(parsed)
    return module.operation


def _parse_tm_tensor_custom_form(text: str, source_name: str, route: _DiagnosticRoute, held: list[Diagnostic]) -> ir.Operation | None:
    """torch-mlir's TMTensor ops in their custom form (`str()` of torch-mlir's output), printed
    in generic form by torch-mlir itself and read as unregistered ops (dialects/tm_tensor.py)."""
    try:
        generic = tm_tensor.generic_form(text, source_name)
    except tm_tensor.CustomFormError as refused:
        where = f"{refused.file}:{refused.line}:{refused.column}" if refused.line else ""
        route.report(Diagnostic("error", f"{refused.message} (torch-mlir's parser, reading its TMTensor ops)", where))
        return None
    if generic is None:  # torch-mlir absent: the parser's own words, with what to do
        for diagnostic in held:
            route.report(diagnostic)
        return None
    context = ir.Context.current
    allowed, context.allow_unregistered_dialects = context.allow_unregistered_dialects, True
    try:
        return _parse(generic, source_name, route)
    finally:
        context.allow_unregistered_dialects = allowed


def _parse_several_top_level_ops(text: str, source_name: str, route: _DiagnosticRoute) -> ir.Operation | None:
    # Only Module.parse wraps several ops in a module, and it names every location "-". So print
    # the module with its locations, renamed, and read it back.
    with route.hold() as held:
        try:
            generic = ir.Module.parse(text).operation.get_asm(enable_debug_info=True, print_generic_op_form=True)
        except ir.MLIRError:
            generic = None
    for diagnostic in held:
        route.report(_renamed(diagnostic, source_name))
    if generic is None:
        return None
    quoted_name = '"' + source_name.replace("\\", "\\\\").replace('"', '\\"') + '"'
    renamed = re.sub(r'"-":(?=\d+:\d+)', lambda _: quoted_name + ":", generic)
    return ir.Operation.parse(renamed, source_name=source_name).operation


def _renamed(diagnostic: Diagnostic, source_name: str) -> Diagnostic:
    where = source_name + diagnostic.where[1:] if diagnostic.where.startswith("-:") else diagnostic.where
    notes = tuple(_renamed(note, source_name) for note in diagnostic.notes)
    return dataclasses.replace(diagnostic, where=where, notes=notes)


def _verify(module: ir.Operation, report: Report) -> bool:
    errors = verifier.verify(module)
    for error in errors:
        report(Diagnostic.from_ipu_error(error, module.location))
    return not any(error.severity == "error" for error in errors)


def _run(pass_manager: passmanager.PassManager, module: ir.Operation, args: argparse.Namespace) -> bool:
    chosen = {name for names in args.mlir_print_ir_before + args.mlir_print_ir_after for name in names}
    printing = dict(
        print_before_all=args.mlir_print_ir_before_all or bool(args.mlir_print_ir_before),
        # MLIR prints after a change or a failure only among the passes printed after: alone, these flags mean every pass
        print_after_all=args.mlir_print_ir_after_all
        or bool(args.mlir_print_ir_after)
        or args.mlir_print_ir_after_change
        or args.mlir_print_ir_after_failure,
        print_after_change=args.mlir_print_ir_after_change,
        print_after_failure=args.mlir_print_ir_after_failure,
    )
    if any(printing.values()):
        pass_manager.enable_ir_printing(
            **printing,
            print_generic_op_form=args.mlir_print_op_generic,
            enable_debug_info=args.mlir_print_debuginfo,
            large_elements_limit=args.mlir_elide_elementsattrs_if_larger,
        )
    if args.mlir_timing:
        pass_manager.enable_timing()
    if args.mlir_pass_statistics:
        pass_manager.enable_statistics()
    sys.stderr.flush()  # MLIR writes IR dumps and timing to the same stderr, bypassing Python
    selection = _selected_dumps(args) if chosen else contextlib.nullcontext()
    try:
        with selection:
            pass_manager.run(module)
    except ir.MLIRError:
        return False  # Its diagnostics already went through the handler.
    return True


_DUMP_HEADER = re.compile(r"^// -----// IR Dump (Before|After) .*?\(([\w.-]+)\).*//----- //$", re.M)


@contextlib.contextmanager
def _selected_dumps(args: argparse.Namespace) -> Iterator[None]:
    """--mlir-print-ir-before/after=PASSES: MLIR's Python API prints before or after every pass,
    so its dumps (written to file descriptor 2 by C++) are caught in a file and only those of
    the named passes written out; Python's own stderr (diagnostics) is passed on as it comes."""
    wanted = {("Before", name) for names in args.mlir_print_ir_before for name in names} | {
        ("After", name) for names in args.mlir_print_ir_after for name in names
    }
    everything = {"Before"} if args.mlir_print_ir_before_all else set()
    everything |= {"After"} if args.mlir_print_ir_after_all else set()
    sys.stderr.flush()
    saved = os.dup(2)
    python_stderr = sys.stderr
    with tempfile.TemporaryFile() as caught:
        os.dup2(caught.fileno(), 2)
        sys.stderr = os.fdopen(os.dup(saved), "w", closefd=True)
        try:
            yield
        finally:
            sys.stderr.flush()
            sys.stderr.close()
            sys.stderr = python_stderr
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            text = caught.read().decode(errors="replace")
            starts = [match.start() for match in _DUMP_HEADER.finditer(text)] + [len(text)]
            kept = [text[: starts[0]]]
            for start, end in zip(starts, starts[1:]):
                when, name = _DUMP_HEADER.match(text, start).groups()
                if when in everything or (when, name) in wanted:
                    kept.append(text[start:end])
            sys.stderr.write("".join(kept))
            sys.stderr.flush()


def _count_passes(pass_manager: passmanager.PassManager) -> int:
    """The passes of the pipeline as printed (nested pass managers are not passes)."""
    return len(re.findall(r"[\w.-]+(?=[,{)]|$)(?<!\bbuiltin.module)", re.sub(r"\{[^{}]*\}", "", str(pass_manager))))


def available_dialects() -> list[str]:
    """The dialects ipu-opt parses: every dialect of the MLIR bindings (their Python modules
    name them) that the context registers, and `ipu`."""
    import mlir.dialects

    context = make_context()
    names = {"ipu"}
    for module in pkgutil.iter_modules(mlir.dialects.__path__):
        if module.name.startswith("_"):
            continue
        try:
            names.add(context.get_dialect_descriptor(module.name).namespace)
        except (ValueError, RuntimeError):
            continue
    return sorted(names)


def _describe_pipeline_error(error: PipelineError, pipeline: str) -> str:
    text = f"invalid --pass-pipeline: {error.message}"
    if error.offset is not None:
        text += f"\n  {pipeline}\n  {' ' * error.offset}^"
    return text


def _load_plugin(path: str) -> str | None:
    """Imports a Python file that registers passes; returns what went wrong, if anything."""
    file = Path(path)
    if not file.is_file():
        return f"cannot load pass plugin '{path}': no such file"
    # Named after the file, so loading it twice replaces its passes instead of clashing.
    module_name = "ipu_opt_plugin_" + re.sub(r"\W", "_", str(file.resolve()))
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        return f"cannot load pass plugin '{path}': not a Python file (.py)"
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[module_name]
        frames = [
            f"\n  at {frame.filename}:{frame.lineno}: {frame.line}"
            for frame in traceback.extract_tb(error.__traceback__)
            if Path(frame.filename).resolve() == file.resolve()
        ]
        return f"cannot load pass plugin '{path}': {type(error).__name__}: {error}{''.join(frames)}"
    return None


def _help_pass(name: str) -> int:
    cls = lookup_pass(name)
    if cls is None:
        return _fail(f"no Python pass named '{name}'{did_you_mean(name) or '; see ipu-opt --list-passes'}")
    print(f"{cls.name}: {cls.description()}")
    if cls.options():
        print("\nOptions:")
        for option in cls.options():
            print(f"  {option.usage()}")
    return 0


def _passes_help() -> str:
    lines = ["Python passes (mix them with any upstream MLIR pass in --pass-pipeline):"]
    for cls in registered_passes():
        lines.append(f"  {cls.name:<24} {cls.summary()}")
        lines.extend(f"  {'':<26}{option.usage()}" for option in cls.options())
    lines.append("Named pipelines:")
    lines.extend(f"  {p.name:<24} {p.summary}" for p in registered_pipelines())
    lines.append("\n`ipu-opt --help-pass NAME` shows a pass's description and example;")
    lines.append("`mlir-opt --help` lists the upstream passes.")
    return "\n".join(lines)


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        self.exit(1, f"ipu-opt: error: {message}\n")


def _plugin_argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(add_help=False, allow_abbrev=False)
    parser.add_argument("--load-pass-plugin", action="append", default=[])
    return parser


def _argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="ipu-opt",
        description="Parse MLIR, run a pass pipeline mixing ipu-mlir's Python passes with upstream "
        "MLIR passes, verify, and print the result.",
        epilog=_passes_help(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("input", nargs="?", default="-", help="input .mlir file ('-' or none: stdin)")
    parser.add_argument("-o", dest="output", default="-", metavar="FILE", help="output file ('-' or none: stdout); written only on success")
    parser.add_argument(
        "--pass-pipeline",
        "-p",
        default="",
        metavar="PIPELINE",
        help="e.g. 'builtin.module(canonicalize,ipu-set-target{target=tiny},func.func(cse))'",
    )
    parser.add_argument("--split-input-file", action="store_true", help=f"process the chunks between '{SPLIT_MARKER}' lines separately")
    parser.add_argument(
        "--verify-diagnostics",
        action="store_true",
        help="check diagnostics against the expected-error/warning/note/remark annotations of the input",
    )
    parser.add_argument("--mlir-print-ir-after-all", action="store_true", help="print the IR after every pass (to stderr)")
    parser.add_argument("--mlir-print-ir-before-all", action="store_true", help="print the IR before every pass (to stderr)")
    parser.add_argument(
        "--mlir-print-ir-before",
        type=_pass_names,
        action="append",
        default=[],
        metavar="PASSES",
        help="print the IR before these passes (comma-separated arguments: cse,ipu-plan)",
    )
    parser.add_argument(
        "--mlir-print-ir-after", type=_pass_names, action="append", default=[], metavar="PASSES", help="print the IR after these passes"
    )
    parser.add_argument("--mlir-print-ir-after-change", action="store_true", help="print the IR after each pass that changed it")
    parser.add_argument("--mlir-print-ir-after-failure", action="store_true", help="print the IR after the pass that failed")
    parser.add_argument(
        "--mlir-elide-elementsattrs-if-larger",
        type=cli.positive,
        default=None,
        metavar="N",
        help="print elements attributes of more than N elements as an elided placeholder",
    )
    parser.add_argument("--dump-pass-pipeline", action="store_true", help="print the pass pipeline before running it (to stderr)")
    parser.add_argument("--mlir-pass-statistics", action="store_true", help="print the passes' statistics (to stderr)")
    parser.add_argument("--emit-bytecode", action="store_true", help="write MLIR bytecode instead of text")
    parser.add_argument("--show-dialects", action="store_true", help="list the dialects ipu-opt parses")
    cli.add_version(parser, "ipu-opt")
    parser.add_argument("--mlir-timing", action="store_true", help="print the time each pass took (to stderr)")
    parser.add_argument("--mlir-print-op-generic", action="store_true", help="print operations in generic form")
    parser.add_argument("--mlir-print-debuginfo", action="store_true", help="print locations")
    parser.add_argument("--allow-unregistered-dialect", action="store_true", help="accept ops of unknown dialects")
    parser.add_argument(
        "--load-pass-plugin", action="append", default=[], metavar="FILE.py", help="import a Python file that registers passes (repeatable)"
    )
    parser.add_argument("--list-passes", action="store_true", help="list the Python passes and their options")
    parser.add_argument("--help-pass", metavar="NAME", help="show a Python pass's description and example")
    return parser


def _pass_names(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"invalid pass list '{text}': comma-separated pass arguments, e.g. cse,ipu-plan")
    return names


def _read_input(path: str) -> tuple[SourceText, bytes | None]:
    """The input as text, or as MLIR bytecode (its bytes, and no text)."""
    if path == "-":  # bytes from the process's stdin; text from a replaced one (a StringIO, in tests)
        data = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    else:
        data = Path(path).read_bytes()
    name = STDIN_NAME if path == "-" else path
    if data.startswith(BYTECODE_MAGIC):
        return SourceText(name, ""), data
    return SourceText(name, data.decode("utf-8")), None


def _file_mode(path: Path) -> int:
    if path.exists():
        return path.stat().st_mode & 0o7777
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _fail(message: str, prog: str = "ipu-opt") -> int:
    sys.stderr.write(f"{prog}: error: {message}\n")
    return 1


if __name__ == "__main__":
    sys.exit(main())
