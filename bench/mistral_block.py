"""A Mistral-7B-shaped decoder block in f32 (d 4096, 32 heads, 8 KV heads, FFN 14336: 872 MB of
weights) on one gc200 and on an m2000 (4 x GC200, ipu-shard), checked against PyTorch.

    .venv/bin/python bench/mistral_block.py [--seq 8] [--layers-scale 1.0]

Rotary embeddings are left out: they do not change the block's weights or shapes. Prints the
gc200 refusal, then the m2000 run's error against PyTorch eager and its profile summary.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np
import torch
from torch import nn

from ipu_mlir.frontends import torch as ipu_torch
from ipu_mlir.target.diagnostics import IpuError


class RMSNorm(nn.Module):
    def __init__(self, d: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * self.weight


class DecoderBlock(nn.Module):
    def __init__(self, d: int = 4096, heads: int = 32, kv_heads: int = 8, ffn: int = 14336):
        super().__init__()
        self.heads, self.kv_heads, self.head_dim = heads, kv_heads, d // heads
        self.attention_norm, self.ffn_norm = RMSNorm(d), RMSNorm(d)
        self.wq = nn.Linear(d, d, bias=False)
        self.wk = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.wv = nn.Linear(d, kv_heads * self.head_dim, bias=False)
        self.wo = nn.Linear(d, d, bias=False)
        self.w1 = nn.Linear(d, ffn, bias=False)
        self.w3 = nn.Linear(d, ffn, bias=False)
        self.w2 = nn.Linear(ffn, d, bias=False)

    def forward(self, x):
        batch, seq, d = x.shape
        h = self.attention_norm(x)
        q = self.wq(h).view(batch, seq, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(batch, seq, self.kv_heads, self.head_dim).transpose(1, 2)
        repeat = self.heads // self.kv_heads
        k, v = k.repeat_interleave(repeat, dim=1), v.repeat_interleave(repeat, dim=1)
        scores = q @ k.transpose(2, 3) / math.sqrt(self.head_dim)
        mask = torch.triu(torch.full((seq, seq), float("-inf")), diagonal=1)
        attention = torch.softmax(scores + mask, dim=-1) @ v
        x = x + self.wo(attention.transpose(1, 2).reshape(batch, seq, d))
        h = self.ffn_norm(x)
        return x + self.w2(nn.functional.silu(self.w1(h)) * self.w3(h))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seq", type=int, default=8)
    parser.add_argument("--targets", nargs="+", default=["gc200", "m2000"])
    args = parser.parse_args()
    torch.manual_seed(0)
    block = DecoderBlock().eval()
    weights = sum(p.numel() * p.element_size() for p in block.parameters())
    print(f"weights: {weights:,} bytes")
    x = torch.randn(1, args.seq, 4096)
    start = time.time()
    imported = ipu_torch.export(block, x)
    print(f"exported in {time.time() - start:.0f} s")
    expected = ipu_torch.run_eager(block, x).numpy()
    for target in args.targets:
        start = time.time()
        try:
            program = ipu_torch.compile_program(imported, target, block)
        except IpuError as error:
            print(f"{target}: refused after {time.time() - start:.0f} s: {error.message.splitlines()[0]}")
            continue
        print(f"{target}: compiled in {time.time() - start:.0f} s")
        compiled = ipu_torch.CompiledModule(program, target, verified=True)
        got = compiled(x.numpy())
        error = float(np.abs(got - expected).max() / np.abs(expected).max())
        print(f"{target}: max error {error:.2e} of the largest output")
        print(compiled.profile.summary())


if __name__ == "__main__":
    main()
