// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-import-tosa,ipu-convert-to-ipu)' | FileCheck %s
// RUN: ipu-opt %s --split-input-file -p 'builtin.module(ipu-import-tosa)' | FileCheck %s --check-prefix=L0

// TOSA goes through upstream's tosa-to-linalg passes (ipu-import-tosa), then the conversion.

// A small CNN: conv2d (NHWC / FHWC, padded, with bias), clamp (ReLU), max_pool2d, reshape,
// matmul, softmax-like tail.

// L0-LABEL: func.func @cnn
// L0: tensor.pad
// L0: linalg.conv_2d_nhwc_fhwc
// L0: linalg.pooling_nhwc_max
// L0: linalg.batch_matmul
// L0-NOT: tosa.

// CHECK-LABEL: func.func @cnn
// CHECK-NOT: tensor.pad
// CHECK: %[[C:.*]] = {{.}}ipu.conv"(%{{.*}}, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 1 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x8x8xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-SAME: ins(%[[C]],
// CHECK: arith.maximumf
// CHECK: {{.}}ipu.matmul"(%{{.*}}, %{{.*}}) : (tensor<1x1x16xf32>, tensor<1x16x10xf32>) -> tensor<1x1x10xf32>
// CHECK: math.exp
// CHECK-NOT: tosa.
func.func @cnn(%x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %fc: tensor<1x16x10xf32>) -> tensor<1x10xf32> {
  %b = "tosa.const"() <{values = dense<[0.1, 0.2, 0.3, 0.4]> : tensor<4xf32>}> : () -> tensor<4xf32>
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %c = tosa.conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x8x8x4xf32>
  %r = tosa.clamp %c {min_val = 0.0 : f32, max_val = 3.4e38 : f32} : (tensor<1x8x8x4xf32>) -> tensor<1x8x8x4xf32>
  %p = tosa.max_pool2d %r {kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>) -> tensor<1x4x4x4xf32>
  %a = tosa.avg_pool2d %p, %zp, %zp {acc_type = f32, kernel = array<i64: 2, 2>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 2, 2>} : (tensor<1x4x4x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x2x2x4xf32>
  %s = tosa.const_shape {values = dense<[1, 1, 16]> : tensor<3xindex>} : () -> !tosa.shape<3>
  %f = tosa.reshape %a, %s : (tensor<1x2x2x4xf32>, !tosa.shape<3>) -> tensor<1x1x16xf32>
  %m = tosa.matmul %f, %fc, %zp, %zp : (tensor<1x1x16xf32>, tensor<1x16x10xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x1x10xf32>
  %s2 = tosa.const_shape {values = dense<[1, 10]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %o = tosa.reshape %m, %s2 : (tensor<1x1x10xf32>, !tosa.shape<2>) -> tensor<1x10xf32>
  %e = tosa.exp %o : (tensor<1x10xf32>) -> tensor<1x10xf32>
  %sum = tosa.reduce_sum %e {axis = 1 : i32} : (tensor<1x10xf32>) -> tensor<1x1xf32>
  %rc = tosa.reciprocal %sum : (tensor<1x1xf32>) -> tensor<1x1xf32>
  %shift = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %sm = tosa.mul %e, %rc, %shift : (tensor<1x10xf32>, tensor<1x1xf32>, tensor<1xi8>) -> tensor<1x10xf32>
  return %sm : tensor<1x10xf32>
}

// -----

// depthwise_conv2d (KH x KW x C x M weights): a grouped ipu.conv, bias added after it.

// L0-LABEL: func.func @depthwise
// L0: linalg.depthwise_conv_2d_nhwc_hwcm

// CHECK-LABEL: func.func @depthwise
// CHECK: {{.}}ipu.conv"(%{{.*}}, %{{.*}}) {dilations = array<i64: 1, 1>, groups = 4 : i64, padding = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x4x6x6xf32>, tensor<8x1x3x3xf32>) -> tensor<1x8x6x6xf32>
// CHECK: arith.addf
// CHECK: return %{{.*}} : tensor<1x6x6x8xf32>
func.func @depthwise(%x: tensor<1x6x6x4xf32>, %w: tensor<3x3x4x2xf32>, %b: tensor<8xf32>) -> tensor<1x6x6x8xf32> {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  %y = tosa.depthwise_conv2d %x, %w, %b, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 1, 1, 1, 1>, stride = array<i64: 1, 1>} : (tensor<1x6x6x4xf32>, tensor<3x3x4x2xf32>, tensor<8xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x8xf32>
  return %y : tensor<1x6x6x8xf32>
}

// -----

// i8 matmul accumulating in i32, zero points 0.

// CHECK-LABEL: func.func @matmul_i8
// CHECK-NEXT: %[[P:.*]] = {{.}}ipu.matmul"(%arg0, %arg1) : (tensor<2x4x8xi8>, tensor<2x8x16xi8>) -> tensor<2x4x16xi32>
// CHECK-NEXT: return %[[P]]
func.func @matmul_i8(%a: tensor<2x4x8xi8>, %b: tensor<2x8x16xi8>) -> tensor<2x4x16xi32> {
  %zp = "tosa.const"() <{values = dense<0> : tensor<1xi8>}> : () -> tensor<1xi8>
  %y = tosa.matmul %a, %b, %zp, %zp : (tensor<2x4x8xi8>, tensor<2x8x16xi8>, tensor<1xi8>, tensor<1xi8>) -> tensor<2x4x16xi32>
  return %y : tensor<2x4x16xi32>
}

// -----

// Slices, concatenation and transposes become tensor ops and generics. (tosa-to-tensor
// inserts the pieces of a concat into a tensor.empty; they become a tensor.concat again.)

// L0-LABEL: func.func @data_movement
// L0: tensor.empty() : tensor<4x8xf32>
// L0: tensor.insert_slice
// L0: tensor.insert_slice

// CHECK-LABEL: func.func @data_movement
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 1] [4, 3] [1, 1]
// CHECK: %[[C:.*]] = tensor.concat dim(1) %arg0, %[[S]] : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
// CHECK: tensor.extract_slice %[[C]][0, 0] [4, 7] [1, 1]
// CHECK: linalg.generic
// CHECK-SAME: outs(%{{.*}} : tensor<7x4xf32>)
func.func @data_movement(%x: tensor<4x5xf32>) -> tensor<7x4xf32> {
  %start = tosa.const_shape {values = dense<[0, 1]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size = tosa.const_shape {values = dense<[4, 3]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %s = tosa.slice %x, %start, %size : (tensor<4x5xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<4x3xf32>
  %c = tosa.concat %x, %s {axis = 1 : i32} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<4x8xf32>
  %start2 = tosa.const_shape {values = dense<[0, 0]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %size2 = tosa.const_shape {values = dense<[4, 7]> : tensor<2xindex>} : () -> !tosa.shape<2>
  %c7 = tosa.slice %c, %start2, %size2 : (tensor<4x8xf32>, !tosa.shape<2>, !tosa.shape<2>) -> tensor<4x7xf32>
  %t = tosa.transpose %c7 {perms = array<i32: 1, 0>} : (tensor<4x7xf32>) -> tensor<7x4xf32>
  return %t : tensor<7x4xf32>
}
