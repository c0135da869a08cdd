// RUN: rm -rf %t && mkdir -p %t
// RUN: ipu-run %repo/examples/relu.mlir --random-inputs 0 --output-dir %t/out --profile %t/profile.json | FileCheck %s
// RUN: %PYTHON -c "import numpy as n; a = n.load('%t/out/output0.npy'); b = n.load('%t/out/output1.npy'); print(a.shape, a.dtype, b.shape, b.dtype, (a >= 0).all())" | FileCheck --check-prefix=OUTPUTS %s
// RUN: %PYTHON -c "import json; p = json.load(open('%t/profile.json')); print(p['summary']['cycles'], [s['kind'] for s in p['supersteps']])" | FileCheck --check-prefix=PROFILE %s
// RUN: not ipu-run %repo/examples/relu.mlir --random-inputs 0 --check --output-dir %t/none 2>&1 | FileCheck --check-prefix=L3 %s
// RUN: not ls %t/none

// The ReLU example on the tiny target: 16 tiles run the codelet (82 cycles each), tile 0
// gathers 4 floats from each other tile (240 bytes at 4 bytes per cycle; its own 4 it copies on
// the tile: 2 cycles of compute), three syncs of 40 cycles.

// CHECK:      target: tiny (16 tiles, 65,536 bytes each, 1.327 GHz)
// CHECK-NEXT: estimated time: 264 cycles = 0.199 us on device
// CHECK-NEXT: supersteps: 4
// CHECK-NEXT:   compute: 84 cycles (31.8%)
// CHECK-NEXT:   exchange: 60 cycles (22.7%)
// CHECK-NEXT:   sync: 120 cycles (45.5%)
// CHECK-NEXT: host streams: 8,448 bytes = 0.132 us over the host link
// CHECK-NEXT: exchange bytes: 240
// CHECK-NEXT: memory per tile: peak 768 bytes, mean 528.0 bytes
// CHECK-NEXT: vertices: 16
// CHECK-NEXT: edges: 32
// CHECK-NEXT: output 0: 1024 float32 -> {{.*}}out/output0.npy
// CHECK-NEXT: output 1: 64 float32 -> {{.*}}out/output1.npy

// OUTPUTS: (1024,) float32 (64,) float32 True
// PROFILE: 264 ['host', 'compute', 'exchange+compute', 'host']

// L3: ipu-run: error: --check compares with the L0 program, but '{{.*}}relu.mlir' is already an L3 ipu program: there is no L0 to run
