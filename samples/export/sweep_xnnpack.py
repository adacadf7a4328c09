"""Sweep real models through ExecuTorch 1.5.1 XnnpackPartitioner and compare etscope's runtime
against ExecuTorch's own runtime.

Usage:  python sweep_xnnpack.py [names...]   # all models (each in its own subprocess), writes results.json
        python sweep_xnnpack.py --one NAME   # one model (internal)
Run with the export venv's python (samples/export/requirements.txt). Work directory $SWEEP_DIR
(default /tmp/sweep); etscope binary $ETSCOPE (default build/bin/etscope of this checkout).
Not part of the build or the tests: a check, by hand, that etscope's runtime agrees with
ExecuTorch's on models nobody here wrote (torchvision CNNs, ViT, Swin, LSTM/GRU, attention, pt2e
int8, bf16, fp16). It found the int8 rounding-tie differences, the bf16 .npy outputs and the
quantized delegate arguments fixed in stop 24.
Per model, $SWEEP_DIR/<name>/ holds <name>.pte, input<i>.npy (or .bin raw bytes for bf16),
et_output<i>.npy (ExecuTorch runtime), eager_output<i>.npy, etscope/output_<i>.npy, result.json.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(os.environ.get("SWEEP_DIR", "/tmp/sweep"))
ETSCOPE = os.environ.get("ETSCOPE", str(Path(__file__).resolve().parents[2] / "build/bin/etscope"))
PY = sys.executable
CALIB_SEEDS = (100, 101, 102, 103)

# --------------------------------------------------------------------------- models


def _models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision.models as tvm
    import torchvision.models.segmentation as seg

    def img(n):
        return lambda g: (torch.randn(1, 3, n, n, generator=g),)

    class OutOnly(nn.Module):
        def __init__(self, m):
            super().__init__()
            self.m = m

        def forward(self, x):
            return self.m(x)["out"]

    class LSTMNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.LSTM(16, 32, num_layers=2, batch_first=True)
            self.fc = nn.Linear(32, 5)

        def forward(self, x):
            y, (h, c) = self.rnn(x)
            return self.fc(y), h

    class GRUNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = nn.GRU(16, 24, num_layers=1, batch_first=True)
            self.fc = nn.Linear(24, 5)

        def forward(self, x):
            y, h = self.rnn(x)
            return self.fc(y[:, -1])

    class Audio1d(nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = nn.Conv1d(1, 16, 9, stride=2, padding=4)
            self.b1 = nn.BatchNorm1d(16)
            self.c2 = nn.Conv1d(16, 32, 5, padding=2)
            self.b2 = nn.BatchNorm1d(32)
            self.c3 = nn.Conv1d(32, 32, 3, padding=1, groups=32)
            self.fc = nn.Linear(32, 10)

        def forward(self, x):
            x = F.avg_pool1d(F.gelu(self.b1(self.c1(x))), 2)
            x = nn.AvgPool1d(4)(F.gelu(self.b2(self.c2(x))))
            x = F.gelu(self.c3(x))
            return self.fc(x.mean(dim=-1))

    class UpDecoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.up = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
            self.up2 = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1)
            self.conv = nn.Conv2d(8 + 16, 8, 3, padding=1)
            self.out = nn.Conv2d(16, 3, 1)

        def forward(self, x):                                   # [1,16,8,8]
            a = F.relu(self.up(x))                              # [1,8,16,16]
            a = F.interpolate(a, scale_factor=2, mode="nearest")  # [1,8,32,32]
            b = F.interpolate(x, size=(32, 32), mode="bilinear", align_corners=False)
            h = F.relu(self.conv(torch.cat([a, b], dim=1)))     # [1,8,32,32]
            u = F.relu(self.up2(F.max_pool2d(h, 2)))            # [1,8,32,32]
            c = F.interpolate(h, scale_factor=2, mode="bilinear", align_corners=True)
            return self.out(torch.cat([u, h], 1)), c

    class Acts(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)
            self.fc1 = nn.Linear(8 * 16 * 16, 64)
            self.fc2 = nn.Linear(64, 10)

        def forward(self, x):
            h = self.conv(x)
            a = F.hardtanh(h, -0.5, 0.7) + F.relu6(h * 4) + F.elu(h) + F.leaky_relu(h, 0.1)
            a = torch.sigmoid(a) + torch.tanh(h) + F.softplus(h)
            v = F.relu6(self.fc1(a.flatten(1)))
            return torch.tanh(self.fc2(F.elu(v, alpha=0.5))), F.softplus(v, beta=2.0)

    class Attn(nn.Module):
        def __init__(self, d=32, heads=4):
            super().__init__()
            self.h = heads
            self.ln1 = nn.LayerNorm(d)
            self.qkv = nn.Linear(d, 3 * d)
            self.proj = nn.Linear(d, d)
            self.ln2 = nn.LayerNorm(d)
            self.ff1 = nn.Linear(d, 4 * d)
            self.ff2 = nn.Linear(4 * d, d)

        def forward(self, x):                                     # [B,T,D]
            B, T, D = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
            q = q.reshape(B, T, self.h, D // self.h).transpose(1, 2)
            k = k.reshape(B, T, self.h, D // self.h).transpose(1, 2)
            v = v.reshape(B, T, self.h, D // self.h).transpose(1, 2)
            a = F.scaled_dot_product_attention(q, k, v)
            x = x + self.proj(a.transpose(1, 2).reshape(B, T, D))
            return x + self.ff2(F.gelu(self.ff1(self.ln2(x))))

    class AttnCausal(Attn):
        def forward(self, x):
            B, T, D = x.shape
            q, k, v = self.qkv(self.ln1(x)).split(D, dim=-1)
            sh = lambda t: t.reshape(B, T, self.h, D // self.h).transpose(1, 2)  # noqa: E731
            a = F.scaled_dot_product_attention(sh(q), sh(k), sh(v), is_causal=True)
            return x + self.proj(a.transpose(1, 2).reshape(B, T, D))

    class MatMul(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.randn(8, 12) * 0.3)

        def forward(self, x, y):                                  # x [2,4,6,8], y [2,4,8,5]
            a = torch.matmul(x, y)                                # [2,4,6,5]
            b = a.permute(0, 2, 1, 3).reshape(2, 6, 20)           # [2,6,20]
            c = torch.bmm(b, b.transpose(1, 2))                   # [2,6,6]
            d = torch.matmul(x, self.w)                           # [2,4,6,12]
            e = d.permute(3, 0, 1, 2).reshape(12, -1)             # [12,48]
            return c, e @ e.t(), torch.bmm(x.reshape(8, 6, 8), y.reshape(8, 8, 5))

    class Reduce(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 8, 3, padding=1)

        def forward(self, x):
            h = self.conv(x)
            m = h.mean(dim=[2, 3], keepdim=True)
            a = torch.amax(h, dim=[2, 3], keepdim=True)
            mx = torch.max(h, dim=1).values
            s = h.sum(dim=-1)
            return h - m + a, mx, s, torch.amax(h, dim=1, keepdim=True), h.mean(dim=-1)

    class Reduce2(Reduce):  # `reductions` without torch.max(dim).values (fails to lower)
        def forward(self, x):
            h = self.conv(x)
            m = h.mean(dim=[2, 3], keepdim=True)
            a = torch.amax(h, dim=[2, 3], keepdim=True)
            return (h - m + a, torch.amax(h, dim=1), h.sum(dim=-1), torch.amax(h, dim=-1, keepdim=True),
                    h.mean(dim=-1), torch.amin(h, dim=[2, 3], keepdim=True), h.sum(dim=[1, 2]))

    class ReduceNoKeep(nn.Module):  # amax with keepdim=False
        def forward(self, x):
            return torch.amax(x, dim=1)

    class SmallCnn(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
            self.bn = nn.BatchNorm2d(16)
            self.conv2 = nn.Conv2d(16, 16, 3, padding=1, groups=16)
            self.fc = nn.Linear(16, 10)

        def forward(self, x):
            h = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
            h = F.hardswish(self.conv2(h)) + h
            h = F.adaptive_avg_pool2d(h, 1).flatten(1)
            return torch.softmax(self.fc(h), dim=-1), torch.sigmoid(h)

    class DynMlp(nn.Module):
        def __init__(self, d=64):
            super().__init__()
            self.ln = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)
            self.q = nn.Linear(d, d)
            self.k = nn.Linear(d, d)
            self.head = nn.Linear(d, 16)

        def forward(self, x):                                 # [1,T,D]
            h = x + self.fc2(F.gelu(self.fc1(self.ln(x))))
            att = torch.softmax(self.q(h) @ self.k(h).transpose(1, 2) / 8.0, dim=-1)
            return self.head(att @ h)

    def vit():
        m = tvm.VisionTransformer(image_size=32, patch_size=8, num_layers=2, num_heads=2,
                                  hidden_dim=32, mlp_dim=64, num_classes=10)
        nn.init.normal_(m.heads.head.weight, std=0.2)  # torchvision zero-inits the head
        return m

    rn = lambda g, *s: torch.randn(*s, generator=g)  # noqa: E731

    class Fn(nn.Module):
        def __init__(self, fn, **mods):
            super().__init__()
            self.fn = fn
            for k, v in mods.items():
                setattr(self, k, v)

        def forward(self, *x):
            return self.fn(self, *x)

    probes = {
        # single ops (bf16 / quantized) to localise the whole-model mismatches
        "conv": (lambda: Fn(lambda s, x: s.c(x), c=nn.Conv2d(8, 16, 3, padding=1)), (1, 8, 12, 12)),
        "conv_relu": (lambda: Fn(lambda s, x: F.relu(s.c(x)), c=nn.Conv2d(8, 16, 3, padding=1)), (1, 8, 12, 12)),
        "conv_s2": (lambda: Fn(lambda s, x: s.c(x), c=nn.Conv2d(8, 16, 3, stride=2, padding=1)), (1, 8, 12, 12)),
        "dwconv": (lambda: Fn(lambda s, x: s.c(x), c=nn.Conv2d(16, 16, 3, padding=1, groups=16)), (1, 16, 12, 12)),
        "dwconv_relu6": (lambda: Fn(lambda s, x: F.relu6(s.c(x)), c=nn.Conv2d(16, 16, 3, padding=1, groups=16)),
                         (1, 16, 12, 12)),
        "conv1x1": (lambda: Fn(lambda s, x: s.c(x), c=nn.Conv2d(16, 24, 1)), (1, 16, 12, 12)),
        "linear": (lambda: Fn(lambda s, x: s.l(x), l=nn.Linear(64, 32)), (1, 64)),
        "add": (lambda: Fn(lambda s, x: s.a(x) + s.b(x), a=nn.Conv2d(8, 8, 3, padding=1), b=nn.Conv2d(8, 8, 1)),
                (1, 8, 12, 12)),
        "add_relu": (lambda: Fn(lambda s, x: F.relu(s.a(x) + x), a=nn.Conv2d(8, 8, 3, padding=1)), (1, 8, 12, 12)),
        "maxpool": (lambda: Fn(lambda s, x: F.max_pool2d(s.c(x), 3, 2, 1), c=nn.Conv2d(8, 8, 1)), (1, 8, 12, 12)),
        "avgpool": (lambda: Fn(lambda s, x: F.adaptive_avg_pool2d(s.c(x), 1), c=nn.Conv2d(8, 8, 1)), (1, 8, 12, 12)),
        "mean": (lambda: Fn(lambda s, x: s.c(x).mean(dim=(2, 3), keepdim=True), c=nn.Conv2d(8, 8, 1)), (1, 8, 12, 12)),
        "batchnorm": (lambda: Fn(lambda s, x: s.bn(x), bn=nn.BatchNorm2d(8)), (1, 8, 12, 12)),
        "sigmoid": (lambda: Fn(lambda s, x: torch.sigmoid(x)), (1, 64)),
        "softmax": (lambda: Fn(lambda s, x: torch.softmax(x, dim=-1)), (1, 64)),
        "relu": (lambda: Fn(lambda s, x: F.relu(x)), (1, 64)),
        "hardswish": (lambda: Fn(lambda s, x: F.hardswish(x)), (1, 64)),
        "addmm": (lambda: Fn(lambda s, x: s.l(x), l=nn.Linear(16, 10)), (1, 16)),
        "maxpool_only": (lambda: Fn(lambda s, x: F.max_pool2d(x, 2)), (1, 8, 12, 12)),
        "mean_only": (lambda: Fn(lambda s, x: x.mean(dim=(-1, -2), keepdim=True)), (1, 8, 12, 12)),
        "add_only": (lambda: Fn(lambda s, x: x + x * 0.37), (1, 8, 12, 12)),
    }

    def _probe(build, shape, dtype=None):
        def b():
            m = build()
            for p in m.parameters():
                p.data.normal_(0, 0.3)
            if isinstance(getattr(m, "bn", None), nn.BatchNorm2d):
                m.bn.running_mean.normal_(0, 0.5)
                m.bn.running_var.uniform_(0.5, 2.0)
            return m.to(dtype) if dtype is not None else m
        return b, (lambda g: (rn(g, *shape).to(dtype) if dtype is not None else rn(g, *shape),))
    M = {
        "resnet18": (lambda: tvm.resnet18(), img(64)),
        "mobilenet_v2": (lambda: tvm.mobilenet_v2(), img(64)),
        "mobilenet_v3_large": (lambda: tvm.mobilenet_v3_large(), img(64)),
        "efficientnet_b0": (lambda: tvm.efficientnet_b0(), img(64)),
        "squeezenet1_1": (lambda: tvm.squeezenet1_1(), img(64)),
        "shufflenet_v2_x0_5": (lambda: tvm.shufflenet_v2_x0_5(), img(64)),
        "mnasnet0_5": (lambda: tvm.mnasnet0_5(), img(64)),
        "regnet_x_400mf": (lambda: tvm.regnet_x_400mf(), img(64)),
        "googlenet": (lambda: tvm.googlenet(aux_logits=False, init_weights=True), img(64)),
        "densenet121": (lambda: tvm.densenet121(), img(64)),  # 32x32: eager output NaN after BN calibration
        "convnext_tiny": (lambda: tvm.convnext_tiny(), img(64)),
        "vit_small": (vit, img(32)),
        "swin_t": (lambda: tvm.swin_t(), img(64)),
        "deeplabv3_mbv3": (lambda: OutOnly(seg.deeplabv3_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=5, aux_loss=False)), img(96)),
        "lraspp_mbv3": (lambda: OutOnly(seg.lraspp_mobilenet_v3_large(
            weights=None, weights_backbone=None, num_classes=5)), img(96)),
        "lstm": (LSTMNet, lambda g: (rn(g, 1, 10, 16),)),
        "gru": (GRUNet, lambda g: (rn(g, 1, 10, 16),)),
        "audio1d": (Audio1d, lambda g: (rn(g, 1, 1, 1600),)),
        "updecoder": (UpDecoder, lambda g: (rn(g, 1, 16, 8, 8),)),
        "activations": (Acts, lambda g: (rn(g, 1, 3, 16, 16),)),
        "attention": (Attn, lambda g: (rn(g, 1, 16, 32),)),
        "attention_causal": (AttnCausal, lambda g: (rn(g, 1, 16, 32),)),
        "matmul": (MatMul, lambda g: (rn(g, 2, 4, 6, 8), rn(g, 2, 4, 8, 5))),
        "reductions": (Reduce, lambda g: (rn(g, 1, 3, 12, 10),)),
        "amax_nokeepdim": (ReduceNoKeep, lambda g: (rn(g, 1, 3, 12, 10),)),
        "reductions2": (Reduce2, lambda g: (rn(g, 1, 3, 12, 10),)),
        "bf16_cnn": (lambda: SmallCnn().to(torch.bfloat16),
                     lambda g: (rn(g, 1, 3, 16, 16).to(torch.bfloat16),)),
        "fp16_cnn": (lambda: SmallCnn().half(), lambda g: (rn(g, 1, 3, 16, 16).half(),)),
        "q_resnet18": (lambda: tvm.resnet18(), img(64), "static"),
        "q_mobilenet_v2": (lambda: tvm.mobilenet_v2(), img(64), "static"),
        "dq_mlp": (DynMlp, lambda g: (rn(g, 1, 16, 64),), "dynamic"),
    }
    def r18_trunc(k):
        def b():
            r = tvm.resnet18()
            parts = [nn.Sequential(r.conv1, r.bn1, r.relu), r.maxpool, r.layer1, r.layer2, r.layer3, r.layer4,
                     nn.Sequential(r.avgpool, nn.Flatten(1), r.fc)]
            return nn.Sequential(*parts[:k])
        return b

    def mb2_trunc(k):
        return lambda: tvm.mobilenet_v2().features[:k]

    class R18Cut(nn.Module):
        # stem, maxpool, then layer1 block0/1 cut at: 0 conv1, 1 bn1+relu, 2 conv2+bn2, 3 +identity, 4 relu
        def __init__(self, blk, cut):
            super().__init__()
            self.r = tvm.resnet18()
            self.blk, self.cut = blk, cut

        def forward(self, x):
            r = self.r
            x = r.maxpool(r.relu(r.bn1(r.conv1(x))))
            for i, b in enumerate(r.layer1[:self.blk + 1]):
                last = i == self.blk
                y = b.relu(b.bn1(b.conv1(x)))
                if last and self.cut == 1:
                    return y
                y = b.bn2(b.conv2(y))
                if last and self.cut == 2:
                    return y
                y = y + x
                if last and self.cut == 3:
                    return y
                x = b.relu(y)
            return x

    for blk in (0, 1):
        for cut in (1, 2, 3, 4):
            M[f"trunc_q_r18l1_b{blk}_c{cut}"] = ((lambda blk=blk, cut=cut: R18Cut(blk, cut)), img(64), "static")
    for k in range(1, 8):
        M[f"trunc_q_resnet18_{k}"] = (r18_trunc(k), img(64), "static")
    for k in (1, 2, 3, 4, 8, 14, 19):
        M[f"trunc_q_mobilenet_v2_{k}"] = (mb2_trunc(k), img(64), "static")
    # features + global average pool (+ the classifier's Linear), no flatten-dropout difference
    M["trunc_q_mobilenet_v2_pool"] = ((lambda: nn.Sequential(tvm.mobilenet_v2().features, nn.AdaptiveAvgPool2d(1))),
                                      img(64), "static")
    for k, (b, shape) in probes.items():
        M[f"probe_bf16_{k}"] = _probe(b, shape, torch.bfloat16)
        M[f"probe_q_{k}"] = _probe(b, shape) + ("static",)
    return M


# --------------------------------------------------------------------------- helpers


def _save_tensor(t, path_base):
    """.npy, or raw bytes (.bin) for bfloat16 (no numpy dtype). Returns the path."""
    import numpy as np
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:
        p = f"{path_base}.bin"
        t.view(torch.int16).numpy().tofile(p)
        np.save(f"{path_base}.as_f32.npy", t.float().numpy())
        return p
    p = f"{path_base}.npy"
    np.save(p, t.numpy())
    return p


def _flat(o):
    import torch
    if isinstance(o, torch.Tensor):
        return [o]
    if isinstance(o, dict):
        return [t for v in o.values() for t in _flat(v)]
    if isinstance(o, (list, tuple)):
        return [t for v in o for t in _flat(v)]
    return []


def _program_counts(pte):
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DelegateCall, KernelCall
    prog = deserialize_pte_binary(pte).program
    plan = prog.execution_plan[0]
    dc, kc = 0, []
    for ch in plan.chains:
        for ins in ch.instructions:
            a = ins.instr_args
            if isinstance(a, DelegateCall):
                dc += 1
            elif isinstance(a, KernelCall):
                op = plan.operators[a.op_index]
                kc.append(op.name + (f".{op.overload}" if op.overload else ""))
    return dc, kc


def _quantize(kind, model, example, inputs_fn):
    import torch
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    q = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True, is_dynamic=(kind == "dynamic")))
    gm = prepare_pt2e(torch.export.export(model, example).module(), q)
    with torch.no_grad():
        for s in CALIB_SEEDS:
            gm(*inputs_fn(torch.Generator().manual_seed(s)))
    gm = convert_pt2e(gm)
    # output quantization step(s): scale of the dequantize feeding each output
    scales = []
    out_node = [n for n in gm.graph.nodes if n.op == "output"][0]
    for a in _flat_nodes(out_node.args[0]):
        t = str(getattr(a, "target", ""))
        scales.append(float(a.args[1]) if "dequantize_per_tensor" in t and
                      isinstance(a.args[1], (float, int)) else None)
    return gm, scales


def _calibrate_bn(model, inputs_fn):
    """Fresh BatchNorm stats are (0, 1) and make deep random nets' outputs vanish (1e-14) or
    all-zero after quantization: run 3 random batches in train mode (cumulative average)."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return False
    for m in bns:
        m.momentum = None
    model.train()
    with torch.no_grad():
        for s in (1000, 1001, 1002):
            ins = inputs_fn(torch.Generator().manual_seed(s))
            ins = tuple(torch.cat([t] * 4) for t in ins)   # batch 4 (BN needs >1 value per channel)
            model(*ins)
    return True


def _flat_nodes(a):
    if isinstance(a, (list, tuple)):
        return [x for v in a for x in _flat_nodes(v)]
    return [a]


def _compare(ref, got):
    import numpy as np
    ref = np.asarray(ref, dtype=np.float64)
    got = np.asarray(got, dtype=np.float64)
    r = {"ref_shape": list(ref.shape), "got_shape": list(got.shape)}
    if ref.shape != got.shape:
        r["shape_mismatch"] = True
        return r
    if ref.size == 0:
        r.update(max_abs=0.0, max_rel_norm=0.0, max_rel_elem=0.0)
        return r
    nan_ref, nan_got = np.isnan(ref), np.isnan(got)
    r["nan_ref"], r["nan_got"] = int(nan_ref.sum()), int(nan_got.sum())
    ok = ~(nan_ref | nan_got)
    d = np.abs(ref - got)[ok]
    scale = float(np.max(np.abs(ref[ok]))) if ok.any() else 0.0
    r["max_abs"] = float(d.max()) if d.size else 0.0
    r["ref_max_abs_value"] = scale
    r["max_rel_norm"] = r["max_abs"] / scale if scale > 0 else r["max_abs"]  # max|d| / max|ref|
    r["max_rel_elem"] = float(np.max(d / (np.abs(ref[ok]) + 1e-6))) if d.size else 0.0
    # allclose-style failures: |d| > 1e-5*scale + 1e-3*|ref|
    r["n_fail_rtol1e-3"] = int(np.sum(d > 1e-5 * scale + 1e-3 * np.abs(ref[ok])))
    r["numel"] = int(ref.size)
    return r


def _to_f32(t):
    import torch
    return t.detach().float().numpy() if t.dtype in (torch.bfloat16, torch.float16) else t.detach().numpy()


# --------------------------------------------------------------------------- one model


def run_one(name):
    import numpy as np
    import torch
    import executorch.exir as exir
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.extension.pybindings import portable_lib

    torch.set_num_threads(1)
    spec = _models()[name]
    build, inputs_fn = spec[0], spec[1]
    quant = spec[2] if len(spec) > 2 else None
    d = ROOT / name
    d.mkdir(parents=True, exist_ok=True)
    res = {"name": name, "quant": quant, "etscope_binary": ETSCOPE,
           "etscope_sha256": __import__("hashlib").sha256(open(ETSCOPE, "rb").read()).hexdigest()}
    t0 = time.time()
    try:
        torch.manual_seed(0)
        model = build()
        example = inputs_fn(torch.Generator().manual_seed(1))
        res["bn_calibrated"] = _calibrate_bn(model, inputs_fn)
        model.eval()
        res["inputs"] = [[list(t.shape), str(t.dtype)] for t in example]
        ref_model = model
        if quant:
            ref_model, scales = _quantize(quant, model, example, inputs_fn)
            res["output_quant_scales"] = scales
        with torch.no_grad():
            eager = _flat(ref_model(*example))
        ep = torch.export.export(ref_model, example)
        prog = exir.to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch()
        pte = prog.buffer
    except Exception as e:  # noqa: BLE001
        res.update(exported=False, export_error=f"{type(e).__name__}: {str(e).splitlines()[0][:400]}")
        (d / "export_traceback.txt").write_text(traceback.format_exc())
        res["export_seconds"] = round(time.time() - t0, 1)
        res["verdict"] = "export-failed"
        return res
    res["exported"] = True
    res["export_seconds"] = round(time.time() - t0, 1)
    pte_path = d / f"{name}.pte"
    pte_path.write_bytes(pte)
    res["pte"] = str(pte_path)
    res["pte_bytes"] = len(pte)
    dc, kc = _program_counts(pte)
    res["delegate_calls"] = dc
    res["kernel_calls"] = len(kc)
    res["kernel_ops"] = dict(sorted({k: kc.count(k) for k in kc}.items()))

    in_paths = [_save_tensor(t, str(d / f"input{i}")) for i, t in enumerate(example)]
    res["input_files"] = in_paths
    for i, t in enumerate(eager):
        np.save(d / f"eager_output{i}.npy", _to_f32(t))

    # ExecuTorch's own runtime
    try:
        portable_lib._unsafe_reset_threadpool(1)
        m = portable_lib._load_for_executorch_from_buffer(pte)
        et = m.run_method("forward", tuple(example))
        et = _flat(list(et))
        res["et_ok"] = True
    except Exception as e:  # noqa: BLE001
        res["et_ok"] = False
        res["et_error"] = f"{type(e).__name__}: {str(e)[:400]}"
        et = None
    if et is not None:
        res["et_outputs"] = [[list(t.shape), str(t.dtype)] for t in et]
        for i, t in enumerate(et):
            np.save(d / f"et_output{i}.npy", _to_f32(t))
            if t.dtype == torch.bfloat16:
                t.contiguous().view(torch.int16).numpy().tofile(d / f"et_output{i}.bf16.bin")
        res["et_vs_eager"] = [_compare(_to_f32(a), _to_f32(b)) for a, b in zip(eager, et)]

    # etscope
    outdir = d / "etscope"
    outdir.mkdir(exist_ok=True)
    for f in outdir.glob("output_*.npy"):
        f.unlink()
    cmd = [ETSCOPE, "run", str(pte_path), "--input", *in_paths, "--output-dir", str(outdir),
           "--iterations", "1", "--warmup", "0"]
    res["etscope_cmd"] = " ".join(cmd)
    t1 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
        res["etscope_rc"] = p.returncode
        err = [ln for ln in p.stderr.splitlines() if ln.strip()]
        res["etscope_stderr_tail"] = err[-5:]
        (d / "etscope_stdout.txt").write_text(p.stdout)
        (d / "etscope_stderr.txt").write_text(p.stderr)
        if p.returncode != 0:
            res["etscope_error"] = next((ln for ln in err if "error" in ln.lower()), err[-1] if err else "")
    except subprocess.TimeoutExpired:
        res["etscope_rc"] = "timeout"
        res["etscope_error"] = "timeout after 1200 s"
    res["etscope_seconds"] = round(time.time() - t1, 1)
    if et is not None and res.get("etscope_rc") == 1 and "BFloat16 has no .npy" in res.get("etscope_error", ""):
        # etscope cannot write bf16 .npy: take its outputs from an ETDump debug buffer (outputs level)
        cmd2 = [ETSCOPE, "run", str(pte_path), "--input", *in_paths, "--iterations", "1", "--warmup", "0",
                "--etdump", str(d / "etscope.etdp"), "--debug-buffer", str(d / "etscope.debug.bin"),
                "--debug-level", "outputs"]
        res["etscope_cmd_bf16_outputs"] = " ".join(cmd2)
        p2 = subprocess.run(cmd2, capture_output=True, text=True, timeout=1200)
        res["etscope_rc_bf16_outputs"] = p2.returncode
        if p2.returncode == 0:
            j = json.loads(subprocess.run([ETSCOPE, "etdump", str(d / "etscope.etdp"), "--json"],
                                          capture_output=True, text=True).stdout)
            evs = [e for b in (j.get("blocks") or j.get("run_blocks") or j.get("runs") or [])
                   for e in (b.get("events") or []) if e.get("kind") == "debug" and e.get("output")]
            if not evs:
                evs = _find_debug_outputs(j)
            buf = (d / "etscope.debug.bin").read_bytes()
            for i, e in enumerate(evs[:len(et)]):
                t = e["tensors"][0]
                raw = np.frombuffer(buf[t["offset"]:t["offset"] + t["nbytes"]], dtype=np.uint16)
                if t["dtype"] == "BFloat16":
                    arr = (raw.astype(np.uint32) << 16).view(np.float32).reshape(t["sizes"])
                else:
                    arr = np.frombuffer(buf[t["offset"]:t["offset"] + t["nbytes"]],
                                        dtype={"Float": np.float32, "Half": np.float16}[t["dtype"]]).reshape(t["sizes"])
                np.save(outdir / f"output_{i}.npy", arr)
            res["etscope_rc_with_output_dir"] = res["etscope_rc"]
            res["etscope_rc"] = 0
            res["etscope_note"] = ("rc 1 with --output-dir (bf16 .npy unsupported); outputs read from "
                                   "--debug-buffer --debug-level outputs instead")
    if et is not None and res.get("etscope_rc") == 0:
        cmps = []
        for i, t in enumerate(et):
            f = outdir / f"output_{i}.npy"
            if not f.exists():
                cmps.append({"missing": str(f)})
                continue
            got = np.load(f)
            c = _compare(_to_f32(t), got)
            c["got_dtype"], c["ref_dtype"] = str(got.dtype), str(t.dtype)
            cmps.append(c)
        res["etscope_vs_et"] = cmps
        extra = sorted(outdir.glob("output_*.npy"))
        if len(extra) != len(et):
            res["output_count_mismatch"] = [len(et), len(extra)]
    # etscope pte --delegates (datatypes per payload)
    try:
        p = subprocess.run([ETSCOPE, "pte", str(pte_path), "--delegates", "--json"], capture_output=True,
                           text=True, timeout=300)
        j = json.loads(p.stdout)
        types, kinds = {}, {}
        for plan in j.get("plans", []):
            for dl in plan.get("delegates", []):
                g = dl.get("graph") or {}
                for v in g.get("values", []):
                    types[v.get("type")] = types.get(v.get("type"), 0) + 1
                for nd in g.get("nodes", []):
                    kinds[nd.get("kind")] = kinds.get(nd.get("kind"), 0) + 1
        res["xnn_value_types"] = types
        res["xnn_node_kinds"] = dict(sorted(kinds.items()))
    except Exception as e:  # noqa: BLE001
        res["delegates_info_error"] = repr(e)[:300]
    res["verdict"] = verdict(res)
    return res


def _find_debug_outputs(j):
    out = []
    if isinstance(j, dict):
        if j.get("kind") == "debug" and j.get("output"):
            return [j]
        for v in j.values():
            out += _find_debug_outputs(v)
    elif isinstance(j, list):
        for v in j:
            out += _find_debug_outputs(v)
    return out


def verdict(r):
    if not r.get("exported"):
        return "export-failed"
    if not r.get("et_ok"):
        return "et-runtime-failed"
    if r.get("etscope_rc") != 0:
        return "ETSCOPE-FAIL"
    bad = []
    scales = r.get("output_quant_scales") or []
    for i, c in enumerate(r.get("etscope_vs_et", [])):
        if "missing" in c or c.get("shape_mismatch"):
            bad.append(i)
            continue
        if c.get("nan_got", 0) != c.get("nan_ref", 0):
            bad.append(i)
            continue
        step = scales[i] if i < len(scales) else None
        if r.get("quant") == "static" and step:
            if c["max_abs"] > step * 1.0001:
                bad.append(i)
        elif c["ref_dtype"] in ("torch.float16", "torch.bfloat16"):
            if c["max_rel_norm"] > 1e-2:
                bad.append(i)
        elif c["max_rel_norm"] > 1e-3:
            bad.append(i)
    return f"MISMATCH(outputs {bad})" if bad else "ok"


# --------------------------------------------------------------------------- driver


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--one":
        res = run_one(sys.argv[2])
        (ROOT / sys.argv[2] / "result.json").write_text(json.dumps(res, indent=1))
        print(json.dumps({k: res.get(k) for k in ("name", "verdict", "export_error", "etscope_error")}))
        return
    names = sys.argv[1:] or [n for n in _models() if not n.startswith(("probe_", "trunc_"))]
    for n in names:
        print(f"=== {n}", flush=True)
        (ROOT / n).mkdir(parents=True, exist_ok=True)
        (ROOT / n / "result.json").unlink(missing_ok=True)
        try:
            p = subprocess.run(["nice", "-n", "10", PY, __file__, "--one", n], capture_output=True,
                               text=True, timeout=3600)
            (ROOT / n / "driver.log").write_text(p.stdout + "\n--- stderr\n" + p.stderr)
            print(p.stdout.strip().splitlines()[-1] if p.stdout.strip() else f"rc={p.returncode} "
                  + (p.stderr.strip().splitlines() or [""])[-1], flush=True)
            if p.returncode != 0 and not (ROOT / n / "result.json").exists():
                (ROOT / n / "result.json").write_text(json.dumps(
                    {"name": n, "verdict": "sweep-process-crashed", "rc": p.returncode,
                     "stderr_tail": p.stderr.strip().splitlines()[-5:]}, indent=1))
        except subprocess.TimeoutExpired:
            (ROOT / n / "result.json").write_text(json.dumps({"name": n, "verdict": "sweep-timeout"}))
    collect()


def collect():
    allres = []
    for n in _models():
        f = ROOT / n / "result.json"
        if f.exists():
            allres.append(json.loads(f.read_text()))
    (ROOT / "results.json").write_text(json.dumps(allres, indent=1))


if __name__ == "__main__":
    if sys.argv[1:] == ["--collect"]:
        collect()
    else:
        main()
