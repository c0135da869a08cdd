"""The fuzzer's op families beyond plain linalg and tensor ops (a mixin of `fuzz_gen.Gen`;
torch-mlir's own are in fuzz_torch.py): strided slices, window maps, `linalg.index` in bodies,
non-associative combiners, i1 masks, `scf.for` loops, scalars with `scf.if` / `scf.while` /
`scf.index_switch`, and TOSA, with the helpers both mixins use.

Each maker takes a value of the program's element type (or makes arguments), emits its ops
and returns the result `Value`, as the makers of fuzz_gen.py do. Index arguments (a gather's
coordinates, a scatter's rows) are recorded in `index_ranges` so the harness feeds values in
range: an out-of-range `tensor.extract` aborts the ExecutionEngine.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Value:
    name: str
    shape: tuple[int, ...]
    dtype: str
    sums: int = 1  # terms summed into one element so far


def _numel(shape):
    total = 1
    for d in shape:
        total *= d
    return total


def _ty(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def _map(n, exprs):
    dims = ", ".join(f"d{i}" for i in range(n))
    return f"affine_map<({dims}) -> ({', '.join(exprs)})>"


def _ints(values):
    return ", ".join(map(str, values))


class Families:
    """Makers for the op families fuzz_gen.py's `Gen` mixes in (Gen supplies `arg`, `operand`,
    `source`, `emit`, `body`, ...; these add `index_arg` and `generic`, which fuzz_torch uses)."""

    def index_arg(self, shape, low, high):
        """An i64 argument whose values the harness draws from [low, high)."""
        value = self.arg(shape, "i64")
        self.index_ranges[len(self.args) - 1] = (low, high)
        return value

    def to_dtype(self, lines, name, dtype, prefix):
        """Lines converting the i64 `name` to `dtype` (sitofp, trunci or nothing)."""
        out = f"%{prefix}cast"
        if dtype.startswith("f"):
            lines.append(f"    {out} = arith.sitofp {name} : i64 to {dtype}")
        elif dtype != "i64":
            lines.append(f"    {out} = arith.trunci {name} : i64 to {dtype}")
        else:
            return name
        return out

    def generic(self, name, maps, iterators, ins, outs, block_args, lines, yields, out_types):
        """Emit a linalg.generic up to its body's yield (the caller closes it with the result
        types); `ins` / `outs` are (name, type) pairs."""
        kinds = ", ".join(f'"{kind}"' for kind in iterators)
        parts = f"{{indexing_maps = [{', '.join(maps)}], iterator_types = [{kinds}]}}"
        ins_text = f" ins({', '.join(n for n, _ in ins)} : {', '.join(t for _, t in ins)})" if ins else ""
        results = f"{name}:{len(outs)}" if len(outs) > 1 else name
        self.emit(
            f"{results} = linalg.generic {parts}{ins_text} outs({', '.join(n for n, _ in outs)} : {', '.join(t for _, t in outs)}) {{"
        )
        self.lines.append(f"  ^bb0({', '.join(block_args)}):")
        self.lines.extend(lines)
        self.lines.append(f"    linalg.yield {', '.join(yields)} : {', '.join(out_types)}")

    # -- strided slices ----------------------------------------------------------------------
    def strided_slice(self):
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3, 4), lambda s: max(s) >= 3)
        strides = [rng.choice([1, 2, 3]) if d >= 3 else 1 for d in src.shape]
        sizes = [rng.randint(1, (d - 1) // s + 1) for d, s in zip(src.shape, strides)]
        offsets = [rng.randint(0, d - 1 - (z - 1) * s) for d, z, s in zip(src.shape, sizes, strides)]
        name = self.fresh()
        if rng.random() < 0.6:
            self.emit(
                f"{name} = tensor.extract_slice {src.name}[{_ints(offsets)}] [{_ints(sizes)}] [{_ints(strides)}] : "
                f"{_ty(src.shape, t)} to {_ty(sizes, t)}"
            )
            self.kinds.append("strided-extract_slice")
            return self.result(name, sizes, sums=src.sums)
        piece = self.operand(sizes)  # a strided insert into the source (ConvTranspose's input dilation)
        self.emit(
            f"{name} = tensor.insert_slice {piece.name} into {src.name}[{_ints(offsets)}] [{_ints(sizes)}] [{_ints(strides)}] : "
            f"{_ty(sizes, t)} into {_ty(src.shape, t)}"
        )
        self.kinds.append("strided-insert_slice")
        return self.result(name, src.shape, sums=max(src.sums, piece.sums))

    # -- windows, linalg.index, non-associative combiners ------------------------------------
    def window(self):
        """A generic reading windows of one input: an unfold through the map `a[i + j]`, a
        stencil through maps of shifted neighbours `a[i + s]` (every shift at least 1: a plain
        `d0` would fix the loop's extent at the input's), or the same stencil on
        `tensor.extract_slice` windows read through identity maps (what torch-mlir writes)."""
        rng, t = self.rng, self.dtype
        n = rng.choice([1, 2])
        out = self.shape(n)
        form = rng.choice(["unfold", "map", "slices"])
        ident = _map(n, [f"d{i}" for i in range(n)])
        if form == "unfold":  # out[i, j] = a[i + j] (issue 24, point 1)
            out = (out[0], self.dim(small=True))
            a = self.operand((out[0] + out[1] - 1,))
            maps, operands = [_map(2, ["d0 + d1"])], [a]
        else:
            shifts = [[rng.choice([0, 1, 2]) + (form == "map") for _ in range(n)] for _ in range(rng.randint(1, 3))]
            reach = [max(s[i] for s in shifts) for i in range(n)]
            a = self.operand(tuple(d + r for d, r in zip(out, reach)))
            if form == "map":
                maps, operands = [_map(n, [f"d{i} + {s[i]}" for i in range(n)]) for s in shifts], [a] * len(shifts)
            else:
                maps, operands = [ident] * len(shifts), []
                for shift in shifts:
                    window = self.fresh()
                    self.emit(
                        f"{window} = tensor.extract_slice {a.name}[{_ints(shift)}] [{_ints(out)}] [{_ints([1] * n)}] : "
                        f"{_ty(a.shape, t)} to {_ty(out, t)}"
                    )
                    operands.append(Value(window, out, t, a.sums))
        ins = [f"%w{i}" for i in range(len(operands))]
        lines, result = self.body(ins, t, rng.randint(1, 3), prefix="s")
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(out, t)}")
        self.generic(
            name,
            maps + [_map(len(out), [f"d{i}" for i in range(len(out))])],
            ["parallel"] * len(out),
            [(v.name, _ty(v.shape, t)) for v in operands],
            [(e, _ty(out, t))],
            [", ".join(f"{i}: {t}" for i in ins) + f", %out: {t}"],
            lines,
            [result],
            [t],
        )
        self.emit(f"}} -> {_ty(out, t)}")
        self.kinds.append(f"window-{form}")
        return self.result(name, out, sums=a.sums)

    def indexed(self):
        """An element-wise generic whose body reads its loop indices (linalg.index)."""
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3))
        shape, n = src.shape, len(src.shape)
        lines = []
        pool = ["%in"]
        for k in sorted(rng.sample(range(n), rng.randint(1, n))):
            lines += [f"    %i{k} = linalg.index {k} : index", f"    %l{k} = arith.index_cast %i{k} : index to i64"]
            pool.append(self.to_dtype(lines, f"%l{k}", t, f"x{k}"))
        body, result = self.body(pool, t, rng.randint(1, 3), prefix="b")
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        ident = _map(n, [f"d{i}" for i in range(n)])
        self.generic(
            name,
            [ident, ident],
            ["parallel"] * n,
            [(src.name, _ty(shape, t))],
            [(e, _ty(shape, t))],
            [f"%in: {t}, %out: {t}"],
            lines + body,
            [result],
            [t],
        )
        self.emit(f"}} -> {_ty(shape, t)}")
        self.kinds.append("generic-linalg.index")
        return self.result(name, shape, sums=src.sums)

    def non_associative(self):
        """A reduction whose combiner is not associative: `acc - x`, `x - acc`, `acc / (|x| + 1)`
        (issue 24, point 1: a cut reduction must not regroup it)."""
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3))
        n = len(src.shape)
        red = sorted(rng.sample(range(n), rng.randint(1, n)))
        out = tuple(d for i, d in enumerate(src.shape) if i not in red)
        sub = "subf" if self.is_float else "subi"
        form = rng.choice(["acc-x", "x-acc", "div"] if self.is_float else ["acc-x", "x-acc"])
        if form == "div":
            lines = [
                f"    %a = math.absf %in : {t}",
                f"    %one = arith.constant 1.0 : {t}",
                f"    %d = arith.addf %a, %one : {t}",
                f"    %r = arith.divf %acc, %d : {t}",
            ]
        else:
            lines = [f"    %r = arith.{sub} {'%acc, %in' if form == 'acc-x' else '%in, %acc'} : {t}"]
        init = self.operand(out).name if rng.random() < 0.5 else self.filled(out, "0.0" if self.is_float else "0")
        name = self.fresh()
        self.generic(
            name,
            [_map(n, [f"d{i}" for i in range(n)]), _map(n, [f"d{i}" for i in range(n) if i not in red])],
            ["reduction" if i in red else "parallel" for i in range(n)],
            [(src.name, _ty(src.shape, t))],
            [(init, _ty(out, t))],
            [f"%in: {t}, %acc: {t}"],
            lines,
            ["%r"],
            [t],
        )
        self.emit(f"}} -> {_ty(out, t)}")
        self.kinds.append(f"reduction-{form}")
        return self.result(name, out, sums=src.sums * _numel([src.shape[i] for i in red]) + 1)

    # -- i1 masks ------------------------------------------------------------------------------
    def mask(self):
        """i1 tensors: a comparison, then a select by it, an any/all reduction of it, or the mask
        itself returned (sometimes an i1 argument)."""
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3))
        shape, n = src.shape, len(src.shape)
        ident = _map(n, [f"d{i}" for i in range(n)])
        if rng.random() < 0.25:
            bits = self.arg(shape, "i1")
            self.kinds.append("i1-argument")
        else:
            other = self.operand(shape)
            pred = rng.choice(["ogt", "olt", "oeq", "une"] if self.is_float else ["sgt", "slt", "eq", "ne", "ult"])
            e, name = self.fresh("e"), self.fresh()
            self.emit(f"{e} = tensor.empty() : {_ty(shape, 'i1')}")
            lines = [f"    %b = arith.{'cmpf' if self.is_float else 'cmpi'} {pred}, %x, %y : {t}"]
            self.generic(
                name,
                [ident] * 3,
                ["parallel"] * n,
                [(src.name, _ty(shape, t)), (other.name, _ty(shape, t))],
                [(e, _ty(shape, "i1"))],
                [f"%x: {t}, %y: {t}, %o: i1"],
                lines,
                ["%b"],
                ["i1"],
            )
            self.emit(f"}} -> {_ty(shape, 'i1')}")
            bits = self.result(name, shape, "i1")
            self.kinds.append("i1-compare")
        use = rng.choice(["select", "select", "reduce", "xor"])
        name = self.fresh()
        if use == "reduce" and n > 1:
            red = sorted(rng.sample(range(n), rng.randint(1, n - 1)))
            out = tuple(d for i, d in enumerate(shape) if i not in red)
            op = rng.choice(["ori", "andi", "xori"])
            init = self.filled(out, "1" if op == "andi" else "0", "i1")
            self.generic(
                name,
                [ident, _map(n, [f"d{i}" for i in range(n) if i not in red])],
                ["reduction" if i in red else "parallel" for i in range(n)],
                [(bits.name, _ty(shape, "i1"))],
                [(init, _ty(out, "i1"))],
                ["%b: i1, %acc: i1"],
                [f"    %r = arith.{op} %b, %acc : i1"],
                ["%r"],
                ["i1"],
            )
            self.emit(f"}} -> {_ty(out, 'i1')}")
            self.kinds.append(f"i1-reduce-{op}")
            return self.result(name, out, "i1")
        if use == "xor":
            other = self.arg(shape, "i1")
            e = self.fresh("e")
            self.emit(f"{e} = tensor.empty() : {_ty(shape, 'i1')}")
            lines = ["    %r = arith.xori %a, %b : i1", "    %s = arith.andi %r, %a : i1", "    %u = arith.ori %s, %b : i1"]
            self.generic(
                name,
                [ident] * 3,
                ["parallel"] * n,
                [(bits.name, _ty(shape, "i1")), (other.name, _ty(shape, "i1"))],
                [(e, _ty(shape, "i1"))],
                ["%a: i1, %b: i1, %o: i1"],
                lines,
                ["%u"],
                ["i1"],
            )
            self.emit(f"}} -> {_ty(shape, 'i1')}")
            self.kinds.append("i1-logic")
            return self.result(name, shape, "i1")
        a, b = self.operand(shape), src
        e = self.fresh("e")
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        ext = "uitofp" if self.is_float else "extui"
        lines = [
            "    %s = arith.select %m, %a, %b : " + t,
            f"    %z = arith.{ext} %m : i1 to {t}",
            f"    %r = arith.{'addf' if self.is_float else 'addi'} %s, %z : {t}",
        ]
        self.generic(
            name,
            [ident] * 4,
            ["parallel"] * n,
            [(bits.name, _ty(shape, "i1")), (a.name, _ty(shape, t)), (b.name, _ty(shape, t))],
            [(e, _ty(shape, t))],
            [f"%m: i1, %a: {t}, %b: {t}, %o: {t}"],
            lines,
            ["%r"],
            [t],
        )
        self.emit(f"}} -> {_ty(shape, t)}")
        self.kinds.append("i1-select")
        return self.result(name, shape, sums=max(a.sums, b.sums))

    # -- loops -------------------------------------------------------------------------------
    def loop(self):
        """`scf.for` with constant bounds carrying one tensor through one to three ops (floats
        squashed by tanh each step, so long trip counts stay bounded)."""
        rng, t = self.rng, self.dtype
        if self.in_loop:
            return self.elementwise()
        init = self.source((1, 2, 3))
        trips = rng.choice([0, 1, 2, 3, 5])
        c0, c1, cn = self.const("0", "index"), self.const("1", "index"), self.const(str(trips), "index")
        name, iv, carried = self.fresh(), self.fresh("iv"), self.fresh("h")
        shape = init.shape
        self.emit(f"{name} = scf.for {iv} = {c0} to {cn} step {c1} iter_args({carried} = {init.name}) -> ({_ty(shape, t)}) {{")
        outer, self.in_loop = list(self.values), True
        self.values = [Value(carried, shape, t, init.sums)]
        makers = [
            self.elementwise,
            self.tensor_level,
            self.named_elementwise,
            self.indexed,
            self.gather_computed,
            self.window,
            self.strided_slice,
            self.reduction,
            self.matmul,
        ]
        for _ in range(rng.randint(1, 3)):
            rng.choice(makers)()
        last = self.values[-1]
        if last.shape != shape or last.dtype != t:  # back to the carried shape: add to it, broadcast
            last = self._carried_update(carried, shape, last)
        if self.is_float:
            squashed = self.fresh()
            self.emit(f"{squashed} = math.tanh {last.name} : {_ty(shape, t)}")
            last = self.result(squashed, shape, sums=last.sums)
        self.emit(f"  scf.yield {last.name} : {_ty(shape, t)}")
        self.emit("}")
        self.values, self.in_loop = outer, False
        self.kinds.append(f"scf.for-{trips}")
        return self.result(name, shape, sums=last.sums * max(trips, 1))

    def _carried_update(self, carried, shape, last):
        """carried (+) last, `last` read through a map of the carried loops it matches (else its
        first element, broadcast); the carried value as it is when `last` has another type."""
        t, n = self.dtype, len(shape)
        if last.dtype != t:
            return self.result(carried, shape)
        dims, free = [], list(range(n))
        for d in last.shape:
            k = next((i for i in free if shape[i] == d), None)
            if k is None:  # no map onto the carried loops: its first element, broadcast
                first = self.fresh()
                rank = len(last.shape)
                ones = _ints([1] * rank)
                self.emit(
                    f"{first} = tensor.extract_slice {last.name}[{_ints([0] * rank)}] [{ones}] [{ones}] : "
                    f"{_ty(last.shape, t)} to {_ty((), t)}"
                )
                last, dims = Value(first, (), t, last.sums), []
                break
            free.remove(k)
            dims.append(k)
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        ident = _map(n, [f"d{i}" for i in range(n)])
        op = "addf" if self.is_float else "xori"
        self.generic(
            name,
            [ident, _map(n, [f"d{k}" for k in dims]), ident],
            ["parallel"] * n,
            [(carried, _ty(shape, t)), (last.name, _ty(last.shape, t))],
            [(e, _ty(shape, t))],
            [f"%a: {t}, %b: {t}, %o: {t}"],
            [f"    %r = arith.{op} %a, %b : {t}"],
            ["%r"],
            [t],
        )
        self.emit(f"}} -> {_ty(shape, t)}")
        return self.result(name, shape, sums=last.sums + 1)

    # -- scalars and data-dependent control flow -----------------------------------------------
    def scalar_control(self):
        """A scalar read from a new argument (exact data: a decision on values the simulator and
        the reference compute alike) and changed by scalar arithmetic, then one of: `scf.if` on
        its sign, `scf.while` until a counter reaches a bound the scalar's sign picks, an
        `scf.index_switch` on a counter's remainder, `tensor.insert`, `tensor.from_elements`."""
        rng, t = self.rng, self.dtype
        shape = self.shape(rng.choice([1, 2]), small=True)
        x = self.arg(shape)
        coordinates = [self.const(str(rng.randrange(d)), "index") for d in shape]
        s, s2 = self.fresh("s"), self.fresh("s")
        self.emit(f"{s} = tensor.extract {x.name}[{', '.join(coordinates)}] : {_ty(shape, t)}")
        step = self.const(self.scalar(), t)
        self.emit(f"{s2} = arith.{'addf' if self.is_float else 'addi'} {s}, {step} : {t}")
        zero = self.const("0.0" if self.is_float else "0", t)
        positive = self.fresh("p")
        compare = f"arith.cmpf ogt, {s2}, {zero}" if self.is_float else f"arith.cmpi sgt, {s2}, {zero}"
        self.emit(f"{positive} = {compare} : {t}")
        kind = rng.choice(["if", "while", "switch", "insert", "from_elements"])
        self.kinds.append(f"scalar-{kind}")
        if kind == "insert":
            name = self.fresh()
            self.emit(f"{name} = tensor.insert {s2} into {x.name}[{', '.join(coordinates)}] : {_ty(shape, t)}")
            return self.result(name, shape)
        if kind == "from_elements":
            name = self.fresh()
            self.emit(f"{name} = tensor.from_elements {s2}, {s} : {_ty((2,), t)}")
            return self.result(name, (2,))
        source = self.source((len(shape),), lambda candidate: tuple(candidate) == tuple(shape)) if rng.random() < 0.5 else x
        if kind == "if":
            name = self.fresh()
            self.emit(f"{name} = scf.if {positive} -> ({_ty(shape, t)}) {{")
            self.emit(f"  scf.yield {self._scaled(source, s2, shape).name} : {_ty(shape, t)}")
            self.emit("} else {")
            self.emit(f"  scf.yield {source.name} : {_ty(shape, t)}")
            self.emit("}")
            return self.result(name, shape)
        i32 = "i32"
        k0, one = self.const("0", i32), self.const("1", i32)
        few, more = self.const(str(rng.randint(0, 2)), i32), self.const(str(rng.randint(2, 4)), i32)
        if kind == "switch":
            name, k, rem, index = self.fresh(), self.fresh("k"), self.fresh("k"), self.fresh("k")
            three = self.const("3", i32)
            self.emit(f"{k} = arith.select {positive}, {more}, {few} : {i32}")
            self.emit(f"{rem} = arith.remsi {k}, {three} : {i32}")
            self.emit(f"{index} = arith.index_cast {rem} : {i32} to index")
            self.emit(f"{name} = scf.index_switch {index} -> {_ty(shape, t)}")
            self.emit("case 1 {")
            self.emit(f"  scf.yield {self._scaled(source, s2, shape).name} : {_ty(shape, t)}")
            self.emit("}")
            self.emit("default {")
            self.emit(f"  scf.yield {source.name} : {_ty(shape, t)}")
            self.emit("}")
            return self.result(name, shape)
        bound, name, y, k = self.fresh("n"), self.fresh(), self.fresh("y"), self.fresh("k")
        go, y2, k2 = self.fresh("go"), self.fresh("y"), self.fresh("k")
        self.emit(f"{bound} = arith.select {positive}, {more}, {few} : {i32}")
        types = f"{_ty(shape, t)}, {i32}"
        self.emit(f"{name}:2 = scf.while ({y} = {source.name}, {k} = {k0}) : ({types}) -> ({types}) {{")
        self.emit(f"  {go} = arith.cmpi slt, {k}, {bound} : {i32}")
        self.emit(f"  scf.condition({go}) {y}, {k} : {types}")
        self.emit("} do {")
        self.emit(f"^bb0({y2}: {_ty(shape, t)}, {k2}: {i32}):")
        scaled = self._scaled(Value(y2, shape, t), s2, shape)
        k3 = self.fresh("k")
        self.emit(f"  {k3} = arith.addi {k2}, {one} : {i32}")
        self.emit(f"  scf.yield {scaled.name}, {k3} : {types}")
        self.emit("}")
        return self.result(f"{name}#0", shape)

    def _scaled(self, value, scalar, shape):
        """`value` (+) `scalar`, the scalar captured by a generic's body (broadcast by exchange):
        halved floats (bounded over a loop's iterations), xor for integers (no overflow)."""
        t, n = self.dtype, len(shape)
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        ident = _map(n, [f"d{i}" for i in range(n)])
        lines = (
            [f"    %h = arith.mulf %a, {self.const('0.5', t)} : {t}", f"    %r = arith.addf %h, {scalar} : {t}"]
            if self.is_float
            else [f"    %r = arith.xori %a, {scalar} : {t}"]
        )
        self.generic(name, [ident, ident], ["parallel"] * n, [(value.name, _ty(shape, t))], [(e, _ty(shape, t))],
                     [f"%a: {t}, %o: {t}"], lines, ["%r"], [t])  # fmt: skip
        self.emit(f"}} -> {_ty(shape, t)}")
        return Value(name, tuple(shape), t)

    # -- TOSA --------------------------------------------------------------------------------
    def tosa(self):
        """A TOSA op on the newest value (ipu-import-tosa lowers it with upstream's passes)."""
        rng, t = self.rng, self.dtype
        if t not in ("f32", "i32"):
            return self.elementwise()
        src = self.source((1, 2, 3))
        shape, n = src.shape, len(src.shape)
        name = self.fresh()
        ops = ["add", "sub", "maximum", "minimum", "mul", "reduce_sum", "reduce_max", "transpose", "reshape"]
        ops += ["clamp", "tanh", "exp", "abs", "matmul"] if t == "f32" else ["abs"]  # no i32 clamp in TOSA's profiles (seed 2242)
        op = rng.choice(ops)
        ty = _ty(shape, t)
        if op in ("add", "sub", "maximum", "minimum", "mul"):
            other = self.operand(tuple(d if rng.random() < 0.7 else 1 for d in shape))
            if op == "mul":
                shift = self.fresh("d")
                self.emit(f'{shift} = "tosa.const"() <{{values = dense<0> : tensor<1xi8>}}> : () -> tensor<1xi8>')
                self.emit(f"{name} = tosa.mul {src.name}, {other.name}, {shift} : ({ty}, {_ty(other.shape, t)}, tensor<1xi8>) -> {ty}")
            else:
                self.emit(f"{name} = tosa.{op} {src.name}, {other.name} : ({ty}, {_ty(other.shape, t)}) -> {ty}")
            out, sums = shape, max(src.sums, other.sums)
        elif op == "clamp":
            self.emit(f"{name} = tosa.clamp {src.name} {{min_val = -0.5 : f32, max_val = 0.75 : f32}} : ({ty}) -> {ty}")
            out, sums = shape, src.sums
        elif op in ("tanh", "exp", "abs"):
            x = src.name
            if op == "exp":
                x = self.fresh()
                self.emit(f"{x} = tosa.tanh {src.name} : ({ty}) -> {ty}")
            self.emit(f"{name} = tosa.{op} {x} : ({ty}) -> {ty}")
            out, sums = shape, src.sums
        elif op in ("reduce_sum", "reduce_max"):
            axis = rng.randrange(n)
            out = tuple(1 if i == axis else d for i, d in enumerate(shape))
            self.emit(f"{name} = tosa.{op} {src.name} {{axis = {axis} : i32}} : ({ty}) -> {_ty(out, t)}")
            sums = src.sums * (shape[axis] if op == "reduce_sum" else 1) + 1
        elif op == "transpose":
            perm = list(range(n))
            rng.shuffle(perm)
            out = tuple(shape[p] for p in perm)
            self.emit(f"{name} = tosa.transpose {src.name} {{perms = array<i32: {_ints(perm)}>}} : ({ty}) -> {_ty(out, t)}")
            sums = src.sums
        elif op == "reshape":
            out = (_numel(shape),) if n > 1 else (1, shape[0])
            s = self.fresh("shape")
            self.emit(
                f"{s} = tosa.const_shape {{values = dense<[{_ints(out)}]> : tensor<{len(out)}xindex>}} : () -> !tosa.shape<{len(out)}>"
            )
            self.emit(f"{name} = tosa.reshape {src.name}, {s} : ({ty}, !tosa.shape<{len(out)}>) -> {_ty(out, t)}")
            sums = src.sums
        else:  # matmul on rank 3 (a rank-2 value gains a batch of 1)
            a = src if n == 3 else self.operand((1,) + shape[-2:]) if n == 2 else self.operand((1, 1, shape[0]))
            b, k = a.shape[0], a.shape[2]
            other = self.operand((b, k, self.dim(small=True)))
            out = (b, a.shape[1], other.shape[2])
            zp = self.fresh("d")
            self.emit(f'{zp} = "tosa.const"() <{{values = dense<0.0> : tensor<1xf32>}}> : () -> tensor<1xf32>')
            self.emit(
                f"{name} = tosa.matmul {a.name}, {other.name}, {zp}, {zp} : ({_ty(a.shape, t)}, {_ty(other.shape, t)}, tensor<1xf32>, "
                f"tensor<1xf32>) -> {_ty(out, t)}"
            )
            sums = max(a.sums, other.sums) * k + 1
        self.kinds.append(f"tosa.{op}")
        return self.result(name, out, sums=sums)
