# RUN: %PYTHON %s | FileCheck %s

# Builds every `ipu` op through the builders of `ipu_mlir.dialects.ipu`, checks the generic form
# they print, the typed accessors, and that the result passes both MLIR's verifier (IRDL
# constraints) and `ipu_mlir.dialects.verifier`.

from mlir import ir
from mlir.dialects import arith, func

from ipu_mlir.dialects import ipu, make_context, verifier
from ipu_mlir.dialects.attrs import BlockMapping, IntervalMapping, LinearMapping, TileGrid
from ipu_mlir.target import TARGET_ATTR


def run(f):
    print("\nTEST:", f.__name__)
    with make_context(), ir.Location.unknown():
        f()
    return f


def check(module):
    """Prints the module and the outcome of both verifiers."""
    print(module)
    print("mlir verify:", module.operation.verify())
    errors = verifier.verify(module.operation)
    for error in errors:
        print(error)
    print("ipu errors:", len(errors))


def tensor(shape, element_type=None):
    return ir.RankedTensorType.get(shape, element_type or ir.F32Type.get())


def new_module(target=None):
    module = ir.Module.create()
    if target:
        module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get(target)
    return module


def function(name, inputs, results=(), *, private=False, marker=None):
    fn = func.FuncOp(name, (list(inputs), list(results)), visibility="private" if private else None)
    if marker:
        fn.attributes[marker] = ir.UnitAttr.get()
    fn.add_entry_block()
    return fn


def codelet(name, type):
    """A `func.func` marked ipu.codelet computing max(x, 0) on one tensor<type>."""
    fn = function(name, [type], [type], private=True, marker=ipu.CODELET_ATTR)
    with ir.InsertionPoint(fn.entry_block):
        zero = arith.ConstantOp(type, ir.DenseElementsAttr.get_splat(type, ir.FloatAttr.get(type.element_type, 0.0)))
        func.ReturnOp([arith.MaximumFOp(fn.arguments[0], zero).result])
    return fn


# --- L1 ---------------------------------------------------------------------------------------


# CHECK-LABEL: TEST: test_matmul
@run
def test_matmul():
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("mm", [tensor([128, 64]), tensor([64, 32])])
        with ir.InsertionPoint(fn.entry_block):
            op = ipu.matmul(fn.arguments[0], fn.arguments[1])
            func.ReturnOp([])
    # CHECK: %0 = "ipu.matmul"(%arg0, %arg1) : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: MatmulOp True True
    print(type(op).__name__, op.lhs == fn.arguments[0], op.rhs == fn.arguments[1])
    # CHECK: result: tensor<128x32xf32> RankedTensorType
    print("result:", op.result.type, type(op.result.type).__name__)


# CHECK-LABEL: TEST: test_matmul_batch
@run
def test_matmul_batch():
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("bmm", [tensor([2, 3, 8, 4]), tensor([2, 3, 4, 5])])
        with ir.InsertionPoint(fn.entry_block):
            op = ipu.matmul(fn.arguments[0], fn.arguments[1])
            func.ReturnOp([op.result])
    # Only now that the body exists can the signature carry the result type.
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get([tensor([2, 3, 8, 4]), tensor([2, 3, 4, 5])], [op.result.type]))
    # CHECK: func.func @bmm(%arg0: tensor<2x3x8x4xf32>, %arg1: tensor<2x3x4x5xf32>) -> tensor<2x3x8x5xf32>
    # CHECK-NEXT: %0 = "ipu.matmul"(%arg0, %arg1) : (tensor<2x3x8x4xf32>, tensor<2x3x4x5xf32>) -> tensor<2x3x8x5xf32>
    # CHECK-NEXT: return %0 : tensor<2x3x8x5xf32>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: shape: [2, 3, 8, 5] f32
    print("shape:", op.result.type.shape, op.result.type.element_type)


# CHECK-LABEL: TEST: test_matmul_accumulator_type
@run
def test_matmul_accumulator_type():
    i8, i32 = ir.IntegerType.get_signless(8), ir.IntegerType.get_signless(32)
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("mm_i8", [tensor([4, 8], i8), tensor([8, 2], i8)])
        with ir.InsertionPoint(fn.entry_block):
            ipu.matmul(fn.arguments[0], fn.arguments[1], element_type=i32)
            func.ReturnOp([])
    # CHECK: "ipu.matmul"(%arg0, %arg1) : (tensor<4x8xi8>, tensor<8x2xi8>) -> tensor<4x2xi32>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)


# CHECK-LABEL: TEST: test_conv
@run
def test_conv():
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("conv", [tensor([1, 3, 32, 32]), tensor([8, 3, 3, 3])])
        with ir.InsertionPoint(fn.entry_block):
            op = ipu.conv(fn.arguments[0], fn.arguments[1], strides=(2, 2), padding=(1, 1, 1, 1))
            func.ReturnOp([])
    # OH = OW = (32 + 1 + 1 - 1 * (3 - 1) - 1) // 2 + 1 = 16
    # CHECK: "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>,
    # CHECK-SAME: strides = array<i64: 2, 2>} : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x16x16xf32>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: ConvOp (2, 2) (1, 1) (1, 1, 1, 1) 1
    print(type(op).__name__, op.strides, op.dilations, op.padding, op.groups)
    # CHECK: True True
    print(op.input == fn.arguments[0], op.filter == fn.arguments[1])


# CHECK-LABEL: TEST: test_conv_grouped_asymmetric
@run
def test_conv_grouped_asymmetric():
    f16 = ir.F16Type.get()
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("conv", [tensor([2, 6, 17, 19], f16), tensor([9, 2, 3, 5], f16)])
        with ir.InsertionPoint(fn.entry_block):
            op = ipu.conv(fn.arguments[0], fn.arguments[1], strides=(2, 3), dilations=(2, 1), padding=(1, 2, 0, 0), groups=3)
            func.ReturnOp([])
    # OH = (17 + 1 + 0 - 2 * (3 - 1) - 1) // 2 + 1 = 7 (top 1, bottom 0)
    # OW = (19 + 2 + 0 - 1 * (5 - 1) - 1) // 3 + 1 = 6 (left 2, right 0)
    # CHECK: "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 2, 1>, groups = 3 : i64, padding = array<i64: 1, 2, 0, 0>,
    # CHECK-SAME: strides = array<i64: 2, 3>} : (tensor<2x6x17x19xf16>, tensor<9x2x3x5xf16>) -> tensor<2x9x7x6xf16>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: (2, 3) (2, 1) (1, 2, 0, 0) 3 int
    print(op.strides, op.dilations, op.padding, op.groups, type(op.groups).__name__)


# CHECK-LABEL: TEST: test_conv_depthwise
@run
def test_conv_depthwise():
    f16 = ir.F16Type.get()
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("dw", [tensor([1, 8, 10, 10], f16), tensor([8, 1, 3, 3], f16)])
        with ir.InsertionPoint(fn.entry_block):
            ipu.conv(fn.arguments[0], fn.arguments[1], dilations=(2, 2), groups=8)
            func.ReturnOp([])
    # CHECK: "ipu.conv"(%arg0, %arg1) {dilations = array<i64: 2, 2>, groups = 8 : i64, padding = array<i64: 0, 0, 0, 0>,
    # CHECK-SAME: strides = array<i64: 1, 1>} : (tensor<1x8x10x10xf16>, tensor<8x1x3x3xf16>) -> tensor<1x8x6x6xf16>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)


# --- L2 ---------------------------------------------------------------------------------------


# CHECK-LABEL: TEST: test_exchange
@run
def test_exchange():
    linear = LinearMapping(grain=8, tiles=TileGrid.range(0, 16))
    block = BlockMapping(block=(32, 16), tiles=TileGrid(1, (2, 4), (8, 2)))
    intervals = IntervalMapping(((0, 4000, 3), (4000, 4096, 7)))
    module = new_module("tiny")
    with ir.InsertionPoint(module.body):
        fn = function("exchanges", [tensor([64, 64])])
        with ir.InsertionPoint(fn.entry_block):
            a = ipu.exchange(fn.arguments[0], linear)
            b = ipu.exchange(a.result, block)
            c = ipu.exchange(b.result, intervals)
            func.ReturnOp([])
    # CHECK: %0 = "ipu.exchange"(%arg0) {mapping = {grain = 8 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}}
    # CHECK-SAME: : (tensor<64x64xf32>) -> tensor<64x64xf32>
    # CHECK-NEXT: %1 = "ipu.exchange"(%0) {mapping = {block = array<i64: 32, 16>, kind = "block",
    # CHECK-SAME: tiles = array<i64: 1, 2, 8, 4, 2>}} : (tensor<64x64xf32>) -> tensor<64x64xf32>
    # CHECK-NEXT: %2 = "ipu.exchange"(%1) {mapping = {intervals = array<i64: 0, 4000, 3, 4000, 4096, 7>, kind = "intervals"}}
    # CHECK-SAME: : (tensor<64x64xf32>) -> tensor<64x64xf32>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: ExchangeOp LinearMapping True
    # CHECK-NEXT: ExchangeOp BlockMapping True
    # CHECK-NEXT: ExchangeOp IntervalMapping True
    for op, mapping in ((a, linear), (b, block), (c, intervals)):
        print(type(op).__name__, type(op.mapping).__name__, op.mapping == mapping)
    # CHECK: LinearMapping(grain=8, tiles=TileGrid(first=0, sizes=(16,), strides=(1,)))
    print(a.mapping)
    # CHECK: BlockMapping(block=(32, 16), tiles=TileGrid(first=1, sizes=(2, 4), strides=(8, 2)))
    print(b.mapping)
    # CHECK: IntervalMapping(intervals=((0, 4000, 3), (4000, 4096, 7)))
    print(c.mapping)
    # CHECK: source: True tensor<64x64xf32>
    print("source:", b.source == a.result, b.result.type)
    # CHECK: not equal: False
    print("not equal:", a.mapping == LinearMapping(grain=4, tiles=TileGrid.range(0, 16)))


# --- L3 ---------------------------------------------------------------------------------------


# CHECK-LABEL: TEST: test_buffer
@run
def test_buffer():
    module = new_module("tiny")
    with ir.InsertionPoint(module.body):
        placed = ipu.buffer("x", ir.MemRefType.get([64], ir.F32Type.get()), TileGrid.range(0, 16), offset=256)
        unplaced = ipu.buffer("h", ir.MemRefType.get([4, 8], ir.F16Type.get()), TileGrid(2, (2, 3), (6, 1)))
    # CHECK: "ipu.buffer"() {offset = 256 : i64, sym_name = "x", tiles = array<i64: 0, 16, 1>, type = memref<64xf32>} : () -> ()
    # CHECK-NEXT: "ipu.buffer"() {sym_name = "h", tiles = array<i64: 2, 2, 6, 3, 1>, type = memref<4x8xf16>} : () -> ()
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: BufferOp x 256 256 memref<64xf32> MemRefType
    print(type(placed).__name__, placed.sym_name, placed.offset, placed.bytes_per_tile, placed.type, type(placed.type).__name__)
    # CHECK: BufferOp h None 64 memref<4x8xf16>
    print(type(unplaced).__name__, unplaced.sym_name, unplaced.offset, unplaced.bytes_per_tile, unplaced.type)
    # CHECK: tiles: True [2, 3, 4, 8, 9, 10]
    print("tiles:", unplaced.tiles == TileGrid(2, (2, 3), (6, 1)), unplaced.tiles.tiles().tolist())


# CHECK-LABEL: TEST: test_streams
@run
def test_streams():
    grid = TileGrid.range(0, 16)
    mapping = LinearMapping(grain=64, tiles=grid)
    # 100 elements, 3 tiles 5, 7, 9: intervals on tiles that each hold a copy of @h.
    host_mapping = IntervalMapping(((0, 40, 5), (40, 80, 7), (80, 100, 9)))
    module = new_module("tiny")
    with ir.InsertionPoint(module.body):
        ipu.buffer("x", ir.MemRefType.get([64], ir.F32Type.get()), grid, offset=0)
        ipu.buffer("h", ir.MemRefType.get([40], ir.F32Type.get()), TileGrid(5, (3,), (2,)))
        fn = function("main", [tensor([1024]), tensor([100])])
        with ir.InsertionPoint(fn.entry_block):
            to_device = ipu.host_to_device(fn.arguments[0], "x", mapping)
            to_h = ipu.host_to_device(fn.arguments[1], "h", host_mapping)
            ipu.sync("external")
            to_host = ipu.device_to_host(tensor([1024]), "x", mapping)
            from_h = ipu.device_to_host(tensor([10, 10]), "h", host_mapping)
            func.ReturnOp([])
    # CHECK: "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {grain = 64 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}}
    # CHECK-SAME: : (tensor<1024xf32>) -> ()
    # CHECK-NEXT: "ipu.host_to_device"(%arg1) {buffer = @h, mapping = {intervals = array<i64: 0, 40, 5, 40, 80, 7, 80, 100, 9>,
    # CHECK-SAME: kind = "intervals"}} : (tensor<100xf32>) -> ()
    # CHECK-NEXT: "ipu.sync"() {kind = "external"} : () -> ()
    # CHECK-NEXT: %0 = "ipu.device_to_host"() {buffer = @x, mapping = {grain = 64 : i64, kind = "linear",
    # CHECK-SAME: tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
    # CHECK-NEXT: %1 = "ipu.device_to_host"() {buffer = @h, mapping = {intervals = array<i64: 0, 40, 5, 40, 80, 7, 80, 100, 9>,
    # CHECK-SAME: kind = "intervals"}} : () -> tensor<10x10xf32>
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: HostToDeviceOp x True True
    print(type(to_device).__name__, to_device.buffer, to_device.source == fn.arguments[0], to_device.mapping == mapping)
    # CHECK: HostToDeviceOp h True
    print(type(to_h).__name__, to_h.buffer, to_h.mapping == host_mapping)
    # CHECK: DeviceToHostOp x True tensor<1024xf32>
    print(type(to_host).__name__, to_host.buffer, to_host.mapping == mapping, to_host.result.type)
    # CHECK: DeviceToHostOp h IntervalMapping tensor<10x10xf32>
    print(type(from_h).__name__, from_h.buffer, type(from_h.mapping).__name__, from_h.result.type)


# CHECK-LABEL: TEST: test_copy
@run
def test_copy():
    f32 = ir.F32Type.get()
    module = new_module("tiny")
    with ir.InsertionPoint(module.body):
        ipu.buffer("y", ir.MemRefType.get([64], f32), TileGrid.range(0, 16))
        ipu.buffer("z", ir.MemRefType.get([64], f32), TileGrid.range(0, 16))
        ipu.buffer("sum", ir.MemRefType.get([16], f32), TileGrid.range(0, 1))
        fn = function("main", [])
        with ir.InsertionPoint(fn.entry_block):
            # Tiles 0..7 send all of y to tiles 8..15's z, default offsets.
            default = ipu.copy("y", "z", size=64, src_tiles=TileGrid.range(0, 8), dst_tiles=TileGrid.range(8, 8))
            # Gather element 0 of every tile's y into tile 0's sum.
            gather = ipu.copy(
                "y",
                "sum",
                size=1,
                src_tiles=TileGrid.range(0, 16),
                dst_tiles=TileGrid(0, (16,), (0,)),
                src_offset=[0, 0],
                dst_offset=[0, 1],
            )
            # A 2-D pattern: grid (2, 4); tile 4a+b sends y[8b:8b+8] to tile 8+4a+b's z[32 + 8b:...].
            grid_2d = ipu.copy(
                "y",
                "z",
                size=8,
                src_tiles=TileGrid(0, (2, 4), (4, 1)),
                dst_tiles=TileGrid(8, (2, 4), (4, 1)),
                src_offset=[0, 0, 8],
                dst_offset=[32, 0, 8],
            )
            default_2d = ipu.copy(
                "z",
                "y",
                size=4,
                src_tiles=TileGrid(0, (2, 2), (2, 1)),
                dst_tiles=TileGrid(4, (2, 2), (2, 1)),
            )
            func.ReturnOp([])
    # CHECK: "ipu.copy"() {dest = @z, dst_offset = array<i64: 0, 0>, dst_tiles = array<i64: 8, 8, 1>, size = 64 : i64, source = @y,
    # CHECK-SAME: src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 8, 1>} : () -> ()
    # CHECK-NEXT: "ipu.copy"() {dest = @sum, dst_offset = array<i64: 0, 1>, dst_tiles = array<i64: 0, 16, 0>, size = 1 : i64,
    # CHECK-SAME: source = @y, src_offset = array<i64: 0, 0>, src_tiles = array<i64: 0, 16, 1>} : () -> ()
    # CHECK-NEXT: "ipu.copy"() {dest = @z, dst_offset = array<i64: 32, 0, 8>, dst_tiles = array<i64: 8, 2, 4, 4, 1>, size = 8 : i64,
    # CHECK-SAME: source = @y, src_offset = array<i64: 0, 0, 8>, src_tiles = array<i64: 0, 2, 4, 4, 1>} : () -> ()
    # CHECK-NEXT: "ipu.copy"() {dest = @y, dst_offset = array<i64: 0, 0, 0>, dst_tiles = array<i64: 4, 2, 2, 2, 1>, size = 4 : i64,
    # CHECK-SAME: source = @z, src_offset = array<i64: 0, 0, 0>, src_tiles = array<i64: 0, 2, 2, 2, 1>} : () -> ()
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: CopyOp y z 64 (0, 0) (0, 0)
    print(type(default).__name__, default.source, default.dest, default.size, default.src_offset, default.dst_offset)
    # CHECK: CopyOp y sum 1 (0, 0) (0, 1)
    print(type(gather).__name__, gather.source, gather.dest, gather.size, gather.src_offset, gather.dst_offset)
    # CHECK: gather tiles: True True True
    print(
        "gather tiles:",
        gather.src_tiles == TileGrid.range(0, 16),
        gather.dst_tiles == TileGrid(0, (16,), (0,)),
        gather.dst_tiles.has_repeats(),
    )
    # CHECK: 2-D: (0, 0, 8) (32, 0, 8) [8, 9, 10, 11, 12, 13, 14, 15]
    print("2-D:", grid_2d.src_offset, grid_2d.dst_offset, grid_2d.dst_tiles.tiles().tolist())
    # CHECK: 2-D default: (0, 0, 0) (0, 0, 0) [4, 5, 6, 7]
    print("2-D default:", default_2d.src_offset, default_2d.dst_offset, default_2d.dst_tiles.tiles().tolist())


# CHECK-LABEL: TEST: test_sync
@run
def test_sync():
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("main", [])
        with ir.InsertionPoint(fn.entry_block):
            default = ipu.sync()
            internal = ipu.sync("internal")
            external = ipu.sync("external")
            func.ReturnOp([])
    # CHECK: "ipu.sync"() {kind = "internal"} : () -> ()
    # CHECK-NEXT: "ipu.sync"() {kind = "internal"} : () -> ()
    # CHECK-NEXT: "ipu.sync"() {kind = "external"} : () -> ()
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: SyncOp internal internal external
    print(type(default).__name__, default.kind, internal.kind, external.kind)


# CHECK-LABEL: TEST: test_sync_kind_checked_by_irdl
@run
def test_sync_kind_checked_by_irdl():
    module = new_module()
    with ir.InsertionPoint(module.body):
        fn = function("main", [])
        with ir.InsertionPoint(fn.entry_block):
            ipu.sync("everywhere")
            func.ReturnOp([])
    try:
        module.operation.verify()
        print("accepted")
    except ir.MLIRError as error:
        # CHECK: rejected: 1 error: '"everywhere"' does not satisfy the constraint
        print("rejected:", len(error.error_diagnostics), "error:", error.error_diagnostics[0].message)


# CHECK-LABEL: TEST: test_execute_and_vertex_group
@run
def test_execute_and_vertex_group():
    f32 = ir.F32Type.get()
    grid = TileGrid.range(0, 16)
    module = new_module("tiny")
    with ir.InsertionPoint(module.body):
        ipu.buffer("x", ir.MemRefType.get([64], f32), grid)
        ipu.buffer("y", ir.MemRefType.get([64], f32), grid)
        ipu.buffer("w", ir.MemRefType.get([64], f32), TileGrid(1, (2, 3), (8, 2)))
        main = function("main", [])
        with ir.InsertionPoint(main.entry_block):
            execute = ipu.execute("relu_cs")
            func.ReturnOp([])
        compute_set = function("relu_cs", [], private=True, marker=ipu.COMPUTE_SET_ATTR)
        with ir.InsertionPoint(compute_set.entry_block):
            relu = ipu.vertex_group("relu", grid, inputs=["x"], outputs=["y"])
            # InOut edge: w is both read and written, on a strided 2-D grid.
            inplace = ipu.vertex_group("relu", TileGrid(1, (2, 3), (8, 2)), inputs=["w"], outputs=["w"])
            func.ReturnOp([])
        codelet("relu", tensor([64]))
    # CHECK: "ipu.execute"() {compute_set = @relu_cs} : () -> ()
    # CHECK: func.func private @relu_cs() attributes {ipu.compute_set}
    # CHECK-NEXT: "ipu.vertex_group"() {codelet = @relu, inputs = [@x], outputs = [@y], tiles = array<i64: 0, 16, 1>} : () -> ()
    # CHECK-NEXT: "ipu.vertex_group"() {codelet = @relu, inputs = [@w], outputs = [@w], tiles = array<i64: 1, 2, 8, 3, 2>} : () -> ()
    # CHECK: func.func private @relu(%arg0: tensor<64xf32>) -> tensor<64xf32> attributes {ipu.codelet}
    # CHECK: mlir verify: True
    # CHECK: ipu errors: 0
    check(module)
    # CHECK: ExecuteOp relu_cs
    print(type(execute).__name__, execute.compute_set)
    # CHECK: VertexGroupOp relu ['x'] ['y'] 16 32 True
    print(type(relu).__name__, relu.codelet, relu.inputs, relu.outputs, relu.num_vertices, relu.num_edges, relu.tiles == grid)
    # CHECK: VertexGroupOp relu ['w'] ['w'] 6 12 [1, 3, 5, 9, 11, 13]
    print(
        type(inplace).__name__,
        inplace.codelet,
        inplace.inputs,
        inplace.outputs,
        inplace.num_vertices,
        inplace.num_edges,
        inplace.tiles.tiles().tolist(),
    )


# CHECK-LABEL: TEST: test_ops_of_parsed_module_are_typed
@run
def test_ops_of_parsed_module_are_typed():
    module = ir.Module.parse(
        """
        module attributes {ipu.target = "tiny"} {
          "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>, offset = 0 : i64} : () -> ()
          func.func @f(%a: tensor<2x8x4xf32>, %b: tensor<2x4x3xf32>, %x: tensor<1x2x5x5xf32>, %w: tensor<4x2x3x3xf32>) {
            %c = "ipu.matmul"(%a, %b) : (tensor<2x8x4xf32>, tensor<2x4x3xf32>) -> tensor<2x8x3xf32>
            %y = "ipu.conv"(%x, %w) {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, """
        """padding = array<i64: 0, 1, 2, 3>, groups = 1 : i64} : (tensor<1x2x5x5xf32>, tensor<4x2x3x3xf32>) """
        """-> tensor<1x4x3x5xf32>
            %e = "ipu.exchange"(%c) {mapping = {kind = "block", block = array<i64: 1, 8, 3>, """
        """tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>}} : (tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
            "ipu.sync"() {kind = "external"} : () -> ()
            "ipu.copy"() {source = @x, dest = @x, size = 8 : i64, src_tiles = array<i64: 0, 4, 1>, """
        """dst_tiles = array<i64: 4, 4, 1>, src_offset = array<i64: 0, 0>, dst_offset = array<i64: 8, 0>} : () -> ()
            return
          }
        }
        """
    )
    fn = module.body.operations[1]
    # CHECK: BufferOp ipu.buffer
    print(type(module.body.operations[0]).__name__, module.body.operations[0].operation.name)
    # CHECK-NEXT: MatmulOp ipu.matmul
    # CHECK-NEXT: ConvOp ipu.conv
    # CHECK-NEXT: ExchangeOp ipu.exchange
    # CHECK-NEXT: SyncOp ipu.sync
    # CHECK-NEXT: CopyOp ipu.copy
    # CHECK-NEXT: ReturnOp func.return
    ops = list(fn.regions[0].blocks[0].operations)
    for op in ops:
        print(type(op).__name__, op.operation.name)
    matmul, conv, exchange, sync, copy = ops[:5]
    # CHECK: True True True True True
    print(
        isinstance(matmul, ipu.MatmulOp),
        isinstance(conv, ipu.ConvOp),
        isinstance(exchange, ipu.ExchangeOp),
        isinstance(sync, ipu.SyncOp),
        isinstance(copy, ipu.CopyOp),
    )
    # CHECK: matmul: tensor<2x8x4xf32> tensor<2x4x3xf32> tensor<2x8x3xf32>
    print("matmul:", matmul.lhs.type, matmul.rhs.type, matmul.result.type)
    # CHECK: conv: (2, 1) (1, 2) (0, 1, 2, 3) 1 tensor<1x4x3x5xf32>
    print("conv:", conv.strides, conv.dilations, conv.padding, conv.groups, conv.result.type)
    # CHECK: exchange: True
    print("exchange:", exchange.mapping == BlockMapping((1, 8, 3), TileGrid(0, (2, 1, 1), (1, 0, 0))))
    # CHECK: copy: x x 8 (0, 0) (8, 0) [4, 5, 6, 7]
    print("copy:", copy.source, copy.dest, copy.size, copy.src_offset, copy.dst_offset, copy.dst_tiles.tiles().tolist())
    # CHECK: mlir verify: True
    print("mlir verify:", module.operation.verify())
    # CHECK: ipu errors: 0
    print("ipu errors:", len(verifier.verify(module.operation)))
