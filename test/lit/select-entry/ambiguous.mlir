// Two public functions and no main: `ipu-select-entry` cannot choose, and the error names both.
// RUN: not ipu-opt %s -p 'builtin.module(ipu-select-entry)' 2>&1 | FileCheck %s --check-prefix=AMBIGUOUS
// AMBIGUOUS: error: the module has 2 public functions (@a, @b): choose the entry (entry=NAME, --entry NAME)

func.func @a(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

func.func @b(%x: tensor<8xf32>) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}
