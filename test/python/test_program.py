"""The L3 program analysis (dialects/program.py): symbols through the module's symbol table,
which buffers each op reads and writes, compute sets, supersteps and op order."""

from mlir import ir

from ipu_mlir.dialects import ipu, make_context
from ipu_mlir.dialects.program import OpOrder, Program

TEXT = (
    """
module attributes {ipu.target = "tiny"} {
  "ipu.buffer"() {sym_name = "x", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b", tiles = array<i64: 0, 1, 0>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "b_in", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  "ipu.buffer"() {sym_name = "y", tiles = array<i64: 0, 4, 1>, type = memref<8xf32>} : () -> ()
  func.func @main(%x: tensor<32xf32>) -> tensor<32xf32> attributes {ipu.program} {
    "ipu.host_to_device"(%x) {buffer = @x, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : """
    """(tensor<32xf32>) -> ()
    "ipu.sync"() {kind = "external"} : () -> ()
    "ipu.copy"() {source = @b, dest = @b_in, size = 8 : i64, src_tiles = array<i64: 0, 4, 0>, dst_tiles = array<i64: 0, 4, 1>,
                  src_offset = array<i64: 0, 0>, dst_offset = array<i64: 0, 0>} : () -> ()
    "ipu.execute"() {compute_set = @add_cs} : () -> ()
    "ipu.sync"() {kind = "internal"} : () -> ()
    %y = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 4, 1>}} : """
    """() -> tensor<32xf32>
    return %y : tensor<32xf32>
  }
  func.func private @add(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet} {
    %s = arith.addf %a, %b : tensor<8xf32>
    return %s : tensor<8xf32>
  }
  func.func private @add_cs() attributes {ipu.compute_set} {
    "ipu.vertex_group"() {codelet = @add, inputs = [@x, @b_in], outputs = [@y], tiles = array<i64: 0, 2, 1>} : () -> ()
    "ipu.vertex_group"() {codelet = @add, inputs = [@x, @b_in], outputs = [@y], tiles = array<i64: 2, 2, 1>} : () -> ()
    return
  }
}
"""
)


def _program():
    module = ir.Module.parse(TEXT, make_context())
    return module, Program(module)


def test_symbols_resolve_through_the_symbol_table():
    module, program = _program()
    assert isinstance(program.lookup("x"), ipu.BufferOp) and program.buffer("x").sym_name == "x"
    assert program.lookup("nope") is None and program.buffer("add") is None
    assert program.function("add_cs", ipu.COMPUTE_SET_ATTR) is not None
    assert program.function("add", ipu.COMPUTE_SET_ATTR) is None  # a codelet, not a compute set
    assert [b.sym_name for b in program.buffers()] == ["x", "b", "b_in", "y"]
    assert program.fresh("add") == "add_1" and program.fresh("sum") == "sum"


def test_reads_and_writes_of_each_op():
    module, program = _program()
    ops = {op.operation.name: op for op in program.function("main", ipu.PROGRAM_ATTR).regions[0].blocks[0].operations}
    assert program.accesses(ops["ipu.host_to_device"]) == ((), ("x",))
    assert program.accesses(ops["ipu.device_to_host"]) == (("y",), ())
    assert program.accesses(ops["ipu.copy"]) == (("b",), ("b_in",))
    assert program.accesses(ops["ipu.execute"]) == (("x", "b_in", "x", "b_in"), ("y", "y"))  # over its two groups
    assert program.accesses(ops["ipu.sync"]) == ((), ())
    assert [g.tiles.first for g in program.groups("add_cs")] == [0, 2]
    assert program.use_count("x") == 3 and program.use_count("b") == 1 and program.use_count("nope") == 0


def test_supersteps_and_op_order():
    module, program = _program()
    block = program.function("main", ipu.PROGRAM_ATTR).regions[0].blocks[0]
    steps = program.supersteps(block)
    assert [(len(s.exchange), len(s.compute), s.sync is not None) for s in steps] == [(0, 0, True), (1, 1, True), (0, 0, False)]
    assert [op.operation.name for op in steps[2].other] == ["ipu.device_to_host", "func.return"]
    order = OpOrder(module.operation)
    execute = steps[1].compute[0].operation
    assert order.before(execute).name == "ipu.copy"
    sync, copies, following = order.next_superstep(execute)
    assert sync.name == "ipu.sync" and copies == [] and following.name == "ipu.device_to_host"
    assert order.next_superstep(steps[1].exchange[0].operation) is None  # a copy is not followed by a sync


def test_forgotten_symbols_are_not_found_nor_reused():
    module, program = _program()
    program.forget(program.lookup("add_cs"))
    assert program.lookup("add_cs") is None and program.groups("add_cs") == []
    assert program.fresh("add_cs") == "add_cs_1"  # still in the module until the rewriter erases it
