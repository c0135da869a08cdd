"""Simulator cost against numpy on a deep model (issue 4, performance).

    .venv/bin/python bench/simulator_vs_numpy.py [--model mlp|cnn] [--layers 12] [--batch 256] [--width 512] [--image 32] [--target gc200]

A model of `layers` blocks is compiled once for the target: an MLP (matmul, bias add, ReLU)
or a CNN (3x3 'same' convolution, bias add, ReLU; `--width` channels). Then the
same inputs run (a) directly in numpy, the same math layer by layer, and (b) on the BSP
simulator (the run phase: host streams, every exchange and every vertex group). Both are timed
side by side in one process, interleaved, best of `--repeat`; loading (`Simulator()`: verify,
the checked plan, weights) and the first run, which also makes the BSP memory checks, are
reported apart. Memory: the simulator's peak traced allocation (its plans included) from its
construction through the first run, and over the next two runs (the first of them plans the
later runs), against the SRAM the program
uses on the target (the sum over tiles of each tile's peak) plus the host arrays (inputs,
weights, outputs).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from ipu_mlir.lowering.pipelines import compile_module
from ipu_mlir.runtime.api import load_module
from ipu_mlir.runtime.simulator import Simulator

MLP = """
#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
module attributes {{ipu.target = "{target}"}} {{
  func.func @main(%x: tensor<{b}x{w}xf32>{weight_args}) -> tensor<{b}x{w}xf32> {{
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<{b}x{w}xf32>
{layers}
    return %y{last} : tensor<{b}x{w}xf32>
  }}
}}
"""

LAYER = (
    """
    %f{i} = linalg.fill ins(%zero : f32) outs(%empty : tensor<{b}x{w}xf32>) -> tensor<{b}x{w}xf32>
    %m{i} = linalg.matmul ins({source}, %w{i} : tensor<{b}x{w}xf32>, tensor<{w}x{w}xf32>) outs(%f{i} : tensor<{b}x{w}xf32>) """
    """-> tensor<{b}x{w}xf32>
    %y{i} = linalg.generic {{indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}}
        ins(%m{i}, %b{i} : tensor<{b}x{w}xf32>, tensor<{w}xf32>) outs(%empty : tensor<{b}x{w}xf32>) {{
    ^bb0(%a: f32, %c: f32, %o: f32):
      %s = arith.addf %a, %c : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }} -> tensor<{b}x{w}xf32>"""
)


def model(layers: int, b: int, w: int, target: str) -> str:
    weight_args = "".join(f", %w{i}: tensor<{w}x{w}xf32>, %b{i}: tensor<{w}xf32>" for i in range(layers))
    body = "".join(LAYER.format(i=i, b=b, w=w, source="%x" if i == 0 else f"%y{i - 1}") for i in range(layers))
    return MLP.format(target=target, b=b, w=w, weight_args=weight_args, layers=body, last=layers - 1)


CNN = """
#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#ch = affine_map<(d0, d1, d2, d3) -> (d1)>
module attributes {{ipu.target = "{target}"}} {{
  func.func @main(%x: tensor<{b}x{c}x{h}x{h}xf32>{weight_args}) -> tensor<{b}x{c}x{h}x{h}xf32> {{
    %zero = arith.constant 0.0 : f32
    %empty = tensor.empty() : tensor<{b}x{c}x{h}x{h}xf32>
    %f = linalg.fill ins(%zero : f32) outs(%empty : tensor<{b}x{c}x{h}x{h}xf32>) -> tensor<{b}x{c}x{h}x{h}xf32>
{layers}
    return %y{last} : tensor<{b}x{c}x{h}x{h}xf32>
  }}
}}
"""

CONV_LAYER = (
    """
    %p{i} = tensor.pad {source} low[0, 0, 1, 1] high[0, 0, 1, 1] {{
    ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
      tensor.yield %zero : f32
    }} : tensor<{b}x{c}x{h}x{h}xf32> to tensor<{b}x{c}x{hp}x{hp}xf32>
    %m{i} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>}}
      ins(%p{i}, %w{i} : tensor<{b}x{c}x{hp}x{hp}xf32>, tensor<{c}x{c}x3x3xf32>) outs(%f : tensor<{b}x{c}x{h}x{h}xf32>) """
    """-> tensor<{b}x{c}x{h}x{h}xf32>
    %y{i} = linalg.generic {{indexing_maps = [#id, #ch, #id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}}
        ins(%m{i}, %b{i} : tensor<{b}x{c}x{h}x{h}xf32>, tensor<{c}xf32>) outs(%empty : tensor<{b}x{c}x{h}x{h}xf32>) {{
    ^bb0(%a: f32, %d: f32, %o: f32):
      %s = arith.addf %a, %d : f32
      %r = arith.maximumf %s, %zero : f32
      linalg.yield %r : f32
    }} -> tensor<{b}x{c}x{h}x{h}xf32>"""
)


def cnn(layers: int, b: int, c: int, h: int, target: str) -> str:
    weight_args = "".join(f", %w{i}: tensor<{c}x{c}x3x3xf32>, %b{i}: tensor<{c}xf32>" for i in range(layers))
    body = "".join(CONV_LAYER.format(i=i, b=b, c=c, h=h, hp=h + 2, source="%x" if i == 0 else f"%y{i - 1}") for i in range(layers))
    return CNN.format(target=target, b=b, c=c, h=h, weight_args=weight_args, layers=body, last=layers - 1)


def numpy_cnn(inputs: list[np.ndarray]) -> np.ndarray:
    """3x3 'same' convolutions as numpy users write them: im2col of the padded input (windows
    as a strided view, copied channel-major) times the filter matrix (BLAS). The fastest of
    the numpy formulations we timed (tensordot on the windows view, per-tap einsum)."""
    y = inputs[0]
    n, c, h, w = y.shape
    for weight, bias in zip(inputs[1::2], inputs[2::2]):
        windows = np.lib.stride_tricks.sliding_window_view(np.pad(y, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3))
        columns = windows.transpose(1, 4, 5, 0, 2, 3).reshape(c * 9, n * h * w)
        conv = (weight.reshape(weight.shape[0], -1) @ columns).reshape(-1, n, h, w).transpose(1, 0, 2, 3)
        y = np.maximum(conv + bias[:, None, None], np.float32(0))
    return y


def numpy_mlp(inputs: list[np.ndarray]) -> np.ndarray:
    y = inputs[0]
    for weight, bias in zip(inputs[1::2], inputs[2::2]):
        y = np.maximum(y @ weight + bias, np.float32(0))
    return y


def interleaved(functions: list, repeat: int) -> list[list[float]]:
    """Each function's wall times over `repeat` rounds, each round running every function
    once: all sides see the same load of this shared machine."""
    times = [[] for _ in functions]
    for _ in range(repeat):
        for function, record in zip(functions, times):
            start = time.perf_counter()
            function()
            record.append(time.perf_counter() - start)
    return times


def best_interleaved(functions: list, repeat: int) -> list[float]:
    """The best wall time of each function, measured interleaved."""
    return [min(record) for record in interleaved(functions, repeat)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--width", type=int, default=512, help="MLP: features; CNN: channels")
    parser.add_argument("--image", type=int, default=32, help="CNN: image height and width")
    parser.add_argument("--target", default="gc200")
    parser.add_argument("--repeat", type=int, default=10)
    args = parser.parse_args()
    start = time.perf_counter()
    if args.model == "mlp":
        text, reference = model(args.layers, args.batch, args.width, args.target), numpy_mlp
        title = f"{args.layers} x (matmul {args.batch}x{args.width}x{args.width} + bias + ReLU)"
    else:
        text, reference = cnn(args.layers, args.batch, args.width, args.image, args.target), numpy_cnn
        title = (
            f"{args.layers} x (conv 3x3 {args.width}->{args.width} on {args.batch}x{args.width}x{args.image}x{args.image} + bias + ReLU)"
        )
    module = load_module(text)
    with module.context:
        compile_module(module)
    compile_seconds = time.perf_counter() - start
    tracemalloc.start()  # the simulator from here on: its plans, buffers, masks and results
    start = time.perf_counter()
    simulator = Simulator(module)
    plan_seconds = time.perf_counter() - start
    rng = np.random.default_rng(0)
    inputs = [(rng.standard_normal(shape, dtype=np.float32) / np.sqrt(args.width)).astype(dtype) for shape, dtype in simulator.arguments]
    start = time.perf_counter()
    (simulated,) = simulator.run(inputs)  # makes the BSP memory checks
    first_seconds = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.reset_peak()
    for _ in range(2):  # later runs: the second plans them (Simulator), binding their arrays
        simulator.run(inputs)
    _, later_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    expected = reference(inputs)
    error = float(np.abs(simulated - expected).max() / max(1e-30, float(np.abs(expected).max())))
    host = sum(a.nbytes for a in inputs) + simulated.nbytes
    numpy_seconds, simulator_seconds = best_interleaved([lambda: reference(inputs), lambda: simulator.run(inputs)], args.repeat)
    profile = simulator.profile
    sram = int(profile.memory_per_tile.sum())
    print(f"model: {title} on {args.target}; compile {compile_seconds:.2f} s, simulator load {plan_seconds:.2f} s")
    print(f"estimated device time: {profile.cycles:,} cycles, {profile.supersteps} supersteps; max rel error vs numpy {error:.1e}")
    print(
        f"wall time, best of {args.repeat}: numpy {numpy_seconds * 1e3:.1f} ms, simulator {simulator_seconds * 1e3:.1f} ms, "
        f"ratio {simulator_seconds / numpy_seconds:.2f}x"
    )
    print(f"first simulator run (with the BSP memory checks, traced): {first_seconds * 1e3:.1f} ms")
    print(
        f"memory: SRAM used {sram / 2**20:.1f} MiB + host arrays {host / 2**20:.1f} MiB = {(sram + host) / 2**20:.1f} MiB; "
        f"simulator peak (plans included): first run {peak / 2**20:.1f} MiB ({peak / (sram + host):.2f}x), later runs "
        f"{later_peak / 2**20:.1f} MiB ({later_peak / (sram + host):.2f}x)"
    )


if __name__ == "__main__":
    main()
