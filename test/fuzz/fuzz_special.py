"""Every element-wise arith / math op on every special value, for the differential fuzzer
(`run_fuzz.py --generator special`, `make fuzz-special`).

Not random: seed N is case N % len(CASES), one op in a `linalg.generic` over a dense constant
of special values (floats: 0, -0, +-inf, NaN, denormals, the largest finite, the smallest
normal, ordinary values; integers: 0, +-1, +-2, min, max, min + 1, max - 1, a high power of
two), binary ops over every pair (a 2-d generic reading the constant along each dim). So
`--seeds len(CASES)` sweeps them all. Where the result is undefined in MLIR (integer division by
0 or min / -1, a shift by the width or more) the operand is replaced first: division by 1, the
shift amount masked.
"""

from __future__ import annotations

from fuzz_families import _ty
from fuzz_gen import Program

FLOATS = {
    "f32": ["0.0", "-0.0", "0x7F800000", "0xFF800000", "0x7FC00000", "0x00000001", "0x80000001", "0x7F7FFFFF", "0xFF7FFFFF",
            "0x00800000", "1.0", "-1.0", "0.5", "-2.5", "3.0", "1.0e+10", "-7.0e-20"],
    "f64": ["0.0", "-0.0", "0x7FF0000000000000", "0xFFF0000000000000", "0x7FF8000000000000", "0x0000000000000001",
            "0x7FEFFFFFFFFFFFFF", "0x0010000000000000", "1.0", "-1.0", "0.5", "-2.5", "3.0", "1.0e+300", "-7.0e-300"],
}  # fmt: skip
WIDTHS = {"i8": 8, "i32": 32, "i64": 64}
FLOAT_BINARY = ("arith.addf", "arith.subf", "arith.mulf", "arith.divf", "arith.remf", "arith.maximumf", "arith.minimumf",
                "arith.maxnumf", "arith.minnumf", "math.copysign", "math.powf", "math.atan2")  # fmt: skip
FLOAT_PREDICATES = ("oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule", "une", "uno")
FLOAT_UNARY = ("math.absf", "arith.negf", "math.floor", "math.ceil", "math.round", "math.roundeven", "math.trunc",
               "math.sqrt", "math.rsqrt", "math.exp", "math.exp2", "math.expm1", "math.log", "math.log2", "math.log10",
               "math.log1p", "math.tanh", "math.sin", "math.cos", "math.tan", "math.atan", "math.erf", "math.erfc",
               "math.cbrt", "math.sinh", "math.cosh", "math.asin", "math.acos", "math.asinh", "math.acosh",
               "math.atanh", "math.isnan", "math.isinf", "math.isfinite", "math.isnormal")  # fmt: skip
INT_BINARY = ("arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.remsi", "arith.divui", "arith.remui",
              "arith.ceildivsi", "arith.floordivsi", "arith.ceildivui", "arith.shli", "arith.shrsi", "arith.shrui",
              "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.andi", "arith.ori", "arith.xori")  # fmt: skip
INT_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
INT_UNARY = ("math.ctlz", "math.cttz", "math.ctpop", "math.absi")


def integers(t: str) -> list[str]:
    bits = WIDTHS[t]
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return [str(v) for v in (0, 1, -1, 2, -2, 3, -3, 7, low, high, low + 1, high - 1, 2 ** (bits - 2), -(2 ** (bits - 2)) - 1)]


def _guarded(op: str, t: str) -> str:
    """Lines making %b a defined right operand of `op`: divisors 0 (and -1 under min) become 1,
    shift amounts are masked below the width."""
    if "div" in op or "rem" in op:
        low = integers(t)[8]
        return "\n".join(
            [
                f"    %zero = arith.constant 0 : {t}",
                f"    %minus = arith.constant -1 : {t}",
                f"    %low = arith.constant {low} : {t}",
                f"    %one = arith.constant 1 : {t}",
                f"    %by0 = arith.cmpi eq, %b, %zero : {t}",
                f"    %byminus = arith.cmpi eq, %b, %minus : {t}",
                f"    %islow = arith.cmpi eq, %a, %low : {t}",
                "    %overflow = arith.andi %byminus, %islow : i1",
                "    %bad = arith.ori %by0, %overflow : i1",
                f"    %rhs = arith.select %bad, %one, %b : {t}",
            ]
        )
    if op.startswith("arith.sh"):
        return f"    %width = arith.constant {WIDTHS[t] - 1} : {t}\n    %rhs = arith.andi %b, %width : {t}"
    return ""


def _cases() -> list[tuple[str, str, str, bool]]:
    """(element type, body lines, result type, binary) for every op."""
    cases = []
    for t in FLOATS:
        cases += [(t, f"    %y = {op} %a, %b : {t}", t, True) for op in FLOAT_BINARY]
        cases += [(t, f"    %y = arith.cmpf {p}, %a, %b : {t}", "i1", True) for p in FLOAT_PREDICATES]
        for op in FLOAT_UNARY:
            cases.append((t, f"    %y = {op} %a : {t}", "i1" if op.startswith("math.is") else t, False))
    for t in WIDTHS:
        for op in INT_BINARY:
            guard = _guarded(op, t)
            rhs = "%rhs" if guard else "%b"
            cases.append((t, (guard + "\n" if guard else "") + f"    %y = {op} %a, {rhs} : {t}", t, True))
        cases += [(t, f"    %y = arith.cmpi {p}, %a, %b : {t}", "i1", True) for p in INT_PREDICATES]
        cases += [(t, f"    %y = {op} %a : {t}", t, False) for op in INT_UNARY]
    return cases


CASES = _cases()


def generate(seed: int) -> Program:
    t, body, out_t, binary = CASES[seed % len(CASES)]
    values = FLOATS.get(t) or integers(t)
    n = len(values)
    out = (n, n) if binary else (n,)
    dims = "d0, d1" if binary else "d0"
    ins = "%d, %d" if binary else "%d"
    maps = [f"affine_map<({dims}) -> (d0)>"] + ([f"affine_map<({dims}) -> (d1)>"] if binary else [])
    maps.append(f"affine_map<({dims}) -> ({dims})>")
    iterators = ", ".join(['"parallel"'] * len(out))
    arguments = f"%a: {t}, %b: {t}, %o: {out_t}" if binary else f"%a: {t}, %o: {out_t}"
    in_types = ", ".join([_ty((n,), t)] * (2 if binary else 1))
    text = "\n".join(
        [
            'module attributes {ipu.target = "tiny"} {',
            f"func.func @main(%unused: {_ty((1,), t)}) -> {_ty(out, out_t)} {{",
            f"  %d = arith.constant dense<[{', '.join(values)}]> : {_ty((n,), t)}",
            f"  %e = tensor.empty() : {_ty(out, out_t)}",
            f"  %r = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iterators}]}} "
            f"ins({ins} : {in_types}) outs(%e : {_ty(out, out_t)}) {{",
            f"  ^bb0({arguments}):",
            body,
            f"    linalg.yield %y : {out_t}",
            f"  }} -> {_ty(out, out_t)}",
            f"  return %r : {_ty(out, out_t)}",
            "}",
            "}",
            "",
        ]
    )
    op = body.strip().splitlines()[-1].split(" = ")[1].split(" %")[0]
    return Program(seed, "tiny", t, text, [f"{t} {op}"], depth=1)


if __name__ == "__main__":
    import sys

    print(generate(int(sys.argv[1])).text)
