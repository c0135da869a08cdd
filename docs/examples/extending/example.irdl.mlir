// The `example` dialect of docs/extending.md: one compute op, defined in IRDL like the ipu
// dialect (`mlir-opt --irdl-file=example.irdl.mlir` parses it too).
irdl.dialect @example {
  // sum_b lhs[b] @ rhs[b]: `lhs: tensor<B x M x K>`, `rhs: tensor<B x K x N>` give
  // `result: tensor<M x N>`, accumulated in the result's element type.
  //
  // **Verified in Python** (the record's `verify`): rank-3 operands and a rank-2 result of
  // agreeing sizes; operands of one element type.
  irdl.operation @batch_reduce_matmul {
    %lhs = irdl.base "!builtin.tensor"
    %rhs = irdl.base "!builtin.tensor"
    %result = irdl.base "!builtin.tensor"
    irdl.operands(lhs: %lhs, rhs: %rhs)
    irdl.results(result: %result)
  }
}
