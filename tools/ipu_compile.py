"""ipu-compile: the default pipeline, L0 (linalg on tensors) -> L3 (an ipu program).

    ipu-compile model.mlir -o model.l3.mlir [--target NAME|FILE] [--memory-report FILE|-]

The same as `ipu-opt IN -o OUT -p 'builtin.module(ipu-default-pipeline{target=T})'`: errors
about the program print as file:line:col, the others (a bad flag, an unknown target, an
unreadable or empty input, an output that cannot be written) as `ipu-compile: error: ...`;
the exit code is 1, and no output file is left behind.
"""

from __future__ import annotations

import argparse
import sys
import typing
from pathlib import Path

from ipu_mlir.lowering.pass_registry import PipelineError
from ipu_mlir.lowering.pipelines import default_pipeline
from ipu_mlir.target import DEFAULT_TARGET, builtin_targets, load_target
from ipu_mlir.target.diagnostics import IpuError

from . import cli, ipu_opt

PROG = "ipu-compile"


@cli.tool("ipu-compile")
def main(argv: list[str] | None = None) -> int:
    try:
        args = _argument_parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exit_:  # --help, or a bad flag already reported
        return int(exit_.code or 0)
    try:
        # Checked before anything is read or compiled, and reported as the tool's own errors:
        # they are about the command line, not about a place in the program.
        if args.target is not None:
            load_target(args.target)
        for path, what in ((args.output, ""), (args.memory_report, "the memory report")):
            if path not in (None, "-"):
                ipu_opt.check_writable(Path(path), what)
        pipeline = default_pipeline(args.target, args.memory_report, args.entry)
    except (IpuError, PipelineError) as error:
        sys.stderr.write(f"{PROG}: error: {error.message}\n")
        return 1
    # Unregistered ops parse (torch-mlir's tm_tensor ops in generic form): the pipeline's first
    # pass converts those and refuses any other, at the op.
    options = ["-o", args.output, "--allow-unregistered-dialect", "--pass-pipeline", pipeline]
    return ipu_opt.main([*options, "--", args.input], prog=PROG, nothing_to_do="nothing to compile")


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        self.exit(1, f"{PROG}: error: {message}\n")


def _argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog=PROG, description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("input", help="input .mlir file ('-' for stdin)")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    parser.add_argument(
        "--target",
        default=None,
        help=f"{', '.join(builtin_targets())} or a target .toml file (default: the module's ipu.target, else {DEFAULT_TARGET})",
    )
    parser.add_argument(
        "--memory-report", default=None, metavar="FILE", help="write the memory plan report (JSON), '-' for a table on stderr"
    )
    parser.add_argument("--entry", default=None, metavar="NAME", help="the public function to compile (default: main, or the only one)")
    cli.add_version(parser, PROG)
    return parser


if __name__ == "__main__":
    sys.exit(main())
