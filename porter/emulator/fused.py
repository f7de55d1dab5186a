"""torch_npu's fused attention, emulated with torch's own scaled_dot_product_attention.

transformers runs `attn_implementation="flash_attention_2"` on an NPU through
torch_npu.npu_fusion_attention (integrations/npu_flash_attention.py; no flash-attn package
exists for NPU), and LLaMA-Factory's `flash_attn: fa2` takes that path on NPU. Without it a
ported model that keeps flash_attention_2 would fail on the emulator and run on the card.

What is emulated (torch_npu's documentation of npu_fusion_attention): the layouts BSH, SBH,
BSND, BNSD and TND (packed sequences, with actual_seq_qlen/actual_seq_kvlen as cumulative
ends), a boolean atten_mask where True hides a position (sparse_mode 0), the causal modes
that take a compressed 2048x2048 mask (2: top-left aligned, 3: bottom-right aligned),
scale, keep_prob (dropout) and fewer key/value heads than query heads. pse, padding_mask,
prefix and the band modes raise NotImplementedError: a run that needs them is told so.
Only the output is computed; the softmax statistics it returns beside it are empty.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

_NO_BAND = 2147483647  # pre_tockens / next_tockens: everything before / after


def _to_bnsd(t: torch.Tensor, layout: str, heads: int) -> torch.Tensor:
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    if layout == "BSH":
        b, s, h = t.shape
        return t.view(b, s, heads, h // heads).transpose(1, 2)
    if layout == "SBH":
        s, b, h = t.shape
        return t.view(s, b, heads, h // heads).permute(1, 2, 0, 3)
    raise NotImplementedError(f"npu_fusion_attention: input_layout {layout!r} is not emulated")


def _from_bnsd(t: torch.Tensor, layout: str) -> torch.Tensor:
    if layout == "BNSD":
        return t
    if layout == "BSND":
        return t.transpose(1, 2)
    b, n, s, d = t.shape
    if layout == "BSH":
        return t.transpose(1, 2).reshape(b, s, n * d)
    return t.permute(2, 0, 1, 3).reshape(s, b, n * d)  # SBH


def _heads(t: torch.Tensor, layout: str, q_heads: int, q: torch.Tensor) -> int:
    """Heads of a key or value tensor: written in its shape, or (BSH, SBH) from its width."""
    if layout in ("BSND", "TND"):
        return t.shape[-2]
    if layout == "BNSD":
        return t.shape[1]
    return t.shape[-1] // (q.shape[-1] // q_heads)


def _attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: Any, sparse_mode: int, scale: float, p: float):
    """SDPA on [B, N, S, D] tensors; `mask` as torch_npu takes it (True: hidden)."""
    sq, skv = q.shape[-2], k.shape[-2]
    allowed = None
    if sparse_mode in (2, 3):
        # Causal: row i sees columns up to i (top-left) or up to i + skv - sq (bottom-right).
        shift = 0 if sparse_mode == 2 else skv - sq
        rows = torch.arange(sq, device=q.device).unsqueeze(1)
        allowed = torch.arange(skv, device=q.device).unsqueeze(0) <= rows + shift
    elif mask is not None:
        allowed = ~mask.to(torch.bool)
    gqa = k.shape[1] != q.shape[1]
    return F.scaled_dot_product_attention(q, k, v, attn_mask=allowed, dropout_p=p, scale=scale, enable_gqa=gqa)


def npu_fusion_attention(
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    head_num: int,
    input_layout: str,
    pse: Any = None,
    padding_mask: Any = None,
    atten_mask: Any = None,
    scale: float = 1.0,
    keep_prob: float = 1.0,
    pre_tockens: int = _NO_BAND,
    next_tockens: int = _NO_BAND,
    inner_precise: int = 0,
    prefix: Any = None,
    actual_seq_qlen: Any = None,
    actual_seq_kvlen: Any = None,
    sparse_mode: int = 0,
    gen_mask_parallel: bool = True,
    sync: bool = False,
) -> tuple:
    if pse is not None or padding_mask is not None or prefix is not None:
        raise NotImplementedError("npu_fusion_attention: pse, padding_mask and prefix are not emulated by porter")
    if sparse_mode not in (0, 2, 3) or (sparse_mode == 0 and (pre_tockens, next_tockens) != (_NO_BAND, _NO_BAND)):
        raise NotImplementedError(f"npu_fusion_attention: sparse_mode {sparse_mode} with a band is not emulated")
    p = 1.0 - keep_prob
    if input_layout == "TND":
        if sparse_mode == 0 and atten_mask is not None:
            raise NotImplementedError("npu_fusion_attention: a full atten_mask with TND is not emulated")
        # Packed sequences: attend within each [start, end) of the cumulative ends.
        q_ends, kv_ends = list(actual_seq_qlen), list(actual_seq_kvlen)
        parts = []
        for (qs, qe), (ks, ke) in zip(zip([0] + q_ends, q_ends), zip([0] + kv_ends, kv_ends)):
            q, k, v = (t.unsqueeze(0).transpose(1, 2) for t in (query[qs:qe], key[ks:ke], value[ks:ke]))
            parts.append(_attend(q, k, v, None, sparse_mode, scale, p).transpose(1, 2).squeeze(0))
        out = torch.cat(parts) if parts else query.new_empty(query.shape)
    else:
        kv_heads = _heads(key, input_layout, head_num, query)
        q = _to_bnsd(query, input_layout, head_num)
        k, v = (_to_bnsd(t, input_layout, kv_heads) for t in (key, value))
        out = _from_bnsd(_attend(q, k, v, atten_mask, sparse_mode, scale, p), input_layout)
    empty = query.new_empty(0)
    return out, empty, empty, empty, 0, 0, 0
