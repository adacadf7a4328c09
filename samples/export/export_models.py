"""Export a zoo of small programs of different families with the real ExecuTorch.

Usage: python export_models.py OUTDIR [names...]   (default: every model)
       python export_models.py --pack OUTDIR FIXTUREDIR   (store into the fixture directory)

Writes into OUTDIR/:
  <name>.pte             the program (portable kernels, no delegate)
  <name>.input<i>.npy    the input(s) of `forward` (seeded)
  <name>.output<i>.npy   ExecuTorch's own runtime outputs for that input (pybindings,
                         portable kernels)
  <name>.bpte            BundledProgram with 2 test cases (inference programs only)
  <name>.json            family, exporter calls, shapes/dtypes, max |ExecuTorch - eager|
Two-method programs also write <name>.<method>.input<i>.npy / .output<i>.npy for every
method other than forward.
"""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import common  # noqa: F401  (sets sys.path)
from common import save_npy, to_jsonable, versions

MODEL_SEED = 0
INPUT_SEEDS = (1, 2)  # input 0 is the stored input and bundled case 0; 1 is bundled case 1


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def randint(seed: int, hi: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, hi, shape, generator=torch.Generator().manual_seed(seed))


# --------------------------------------------------------------------------- models
# Each builder returns a dict: model (eval or train), inputs(seed) -> tuple, family,
# and optionally kind ("train" | "quant" | "multi"), dynamic_shapes, extra methods.


class TransformerEnc(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 32)
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(32, 5)

    def forward(self, tokens: torch.Tensor, pad: torch.Tensor) -> torch.Tensor:
        h = self.enc(self.emb(tokens), src_key_padding_mask=pad)
        return self.head(h.mean(dim=1))


def transformer_encoder() -> Dict[str, Any]:
    def inputs(s: int):
        tok = randint(s, 50, 2, 12)
        pad = torch.zeros(2, 12, dtype=torch.bool)
        pad[0, 9:] = True
        pad[1, 6:] = True
        return tok, pad
    return dict(model=TransformerEnc(), inputs=inputs,
                family="transformer encoder (nn.TransformerEncoder, key padding mask -> -inf)")


class ViT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, 32, 8, stride=8)
        self.cls = nn.Parameter(torch.randn(1, 1, 32) * 0.02)
        self.pos = nn.Parameter(torch.randn(1, 17, 32) * 0.02)
        self.blocks = nn.ModuleList()
        for _ in range(2):
            self.blocks.append(nn.ModuleDict(dict(
                ln1=nn.LayerNorm(32), attn=nn.MultiheadAttention(32, 4, batch_first=True),
                ln2=nn.LayerNorm(32), fc1=nn.Linear(32, 64), fc2=nn.Linear(64, 32))))
        self.ln = nn.LayerNorm(32)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        p = self.patch(x).flatten(2).transpose(1, 2)
        h = torch.cat([self.cls.expand(x.shape[0], -1, -1), p], dim=1) + self.pos
        for b in self.blocks:
            y = b["ln1"](h)
            h = h + b["attn"](y, y, y, need_weights=False)[0]
            h = h + b["fc2"](F.gelu(b["fc1"](b["ln2"](h))))
        return self.head(self.ln(h)[:, 0])


def vit_tiny() -> Dict[str, Any]:
    return dict(model=ViT(), inputs=lambda s: (randn(s, 2, 3, 32, 32),),
                family="vision transformer (patch conv, layer norm, gelu, multi-head attention)")


class RnnText(nn.Module):
    def __init__(self, cell: str) -> None:
        super().__init__()
        self.emb = nn.Embedding(100, 24)
        self.rnn = (nn.LSTM if cell == "lstm" else nn.GRU)(24, 32, batch_first=True)
        self.head = nn.Linear(32, 4)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        out, _ = self.rnn(self.emb(tokens))
        return self.head(out[:, -1])


def lstm_text() -> Dict[str, Any]:
    return dict(model=RnnText("lstm"), inputs=lambda s: (randint(s, 100, 2, 10),),
                family="LSTM text classifier (nn.Embedding + nn.LSTM + Linear)")


def gru_text() -> Dict[str, Any]:
    return dict(model=RnnText("gru"), inputs=lambda s: (randint(s, 100, 2, 10),),
                family="GRU text classifier (nn.Embedding + nn.GRU + Linear)")


class Audio1d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Conv1d(1, 16, 9, stride=2, padding=4), nn.BatchNorm1d(16), nn.ReLU(), nn.MaxPool1d(2),
            nn.Conv1d(16, 32, 5, padding=2), nn.BatchNorm1d(32), nn.ReLU(), nn.AvgPool1d(2),
            nn.Conv1d(32, 32, 3, padding=1), nn.BatchNorm1d(32), nn.ReLU(), nn.AdaptiveAvgPool1d(1))
        self.head = nn.Linear(32, 6)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.net(x).flatten(1))


def audio_conv1d() -> Dict[str, Any]:
    return dict(model=Audio1d(), inputs=lambda s: (randn(s, 2, 1, 256),),
                family="1-d audio CNN (Conv1d, BatchNorm1d, MaxPool1d, AvgPool1d, AdaptiveAvgPool1d)")


class UNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        def block(i: int, o: int) -> nn.Module:
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.ReLU(), nn.Conv2d(o, o, 3, padding=1), nn.ReLU())
        self.d1, self.d2, self.d3 = block(3, 8), block(8, 16), block(16, 32)
        self.up3 = nn.ConvTranspose2d(32, 16, 2, stride=2)
        self.u2 = block(32, 16)
        self.u1 = block(16 + 8, 8)
        self.out = nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.d1(x)
        b = self.d2(F.max_pool2d(a, 2))
        c = self.d3(F.max_pool2d(b, 2))
        u = self.u2(torch.cat([self.up3(c), b], dim=1))
        u = F.interpolate(u, scale_factor=2, mode="bilinear", align_corners=False)
        u = self.u1(torch.cat([u, a], dim=1))
        return self.out(u) + F.interpolate(self.out(self.d1(F.avg_pool2d(x, 2))), scale_factor=2, mode="nearest")


def unet() -> Dict[str, Any]:
    return dict(model=UNet(), inputs=lambda s: (randn(s, 1, 3, 32, 32),),
                family="U-Net (ConvTranspose2d, bilinear and nearest upsampling, skip concatenation)")


def _calibrate_bn(model: nn.Module, shape: Tuple[int, ...]) -> nn.Module:
    """Fresh BatchNorm statistics make torchvision nets output ~0: run a few batches."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for i in range(3):
            model(randn(1000 + i, *shape))
    return model


def _small_weights(model: nn.Module) -> nn.Module:
    """Round weights to bfloat16 precision (kept float32) so the program compresses."""
    from models import round_to_bfloat16_precision_
    return round_to_bfloat16_precision_(model).eval()


def efficientnet_b0() -> Dict[str, Any]:
    import torchvision
    from torchvision.models.efficientnet import EfficientNet, _efficientnet_conf
    # B0's block table (depth 1.0) at a quarter of its width: the full-width B0 is a 16 MB
    # program even with 10 classes, far over the fixture budget.
    conf, last = _efficientnet_conf("efficientnet_b0", width_mult=0.25, depth_mult=1.0)
    m = _small_weights(_calibrate_bn(EfficientNet(conf, 0.2, num_classes=10, last_channel=last), (4, 3, 64, 64)))
    return dict(model=m, inputs=lambda s: (randn(s, 1, 3, 64, 64),),
                family="torchvision EfficientNet-B0 block table at width_mult=0.25 (weights=None, "
                       "num_classes=10; SiLU, squeeze-excitation, depthwise, stochastic depth off in eval)")


def mobilenet_v3_small() -> Dict[str, Any]:
    import torchvision
    m = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.5)
    m = _small_weights(_calibrate_bn(m, (4, 3, 64, 64)))
    return dict(model=m, inputs=lambda s: (randn(s, 1, 3, 64, 64),),
                family="torchvision MobileNetV3-small (weights=None, num_classes=10, width_mult=0.5; "
                       "hardswish, hardsigmoid squeeze-excitation)")


class SmallCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 16, 3, padding=1)
        self.c2 = nn.Conv2d(16, 32, 3, padding=1)
        self.head = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.c1(x)), 2)
        x = F.max_pool2d(F.relu(self.c2(x)), 2)
        return self.head(x.flatten(1))


def quantized_cnn() -> Dict[str, Any]:
    return dict(model=SmallCnn(), inputs=lambda s: (randn(s, 1, 3, 32, 32),), kind="quant",
                family="pt2e-quantized CNN (XNNPACKQuantizer symmetric int8, prepare_pt2e/convert_pt2e, "
                       "no delegate: quantize/dequantize ops stay)")


class SeqModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inp = nn.Linear(8, 32)
        self.ln = nn.LayerNorm(32)
        self.out = nn.Linear(32, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.tanh(self.ln(self.inp(x)))
        att = torch.softmax(h @ h.transpose(1, 2) / 32 ** 0.5, dim=-1)
        return self.out((att @ h).sum(dim=1))


def dynamic_seq() -> Dict[str, Any]:
    seq = torch.export.Dim("seq", min=2, max=32)
    return dict(model=SeqModel(), inputs=lambda s: (randn(s, 1, 17, 8),),
                dynamic_shapes=({1: seq},),
                family="dynamic shape (torch.export Dim seq in [2, 32]; input uses 17), self-attention")


class EncDec(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
        self.dec = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dec(self.enc(x))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        return self.enc(x)


class _Method(nn.Module):
    def __init__(self, m: nn.Module, fn: str) -> None:
        super().__init__()
        self.m, self.fn = m, fn

    def forward(self, *a):
        return getattr(self.m, self.fn)(*a)


def two_methods() -> Dict[str, Any]:
    m = EncDec()
    return dict(model=m, inputs=lambda s: (randn(s, 3, 16),), kind="multi",
                methods={"encode": (_Method(m, "encode"), lambda s: (randn(s + 10, 3, 16),))},
                family="two-method program (forward = autoencoder, encode) via to_edge({name: ep})")


class WithLoss(nn.Module):
    def __init__(self, net: nn.Module, loss: nn.Module) -> None:
        super().__init__()
        self.net, self.loss = net, loss

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        p = self.net(x)
        return self.loss(p, y), p.detach()


def _mlp(i: int, o: int) -> nn.Module:
    return nn.Sequential(nn.Linear(i, 16), nn.Tanh(), nn.Linear(16, o))


def train_mse() -> Dict[str, Any]:
    return dict(model=WithLoss(_mlp(6, 2), nn.MSELoss()), inputs=lambda s: (randn(s, 4, 6), randn(s + 50, 4, 2)),
                kind="train", family="training: MLP + MSELoss, joint forward+backward")


def train_l1() -> Dict[str, Any]:
    return dict(model=WithLoss(_mlp(6, 2), nn.L1Loss()), inputs=lambda s: (randn(s, 4, 6), randn(s + 50, 4, 2)),
                kind="train", family="training: MLP + L1Loss, joint forward+backward")


def train_cross_entropy() -> Dict[str, Any]:
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(4 * 8 * 8, 5))
    return dict(model=WithLoss(net, nn.CrossEntropyLoss()), inputs=lambda s: (randn(s, 4, 1, 8, 8), randint(s + 50, 5, 4)),
                kind="train", family="training: small CNN + CrossEntropyLoss, joint forward+backward")


class DwGroupNorm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = nn.Conv2d(16, 32, 1)
        self.gn1, self.gn2 = nn.GroupNorm(4, 16), nn.GroupNorm(8, 32)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu6(self.gn1(self.stem(x)))
        x = F.leaky_relu(self.gn2(self.pw(self.dw(x))), 0.1)
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def dwsep_groupnorm() -> Dict[str, Any]:
    return dict(model=DwGroupNorm(), inputs=lambda s: (randn(s, 2, 3, 32, 32),),
                family="depthwise-separable CNN with GroupNorm, relu6, leaky_relu")


def mlp_layernorm() -> Dict[str, Any]:
    m = nn.Sequential(nn.Linear(20, 64), nn.LayerNorm(64), nn.GELU(approximate="tanh"), nn.Dropout(0.3),
                      nn.Linear(64, 64), nn.LayerNorm(64), nn.ELU(), nn.Dropout(0.3), nn.Linear(64, 3),
                      nn.LogSoftmax(dim=-1))
    return dict(model=m, inputs=lambda s: (randn(s, 5, 20),),
                family="MLP with LayerNorm, tanh-GELU, ELU, Dropout (eval), log_softmax")


class AttnBmm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q, self.k, self.v = nn.Linear(16, 16), nn.Linear(16, 16), nn.Linear(16, 16)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        s = torch.bmm(self.q(x), self.k(x).transpose(1, 2)) / 4.0
        s = s.masked_fill(mask, float("-inf"))
        return torch.bmm(torch.softmax(s, dim=-1), self.v(x))


def attention_bmm() -> Dict[str, Any]:
    causal = torch.triu(torch.ones(8, 8, dtype=torch.bool), diagonal=1).expand(2, 8, 8).contiguous()
    return dict(model=AttnBmm(), inputs=lambda s: (randn(s, 2, 8, 16), causal),
                family="hand-written causal attention (bmm, masked_fill -inf, softmax)")


class Sdpa(nn.Module):
    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def sdpa_causal() -> Dict[str, Any]:
    return dict(model=Sdpa(), inputs=lambda s: (randn(s, 1, 2, 6, 8), randn(s + 1, 1, 2, 6, 8), randn(s + 2, 1, 2, 6, 8)),
                family="F.scaled_dot_product_attention(is_causal=True)")


class TinyDecoder(nn.Module):
    """One llama-style decoder block with a KV cache: the cache is a pair of buffers updated in
    place at input_pos (k_cache[:, :, input_pos] = k) as ExecuTorch's llama example does with
    static shapes (examples/models/llama/attention.py, KVCache), attention over the whole cache
    with the rows of a causal mask buffer at input_pos, RMSNorm, SwiGLU MLP."""

    def __init__(self, vocab: int = 32, dim: int = 16, heads: int = 2, hidden: int = 32, max_len: int = 8) -> None:
        super().__init__()
        self.heads, self.hd = heads, dim // heads
        self.emb = nn.Embedding(vocab, dim)
        self.n1, self.n2, self.nf = nn.RMSNorm(dim, eps=1e-5), nn.RMSNorm(dim, eps=1e-5), nn.RMSNorm(dim, eps=1e-5)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.w1, self.w3 = nn.Linear(dim, hidden, bias=False), nn.Linear(dim, hidden, bias=False)
        self.w2 = nn.Linear(hidden, dim, bias=False)
        self.output = nn.Linear(dim, vocab, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, heads, max_len, self.hd))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_len, self.hd))
        self.register_buffer("mask", torch.tril(torch.ones(max_len, max_len, dtype=torch.bool)))

    def forward(self, tokens: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        h = self.emb(tokens)
        b, s, d = h.shape
        x = self.n1(h)
        q = self.wq(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        k = self.wk(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        v = self.wv(x).view(b, s, self.heads, self.hd).transpose(1, 2)
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        a = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=self.mask[input_pos])
        h = h + self.wo(a.transpose(1, 2).reshape(b, s, d))
        x = self.n2(h)
        h = h + self.w2(F.silu(self.w1(x)) * self.w3(x))
        return self.output(self.nf(h))


def _decoder_steps(s: int) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    """Three calls of 2 tokens each at positions 0-1, 2-3, 4-5 (static shapes, as a chunked
    prefill): every call attends to what the previous ones wrote into the cache."""
    tok = randint(s, 32, 3, 2)
    return [(tok[i:i + 1], torch.arange(2 * i, 2 * i + 2)) for i in range(3)]


STATE_NOTE = ("stateful: the program mutates buffers (KV cache). <name>.input*/output*.npy are the first "
              "call on a freshly loaded method; <name>.step<k>.input*/output*.npy (k >= 1) the calls after it, "
              "in order, on the same loaded method (the cache carries over). The .bpte's 2 test cases are "
              "calls 0 and 1 of that sequence (run in order on one loaded method).")


def kv_cache_decoder() -> Dict[str, Any]:
    # No gradients: the in-place cache update must not see parameters that require grad.
    return dict(model=TinyDecoder().requires_grad_(False), inputs=lambda s: _decoder_steps(s)[0], steps=_decoder_steps,
                family="llama-style decoder block with a KV cache in mutable buffers updated in place by "
                       "position (k_cache[:, :, input_pos] = k -> index_put + copy_ write-back), RMSNorm, "
                       "SDPA with a causal-mask buffer row, SwiGLU; " + STATE_NOTE)


def llm_quantized_decoder() -> Dict[str, Any]:
    return dict(model=TinyDecoder(), inputs=lambda s: _decoder_steps(s)[0], steps=_decoder_steps, kind="llm",
                family="the KV-cache decoder quantized and exported by ExecuTorch's LLM flow: LLMEdgeManager, "
                       "source transforms get_quant_embedding_transform('4,8') (embedding_4bit, group 8) and "
                       "get_quant_weight_transform('int8') (WeightOnlyInt8Linear: int8 weights, bf16 scales), "
                       "to_executorch with the builder's settings (ConvertToLinearPass, alloc_graph_input=False) "
                       "but without constant propagation; " + STATE_NOTE)


class SmallConvMlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Linear(8 * 4 * 4, 32)
        self.ln = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
        x = F.adaptive_avg_pool2d(x, 4).flatten(1)
        x = F.gelu(self.ln(self.fc1(x)))
        return torch.softmax(self.fc2(x), dim=-1)


def half_cnn_mlp() -> Dict[str, Any]:
    m = _calibrate_bn(SmallConvMlp(), (4, 3, 16, 16)).eval().half()
    return dict(model=m, inputs=lambda s: (randn(s, 2, 3, 16, 16).half(),), tolerance="half",
                family="float16 end to end (model.half(), float16 input and output): Conv2d, BatchNorm2d, "
                       "max pool, adaptive avg pool, Linear, LayerNorm, GELU, softmax")


class Bf16Wrapper(nn.Module):
    """bfloat16 inside, float32 at the boundary (.npy has no bfloat16)."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net.to(torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x.to(torch.bfloat16)).float()


def bf16_cnn_mlp() -> Dict[str, Any]:
    m = Bf16Wrapper(_calibrate_bn(SmallConvMlp(), (4, 3, 16, 16)).eval())
    return dict(model=m, inputs=lambda s: (randn(s, 2, 3, 16, 16),), tolerance="half",
                family="bfloat16 end to end inside (weights and activations), float32 input converted on entry "
                       "and the float32 output on exit (.npy has no bfloat16): Conv2d, BatchNorm2d, pools, "
                       "Linear, LayerNorm, GELU, softmax")


class AntialiasNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.head = nn.Linear(8, 5)

    def forward(self, x: torch.Tensor):
        x = F.interpolate(x, size=(20, 20), mode="bilinear", antialias=True, align_corners=False)
        x = F.relu(self.c1(x))
        y = F.interpolate(x, scale_factor=0.35, mode="bilinear", antialias=True)
        y = F.relu(self.c2(y))
        y = F.interpolate(y, size=(10, 11), mode="bilinear", antialias=True, align_corners=True)
        return self.head(y.mean((2, 3))), y


def antialias_resize() -> Dict[str, Any]:
    return dict(model=AntialiasNet(), inputs=lambda s: (randn(s, 1, 3, 31, 27),),
                family="image model with antialiased bilinear resizing (F.interpolate antialias=True: 31x27 -> "
                       "20x20, x0.35 -> 7x7, up to 10x11 with align_corners=True), Conv2d, mean, Linear; "
                       "two outputs")


MODELS: Dict[str, Callable[[], Dict[str, Any]]] = {f.__name__: f for f in (
    transformer_encoder, vit_tiny, lstm_text, gru_text, audio_conv1d, unet, efficientnet_b0,
    mobilenet_v3_small, quantized_cnn, dynamic_seq, two_methods, train_mse, train_l1,
    train_cross_entropy, dwsep_groupnorm, mlp_layernorm, attention_bmm, sdpa_causal,
    kv_cache_decoder, llm_quantized_decoder, half_cnn_mlp, bf16_cnn_mlp, antialias_resize)}
NEWER = {"kv_cache_decoder", "llm_quantized_decoder", "half_cnn_mlp", "bf16_cnn_mlp", "antialias_resize"}


# --------------------------------------------------------------------------- export


def _flat(o: Any) -> List[torch.Tensor]:
    if isinstance(o, torch.Tensor):
        return [o]
    out: List[torch.Tensor] = []
    for x in o:
        out += _flat(x)
    return out


def _shapes(ts: List[Any]) -> List[Dict[str, Any]]:
    return [{"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
            if isinstance(t, torch.Tensor) else {"value": to_jsonable(t)} for t in ts]


def _max_diff(a: List[Any], b: List[torch.Tensor]) -> List[float]:
    out = []
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor):
            out.append(float((x.double() - y.double()).abs().max()) if x.numel() else 0.0)
    return out


def export_one(name: str, out: Path) -> Dict[str, Any]:
    from executorch.exir import EdgeCompileConfig, to_edge, to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    torch.manual_seed(MODEL_SEED)
    spec = MODELS[name]()
    model, inputs = spec["model"], spec["inputs"]
    kind = spec.get("kind", "infer")
    if kind == "train":
        model.train()
    else:
        model.eval()
    ex = inputs(INPUT_SEEDS[0])
    calls: List[str] = []
    eager_fn: Dict[str, Any] = {"forward": model}
    method_inputs = {"forward": inputs}
    backend_config = None  # ExecutorchBackendConfig for to_executorch (None: the default)
    extra: Dict[str, Any] = {}
    # A program with state: eager answers come from fresh copies of the model as it was before
    # export, fed the same sequence of calls.
    initial = copy.deepcopy(model) if "steps" in spec else None

    if kind == "train":
        from torch.export.experimental import _export_forward_backward
        ep = _export_forward_backward(torch.export.export(model, ex, strict=True))
        edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
        calls = ["torch.export.export(model, inputs, strict=True)",
                 "torch.export.experimental._export_forward_backward(ep)",
                 "to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))",
                 "to_executorch()"]
    elif kind == "quant":
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer, get_symmetric_quantization_config)
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        import executorch.kernels.quantized  # noqa: F401  registers the quantize/dequantize out variants
        q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
        gm = torch.export.export(model, ex).module()
        gm = prepare_pt2e(gm, q)
        with torch.no_grad():
            for i in range(4):
                gm(*inputs(100 + i))
        gm = convert_pt2e(gm)
        eager_fn["forward"] = gm
        ep = torch.export.export(gm, ex)
        edge = to_edge_transform_and_lower(ep)
        calls = ["torch.export.export(model, inputs).module()",
                 "prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))",
                 "4 calibration batches (seeds 100..103)", "convert_pt2e(gm)",
                 "torch.export.export(gm, inputs)", "to_edge_transform_and_lower(ep)  # no partitioner",
                 "to_executorch()"]
    elif kind == "multi":
        eps = {"forward": torch.export.export(model, ex)}
        for mname, (mod, mi) in spec["methods"].items():
            eps[mname] = torch.export.export(mod.eval(), mi(INPUT_SEEDS[0]))
            eager_fn[mname] = mod
            method_inputs[mname] = mi
        edge = to_edge(eps)
        calls = ["torch.export.export(model, inputs) per method",
                 "to_edge({'forward': ep_forward, 'encode': ep_encode})", "to_executorch()"]
    elif kind == "llm":
        # ExecuTorch's own LLM export flow (extension/llm/export/builder.py) and quantization
        # source transforms (examples/models/llama/source_transformation/quantize.py).
        from executorch.backends.xnnpack._passes.convert_to_linear import ConvertToLinearPass
        from executorch.examples.models.llama.source_transformation.quantize import (
            get_quant_embedding_transform, get_quant_weight_transform)
        from executorch.exir.capture._config import ExecutorchBackendConfig
        from executorch.exir.passes import MemoryPlanningPass
        from executorch.exir.passes.sym_shape_eval_pass import ConstraintBasedSymShapeEvalPass
        from executorch.extension.llm.export.builder import DType, LLMEdgeManager
        import executorch.kernels.quantized  # noqa: F401  quantized_decomposed out variants
        pristine = copy.deepcopy(model)

        def manager(m: nn.Module) -> Any:
            mgr = LLMEdgeManager(model=m, modelname=name, max_seq_len=8, use_kv_cache=True,
                                 example_inputs=ex, dtype=DType.fp32)
            return mgr.source_transform([get_quant_embedding_transform("4,8"), get_quant_weight_transform("int8")])
        mgr = manager(model)
        model = mgr.model.eval()
        eager_fn["forward"] = model
        initial = copy.deepcopy(model)
        mgr.export().to_edge_transform_and_lower(None)
        mgr.edge_manager.transform([ConvertToLinearPass()])
        edge = mgr.edge_manager

        backend_config = ExecutorchBackendConfig(
            extract_delegate_segments=True, do_quant_fusion_and_const_prop=False,
            memory_planning_pass=MemoryPlanningPass(alloc_graph_input=False),
            sym_shape_eval_pass=ConstraintBasedSymShapeEvalPass())
        # The builder's own to_executorch (constant propagation on), on a second copy.
        extra["builder_flow"] = lambda: manager(pristine).export().to_edge_transform_and_lower(None).to_executorch().export_program
        calls = ["torch.manual_seed(0); TinyDecoder()",
                 "LLMEdgeManager(model, modelname, max_seq_len=8, use_kv_cache=True, example_inputs, dtype=DType.fp32)",
                 "source_transform([get_quant_embedding_transform('4,8'), get_quant_weight_transform('int8')])",
                 "export()  # torch.export strict=True, run_decompositions({})",
                 "to_edge_transform_and_lower(None)  # EdgeCompileConfig(_check_ir_validity=False, _skip_dim_order=True)",
                 "edge_manager.transform([ConvertToLinearPass()])",
                 "edge_manager.to_executorch(ExecutorchBackendConfig(extract_delegate_segments=True, "
                 "do_quant_fusion_and_const_prop=False, memory_planning_pass=MemoryPlanningPass("
                 "alloc_graph_input=False), sym_shape_eval_pass=ConstraintBasedSymShapeEvalPass()))"]
    else:
        ds = spec.get("dynamic_shapes")
        ep = torch.export.export(model, ex, dynamic_shapes=ds)
        edge = to_edge_transform_and_lower(ep)
        calls = [("torch.export.export(model, inputs, dynamic_shapes=...)" if ds else
                  "torch.export.export(model, inputs)"), "to_edge_transform_and_lower(ep)", "to_executorch()"]
    et = edge.to_executorch(backend_config)
    pte = bytes(et.buffer)
    (out / f"{name}.pte").write_bytes(pte)

    rt = _load_for_executorch_from_buffer(pte)
    meta: Dict[str, Any] = {"name": name, "family": spec["family"], "kind": kind,
                            "exporter_calls": calls, "versions": versions(),
                            "model_seed": MODEL_SEED, "input_seed": INPUT_SEEDS[0],
                            "pte_bytes": len(pte), "methods": {}}
    if name in NEWER:
        # The operators each method calls, read from the program (the models added for the
        # stateful, quantized, 16-bit and antialiasing families record them; the older ones
        # keep their files as they were).
        meta["operators"] = {p.name: sorted({f"{o.name}.{o.overload}" if o.overload else o.name for o in p.operators})
                             for p in et.executorch_program.execution_plan}
    if spec.get("tolerance") == "half":
        meta["suggested_tolerance"] = {"rtol": 1e-2, "atol": 1e-3,
                                       "why": "16-bit floating point: one unit in the last place is ~1e-3 relative"}
    if "builder_flow" in extra:
        # What the LLM builder's own to_executorch (with constant propagation) makes of the same
        # model: the int8 weights' conversion to float32 is folded into float32 constants.
        folded = extra["builder_flow"]()
        fplan = folded.executorch_program.execution_plan[0]
        meta["builder_to_executorch_with_const_prop"] = {
            "pte_bytes": len(folded.buffer),
            "operators": sorted({f"{o.name}.{o.overload}" if o.overload else o.name for o in fplan.operators}),
            "note": "ExecutorchBackendConfig(do_quant_fusion_and_const_prop=True) as LLMEdgeManager.to_executorch "
                    "uses: constant propagation folds weight.to(float32) of the int8 linear weights into float32 "
                    "constants, so only the 4-bit embedding stays quantized; this fixture keeps the int8 weights"}
    if kind == "llm":  # LLMEdgeManager adds constant methods (get_max_seq_len, ...)
        for p in et.executorch_program.execution_plan:
            if p.name != "forward":
                meta.setdefault("constant_methods", {})[p.name] = to_jsonable(list(rt.run_method(p.name, ())))
    if "steps" in spec:
        meta["state"] = STATE_NOTE
        seq = spec["steps"](INPUT_SEEDS[0])
        eager_m = copy.deepcopy(initial)
        meta["steps"] = []
        for k, inp in enumerate(seq):
            prefix = name if k == 0 else f"{name}.step{k}"
            for i, t in enumerate(inp):
                save_npy(out / f"{prefix}.input{i}.npy", t)
            got = list(rt.run_method("forward", tuple(inp)))
            for i, t in enumerate(got):
                save_npy(out / f"{prefix}.output{i}.npy", t)
            with torch.no_grad():
                ref = _flat(eager_m(*inp))
            entry = {"inputs": _shapes(list(inp)), "outputs": _shapes(got), "max_abs_diff_vs_eager": _max_diff(got, ref)}
            if k == 0:
                meta["methods"]["forward"] = entry
            else:
                meta["steps"].append(dict(files=prefix, **entry))
        eager_fn = {}  # done; the bundled program is made below from the same sequence
    for mname, fn in eager_fn.items():
        inp = method_inputs[mname](INPUT_SEEDS[0])
        prefix = name if mname == "forward" else f"{name}.{mname}"
        for i, t in enumerate(inp):
            save_npy(out / f"{prefix}.input{i}.npy", t)
        got = list(rt.run_method(mname, tuple(inp)))
        for i, t in enumerate(got):
            if isinstance(t, torch.Tensor):
                save_npy(out / f"{prefix}.output{i}.npy", t)
        entry: Dict[str, Any] = {"inputs": _shapes(list(inp)), "outputs": _shapes(got)}
        if kind == "train":
            # The joint program returns (loss, prediction, gradients...): compare with eager autograd.
            model.zero_grad()
            loss, pred = fn(*inp)
            loss.backward()
            ref = [loss.detach(), pred] + [p.grad for p in model.parameters()]
            entry["eager_reference"] = "loss, prediction, then parameter gradients from eager autograd"
        else:
            with torch.no_grad():
                ref = _flat(fn(*inp))
        entry["max_abs_diff_vs_eager"] = _max_diff(got, ref)
        meta["methods"][mname] = entry

    if kind != "train":
        from executorch.devtools import BundledProgram
        from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
        from executorch.devtools.bundled_program.serialize import (
            serialize_from_bundled_program_to_flatbuffer)
        suites = []
        for mname, fn in eager_fn.items():
            cases = []
            for s in INPUT_SEEDS:
                inp = method_inputs[mname](s)
                with torch.no_grad():
                    exp = _flat(fn(*inp))
                cases.append(MethodTestCase(inputs=list(inp), expected_outputs=exp))
            suites.append(MethodTestSuite(method_name=mname, test_cases=cases))
        bpte_note = f"{name}.bpte ({len(INPUT_SEEDS)} test cases per method, expected = eager)"
        if "steps" in spec:
            eager_m = copy.deepcopy(initial)
            cases = []
            for inp in spec["steps"](INPUT_SEEDS[0])[:2]:
                with torch.no_grad():
                    cases.append(MethodTestCase(inputs=list(inp), expected_outputs=_flat(eager_m(*inp))))
            suites = [MethodTestSuite(method_name="forward", test_cases=cases)]
            bpte_note = (f"{name}.bpte (2 test cases: calls 0 and 1 of the stored sequence, in order on one "
                         "loaded method; expected = eager on a fresh model fed the same calls)")
        try:
            bp = BundledProgram(et, suites)
            (out / f"{name}.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))
            meta["bpte"] = bpte_note
        except Exception as e:  # noqa: BLE001  recorded, not fatal
            meta["bpte"] = f"not written: {e!r}"
    else:
        meta["bpte"] = "not written: training programs are not inference programs"
    with open(out / f"{name}.json", "w") as f:
        json.dump(to_jsonable(meta), f, indent=1, allow_nan=False)
        f.write("\n")
    return meta


RAW_LIMIT = 384 * 1024  # bigger files go into models.tar.xz


def pack(work: Path, dest: Path) -> None:
    """Copy small files raw, put big ones into dest/models.tar.xz; write dest/index.json."""
    import hashlib
    import os
    import shutil
    import subprocess
    work, dest = work.resolve(), dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():
        if old.name != "MANIFEST.md":
            old.unlink()
    files = sorted(p for p in work.iterdir() if p.is_file())
    big = [p.name for p in files if p.stat().st_size > RAW_LIMIT]
    # Programs sharing weights sit next to each other (<name>.pte, <name>.bpte) in name order.
    index = {}
    for p in files:
        index[p.name] = {"size": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                         "archive": "models.tar.xz" if p.name in big else None}
        if p.name not in big:
            shutil.copyfile(p, dest / p.name)
    if big:
        env = dict(os.environ, XZ_OPT="-9e")
        subprocess.run(["tar", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner",
                        "--format=gnu", "-cJf", str(dest / "models.tar.xz"), *big],
                       cwd=work, check=True, env=env)
    (dest / "index.json").write_text(json.dumps(index, indent=1) + "\n")


def main() -> None:
    if sys.argv[1] == "--pack":
        pack(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(MODELS)
    failed = []
    for n in names:
        try:
            meta = export_one(n, out)
            d = {m: e["max_abs_diff_vs_eager"] for m, e in meta["methods"].items()}
            print(f"[{n}] ok pte={meta['pte_bytes']} max_abs_diff={d}", flush=True)
        except Exception as e:  # noqa: BLE001
            import traceback
            traceback.print_exc()
            print(f"[{n}] FAILED: {e!r}", flush=True)
            failed.append(n)
    if failed:
        print("failed:", " ".join(failed))
        sys.exit(1)


if __name__ == "__main__":
    main()
