"""ipu-compile: the default pipeline, L0 (linalg on tensors) -> L3 (an ipu program).

    ipu-compile model.mlir -o model.l3.mlir [--target gc200|gc2|tiny|FILE] [--memory-report FILE|-]

The same as `ipu-opt IN -o OUT -p 'builtin.module(ipu-default-pipeline{target=T})'`: errors
print as file:line:col, the exit code is 1, and no output file is left behind.
"""

from __future__ import annotations

import argparse
import sys

from ipu_mlir.lowering.pipelines import default_pipeline

from . import ipu_opt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ipu-compile", description=__doc__.splitlines()[0])
    parser.add_argument("input", help="input .mlir file ('-' for stdin)")
    parser.add_argument("-o", "--output", default="-", help="output file (default: stdout)")
    parser.add_argument("--target", default=None, help="gc200, gc2, tiny or a target .toml file (default: the module's ipu.target, else gc200)")
    parser.add_argument("--memory-report", default=None, metavar="FILE", help="write the memory plan report (JSON), '-' for a table on stderr")
    parser.add_argument("--entry", default=None, metavar="NAME", help="the public function to compile (default: main, or the only one)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    pipeline = default_pipeline(args.target, args.memory_report, args.entry)
    return ipu_opt.main([args.input, "-o", args.output, "--pass-pipeline", pipeline])


if __name__ == "__main__":
    sys.exit(main())
