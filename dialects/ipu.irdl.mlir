//# # The `ipu` dialect
//#
//# Graph programs for a Graphcore-IPU-style tile machine: ~1,500 tiles, each with its own small
//# SRAM, running bulk-synchronous supersteps (compute on local memory, sync, exchange).
//#
//# This file is the one definition of the dialect. Python loads it with
//# `mlir.dialects.irdl.load_dialects` (`ipu_mlir.dialects.make_context()`) and
//# `mlir-opt --irdl-file=dialects/ipu.irdl.mlir` parses and verifies the same IR. IRDL checks
//# operand, result and attribute kinds; the rules IRDL cannot express (shapes, symbol targets,
//# tile indices within the target, slices within buffers, mappings that cover a tensor exactly
//# once) are checked by `ipu_mlir.dialects.verifier`, listed under **Verified in Python** below.
//# `docs/dialect.md` is generated from this file by `ipu-dialect-doc`.
//#
//# IRDL ops print in the generic form (`"ipu.matmul"(%a, %b) : (...) -> ...`) and their
//# attributes are builtin ones, so passes read them through the Python API
//# (`ipu_mlir.dialects.ipu`, `ipu_mlir.dialects.attrs`).
//#
//# The dialect has three levels, one per stage of the compiler:
//#
//# - **L1**: compute on whole tensors, value semantics: `ipu.matmul` and `ipu.conv`, the ops
//#   the planner splits across tiles, next to upstream `linalg.generic` for element-wise,
//#   broadcast, transpose and reduction work, and upstream `tensor` ops for data movement.
//#   (`linalg.generic` rather than an `ipu` copy of it: IRDL 22 binds a constraint variable
//#   once per op, even across the elements of a variadic operand, so an IRDL op cannot take
//#   operands of different types such as `(tensor<4x8xf32>, tensor<8xi1>)`.)
//# - **L2**: the same ops, each result carrying a tile mapping (`ipu.mapping` attribute), each
//#   compute op a partition of its loops over tiles (`ipu.partition`, `ipu.tiles`), and
//#   `ipu.exchange` where a consumer needs data mapped elsewhere.
//# - **L3**: a program on tile-local buffers: module-level `ipu.buffer` symbols (Poplar's graph
//#   variables) that host streams, exchange copies and vertex groups refer to by name, some of
//#   them device variables (`ipu.variable`: state kept from run to run), and a
//#   program function (`ipu.program`) that is a flat sequence of compute sets, syncs and
//#   exchanges.
//#
//# ## Shared attribute encodings
//#
//# **Tile grid** (`tiles`, `src_tiles`, `dst_tiles`): `array<i64: first, n0, s0, n1, s1, ...>`
//# names the tiles `first + i0*s0 + i1*s1 + ...` for `0 <= ik < nk`, enumerated row-major
//# over `(i0, i1, ...)`. `array<i64: 0, 16, 1>` is tiles 0..15; `array<i64: 3, 4, 0>` is tile 3
//# four times (allowed only where repetition means broadcast, as in `ipu.copy` sources). This
//# keeps one op per vertex group or transfer pattern whatever the number of tiles.
//#
//# **Tile mapping** (`mapping`, `ipu.mapping`): where each element of a tensor lives, a
//# dictionary with a `kind`; every element is on exactly one tile (Poplar's tile mapping).
//# A tile's slice is the elements mapped to it in increasing row-major (flat) index order.
//#
//# - `{kind = "linear", grain = G, tiles = GRID}`: the flattened tensor is cut into grains of
//#   `G` elements; with `g` grains and `T` tiles (distinct) each tile gets `ceil(g / T)`
//#   consecutive grains, in grid order (Poplar's `mapTensorLinearly`).
//# - `{kind = "block", block = array<i64: b0, b1, ...>, tiles = GRID}`: the tensor is cut into
//#   blocks of shape `b` (the last ones may be smaller); the block with index `(j0, j1, ...)`
//#   lives on the grid's tile `(j0, j1, ...)`, so the grid has the tensor's rank and sizes
//#   `ceil(dk / bk)`.
//# - `{kind = "intervals", intervals = array<i64: begin0, end0, tile0, begin1, ...>}`: explicit
//#   half-open flat-index intervals, sorted, covering the tensor exactly once.
//#
//# **Partition** (`ipu.partition`, `ipu.tiles`): how an L2 compute op (`ipu.matmul`,
//# `ipu.conv`, `linalg.generic`) is cut across tiles, as two discardable attributes that go
//# together. The op's loops are those of its iteration space, parallel loops first (a
//# matmul's `[batch..., m, n, k]`, a convolution's `[n, f, oh, ow, c, kh, kw]`, a generic's
//# `iterator_types`). `ipu.partition = array<i64: b0, b1, ...>` gives the block size of each
//# loop: loop `d` is cut into `ceil(extent_d / b_d)` parts of `b_d` iterations (the last may
//# be smaller). `ipu.tiles` is a tile grid with one dimension per loop and those part counts as
//# sizes: part `(j0, j1, ...)` runs on grid tile `(j0, j1, ...)`. An op without loops has
//# `ipu.partition = array<i64>` and a one-tile grid. A cut summed loop (k, c, kh, kw, or a
//# generic's `reduction`) means partial results, which `ipu-schedule` exchanges and combines
//# in a second superstep.
//#
//# ```mlir
//# %c = "ipu.matmul"(%a, %b) {ipu.partition = array<i64: 4, 6, 4>,
//#        ipu.tiles = array<i64: 0, 2, 1, 1, 0, 1, 0>,     // m in 2 parts on tiles 0, 1
//#        ipu.mapping = {kind = "block", block = array<i64: 4, 6>, tiles = array<i64: 0, 2, 1, 1, 0>}}
//#      : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
//# ```
//#
//# **Verified in Python:** both attributes or neither; positive block sizes; `ipu.tiles` a
//# tile grid with one dimension per block size, on distinct tiles within the target (on a
//# multi-IPU target, within one IPU); the op has one ranked tensor result. `ipu-schedule` checks the partition against the op's loops
//# (one block size per loop, grid sizes `ceil(extent / block)`) and reports a mismatch on the op.
//# Python: `ipu_mlir.dialects.attrs.PartitionAttr` (decode / encode), the layouts the parts read
//# and write in `ipu_mlir.lowering.layout_algebra`.
//#
//# Module attribute `ipu.target = "gc200"` (a built-in target name or a target file path)
//# selects the machine; `ipu.compute_set` and `ipu.codelet` are unit attributes on the
//# `func.func`s playing those roles; `ipu.program` marks the L3 entry function.
//#
//# Control flow in programs uses upstream ops: `scf.for` is Poplar's `Repeat`, `scf.if` its
//# `If` and `scf.while` its `RepeatWhileTrue`, their conditions read by `ipu.predicate`; a
//# block of ops in an `ipu` op would need a terminator IRDL ops cannot provide.

irdl.dialect @ipu {

  //## L1: compute on whole tensors

  // Matrix product, batched over leading dimensions.
  //
  // `lhs: tensor<B... x M x K>`, `rhs: tensor<B... x K x N>` give
  // `result: tensor<B... x M x N>`: `result[b, m, n] = sum_k lhs[b, m, k] * rhs[b, k, n]`,
  // accumulated in the result's element type (e.g. `i8 x i8 -> i32`). Matrix-vector products
  // are matmuls with a unit dimension.
  //
  // FP8 operands may carry Poplar's QUARTER metadata, `ipu.quarter = {format = "f143",
  // log2_scale = -6 : i32}`: their format (`f143`, `f152`: Poplar's, `f8E4M3FNUZ`,
  // `f8E5M2FNUZ`; `e4m3fn`, `e5m2`: the OCP ones PyTorch writes) and a power of two scaling
  // the product, `result = (lhs x rhs) * 2^log2_scale`, summed in f32 and rounded once (PopXL's
  // `matmul_pow2scaled`).
  //
  // **Verified in Python:** operands and result have the same rank, at least 2; batch
  // dimensions agree; `lhs` and `rhs` agree on K; the result is `M x N`; `lhs` and `rhs`
  // have the same element type. With `ipu.quarter`: its two fields only, `log2_scale` an i32
  // in [-32, 32), the format that of the operands' element type, an f16 or f32 result.
  //
  // ```mlir
  // %c = "ipu.matmul"(%a, %b) : (tensor<128x64xf32>, tensor<64x32xf32>) -> tensor<128x32xf32>
  // %s = "ipu.matmul"(%qa, %qb) {ipu.quarter = {format = "f143", log2_scale = -6 : i32}}
  //        : (tensor<128x64xf8E4M3FNUZ>, tensor<64x32xf8E4M3FNUZ>) -> tensor<128x32xf16>
  // ```
  irdl.operation @matmul {
    %lhs = irdl.base "!builtin.tensor"
    %rhs = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs)
    irdl.results(result: %result)
  }

  // Two-dimensional convolution, NCHW layout, with strides, dilations, padding and groups.
  //
  // `input: tensor<N x C x H x W>`, `filter: tensor<F x C/groups x KH x KW>` give
  // `result: tensor<N x F x OH x OW>` with
  // `OH = (H + pad_top + pad_bottom - dilation_h * (KH - 1) - 1) / stride_h + 1` (likewise OW).
  // Output channel `f` reads the input channels of its group, `f / (F / groups)`. Depthwise
  // convolution is `groups = C`. `padding = array<i64: top, left, bottom, right>` pads with zeros.
  //
  // **Verified in Python:** rank 4 everywhere; `strides` and `dilations` have two positive
  // entries, `padding` four non-negative ones; `groups` is positive and divides C and F; the
  // filter has `C / groups` channels; the result shape follows the formula above; input and
  // filter have the same element type.
  //
  // ```mlir
  // %y = "ipu.conv"(%x, %w) {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>,
  //        padding = array<i64: 1, 1, 1, 1>, groups = 1 : i64}
  //      : (tensor<1x3x32x32xf32>, tensor<8x3x3x3xf32>) -> tensor<1x8x32x32xf32>
  // ```
  irdl.operation @conv {
    %input = irdl.base "!builtin.tensor"
    %filter = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %strides = irdl.base "#builtin.dense_array"
    %dilations = irdl.base "#builtin.dense_array"
    %padding = irdl.base "#builtin.dense_array"
    %groups = irdl.base "#builtin.integer"
    irdl.operands(input: %input, filter: %filter)
    irdl.results(result: %result)
    irdl.attributes {
      "strides" = %strides,
      "dilations" = %dilations,
      "padding" = %padding,
      "groups" = %groups
    }
  }

  // Row gather: `result[n.., d] = table[indices[n..], d]` (an embedding lookup).
  //
  // `table: tensor<V x D>`, `indices: tensor<N.. x iK>`, `rows: tensor<V x iK>` holding
  // `0 .. V-1` give `result: tensor<N.. x D>` of the table's element type. `rows` is the row
  // number of each table row: cut with the table across tiles, it tells a tile which rows it
  // holds, so a lookup is planned like a contraction over the rows (loops n.., d, v; v summed):
  // a tile holding rows `[lo, hi)` gives the rows of the indices in that range and zeros for
  // the others, and the pieces' results are summed. An index outside `0 .. V-1` gives zeros;
  // `ipu-convert-to-ipu` keeps the bounds checks of the source in front of it.
  //
  // **Verified in Python:** `table` has rank 2; `rows` is `V` integers of the indices'
  // type; the result is the indices' shape then `D`, of the table's element type.
  //
  // ```mlir
  // %e = "ipu.gather"(%table, %ids, %rows) : (tensor<30522x768xf32>, tensor<1x128xi64>, tensor<30522xi64>) -> tensor<1x128x768xf32>
  // ```
  irdl.operation @gather {
    %table = irdl.base "!builtin.tensor"
    %indices = irdl.base "!builtin.tensor"
    %rows = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(table: %table, indices: %indices, rows: %rows)
    irdl.results(result: %result)
  }

  // Row scatter: `result[positions[n], :] (+)= updates[n, :]` (scatter_add, index_put).
  //
  // `result[r, d]` folds, in the order of `n`, the `updates[n, d]` whose `positions[n]` is `r`,
  // from the identity of `combiner` (`"arith.addf"`: scatter_add). `updates: tensor<N x D>`,
  // `positions: tensor<N x iK>`, `rows: tensor<R x iK>` holding `0 .. R-1` give
  // `result: tensor<R x D>` of the updates' element type. As in `ipu.gather`, `rows` tells a
  // tile which rows it holds: loops (r, d, n), n folded, so a tile holding rows `[lo, hi)` and
  // updates `[n0, n1)` folds each of those updates whose position is in its range (work linear
  // in the updates), and pieces cut along n are combined. A position outside `0 .. R-1` writes
  // nothing. `ipu-convert-tm-tensor` builds it for index_put, scatter, scatter_add and index_add.
  //
  // **Verified in Python:** `updates` has rank 2, `positions` is `N` integers and `rows` `R`
  // integers of one type; the result is `R x D` of the updates' element type; `combiner`
  // names an associative op of that type.
  //
  // ```mlir
  // %s = "ipu.scatter"(%u, %p, %rows) {combiner = "arith.addf"} : (tensor<8192x1xf32>, tensor<8192xi64>, tensor<32768xi64>) -> tensor<32768x1xf32>
  // ```
  irdl.operation @scatter {
    %updates = irdl.base "!builtin.tensor"
    %positions = irdl.base "!builtin.tensor"
    %rows = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %combiner = irdl.base "#builtin.string"
    irdl.operands(updates: %updates, positions: %positions, rows: %rows)
    irdl.results(result: %result)
    irdl.attributes { "combiner" = %combiner }
  }

  // The sum (or mean) of a tensor over the data-parallel replicas: GCL's all-reduce.
  //
  // Each of `replicas` replicas runs the same program on its own IPU and its own slice of the
  // batch (PopTorch's `replicationFactor`); every replica's result is the elementwise sum of
  // all replicas' operands, divided by `replicas` when `reduction` is `"mean"`. The training
  // front end puts one on each gradient, between the backward pass and the optimizer update,
  // so every replica makes the same update. The program holds one replica's ops: its size
  // does not grow with the replica count.
  //
  // **Verified in Python:** the result has the operand's type; `replicas` is a power of two
  // of at least 2 (GCL's ring) and at most the target's IPUs; `reduction` is `"sum"` or `"mean"`.
  //
  // ```mlir
  // %g = "ipu.all_reduce"(%grad) {replicas = 4 : i64, reduction = "mean"} : (tensor<64x32xf32>) -> tensor<64x32xf32>
  // ```
  irdl.operation @all_reduce {
    %source = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %replicas = irdl.base "#builtin.integer"
    %sum = irdl.is "sum"
    %mean = irdl.is "mean"
    %reduction = irdl.any_of(%sum, %mean)
    irdl.operands(source: %source)
    irdl.results(result: %result)
    irdl.attributes { "replicas" = %replicas, "reduction" = %reduction }
  }

  //## L2: tile mappings and exchange

  // Redistributes a tensor to a new tile mapping.
  //
  // At L2 every tensor value carries a tile mapping: the `ipu.mapping` attribute of the op that
  // defines it (or of the function argument). Where a consumer needs its operand mapped
  // differently, the planner inserts `ipu.exchange`; its result holds the same values laid
  // out by `mapping`. It becomes `ipu.copy` transfers at L3.
  //
  // **Verified in Python:** source and result types are equal; `mapping` is a valid tile
  // mapping of that shape within the target's tiles.
  //
  // ```mlir
  // %y = "ipu.exchange"(%x) {mapping = {kind = "linear", grain = 8 : i64, tiles = array<i64: 0, 16, 1>}}
  //      : (tensor<1024xf32>) -> tensor<1024xf32>
  // ```
  irdl.operation @exchange {
    %source = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    %mapping = irdl.base "#builtin.dictionary"
    irdl.operands(source: %source)
    irdl.results(result: %result)
    irdl.attributes { "mapping" = %mapping }
  }


  //## L3: programs on tile-local buffers

  // A tile-local buffer: one copy per tile of `tiles`, each of memref type `type`.
  //
  // A module-level symbol, like a Poplar graph variable: programs, compute sets and exchanges
  // refer to it by name. SPMD form: `memref<256xf32>` on `tiles = array<i64: 0, 1472, 1>` is
  // 1,472 buffers of 256 floats, one op. `offset` (optional, bytes) is the address within each
  // tile's SRAM chosen by the memory plan; it is the same on every tile of the buffer.
  //
  // **Verified in Python:** directly inside the module; `type` is a memref with a static shape
  // and the identity layout; `tiles` is a grid of distinct tiles within the target; `offset`,
  // when present, is non-negative, aligned to the element size, and `offset` plus the buffer's
  // size fits in a tile's SRAM; the name is unique.
  //
  // ```mlir
  // "ipu.buffer"() {sym_name = "x", type = memref<64xf32>, tiles = array<i64: 0, 16, 1>,
  //     offset = 0 : i64} : () -> ()
  // ```
  irdl.operation @buffer {
    %name = irdl.base "#builtin.string"
    %type = irdl.base "#builtin.type"
    %tiles = irdl.base "#builtin.dense_array"
    irdl.attributes { "sym_name" = %name, "type" = %type, "tiles" = %tiles }
  }

  // A device variable: state resident in tile memory for the life of the loaded program.
  //
  // Names `buffer` as the home of the host tensor `name` of type `type`, laid out by `mapping`
  // (a tile's slice at the start of its copy of the buffer, as for `ipu.host_to_device`).
  // Poplar's graph variable that the host writes and reads with `Engine::writeTensor` /
  // `readTensor`, not through a data stream of each run: parameters, optimizer state, running
  // statistics, hyper-parameters (the L0 `ipu.resident` attribute). The program reads the
  // buffer and updates it in place (its writes are the update); no host stream of the
  // program writes it, and the memory plan keeps its bytes for the whole program.
  //
  // **Verified in Python:** directly inside the module; `buffer` names an `ipu.buffer` with the
  // element type of `type`, a static tensor; `mapping` is valid for its shape and each tile's
  // slice fits in the buffer; names are unique and no buffer is two variables; no
  // `ipu.host_to_device` writes the buffer (an `ipu.device_to_host` may read it: a result
  // asking for the variable's value back).
  //
  // ```mlir
  // "ipu.variable"() {name = "param:fc1.weight", buffer = @var0, type = tensor<16x8xf32>,
  //     mapping = {kind = "block", block = array<i64: 16, 2>, tiles = array<i64: 0, 1, 0, 4, 1>}} : () -> ()
  // ```
  irdl.operation @variable {
    %name = irdl.base "#builtin.string"
    %buffer = irdl.base "#builtin.symbol_ref"
    %type = irdl.base "#builtin.type"
    %mapping = irdl.base "#builtin.dictionary"
    irdl.attributes { "name" = %name, "buffer" = %buffer, "type" = %type, "mapping" = %mapping }
  }

  // Host-to-device stream: scatters a host tensor into a buffer on tiles.
  //
  // Each tile of `mapping` receives its slice of `source` (its elements in increasing flat
  // index order) at the start of its copy of `buffer`. Poplar's host-to-device `Copy` from a
  // data stream.
  //
  // **Verified in Python:** `buffer` names an `ipu.buffer` with the source's element type;
  // `mapping` is valid for the source shape; every mapped tile holds a copy of the buffer and
  // each tile's slice fits in it.
  //
  // ```mlir
  // "ipu.host_to_device"(%arg0) {buffer = @x, mapping = {kind = "linear", grain = 1 : i64,
  //     tiles = array<i64: 0, 16, 1>}} : (tensor<1024xf32>) -> ()
  // ```
  irdl.operation @host_to_device {
    %source = irdl.base "!builtin.tensor"
    %buffer = irdl.base "#builtin.symbol_ref"
    %mapping = irdl.base "#builtin.dictionary"
    irdl.operands(source: %source)
    irdl.attributes { "buffer" = %buffer, "mapping" = %mapping }
  }

  // Device-to-host stream: gathers a tensor from a buffer on tiles.
  //
  // The inverse of `ipu.host_to_device`: the tensor's elements mapped to each tile are read
  // from the start of that tile's copy of `buffer`.
  //
  // **Verified in Python:** as for `ipu.host_to_device`, with the result's shape.
  //
  // ```mlir
  // %out = "ipu.device_to_host"() {buffer = @y, mapping = {kind = "linear", grain = 1 : i64,
  //     tiles = array<i64: 0, 16, 1>}} : () -> tensor<1024xf32>
  // ```
  irdl.operation @device_to_host {
    %result = irdl.base "!builtin.tensor"
    %buffer = irdl.base "#builtin.symbol_ref"
    %mapping = irdl.base "#builtin.dictionary"
    irdl.results(result: %result)
    irdl.attributes { "buffer" = %buffer, "mapping" = %mapping }
  }

  // One transfer pattern of an exchange phase: `size` elements from tile to tile.
  //
  // `src_tiles` and `dst_tiles` are tile grids of the same sizes; for each grid index `i`,
  // tile `src_tiles[i]` sends `size` elements of its copy of `source` starting at element
  // `src_offset[0] + sum_k i_k * src_offset[k+1]` to tile `dst_tiles[i]`'s copy of `dest` at
  // element `dst_offset[0] + sum_k i_k * dst_offset[k+1]`. A source stride of 0 broadcasts. The
  // copies between two `ipu.sync` ops form one exchange phase.
  //
  // **Verified in Python:** `source` and `dest` name `ipu.buffer`s of the same element type;
  // both grids have the same sizes and lie within the target; each source tile holds `source`
  // and each destination tile holds `dest`; each offset array has one entry plus one per grid
  // dimension; every transferred range lies within its buffer; no element of `dest` is written
  // twice (tiles may repeat in either grid: a gather writes one tile at several offsets);
  // `size` is positive. On a multi-IPU target (tiles numbered globally, `tiles_per_ipu` per
  // IPU), a copy from one IPU's tiles to another's is in the link form: the nearest
  // `ipu.sync` before it is `"global"` (or `"external"`, which syncs every IPU with the host).
  //
  // ```mlir
  // "ipu.copy"() {source = @x, dest = @y, size = 64 : i64, src_tiles = array<i64: 0, 16, 1>,
  //     dst_tiles = array<i64: 16, 16, 1>, src_offset = array<i64: 0, 0>,
  //     dst_offset = array<i64: 0, 0>} : () -> ()
  // ```
  irdl.operation @copy {
    %source = irdl.base "#builtin.symbol_ref"
    %dest = irdl.base "#builtin.symbol_ref"
    %size = irdl.base "#builtin.integer"
    %src_tiles = irdl.base "#builtin.dense_array"
    %dst_tiles = irdl.base "#builtin.dense_array"
    %src_offset = irdl.base "#builtin.dense_array"
    %dst_offset = irdl.base "#builtin.dense_array"
    irdl.attributes {
      "source" = %source,
      "dest" = %dest,
      "size" = %size,
      "src_tiles" = %src_tiles,
      "dst_tiles" = %dst_tiles,
      "src_offset" = %src_offset,
      "dst_offset" = %dst_offset
    }
  }

  // The all-reduce of `source` over the replicas into `dest`, over the IPU-Links (L3).
  //
  // `ipu.all_reduce` scheduled: `source` and `dest` hold a tensor of type `type` laid out by
  // `mapping` (as for `ipu.host_to_device`), the same on every replica's IPU. GCL's ring: the
  // replicas' IPUs in a ring over the links, reduce-scatter then all-gather, 2 x (replicas - 1)
  // steps, each moving 1 / replicas of the tensor to the ring's next IPU in one exchange
  // phase over the IPU-Links after a global sync. Every replica's `dest` then holds the sum
  // (or, for `"mean"`, the mean) of all replicas' `source`. `ring` lists, by replica, the IPU
  // holding replica r's copy of the tensor: the program is replica 0's, on IPUs 0..K-1, and
  // replica r runs it on IPUs rK..rK+K-1, so a tensor on IPU s is reduced over the IPUs
  // s, s + K, ..., the IPUs holding the same pipeline stage (K = 1: IPUs 0..R-1).
  //
  // **Verified in Python:** `source` and `dest` name `ipu.buffer`s with the element type of
  // `type`; `mapping` is valid for `type`'s shape and fits both (as a stream's would);
  // `replicas` is a power of two of at least 2 and at most the target's IPUs; `ring` holds
  // `replicas` distinct IPUs of the target, its first the IPU of `mapping`'s tiles; `reduction`
  // is `"sum"` or `"mean"`.
  //
  // ```mlir
  // "ipu.ring_all_reduce"() {source = @matmul3, dest = @all_reduce0, type = tensor<64x32xf32>,
  //     mapping = {kind = "linear", grain = 1 : i64, tiles = array<i64: 0, 16, 1>},
  //     replicas = 4 : i64, ring = array<i64: 0, 1, 2, 3>, reduction = "mean"} : () -> ()
  // ```
  irdl.operation @ring_all_reduce {
    %source = irdl.base "#builtin.symbol_ref"
    %dest = irdl.base "#builtin.symbol_ref"
    %type = irdl.base "#builtin.type"
    %mapping = irdl.base "#builtin.dictionary"
    %replicas = irdl.base "#builtin.integer"
    %ring = irdl.base "#builtin.dense_array"
    %sum = irdl.is "sum"
    %mean = irdl.is "mean"
    %reduction = irdl.any_of(%sum, %mean)
    irdl.attributes {
      "source" = %source,
      "dest" = %dest,
      "type" = %type,
      "mapping" = %mapping,
      "replicas" = %replicas,
      "ring" = %ring,
      "reduction" = %reduction
    }
  }

  // Barrier between BSP phases.
  //
  // `"internal"` synchronises the tiles of one IPU; `"external"` also the host (around host
  // streams); `"global"` the tiles of every IPU of a multi-IPU system (Poplar's global sync).
  // The exchange phase after a global (or external) sync is the link form, the only one whose
  // copies may go from one IPU's tiles to another's over the IPU-Links. A superstep is: compute set, sync, exchange
  // phase (the `ipu.copy` ops up to the next sync).
  //
  // **Verified by IRDL:** `kind` is `"internal"`, `"external"` or `"global"`.
  //
  // ```mlir
  // "ipu.sync"() {kind = "internal"} : () -> ()
  // ```
  irdl.operation @sync {
    %internal = irdl.is "internal"
    %external = irdl.is "external"
    %global = irdl.is "global"
    %kind = irdl.any_of(%internal, %external, %global)
    irdl.attributes { "kind" = %kind }
  }

  // Reads a device scalar as the condition of control flow.
  //
  // The predicate of Poplar's `If` (`scf.if`) and `RepeatWhileTrue` (`scf.while`'s
  // `scf.condition`), as an `i1`, or the index of its `Switch` (`scf.index_switch`), as an
  // `index`: the element at `tile` of `buffer`, read after the superstep that wrote it. The tile
  // broadcasts it to every tile (one exchange) and all synchronise (one sync) before the chosen
  // block or the next iteration starts.
  //
  // **Verified in Python:** `buffer` names an `ipu.buffer` held on `tile`, of element type `i1`
  // for an `i1`, an integer type for an `index`.
  //
  // ```mlir
  // %p = "ipu.predicate"() {buffer = @generic3, tile = 5 : i64} : () -> i1
  // scf.if %p { ... }
  // ```
  irdl.operation @predicate {
    %i1 = irdl.is i1
    %index = irdl.is index
    %result = irdl.any_of(%i1, %index)
    %buffer = irdl.base "#builtin.symbol_ref"
    %tile = irdl.base "#builtin.integer"
    irdl.results(result: %result)
    irdl.attributes { "buffer" = %buffer, "tile" = %tile }
  }

  // Runs a compute set: Poplar's `Execute(cs)`.
  //
  // `compute_set` names a `func.func` marked `ipu.compute_set`, without arguments or results,
  // whose body is a list of `ipu.vertex_group` ops. All of them run in the same compute phase,
  // each on its own tiles, touching only tile-local memory.
  //
  // **Verified in Python:** `compute_set` names such a function.
  //
  // ```mlir
  // "ipu.execute"() {compute_set = @relu_cs} : () -> ()
  // ```
  irdl.operation @execute {
    %compute_set = irdl.base "#builtin.symbol_ref"
    irdl.attributes { "compute_set" = %compute_set }
  }

  // One codelet run on every tile of a grid: a group of vertices in compact SPMD form.
  //
  // On each tile of `tiles`, one vertex runs `codelet` on that tile's copies of the buffers
  // named in `inputs` (its Input edges) and `outputs` (its Output edges; name a buffer in both
  // for an InOut edge). The codelet is a `func.func` marked `ipu.codelet` on tensors: one
  // argument per input, one result per output, so its body is ordinary tensor IR on one
  // tile's slice. Each argument (result) is a view of the leading elements of its buffer,
  // row-major: the buffer's element type and at most its number of elements, in any static
  // shape. So one buffer sized for the largest slice serves the tiles whose slices are
  // smaller (the edge blocks of a block mapping), through a second vertex group with a codelet
  // on the smaller shape. Vertex and edge counts are derived (tiles, tiles x edges), never
  // materialised.
  //
  // **Verified in Python:** directly inside a compute-set function; `inputs` and `outputs` name
  // `ipu.buffer`s; `tiles` is a grid of distinct tiles within the target, each holding every
  // buffer named; `codelet` names a `func.func` marked `ipu.codelet` with one argument per input
  // and one result per output, each a static tensor of its buffer's element type with at most
  // the buffer's number of elements; no two vertex groups of a compute set write the same buffer on the same tile;
  // on a multi-IPU target, `tiles` lie on one IPU (a vertex reads only its IPU's memory).
  //
  // ```mlir
  // func.func private @relu_cs() attributes {ipu.compute_set} {
  //   "ipu.vertex_group"() {codelet = @relu, tiles = array<i64: 0, 16, 1>, inputs = [@x],
  //       outputs = [@y]} : () -> ()
  //   return
  // }
  // ```
  irdl.operation @vertex_group {
    %codelet = irdl.base "#builtin.symbol_ref"
    %tiles = irdl.base "#builtin.dense_array"
    %inputs = irdl.base "#builtin.array"
    %outputs = irdl.base "#builtin.array"
    irdl.attributes {
      "codelet" = %codelet,
      "tiles" = %tiles,
      "inputs" = %inputs,
      "outputs" = %outputs
    }
  }
}
