"""The fuzzer's families of what torch-mlir emits beyond named linalg ops (a mixin of
`fuzz_gen.Gen`, beside `fuzz_families.Families`, whose helpers it uses): gathers (embedding
rows, `tensor.extract` at computed coordinates), the TMTensor ops in generic form
(`tm_tensor.scatter` / `scan` / `sort`, topk), grouped convolutions and arg-reductions.

A gather's coordinates are index arguments (`Families.index_arg`), drawn in range by the
harness; a scatter's reach one past each end (a negative index counts from the end, one out
of range writes nothing: both sides define it).
"""

from __future__ import annotations

from fuzz_families import _ints, _map, _numel, _ty

SCAN_COMBINERS = {"f": ("addf", "mulf", "maximumf", "minimumf"), "i": ("addi", "muli", "maxsi", "minsi", "xori")}


class TorchFamilies:
    """Makers for torch-mlir's gathers, TMTensor ops, grouped convolutions, arg-reductions."""

    def gather_rows(self):
        """nn.Embedding: rows of a table at i64 ids, the column from linalg.index."""
        rng, t = self.rng, self.dtype
        table = self.source((2,), lambda s: s[0] >= 1)
        rows, width = table.shape
        ids = self.index_arg(self.shape(rng.randint(1, 2), small=True), 0, rows)
        out = ids.shape + (width,)
        if _numel(out) > self.budget:
            return self.elementwise()
        n = len(out)
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(out, t)}")
        lines = [
            "    %row = arith.index_cast %id : i64 to index",
            f"    %col = linalg.index {n - 1} : index",
            f"    %x = tensor.extract {table.name}[%row, %col] : {_ty(table.shape, t)}",
        ]
        self.generic(
            name,
            [_map(n, [f"d{i}" for i in range(n - 1)]), _map(n, [f"d{i}" for i in range(n)])],
            ["parallel"] * n,
            [(ids.name, _ty(ids.shape, "i64"))],
            [(e, _ty(out, t))],
            [f"%id: i64, %out: {t}"],
            lines,
            ["%x"],
            [t],
        )
        self.emit(f"}} -> {_ty(out, t)}")
        self.kinds.append("gather-rows")
        return self.result(name, out, sums=table.sums)

    def gather_computed(self):
        """A tensor.extract at coordinates computed from an i64 input (interpolate, GroupNorm's
        parameters), combined with a second input."""
        rng, t = self.rng, self.dtype
        table = self.source((1, 2))
        src = self.source((1, 2))
        shape, n = src.shape, len(src.shape)
        coords = [self.index_arg(shape, 0, d) for d in table.shape]
        e, name = self.fresh("e"), self.fresh()
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        lines = [f"    %at{i} = arith.index_cast %crd{i} : i64 to index" for i in range(len(coords))]
        lines.append(f"    %g = tensor.extract {table.name}[{', '.join(f'%at{i}' for i in range(len(coords)))}] : {_ty(table.shape, t)}")
        op = rng.choice(["addf", "mulf", "maximumf"] if self.is_float else ["addi", "muli", "maxsi"])
        lines.append(f"    %r = arith.{op} %g, %in : {t}")
        ident = _map(n, [f"d{i}" for i in range(n)])
        self.generic(
            name,
            [ident] * (len(coords) + 2),
            ["parallel"] * n,
            [(src.name, _ty(shape, t))] + [(c.name, _ty(shape, "i64")) for c in coords],
            [(e, _ty(shape, t))],
            [f"%in: {t}, " + ", ".join(f"%crd{i}: i64" for i in range(len(coords))) + f", %out: {t}"],
            lines,
            ["%r"],
            [t],
        )
        self.emit(f"}} -> {_ty(shape, t)}")
        self.kinds.append(f"gather-computed-{len(table.shape)}d")
        return self.result(name, shape, sums=max(src.sums, table.sums))

    def tm_scatter(self):
        rng, t = self.rng, self.dtype
        dest = self.source((2,), lambda s: s[0] >= 1)
        rows, width = dest.shape
        count = rng.choice([1, 2, 3, 5, 9, 17])
        combine = rng.random() < 0.6
        body = [f"    ^bb0(%u: {t}, %o: {t}):"]
        if combine:
            op = "addf" if self.is_float else rng.choice(["addi", "maxsi"])
            attrs = " <{fastmath = #arith.fastmath<none>}>" if op == "addf" else ""
            body.append(f'      %s = "arith.{op}"(%o, %u){attrs} : ({t}, {t}) -> {t}')
            body.append(f'      "tm_tensor.yield"(%s) : ({t}) -> ()')
        else:
            body.append(f'      "tm_tensor.yield"(%u) : ({t}) -> ()')
        name = self.fresh()
        if rng.random() < 0.5:  # index_put on rows: (count, 1, width) updates, one index column
            ids = self.index_arg((count, 1), -rows - 1, rows + 1)
            updates = self.operand((count, 1, width))
            dims, kind = "0", "rows"
        else:  # scatter of scalars at (row, column) pairs
            ids = self.index_arg((count, 2), -min(rows, width) - 1, min(rows, width) + 1)
            updates = self.operand((count,))
            dims, kind = "0, 1", "points"
        self.emit(
            f'{name} = "tm_tensor.scatter"({updates.name}, {ids.name}, {dest.name}) <{{dimension_map = array<i64: {dims}>, '
            f"operandSegmentSizes = array<i32: 2, 1>, unique_indices = false}}> ({{"
        )
        self.lines.extend(body)
        self.emit(f"}}) : ({_ty(updates.shape, t)}, {_ty(ids.shape, 'i64')}, {_ty(dest.shape, t)}) -> {_ty(dest.shape, t)}")
        self.kinds.append(f"tm_tensor.scatter-{kind}-{'combine' if combine else 'overwrite'}")
        return self.result(name, dest.shape, sums=max(dest.sums, updates.sums) * (count + 1 if combine else 1))

    def tm_scan(self):
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3))
        shape, dim = src.shape, rng.randrange(len(src.shape))
        acc_shape = shape[:dim] + shape[dim + 1 :]
        op = rng.choice(SCAN_COMBINERS["f" if self.is_float else "i"])
        if op == "mulf":  # products of many values in [-1, 1) underflow harmlessly; keep them short
            op = "mulf" if shape[dim] <= 8 else "addf"
        inclusive = rng.random() < 0.6
        e = self.fresh("e")
        self.emit(f"{e} = tensor.empty() : {_ty(shape, t)}")
        acc = self.operand(acc_shape).name if not inclusive else self.fresh("e")
        if inclusive:
            self.emit(f"{acc} = tensor.empty() : {_ty(acc_shape, t)}")
        name = self.fresh()
        attrs = " <{fastmath = #arith.fastmath<none>}>" if op.endswith("f") else ""
        self.emit(
            f'{name}:2 = "tm_tensor.scan"({src.name}, {e}, {acc}) <{{dimension = {dim} : i64, inclusive = {str(inclusive).lower()}, '
            f"operandSegmentSizes = array<i32: 1, 2>}}> ({{"
        )
        self.lines.append(f"    ^bb0(%p: {t}, %q: {t}):")
        self.lines.append(f'      %s = "arith.{op}"(%p, %q){attrs} : ({t}, {t}) -> {t}')
        self.lines.append(f'      "tm_tensor.yield"(%s) : ({t}) -> ()')
        self.emit(f"}}) : ({_ty(shape, t)}, {_ty(shape, t)}, {_ty(acc_shape, t)}) -> ({_ty(shape, t)}, {_ty(acc_shape, t)})")
        self.kinds.append(f"tm_tensor.scan-{op}-{'inclusive' if inclusive else 'exclusive'}")
        sums = src.sums * (shape[dim] if op in ("addf", "addi") else 1) + 1
        if not inclusive and rng.random() < 0.5:
            self.result(f"{name}#0", shape, sums=sums)
            return self.result(f"{name}#1", acc_shape, sums=sums)
        return self.result(f"{name}#0", shape, sums=sums)

    def tm_sort(self):
        """torch.sort / argsort (values and iota positions) or topk (a slice of the first k)."""
        rng, t = self.rng, self.dtype
        src = self.source((1, 2))
        shape, dim = src.shape, rng.randrange(len(src.shape))
        n = len(shape)
        iota_e, iota = self.fresh("e"), self.fresh()
        self.emit(f"{iota_e} = tensor.empty() : {_ty(shape, 'i64')}")
        self.generic(
            iota,
            [_map(n, [f"d{i}" for i in range(n)])],
            ["parallel"] * n,
            [],
            [(iota_e, _ty(shape, "i64"))],
            ["%out: i64"],
            [f"    %i = linalg.index {dim} : index", "    %c = arith.index_cast %i : index to i64"],
            ["%c"],
            ["i64"],
        )
        self.emit(f"}} -> {_ty(shape, 'i64')}")
        descending = rng.random() < 0.5
        if self.is_float:
            compare = f'"arith.cmpf"(%a, %b) <{{fastmath = #arith.fastmath<none>, predicate = {3 if descending else 5} : i64}}>'
        else:
            compare = f'"arith.cmpi"(%a, %b) <{{predicate = {5 if descending else 3} : i64}}>'
        name = self.fresh()
        self.emit(
            f'{name}:2 = "tm_tensor.sort"({src.name}, {iota}) <{{dimension = {dim} : i64, operandSegmentSizes = array<i32: 0, 2>}}> ({{'
        )
        self.lines.append(f"    ^bb0(%a: {t}, %b: {t}, %ai: i64, %bi: i64):")
        self.lines.append(f"      %le = {compare} : ({t}, {t}) -> i1")
        self.lines.append('      "tm_tensor.yield"(%le) : (i1) -> ()')
        self.emit(f"}}) : ({_ty(shape, t)}, {_ty(shape, 'i64')}) -> ({_ty(shape, t)}, {_ty(shape, 'i64')})")
        if rng.random() < 0.4:  # topk: the first k positions only
            k = rng.randint(1, min(shape[dim], 16))
            sizes = list(shape)
            sizes[dim] = k
            values, positions = self.fresh(), self.fresh()
            for out, source, dtype in ((values, f"{name}#0", t), (positions, f"{name}#1", "i64")):
                self.emit(
                    f"{out} = tensor.extract_slice {source}[{_ints([0] * n)}] [{_ints(sizes)}] [{_ints([1] * n)}] : "
                    f"{_ty(shape, dtype)} to {_ty(sizes, dtype)}"
                )
            self.kinds.append("tm_tensor.sort-topk")
            self.result(positions, sizes, "i64")
            return self.result(values, sizes, sums=src.sums)
        self.kinds.append("tm_tensor.sort" + ("-descending" if descending else ""))
        self.result(f"{name}#1", shape, "i64")
        return self.result(f"{name}#0", shape, sums=src.sums)

    def grouped_conv(self):
        rng, t = self.rng, self.dtype
        kind = rng.choice(["conv_2d_ngchw_gfchw", "conv_2d_ngchw_fgchw", "conv_2d_nhwc_fhwc", "depthwise_conv_2d_nhwc_hwcm"])
        g, c, f = rng.choice([1, 2, 3, 4]), rng.choice([1, 2, 3]), rng.choice([1, 2, 3])
        n, h, w = rng.choice([1, 1, 2]), self.dim(small=True) + 2, self.dim(small=True) + 2
        kh, sh, dh, oh = self._window(h)
        kw, sw, dw, ow = self._window(w)
        if kind == "conv_2d_ngchw_gfchw":
            xs, ws, out = (n, g, c, h, w), (g, f, c, kh, kw), (n, g, f, oh, ow)
        elif kind == "conv_2d_ngchw_fgchw":
            xs, ws, out = (n, g, c, h, w), (f, g, c, kh, kw), (n, g, f, oh, ow)
        elif kind == "conv_2d_nhwc_fhwc":
            xs, ws, out = (n, h, w, c), (f, kh, kw, c), (n, oh, ow, f)
        else:
            xs, ws, out = (n, h, w, g), (kh, kw, g, f), (n, oh, ow, g, f)
        if _numel(xs) > self.budget or _numel(out) > self.budget:
            return self.conv()
        x, weight = self.operand(xs), self.operand(ws)
        self.out_dtype = t
        init = self._acc(out)
        attrs = f"{{dilations = dense<[{dh}, {dw}]> : tensor<2xi64>, strides = dense<[{sh}, {sw}]> : tensor<2xi64>}}"
        name = self.fresh()
        self.emit(
            f"{name} = linalg.{kind} {attrs} ins({x.name}, {weight.name} : {_ty(xs, t)}, {_ty(ws, t)}) "
            f"outs({init} : {_ty(out, t)}) -> {_ty(out, t)}"
        )
        self.kinds.append(kind)
        return self.result(name, out, sums=max(x.sums, weight.sums) * c * kh * kw + 1)

    def arg_reduction(self):
        """torch.argmax / max(x, dim): one generic whose index result reads the value's
        accumulator (iota positions from a constant or linalg.index)."""
        rng, t = self.rng, self.dtype
        src = self.source((1, 2, 3))
        n = len(src.shape)
        dim = rng.randrange(n)
        out = tuple(d for i, d in enumerate(src.shape) if i != dim)
        is_max = rng.random() < 0.6
        if self.is_float:
            combiner, predicate = ("maximumf", "ogt") if is_max else ("minimumf", "olt")
            start = self.scalar_inf(not is_max)
            cmp = "cmpf"
        else:
            combiner, predicate = ("maxsi", "sgt") if is_max else ("minsi", "slt")
            start = {"i8": (-128, 127), "i32": (-2147483648, 2147483647), "i64": (-9223372036854775808, 9223372036854775807)}[t][
                0 if is_max else 1
            ]
            cmp = "cmpi"
        values = self.filled(out, str(start))
        positions = self.filled(out, "0", "i64")
        ident = _map(n, [f"d{i}" for i in range(n)])
        out_map = _map(n, [f"d{i}" for i in range(n) if i != dim])
        iterators = ["reduction" if i == dim else "parallel" for i in range(n)]
        name = self.fresh()
        lines = [f"    %m = arith.{combiner} %in, %acc : {t}", f"    %better = arith.{cmp} {predicate}, %in, %acc : {t}"]
        if rng.random() < 0.5:
            iota = self.fresh("d")
            self.emit(f"{iota} = arith.constant dense<[{_ints(range(src.shape[dim]))}]> : {_ty((src.shape[dim],), 'i64')}")
            ins = [(src.name, _ty(src.shape, t)), (iota, _ty((src.shape[dim],), "i64"))]
            maps, block = [ident, _map(n, [f"d{dim}"])], f"%in: {t}, %k: i64, %acc: {t}, %idx: i64"
        else:
            ins, maps, block = [(src.name, _ty(src.shape, t))], [ident], f"%in: {t}, %acc: {t}, %idx: i64"
            lines = [f"    %kx = linalg.index {dim} : index", "    %k = arith.index_cast %kx : index to i64"] + lines
        lines.append("    %s = arith.select %better, %k, %idx : i64")
        self.generic(
            name,
            maps + [out_map, out_map],
            iterators,
            ins,
            [(values, _ty(out, t)), (positions, _ty(out, "i64"))],
            [block],
            lines,
            ["%m", "%s"],
            [t, "i64"],
        )
        self.emit(f"}} -> ({_ty(out, t)}, {_ty(out, 'i64')})")
        self.kinds.append("arg-max" if is_max else "arg-min")
        if rng.random() < 0.5:
            self.result(f"{name}#0", out, sums=src.sums)
        return self.result(f"{name}#1", out, "i64")

    def scalar_inf(self, positive):
        return {"f16": ("0xFC00", "0x7C00"), "f32": ("0xFF800000", "0x7F800000"), "f64": ("0xFFF0000000000000", "0x7FF0000000000000")}[
            self.dtype
        ][int(positive)]
