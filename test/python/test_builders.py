"""Builders of `ipu_mlir.dialects.ipu`: result types are inferred (checked against formulas
written here independently), attributes are encoded as the dialect definition says, and every
built op round-trips through text."""

from __future__ import annotations

import itertools

import pytest
from mlir import ir
from mlir.dialects import arith, func

from ipu_mlir.dialects import ipu, make_context, verifier
from ipu_mlir.dialects.attrs import BlockMapping, IntervalMapping, LinearMapping, TileGrid
from ipu_mlir.target import TARGET_ATTR


@pytest.fixture(autouse=True)
def context():
    with make_context() as ctx, ir.Location.unknown():
        yield ctx


def tensor(shape, element_type=None) -> ir.RankedTensorType:
    return ir.RankedTensorType.get(list(shape), element_type or ir.F32Type.get())


def element(name: str) -> ir.Type:
    return ir.Type.parse(name)


def in_function(input_types, body, *, target: str | None = None, before=None):
    """A module with one function taking `input_types`; `body(arguments)` builds its ops and
    returns the op under test. `before()` builds module-level ops (buffers) first."""
    module = ir.Module.create()
    if target:
        module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get(target)
    with ir.InsertionPoint(module.body):
        if before:
            before()
        fn = func.FuncOp("f", (list(input_types), []))
        with ir.InsertionPoint(fn.add_entry_block()):
            op = body(list(fn.arguments))
            func.ReturnOp([])
    return module, op


def ipu_errors(module: ir.Module) -> list[str]:
    assert module.operation.verify()
    return [str(error) for error in verifier.verify(module.operation)]


# --- matmul ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "batch, m, k, n",
    [
        ((), 128, 64, 32),
        ((), 1, 7, 1),  # a dot product as a matmul with unit dimensions
        ((), 5, 3, 1),  # matrix-vector
        ((4,), 8, 16, 2),
        ((2, 3), 8, 4, 5),
        ((2, 1, 3), 1, 9, 6),
    ],
)
@pytest.mark.parametrize("element_name", ["f32", "f16", "bf16", "i8"])
def test_matmul_infers_result_type(batch, m, k, n, element_name):
    et = element(element_name)
    module, op = in_function([tensor([*batch, m, k], et), tensor([*batch, k, n], et)], lambda args: ipu.matmul(args[0], args[1]))
    assert isinstance(op, ipu.MatmulOp)
    assert op.result.type == tensor([*batch, m, n], et)
    assert ir.RankedTensorType(op.result.type).shape == [*batch, m, n]
    assert ipu_errors(module) == []


@pytest.mark.parametrize("accumulator", ["i32", "f32"])
def test_matmul_explicit_result_element_type(accumulator):
    i8 = element("i8")
    module, op = in_function(
        [tensor([4, 8], i8), tensor([8, 2], i8)],
        lambda args: ipu.matmul(args[0], args[1], element_type=element(accumulator)),
    )
    assert op.result.type == tensor([4, 2], element(accumulator))
    assert ipu_errors(module) == []


def test_matmul_builder_follows_lhs_batch_and_the_verifier_reports_a_mismatch():
    # The builder infers from lhs's batch dimensions; a disagreeing rhs is the verifier's to report.
    module, op = in_function([tensor([2, 8, 4]), tensor([3, 4, 5])], lambda args: ipu.matmul(args[0], args[1]))
    assert op.result.type == tensor([2, 8, 5])
    assert ipu_errors(module) == ["error: 'ipu.matmul' op expects equal batch dimensions, got [2], [3] and [2]"]


# --- conv --------------------------------------------------------------------------------------


def reference_output_size(size: int, kernel: int, stride: int, dilation: int, pad_before: int, pad_after: int) -> int:
    """Counts the window positions: output `o` reads padded input rows `o * stride + dilation * j`
    for `0 <= j < kernel`, which must all lie in `[0, size + pad_before + pad_after)`."""
    padded = size + pad_before + pad_after
    return sum(1 for o in range(padded) if o * stride + dilation * (kernel - 1) <= padded - 1)


def conv_cases():
    """(H, W, KH, KW, strides, dilations, padding) combinations whose output is non-empty."""
    cases = []
    for (h, w), (kh, kw) in [((7, 9), (3, 2)), ((5, 5), (1, 1)), ((12, 4), (5, 3)), ((1, 6), (1, 4))]:
        for sh, sw, dh, dw in itertools.product((1, 2, 3), (1, 3), (1, 2, 3), (1, 2)):
            for top, left, bottom, right in [(0, 0, 0, 0), (1, 1, 1, 1), (2, 0, 1, 3), (0, 2, 2, 0)]:
                padding = (top, left, bottom, right)
                oh = reference_output_size(h, kh, sh, dh, top, bottom)
                ow = reference_output_size(w, kw, sw, dw, left, right)
                if oh and ow:
                    cases.append((h, w, kh, kw, (sh, sw), (dh, dw), padding))
    return cases


CONV_CASES = conv_cases()


def test_conv_cases_are_many_and_varied():
    assert len(CONV_CASES) > 300
    assert {case[4] for case in CONV_CASES} >= {(1, 1), (3, 3), (2, 1)}
    assert {case[5] for case in CONV_CASES} >= {(1, 1), (3, 2)}


@pytest.mark.parametrize("groups, channels, filters", [(1, 3, 4), (2, 4, 6), (4, 4, 4)])
def test_conv_output_shape_matches_reference(groups, channels, filters):
    for h, w, kh, kw, strides, dilations, padding in CONV_CASES:
        top, left, bottom, right = padding
        expected = [
            2,
            filters,
            reference_output_size(h, kh, strides[0], dilations[0], top, bottom),
            reference_output_size(w, kw, strides[1], dilations[1], left, right),
        ]
        got = ipu.conv_output_shape((2, channels, h, w), (filters, channels // groups, kh, kw), strides, dilations, padding)
        assert list(got) == expected, (h, w, kh, kw, strides, dilations, padding)


@pytest.mark.parametrize(
    "input_shape, filter_shape, strides, dilations, padding, expected",
    [
        # The example of the dialect definition: (32 + 1 + 1 - 2 - 1) // 2 + 1 = 16.
        ((1, 3, 32, 32), (8, 3, 3, 3), (2, 2), (1, 1), (1, 1, 1, 1), [1, 8, 16, 16]),
        # "same" padding, stride 1.
        ((1, 3, 32, 32), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1, 1, 1), [1, 8, 32, 32]),
        # Depthwise, dilated: 10 - 2 * 2 = 6.
        ((1, 8, 10, 10), (8, 1, 3, 3), (1, 1), (2, 2), (0, 0, 0, 0), [1, 8, 6, 6]),
        # Padding is (top, left, bottom, right): H gets top + bottom = 1 + 0, W left + right = 2 + 0.
        ((2, 6, 17, 19), (9, 2, 3, 5), (2, 3), (2, 1), (1, 2, 0, 0), [2, 9, 7, 6]),
        ((1, 1, 4, 4), (1, 1, 1, 1), (1, 1), (1, 1), (3, 0, 0, 0), [1, 1, 7, 4]),
        ((1, 1, 4, 4), (1, 1, 1, 1), (1, 1), (1, 1), (0, 3, 0, 0), [1, 1, 4, 7]),
        ((1, 1, 4, 4), (1, 1, 1, 1), (1, 1), (1, 1), (0, 0, 3, 0), [1, 1, 7, 4]),
        ((1, 1, 4, 4), (1, 1, 1, 1), (1, 1), (1, 1), (0, 0, 0, 3), [1, 1, 4, 7]),
        # Strides and dilations are (h, w).
        ((1, 1, 9, 9), (1, 1, 3, 3), (4, 1), (1, 1), (0, 0, 0, 0), [1, 1, 2, 7]),
        ((1, 1, 9, 9), (1, 1, 3, 3), (1, 1), (4, 1), (0, 0, 0, 0), [1, 1, 1, 7]),
        # Filter exactly as large as the (dilated) input window.
        ((1, 2, 5, 5), (3, 2, 5, 5), (1, 1), (1, 1), (0, 0, 0, 0), [1, 3, 1, 1]),
    ],
)
def test_conv_output_shape_literal(input_shape, filter_shape, strides, dilations, padding, expected):
    assert list(ipu.conv_output_shape(input_shape, filter_shape, strides, dilations, padding)) == expected


@pytest.mark.parametrize(
    "size, kernel, stride, dilation",
    [(3, 3, 2, 2), (4, 3, 2, 2), (4, 3, 1, 2), (2, 3, 1, 1), (1, 2, 5, 1), (6, 4, 3, 3)],
)
def test_conv_output_shape_of_a_filter_too_large_is_not_positive(size, kernel, stride, dilation):
    # The dilated filter (dilation * (kernel - 1) + 1 rows) does not fit in `size` rows: no output
    # position exists, and the verifier relies on a non-positive size to reject the conv. (Dividing
    # with rounding towards zero instead of down would give 1 row when the filter is one row too
    # large for a stride above 1: 4 rows, reach 5, stride 2.)
    assert reference_output_size(size, kernel, stride, dilation, 0, 0) == 0
    shape = ipu.conv_output_shape((1, 1, size, 8), (1, 1, kernel, 1), (stride, 1), (dilation, 1), (0, 0, 0, 0))
    assert shape[2] <= 0 and shape[3] == 8


@pytest.mark.parametrize("case_index", range(0, len(CONV_CASES), 7))
def test_conv_infers_result_type(case_index):
    h, w, kh, kw, strides, dilations, padding = CONV_CASES[case_index]
    f16 = element("f16")
    input_type, filter_type = tensor([2, 6, h, w], f16), tensor([9, 2, kh, kw], f16)
    module, op = in_function(
        [input_type, filter_type],
        lambda args: ipu.conv(args[0], args[1], strides=strides, dilations=dilations, padding=padding, groups=3),
    )
    top, left, bottom, right = padding
    oh = reference_output_size(h, kh, strides[0], dilations[0], top, bottom)
    ow = reference_output_size(w, kw, strides[1], dilations[1], left, right)
    assert isinstance(op, ipu.ConvOp)
    assert op.result.type == tensor([2, 9, oh, ow], f16)
    assert (op.strides, op.dilations, op.padding, op.groups) == (strides, dilations, padding, 3)
    assert ipu_errors(module) == []


def test_conv_defaults_and_attribute_encoding():
    module, op = in_function([tensor([1, 3, 8, 8]), tensor([4, 3, 3, 3])], lambda args: ipu.conv(args[0], args[1]))
    assert op.result.type == tensor([1, 4, 6, 6])
    attributes = {name: str(op.attributes[name]) for name in op.attributes}
    assert attributes == {
        "strides": "array<i64: 1, 1>",
        "dilations": "array<i64: 1, 1>",
        "padding": "array<i64: 0, 0, 0, 0>",
        "groups": "1 : i64",
    }
    assert (op.strides, op.dilations, op.padding, op.groups) == ((1, 1), (1, 1), (0, 0, 0, 0), 1)
    assert all(type(v) is int for v in (*op.strides, *op.dilations, *op.padding, op.groups))
    assert ipu_errors(module) == []


def test_conv_too_large_filter_is_reported_by_the_verifier():
    # 4 padded rows, a dilated filter of 5: (4 - 5) // 2 + 1 = 0 rows of output.
    module, op = in_function(
        [tensor([1, 1, 4, 4]), tensor([1, 1, 3, 3])], lambda args: ipu.conv(args[0], args[1], strides=(2, 2), dilations=(2, 2))
    )
    assert op.result.type == tensor([1, 1, 0, 0])
    assert ipu_errors(module) == ["error: 'ipu.conv' op expects the dilated filter to fit in the padded input, got an output of 0x0"]


# --- exchange, streams, buffers, copies ---------------------------------------------------------

MAPPINGS = [
    LinearMapping(8, TileGrid.range(0, 16)),
    BlockMapping((32, 16), TileGrid(1, (2, 4), (8, 2))),
    IntervalMapping(((0, 4000, 3), (4000, 4096, 7))),
]


@pytest.mark.parametrize("mapping", MAPPINGS, ids=lambda m: type(m).__name__)
def test_exchange_result_type_is_the_source_type(mapping):
    module, op = in_function([tensor([64, 64])], lambda args: ipu.exchange(args[0], mapping), target="tiny")
    assert isinstance(op, ipu.ExchangeOp)
    assert op.result.type == tensor([64, 64])
    assert op.mapping == mapping
    assert str(op.attributes["mapping"]) == str(mapping.encode())
    assert ipu_errors(module) == []


def test_buffer_builder_attributes():
    f32 = ir.F32Type.get()
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        placed = ipu.buffer("x", ir.MemRefType.get([64], f32), TileGrid.range(0, 16), offset=512)
        unplaced = ipu.buffer("y", ir.MemRefType.get([2, 3], element("i8")), TileGrid(4, (2,), (3,)))
    assert sorted(placed.attributes) == ["offset", "sym_name", "tiles", "type"]
    assert sorted(unplaced.attributes) == ["sym_name", "tiles", "type"]
    assert str(placed.attributes["offset"]) == "512 : i64"
    assert (placed.sym_name, placed.offset, placed.bytes_per_tile) == ("x", 512, 256)
    assert (unplaced.sym_name, unplaced.offset, unplaced.bytes_per_tile) == ("y", None, 6)
    assert unplaced.type == ir.MemRefType.get([2, 3], element("i8"))
    assert unplaced.tiles == TileGrid(4, (2,), (3,))
    assert ipu_errors(module) == []


@pytest.mark.parametrize(
    "element_name, count, expected",
    [("f32", 64, 256), ("f16", 64, 128), ("bf16", 3, 6), ("i8", 5, 5), ("i1", 5, 5), ("i32", 2, 8), ("f64", 2, 16)],
)
def test_buffer_bytes_per_tile(element_name, count, expected):
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        op = ipu.buffer("b", ir.MemRefType.get([count], element(element_name)), TileGrid.range(0, 1))
    assert op.bytes_per_tile == expected


def test_device_to_host_result_type_is_as_given():
    mapping = LinearMapping(64, TileGrid.range(0, 16))

    def buffers():
        ipu.buffer("x", ir.MemRefType.get([64], ir.F32Type.get()), TileGrid.range(0, 16))

    module, op = in_function([], lambda args: ipu.device_to_host(tensor([32, 32]), "x", mapping), target="tiny", before=buffers)
    assert isinstance(op, ipu.DeviceToHostOp)
    assert op.result.type == tensor([32, 32])
    assert (op.buffer, op.mapping) == ("x", mapping)
    assert ipu_errors(module) == []


@pytest.mark.parametrize(
    "src_tiles, dst_tiles, expected_zeros",
    [
        (TileGrid.range(0, 8), TileGrid.range(8, 8), (0, 0)),
        (TileGrid(0, (2, 2), (2, 1)), TileGrid(4, (2, 2), (2, 1)), (0, 0, 0)),
        (TileGrid(0, (2, 1, 2), (2, 0, 1)), TileGrid(8, (2, 1, 2), (2, 0, 1)), (0, 0, 0, 0)),
    ],
)
def test_copy_default_offsets_have_one_entry_per_grid_dimension_plus_one(src_tiles, dst_tiles, expected_zeros):
    def buffers():
        for name in ("a", "b"):
            ipu.buffer(name, ir.MemRefType.get([16], ir.F32Type.get()), TileGrid.range(0, 16))

    module, op = in_function(
        [], lambda args: ipu.copy("a", "b", size=16, src_tiles=src_tiles, dst_tiles=dst_tiles), target="tiny", before=buffers
    )
    assert isinstance(op, ipu.CopyOp)
    assert (op.src_offset, op.dst_offset) == (expected_zeros, expected_zeros)
    assert (op.source, op.dest, op.size) == ("a", "b", 16)
    assert (op.src_tiles, op.dst_tiles) == (src_tiles, dst_tiles)
    assert ipu_errors(module) == []


def test_builders_honour_loc_and_ip():
    module = ir.Module.create()
    block = module.body
    loc = ir.Location.file("program.mlir", 12, 5)
    sync = ipu.sync("external", loc=loc, ip=ir.InsertionPoint(block))
    execute = ipu.execute("cs", ip=ir.InsertionPoint.at_block_begin(block))
    assert [op.operation.name for op in block.operations] == ["ipu.execute", "ipu.sync"]
    assert str(sync.location) == 'loc("program.mlir":12:5)'
    assert execute.compute_set == "cs"


# --- Round trip through text -------------------------------------------------------------------


def _relu_codelet():
    t = tensor([64])
    fn = func.FuncOp("relu", ([t], [t]), visibility="private")
    fn.attributes[ipu.CODELET_ATTR] = ir.UnitAttr.get()
    with ir.InsertionPoint(fn.add_entry_block()):
        zero = arith.ConstantOp(t, ir.DenseElementsAttr.get_splat(t, ir.FloatAttr.get(ir.F32Type.get(), 0.0)))
        func.ReturnOp([arith.MaximumFOp(fn.arguments[0], zero).result])


def _l3_module(body):
    """A tiny-target module with buffers x, y (64 floats on tiles 0..15) and a program `body`."""
    f32 = ir.F32Type.get()
    module = ir.Module.create()
    module.operation.attributes[TARGET_ATTR] = ir.StringAttr.get("tiny")
    with ir.InsertionPoint(module.body):
        ipu.buffer("x", ir.MemRefType.get([64], f32), TileGrid.range(0, 16), offset=0)
        ipu.buffer("y", ir.MemRefType.get([64], f32), TileGrid.range(0, 16))
        main = func.FuncOp("main", ([tensor([1024])], []))
        with ir.InsertionPoint(main.add_entry_block()):
            body(main.arguments[0])
            func.ReturnOp([])
        cs = func.FuncOp("cs", ([], []), visibility="private")
        cs.attributes[ipu.COMPUTE_SET_ATTR] = ir.UnitAttr.get()
        with ir.InsertionPoint(cs.add_entry_block()):
            ipu.vertex_group("relu", TileGrid.range(0, 16), inputs=["x"], outputs=["y"])
            func.ReturnOp([])
        _relu_codelet()
    return module


def _l1_module(input_types, body):
    return in_function(input_types, body)[0]


ROUND_TRIP_CASES = {
    "matmul": lambda: _l1_module([tensor([128, 64]), tensor([64, 32])], lambda a: ipu.matmul(a[0], a[1])),
    "matmul_batch": lambda: _l1_module([tensor([2, 3, 8, 4]), tensor([2, 3, 4, 5])], lambda a: ipu.matmul(a[0], a[1])),
    "matmul_i8": lambda: _l1_module(
        [tensor([4, 8], element("i8")), tensor([8, 2], element("i8"))],
        lambda a: ipu.matmul(a[0], a[1], element_type=element("i32")),
    ),
    "conv": lambda: _l1_module(
        [tensor([2, 6, 17, 19], element("f16")), tensor([9, 2, 3, 5], element("f16"))],
        lambda a: ipu.conv(a[0], a[1], strides=(2, 3), dilations=(2, 1), padding=(1, 2, 0, 0), groups=3),
    ),
    **{f"exchange_{type(m).__name__}": (lambda m=m: _l1_module([tensor([64, 64])], lambda a: ipu.exchange(a[0], m))) for m in MAPPINGS},
    "host_to_device": lambda: _l3_module(lambda arg: ipu.host_to_device(arg, "x", LinearMapping(64, TileGrid.range(0, 16)))),
    "device_to_host": lambda: _l3_module(
        lambda arg: ipu.device_to_host(tensor([32, 32]), "y", BlockMapping((2, 32), TileGrid(0, (16, 1), (1, 0))))
    ),
    "copy_default_offsets": lambda: _l3_module(
        lambda arg: ipu.copy("y", "x", size=64, src_tiles=TileGrid.range(0, 8), dst_tiles=TileGrid.range(8, 8))
    ),
    "copy_explicit_offsets": lambda: _l3_module(
        lambda arg: ipu.copy(
            "y",
            "x",
            size=8,
            src_tiles=TileGrid(0, (2, 4), (4, 1)),
            dst_tiles=TileGrid(8, (2, 4), (4, 1)),
            src_offset=[0, 0, 8],
            dst_offset=[32, 0, 8],
        )
    ),
    "sync_execute": lambda: _l3_module(lambda arg: (ipu.sync("internal"), ipu.execute("cs"), ipu.sync("external"))),
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP_CASES))
def test_built_ops_round_trip_through_text(name):
    module = ROUND_TRIP_CASES[name]()
    assert ipu_errors(module) == []
    text = str(module)
    parsed = ir.Module.parse(text)
    assert str(parsed) == text
    # The generic form (what ops.mlir shows for ipu ops anyway) round-trips as well.
    generic = module.operation.get_asm(print_generic_op_form=True)
    assert ir.Module.parse(generic).operation.get_asm(print_generic_op_form=True) == generic
    # And the parsed module hands out the same typed views with the same decoded attributes.
    assert _typed_ops(parsed) == _typed_ops(module)


def _typed_ops(module: ir.Module) -> list[tuple]:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        view = op.opview
        if type(view).__module__ == ipu.__name__:
            accessors = [
                name
                for name in (
                    "strides",
                    "dilations",
                    "padding",
                    "groups",
                    "mapping",
                    "buffer",
                    "sym_name",
                    "tiles",
                    "offset",
                    "source",
                    "dest",
                    "size",
                    "src_tiles",
                    "dst_tiles",
                    "src_offset",
                    "dst_offset",
                    "kind",
                    "compute_set",
                    "codelet",
                    "inputs",
                    "outputs",
                )
                if isinstance(getattr(type(view), name, None), property)
            ]
            values = [getattr(view, name) for name in accessors]
            values = [str(v) if isinstance(v, (ir.Value, ir.Type)) else v for v in values]
            found.append((type(view).__name__, tuple(accessors), tuple(map(repr, values))))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def test_round_trip_cases_cover_every_op():
    names = set()
    for build in ROUND_TRIP_CASES.values():
        names.update(kind for kind, _, _ in _typed_ops(build()))
    assert names == {
        "MatmulOp",
        "ConvOp",
        "ExchangeOp",
        "BufferOp",
        "HostToDeviceOp",
        "DeviceToHostOp",
        "CopyOp",
        "SyncOp",
        "ExecuteOp",
        "VertexGroupOp",
    }


def test_role_function_builders_mark_and_shape_their_functions():
    with make_context(), ir.Location.unknown():
        f32 = ir.F32Type.get()
        slice_type = ir.RankedTensorType.get([8], f32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            program = ipu.program_function("main", [slice_type], [])
            compute_set = ipu.compute_set_function("cs")
            codelet = ipu.codelet_function("k", [slice_type, slice_type], [slice_type])
        for function, returned in ((program, []), (compute_set, []), (codelet, [codelet.arguments[0]])):
            with ir.InsertionPoint(function.entry_block):
                func.ReturnOp(returned)
        assert module.operation.verify() and verifier.verify(module.operation) == []
        text = str(module)
        assert "func.func @main(%arg0: tensor<8xf32>) attributes {ipu.program}" in text
        assert "func.func private @cs() attributes {ipu.compute_set}" in text
        assert "func.func private @k(%arg0: tensor<8xf32>, %arg1: tensor<8xf32>) -> tensor<8xf32> attributes {ipu.codelet}" in text
        assert [len(f.entry_block.arguments) for f in (program, compute_set, codelet)] == [1, 0, 2]
