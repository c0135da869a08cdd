// RUN: ipu-opt %s --load-pass-plugin=%S/Inputs/check_tensor_sizes.py -p 'ipu-set-target{target=tiny},example-check-tensor-sizes' | FileCheck %s
// RUN: ipu-opt %s --load-pass-plugin=%S/Inputs/check_tensor_sizes.py -p 'ipu-set-target{target=tiny},example-check-tensor-sizes{fraction=0.5}' --verify-diagnostics

// CHECK: func.func @repeat
// CHECK-SAME: attributes {{[{]}}example.largest_tensor_bytes = 1048576 : i64}
func.func @repeat(%x: tensor<256x256xf32>) -> tensor<1024x256xf32> {
  // expected-error@+1 {{result of 1048576 bytes exceeds 0.5 of tiny's memory}}
  %y = tensor.concat dim(0) %x, %x, %x, %x : (tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<1024x256xf32>
  return %y : tensor<1024x256xf32>
}
