// RUN: ipu-run %s --target tiny --random-inputs 3 --check | FileCheck %s

// TOSA 1.0 ops that no other lit file runs, through upstream's tosa-to-linalg, compiled,
// simulated and compared with the ExecutionEngine: tosa.pad (whose lowering pads by SSA
// constants: lowering/static_pads.py), tile, reverse, gather, matmul with its zero points,
// broadcasting add and sub, maximum, sigmoid, tanh, erf, rsqrt, log, pow, greater, select
// and casts to integers.

// CHECK-COUNT-12: check output {{[0-9]+}}: max abs error {{.*}}: ok
// CHECK-NOT: FAILED

func.func @main(%a: tensor<3x4xf32>, %b: tensor<1x4xf32>, %v: tensor<2x7x3xf32>, %m: tensor<2x3x5xf32>)
    -> (tensor<6x5xf32>, tensor<6x12xf32>, tensor<3x4xf32>, tensor<2x4x3xf32>, tensor<2x4x5xf32>, tensor<3x4xf32>,
        tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xi32>) {
  %shape = tosa.const_shape {values = dense<[1, 2, 0, 1]> : tensor<4xindex>} : () -> !tosa.shape<4>
  %pad_value = "tosa.const"() {values = dense<3.5> : tensor<1xf32>} : () -> tensor<1xf32>
  %padded = tosa.pad %a, %shape, %pad_value : (tensor<3x4xf32>, !tosa.shape<4>, tensor<1xf32>) -> tensor<6x5xf32>
  %multiples = tosa.const_shape {values = dense<[2, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %tiled = tosa.tile %a, %multiples : (tensor<3x4xf32>, !tosa.shape<2>) -> tensor<6x12xf32>
  %reversed = tosa.reverse %a {axis = 1 : i32} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %indices = "tosa.const"() {values = dense<[[0, 6, 2, 2], [5, 1, 0, 3]]> : tensor<2x4xi32>} : () -> tensor<2x4xi32>
  %gathered = tosa.gather %v, %indices : (tensor<2x7x3xf32>, tensor<2x4xi32>) -> tensor<2x4x3xf32>
  %zp = "tosa.const"() {values = dense<0.0> : tensor<1xf32>} : () -> tensor<1xf32>
  %product = tosa.matmul %gathered, %m, %zp, %zp : (tensor<2x4x3xf32>, tensor<2x3x5xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x4x5xf32>
  %sum = tosa.add %a, %b : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %larger = tosa.maximum %sum, %a : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %difference = tosa.sub %larger, %b : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xf32>
  %sigmoid = tosa.sigmoid %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %tanh = tosa.tanh %difference : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %erf = tosa.erf %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %magnitude = tosa.abs %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %rsqrt = tosa.rsqrt %magnitude : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %log = tosa.log %magnitude : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %power = tosa.pow %magnitude, %sigmoid : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %greater = tosa.greater %a, %b : (tensor<3x4xf32>, tensor<1x4xf32>) -> tensor<3x4xi1>
  %selected = tosa.select %greater, %log, %power : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %scale = "tosa.const"() {values = dense<50.0> : tensor<1x1xf32>} : () -> tensor<1x1xf32>
  %shift = "tosa.const"() {values = dense<0> : tensor<1xi8>} : () -> tensor<1xi8>
  %scaled = tosa.mul %a, %scale, %shift : (tensor<3x4xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<3x4xf32>
  %integers = tosa.cast %scaled : (tensor<3x4xf32>) -> tensor<3x4xi32>
  return %padded, %tiled, %reversed, %gathered, %product, %tanh, %erf, %rsqrt, %selected, %power, %greater, %integers
    : tensor<6x5xf32>, tensor<6x12xf32>, tensor<3x4xf32>, tensor<2x4x3xf32>, tensor<2x4x5xf32>, tensor<3x4xf32>,
      tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xi1>, tensor<3x4xi32>
}
