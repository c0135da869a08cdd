"""ipu-run: simulate a program on an IPU target and report its estimated cost.

    ipu-run model.mlir --random-inputs 0 --output-dir out --profile profile.json --check
    ipu-run examples/relu.mlir --input x.npy --target tiny
    ipu-run --model resnet18 --size 32          # a zoo model: exported, compiled, checked against PyTorch

L0/L1 input is compiled with the default pipeline first; L3 input (a function marked
`ipu.program`) runs as it is. docs/ipu-run.md describes the flags, the summary and the profile.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import typing
from pathlib import Path

import numpy as np

from ipu_mlir.dialects import ops_named
from ipu_mlir.frontends import api, zoo
from ipu_mlir.frontends import torch as torch_frontend
from ipu_mlir.frontends.phases import Phases
from ipu_mlir.runtime import distributed, oracle
from ipu_mlir.runtime.profile import Profile
from ipu_mlir.runtime.reference import UNDEFINED_FOR_SOME_OPERANDS
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import DEFAULT_TARGET, builtin_targets, load_target
from ipu_mlir.target.diagnostics import IpuError, format_location
from ipu_mlir.vis.interactive import report_files

from . import cli, mpi_launch, run_files
from .ipu_opt import STDIN_NAME, check_writable
from .stdin_program import STDIN, program_source, stdin_located
from .train import OPTIMIZERS, train_zoo_model


@cli.tool("ipu-run")
def main(argv: list[str] | None = None) -> int:
    try:
        args = _argument_parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if args.file == STDIN and args.ipus is not None and args.ipus > 1 and distributed.launched_size() == 1:
        sys.stderr.write("ipu-run: error: --ipus N runs the program on N ranks, which cannot all read stdin: give a FILE\n")
        return 1
    # --- MPI (tools/mpi_launch.py): --ipus N relaunches on N ranks; each rank runs _run --------
    if args.ipus is not None and args.ipus > 1 and distributed.launched_size() == 1:
        return mpi_launch.launch(args.ipus, sys.argv[1:] if argv is None else argv)
    if distributed.launched_size() > 1:
        return mpi_launch.run_rank(args.ipus, lambda: _run(args), _message)
    try:
        return _run(args)
    except IpuError as error:
        message = _message(error)
        if args.file == STDIN:
            message = stdin_located(message)
        sys.stderr.write(message + "\n")
        return 1


def _message(error: IpuError) -> str:
    return f"{error}" if format_location(error.location) else f"ipu-run: {error}"


def _run(args: argparse.Namespace) -> int:
    if args.input and args.random_inputs is not None:
        raise IpuError("give either --input files or --random-inputs, not both")
    if (args.file is None) == (args.model is None):
        raise IpuError("give a program FILE or --model NAME (one of them)")
    # The command line's own errors first, before a long compile or run: unlocated.
    _check_output_paths(args)
    if args.target is not None:
        load_target(args.target)
    world = distributed.current()
    if world is not None and (args.train or args.model is not None) and not (args.train and args.replicas == world.size):
        raise IpuError(
            f"--ipus and mpiexec run a program FILE, or --model NAME --train --replicas {world.size} (a replica a rank): "
            "--model runs on one process"
        )
    if args.train:
        if world is not None and world.rank:  # on MPI, rank 0 reports
            with open(os.devnull, "w") as quiet, contextlib.redirect_stdout(quiet):
                return _train(args)
        return _train(args)
    if args.replicas > 1:
        raise IpuError("--replicas trains data-parallel replicas: give it with --model NAME --train")
    if args.model is not None:
        return _run_model(args)
    source = program_source(args.file)
    name = STDIN_NAME if args.file == STDIN else args.file
    module = api.load_module(source)
    if not list(module.body.operations):
        raise IpuError(f"'{name}' is empty: no function to run")
    if args.check and api.is_program(module):
        raise IpuError(f"--check compares with the L0 program, but '{name}' is already an L3 ipu program: there is no L0 to run")
    if args.micro_batches > 1 and api.is_program(module):
        raise IpuError(f"--micro-batches pipelines while compiling, but '{name}' is already an L3 ipu program")
    simulator = api.load_simulator(module, args.target, args.entry, micro_batches=args.micro_batches, use_cache=not args.no_cache)
    inputs = _inputs(args, simulator)
    simulator.check_inputs(inputs)
    outputs = simulator.run(inputs)
    if simulator.world is not None and simulator.world.rank:  # on MPI, rank 0 reports
        return 0
    check_failed = _compare(outputs, api.reference_outputs(source, inputs, simulator.entry)) if args.check else False
    if check_failed:
        _note_undefined_behaviour(module)
    return _report(args, outputs, simulator.profile, check_failed)


def _inputs(args: argparse.Namespace, simulator: Simulator) -> list[np.ndarray]:
    if args.random_inputs is not None:
        return api.random_inputs(simulator.arguments, args.random_inputs)
    if not args.input and simulator.arguments:
        raise IpuError(
            f"@{simulator.entry} takes {len(simulator.arguments)} inputs: give them with --input A.npy ... or use --random-inputs SEED"
        )
    inputs = []
    wanted = [dtype for _, dtype in simulator.arguments] + [None] * len(args.input)
    for path, dtype in zip(args.input, wanted):
        try:
            inputs.append(_typed(np.load(path, allow_pickle=False), dtype))
        except OSError as error:
            raise IpuError(f"cannot read input '{path}': {error.strerror or error}") from None
        except ValueError as error:
            raise IpuError(f"cannot read input '{path}': not a .npy array ({error})") from None
    return inputs


def _typed(array: np.ndarray, dtype: np.dtype | None) -> np.ndarray:
    """`array` as `dtype` if it holds that ml_dtypes type's bits (.npy files record bf16 and FP8
    arrays as raw `V2` / `V1` elements: numpy knows no such types; docs/precision.md), or that
    type's numbers in the other byte order."""
    if dtype is not None and array.dtype.kind == "V" and array.dtype.fields is None and array.dtype.itemsize == dtype.itemsize:
        return array.view(dtype)
    if dtype is not None and array.dtype != dtype and array.dtype.newbyteorder("=") == dtype:
        return array.astype(dtype)  # the same numbers in the other byte order (a big-endian .npy)
    return array


def _note_undefined_behaviour(module) -> None:
    """After a failed check: what the program may do that MLIR leaves undefined, where the
    simulator's result and the ExecutionEngine's may both stand (docs/ipu-run.md)."""
    for what in sorted({UNDEFINED_FOR_SOME_OPERANDS[op.name] for op in ops_named(module.operation, UNDEFINED_FOR_SOME_OPERANDS)}):
        print(f"note: where the program does {what}, MLIR defines no result: the simulator's and the ExecutionEngine's may differ")


def _compare(outputs: list[np.ndarray], expected: list) -> bool:
    """Prints each output's comparison with its reference (runtime/oracle.py); True if one fails."""
    lines, failed = oracle.compare_all(outputs, expected)
    print("\n".join(lines))
    return failed


def _train(args: argparse.Namespace) -> int:
    """--train: docs/training.md; the logic is tools/train.py's."""
    if args.model is None or args.input or args.random_inputs is not None or args.entry or args.check or args.output_dir or args.profile:
        raise IpuError(
            "--train takes --model NAME and its own options: drop FILE, --input, --random-inputs, --entry, --check, --output-dir, --profile"
        )
    return train_zoo_model(
        args.model,
        args.steps,
        args.batch,
        args.optimizer,
        args.lr,
        args.target or "gc200",
        args.size,
        args.layers,
        args.reduced,
        args.replicas,
    )


def _run_model(args: argparse.Namespace) -> int:
    """--model: a zoo model exported by torch-mlir, compiled, simulated and checked against PyTorch."""
    if args.input or args.random_inputs is not None or args.entry or args.check:
        raise IpuError("--model makes its own inputs and always checks against PyTorch: drop --input, --random-inputs, --entry, --check")
    print(f"model:             {args.model} ({zoo.MODELS[args.model].summary})", flush=True)
    try:
        module, inputs = zoo.build(args.model, batch=args.batch, size=args.size, layers=args.layers)
    except ValueError as error:
        raise IpuError(str(error)) from None
    shapes = ", ".join(f"{'x'.join(map(str, value.shape))} {str(value.dtype).removeprefix('torch.')}" for value in inputs)
    print(f"inputs:            {shapes}; {sum(p.numel() for p in module.parameters()):,} parameters", flush=True)
    phases = Phases(lambda line: print(line, flush=True))
    try:  # first: a configuration PyTorch itself cannot run (an image too small) stops here
        with phases.phase("pytorch", "the reference outputs"):
            expected = [value.detach().numpy() for value in _as_tuple(torch_frontend.run_eager(module, *inputs))]
    except RuntimeError as error:
        raise IpuError(f"PyTorch cannot run {args.model} with these inputs: {str(error).splitlines()[0]}") from None
    # The zoo's models are seeded: its name and configuration, with the weights' hash, name the program.
    cache_key = f"zoo {args.model} batch {args.batch} size {args.size} layers {args.layers}"
    target = args.target or zoo.MODELS[args.model].target  # BERT-Large and GPT-2 medium: an m2000
    compiled = torch_frontend.compile(
        module,
        *inputs,
        target=target,
        progress=phases.say,
        cache_key=cache_key,
        use_cache=not args.no_cache,
        micro_batches=args.micro_batches,
    )
    arrays = [value.numpy() for value in inputs]
    with phases.phase("run"):
        outputs = list(_as_tuple(compiled(*arrays)))
    with phases.phase("check", "against PyTorch"):
        check_failed = _compare(outputs, expected)
    return _report(args, outputs, compiled.profile, check_failed)


def _report(args: argparse.Namespace, outputs: list[np.ndarray], profile: Profile, check_failed: bool) -> int:
    """Writes the outputs and profile (all or nothing), prints the summary and each output;
    the exit status."""
    output_dir, profile_path = (Path(path) if path else None for path in (args.output_dir, args.profile))
    report = (
        report_files(profile, args.report, args.model or ("stdin" if args.file == STDIN else Path(args.file).stem)) if args.report else {}
    )
    if output_dir or profile_path or report:  # all of a run's files, or none of them
        run_files.write_run_files(output_dir, outputs, profile_path, profile.to_json() + "\n", report)
    print(profile.summary())
    if report:  # --report DIR or IPU_MLIR_REPORT=DIR: the profile and its interactive report
        print(f"report:            {list(report)[-1]}")
    for index, output in enumerate(outputs):
        where = f" -> {Path(args.output_dir) / run_files.output_name(index)}" if args.output_dir else ""
        print(f"output {index}:          {'x'.join(map(str, output.shape)) or 'scalar'} {output.dtype}{where}")
    return 1 if check_failed else 0


def _as_tuple(value: typing.Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _check_output_paths(args: argparse.Namespace) -> None:
    """Every path ipu-run would write, checked before anything is run or written."""
    if args.profile:
        check_writable(Path(args.profile), "the profile")
    if args.output_dir:
        directory = Path(args.output_dir)
        if directory.exists() and not directory.is_dir():
            raise IpuError(f"cannot write the outputs to '{directory}': Not a directory")
        for place in (directory.resolve().parent, directory) if directory.is_dir() else (directory.resolve().parent,):
            if not place.is_dir():
                raise IpuError(f"cannot write the outputs to '{directory}': No such file or directory")
            if not os.access(place, os.W_OK | os.X_OK):
                raise IpuError(f"cannot write the outputs to '{directory}': Permission denied")


def _seed(text: str) -> int:
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"invalid seed '{text}': a non-negative integer")
    return seed


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message: str) -> typing.NoReturn:
        self.exit(1, f"ipu-run: error: {message}\n")


def _argument_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="ipu-run", description=__doc__.splitlines()[0], allow_abbrev=False)
    parser.add_argument("file", nargs="?", help="the program: L3, or L0/L1 to compile with the default pipeline ('-' for stdin)")
    parser.add_argument(
        "--target",
        default=None,
        help=f"{', '.join(builtin_targets())} or a target .toml file (default: the module's ipu.target, else {DEFAULT_TARGET}; "
        "--model: the zoo model's, m2000 for bert_large and gpt2_medium)",
    )
    parser.add_argument(
        "--ipus",
        type=cli.positive,
        default=None,
        metavar="N",
        help="simulate on N MPI ranks, one IPU each, or with --train --replicas N one replica each (docs/many-ipus.md)",
    )
    parser.add_argument("--entry", default=None, help="the entry function (default: main, or the only public function)")
    parser.add_argument(
        "--input", nargs="+", action="extend", default=[], metavar="A.npy", help="inputs, in the order of the entry's arguments"
    )
    parser.add_argument(
        "--random-inputs", type=_seed, default=None, metavar="SEED", help="deterministic random inputs: floats in [-1, 1), small integers"
    )
    parser.add_argument("--output-dir", default=None, metavar="DIR", help="write each result as DIR/output<i>.npy")
    parser.add_argument("--profile", default=None, metavar="PROFILE.json", help="write the per-superstep, per-tile profile as JSON")
    parser.add_argument(
        "--report",
        default=os.environ.get("IPU_MLIR_REPORT"),
        metavar="DIR",
        help="write NAME.json and NAME.html there (default: $IPU_MLIR_REPORT)",
    )
    parser.add_argument(
        "--check", action="store_true", help="also run the L0 input with MLIR's ExecutionEngine and compare (exit 1 beyond tolerance)"
    )
    parser.add_argument(
        "--micro-batches",
        type=cli.positive,
        default=1,
        metavar="M",
        help="pipeline the sharded program over M micro-batches of the batch (ipu-pipeline; a multi-IPU target)",
    )
    parser.add_argument(
        "--no-cache",
        action="store_true",
        help="compile anew, neither reading nor writing the program cache (also: IPU_MLIR_NO_CACHE=1)",
    )
    parser.add_argument(
        "--model", choices=list(zoo.MODELS), default=None, help="instead of FILE: a zoo model, run and checked against PyTorch"
    )
    parser.add_argument("--batch", type=cli.positive, default=1, help="--model: the batch size (default 1)")
    parser.add_argument(
        "--size", type=cli.positive, default=None, help="--model: the image side (vision) or sequence length (default 224 or 128)"
    )
    parser.add_argument("--layers", type=cli.positive, default=None, help="--model: a transformer's layer count (default 12)")
    parser.add_argument(
        "--train", action="store_true", help="--model: train on synthetic data and check against PyTorch (docs/training.md)"
    )
    parser.add_argument("--steps", type=cli.positive, default=5, help="--train: training steps (default 5)")
    parser.add_argument("--optimizer", default="sgd", help=f"--train: the torch.optim optimizer: {', '.join(OPTIMIZERS)} (default sgd)")
    parser.add_argument("--lr", type=float, default=0.01, help="--train: the learning rate (default 0.01)")
    parser.add_argument("--reduced", action="store_true", help="--train: the zoo's small configuration of the model (the tests')")
    parser.add_argument(
        "--replicas",
        type=cli.positive,
        default=1,
        metavar="R",
        help="--train: R data-parallel replicas, one IPU each, --batch samples each (a power of two; docs/many-ipus.md)",
    )
    cli.add_version(parser, "ipu-run")
    return parser


if __name__ == "__main__":
    sys.exit(main())
