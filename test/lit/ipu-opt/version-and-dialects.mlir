// --version names the project's version and MLIR's; --show-dialects lists the dialects
// ipu-opt parses, upstream's and ipu.
// RUN: ipu-opt --version | FileCheck %s --check-prefix=VERSION
// RUN: ipu-opt --show-dialects | FileCheck %s --check-prefix=DIALECTS

// VERSION: ipu-opt (ipu-mlir {{[0-9]+\.[0-9]+\.[0-9]+}}, MLIR Python bindings {{[0-9.]+}})
// DIALECTS: Available Dialects: {{.*}}arith, {{.*}}func, {{.*}}ipu, {{.*}}linalg, {{.*}}scf, {{.*}}tensor, {{.*}}tosa
