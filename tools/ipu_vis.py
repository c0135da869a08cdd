"""ipu-vis: pictures of compiled programs and their profiles (docs/pictures.md).

    ipu-vis graph examples/cnn.mlir -o cnn.png --target gc200     # L0 compiled first; L3 as it is
    ipu-vis graph --model resnet50 -o resnet50.png                # a zoo model, exported and compiled
    ipu-vis graph --model alexnet --train -o alexnet-train.png    # its training step, coloured by phase
    ipu-vis graph small.mlir -o small.html                        # SVG / HTML for small programs
    ipu-vis graph examples/cnn.mlir --target m2000 --micro-batches 4 -o cnn-m2000.png   # a region per IPU
    ipu-vis report profile.json -o report.html --png-dir report   # ipu-run --profile's views

Progress goes to stderr, line by line; nothing is written when anything fails.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from ipu_mlir.frontends import zoo
from ipu_mlir.target import DEFAULT_TARGET, builtin_targets, load_target
from ipu_mlir.target.diagnostics import IpuError, format_location
from ipu_mlir.vis import api

from . import cli
from .cli import positive
from .ipu_opt import STDIN_NAME, check_writable
from .stdin_program import STDIN, program_source, stdin_located
from .train import _batch, _WithLoss  # ipu-run --train's loss and synthetic batch


@cli.tool("ipu-vis")
def main(argv: list[str] | None = None) -> int:
    try:
        args = _argument_parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    try:
        return args.run(args)
    except IpuError as error:
        message = f"{error}" if format_location(error.location) else f"ipu-vis: {error}"
        sys.stderr.write((stdin_located(message) if getattr(args, "file", None) == STDIN else message) + "\n")
        return 1


def _progress():
    start = time.monotonic()
    return lambda line: print(f"[{time.monotonic() - start:6.1f}s] {line}", file=sys.stderr, flush=True)


def _graph(args: argparse.Namespace) -> int:
    if (args.file is None) == (args.model is None):
        raise IpuError("give a program FILE or --model NAME (one of them)")
    check_writable(Path(args.output), "the picture")
    if args.target is not None:
        load_target(args.target)
    say = _progress()
    if args.train and args.model is None:
        raise IpuError("--train draws a zoo model's training step: give --model NAME")
    if args.train and args.micro_batches > 1:
        raise IpuError("--micro-batches pipelines inference: a training step over pipeline stages is not implemented")
    if args.model is not None and args.train:
        source = _training_program(args, say)
        title = args.title or f"{args.model}{' (reduced)' if args.reduced else ''} training step, batch {args.batch}"
    elif args.model is not None:
        source = api.zoo_program(
            args.model, args.target or DEFAULT_TARGET, say, args.micro_batches, size=args.size, layers=args.layers, batch=args.batch
        )
        title = args.title or args.model
    else:
        source, title = program_source(args.file), args.title or ("stdin" if args.file == STDIN else Path(args.file).stem)
        say(f"reading {STDIN_NAME if args.file == STDIN else args.file}...")
    graph = api.graph_of(source, args.target, args.entry, args.layer_depth, args.micro_batches if args.file else 1)
    say(f"{graph.num_vertices:,} vertices, {graph.num_edges:,} edges ({graph.sources.size:,} drawn), {len(graph.layers)} layers")
    if not graph.num_vertices:
        raise IpuError("nothing to draw: the compiled program has no vertices (it computes nothing on the device)")
    api.draw(graph, args.output, title, args.pixels, progress=say)
    say(f"wrote {args.output}")
    return 0


def _training_program(args: argparse.Namespace, say):  # noqa: ANN202
    """The zoo model with ipu-run --train's loss (tools/train.py), SGD, one synthetic micro-batch: its joint step at L3."""
    import torch

    try:
        options = dict(zoo.MODELS[args.model].reduced) if args.reduced else {}
        size, layers = options.pop("size", options.pop("seq", args.size)), options.pop("layers", args.layers)
        net, example = zoo.build(args.model, batch=args.batch, size=args.size or size, layers=args.layers or layers, **options)
    except (KeyError, ValueError) as error:
        raise IpuError(str(error.args[0])) from None
    for layer in net.modules():
        if isinstance(layer, torch.nn.Dropout):
            layer.p = 0.0
    with torch.no_grad():
        probe = net.eval()(*example)
    model = _WithLoss(net, args.model)
    inputs = _batch(example, model, args.model, tuple((probe[0] if isinstance(probe, tuple) else probe).shape), 0)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    return api.training_program(model, inputs, optimizer, args.target or DEFAULT_TARGET, say)


def _report(args: argparse.Namespace) -> int:
    if not args.output and not args.png_dir:
        raise IpuError("give -o REPORT.html, --png-dir DIR or both")
    if args.output:
        check_writable(Path(args.output), "the report")
    try:
        written = api.report(args.profile, args.output, args.png_dir, args.compare)
    except UnicodeDecodeError as error:
        raise IpuError(f"'{args.profile}' is not a profile: not UTF-8 text ({error.reason})") from None
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as error:
        # A JSON file with the profile's keys but other contents: ipu-run never writes one.
        raise IpuError(f"'{args.profile}' is not an ipu-run profile: {type(error).__name__}: {error}") from None
    for path in written:
        print(f"wrote {path}")
    return 0


def _argument_parser() -> argparse.ArgumentParser:
    parser = cli.ArgumentParser(prog="ipu-vis", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(required=True, metavar="{graph,report}")
    graph = commands.add_parser("graph", help="the compiled graph: vertices and edges, clustered and coloured by layer")
    graph.add_argument("file", nargs="?", help="an .mlir program: L0/L1 (compiled first) or L3 ('-' for stdin)")
    graph.add_argument("--model", choices=list(zoo.MODELS), help="a zoo model instead of a file")
    graph.add_argument("--size", type=positive, help="--model's image side or sequence length")
    graph.add_argument("--layers", type=positive, help="--model's layer count (transformers)")
    graph.add_argument("--train", action="store_true", help="--model's training step (forward, backward, SGD update), coloured by phase")
    graph.add_argument("--batch", type=positive, default=1, help="--model's batch (--train: its micro-batch; default 1)")
    graph.add_argument(
        "--micro-batches",
        type=positive,
        default=1,
        metavar="M",
        help="pipeline the sharded program over M micro-batches of the batch (ipu-pipeline; a multi-IPU target): a region per IPU",
    )
    graph.add_argument("--reduced", action="store_true", help="--train: the zoo's small configuration (the tests')")
    graph.add_argument("-o", "--output", required=True, help="the picture: .png, .svg or .html (the last two for small programs)")
    graph.add_argument("--target", help=f"{', '.join(builtin_targets())} or a target .toml (default: the module's, else {DEFAULT_TARGET})")
    graph.add_argument("--entry", help="the function (default: main, or the only one)")
    graph.add_argument("--layer-depth", type=positive, default=2, help="parts of a module path naming a layer (default 2: layer1.0)")
    graph.add_argument("--pixels", type=positive, help="the picture's side in pixels (PNG default 2000)")
    graph.add_argument("--title", help="the caption's title (default: the file's or model's name)")
    graph.set_defaults(run=_graph)
    report = commands.add_parser("report", help="the profile views of ipu-run --profile's JSON, as HTML and PNGs")
    report.add_argument("profile", help="PROFILE.json from ipu-run --profile")
    report.add_argument("-o", "--output", help="the report: one self-contained HTML file")
    report.add_argument("--png-dir", help="also write each view as a PNG in this directory")
    report.add_argument("--compare", metavar="BASELINE.json", help="compare with this profile in the HTML report")
    report.set_defaults(run=_report)
    cli.add_version(parser, "ipu-vis")
    return parser


if __name__ == "__main__":
    sys.exit(main())
