"""`ipu-memory-plan`: offsets never overlap where buffers meet (brute force, random cases), the
simulator finds no clobbered data in planned programs, reuse lowers the peak, the report."""

import itertools
import json

import numpy as np
import pytest
from mlir import ir
from test_simulator import buffer, compute_set, d2h, execute, group, h2d, program, sync

from ipu_mlir.dialects import make_context
from ipu_mlir.lowering.memory_plan import MIN_ALIGNMENT, MemoryPlan, analyze_liveness, assign_offsets
from ipu_mlir.runtime.simulator import Simulator
from ipu_mlir.target.diagnostics import IpuError


def plan(text: str, **options) -> ir.Module:
    module = ir.Module.parse(text, make_context())
    with module.context:
        MemoryPlan(**options).run(module.operation)
    return module


def offsets_of(module: ir.Module) -> dict[str, int]:
    return {op.sym_name: op.offset for op in module.body.operations if op.operation.name == "ipu.buffer"}


def assert_no_clash(sizes, offsets, intervals, tile_sets) -> None:
    """Brute force: buffers sharing a tile and a superstep have disjoint bytes."""
    for i, j in itertools.combinations(range(len(sizes)), 2):
        (s0, e0), (s1, e1) = intervals[i], intervals[j]
        if s0 <= e1 and s1 <= e0 and tile_sets[i] & tile_sets[j]:
            assert offsets[i] + sizes[i] <= offsets[j] or offsets[j] + sizes[j] <= offsets[i], (i, j)


# --- The packing alone ------------------------------------------------------------------------


def random_tiles(rng: np.random.Generator, num_tiles: int) -> np.ndarray:
    kind = rng.integers(4)
    if kind == 0:
        return np.arange(num_tiles)
    if kind == 1:  # a strided grid: interleaves with others over the same tile range
        stride = int(rng.integers(2, 5))
        first = int(rng.integers(stride))
        return np.arange(first, num_tiles, stride)
    if kind == 2:
        first = int(rng.integers(num_tiles))
        return np.arange(first, min(num_tiles, first + int(rng.integers(1, 20))))
    return rng.choice(num_tiles, size=int(rng.integers(1, 6)), replace=False)


@pytest.mark.parametrize("seed", range(25))
def test_random_packings_never_overlap_where_buffers_meet(seed):
    rng = np.random.default_rng(seed)
    num_tiles, n = 40, int(rng.integers(2, 80))
    tiles = [random_tiles(rng, num_tiles) for _ in range(n)]
    sizes = rng.integers(0, 3000, size=n)
    starts = rng.integers(0, 30, size=n)
    ends = starts + rng.geometric(0.3, size=n) - 1
    unused = rng.random(n) < 0.1
    starts[unused], ends[unused] = np.iinfo(np.int64).max, -1
    alignment = np.where(rng.random(n) < 0.5, 8, 16)
    owner = np.repeat(np.arange(n), [t.size for t in tiles])
    offsets = assign_offsets(sizes, alignment, starts, ends, np.concatenate(tiles), owner, num_tiles)
    assert (offsets % alignment == 0).all() and (offsets >= 0).all()
    assert_no_clash(sizes, offsets, list(zip(starts, ends)), [set(t.tolist()) for t in tiles])


# --- The pass on random programs: brute force, and the simulator ------------------------------


def grid_text(tiles: tuple[int, int, int]) -> str:
    return ", ".join(map(str, tiles))


def random_stream_program(rng: np.random.Generator) -> tuple[str, list, list[tuple[int, int]], list[set[int]], list[np.ndarray], list[int]]:
    """Buffers streamed in at one superstep and out at a later one, some inside a Repeat loop.
    Returns the program, the buffers' (size, grid), their live supersteps as the test sees them
    (a loop extends them over itself), their tile sets, the inputs, and the buffers returned
    (a stream out inside the loop has a result the loop cannot return: it is dropped)."""
    steps, count = 12, int(rng.integers(3, 14))
    loop = sorted(rng.choice(steps, size=2, replace=False).tolist())
    buffers, live, tile_sets, inputs = [], [], [], []
    writes, reads = {}, {}
    for i in range(count):
        size = int(rng.choice([16, 64, 100]))
        stride = int(rng.integers(1, 3))
        n = int(rng.integers(1, 16 // stride + 1))
        first = int(rng.integers(0, 16 - (n - 1) * stride))
        grid = (first, n, stride)
        write = int(rng.integers(0, steps - 1))
        read = int(rng.integers(write + 1, steps))
        writes.setdefault(write, []).append(i)
        reads.setdefault(read, []).append(i)
        lo, hi = write, read
        if any(loop[0] <= s <= loop[1] for s in (write, read)):
            lo, hi = min(lo, loop[0]), max(hi, loop[1])
        buffers.append((size, grid))
        live.append((lo, hi))
        tile_sets.append({first + k * stride for k in range(n)})
        inputs.append(rng.standard_normal(size * n).astype(np.float32))

    def mapping(i: int) -> str:
        return f'{{grain = {buffers[i][0]} : i64, kind = "linear", tiles = array<i64: {grid_text(buffers[i][1])}>}}'

    def tensor(i: int) -> str:
        return f"tensor<{buffers[i][0] * buffers[i][1][1]}xf32>"

    body = ["    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index", "    %c2 = arith.constant 2 : index"]
    returned = []
    for step in range(steps):
        if step == loop[0]:
            body.append("    scf.for %i = %c0 to %c2 step %c1 {")
        body += [h2d(f"%arg{i}", f"b{i}", mapping(i), tensor(i)) for i in writes.get(step, [])]
        body += [d2h(f"%r{i}", f"b{i}", mapping(i), tensor(i)) for i in reads.get(step, [])]
        returned += [i for i in reads.get(step, []) if not loop[0] <= step <= loop[1]]
        body.append(sync("external"))
        if step == loop[1]:
            body.append("    }")
    args = ", ".join(f"%arg{i}: {tensor(i)}" for i in range(count))
    results = ", ".join(tensor(i) for i in returned)
    returns = ", ".join(f"%r{i}" for i in returned) + (" : " + results if returned else "")
    text = program(
        [buffer(f"b{i}", size, grid_text(grid)) for i, (size, grid) in enumerate(buffers)],
        body,
        args=args,
        results=results,
        returns=returns,
    )
    return text, buffers, live, tile_sets, inputs, returned


@pytest.mark.parametrize("seed", range(30))
def test_random_programs_planned_without_clobbering(seed):
    rng = np.random.default_rng(seed)
    text, buffers, live, tile_sets, inputs, returned = random_stream_program(rng)
    module = plan(text)
    offsets = [offsets_of(module)[f"b{i}"] for i in range(len(buffers))]
    assert_no_clash([4 * size for size, _ in buffers], offsets, live, tile_sets)
    outputs = Simulator(module).run(inputs)  # clobbered data would be an error naming the buffer
    for output, i in zip(outputs, returned):
        assert np.array_equal(output, inputs[i])


# --- Reuse on a chain -------------------------------------------------------------------------


def chain(length: int) -> str:
    """x0 -> x1 -> ... -> x{length}, one ReLU superstep each, on the 16 tiles of tiny."""
    body = [h2d("%arg0", "x0"), sync("external")]
    sets = []
    for k in range(length):
        body += [execute(f"cs{k}"), sync()]
        sets.append(compute_set(f"cs{k}", group("relu", f"@x{k}", f"@x{k + 1}")))
    body += [sync("external"), d2h("%0", f"x{length}")]
    return program([buffer(f"x{k}") for k in range(length + 1)], body, sets)


def test_reuse_lowers_the_peak_on_a_chain(tmp_path):
    report = tmp_path / "report.json"
    module = plan(chain(8), report=str(report))
    content = json.loads(report.read_text())
    totals = content["totals"]
    # Two buffers of 256 bytes live at a time instead of nine.
    assert (totals["peak_with_reuse"], totals["peak_without_reuse"]) == (512, 9 * 256)
    assert totals["reuse_ratio"] == pytest.approx(2 / 9, abs=1e-4) and totals["reuse_ratio"] < 1
    assert set(offsets_of(module).values()) == {0, 256}
    x = np.random.default_rng(0).standard_normal(1024).astype(np.float32)
    (y,) = Simulator(module).run([x])
    assert np.array_equal(y, np.maximum(x, 0))


def test_without_reuse_every_buffer_has_its_own_bytes():
    offsets = offsets_of(plan(chain(4), reuse=False))
    assert sorted(offsets.values()) == [0, 256, 512, 768, 1024]


def test_buffers_used_in_a_loop_live_through_it():
    body = [h2d("%arg0", "x0"), sync("external"), "    %c0 = arith.constant 0 : index", "    %c1 = arith.constant 1 : index"]
    body += ["    scf.for %i = %c0 to %c1 step %c1 {", execute("cs0"), sync(), execute("cs1"), sync(), "    }", d2h("%0", "x2")]
    sets = [compute_set("cs0", group("relu", "@x0", "@x1")), compute_set("cs1", group("relu", "@x1", "@x2"))]
    module = plan(program([buffer(f"x{k}") for k in range(3)], body, sets))
    assert len(set(offsets_of(module).values())) == 3
    liveness = analyze_liveness(module.operation, 16)
    assert liveness.live_ops.tolist() == [[0, 8], [4, 8], [4, 9]]  # the loop is ops 4-8 (its yield is not counted)


# --- Report and errors ------------------------------------------------------------------------


def test_report_json(tmp_path):
    report = tmp_path / "report.json"
    text = program(
        [buffer("x"), buffer("y"), buffer("head", 16, "0, 1, 1"), buffer("unused", 8, "5, 2, 1")],
        [h2d("%arg0", "x"), sync("external"), execute("relu_cs"), sync(), d2h("%0", "y")],
        [compute_set("relu_cs", group("relu", "@x", "@y")), compute_set("gather", group("relu", "@head", "@head", "0, 1, 1"))],
    )
    plan(text, report=str(report))
    content = json.loads(report.read_text())
    assert (content["target"], content["num_tiles"], content["tile_memory_bytes"], content["alignment"]) == (
        "tiny",
        16,
        65536,
        MIN_ALIGNMENT,
    )
    assert content["reuse"] is True and content["out_of_memory_tiles"] == 0
    assert content["peak_bytes_per_tile"] == {"max": 512, "max_tile": 0, "mean": 512.0, "tiles_holding_buffers": 16, "live_bound_max": 512}
    assert content["per_tile"]["bytes"] == [512] * 16 and content["per_tile"]["live_bound"] == [512] * 16
    by_name = {b["name"]: b for b in content["buffers"]}
    assert by_name["x"] == {
        "name": "x",
        "bytes": 256,
        "offset": 0,
        "tiles": [0, 16, 1],
        "num_tiles": 16,
        "live_ops": [0, 2],
        "live_supersteps": [0, 1],
    }
    assert by_name["y"]["live_ops"] == [2, 4] and by_name["y"]["offset"] == 256
    # Never used (no op names them, directly or through an executed compute set): conflict with nothing.
    assert by_name["head"]["live_ops"] is None and by_name["unused"]["offset"] == 0
    assert content["top_tiles"][0] == {"tile": 0, "bytes": 512, "live_bound": 512, "largest_buffers": ["x", "y", "head"]}
    assert len(content["top_tiles"]) == 5


def test_report_is_written_when_memory_overflows(tmp_path):
    report = tmp_path / "report.json"
    text = program(
        [buffer("a", 10000), buffer("b", 10000)],
        [
            h2d("%arg0", "a", '{grain = 10000 : i64, kind = "linear", tiles = array<i64: 0, 16, 1>}', "tensor<160000xf32>"),
            sync("external"),
            execute("cs"),
            sync(),
        ],
        [compute_set("cs", group("relu", "@a", "@b"))],
        args="%arg0: tensor<160000xf32>",
        results="",
        returns="",
    )
    with pytest.raises(IpuError) as caught:
        plan(text, report=str(report))
    assert caught.value.message.startswith(
        "Out of memory on tile 0: 80000 bytes used but tiles only have 65536 bytes; largest buffers there: @a (40000 B, "
        "live ops 0-2, placed by the op at -:2:3), @b (40000 B, live op 2, placed by the op at -:3:3)"
    )
    assert caught.value.message.endswith(
        "; 16 tiles are out of memory, tile 0 is the worst"
        "; activations and inputs live at superstep 1: 80000 B in 2: @a (40000 B, live ops 0-2, placed by the op at -:2:3), "
        "@b (40000 B, live op 2, placed by the op at -:3:3)"
    )
    assert json.loads(report.read_text())["out_of_memory_tiles"] == 16


def test_table_on_stderr(capsys):
    plan(chain(3), report="-")
    err = capsys.readouterr().err
    assert err.startswith("memory plan for tiny: 16 tiles of 65536 bytes, 4 buffers, 6 supersteps, reuse on\n")
    assert "reuse: peak 512 bytes per tile with liveness-based reuse, 1024 without: ratio 0.500" in err
    assert (
        "      0       512       512  @x0 (256 B, live ops 0-2, at 0), @x1 (256 B, live ops 2-4, at 256), @x2 (256 B, live ops 4-6, at 0)"
        in err
    )


def test_modules_without_buffers_are_left_alone():
    module = plan('module attributes {ipu.target = "tiny"} {\n  func.func @f() {\n    return\n  }\n}')
    assert "offset" not in str(module)


def test_a_module_without_program_keeps_every_buffer_apart():
    text = 'module attributes {ipu.target = "tiny"} {\n' + "\n".join(buffer(n) for n in "abc") + "\n}"
    assert sorted(offsets_of(plan(text)).values()) == [0, 256, 512]
