"""The zoo's transformers: Hugging Face's `BertModel`, `BertEncoder` and `GPT2LMHeadModel`, with
their attribute names (`encoder.layer.0.attention.self.query`, `transformer.h.0.attn.c_attn`);
built through `zoo.build` (frontends/zoo.py).

torch is imported when a model is built: the classes are defined on first use.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from ipu_mlir.frontends.torch import BeginBlock


def _tokens(batch: int, seq: int, vocab: int, seed: int) -> tuple:
    import torch

    return (torch.randint(0, vocab, (batch, seq), generator=torch.Generator().manual_seed(seed + 2)),)


@functools.cache
def _text() -> SimpleNamespace:
    import torch
    from torch import nn

    class BertEmbeddings(nn.Module):
        def __init__(self, vocab: int, hidden: int, max_positions: int, type_vocab: int = 2, eps: float = 1e-12) -> None:
            super().__init__()
            self.word_embeddings = nn.Embedding(vocab, hidden)
            self.position_embeddings = nn.Embedding(max_positions, hidden)
            self.token_type_embeddings = nn.Embedding(type_vocab, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.dropout = nn.Dropout(0.1)
            self.register_buffer("position_ids", torch.arange(max_positions).expand((1, -1)), persistent=False)
            self.register_buffer("token_type_ids", torch.zeros((1, max_positions), dtype=torch.long), persistent=False)

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            seq = input_ids.shape[1]
            position_ids = self.position_ids[:, :seq]
            token_type_ids = self.token_type_ids[:, :seq].expand(input_ids.shape[0], seq)
            x = self.word_embeddings(input_ids) + self.token_type_embeddings(token_type_ids) + self.position_embeddings(position_ids)
            return self.dropout(self.LayerNorm(x))

    class BertSelfAttention(nn.Module):
        def __init__(self, hidden: int, heads: int) -> None:
            super().__init__()
            self.num_attention_heads, self.attention_head_size = heads, hidden // heads
            self.query = nn.Linear(hidden, hidden)
            self.key = nn.Linear(hidden, hidden)
            self.value = nn.Linear(hidden, hidden)
            self.dropout = nn.Dropout(0.1)

        def heads(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(x.shape[0], x.shape[1], self.num_attention_heads, self.attention_head_size).permute(0, 2, 1, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
            scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.attention_head_size)
            probs = self.dropout(nn.functional.softmax(scores, dim=-1))
            context = torch.matmul(probs, v).permute(0, 2, 1, 3).contiguous()
            return context.view(x.shape[0], x.shape[1], -1)

    class BertSelfOutput(nn.Module):
        def __init__(self, hidden: int, eps: float = 1e-12) -> None:
            super().__init__()
            self.dense = nn.Linear(hidden, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
            return self.LayerNorm(self.dropout(self.dense(x)) + residual)

    class BertAttention(nn.Module):
        def __init__(self, hidden: int, heads: int) -> None:
            super().__init__()
            self.self = BertSelfAttention(hidden, heads)
            self.output = BertSelfOutput(hidden)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.output(self.self(x), x)

    class BertIntermediate(nn.Module):
        def __init__(self, hidden: int, intermediate: int) -> None:
            super().__init__()
            self.dense = nn.Linear(hidden, intermediate)
            self.intermediate_act_fn = nn.GELU()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.intermediate_act_fn(self.dense(x))

    class BertOutput(nn.Module):
        def __init__(self, hidden: int, intermediate: int, eps: float = 1e-12) -> None:
            super().__init__()
            self.dense = nn.Linear(intermediate, hidden)
            self.LayerNorm = nn.LayerNorm(hidden, eps=eps)
            self.dropout = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor, residual: torch.Tensor) -> torch.Tensor:
            return self.LayerNorm(self.dropout(self.dense(x)) + residual)

    class BertLayer(nn.Module):
        def __init__(self, hidden: int, heads: int, intermediate: int) -> None:
            super().__init__()
            self.attention = BertAttention(hidden, heads)
            self.intermediate = BertIntermediate(hidden, intermediate)
            self.output = BertOutput(hidden, intermediate)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = self.attention(x)
            return self.output(self.intermediate(x), x)

    class BertEncoder(nn.Module):
        def __init__(self, layers: int, hidden: int, heads: int, intermediate: int) -> None:
            super().__init__()
            self.layer = nn.ModuleList([BertLayer(hidden, heads, intermediate) for _ in range(layers)])

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            for layer in self.layer:
                x = layer(x)
            return x

    class BertPooler(nn.Module):
        def __init__(self, hidden: int) -> None:
            super().__init__()
            self.dense = nn.Linear(hidden, hidden)
            self.activation = nn.Tanh()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.activation(self.dense(x[:, 0]))

    class BertModel(nn.Module):
        """Token ids in; the last hidden states and the pooled output out (HF's BertModel
        without an attention mask: every token attends to every token)."""

        def __init__(self, layers: int, hidden: int, heads: int, intermediate: int, vocab: int, max_positions: int) -> None:
            super().__init__()
            self.embeddings = BertEmbeddings(vocab, hidden, max_positions)
            self.encoder = BertEncoder(layers, hidden, heads, intermediate)
            self.pooler = BertPooler(hidden)

        def forward(self, input_ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            hidden_states = self.encoder(self.embeddings(input_ids))
            return hidden_states, self.pooler(hidden_states)

    class Conv1D(nn.Module):  # GPT-2's linear layer: weight stored (in, out)
        def __init__(self, nf: int, nx: int) -> None:
            super().__init__()
            self.nf = nf
            self.weight = nn.Parameter(torch.empty(nx, nf))
            self.bias = nn.Parameter(torch.zeros(nf))
            nn.init.normal_(self.weight, std=0.02)
            nn.init.normal_(self.bias, std=0.02)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            shape = x.size()[:-1] + (self.nf,)
            return torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight).view(shape)

    class GPT2Attention(nn.Module):
        def __init__(self, hidden: int, heads: int, max_positions: int) -> None:
            super().__init__()
            # HF's eager attention: a causal mask kept as a buffer, sliced to the sequence.
            mask = torch.tril(torch.ones((max_positions, max_positions), dtype=torch.bool)).view(1, 1, max_positions, max_positions)
            self.register_buffer("bias", mask, persistent=False)
            self.num_heads, self.head_dim = heads, hidden // heads
            self.c_attn = Conv1D(3 * hidden, hidden)
            self.c_proj = Conv1D(hidden, hidden)
            self.attn_dropout = nn.Dropout(0.1)
            self.resid_dropout = nn.Dropout(0.1)

        def split(self, x: torch.Tensor) -> torch.Tensor:
            return x.view(x.shape[0], x.shape[1], self.num_heads, self.head_dim).permute(0, 2, 1, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            hidden = x.shape[-1]
            q, k, v = (self.split(t) for t in self.c_attn(x).split(hidden, dim=2))
            weights = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
            seq = x.shape[1]
            causal = self.bias[:, :, :seq, :seq]
            weights = torch.where(causal, weights, torch.tensor(torch.finfo(weights.dtype).min, dtype=weights.dtype))
            weights = self.attn_dropout(nn.functional.softmax(weights, dim=-1))
            out = torch.matmul(weights, v).permute(0, 2, 1, 3).contiguous().view(x.shape[0], seq, hidden)
            return self.resid_dropout(self.c_proj(out))

    class GPT2MLP(nn.Module):
        def __init__(self, hidden: int, inner: int) -> None:
            super().__init__()
            self.c_fc = Conv1D(inner, hidden)
            self.c_proj = Conv1D(hidden, inner)
            self.act = nn.GELU(approximate="tanh")  # HF's gelu_new
            self.dropout = nn.Dropout(0.1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.dropout(self.c_proj(self.act(self.c_fc(x))))

    class GPT2Block(nn.Module):
        def __init__(self, hidden: int, heads: int, max_positions: int, eps: float = 1e-5) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden, eps=eps)
            self.attn = GPT2Attention(hidden, heads, max_positions)
            self.ln_2 = nn.LayerNorm(hidden, eps=eps)
            self.mlp = GPT2MLP(hidden, 4 * hidden)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT2Model(nn.Module):
        def __init__(self, layers: int, hidden: int, heads: int, vocab: int, max_positions: int) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, hidden)
            self.wpe = nn.Embedding(max_positions, hidden)
            self.drop = nn.Dropout(0.1)
            self.h = nn.ModuleList([GPT2Block(hidden, heads, max_positions) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
            x = self.drop(self.wte(input_ids) + self.wpe(positions))
            for block in self.h:
                x = block(x)
            return self.ln_f(x)

    class GPT2LMHeadModel(nn.Module):
        """Token ids in, next-token logits out; the LM head shares the token embedding."""

        def __init__(self, layers: int, hidden: int, heads: int, vocab: int, max_positions: int) -> None:
            super().__init__()
            self.transformer = GPT2Model(layers, hidden, heads, vocab, max_positions)
            self.lm_head = nn.Linear(hidden, vocab, bias=False)
            self.lm_head.weight = self.transformer.wte.weight

        def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
            return self.lm_head(self.transformer(input_ids))

    return SimpleNamespace(**locals())


def _text_model(make: Callable[[SimpleNamespace], Any], seed: int) -> Any:
    import torch

    torch.manual_seed(seed)
    return make(_text()).eval()


def bert(
    batch: int = 1,
    seq: int = 128,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    intermediate: int | None = None,
    vocab: int = 30522,
    max_positions: int = 512,
    seed: int = 0,
    layers_per_ipu: tuple[int, ...] | None = None,
) -> tuple[Any, tuple]:
    """BERT (HF `BertModel`, BERT-base's sizes by default): token ids (batch, seq) in; hidden
    states and pooled output out. `layers_per_ipu` splits the encoder's layers over IPUs 0, 1,
    ... with `BeginBlock` (the embeddings on IPU 0, the pooler on the last)."""
    module = _text_model(lambda t: t.BertModel(layers, hidden, heads, intermediate or 4 * hidden, vocab, max(max_positions, seq)), seed)
    _split(module.encoder.layer, "encoder.layer", layers_per_ipu)
    return module, _tokens(batch, seq, vocab, seed)


def _split(layers: Any, path: str, layers_per_ipu: tuple[int, ...] | None) -> None:
    """Marks where each IPU's share of `layers` begins (PopTorch's `BeginBlock`), the first
    IPU's at the model's start; Graphcore ran BERT-Large as [3, 7, 7, 7] over 4 IPUs."""
    if layers_per_ipu is None:
        return
    if sum(layers_per_ipu) != len(layers) or min(layers_per_ipu) < 1:
        raise ValueError(f"layers_per_ipu {list(layers_per_ipu)} must be positive counts summing to the {len(layers)} layers")
    for ipu, first in enumerate(itertools.accumulate(layers_per_ipu[:-1]), start=1):
        BeginBlock(layers[first], f"{path}.{first}", ipu_id=ipu)


def bert_encoder(
    batch: int = 1, seq: int = 128, layers: int = 12, hidden: int = 768, heads: int = 12, intermediate: int | None = None, seed: int = 0
) -> tuple[Any, tuple]:
    """BERT-base's encoder stack alone (HF `BertEncoder`): embedded tokens (batch, seq, hidden) in."""
    import torch

    module = _text_model(lambda t: t.BertEncoder(layers, hidden, heads, intermediate or 4 * hidden), seed)
    return module, (torch.randn(batch, seq, hidden, generator=torch.Generator().manual_seed(seed + 2)),)


def gpt2(
    batch: int = 1,
    seq: int = 128,
    layers: int = 12,
    hidden: int = 768,
    heads: int = 12,
    vocab: int = 50257,
    max_positions: int = 1024,
    seed: int = 0,
    layers_per_ipu: tuple[int, ...] | None = None,
) -> tuple[Any, tuple]:
    """GPT-2 (HF `GPT2LMHeadModel`, GPT-2 small's sizes by default): token ids (batch, seq) in,
    logits (batch, seq, vocab) out. `layers_per_ipu` splits the blocks over IPUs as `bert`'s."""
    module = _text_model(lambda t: t.GPT2LMHeadModel(layers, hidden, heads, vocab, max(max_positions, seq)), seed)
    _split(module.transformer.h, "transformer.h", layers_per_ipu)
    return module, _tokens(batch, seq, vocab, seed)
