// RUN: ipu-opt %s -p 'builtin.module(ipu-convert-to-ipu)' | FileCheck %s
// RUN: ipu-run %s --random-inputs 0 --check --target tiny 2>&1 | FileCheck %s --check-prefix=SIM

// torch.roll(x, (1, -2), (0, 1)) as torch-mlir exports it: each slice cast to a dynamic size
// along the joined dim, then concatenated into a static result. The casts are dropped; the
// concats take the static slices.

// CHECK-LABEL: func.func @roll
// CHECK-NOT: tensor.cast
// CHECK: tensor.concat dim(0) %{{.*}}, %{{.*}} : (tensor<1x6xf32>, tensor<3x6xf32>) -> tensor<4x6xf32>
// CHECK-NOT: tensor.cast
// CHECK: tensor.concat dim(1) %{{.*}}, %{{.*}} : (tensor<4x4xf32>, tensor<4x2xf32>) -> tensor<4x6xf32>
// SIM: check output 0: max abs error 0, max rel error 0 (rtol 0.0001): ok
func.func @roll(%arg0: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %s0 = tensor.extract_slice %arg0[3, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<1x6xf32>
  %c0 = tensor.cast %s0 : tensor<1x6xf32> to tensor<?x6xf32>
  %s1 = tensor.extract_slice %arg0[0, 0] [3, 6] [1, 1] : tensor<4x6xf32> to tensor<3x6xf32>
  %c1 = tensor.cast %s1 : tensor<3x6xf32> to tensor<?x6xf32>
  %rows = tensor.concat dim(0) %c0, %c1 : (tensor<?x6xf32>, tensor<?x6xf32>) -> tensor<4x6xf32>
  %s2 = tensor.extract_slice %rows[0, 2] [4, 4] [1, 1] : tensor<4x6xf32> to tensor<4x4xf32>
  %c2 = tensor.cast %s2 : tensor<4x4xf32> to tensor<4x?xf32>
  %s3 = tensor.extract_slice %rows[0, 0] [4, 2] [1, 1] : tensor<4x6xf32> to tensor<4x2xf32>
  %c3 = tensor.cast %s3 : tensor<4x2xf32> to tensor<4x?xf32>
  %r = tensor.concat dim(1) %c2, %c3 : (tensor<4x?xf32>, tensor<4x?xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

