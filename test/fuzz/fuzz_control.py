"""Seeded random programs on scalars and data-dependent control flow, for the differential fuzzer
(`make fuzz-control`, `run_fuzz.py --generator control`).

A sibling of fuzz_gen.py: `ControlGen` is its `Gen` with more makers, mixed with Gen's tensor
families (element-wise, reductions, matmuls, slices, gathers, ...), which also fill the blocks:

- `scf.while` whose trip count depends on data: the before block reduces the carried tensor to
  a scalar (max |x|, a sum, a count of positives) and goes on while it passes a threshold (and
  a counter stays under a cap); the body shrinks the tensor (halved tanh, a shift right), the
  count of trips returned as a 0-d tensor; sometimes the before block hands the body a value it
  computed rather than the carried one;
- `scf.if` on a scalar reduced from a tensor, each branch doing different work;
- `scf.index_switch` on a computed index (a count of positives, remainder), two to four cases
  doing different work, and a default;
- `scf.for` carrying a scalar and a tensor: the scalar accumulates a reduction of the tensor
  each trip and feeds back into it, the induction variable read;
- blocks nested two deep (an if in a while, a switch in a for, ...);
- scalars outside generics: 0-d arguments, scalar arith / math chains, `tensor.extract` /
  `insert` at computed coordinates, `from_elements`, `splat`;
- gathers at indices in [-n, n) wrapped torch-style (`i < 0 ? i + n : i`) or clamped to the
  edges; `tm_tensor.scatter` onto few rows (duplicate indices) combining by add / max / min;
- `linalg.pack` / `unpack` of odd shapes (tiles not dividing the dims, a padding value, an
  outer permutation), round trips and unpacks that drop the padding;
- math ops at special values (0, -0, inf, -inf, NaN, denormals, the largest finite, integer
  min / max): erfc, isnan, isfinite, floor / ceil / round, sqrt and log of negatives, NaN
  propagating and ignoring min / max, 0 x inf; ctlz, cttz, ctpop, absi, shifts, division by
  constants; truncation to bf16 and back.

Float programs are f32 or f64 (a f16 program's reference is its f32 twin, whose decisions on
rounded data may branch otherwise). Conditions compare values both sides compute alike (max |x|
and counts are exact in any order; a sum could sit within rounding of its threshold, which a
wrong verdict would show).
"""

from __future__ import annotations

import re

from fuzz_families import Value, _map, _numel, _ty
from fuzz_gen import INT_MAX, INT_MIN, NEG_INF, Gen, Program

CONTROL_TYPES = ("f32", "f64", "i32", "i8", "i64")
CONTROL_WEIGHTS = (5, 1, 3, 1, 1)
WIDTH = {"i8": 8, "i32": 32, "i64": 64}
# Special floats by bit pattern: -0, +-inf, NaN, the smallest denormal, the largest finite, the
# smallest normal; decimal ones beside them.
SPECIAL_BITS = {
    "f32": ["0x80000000", "0x7F800000", "0xFF800000", "0x7FC00000", "0x00000001", "0x7F7FFFFF", "0x00800000", "0x80000005"],
    "f64": [
        "0x8000000000000000",
        "0x7FF0000000000000",
        "0xFFF0000000000000",
        "0x7FF8000000000000",
        "0x0000000000000001",
        "0x7FEFFFFFFFFFFFFF",
        "0x0010000000000000",
    ],
}
SPECIAL_DECIMAL = ["0.0", "1.0", "-1.0", "0.5", "-2.5", "1.0e+30", "-3.0e+38", "1.0e-40"]


class ControlGen(Gen):
    def __init__(self, seed: int):
        super().__init__(seed)
        self.dtype = self.rng.choices(CONTROL_TYPES, CONTROL_WEIGHTS)[0]
        self.is_float = self.dtype.startswith("f")
        self.big = False
        self.budget = 2048
        self.depth = 0  # control flow nesting

    def makers(self):
        return [
            (self.while_data, 4),
            (self.if_data, 4),
            (self.switch_data, 3),
            (self.for_scalar, 3),
            (self.scalar_chain, 3),
            (self.gather_edges, 2),
            (self.scatter_duplicates, 2),
            (self.pack_unpack, 2),
            (self.special_math, 3),
            (self.elementwise, 2),
            (self.reduction, 2),
            (self.matmul, 1),
            (self.extract_slice, 1),
            (self.tensor_level, 1),
            (self.scalar_control, 1),
        ]

    def results(self):
        """The newest value and up to three others nothing reads (so none is dead code)."""
        text = "\n".join(self.lines)
        unread = [v for v in self.values[:-1] if len(re.findall(re.escape(v.name) + r"\b", text)) == 1]
        return [self.values[-1]] + unread[-3:]

    def block_makers(self):
        """What fills an if / switch / while / for block: Gen's families, and control flow up
        to two deep."""
        makers = [self.elementwise, self.tensor_level, self.named_elementwise, self.reduction, self.matmul, self.gather_computed]
        makers += [self.transpose, self.extract_slice, self.special_math, self.scalar_chain]
        if self.depth < 2:
            makers += [self.if_data, self.switch_data, self.while_data, self.for_scalar]
        return makers

    # -- helpers -------------------------------------------------------------------------------
    def block(self, shape, inputs, count=None):
        """Lines of one to three makers inside a block whose values `inputs` are, ending in a
        value of `shape` (added onto the first input); returns that value."""
        outer, self.values = self.values, list(self.values) + list(inputs)
        self.depth += 1
        for _ in range(count if count is not None else self.rng.randint(1, 3)):
            self.rng.choice(self.block_makers())()
        last = self.values[-1]
        if last.shape != tuple(shape) or last.dtype != self.dtype:
            last = self._carried_update(inputs[0].name, shape, last)
        self.depth -= 1
        self.values = outer
        return last

    def shrink(self, value):
        """A value squashed toward 0: floats c * tanh(x) (c < 1), integers x >> 1 (so repeated, data
        decides when a threshold is passed)."""
        t, shape, name = self.dtype, value.shape, self.fresh()
        if self.is_float:
            half = self.fresh()
            self.emit(f"{half} = math.tanh {value.name} : {_ty(shape, t)}")
            scale = self.fresh("d")
            self.emit(f"{scale} = arith.constant dense<{self.rng.choice(['0.5', '0.8', '0.95'])}> : {_ty(shape, t)}")
            self.emit(f"{name} = arith.mulf {half}, {scale} : {_ty(shape, t)}")
        else:
            one = self.fresh("d")
            self.emit(f"{one} = arith.constant dense<1> : {_ty(shape, t)}")
            self.emit(f"{name} = arith.shrsi {value.name}, {one} : {_ty(shape, t)}")
        return Value(name, tuple(shape), t, value.sums)

    def reduce_to_scalar(self, value, how):
        """A scalar of `value`: `absmax` (max |x|, the element type), `sum` (the element type) or
        `count` (of x > 0, i32). Returns (name, type)."""
        t, n = self.dtype, len(value.shape)
        out_t = "i32" if how == "count" else t
        init = {"absmax": NEG_INF.get(t, INT_MIN.get(t)), "sum": "0.0" if self.is_float else "0", "count": "0"}[how]
        acc = self.filled((), init, out_t)
        name, s = self.fresh(), self.fresh("s")
        zero = "0.0" if self.is_float else "0"
        if how == "absmax":
            lines = [f"    %a = {'math.absf' if self.is_float else 'math.absi'} %x : {t}"]
            lines.append(f"    %r = arith.{'maximumf' if self.is_float else 'maxsi'} %a, %acc : {t}")
        elif how == "sum":
            lines = [f"    %r = arith.{'addf' if self.is_float else 'addi'} %x, %acc : {t}"]
        else:
            lines = [f"    %z = arith.constant {zero} : {t}"]
            lines.append(f"    %p = {'arith.cmpf ogt' if self.is_float else 'arith.cmpi sgt'}, %x, %z : {t}")
            lines += ["    %i = arith.extui %p : i1 to i32", "    %r = arith.addi %i, %acc : i32"]
        self.generic(
            name,
            [_map(n, [f"d{i}" for i in range(n)]), _map(n, [])],
            ["reduction"] * n,
            [(value.name, _ty(value.shape, t))],
            [(acc, _ty((), out_t))],
            [f"%x: {t}, %acc: {out_t}"],
            lines,
            ["%r"],
            [out_t],
        )
        self.emit(f"}} -> {_ty((), out_t)}")
        self.emit(f"{s} = tensor.extract {name}[] : {_ty((), out_t)}")
        return s, out_t

    def threshold(self, scalar, scalar_t, how, size):
        """An i1: the scalar of a `size`-element tensor against a level that splits the data
        (random inputs lie in [-1, 1) or [-8, 8)): max |x| near the top of the range, half the
        elements positive, a sum near 0 (a level nothing reaches only now and then)."""
        rng, go = self.rng, self.fresh("go")
        if how == "count":
            level = str(rng.choice([size // 2, size // 3, 0, size]))
        elif how == "absmax":
            level = rng.choice(["0.9", "0.97", "0.5", "0.05"] if scalar_t.startswith("f") else ["7", "6", "2", "0"])
        else:
            level = rng.choice(["0.0", "1.0", "-1.0"] if scalar_t.startswith("f") else ["0", "2", "-3"])
        level = self.const(level, scalar_t)
        if scalar_t.startswith("f"):
            self.emit(f"{go} = arith.cmpf {rng.choice(['ogt', 'oge', 'ult'])}, {scalar}, {level} : {scalar_t}")
        else:
            self.emit(f"{go} = arith.cmpi {rng.choice(['sgt', 'sge', 'slt', 'ne'])}, {scalar}, {level} : {scalar_t}")
        return go

    def scalar_tensor(self, scalar, scalar_t):
        name = self.fresh()
        self.emit(f"{name} = tensor.from_elements {scalar} : {_ty((), scalar_t)}")
        return name

    # -- control flow ----------------------------------------------------------------------------
    def while_data(self):
        rng, t = self.rng, self.dtype
        init = self.source((1, 2))
        shape, ty = init.shape, _ty(init.shape, init.dtype)
        how = rng.choice(["absmax", "absmax", "count", "sum"])
        cap = self.const(str(rng.choice([0, 1, 3, 5, 8, 12])), "i32")
        k0, one = self.const("0", "i32"), self.const("1", "i32")
        name, y, k, y2, k2 = self.fresh(), self.fresh("y"), self.fresh("k"), self.fresh("y"), self.fresh("k")
        types = f"{ty}, i32"
        self.emit(f"{name}:2 = scf.while ({y} = {init.name}, {k} = {k0}) : ({types}) -> ({types}) {{")
        scalar, scalar_t = self.reduce_to_scalar(Value(y, shape, t), how)
        above = self.threshold(scalar, scalar_t, how, _numel(shape))
        more, go = self.fresh("go"), self.fresh("go")
        self.emit(f"{more} = arith.cmpi slt, {k}, {cap} : i32")
        self.emit(f"{go} = arith.andi {above}, {more} : i1")
        handed = y
        if scalar_t == t and rng.random() < 0.3:  # the before block hands the body a value it computed
            handed = self._scaled(Value(y, shape, t), scalar, shape).name
        self.emit(f"scf.condition({go}) {handed}, {k} : {types}")
        self.emit("} do {")
        self.emit(f"^bb0({y2}: {ty}, {k2}: i32):")
        last = self.block(shape, [Value(y2, shape, t)])
        shrunk = self.shrink(last)
        k3 = self.fresh("k")
        self.emit(f"{k3} = arith.addi {k2}, {one} : i32")
        self.emit(f"scf.yield {shrunk.name}, {k3} : {types}")
        self.emit("}")
        self.kinds.append(f"while-{how}")
        if rng.random() < 0.4:  # the trip count, as a result
            self.result(self.scalar_tensor(f"{name}#1", "i32"), (), "i32")
        return self.result(f"{name}#0", shape)

    def if_data(self):
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3))
        how = rng.choice(["absmax", "count", "sum"])
        scalar, scalar_t = self.reduce_to_scalar(src, how)
        cond = self.threshold(scalar, scalar_t, how, _numel(src.shape))
        target = self.source((1, 2)) if rng.random() < 0.5 else src
        shape, ty = target.shape, _ty(target.shape, t)
        name = self.fresh()
        with_scalar = rng.random() < 0.4  # a scalar result too: reduced in one branch, passed by the other
        types = f"{ty}, {t}" if with_scalar else ty
        self.emit(f"{name}{':2' if with_scalar else ''} = scf.if {cond} -> ({types}) {{")
        then = self.block(shape, [target])
        yields = [then.name]
        if with_scalar:
            yields.append(self.reduce_to_scalar(then, rng.choice(["absmax", "sum"]))[0])
        self.emit(f"scf.yield {', '.join(yields)} : {types}")
        self.emit("} else {")
        other = self.block(shape, [target], count=rng.randint(0, 2)) if rng.random() < 0.8 else target
        yields = [other.name] + ([scalar if scalar_t == t else self.const(self.scalar(), t)] if with_scalar else [])
        self.emit(f"scf.yield {', '.join(yields)} : {types}")
        self.emit("}")
        self.kinds.append("if-data" + ("-scalar" if with_scalar else ""))
        if with_scalar:
            self.result(self.scalar_tensor(f"{name}#1", t), ())
            return self.result(f"{name}#0", shape)
        return self.result(name, shape)

    def switch_data(self):
        rng, t = self.rng, self.dtype
        src = self.source((1, 2))
        # a count of positives, or for integers a sum (a negative remainder: the default)
        scalar, scalar_t = self.reduce_to_scalar(src, "sum" if not self.is_float and rng.random() < 0.4 else "count")
        cases = rng.randint(1, 4)
        modulus = self.const(str(rng.choice([cases, cases + 1, 3])), scalar_t)
        rem, index = self.fresh("k"), self.fresh("k")
        self.emit(f"{rem} = arith.remsi {scalar}, {modulus} : {scalar_t}")
        self.emit(f"{index} = arith.index_cast {rem} : {scalar_t} to index")
        target = self.source((1, 2)) if rng.random() < 0.4 else src
        shape, ty = target.shape, _ty(target.shape, t)
        name = self.fresh()
        self.emit(f"{name} = scf.index_switch {index} -> {ty}")
        for case in sorted(rng.sample(range(4), cases)):
            self.emit(f"case {case} {{")
            value = self.block(shape, [target])
            self.emit(f"  scf.yield {value.name} : {ty}")
            self.emit("}")
        self.emit("default {")
        value = self.block(shape, [target], count=rng.randint(0, 1))
        self.emit(f"  scf.yield {value.name} : {ty}")
        self.emit("}")
        self.kinds.append(f"switch-{cases}")
        return self.result(name, shape)

    def for_scalar(self):
        """scf.for carrying a tensor and a scalar: the scalar gains the tensor's reduction each
        trip, and the tensor is moved by the scalar (floats shrunk, so bounded)."""
        rng, t = self.rng, self.dtype
        init = self.source((1, 2))
        shape, ty = init.shape, _ty(init.shape, t)
        trips = rng.choice([0, 1, 2, 3, 4])
        c0, c1, cn = self.const("0", "index"), self.const("1", "index"), self.const(str(trips), "index")
        acc0 = self.const("0.0" if self.is_float else "1", t)
        name, iv, y, acc = self.fresh(), self.fresh("iv"), self.fresh("y"), self.fresh("a")
        self.emit(f"{name}:2 = scf.for {iv} = {c0} to {cn} step {c1} iter_args({y} = {init.name}, {acc} = {acc0}) -> ({ty}, {t}) {{")
        how = rng.choice(["absmax", "sum"])
        scalar, _ = self.reduce_to_scalar(Value(y, shape, t), how)
        counter, step = self.fresh("s"), self.fresh("s")
        self.emit(f"{counter} = arith.index_cast {iv} : index to i64")
        if self.is_float:
            self.emit(f"{step} = arith.sitofp {counter} : i64 to {t}")
        elif t != "i64":
            self.emit(f"{step} = arith.trunci {counter} : i64 to {t}")
        else:
            step = counter
        mixed, acc2 = self.fresh("s"), self.fresh("a")
        add = "addf" if self.is_float else "addi"
        self.emit(f"{mixed} = arith.{add} {scalar}, {step} : {t}")
        if self.is_float:
            squashed = self.fresh("s")
            self.emit(f"{squashed} = math.tanh {mixed} : {t}")
            mixed = squashed
        self.emit(f"{acc2} = arith.{add} {acc}, {mixed} : {t}")
        moved = self._scaled(Value(y, shape, t), acc2, shape)
        last = self.block(shape, [moved], count=rng.randint(0, 2))
        shrunk = self.shrink(last)
        self.emit(f"scf.yield {shrunk.name}, {acc2} : {ty}, {t}")
        self.emit("}")
        self.kinds.append(f"for-scalar-{trips}")
        self.result(self.scalar_tensor(f"{name}#1", t), ())
        return self.result(f"{name}#0", shape)

    # -- scalars outside generics ------------------------------------------------------------------
    def scalar_chain(self):
        """A scalar from a 0-d argument or a tensor.extract at computed coordinates, through a
        random arith / math chain, then splat, inserted or combined with a tensor."""
        rng, t = self.rng, self.dtype
        if rng.random() < 0.5:
            zero_d = self.arg(())
            s = self.fresh("s")
            self.emit(f"{s} = tensor.extract {zero_d.name}[] : {_ty((), t)}")
        else:
            src = self.source((1, 2))
            counts = [self.reduce_to_scalar(src, "count")[0] for _ in range(1)]
            coordinates = []
            for d in src.shape:
                rem, at = self.fresh("k"), self.fresh("k")
                self.emit(f"{rem} = arith.remui {counts[0]}, {self.const(str(d), 'i32')} : i32")
                self.emit(f"{at} = arith.index_cast {rem} : i32 to index")
                coordinates.append(at)
            s = self.fresh("s")
            self.emit(f"{s} = tensor.extract {src.name}[{', '.join(coordinates)}] : {_ty(src.shape, t)}")
        lines, out = self.body([s], t, rng.randint(1, 4), prefix=self.fresh("q")[1:] + "_")
        self.lines.extend(lines)
        use = rng.choice(["splat", "from_elements", "insert", "combine"])
        self.kinds.append(f"scalar-chain-{use}")
        if use == "from_elements":
            name = self.fresh()
            self.emit(f"{name} = tensor.from_elements {out}, {s}, {out} : {_ty((3,), t)}")
            return self.result(name, (3,))
        target = self.source((1, 2))
        name = self.fresh()
        if use == "splat":
            self.emit(f"{name} = tensor.splat {out} : {_ty(target.shape, t)}")
            return self.result(name, target.shape)
        if use == "insert":  # at the corners, or at coordinates computed from data
            if rng.random() < 0.5:
                coordinates = [self.const(str(rng.choice([0, d - 1])), "index") for d in target.shape]
            else:
                count = self.reduce_to_scalar(target, "count")[0]
                coordinates = []
                for d in target.shape:
                    rem, at = self.fresh("k"), self.fresh("k")
                    self.emit(f"{rem} = arith.remui {count}, {self.const(str(d), 'i32')} : i32")
                    self.emit(f"{at} = arith.index_cast {rem} : i32 to index")
                    coordinates.append(at)
            self.emit(f"{name} = tensor.insert {out} into {target.name}[{', '.join(coordinates)}] : {_ty(target.shape, t)}")
            return self.result(name, target.shape)
        return self.result(self._scaled(target, out, target.shape).name, target.shape)

    # -- gathers and scatters at the edges ---------------------------------------------------------
    def gather_edges(self):
        """Rows of a table at i64 ids in [-rows - 2, rows + 2): wrapped as torch does (negative
        from the end, in [-rows, rows)) or clamped to the first and last row."""
        rng, t = self.rng, self.dtype
        table = self.source((2,), lambda s: s[0] >= 1)
        rows, width = table.shape
        wrap = rng.random() < 0.5
        ids = (
            self.index_arg((rng.choice([1, 2, 3, 5, 9]),), -rows, rows)
            if wrap
            else self.index_arg((rng.choice([1, 4, 7]),), -rows - 2, rows + 2)
        )
        out = ids.shape + (width,)
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(out, t)}")
        if wrap:
            lines = [
                "    %zero = arith.constant 0 : i64",
                f"    %n = arith.constant {rows} : i64",
                "    %neg = arith.cmpi slt, %id, %zero : i64",
                "    %up = arith.addi %id, %n : i64",
                "    %fix = arith.select %neg, %up, %id : i64",
            ]
        else:
            lines = [
                "    %zero = arith.constant 0 : i64",
                f"    %last = arith.constant {rows - 1} : i64",
                "    %low = arith.maxsi %id, %zero : i64",
                "    %fix = arith.minsi %low, %last : i64",
            ]
        lines += ["    %row = arith.index_cast %fix : i64 to index", "    %col = linalg.index 1 : index"]
        lines.append(f"    %x = tensor.extract {table.name}[%row, %col] : {_ty(table.shape, t)}")
        self.generic(name, [_map(2, ["d0"]), _map(2, ["d0", "d1"])], ["parallel"] * 2, [(ids.name, _ty(ids.shape, "i64"))],
                     [(e, _ty(out, t))], [f"%id: i64, %o: {t}"], lines, ["%x"], [t])  # fmt: skip
        self.emit(f"}} -> {_ty(out, t)}")
        self.kinds.append(f"gather-{'wrapped' if wrap else 'clamped'}")
        return self.result(name, out, sums=table.sums)

    def scatter_duplicates(self):
        """tm_tensor.scatter of rows onto a destination at ids drawn from a few rows (so
        repeated) or from [-rows - 1, rows + 1), combined by add / max / min."""
        rng, t = self.rng, self.dtype
        dest = self.source((2,), lambda s: s[0] >= 1)
        rows, width = dest.shape
        count = rng.choice([2, 4, 7, 16])
        combiner = rng.choice(["addf", "maximumf", "minimumf"] if self.is_float else ["addi", "maxsi", "minsi"])
        attrs = " <{fastmath = #arith.fastmath<none>}>" if self.is_float else ""
        if rng.random() < 0.7:  # a few rows, so repeated
            ids = self.index_arg((count, 1), 0, min(rows, rng.choice([1, 2, 3])))
        else:  # also negative (from the end) and one past each end (nothing written)
            ids = self.index_arg((count, 1), -rows - 1, rows + 1)
        updates = self.operand((count, 1, width))
        name = self.fresh()
        self.emit(
            f'{name} = "tm_tensor.scatter"({updates.name}, {ids.name}, {dest.name}) <{{dimension_map = array<i64: 0>, '
            f"operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}}> ({{"
        )
        self.lines.append(f"    ^bb0(%u: {t}, %o: {t}):")
        self.lines.append(f'      %s = "arith.{combiner}"(%o, %u){attrs} : ({t}, {t}) -> {t}')
        self.lines.append(f'      "tm_tensor.yield"(%s) : ({t}) -> ()')
        self.emit(f"}}) : ({_ty(updates.shape, t)}, {_ty(ids.shape, 'i64')}, {_ty(dest.shape, t)}) -> {_ty(dest.shape, t)}")
        self.kinds.append(f"scatter-duplicates-{combiner}")
        return self.result(name, dest.shape, sums=max(dest.sums, updates.sums) * (count + 1))

    # -- pack / unpack -----------------------------------------------------------------------------
    def pack_unpack(self):
        rng, t = self.rng, self.dtype
        src = self.source((2,))
        shape = src.shape
        positions = rng.choice([[0, 1], [1, 0], [1], [0]])
        tiles = [rng.choice([1, 2, 3, 4, 5, 8]) for _ in positions]
        outer = [-(-d // tiles[positions.index(i)]) if i in positions else d for i, d in enumerate(shape)]
        perm = rng.choice([[0, 1], [1, 0]])
        packed = tuple([outer[p] for p in perm] + tiles)
        if _numel(packed) > 4 * self.budget:
            return self.elementwise()
        padded = any(shape[i] % tiles[k] for k, i in enumerate(positions))
        attrs = f"outer_dims_perm = {perm} inner_dims_pos = {positions} inner_tiles = {tiles}"
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(packed, t)}")
        padding = ""
        if padded or rng.random() < 0.3:
            padding = f" padding_value({self.const(self.scalar(), t)} : {t})"
        self.emit(f"{name} = linalg.pack {src.name}{padding} {attrs} into {e} : {_ty(shape, t)} -> {_ty(packed, t)}")
        value = self.result(name, packed, sums=src.sums)
        self.kinds.append("pack" + ("-padded" if padded else ""))
        if rng.random() < 0.3:
            return value
        if rng.random() < 0.5:
            value = self.elementwise()  # work on the packed form (the newest value)
            if value.shape != packed or value.dtype != t:
                value = self.result(name, packed, sums=src.sums)
        e2, back = self.fresh("e"), self.fresh()
        self.emit(f"{e2} = tensor.empty() : {_ty(shape, t)}")
        self.emit(f"{back} = linalg.unpack {value.name} {attrs} into {e2} : {_ty(packed, t)} -> {_ty(shape, t)}")
        self.kinds.append("unpack")
        return self.result(back, shape, sums=value.sums)

    # -- math at special values ----------------------------------------------------------------------
    def special_values(self):
        """A 1-d tensor: special constants concatenated with an argument's values."""
        rng, t = self.rng, self.dtype
        if self.is_float:
            values = rng.sample(SPECIAL_BITS[t] + SPECIAL_DECIMAL, rng.randint(3, 9))
        else:
            bits = WIDTH[t]
            values = [INT_MIN[t], INT_MAX[t], str(-(2 ** (bits - 1)) + 1), "0", "-1", "1", str(2 ** (bits - 2)), "-2"]
            values = rng.sample(values, rng.randint(3, len(values)))
        special = self.fresh("d")
        self.emit(f"{special} = arith.constant dense<[{', '.join(values)}]> : {_ty((len(values),), t)}")
        other = self.source((1,), lambda s: s[0] <= 64)
        name = self.fresh()
        shape = (len(values) + other.shape[0],)
        self.emit(
            f"{name} = tensor.concat dim(0) {special}, {other.name} : ({_ty((len(values),), t)}, {_ty(other.shape, t)}) -> {_ty(shape, t)}"
        )
        return Value(name, shape, t)

    def special_math(self):
        rng, t = self.rng, self.dtype
        x = self.special_values()
        shape = x.shape
        lines, out, out_t = [], "%x", t
        ops = rng.randint(1, 3)
        for i in range(ops):
            r = f"%m{i}"
            if self.is_float:
                op = rng.choice(["erfc", "floor", "ceil", "round", "roundeven", "trunc", "sqrt", "log", "absf", "negf",
                                 "maximumf", "minimumf", "maxnumf", "minnumf", "mulinf", "divzero", "isnan", "isfinite",
                                 "cmp", "copysign", "bf16", "tanh", "exp", "clampf", "isinf", "isnormal"])  # fmt: skip
                if op in ("erfc", "floor", "ceil", "round", "roundeven", "trunc", "sqrt", "log", "absf", "tanh", "exp"):
                    lines.append(f"    {r} = math.{op} {out} : {t}")
                elif op == "negf":
                    lines.append(f"    {r} = arith.negf {out} : {t}")
                elif op in ("maximumf", "minimumf", "maxnumf", "minnumf", "copysign"):
                    lines.append(f"    %k{i} = arith.constant {rng.choice(['0.0', '-0.0', '1.0', SPECIAL_BITS[t][3]])} : {t}")
                    dialect = "math" if op == "copysign" else "arith"
                    lines.append(f"    {r} = {dialect}.{op} {out}, %k{i} : {t}")
                elif op == "mulinf":
                    lines.append(f"    %k{i} = arith.constant {SPECIAL_BITS[t][1]} : {t}")
                    lines.append(f"    {r} = arith.mulf {out}, %k{i} : {t}")
                elif op == "divzero":
                    lines.append(f"    %k{i} = arith.constant {rng.choice(['0.0', '-0.0'])} : {t}")
                    lines.append(f"    {r} = arith.divf {out}, %k{i} : {t}")
                elif op == "clampf":
                    low, high = sorted(rng.sample(["-1.0", "-0.0", "0.0", "0.5", "2.0"], 2), key=float)
                    lines.append(f"    %lo{i} = arith.constant {low} : {t}")
                    lines.append(f"    %hi{i} = arith.constant {high} : {t}")
                    lines.append(f"    {r} = math.clampf {out} to [%lo{i}, %hi{i}] : {t}")
                elif op == "bf16":
                    lines.append(f"    %h{i} = arith.truncf {out} : {t} to bf16")
                    lines.append(f"    {r} = arith.extf %h{i} : bf16 to {t}")
                else:  # to i1 (ends the chain)
                    if op == "cmp":
                        pred = rng.choice(["oeq", "une", "ult", "ord", "uno", "oge"])
                        lines.append(f"    %k{i} = arith.constant {rng.choice(['0.0', '1.0'])} : {t}")
                        lines.append(f"    {r} = arith.cmpf {pred}, {out}, %k{i} : {t}")
                    else:
                        lines.append(f"    {r} = math.{op} {out} : {t}")
                    out, out_t = r, "i1"
                    self.kinds.append(f"math-{op}")
                    break
            else:
                bits = WIDTH[t]
                op = rng.choice(["ctlz", "cttz", "ctpop", "absi", "shli", "shrsi", "shrui", "divsi", "remsi", "floordivsi",
                                 "ceildivsi", "divui", "remui", "maxui", "minsi", "cmp"])  # fmt: skip
                if op in ("ctlz", "cttz", "ctpop", "absi"):
                    lines.append(f"    {r} = math.{op} {out} : {t}")
                elif op in ("shli", "shrsi", "shrui"):
                    lines.append(f"    %k{i} = arith.constant {rng.choice([0, 1, bits - 1, bits // 2])} : {t}")
                    lines.append(f"    {r} = arith.{op} {out}, %k{i} : {t}")
                elif op in ("divsi", "remsi", "floordivsi", "ceildivsi"):
                    lines.append(f"    %k{i} = arith.constant {rng.choice([2, 3, -3, 7, -2, INT_MAX[t]])} : {t}")
                    lines.append(f"    {r} = arith.{op} {out}, %k{i} : {t}")
                elif op in ("divui", "remui", "maxui", "minsi"):
                    lines.append(f"    %k{i} = arith.constant {rng.choice([1, 3, -1, INT_MIN[t]])} : {t}")
                    lines.append(f"    {r} = arith.{op} {out}, %k{i} : {t}")
                else:
                    lines.append(f"    %k{i} = arith.constant {rng.choice([0, -1, INT_MIN[t]])} : {t}")
                    lines.append(f"    {r} = arith.cmpi {rng.choice(['ult', 'sgt', 'eq', 'sle'])}, {out}, %k{i} : {t}")
                    out, out_t = r, "i1"
                    self.kinds.append(f"math-{op}")
                    break
            self.kinds.append(f"math-{op}")
            out = r
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(shape, out_t)}")
        self.generic(name, [_map(1, ["d0"])] * 2, ["parallel"], [(x.name, _ty(shape, t))], [(e, _ty(shape, out_t))],
                     [f"%x: {t}, %o: {out_t}"], lines, [out], [out_t])  # fmt: skip
        self.emit(f"}} -> {_ty(shape, out_t)}")
        if out_t != t:
            return self.result(name, shape, out_t)
        return self.result(name, shape)


def generate(seed: int) -> Program:
    return ControlGen(seed).program()


if __name__ == "__main__":
    import sys

    print(generate(int(sys.argv[1])).text)
