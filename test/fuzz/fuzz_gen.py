"""Seeded random L0 programs in the subset the default pipeline accepts, for the differential fuzzer.

`generate(seed)` returns a `Program`: MLIR text (one function `@main`, module attribute
`ipu.target`: `tiny` 76 %, `gc2` 12 %, `gc200` 12 %), the target, and what the harness needs
(the kinds of op it holds, the longest chain of summed terms, the index arguments' ranges).
The same seed always gives the same text.

Coverage (each program chains one to six of these, on values of one element type, f32 / f16 /
f64 / i32 / i8 / i64, with i1 masks and i64 indices beside; a f16 matmul may accumulate into
f32, an i8 one into i32):

- named ops: `linalg.matmul`, `batch_matmul`, `matvec`, `vecmat`, `dot`, `conv_2d_nchw_fchw`,
  `conv_2d_nhwc_hwcf`, `conv_2d_nhwc_fhwc`, grouped `conv_2d_ngchw_gfchw` / `_fgchw`,
  `depthwise_conv_2d_nchw_chw` / `_nhwc_hwc` / `_nhwc_hwcm` (strides, dilations, inputs padded
  by `tensor.pad`), `pooling_nchw_max` / `nhwc_max` / `nhwc_min` / `nchw_sum` / `nhwc_sum`,
  `linalg.transpose`, `broadcast`, `reduce`, element-wise `add` / `sub` / `mul` / `max` /
  `min` / `exp` / `abs` / `negf`; arith / math on whole tensors and casts there and back;
- `linalg.generic`: element-wise with one to three inputs read through identity, permuted and
  broadcast maps (dropped dims and constant-0 dims), bodies of random arith / math trees with
  scalar constants, `linalg.index` read in the body, two results; reductions with parallel and
  reduction iterators interleaved, permuted input and output maps, an optional second
  (broadcast) operand multiplied in, an initial value that is a fill of the combiner's
  identity or a tensor argument, and non-associative combiners (`acc - x`, `x - acc`,
  `acc / (|x| + 1)`); window maps (an unfold `a[d0 + d1]`, shifted stencils `a[d0 + s]`, or
  stencils on `extract_slice` windows); arg-max / arg-min (the index result reading the value's
  accumulator, positions from a constant iota or `linalg.index`); i1 masks (comparisons,
  selects by them, any / all / parity reductions, i1 arguments);
- gathers: embedding rows (`tensor.extract %table[%id, linalg.index]`) and `tensor.extract`
  at coordinates read from i64 arguments, drawn in range by the harness;
- torch-mlir's TMTensor ops in generic form: `tm_tensor.scatter` (rows or points, adding or
  overwriting, indices one past each end), `scan` (inclusive or exclusive, the combiners of
  `SCAN_COMBINERS`), `sort` (ascending or descending, with iota positions) and topk (a sort
  read through slices of its first k);
- TOSA (f32 / i32): `add`, `sub`, `maximum`, `minimum`, `mul` (broadcasting), `clamp`, `tanh`,
  `exp`, `abs`, `reduce_sum`, `reduce_max`, `transpose`, `reshape`, `matmul`;
- tensor ops: `extract_slice` (also rank-reducing and strided), `insert_slice` (also strided
  and several covering an empty tensor), `pad` with a constant, `expand_shape` /
  `collapse_shape`, `concat`, dense constants;
- `scf.for` with 0 to 5 trips carrying one tensor through one to three of the makers above;
- odd signatures: a value or an argument returned (twice, as it is), arguments never read;
- shapes from a pool of awkward sizes: 1, primes, sizes just over a power of two and over the
  planner's grain of 64 elements a tile; on gc2 / gc200 also just over their tile counts; now
  and then tensors near the tiny target's memory, which the planner must cut serially.

Floats stay finite by construction: division is by `|y| + 1`, `sqrt` and `log1p` take `|x|`,
`exp` and `sin` take `tanh(x)` (an f16 rounding of a large argument would change them by more
than any tolerance). Integer ops wrap (no overflow flags), shifts and divisions use small
constants (never by 0 or -1), so both sides have one defined answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

from fuzz_families import Families, Value, _map, _numel, _ty
from fuzz_torch import TorchFamilies

TYPES = ("f32", "f16", "i32", "i8", "f64", "i64")
TYPE_WEIGHTS = (4, 2, 3, 2, 1, 1)
TARGETS = ("tiny", "gc2", "gc200")
TARGET_WEIGHTS = (76, 12, 12)
# Awkward extents: 1, primes, just over powers of two; weighted toward small ones.
DIMS = (1, 1, 2, 3, 3, 4, 5, 5, 7, 8, 9, 11, 13, 16, 17, 31, 33, 65)
# On gc200 (1,472 tiles) also sizes just over its tile count and over a tile grain multiple.
BIG_DIMS = (129, 257, 1473, 1537)
LARGE_DIMS = (127, 257, 300, 511, 700, 1025, 4099)
HEX = {
    "f16": {"0xFC00": "-inf", "0x7C00": "inf"},
    "f32": {"0xFF800000": "-inf", "0x7F800000": "inf"},
    "f64": {"0xFFF0000000000000": "-inf", "0x7FF0000000000000": "inf"},
}
HEX = {t: {**m, **{v: k for k, v in m.items()}} for t, m in HEX.items()}
NEG_INF = {"f32": "0xFF800000", "f16": "0xFC00", "f64": "0xFFF0000000000000"}
INT_MIN = {"i32": "-2147483648", "i8": "-128", "i64": "-9223372036854775808"}
INT_MAX = {"i32": "2147483647", "i8": "127", "i64": "9223372036854775807"}


@dataclass
class Program:
    seed: int
    target: str
    dtype: str
    text: str
    kinds: list[str] = field(default_factory=list)
    max_sum: int = 1  # the longest sum (reduction / contraction length) on any path, multiplied along chains
    depth: int = 0  # ops in the program
    index_ranges: dict[int, tuple[int, int]] = field(default_factory=dict)  # argument -> [low, high) of its values

    def f32_twin(self) -> str:
        """The same program in wider precision, for a f16 program's reference: f16 becomes f32 and
        f32 (a f16 matmul's accumulator, a cast's intermediate) becomes f64."""
        text = self.text
        for narrow, wide in (("f32", "f64"), ("f16", "f32")):  # f32 first: a f16 program's casts to f32 go to f64
            for bits, value in HEX[narrow].items():
                if bits.startswith("0x"):
                    text = text.replace(f"{bits} : {narrow}", f"{HEX[wide][value]} : {wide}")
            text = text.replace(f"x{narrow}>", f"x{wide}>").replace(f": {narrow}", f": {wide}").replace(f"<{narrow}>", f"<{wide}>")
            text = text.replace(f" {narrow}", f" {wide}").replace(f"({narrow}", f"({wide}")
        assert not re.search(r"\b0x[0-9A-F]+ : f16\b", text), "a f16 bit pattern left in the f32 twin"
        return text


class Gen(Families, TorchFamilies):
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.target = self.rng.choices(TARGETS, TARGET_WEIGHTS)[0]
        self.dtype = self.rng.choices(TYPES, TYPE_WEIGHTS)[0]
        self.is_float = self.dtype.startswith("f")
        self.args: list[Value] = []
        self.lines: list[str] = []
        self.values: list[Value] = []
        self.kinds: list[str] = []
        self.count = 0
        self.index_ranges: dict[int, tuple[int, int]] = {}
        self.in_loop = False
        self.budget = 4096 if self.target == "tiny" else 20000  # elements per tensor
        # Sometimes large: tensors near the tiny target's memory (16 tiles x 64 KiB), which the
        # planner must cut into serial pieces, and long reductions cut across tiles.
        self.big = self.rng.random() < 0.06
        if self.big:
            self.budget = 120000

    # -- helpers -------------------------------------------------------------------------
    def fresh(self, prefix="v"):
        self.count += 1
        return f"%{prefix}{self.count}"

    def dim(self, small=False):
        if not small and self.big and self.rng.random() < 0.5:
            return self.rng.choice(LARGE_DIMS)
        if not small and self.target != "tiny" and self.rng.random() < 0.15:
            return self.rng.choice(BIG_DIMS)
        return self.rng.choice(DIMS[:12] if small else DIMS)

    def fitting_dim(self, other):
        """A dim n with other x n within the budget."""
        n = self.dim()
        while n * other > self.budget and n > 1:
            n = self.dim(small=True) if n > 17 else 1
        return n

    def shape(self, rank, small=False):
        while True:
            shape = tuple(self.dim(small) for _ in range(rank))
            if _numel(shape) <= self.budget:
                return shape

    def arg(self, shape, dtype=None):
        value = Value(f"%arg{len(self.args)}", tuple(shape), dtype or self.dtype)
        self.args.append(value)
        return value

    def operand(self, shape, dtype=None):
        """An existing value of this shape and type (often), else a new argument."""
        dtype = dtype or self.dtype
        same = [v for v in self.values if v.shape == tuple(shape) and v.dtype == dtype]
        if same and self.rng.random() < 0.7:
            return self.rng.choice(same)
        if self.rng.random() < 0.1 and _numel(shape) <= 64:
            return self.dense(shape, dtype)
        return self.arg(shape, dtype)

    def dense(self, shape, dtype):
        """An `arith.constant dense<...>` tensor: a splat or explicit small values."""
        name = self.fresh("d")
        if self.rng.random() < 0.5:
            text = f"dense<{self.scalar(dtype)}>"
        else:
            values = [self.scalar(dtype) for _ in range(_numel(shape))]

            def nest(level, flat):
                if level == len(shape):
                    return flat.pop(0)
                return "[" + ", ".join(nest(level + 1, flat) for _ in range(shape[level])) + "]"

            text = f"dense<{nest(0, values)}>"
        self.emit(f"{name} = arith.constant {text} : {_ty(shape, dtype)}")
        self.kinds.append("dense-constant")
        return Value(name, tuple(shape), dtype)

    def source(self, ranks, check=None):
        """A value to work on: the newest one of a fitting rank (mostly), else a new argument."""
        fits = [v for v in self.values if len(v.shape) in ranks and v.dtype == self.dtype and (check is None or check(v.shape))]
        if fits and self.rng.random() < 0.8:
            return fits[-1] if self.rng.random() < 0.7 else self.rng.choice(fits)
        while True:
            shape = self.shape(self.rng.choice(ranks))
            if check is None or check(shape):
                return self.arg(shape)

    def emit(self, line):
        self.lines.append("  " + line)

    def result(self, name, shape, dtype=None, sums=1):
        value = Value(name, tuple(shape), dtype or self.dtype, sums)
        self.values.append(value)
        return value

    def const(self, text, dtype=None):
        name = self.fresh("c")
        self.emit(f"{name} = arith.constant {text} : {dtype or self.dtype}")
        return name

    def scalar(self, dtype=None):
        dtype = dtype or self.dtype
        if dtype.startswith("f"):
            return self.rng.choice(["0.0", "1.0", "-0.5", "2.5", "0.125", "-3.0"])
        return str(self.rng.choice([0, 1, -1, 3, -7, 5]))

    def filled(self, shape, value_text, dtype=None):
        dtype = dtype or self.dtype
        c = self.const(value_text, dtype)
        e, f = self.fresh("e"), self.fresh("f")
        self.emit(f"{e} = tensor.empty() : {_ty(shape, dtype)}")
        self.emit(f"{f} = linalg.fill ins({c} : {dtype}) outs({e} : {_ty(shape, dtype)}) -> {_ty(shape, dtype)}")
        return f

    # -- scalar bodies ---------------------------------------------------------------------
    def body(self, ins: list[str], dtype: str, ops: int, prefix: str = "t") -> tuple[list[str], str]:
        """Lines of a random scalar computation of `ins`; returns (lines, result)."""
        rng, lines, pool = self.rng, [], list(ins)
        counter = [0]

        def new():
            counter[0] += 1
            return f"%{prefix}{counter[0]}"

        def emit(expr):
            name = new()
            lines.append(f"    {name} = {expr}")
            return name

        for _ in range(ops):
            a, b = rng.choice(pool), rng.choice(pool)
            if dtype.startswith("f"):
                kind = rng.choice(
                    [
                        "addf",
                        "subf",
                        "mulf",
                        "maximumf",
                        "minimumf",
                        "div",
                        "neg",
                        "abs",
                        "tanh",
                        "exp",
                        "sqrt",
                        "log1p",
                        "select",
                        "const",
                        "sin",
                    ]
                )
                if kind in ("addf", "subf", "mulf", "maximumf", "minimumf"):
                    out = emit(f"arith.{kind} {a}, {b} : {dtype}")
                elif kind == "div":
                    ab = emit(f"math.absf {b} : {dtype}")
                    one = emit(f"arith.constant 1.0 : {dtype}")
                    den = emit(f"arith.addf {ab}, {one} : {dtype}")
                    out = emit(f"arith.divf {a}, {den} : {dtype}")
                elif kind == "neg":
                    out = emit(f"arith.negf {a} : {dtype}")
                elif kind in ("abs", "tanh"):
                    out = emit(f"math.{ {'abs': 'absf'}.get(kind, kind) } {a} : {dtype}")
                elif kind == "sin":  # of a bounded value: sin(x * x) of a large x amplifies f16 rounding (seed 10752)
                    t = emit(f"math.tanh {a} : {dtype}")
                    out = emit(f"math.sin {t} : {dtype}")
                elif kind == "exp":
                    t = emit(f"math.tanh {a} : {dtype}")
                    out = emit(f"math.exp {t} : {dtype}")
                elif kind in ("sqrt", "log1p"):
                    ab = emit(f"math.absf {a} : {dtype}")
                    out = emit(f"math.{kind} {ab} : {dtype}")
                elif kind == "select":
                    pred = rng.choice(["ogt", "olt", "oge", "ule"])
                    cond = emit(f"arith.cmpf {pred}, {a}, {b} : {dtype}")
                    out = emit(f"arith.select {cond}, {a}, {b} : {dtype}")
                else:
                    c = emit(f"arith.constant {self.scalar(dtype)} : {dtype}")
                    out = emit(f"arith.{rng.choice(['addf', 'mulf', 'maximumf'])} {a}, {c} : {dtype}")
            else:
                kind = rng.choice(
                    [
                        "addi",
                        "subi",
                        "muli",
                        "maxsi",
                        "minsi",
                        "andi",
                        "ori",
                        "xori",
                        "shli",
                        "shrsi",
                        "divsi",
                        "remsi",
                        "select",
                        "const",
                        "maxui",
                        "minui",
                        "shrui",
                        "divui",
                        "remui",
                        "uselect",
                    ]
                )
                if kind in ("addi", "subi", "muli", "maxsi", "minsi", "andi", "ori", "xori", "maxui", "minui"):
                    out = emit(f"arith.{kind} {a}, {b} : {dtype}")
                elif kind in ("shli", "shrsi", "shrui"):
                    c = emit(f"arith.constant {rng.randint(1, 3)} : {dtype}")
                    out = emit(f"arith.{kind} {a}, {c} : {dtype}")
                elif kind in ("divsi", "remsi", "divui", "remui"):
                    c = emit(f"arith.constant {rng.choice([2, 3, -3, 5, 7])} : {dtype}")
                    out = emit(f"arith.{kind} {a}, {c} : {dtype}")
                elif kind == "uselect":
                    cond = emit(f"arith.cmpi {rng.choice(['ult', 'uge'])}, {a}, {b} : {dtype}")
                    out = emit(f"arith.select {cond}, {a}, {b} : {dtype}")
                elif kind == "select":
                    pred = rng.choice(["sgt", "slt", "eq", "ne", "sle"])
                    cond = emit(f"arith.cmpi {pred}, {a}, {b} : {dtype}")
                    out = emit(f"arith.select {cond}, {a}, {b} : {dtype}")
                else:
                    c = emit(f"arith.constant {self.scalar(dtype)} : {dtype}")
                    out = emit(f"arith.{rng.choice(['addi', 'muli', 'maxsi'])} {a}, {c} : {dtype}")
            pool.append(out)
        return lines, pool[-1]

    # -- op generators ---------------------------------------------------------------------
    def elementwise(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4))
        shape = src.shape
        n = len(shape)
        operands = [(src, _map(n, [f"d{i}" for i in range(n)]))]
        for _ in range(rng.randint(0, 2)):
            style = rng.choice(["same", "perm", "bcast", "zero"])
            if style == "perm" and n > 1:
                perm = list(range(n))
                rng.shuffle(perm)
                v = self.operand(tuple(shape[p] for p in perm))
                operands.append((v, _map(n, [f"d{p}" for p in perm])))
            elif style == "bcast" and n > 1:
                keep = sorted(rng.sample(range(n), rng.randint(0, n - 1)))
                v = self.operand(tuple(shape[k] for k in keep))
                operands.append((v, _map(n, [f"d{k}" for k in keep])))
            elif style == "zero":
                exprs = [("0" if rng.random() < 0.5 else f"d{i}") for i in range(n)]
                v = self.operand(tuple(1 if e == "0" else shape[i] for i, e in enumerate(exprs)))
                operands.append((v, _map(n, exprs)))
            else:
                operands.append((self.operand(shape), _map(n, [f"d{i}" for i in range(n)])))
        if rng.random() < 0.3:
            rng.shuffle(operands)
        ins = [f"%in{i}" for i in range(len(operands))]
        reads_init = rng.random() < 0.15
        lines, out = self.body(ins + (["%out"] if reads_init else []), self.dtype, rng.randint(1, 4))
        if reads_init:  # the init is an input too: `outs` of a tensor with values
            init = self.operand(shape).name
            self.kinds.append("generic-reads-init")
        else:
            init = self.fresh("e")
            self.emit(f"{init} = tensor.empty() : {_ty(shape, self.dtype)}")
        name = self.fresh()
        maps = ", ".join(m for _, m in operands) + ", " + _map(n, [f"d{i}" for i in range(n)])
        parallel = ", ".join(['"parallel"'] * n)
        args = ", ".join(f"{a}: {self.dtype}" for a in ins)
        self.emit(
            f"{name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{parallel}]}} "
            f"ins({', '.join(v.name for v, _ in operands)} : {', '.join(_ty(v.shape, v.dtype) for v, _ in operands)}) "
            f"outs({init} : {_ty(shape, self.dtype)}) {{"
        )
        self.lines.append(f"  ^bb0({args}, %out: {self.dtype}):")
        self.lines.extend(lines)
        self.lines.append(f"    linalg.yield {out} : {self.dtype}")
        self.emit(f"}} -> {_ty(shape, self.dtype)}")
        self.kinds.append("generic-elementwise")
        return self.result(name, shape, sums=max(v.sums for v, _ in operands))

    def reduction(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4))
        n = len(src.shape)
        # loops: a permutation of the source dims
        perm = list(range(n))
        rng.shuffle(perm)
        loop_extent = [src.shape[p] for p in perm]
        red = set(rng.sample(range(n), rng.randint(1, n)))
        par = [i for i in range(n) if i not in red]
        if len(par) > 1 and rng.random() < 0.5:
            rng.shuffle(par)
        out_shape = tuple(loop_extent[i] for i in par)
        in_exprs = [None] * n
        for loop, d in enumerate(perm):
            in_exprs[d] = f"d{loop}"
        maps = [_map(n, in_exprs)]
        operands = [src]
        second = None
        if rng.random() < 0.35:  # a broadcast weight over a subset of the loops, multiplied in
            keep = sorted(rng.sample(range(n), rng.randint(1, n)))
            second = self.operand(tuple(loop_extent[k] for k in keep))
            operands.append(second)
            maps.append(_map(n, [f"d{k}" for k in keep]))
        maps.append(_map(n, [f"d{i}" for i in par]))
        if self.is_float:
            combiner = rng.choice(["addf", "addf", "maximumf", "minimumf", "mulf"] if len(red) == 1 else ["addf", "maximumf"])
            identity = {
                "addf": "0.0",
                "mulf": "1.0",
                "maximumf": NEG_INF[self.dtype],
                "minimumf": HEX[self.dtype]["inf"],
            }[combiner]
        else:
            combiner = rng.choice(["addi", "addi", "maxsi", "minsi", "xori", "ori", "andi"])
            identity = {"addi": "0", "maxsi": INT_MIN[self.dtype], "minsi": INT_MAX[self.dtype], "xori": "0", "ori": "0", "andi": "-1"}[
                combiner
            ]
        if rng.random() < 0.35:
            init = self.operand(out_shape).name
        else:
            init = self.filled(out_shape, identity)
        ins = [f"%in{i}" for i in range(len(operands))]
        pre_lines, pre = self.body(ins, self.dtype, rng.randint(0, 2)) if rng.random() < 0.5 else ([], ins[0])
        lines = list(pre_lines)
        term = pre
        if second is not None:
            lines.append(f"    %w = arith.{'mulf' if self.is_float else 'muli'} {term}, %in1 : {self.dtype}")
            term = "%w"
        lines.append(f"    %r = arith.{combiner} {term}, %acc : {self.dtype}")
        name = self.fresh()
        iters = ", ".join('"reduction"' if i in red else '"parallel"' for i in range(n))
        self.emit(
            f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [{iters}]}} "
            f"ins({', '.join(v.name for v in operands)} : {', '.join(_ty(v.shape, v.dtype) for v in operands)}) "
            f"outs({init} : {_ty(out_shape, self.dtype)}) {{"
        )
        self.lines.append(f"  ^bb0({', '.join(f'{a}: {self.dtype}' for a in ins)}, %acc: {self.dtype}):")
        self.lines.extend(lines)
        self.lines.append(f"    linalg.yield %r : {self.dtype}")
        self.emit(f"}} -> {_ty(out_shape, self.dtype)}")
        self.kinds.append(f"generic-reduction-{combiner}")
        length = _numel([loop_extent[i] for i in red]) if combiner in ("addf", "addi") else 1
        return self.result(name, out_shape, sums=max(v.sums for v in operands) * length + (1 if combiner == "addf" else 0))

    def _acc(self, shape):
        """The output operand of a contraction: zeros, or a tensor to accumulate into."""
        if self.rng.random() < 0.3:
            return self.operand(shape, self.out_dtype).name
        return self.filled(shape, "0.0" if self.out_dtype.startswith("f") else "0", self.out_dtype)

    def matmul(self):
        rng = self.rng
        kind = rng.choice(["matmul", "matmul", "batch_matmul", "matvec", "vecmat", "dot"])
        wider = {"f16": "f32", "i8": "i32"}.get(self.dtype)
        self.out_dtype = wider if wider and rng.random() < 0.3 else self.dtype
        if kind == "matmul":
            a = self.source((2,), lambda s: _numel(s) * 33 <= self.budget * 8)
            m, k = a.shape
            b = self.operand((k, self.fitting_dim(k)))
            out = (m, b.shape[1])
        elif kind == "batch_matmul":
            a = self.source((3,), lambda s: _numel(s) * 17 <= self.budget * 8)
            bs, m, k = a.shape
            b = self.operand((bs, k, self.dim(small=True)))
            out = (bs, m, b.shape[2])
        elif kind == "matvec":
            a = self.source((2,))
            m, k = a.shape
            b = self.operand((k,))
            out = (m,)
        elif kind == "vecmat":
            a = self.source((1,))
            (k,) = a.shape
            b = self.operand((k, self.fitting_dim(k)))
            out = (b.shape[1],)
        else:
            a = self.source((1,))
            b = self.operand(a.shape)
            out = ()
        if _numel(out) > self.budget:
            return self.elementwise()
        acc = self._acc(out)
        name = self.fresh()
        self.emit(
            f"{name} = linalg.{kind} ins({a.name}, {b.name} : {_ty(a.shape, a.dtype)}, {_ty(b.shape, b.dtype)}) "
            f"outs({acc} : {_ty(out, self.out_dtype)}) -> {_ty(out, self.out_dtype)}"
        )
        self.kinds.append(kind + (f"-{self.dtype}-{self.out_dtype}" if self.out_dtype != self.dtype else ""))
        return self.result(name, out, self.out_dtype, sums=max(a.sums, b.sums) * a.shape[-1] + 1)

    def _window(self, size):
        """(kernel, stride, dilation) with an output of at least 1 along an input of `size`."""
        rng = self.rng
        while True:
            kernel, stride, dilation = rng.choice([1, 2, 3, 3, 5]), rng.choice([1, 1, 2, 3]), rng.choice([1, 1, 2])
            if dilation * (kernel - 1) + 1 <= size:
                return kernel, stride, dilation, (size - dilation * (kernel - 1) - 1) // stride + 1

    def conv(self):
        rng = self.rng
        kind = rng.choice(
            [
                "conv_2d_nchw_fchw",
                "conv_2d_nhwc_hwcf",
                "depthwise_conv_2d_nchw_chw",
                "depthwise_conv_2d_nhwc_hwc",
                "pooling_nchw_max",
                "pooling_nhwc_max",
                "pooling_nchw_sum",
                "pooling_nhwc_sum",
                "pooling_nhwc_min",
            ]
        )
        nchw = "nchw" in kind
        self.out_dtype = self.dtype
        x = self.source((4,), lambda s: min(s[2:] if nchw else s[1:3]) >= 2 and _numel(s) <= 3000)
        if nchw:
            n, c, h, w = x.shape
        else:
            n, h, w, c = x.shape
        kh, sh, dh, oh = self._window(h)
        kw, sw, dw, ow = self._window(w)
        attrs = f"{{dilations = dense<[{dh}, {dw}]> : tensor<2xi64>, strides = dense<[{sh}, {sw}]> : tensor<2xi64>}}"
        if kind.startswith("conv"):
            f = rng.choice([1, 2, 3, 4, 5, 8])
            wshape = (f, c, kh, kw) if nchw else (kh, kw, c, f)
            out = (n, f, oh, ow) if nchw else (n, oh, ow, f)
        elif kind.startswith("depthwise"):
            wshape = (c, kh, kw) if nchw else (kh, kw, c)
            out = (n, c, oh, ow) if nchw else (n, oh, ow, c)
        else:
            wshape = (kh, kw)
            out = (n, c, oh, ow) if nchw else (n, oh, ow, c)
        if kind.startswith("pooling"):
            weight = self.fresh("k")
            self.emit(f"{weight} = tensor.empty() : {_ty(wshape, self.dtype)}")
            if kind.endswith("max"):
                init = self.filled(out, NEG_INF[self.dtype] if self.is_float else INT_MIN[self.dtype])
            elif kind.endswith("min"):
                init = self.filled(out, HEX[self.dtype]["inf"] if self.is_float else INT_MAX[self.dtype])
            else:
                init = self._acc(out)
            sums = x.sums * (kh * kw if kind.endswith("sum") else 1)
        else:
            weight = self.operand(wshape).name
            init = self._acc(out)
            sums = x.sums * kh * kw * (c if kind.startswith("conv") else 1) + 1
        name = self.fresh()
        self.emit(
            f"{name} = linalg.{kind} {attrs} ins({x.name}, {weight} : {_ty(x.shape, self.dtype)}, {_ty(wshape, self.dtype)}) "
            f"outs({init} : {_ty(out, self.dtype)}) -> {_ty(out, self.dtype)}"
        )
        self.kinds.append(kind)
        return self.result(name, out, sums=sums)

    def transpose(self):
        src = self.source((2, 3, 4))
        perm = list(range(len(src.shape)))
        self.rng.shuffle(perm)
        out = tuple(src.shape[p] for p in perm)
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(out, self.dtype)}")
        self.emit(
            f"{name} = linalg.transpose ins({src.name} : {_ty(src.shape, self.dtype)}) outs({e} : {_ty(out, self.dtype)}) "
            f"permutation = [{', '.join(map(str, perm))}]"
        )
        self.kinds.append("transpose")
        return self.result(name, out, sums=src.sums)

    def extract_slice(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4))
        sizes = [rng.randint(1, d) for d in src.shape]
        offsets = [rng.randint(0, d - s) for d, s in zip(src.shape, sizes)]
        out = [s for s in sizes]
        if rng.random() < 0.3 and 1 in sizes and len(sizes) > 1:  # rank-reducing
            drop = rng.choice([i for i, s in enumerate(sizes) if s == 1])
            out = [s for i, s in enumerate(sizes) if i != drop]
        name = self.fresh()
        self.emit(
            f"{name} = tensor.extract_slice {src.name}[{', '.join(map(str, offsets))}] [{', '.join(map(str, sizes))}] "
            f"[{', '.join('1' for _ in sizes)}] : {_ty(src.shape, self.dtype)} to {_ty(out, self.dtype)}"
        )
        self.kinds.append("extract_slice")
        return self.result(name, out, sums=src.sums)

    def insert_slice(self):
        rng = self.rng
        dest = self.source((1, 2, 3))
        sizes = [rng.randint(1, d) for d in dest.shape]
        offsets = [rng.randint(0, d - s) for d, s in zip(dest.shape, sizes)]
        piece = self.operand(sizes)
        name = self.fresh()
        self.emit(
            f"{name} = tensor.insert_slice {piece.name} into {dest.name}[{', '.join(map(str, offsets))}] "
            f"[{', '.join(map(str, sizes))}] [{', '.join('1' for _ in sizes)}] : {_ty(piece.shape, self.dtype)} into "
            f"{_ty(dest.shape, self.dtype)}"
        )
        self.kinds.append("insert_slice")
        return self.result(name, dest.shape, sums=max(dest.sums, piece.sums))

    def pad(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4), lambda s: _numel(s) * 4 <= self.budget)
        low = [rng.choice([0, 0, 1, 2]) for _ in src.shape]
        high = [rng.choice([0, 0, 1, 3]) for _ in src.shape]
        out = tuple(d + a + b for d, a, b in zip(src.shape, low, high))
        c = self.const(self.scalar())
        name = self.fresh()
        idx = ", ".join(f"%i{i}: index" for i in range(len(out)))
        self.emit(f"{name} = tensor.pad {src.name} low[{', '.join(map(str, low))}] high[{', '.join(map(str, high))}] {{")
        self.lines.append(f"  ^bb0({idx}):")
        self.lines.append(f"    tensor.yield {c} : {self.dtype}")
        self.emit(f"}} : {_ty(src.shape, self.dtype)} to {_ty(out, self.dtype)}")
        self.kinds.append("pad")
        return self.result(name, out, sums=src.sums)

    def reshape(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4))
        shape = list(src.shape)
        collapse = len(shape) > 1 and rng.random() < 0.5
        name = self.fresh()
        if collapse:
            i = rng.randrange(len(shape) - 1)
            j = rng.randint(i + 1, len(shape) - 1)
            groups = [[k] for k in range(i)] + [list(range(i, j + 1))] + [[k] for k in range(j + 1, len(shape))]
            out = shape[:i] + [_numel(shape[i : j + 1])] + shape[j + 1 :]
            self.emit(f"{name} = tensor.collapse_shape {src.name} {groups} : {_ty(shape, self.dtype)} into {_ty(out, self.dtype)}")
            self.kinds.append("collapse_shape")
        else:
            i = rng.randrange(len(shape))
            d = shape[i]
            factors = [f for f in range(1, d + 1) if d % f == 0]
            a = rng.choice(factors)
            parts = [a, d // a]
            if rng.random() < 0.3:
                parts.insert(rng.randint(0, 2), 1)
            groups, k = [], 0
            for axis in range(len(shape)):
                width = len(parts) if axis == i else 1
                groups.append(list(range(k, k + width)))
                k += width
            out = shape[:i] + parts + shape[i + 1 :]
            if len(out) > 5:
                return self.extract_slice()
            self.emit(
                f"{name} = tensor.expand_shape {src.name} {groups} output_shape [{', '.join(map(str, out))}] : "
                f"{_ty(shape, self.dtype)} into {_ty(out, self.dtype)}"
            )
            self.kinds.append("expand_shape")
        return self.result(name, out, sums=src.sums)

    def concat(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4), lambda s: _numel(s) * 3 <= self.budget)
        axis = rng.randrange(len(src.shape))
        pieces = [src]
        for _ in range(rng.randint(1, 2)):
            shape = list(src.shape)
            shape[axis] = self.dim(small=True)
            pieces.append(self.operand(shape))
        rng.shuffle(pieces)
        out = list(src.shape)
        out[axis] = sum(p.shape[axis] for p in pieces)
        name = self.fresh()
        self.emit(
            f"{name} = tensor.concat dim({axis}) {', '.join(p.name for p in pieces)} : "
            f"({', '.join(_ty(p.shape, self.dtype) for p in pieces)}) -> {_ty(out, self.dtype)}"
        )
        self.kinds.append("concat")
        return self.result(name, out, sums=max(p.sums for p in pieces))

    def tensor_level(self):
        """arith / math ops on whole tensors (the converter makes generics of them), and casts to a
        wider type and back."""
        rng = self.rng
        src = self.source((1, 2, 3))
        shape, t = src.shape, self.dtype
        other = self.operand(shape)
        name = self.fresh()
        if self.is_float:
            op = rng.choice(["addf", "mulf", "maximumf", "subf", "tanh", "absf", "negf", "cast"])
        else:
            op = rng.choice(["addi", "muli", "maxsi", "xori", "cast"])
        if op == "cast":
            wide = {"f16": "f32", "f32": "f16", "i8": "i32", "i32": "f32", "f64": "f32", "i64": "i32"}[t]
            there = {"f16": "extf", "f32": "truncf", "i8": "extsi", "i32": "sitofp", "f64": "truncf", "i64": "trunci"}[t]
            back = {"extf": "truncf", "truncf": "extf", "extsi": "trunci", "sitofp": "fptosi", "trunci": "extsi"}[there]
            mid = self.fresh()
            self.emit(f"{mid} = arith.{there} {src.name} : {_ty(shape, t)} to {_ty(shape, wide)}")
            self.result(mid, shape, wide, sums=src.sums)
            step = mid
            if wide.startswith("f") and rng.random() < 0.6:
                two = self.fresh("d")
                self.emit(f"{two} = arith.constant dense<2.0> : {_ty(shape, wide)}")
                step = self.fresh()
                self.emit(f"{step} = arith.mulf {mid}, {two} : {_ty(shape, wide)}")
            self.emit(f"{name} = arith.{back} {step} : {_ty(shape, wide)} to {_ty(shape, t)}")
            self.kinds.append(f"cast-{there}-{back}")
        elif op in ("tanh", "absf"):
            self.emit(f"{name} = math.{op} {src.name} : {_ty(shape, t)}")
            self.kinds.append(f"tensor-{op}")
        elif op == "negf":
            self.emit(f"{name} = arith.negf {src.name} : {_ty(shape, t)}")
            self.kinds.append("tensor-negf")
        else:
            self.emit(f"{name} = arith.{op} {src.name}, {other.name} : {_ty(shape, t)}")
            self.kinds.append(f"tensor-{op}")
        return self.result(name, shape, sums=max(src.sums, other.sums))

    def named_elementwise(self):
        rng = self.rng
        src = self.source((1, 2, 3, 4))
        shape, t = src.shape, self.dtype
        unary = self.is_float and rng.random() < 0.3
        op = rng.choice(["exp", "abs", "negf"]) if unary else rng.choice(["add", "sub", "mul", "max", "min"])
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        if unary:
            x = src.name
            if op == "exp":  # keep it small: exp(tanh(x))
                x = self.fresh()
                self.emit(f"{x} = math.tanh {src.name} : {_ty(shape, t)}")
            self.emit(f"{name} = linalg.{op} ins({x} : {_ty(shape, t)}) outs({e} : {_ty(shape, t)}) -> {_ty(shape, t)}")
            sums = src.sums
        else:
            other = self.operand(shape)
            pair = [src, other] if rng.random() < 0.5 else [other, src]
            self.emit(
                f"{name} = linalg.{op} ins({pair[0].name}, {pair[1].name} : {_ty(shape, t)}, {_ty(shape, t)}) "
                f"outs({e} : {_ty(shape, t)}) -> {_ty(shape, t)}"
            )
            sums = max(src.sums, other.sums)
        self.kinds.append(f"linalg.{op}")
        return self.result(name, shape, sums=sums)

    def broadcast(self):
        rng = self.rng
        src = self.source((1, 2, 3), lambda s: _numel(s) * 8 <= self.budget)
        out = list(src.shape)
        added = []
        for _ in range(rng.randint(1, 2)):
            pos = rng.randint(0, len(out))
            out.insert(pos, self.dim(small=True))
            added = [a + (a >= pos) for a in added] + [pos]
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(out, self.dtype)}")
        self.emit(
            f"{name} = linalg.broadcast ins({src.name} : {_ty(src.shape, self.dtype)}) outs({e} : {_ty(out, self.dtype)}) "
            f"dimensions = [{', '.join(map(str, sorted(added)))}]"
        )
        self.kinds.append("broadcast")
        return self.result(name, out, sums=src.sums)

    def assemble(self):
        """Pieces inserted into a tensor.empty (or a fill) along one axis, covering it (or not)."""
        rng = self.rng
        src = self.source((1, 2, 3), lambda s: _numel(s) * 3 <= self.budget)
        axis = rng.randrange(len(src.shape))
        pieces = [src] + [
            self.operand([self.dim(small=True) if i == axis else d for i, d in enumerate(src.shape)]) for _ in range(rng.randint(1, 2))
        ]
        rng.shuffle(pieces)
        out = list(src.shape)
        out[axis] = sum(p.shape[axis] for p in pieces)
        covered = rng.random() < 0.7
        if covered:
            dest = self.fresh("e")
            self.emit(f"{dest} = tensor.empty() : {_ty(out, self.dtype)}")
        else:
            out[axis] += 2
            dest = self.filled(out, self.scalar())
        offset = 0 if covered else 1
        for piece in pieces:
            offsets = [offset if i == axis else 0 for i in range(len(out))]
            name = self.fresh()
            self.emit(
                f"{name} = tensor.insert_slice {piece.name} into {dest}[{', '.join(map(str, offsets))}] "
                f"[{', '.join(map(str, piece.shape))}] [{', '.join('1' for _ in out)}] : {_ty(piece.shape, self.dtype)} into "
                f"{_ty(out, self.dtype)}"
            )
            dest = name
            offset += piece.shape[axis]
        self.kinds.append("insert_slices" + ("-covering" if covered else ""))
        return self.result(dest, out, sums=max(p.sums for p in pieces))

    def two_results(self):
        """A generic with two outputs (one permuted)."""
        rng = self.rng
        src = self.source((2, 3))
        shape, n, t = src.shape, len(src.shape), self.dtype
        perm = list(range(n))
        rng.shuffle(perm)
        out2 = tuple(shape[p] for p in perm)
        lines1, r1 = self.body(["%in0"], t, rng.randint(1, 2))
        lines2, r2 = self.body(["%in0", r1], t, 1, prefix="u")
        e1, e2, name = self.fresh("e"), self.fresh("e"), self.fresh()
        self.emit(f"{e1} = tensor.empty() : {_ty(shape, t)}")
        self.emit(f"{e2} = tensor.empty() : {_ty(out2, t)}")
        ident = _map(n, [f"d{i}" for i in range(n)])
        # the second output's map: out2[j] = loop perm[j]
        m2 = _map(n, [f"d{p}" for p in perm])
        parallel = ", ".join(['"parallel"'] * n)
        self.emit(
            f"{name}:2 = linalg.generic {{indexing_maps = [{ident}, {ident}, {m2}], iterator_types = [{parallel}]}} "
            f"ins({src.name} : {_ty(shape, t)}) outs({e1}, {e2} : {_ty(shape, t)}, {_ty(out2, t)}) {{"
        )
        self.lines.append(f"  ^bb0(%in0: {t}, %o1: {t}, %o2: {t}):")
        self.lines.extend(lines1 + lines2)
        self.lines.append(f"    linalg.yield {r1}, {r2} : {t}, {t}")
        self.emit(f"}} -> ({_ty(shape, t)}, {_ty(out2, t)})")
        self.kinds.append("generic-two-results")
        self.result(f"{name}#0", shape, sums=src.sums)
        return self.result(f"{name}#1", out2, sums=src.sums)

    def linalg_reduce(self):
        rng = self.rng
        src = self.source((2, 3, 4))
        n = len(src.shape)
        dims = sorted(rng.sample(range(n), rng.randint(1, n - 1)))
        out = tuple(d for i, d in enumerate(src.shape) if i not in dims)
        combiner = rng.choice(["addf", "maximumf"] if self.is_float else ["addi", "maxsi"])
        init = self.filled(
            out, {"addf": "0.0", "addi": "0", "maximumf": NEG_INF.get(self.dtype), "maxsi": INT_MIN.get(self.dtype)}[combiner]
        )
        name = self.fresh()
        self.emit(
            f"{name} = linalg.reduce ins({src.name} : {_ty(src.shape, self.dtype)}) outs({init} : {_ty(out, self.dtype)}) "
            f"dimensions = [{', '.join(map(str, dims))}]"
        )
        self.lines.append(f"    (%in: {self.dtype}, %init: {self.dtype}) {{")
        self.lines.append(f"      %s = arith.{combiner} %in, %init : {self.dtype}")
        self.lines.append(f"      linalg.yield %s : {self.dtype}")
        self.lines.append("    }")
        self.kinds.append(f"linalg.reduce-{combiner}")
        length = _numel([src.shape[d] for d in dims]) if combiner.startswith("add") else 1
        return self.result(name, out, sums=src.sums * length + 1)

    def padded_window(self):
        """A convolution or max pooling on an input padded by tensor.pad (folded by the converter)."""
        rng = self.rng
        src = self.source((4,), lambda s: min(s[2:]) >= 1 and _numel(s) <= 2000)
        n, c, h, w = src.shape
        p = rng.choice([1, 1, 2])
        pool = rng.random() < 0.4
        value = (NEG_INF[self.dtype] if self.is_float else INT_MIN[self.dtype]) if pool else ("0.0" if self.is_float else "0")
        cst = self.const(value)
        padded = self.fresh()
        self.emit(f"{padded} = tensor.pad {src.name} low[0, 0, {p}, {p}] high[0, 0, {p}, {p}] {{")
        self.lines.append("  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):")
        self.lines.append(f"    tensor.yield {cst} : {self.dtype}")
        shape = (n, c, h + 2 * p, w + 2 * p)
        self.emit(f"}} : {_ty(src.shape, self.dtype)} to {_ty(shape, self.dtype)}")
        kh, sh, dh, oh = self._window(shape[2])
        kw, sw, dw, ow = self._window(shape[3])
        attrs = f"{{dilations = dense<[{dh}, {dw}]> : tensor<2xi64>, strides = dense<[{sh}, {sw}]> : tensor<2xi64>}}"
        name = self.fresh()
        if pool:
            k = self.fresh("k")
            self.emit(f"{k} = tensor.empty() : {_ty((kh, kw), self.dtype)}")
            out = (n, c, oh, ow)
            init = self.filled(out, value)
            self.emit(
                f"{name} = linalg.pooling_nchw_max {attrs} ins({padded}, {k} : {_ty(shape, self.dtype)}, {_ty((kh, kw), self.dtype)}) "
                f"outs({init} : {_ty(out, self.dtype)}) -> {_ty(out, self.dtype)}"
            )
            self.kinds.append("padded-pooling_nchw_max")
            return self.result(name, out, sums=src.sums)
        f = rng.choice([1, 2, 3, 6])
        weight = self.operand((f, c, kh, kw))
        out = (n, f, oh, ow)
        self.out_dtype = self.dtype
        init = self._acc(out)
        self.emit(
            f"{name} = linalg.conv_2d_nchw_fchw {attrs} ins({padded}, {weight.name} : {_ty(shape, self.dtype)}, "
            f"{_ty(weight.shape, self.dtype)}) outs({init} : {_ty(out, self.dtype)}) -> {_ty(out, self.dtype)}"
        )
        self.kinds.append("padded-conv_2d_nchw_fchw")
        return self.result(name, out, sums=max(src.sums, weight.sums) * c * kh * kw + 1)

    # -- the program -----------------------------------------------------------------------
    def makers(self) -> list[tuple]:
        """The families a program mixes, with their weights (fuzz_control.py adds its own)."""
        return [
            (self.elementwise, 5),
            (self.reduction, 4),
            (self.matmul, 3),
            (self.conv, 3),
            (self.transpose, 1),
            (self.extract_slice, 2),
            (self.insert_slice, 1),
            (self.pad, 2),
            (self.reshape, 2),
            (self.concat, 1),
            (self.tensor_level, 2),
            (self.named_elementwise, 1),
            (self.broadcast, 1),
            (self.assemble, 1),
            (self.two_results, 1),
            (self.linalg_reduce, 1),
            (self.padded_window, 1),
            (self.gather_rows, 1),
            (self.gather_computed, 1),
            (self.tm_scatter, 1),
            (self.tm_scan, 1),
            (self.tm_sort, 1),
            (self.strided_slice, 1),
            (self.loop, 1),
            (self.scalar_control, 1),
            (self.tosa, 2),
            (self.indexed, 1),
            (self.window, 1),
            (self.non_associative, 2),
            (self.grouped_conv, 1),
            (self.arg_reduction, 1),
            (self.mask, 1),
        ]

    def results(self) -> list[Value]:
        """What @main returns: the newest value, sometimes another."""
        results = [self.values[-1]]
        others = [v for v in self.values[:-1] if v not in results]
        if others and self.rng.random() < 0.3:
            results.append(self.rng.choice(others))
        return results

    def program(self) -> Program:
        rng, makers = self.rng, self.makers()
        for _ in range(rng.choice([1, 1, 2, 2, 3, 3, 4, 5, 6])):
            maker = rng.choices([m for m, _ in makers], [w for _, w in makers])[0]
            maker()
        results = self.results()
        odd = rng.random()
        if odd < 0.04:
            results.append(results[0])  # the same value returned twice
            self.kinds.append("result-twice")
        elif odd < 0.08:
            results.append(self.args[0] if self.args else results[0])  # an argument returned as it is
            self.kinds.append("result-argument")
        elif odd < 0.12:
            self.arg(self.shape(rng.randint(0, 2)))  # an argument nothing reads
            self.kinds.append("unused-argument")
        signature = ", ".join(f"{a.name}: {_ty(a.shape, a.dtype)}" for a in self.args)
        result_types = ", ".join(_ty(v.shape, v.dtype) for v in results)
        text = "\n".join(
            [
                f'module attributes {{ipu.target = "{self.target}"}} {{',
                f"func.func @main({signature}) -> ({result_types}) {{",
                *self.lines,
                f"  return {', '.join(v.name for v in results)} : {result_types}",
                "}",
                "}",
                "",
            ]
        )
        if self.big:
            self.kinds.append("big")
        sums = max(v.sums for v in results)
        return Program(self.seed, self.target, self.dtype, text, self.kinds, sums, len(self.kinds), self.index_ranges)


def generate(seed: int) -> Program:
    return Gen(seed).program()


if __name__ == "__main__":
    import sys

    print(generate(int(sys.argv[1])).text)
