"""A depthwise convolution's kernel compiled with numba: `ipu.conv`'s (dialects/ops/conv.py)
for f32 and f64 when each group has one input channel.

Why compiled code: a depthwise vertex group is tens of thousands of tiny planes (MobileNetV2's
tiles hold 6 x 3 outputs of 16 channels, 19,584 planes a group), each 9 multiply-adds an
output. numpy pays either a BLAS call a plane or, adding taps one by one over all planes at
once (`Im2col._add_taps`), a transposed copy in, 17 passes and a transposed copy out. One
compiled loop does the same sums with no passes between: measured on MobileNetV2 224's 60
depthwise vertex groups of a steady run, 25 ms (numpy's taps, runs and im2col paths) against
11 ms; the whole steady run 99.9 -> 86.7 ms (A/B in one process). Tried and slower: one plane
at a time (each output's taps in registers, the padding by bounds checks or a padded copy a
plane), 2-4x slower than numpy's taps; gathering plane by plane into the block, 1.6x slower.

The sums are those of `Im2col._add_taps`, bit for bit: each output is its first tap's product,
then each further tap's product added, in (kh, kw) order, each rounded to the element type (no
fused multiply-add: numba does not contract without fastmath). The order is fixed per output,
so the bytes do not depend on how planes are laid out or grouped into calls: the checked run
(each tile its own copy) and later runs (shared operands, an output view in tile memory) agree.

How: the planes are taken 64 to 256 at a time (`BLOCK_ITEMS`); each block's padded inputs and filter taps are
gathered channels last, (hp, wp, plane) and (tap, plane), so that each tap's multiply-add is
one loop over the block's planes that the compiler vectorizes, and the block's outputs are
written back plane by plane.

The loop is compiled on its first run, not at load (dialects/ops/compiled.py: when numba is
imported, where the machine code is cached, what a first compile costs)."""

from __future__ import annotations

import numpy as np

from ipu_mlir.target.element_types import as_strided

from .compiled import compiled

BLOCK_ITEMS = 65536  # a block's padded inputs, at most (64 to 256 planes): 1.2x faster than 256 planes of MobileNetV2's 113 x 9


def _planes(xf, xo, kf, ko, of, oo, g, xs, ks, acc):  # compiled by numba (dialects/ops/compiled.py)
    """Each plane's convolution: plane i reads `xf` from `xo[i]`, `kf` from `ko[i]` and writes `of`
    from `oo[i]`; `g` the geometry (`Planes.__init__`); xs, ks, acc a block's scratch."""
    h, w, xsh, xsw, kh, kw, ksh, ksw, oh, ow, osh, osw, sh, sw, dh, dw, top, left = g
    block, (hp, wp), total = acc.shape[0], xs.shape[:2], xo.shape[0]
    for start in range(0, total, block):
        planes = min(block, total - start)
        inputs, outputs, filters = xo[start : start + planes], oo[start : start + planes], ko[start : start + planes]
        for r in range(hp):
            for c in range(wp):
                into = xs[r, c]
                if top <= r < top + h and left <= c < left + w:
                    source = xf[(r - top) * xsh + (c - left) * xsw :]
                    for n in range(planes):
                        into[n] = source[inputs[n]]
                else:
                    into[:planes] = 0
        for i in range(kh):
            for j in range(kw):
                into, source = ks[i * kw + j], kf[i * ksh + j * ksw :]
                for n in range(planes):
                    into[n] = source[filters[n]]
        for p in range(oh):
            for q in range(ow):
                window, tap = xs[p * sh, q * sw], ks[0]
                for n in range(planes):
                    acc[n] = window[n] * tap[n]
                for i in range(kh):
                    for j in range(kw):
                        if i or j:
                            window, tap = xs[p * sh + i * dh, q * sw + j * dw], ks[i * kw + j]
                            for n in range(planes):
                                acc[n] = acc[n] + window[n] * tap[n]
                into = of[p * osh + q * osw :]
                for n in range(planes):
                    into[outputs[n]] = acc[n]


def _flat(array: np.ndarray, write: bool) -> np.ndarray:
    """`array`'s memory from its first element to its last as one axis of elements; read-only
    unless written, whatever `array` is: numba compiles anew for each mix of flags (1.2 s)."""
    span = 1 + sum((n - 1) * s // array.itemsize for n, s in zip(array.shape, array.strides))
    return as_strided(array, (span,), (array.itemsize,), writeable=write)


def _offsets(shape: tuple[int, ...], steps: list[int]) -> np.ndarray:
    """Each point's offset (elements) in C order over `shape`, `steps` elements an axis."""
    total = np.zeros(shape, np.uint64)
    for axis, (n, step) in enumerate(zip(shape, steps)):
        if n > 1 and step:
            total += (np.arange(n, dtype=np.uint64) * np.uint64(step)).reshape([n if a == axis else 1 for a in range(len(shape))])
    return total.ravel()


class Planes:
    """A depthwise `Im2col`'s kernel over (*tiles, n, f, oh, ow) outputs: `__call__` writes
    into `out` and says True, or False, having written nothing, for what it does not take
    (another element type, a negative or unaligned stride, an output overlapping an operand)."""

    def __init__(self, conv, dtype: np.dtype):
        """`conv` an `Im2col` of one input channel a group."""
        self.batch, self.n, self.groups, self.fg, self.dtype = conv.batch, conv.n, conv.groups, conv.fg, dtype
        self.kh, self.kw, self.oh, self.ow = conv.kh, conv.kw, conv.oh, conv.ow
        hp, wp = conv.padded[2:]
        block = max(64, min(256, BLOCK_ITEMS // (hp * wp)))
        # a block's scratch, made once: a new one each call costs more than the smaller kernels (its pages)
        self.scratch = np.empty((hp, wp, block), dtype), np.empty((self.kh * self.kw, block), dtype), np.empty(block, dtype)
        # all but the operands' strides, which `_plan` adds
        self.geometry = (conv.h, conv.w, conv.kh, conv.kw, conv.oh, conv.ow, conv.sh, conv.sw, conv.dh, conv.dw, *conv.pad[:2])
        self._plans = {}  # by the operands' shapes and strides: a vertex group's views, the same every run
        self._last = (None, None, None, None)  # the last operands and the kernel's arguments for them

    def __call__(self, x: np.ndarray, k: np.ndarray, out: np.ndarray) -> bool:
        last = self._last
        if last[0] is x and last[1] is k and last[2] is out:
            # a vertex group's own views of tile memory, the same arrays every later run: checked
            # and flattened once (45 us a call, as much as MobileNetV2's smaller kernels take)
            arguments = last[3]
        else:
            arguments = self._arguments(x, k, out)
            if arguments is None:
                return False
            self._last = (x, k, out, arguments)
        if arguments:
            compiled(_planes)(*arguments)
        return True

    def _arguments(self, x: np.ndarray, k: np.ndarray, out: np.ndarray) -> tuple | None:
        """The compiled kernel's arguments (empty: nothing to compute), None if it does not take these."""
        arrays = (x, k, out)
        if any(a.dtype != self.dtype or min(a.strides, default=0) < 0 or any(s % a.itemsize for s in a.strides) for a in arrays):
            return None
        if np.may_share_memory(out, x) or np.may_share_memory(out, k):
            return None
        if out.size == 0:
            return ()
        key = tuple((a.shape, a.strides) for a in arrays)
        plan = self._plans.get(key) or self._plans.setdefault(key, self._plan(x, k, out))
        return (_flat(x, False), plan[0], _flat(k, False), plan[1], _flat(out, True), plan[2], plan[3], *self.scratch)

    def _plan(self, x: np.ndarray, k: np.ndarray, out: np.ndarray) -> tuple:
        """Each plane's offsets in x, k and out, planes over (*tiles, n, groups, filters a
        group) in C order (a tile's channels side by side in its memory), and the geometry."""
        b = self.batch
        space = (*out.shape[:b], self.n, self.groups, self.fg)
        (xs, ks, os) = ([s // a.itemsize for s in a.strides] for a in (x, k, out))

        def steps(array: np.ndarray, strides: list[int], own: list[int]) -> list[int]:
            return [s if array.shape[a] == space[a] else 0 for a, s in enumerate(strides[:b])] + own  # broadcast: 0

        # x (*, n, c, h, w), c = group; k (*, f, 1, kh, kw); out (*, n, f, oh, ow); f = group * fg + filter
        offsets = (
            _offsets(space, steps(x, xs, [xs[b], xs[b + 1], 0])),
            _offsets(space, steps(k, ks, [0, self.fg * ks[b], ks[b]])),
            _offsets(space, steps(out, os, [os[b], self.fg * os[b + 1], os[b + 1]])),
        )
        h, w, kh, kw, oh, ow, sh, sw, dh, dw, top, left = self.geometry
        g = (h, w, xs[b + 2], xs[b + 3], kh, kw, ks[b + 2], ks[b + 3], oh, ow, os[b + 2], os[b + 3], sh, sw, dh, dw, top, left)
        return (*offsets, np.array(g, np.int64))
