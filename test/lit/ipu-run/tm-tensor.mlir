// RUN: ipu-run %s --random-inputs 3 --check --target tiny | FileCheck %s
// RUN: ipu-run %s --random-inputs 4 --check --target gc2 | FileCheck %s
// RUN: ipu-compile %s --target tiny | FileCheck %s --check-prefix=COMPILE

// torch-mlir's TMTensor ops as the torch front end prints them (generic form: the bindings do
// not know the dialect, so they parse as unregistered ops): cumsum (tm_tensor.scan), sort with
// its indices (tm_tensor.sort), scatter_add and index_put (tm_tensor.scatter, combining and
// overwriting; random indices include out-of-range ones, which write nothing), and an exclusive
// scan from an accumulator (a log-step scan on tiny, a masked reduction on gc2). ipu-convert-tm-tensor
// rewrites them into generics, planned and simulated like any other; --check runs the same
// rewrite under the ExecutionEngine.

// CHECK: check output 0: max abs error {{.*}}: ok
// CHECK: check output 1: max abs error {{.*}}: ok
// CHECK: check output 2: max abs error {{.*}}: ok
// CHECK: check output 3: max abs error {{.*}}: ok
// CHECK: check output 4: max abs error {{.*}}: ok
// CHECK: check output 5: max abs error {{.*}}: ok
// CHECK-NOT: FAILED
// COMPILE: func.func @main({{.*}}) -> ({{.*}}) attributes {ipu.program}
// COMPILE-NOT: tm_tensor

#id = affine_map<(d0, d1) -> (d0, d1)>
"builtin.module"() ({
  "func.func"() <{function_type = (tensor<6x40xf32>, tensor<12x2xi64>, tensor<12xf32>, tensor<3xi64>, tensor<3x40xf32>, tensor<300x2xf32>, tensor<2xf32>) -> (tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x40xi64>, tensor<6x40xf32>, tensor<6x40xf32>, tensor<300x2xf32>), sym_name = "main"}> ({
  ^bb0(%x: tensor<6x40xf32>, %where: tensor<12x2xi64>, %what: tensor<12xf32>, %rows: tensor<3xi64>, %values: tensor<3x40xf32>, %long: tensor<300x2xf32>, %start: tensor<2xf32>):
    %zero = "arith.constant"() <{value = 0.000000e+00 : f32}> : () -> f32
    %e = "tensor.empty"() : () -> tensor<6x40xf32>
    %a = "tensor.empty"() : () -> tensor<6xf32>
    %sum:2 = "tm_tensor.scan"(%x, %e, %a) <{dimension = 1 : i64, inclusive = true, operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%p: f32, %q: f32):
      %s = "arith.addf"(%p, %q) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "tm_tensor.yield"(%s) : (f32) -> ()
    }) : (tensor<6x40xf32>, tensor<6x40xf32>, tensor<6xf32>) -> (tensor<6x40xf32>, tensor<6xf32>)
    %ie = "tensor.empty"() : () -> tensor<6x40xi64>
    %iota = "linalg.generic"(%ie) <{indexing_maps = [#id], iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 0, 1>}> ({
    ^bb0(%out: i64):
      %i = "linalg.index"() <{dim = 1 : i64}> : () -> index
      %c = "arith.index_cast"(%i) : (index) -> i64
      "linalg.yield"(%c) : (i64) -> ()
    }) : (tensor<6x40xi64>) -> tensor<6x40xi64>
    %sorted:2 = "tm_tensor.sort"(%x, %iota) <{dimension = 1 : i64, operandSegmentSizes = array<i32: 0, 2>}> ({
    ^bb0(%l: f32, %r: f32, %li: i64, %ri: i64):
      %le = "arith.cmpf"(%l, %r) <{fastmath = #arith.fastmath<none>, predicate = 5 : i64}> : (f32, f32) -> i1
      "tm_tensor.yield"(%le) : (i1) -> ()
    }) : (tensor<6x40xf32>, tensor<6x40xi64>) -> (tensor<6x40xf32>, tensor<6x40xi64>)
    %added = "tm_tensor.scatter"(%what, %where, %x) <{dimension_map = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}> ({
    ^bb0(%u: f32, %o: f32):
      %t = "arith.addf"(%o, %u) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "tm_tensor.yield"(%t) : (f32) -> ()
    }) : (tensor<12xf32>, tensor<12x2xi64>, tensor<6x40xf32>) -> tensor<6x40xf32>
    %rows2 = "tensor.expand_shape"(%rows) <{reassociation = [[0, 1]], static_output_shape = array<i64: 3, 1>}> : (tensor<3xi64>) -> tensor<3x1xi64>
    %values3 = "tensor.expand_shape"(%values) <{reassociation = [[0], [1, 2]], static_output_shape = array<i64: 3, 1, 40>}> : (tensor<3x40xf32>) -> tensor<3x1x40xf32>
    %put = "tm_tensor.scatter"(%values3, %rows2, %x) <{dimension_map = array<i64: 0>, operandSegmentSizes = array<i32: 2, 1>, unique_indices = true}> ({
    ^bb0(%u: f32, %o: f32):
      "tm_tensor.yield"(%u) : (f32) -> ()
    }) : (tensor<3x1x40xf32>, tensor<3x1xi64>, tensor<6x40xf32>) -> tensor<6x40xf32>
    %le = "tensor.empty"() : () -> tensor<300x2xf32>
    %ex:2 = "tm_tensor.scan"(%long, %le, %start) <{dimension = 0 : i64, inclusive = false, operandSegmentSizes = array<i32: 1, 2>}> ({
    ^bb0(%p: f32, %q: f32):
      %s = "arith.addf"(%p, %q) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
      "tm_tensor.yield"(%s) : (f32) -> ()
    }) : (tensor<300x2xf32>, tensor<300x2xf32>, tensor<2xf32>) -> (tensor<300x2xf32>, tensor<2xf32>)
    "func.return"(%sum#0, %sorted#0, %sorted#1, %added, %put, %ex#0) : (tensor<6x40xf32>, tensor<6x40xf32>, tensor<6x40xi64>, tensor<6x40xf32>, tensor<6x40xf32>, tensor<300x2xf32>) -> ()
  }) : () -> ()
}) : () -> ()
