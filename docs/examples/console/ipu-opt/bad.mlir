func.func @f(%a: i32) -> i32 {
  %c = arith.addi %a, %a : i32
  %b = arith.addi %a, %a : i64
  return %c : i32
}
