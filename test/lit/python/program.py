# RUN: %PYTHON %s | FileCheck %s
# The module the Python API builds is accepted by both tools that load the IRDL definition.
# RUN: %PYTHON %s --emit | %mlir-opt-ipu | FileCheck %s --check-prefix=UPSTREAM
# RUN: %PYTHON %s --emit | ipu-opt | FileCheck %s --check-prefix=UPSTREAM

# A complete L3 program (relu of 1,024 floats on the 16 tiles of the tiny target, then a gather
# of one element per tile onto tile 0), the same program as the second half of
# test/lit/dialect/ops.mlir, built entirely through the Python API.

import sys

from mlir import ir
from mlir.dialects import arith, func

from ipu_mlir.dialects import ipu, make_context, verifier
from ipu_mlir.dialects.attrs import LinearMapping, TileGrid
from ipu_mlir.target import TARGET_ATTR


def run(f):
    print("\nTEST:", f.__name__)
    with make_context(), ir.Location.unknown():
        f()
    return f


def build_relu_program() -> ir.Module:
    f32 = ir.F32Type.get()
    host = ir.RankedTensorType.get([1024], f32)
    slice_tensor = ir.RankedTensorType.get([64], f32)
    tiles = TileGrid.range(0, 16)
    layout = LinearMapping(grain=64, tiles=tiles)

    module = ir.Module.create()
    module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get("tiny")
    with ir.InsertionPoint(module.body):
        ipu.buffer("x", ir.MemRefType.get([64], f32), tiles, offset=0)
        ipu.buffer("y", ir.MemRefType.get([64], f32), tiles, offset=256)
        ipu.buffer("sum", ir.MemRefType.get([16], f32), TileGrid.range(0, 1))

        main = func.FuncOp("main", ([host], [host, ir.RankedTensorType.get([16], f32)]))
        main.attributes[ipu.PROGRAM_ATTR] = ir.UnitAttr.get()
        with ir.InsertionPoint(main.add_entry_block()):
            ipu.host_to_device(main.arguments[0], "x", layout)
            ipu.sync("external")
            ipu.execute("relu_cs")
            ipu.sync("internal")
            ipu.copy(
                "y",
                "sum",
                size=1,
                src_tiles=tiles,
                dst_tiles=TileGrid(0, (16,), (0,)),
                src_offset=[0, 0],
                dst_offset=[0, 1],
            )
            ipu.sync("external")
            out = ipu.device_to_host(host, "y", layout)
            total = ipu.device_to_host(ir.RankedTensorType.get([16], f32), "sum", LinearMapping(grain=1, tiles=TileGrid.range(0, 1)))
            func.ReturnOp([out.result, total.result])

        compute_set = func.FuncOp("relu_cs", ([], []), visibility="private")
        compute_set.attributes[ipu.COMPUTE_SET_ATTR] = ir.UnitAttr.get()
        with ir.InsertionPoint(compute_set.add_entry_block()):
            ipu.vertex_group("relu", tiles, inputs=["x"], outputs=["y"])
            func.ReturnOp([])

        codelet = func.FuncOp("relu", ([slice_tensor], [slice_tensor]), visibility="private")
        codelet.attributes[ipu.CODELET_ATTR] = ir.UnitAttr.get()
        with ir.InsertionPoint(codelet.add_entry_block()):
            zero = arith.ConstantOp(slice_tensor, ir.DenseElementsAttr.get_splat(slice_tensor, ir.FloatAttr.get(f32, 0.0)))
            func.ReturnOp([arith.MaximumFOp(codelet.arguments[0], zero).result])
    return module


def verify(module: ir.Module) -> None:
    print("mlir verify:", module.operation.verify())
    errors = verifier.verify(module.operation)
    for error in errors:
        print(error)
    print("ipu errors:", len(errors))


if "--emit" in sys.argv:
    with make_context(), ir.Location.unknown():
        print(build_relu_program())
    sys.exit(0)


# UPSTREAM-LABEL: module attributes {ipu.target = "tiny"}
# UPSTREAM: "ipu.buffer"() {offset = 0 : i64, sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
# UPSTREAM: func.func @main(%arg0: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<16xf32>) attributes {ipu.program}
# UPSTREAM: "ipu.copy"() {dest = @sum, dst_offset = array<i64: 0, 1>, dst_tiles = array<i64: 0, 16, 0>, size = 1 : i64, source = @y,
# UPSTREAM-SAME: src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 16, 1>} : () -> ()
# UPSTREAM: "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
# UPSTREAM: func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet}


# CHECK-LABEL: TEST: test_relu_program
@run
def test_relu_program():
    module = build_relu_program()
    # CHECK: module attributes {ipu.target = "tiny"} {
    # CHECK-NEXT: "ipu.buffer"() {offset = 0 : i64, sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
    # CHECK-NEXT: "ipu.buffer"() {offset = 256 : i64, sym_name = "y", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
    # CHECK-NEXT: "ipu.buffer"() {sym_name = "sum", tiles = array<i64: 0, 1, 1>, type = memref<16xf32>} : () -> ()
    # CHECK-NEXT: func.func @main(%arg0: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<16xf32>) attributes {ipu.program} {
    # CHECK-NEXT: "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {grain = 64 : i64, kind = "linear",
    # CHECK-SAME: tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
    # CHECK-NEXT: "ipu.sync"() {kind = "external"} : () -> ()
    # CHECK-NEXT: "ipu.execute"() {compute_set = @relu_cs} : () -> ()
    # CHECK-NEXT: "ipu.sync"() {kind = "internal"} : () -> ()
    # CHECK-NEXT: "ipu.copy"() {dest = @sum, dst_offset = array<i64: 0, 1>, dst_tiles = array<i64: 0, 16, 0>, size = 1 : i64,
    # CHECK-SAME: source = @y, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 16, 1>} : () -> ()
    # CHECK-NEXT: "ipu.sync"() {kind = "external"} : () -> ()
    # CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @y, mapping = {grain = 64 : i64, kind = "linear",
    # CHECK-SAME: tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    # CHECK-NEXT: %1 = "ipu.device_to_host"() {buffer = @sum, mapping = {grain = 1 : i64, kind = "linear",
    # CHECK-SAME: tiles = array<i64: 0, 1, 1>}} : () -> tensor<16xf32>
    # CHECK-NEXT: return %0, %1 : tensor<1024xf32>, tensor<16xf32>
    # CHECK-NEXT: }
    # CHECK-NEXT: func.func private @relu_cs() attributes {ipu.compute_set} {
    # CHECK-NEXT: "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
    # CHECK-NEXT: return
    # CHECK-NEXT: }
    # CHECK-NEXT: func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet} {
    # CHECK-NEXT: %cst = arith.constant dense<0.000000e+00> : tensor<64xf32>
    # CHECK-NEXT: %0 = arith.maximumf %arg0, %cst : tensor<64xf32>
    # CHECK-NEXT: return %0 : tensor<64xf32>
    # CHECK-NEXT: }
    # CHECK-NEXT: }
    print(module)
    # CHECK: mlir verify: True
    # CHECK-NEXT: ipu errors: 0
    verify(module)


# CHECK-LABEL: TEST: test_program_round_trips_through_text
@run
def test_program_round_trips_through_text():
    module = build_relu_program()
    text = str(module)
    parsed = ir.Module.parse(text)
    # CHECK: identical: True
    print("identical:", str(parsed) == text)
    # CHECK: mlir verify: True
    # CHECK-NEXT: ipu errors: 0
    verify(parsed)
    # The typed views come back when walking the parsed program.
    kinds = []
    vertices = edges = 0

    def visit(op):
        nonlocal vertices, edges
        view = op.opview
        if isinstance(view, ir.OpView) and type(view).__module__ == ipu.__name__:
            kinds.append(type(view).__name__)
        if isinstance(view, ipu.VertexGroupOp):
            vertices += view.num_vertices
            edges += view.num_edges
        return ir.WalkResult.ADVANCE

    parsed.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    # CHECK: BufferOp BufferOp BufferOp HostToDeviceOp SyncOp ExecuteOp SyncOp CopyOp SyncOp DeviceToHostOp DeviceToHostOp VertexGroupOp
    print(*kinds)
    # CHECK: vertices 16 edges 32
    print("vertices", vertices, "edges", edges)


# The zero error count above means something: the same program, broken in one place each,
# is rejected with the error naming the op and the problem.
# CHECK-LABEL: TEST: test_broken_programs_are_rejected
@run
def test_broken_programs_are_rejected():
    def first_op(module, cls, predicate=lambda op: True):
        found = []

        def visit(op):
            if isinstance(op.opview, cls) and predicate(op.opview):
                found.append(op.opview)
            return ir.WalkResult.ADVANCE

        module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
        return found[0]

    # @sum lives on tile 1 only: the gather now writes to tile 0, which holds no copy.
    module = build_relu_program()
    first_op(module, ipu.BufferOp, lambda op: op.sym_name == "sum").attributes["tiles"] = TileGrid.range(1, 1).encode()
    # CHECK: error: 'ipu.copy' op sends to tile 0, which holds no copy of @sum
    # CHECK: error: 'ipu.device_to_host' op maps elements to tile 0, which holds no copy of @sum
    # CHECK: ipu errors: 2
    verify(module)

    # The vertex group runs on tiles 0..16: tile 16 is outside the tiny target.
    module = build_relu_program()
    first_op(module, ipu.VertexGroupOp).attributes["tiles"] = TileGrid.range(1, 16).encode()
    # CHECK: error: 'ipu.vertex_group' op 'tiles': tile grid reaches tiles 1..16, outside the target's 16 tiles (tiny)
    # CHECK: ipu errors: 1
    verify(module)

    # y's offset leaves no room: 65536 - 128 + 256 bytes > 65536.
    module = build_relu_program()
    first_op(module, ipu.BufferOp, lambda op: op.sym_name == "y").attributes["offset"] = ir.IntegerAttr.get(
        ir.IntegerType.get_signless(64), 65536 - 128
    )
    # CHECK: error: 'ipu.buffer' op needs bytes [65408, 65664) of each tile, but tiles of tiny have 65536 bytes
    # CHECK: ipu errors: 1
    verify(module)
