"""`ipu-demo` (`make demo`): the main job on the built-in example, then the dialect up close.

First `examples/cnn.mlir` (a small CNN in upstream linalg) is compiled for gc200 by the default
pipeline, run on the BSP simulator, and checked against upstream MLIR's ExecutionEngine, with
the simulator's profile. Then an `ipu` program is built through the Python API: verification
by both tools that load the one dialect definition, the compact SPMD form (the same IR for 16
or 1,472 tiles), an `ipu-opt` pipeline mixing our passes with upstream ones, and a verifier
error pointing at its source line.

The program: stream 64 floats per tile onto every tile of the target, apply ReLU on every tile
(one vertex group), gather the first four results of every tile onto tile 0 (one exchange
copy), stream both buffers back to the host.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from mlir import ir
from mlir.dialects import arith, func

from ipu_mlir.dialects import IRDL_PATH, ipu, make_context
from ipu_mlir.dialects.attrs import LinearMapping, TileGrid
from ipu_mlir.dialects.verifier import verify
from ipu_mlir.lowering.pass_registry import build_pass_manager
from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime import oracle
from ipu_mlir.runtime.api import load_module, random_inputs
from ipu_mlir.runtime.reference import run_reference
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target import DEFAULT_TARGET, TARGET_ATTR, Target, load_target
from ipu_mlir.target.diagnostics import format_location

from . import cli

PER_TILE = 64
HEAD = 4  # elements of each tile's result gathered onto tile 0


def build_relu_program(target: Target) -> ir.Module:
    """The demo program for `target`, on all of its tiles."""
    tiles, per_tile = target.num_tiles, PER_TILE
    f32 = ir.F32Type.get()
    host_type = ir.RankedTensorType.get([tiles * per_tile], f32)
    head_type = ir.RankedTensorType.get([HEAD * tiles], f32)
    slice_memref = ir.MemRefType.get([per_tile], f32)
    slice_tensor = ir.RankedTensorType.get([per_tile], f32)
    on_tiles = TileGrid.range(0, tiles)
    layout = LinearMapping(grain=per_tile, tiles=on_tiles)

    module = ir.Module.create()
    module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get(target.name)
    with ir.InsertionPoint(module.body):
        ipu.buffer("x", slice_memref, on_tiles)
        ipu.buffer("y", slice_memref, on_tiles)
        ipu.buffer("head", ir.MemRefType.get([HEAD * tiles], f32), TileGrid.range(0, 1))

        main = ipu.program_function("main", [host_type], [host_type, head_type])
        with ir.InsertionPoint(main.entry_block):
            ipu.host_to_device(main.arguments[0], "x", layout)
            ipu.sync("external")
            ipu.execute("relu_cs")
            ipu.sync("internal")
            # Tile i sends y[0:4] to tile 0's head[4i:4i+4]: one op for every tile.
            ipu.copy(
                "y",
                "head",
                size=HEAD,
                src_tiles=on_tiles,
                dst_tiles=TileGrid(0, (tiles,), (0,)),
                src_offset=[0, 0],
                dst_offset=[0, HEAD],
            )
            ipu.sync("external")
            y = ipu.device_to_host(host_type, "y", layout)
            head = ipu.device_to_host(head_type, "head", LinearMapping(grain=1, tiles=TileGrid.range(0, 1)))
            func.ReturnOp([y.result, head.result])

        with ir.InsertionPoint(ipu.compute_set_function("relu_cs").entry_block):
            ipu.vertex_group("relu", on_tiles, inputs=["x"], outputs=["y"])
            func.ReturnOp([])

        codelet = ipu.codelet_function("relu", [slice_tensor], [slice_tensor])
        with ir.InsertionPoint(codelet.entry_block):
            zero = arith.ConstantOp(slice_tensor, ir.DenseElementsAttr.get_splat(slice_tensor, ir.FloatAttr.get(f32, 0.0)))
            func.ReturnOp([arith.MaximumFOp(codelet.arguments[0], zero).result])
    return module


def _count_ops(module: ir.Module) -> int:
    count = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal count
        count += 1
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return count - 1  # the module itself


def _section(title: str) -> None:
    print(f"\n== {title} ==")


EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "cnn.mlir"


def run_example(target_name: str = DEFAULT_TARGET) -> bool:
    """Compiles and simulates examples/cnn.mlir; True when it matches the reference."""
    _section(f"The main job: {EXAMPLE.name} (linalg on tensors) compiled for {target_name} and simulated")
    source = load_module(str(EXAMPLE))
    with source.context:
        l0_ops = _count_ops(source)
        program = compile_module(ir.Module.parse(source.operation.get_asm(enable_debug_info=True)), target_name)
        counts: dict[str, int] = {}
        for op in _walk(program):
            counts[op.operation.name] = counts.get(op.operation.name, 0) + 1
        print(
            f"L0: {l0_ops} ops -> L3: {_count_ops(program)} ops: "
            + ", ".join(f"{counts.get(n, 0)} {n}" for n in ("ipu.buffer", "ipu.copy", "ipu.execute", "ipu.vertex_group", "ipu.sync"))
        )
        simulator = Simulator(program, load_target(target_name))
        inputs = random_inputs(simulator.arguments, seed=0)
        outputs = simulator.run(inputs)
    expected = run_reference(EXAMPLE, inputs)
    comparisons = [oracle.compare(got, want) for got, want in zip(outputs, expected)]
    error = max(comparison.max_rel for comparison in comparisons)
    ok = len(outputs) == len(expected) and all(comparison.ok for comparison in comparisons)
    print(f"simulator vs upstream ExecutionEngine: max relative error {error:.1e} ({'ok' if ok else 'MISMATCH'})")
    print(simulator.profile.summary())
    return ok


@cli.tool("ipu-demo")
def main(argv: list[str] | None = None) -> int:
    parser = cli.ArgumentParser(prog="ipu-demo", description=__doc__.splitlines()[0])
    cli.add_version(parser, "ipu-demo")
    parser.parse_args(argv)
    if not run_example():
        return 1
    context = make_context()
    with context, ir.Location.unknown():
        tiny = load_target("tiny")
        module = build_relu_program(tiny)
        _section(f"An ipu program built with the Python API, for target '{tiny.name}'")
        print(module)

        _section("Verification")
        assert module.operation.verify()
        errors = verify(module.operation)
        print(f"IRDL constraints + Python verifier (ipu_mlir.dialects.verifier): {len(errors)} errors")
        with tempfile.TemporaryDirectory() as scratch:
            path = Path(scratch) / "relu.mlir"
            path.write_text(str(module))
            mlir_opt = Path(list(sys.modules["mlir"].__path__)[0]) / "bin" / "mlir-opt"
            upstream = subprocess.run([str(mlir_opt), f"--irdl-file={IRDL_PATH}", str(path)], capture_output=True, text=True)
            print(f"upstream mlir-opt --irdl-file=dialects/ipu.irdl.mlir: exit {upstream.returncode}")
        if errors or upstream.returncode:
            print(*map(str, errors), upstream.stderr, sep="\n", file=sys.stderr)
            return 1

        _section("Compact SPMD form: IR size does not grow with the tile count")
        print(f"{'target':8} {'tiles':>6} {'IR ops':>7} {'vertices':>9} {'edges':>6} {'transfers':>10} {'bytes/tile':>11}")
        for name in ("tiny", "gc2", "gc200"):
            target = load_target(name)
            program = build_relu_program(target)
            groups = [op for op in _walk(program) if isinstance(op, ipu.VertexGroupOp)]
            copies = [op for op in _walk(program) if isinstance(op, ipu.CopyOp)]
            buffers = [op for op in program.body.operations if isinstance(op, ipu.BufferOp)]
            per_tile = sum(b.bytes_per_tile for b in buffers if b.tiles.first == 0 and b.tiles.count > 1)
            print(
                f"{name:8} {target.num_tiles:>6} {_count_ops(program):>7} {sum(g.num_vertices for g in groups):>9} "
                f"{sum(g.num_edges for g in groups):>6} {sum(c.src_tiles.count for c in copies):>10} {per_tile:>11}"
            )

        pipeline = "builtin.module(ipu-set-target{target=gc2},canonicalize,func.func(cse),ipu-verify)"
        _section(f"An ipu-opt pipeline mixing Python and upstream passes:\n   {pipeline}")
        retargeted = ir.Module.parse(str(module))
        build_pass_manager(pipeline).run(retargeted.operation)
        print(f"module attributes: {retargeted.operation.attributes[TARGET_ATTR]}; the 16-tile program verifies on gc2")
        too_big = ir.Operation.parse(str(build_relu_program(load_target("gc200"))), source_name="relu-gc200.mlir")
        try:
            build_pass_manager("builtin.module(ipu-set-target{target=gc2},ipu-verify)").run(too_big)
        except ir.MLIRError as failure:
            first = failure.error_diagnostics[0]
            print(f"the 1,472-tile program on gc2: {format_location(first.location)}: error: {first.message}")

        _section("A bad program: the verifier names the op, the tile and the buffer")
        head = next(op for op in module.body.operations if isinstance(op, ipu.BufferOp) and op.sym_name == "head")
        head.attributes["tiles"] = TileGrid.range(1, 1).encode()  # head now lives on tile 1 only
        print('"ipu.buffer"() {sym_name = "head", tiles = array<i64: 1, 1, 1>, ...}')
        broken = ir.Operation.parse(str(module), source_name="relu.mlir")
        for error in verify(broken):
            print(error)
    print(
        "\nNext: ipu-compile / ipu-run on your own linalg (docs/compiler.md, docs/ipu-run.md); ipu-opt --help lists the "
        "passes; make test runs the suites."
    )
    return 0


def _walk(module: ir.Module) -> list[ir.OpView]:
    found: list[ir.OpView] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        found.append(op.opview)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


if __name__ == "__main__":
    sys.exit(main())
