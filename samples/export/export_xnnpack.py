"""Export programs delegated to ExecuTorch's XNNPACK backend, with ExecuTorch's own answers.

Usage: python export_xnnpack.py WORK [names...]          (default: every model)
       python export_xnnpack.py --pack WORK FIXTUREDIR   (store into the fixture directory)
       python export_xnnpack.py --pack-dynamic WORK FIXTUREDIR
                                (the xnn_dyn_* models only, archive xnnpack_dynamic.tar.xz;
                                 --pack leaves them out)

Every model goes through `to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()],
generate_etrecord=True)` and `to_executorch()`. Writes into WORK/:
  <n>.pte                 the program (XNNPACK payloads in segments, constants in named data)
  <n>.etrecord            ETRecord (edge + final programs, delegate map), with representative
                          inputs and reference outputs from the bundled program
  <n>.bpte                BundledProgram, 2 test cases (input seeds 1 and 2, expected = eager)
  <n>.input<i>.npy        the input(s) of `forward` (seed 1)
  <n>.output<i>.npy       ExecuTorch's OWN runtime outputs for them (pybindings with the
                          XNNPACK backend registered, threadpool reset to 1 thread)
  <n>.delegate<k>.xnngraph.json
                          the k-th XNNPACK payload's flatbuffer decoded by flatc with the
                          wheel's backends/xnnpack/serialization/schema.fbs (+ header fields)
  <n>.json                family, exporter calls, shapes/dtypes, max |ExecuTorch - eager|,
                          instruction counts, per-payload node kinds and datatypes, ETDump summary
  <n>.etdp, <n>.debug.bin, <n>.profile.etdp, <n>.etdump.json, <n>.profile.etdump.json
                          ETDump of 3 executions (inspect_tools.run_with_etdump): the wheel's
                          XNNPACK backend is built with its profiler, so every XNNPACK operator
                          run is a delegate profiling event
  <n>.inspector.json, <n>.aot_intermediates.ptd/.json
                          ExecuTorch's Inspector over that ETDump + the ETRecord

Dynamic-shape models (xnn_dyn_*, exported with torch.export.export(..., dynamic_shapes=...)) also:
  <n>.shape<k>.input<i>.npy, <n>.shape<k>.output<i>.npy
                          ExecuTorch's runtime at the k-th extra input shape (fresh load, 1 thread)
  <n>.oversize.input<i>.npy
                          an input past an upper bound (models with store_oversize)
  <n>.json "dynamic"      the dynamic_shapes in words, range constraints, the shapes run and their
                          output shapes, one loaded method through every shape, the runtime's answer
                          to out-of-range inputs (exception text + its log lines), program tensor
                          shape_dynamism, and per payload the external values' dims and the
                          shape-carrying nodes (StaticReshape new_shape, pad, slice, concat, ...)
  The ETDumps/Inspector (and bundled case 0 = the ETRecord's representative input) are at the
  shape `etdump_shape` (neither the export shape nor the upper bound); input<i>.npy/output<i>.npy
  stay at the export shape; bundled case 1 is the export-shape input.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import common  # noqa: F401  (sets sys.path)
from common import program_facts, save_npy, versions, write_json
from export_models import _flat, _shapes  # the model zoo's output flattening and shape facts

MODEL_SEED = 0
INPUT_SEEDS = (1, 2)  # input 0 is the stored input and bundled case 0; 1 is bundled case 1
CALIBRATION_SEEDS = (100, 101, 102, 103)
ETDUMP_RUNS = 3
THREADS = 1  # the pybindings' threadpool (which XNNPACK uses) is reset to this many threads


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def _calibrate_bn(model: nn.Module, shape: Tuple[int, ...]) -> nn.Module:
    """Fresh BatchNorm statistics are (0, 1): run a few batches so BN does something."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for i in range(3):
            model(randn(1000 + i, *shape))
    return model.eval()


def _bf16_rounded(model: nn.Module) -> nn.Module:
    """Round weights to bfloat16 precision (kept float32) so the big programs compress."""
    from models import round_to_bfloat16_precision_
    return round_to_bfloat16_precision_(model).eval()


# --------------------------------------------------------------------------- models
# Each builder returns a dict: model, inputs(seed) -> tuple, family, and optionally
# quant ("static" | "dynamic" | "4bit"), partitioner (a factory, default XnnpackPartitioner()),
# partitioner_call (its text for the json).


class Cnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.head = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.adaptive_avg_pool2d(self.conv2(x), 1)
        return self.head(torch.flatten(x, 1))


def xnn_cnn() -> Dict[str, Any]:
    return dict(model=_calibrate_bn(Cnn(), (4, 3, 32, 32)), inputs=lambda s: (randn(s, 1, 3, 32, 32),),
                family="fp32 CNN: Conv2d + BatchNorm2d (calibrated, fused into the conv) + ReLU, "
                       "max_pool2d, Conv2d, adaptive_avg_pool2d(1), flatten, Linear")


def xnn_mobilenet_v3_small() -> Dict[str, Any]:
    import torchvision
    m = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.5)
    m = _bf16_rounded(_calibrate_bn(m, (4, 3, 64, 64)))
    return dict(model=m, inputs=lambda s: (randn(s, 1, 3, 64, 64),),
                family="torchvision mobilenet_v3_small(weights=None, num_classes=10, width_mult=0.5), "
                       "BN calibrated, weights rounded to bf16 precision (float32): hardswish, "
                       "squeeze-excitation (adaptive avg pool, hardsigmoid, mul), depthwise convs, Dropout (eval)")


class Transformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(64, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.enc(x))


def xnn_transformer() -> Dict[str, Any]:
    return dict(model=Transformer(), inputs=lambda s: (randn(s, 1, 16, 64),),
                family="nn.TransformerEncoder (2 layers, d_model 64, 4 heads, ff 128, batch_first, eval, "
                       "no mask) + Linear(64, 10) head on every token")


class QCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.head = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        return self.head(torch.flatten(x, 1))


def xnn_qcnn() -> Dict[str, Any]:
    return dict(model=QCnn(), inputs=lambda s: (randn(s, 1, 3, 32, 32),), quant="static",
                family="pt2e static int8 CNN: XNNPACKQuantizer().set_global(get_symmetric_quantization_config("
                       "is_per_channel=True)), prepare_pt2e, 4 calibration batches, convert_pt2e; Conv2d+ReLU, "
                       "max_pool2d, Conv2d+ReLU, max_pool2d, flatten, Linear; the q/dq ops are folded into the payload")


class QUnary(nn.Module):
    """Activations pt2e leaves in float between quantized convolutions: each becomes
    dequantize -> op(s) -> quantize inside the payload, which XNNPACK runs as one lookup table.
    Filters drawn with twice Kaiming's spread so that the activations keep their range through
    the layers (with the default init they shrink until every input gives the same integers)."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, padding=1)
        self.convs = nn.ModuleList([nn.Conv2d(16, 16, 3, padding=1) for _ in range(6)])
        self.head = nn.Linear(16, 10)
        with torch.no_grad():
            for c in [self.stem, *self.convs]:
                nn.init.normal_(c.weight, std=2.0 * (2.0 / (c.in_channels * 9)) ** 0.5)
                nn.init.uniform_(c.bias, -0.5, 0.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.convs
        x = F.hardswish(self.stem(x))
        x = torch.sigmoid(c[0](x)) * 4.0 - 2.0
        x = torch.tanh(torch.sigmoid(c[1](x)))        # two float ops between one dequantize/quantize pair
        x = F.gelu(c[2](x))
        x = F.elu(c[3](x))                             # not delegated: ExecuTorch's portable elu
        y = c[4](x)
        x = torch.sigmoid(y) + torch.abs(y)           # a float op whose input two ops read
        x = F.hardswish(c[5](x)).neg()                 # a chain ending in floats
        return self.head(F.adaptive_avg_pool2d(x, 1).flatten(1))


def xnn_qunary() -> Dict[str, Any]:
    return dict(model=QUnary(), inputs=lambda s: (randn(s, 1, 3, 16, 16),), quant="static",
                family="pt2e static int8 CNN (XNNPACKQuantizer per channel, 4 calibration batches) with float "
                       "activations between its quantized convolutions: hardswish, sigmoid * 4 - 2, sigmoid then "
                       "tanh, gelu, elu (portable), sigmoid(y) + abs(y), -hardswish; global average pool, Linear")


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def xnn_dqlinear() -> Dict[str, Any]:
    return dict(model=Mlp(), inputs=lambda s: (randn(s, 4, 64),), quant="dynamic",
                family="pt2e dynamically quantized MLP: get_symmetric_quantization_config(is_per_channel=True, "
                       "is_dynamic=True): int8 per-channel weights, activations quantized per row at run time; "
                       "Linear(64,128), ReLU, Linear(128,10)")


class Partial(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.fc1 = nn.Linear(4 * 8 * 8, 32)
        self.fc2 = nn.Linear(32, 6)

    def forward(self, x: torch.Tensor):
        h = F.relu(self.conv(x)).flatten(1)          # XNNPACK
        h = torch.cumsum(h, dim=1) / 64.0             # cumsum: portable (XNNPACK has none)
        h = torch.tanh(self.fc1(h))                   # XNNPACK
        h = torch.flip(h, dims=[1])                   # flip: portable
        logits = self.fc2(h)                          # XNNPACK
        return logits, torch.argmax(logits, dim=1)    # argmax: portable, int64 output


def xnn_partial() -> Dict[str, Any]:
    return dict(model=Partial(), inputs=lambda s: (randn(s, 2, 3, 16, 16),),
                family="partially delegated: Conv2d+ReLU (XNNPACK) | cumsum, div (portable) | Linear+tanh "
                       "(XNNPACK) | flip (portable) | Linear (XNNPACK) | argmax (portable); outputs logits "
                       "(float) and argmax (int64)")


class OpsMix(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor):
        a = torch.cat([x, y], dim=1)                              # [1, 8, 8, 8]
        b = a[:, 2:6, 1:7, :]                                     # slice [1, 4, 6, 8]
        b = F.pad(b, (1, 1, 2, 0), value=0.5)                     # constant pad [1, 4, 8, 10]
        c = torch.sigmoid(b) * torch.tanh(b) - b / (torch.abs(b) + 1.0)
        d = torch.maximum(c, -c * 0.5) + torch.minimum(c, torch.neg(b))
        e = torch.sqrt(torch.abs(d) + 1e-3)
        f = F.leaky_relu(e - 0.5, 0.2) + F.elu(e - 1.0) + F.gelu(e)
        u = F.interpolate(f, scale_factor=2.0, mode="bilinear", align_corners=False)  # [1, 4, 16, 20]
        g = F.max_pool2d(u, 2)                                    # [1, 4, 8, 10]
        m = g.mean(dim=(2, 3), keepdim=True)                      # mean over H, W
        p = (g - m).permute(0, 2, 1, 3)                           # [1, 8, 4, 10]
        q = torch.softmax(p.reshape(8, 4, 10), dim=-1)            # 3-d: see xnn_nhwc_softmax
        r = torch.bmm(q, q.transpose(1, 2))                       # [8, 4, 4]
        return r, g


def xnn_ops_mix() -> Dict[str, Any]:
    return dict(model=OpsMix(), inputs=lambda s: (randn(s, 1, 4, 8, 8), randn(s + 10, 1, 4, 8, 8)),
                family="no weights, many element-wise and shape ops: cat, slice, constant pad, sigmoid, tanh, "
                       "mul, sub, div, abs, add, maximum, minimum, neg, sqrt, leaky_relu, elu, gelu, bilinear "
                       "upsample, max_pool2d, mean over H,W, permute, softmax, reshape, transpose, bmm; 2 outputs")


class OpsMore(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1d = nn.Conv1d(4, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.prelu = nn.PReLU(8, init=0.1)

    def forward(self, x: torch.Tensor):
        h = self.conv1d(x.flatten(2)).view(1, 8, 8, 8)           # Conv1d [1, 4, 64] -> [1, 8, 8, 8]
        h = self.prelu(self.dw(h))                                 # depthwise conv, PReLU
        h = F.hardtanh(h, -1.5, 1.5) + torch.clamp(h, min=0.0)     # clamp
        h = F.avg_pool2d(h, 2)                                     # [1, 8, 4, 4]
        a = torch.exp(-torch.square(h)) + torch.log(torch.abs(h) + 1.0)
        b = torch.rsqrt(h * h + 1.0) + torch.floor(h * 3.0) / 3.0 + torch.ceil(h * 2.0) / 2.0
        c = F.hardswish(a - b) + torch.sin(a) * torch.cos(b) + torch.pow(b, 2)
        return c


def xnn_ops_more() -> Dict[str, Any]:
    return dict(model=OpsMore(), inputs=lambda s: (randn(s, 1, 4, 8, 8),),
                family="more XNNPACK node kinds: Conv1d (as a 2-d conv), depthwise Conv2d, PReLU, hardtanh, "
                       "clamp, avg_pool2d, exp, square, log, abs, rsqrt, floor, ceil, hardswish, sin, cos, pow 2")


class ConvT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up1 = nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1)
        self.up2 = nn.ConvTranspose2d(6, 4, 4, stride=2, padding=1, groups=2)
        self.out = nn.ConvTranspose2d(4, 3, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.relu(self.up2(F.relu(self.up1(x)))))


def xnn_convt() -> Dict[str, Any]:
    return dict(model=ConvT(), inputs=lambda s: (randn(s, 1, 8, 6, 5),),
                family="ConvTranspose2d: k3 s2 p1 output_padding 1, k4 s2 p1 groups 2, 1x1; ReLU; "
                       "[1,8,6,5] -> [1,3,24,20]")


class Mlp4(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 128, bias=True)
        self.fc2 = nn.Linear(128, 32, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(F.relu(self.fc1(x)))


def xnn_4bit() -> Dict[str, Any]:
    return dict(model=Mlp4(), inputs=lambda s: (randn(s, 2, 5, 64),), quant="4bit",
                family="4-bit groupwise weights with int8 dynamic activations (torchao quantize_("
                       "Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity="
                       "PerGroup(32))), as ExecuTorch's 8da4w): Linear(64,128)+bias, ReLU, Linear(128,32) no bias; "
                       "input [2,5,64]")


class HalfCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.fc = nn.Linear(8 * 4 * 4, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.conv(x)), 2)
        return torch.softmax(self.fc(x.flatten(1)), dim=-1)


def xnn_fp16() -> Dict[str, Any]:
    return dict(model=HalfCnn().half(), inputs=lambda s: (randn(s, 1, 3, 8, 8).half(),),
                family="float16 end to end (model.half(), f16 input and output): Conv2d, ReLU, max_pool2d, "
                       "Linear, softmax")


class NhwcSoftmax(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(F.max_pool2d(self.conv(x), 2), dim=-1)


def xnn_nhwc_softmax() -> Dict[str, Any]:
    return dict(model=NhwcSoftmax(), inputs=lambda s: (randn(s, 1, 3, 8, 10),),
                family="KNOWN LOWERING BUG in ExecuTorch 1.5.1: softmax(dim=-1) on a 4-d tensor right after an "
                       "NHWC op (conv, max_pool2d). ChannelsLastTaggedReshapePass keeps the tensor NHWC through "
                       "the softmax (softmax is in neither memory_sensitive_ops set), so the payload's XNNSoftmax "
                       "runs over the physical last dim = channels, not W. ExecuTorch's own output (stored) "
                       "differs from eager; an executor that follows the payload must match ExecuTorch")


# --------------------------------------------------------------------------- dynamic-shape models
# A dynamic spec carries, besides model/family:
#   dynamic_shapes   passed to torch.export.export (a tuple, one entry per input)
#   export_shapes    the input shapes torch.export traces with (stored input<i>.npy, seed 1)
#   shapes           extra input shapes, run by ExecuTorch's runtime -> <n>.shape<k>.input/output<i>.npy
#   etdump_shape     index k into `shapes`: the ETDump/Inspector run (bundled case 0) is at that
#                    shape, neither the export shape nor the upper bound
#   oversize         [(label, input shapes)] past an upper bound (or otherwise out of range):
#                    what ExecuTorch's runtime answers is recorded; `store_oversize` keeps the
#                    first one as <n>.oversize.input<i>.npy
# Inputs: randn with seed + 1000 * i for input i; shape k uses seed SHAPE_SEED + k.

SHAPE_SEED = 50


def _dyn(model: nn.Module, family: str, export_shapes, dynamic_shapes, shapes, etdump_shape: int,
         oversize, **kw) -> Dict[str, Any]:
    def make(seed: int, shp=None) -> Tuple[torch.Tensor, ...]:
        return tuple(randn(seed + 1000 * i, *s) for i, s in enumerate(shp or export_shapes))
    assert all(len(s) == len(export_shapes) for s in shapes)
    assert shapes[etdump_shape] != export_shapes
    return dict(model=model, family=family, inputs=make, make_inputs=make, export_shapes=export_shapes,
                dynamic_shapes=dynamic_shapes, shapes=shapes, etdump_shape=etdump_shape,
                oversize=oversize, **kw)


def xnn_dyn_mlp() -> Dict[str, Any]:
    B = torch.export.Dim("batch", min=1, max=16)
    return _dyn(_bf16_rounded(Mlp()), "dynamic batch MLP: Linear(64,128), ReLU, Linear(128,10); input [batch, 64]",
                [(4, 64)], ({0: B},), [[(1, 64)], [(7, 64)], [(16, 64)]], 1,
                [("batch 17 (upper bound 16 + 1)", [(17, 64)]),
                 ("batch 0 (below the export min 1)", [(0, 64)]),
                 ("static dim changed: [3, 32] (numel within capacity)", [(3, 32)])],
                store_oversize=True)


class DynCnn(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = nn.BatchNorm2d(8)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.head = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.adaptive_avg_pool2d(self.conv2(x), 1)
        return self.head(torch.flatten(x, 1))   # flatten: view_copy with a symbolic size -> portable


def xnn_dyn_cnn() -> Dict[str, Any]:
    B = torch.export.Dim("batch", min=1, max=3)
    H = torch.export.Dim("h", min=16, max=48)
    W = torch.export.Dim("w", min=16, max=48)
    m = _bf16_rounded(_calibrate_bn(DynCnn(), (4, 3, 32, 32)))
    return _dyn(m, "fp32 CNN, dynamic batch, H and W (separate dims): Conv2d(3,8)+BatchNorm2d (calibrated, "
                   "fused)+ReLU, max_pool2d(2) (floor: odd H/W), Conv2d(8,16), adaptive_avg_pool2d(1), flatten "
                   "(symbolic view_copy: portable), Linear(16,10)",
                [(2, 3, 32, 32)], ({0: B, 2: H, 3: W},),
                [[(1, 3, 16, 16)], [(2, 3, 24, 40)], [(2, 3, 33, 17)], [(3, 3, 48, 48)]], 1,
                [("batch 4 (upper bound 3 + 1)", [(4, 3, 48, 48)]),
                 ("W 96 > 48 with numel within capacity: [1, 3, 16, 96]", [(1, 3, 16, 96)]),
                 ("H 49 (upper bound 48 + 1), batch 3", [(3, 3, 49, 48)])])


class DynAttention(nn.Module):
    """Pre-LN transformer block written by hand, reshapes with a literal -1 for the sequence dim
    (so ExecuTorch delegates them: XNNStaticReshape with new_shape 0 there). LayerNorm is portable."""

    def __init__(self, d: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.d, self.h, self.hd = d, heads, d // heads
        self.ln1 = nn.LayerNorm(d)
        self.q, self.k, self.v, self.o = (nn.Linear(d, d) for _ in range(4))
        self.ln2 = nn.LayerNorm(d)
        self.ff1 = nn.Linear(d, 64)
        self.ff2 = nn.Linear(64, d)
        self.head = nn.Linear(d, 8)

    def _heads(self, t: torch.Tensor) -> torch.Tensor:      # [1, T, d] -> [h, T, hd]
        return t.view(1, -1, self.h, self.hd).permute(0, 2, 1, 3).contiguous().view(self.h, -1, self.hd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = self.ln1(x)
        q, k, v = self._heads(self.q(n)), self._heads(self.k(n)), self._heads(self.v(n))
        a = torch.softmax(torch.bmm(q, k.transpose(1, 2)) * (self.hd ** -0.5), dim=-1)   # [h, T, T]
        y = torch.bmm(a, v).view(1, self.h, -1, self.hd).permute(0, 2, 1, 3).contiguous().view(1, -1, self.d)
        x = x + self.o(y)
        x = x + self.ff2(F.gelu(self.ff1(self.ln2(x))))
        return self.head(x)


def xnn_dyn_transformer() -> Dict[str, Any]:
    T = torch.export.Dim("seq", min=2, max=32)
    return _dyn(_bf16_rounded(DynAttention()),
                "hand-written pre-LN transformer block, dynamic sequence length: LayerNorm (portable), "
                "q/k/v Linear, view(1,-1,4,8)/permute/contiguous/view(4,-1,8) (delegated reshapes with a "
                "dynamic dim), bmm, scale, softmax, bmm, view/permute/view back, out Linear, residual add, "
                "LayerNorm, Linear+GELU+Linear, residual, Linear(32,8) head; input [1, seq, 32]",
                [(1, 12, 32)], ({1: T},), [[(1, 2, 32)], [(1, 5, 32)], [(1, 17, 32)], [(1, 32, 32)]], 1,
                [("seq 33 (upper bound 32 + 1)", [(1, 33, 32)])])


class DynEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        layer = nn.TransformerEncoderLayer(32, 4, 64, dropout=0.0, batch_first=True)
        self.enc = nn.TransformerEncoder(layer, 1, enable_nested_tensor=False)
        self.head = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.enc(x))


def xnn_dyn_encoder() -> Dict[str, Any]:
    T = torch.export.Dim("seq", min=2, max=32)
    return _dyn(_bf16_rounded(DynEncoder()),
                "nn.TransformerEncoder (1 layer, d_model 32, 4 heads, ff 64, batch_first, eval, no mask) + "
                "Linear(32,8), dynamic sequence length: the attention's views have symbolic sizes, so they "
                "stay portable (view_copy, select_copy, expand_copy, ...) between many small delegates",
                [(1, 12, 32)], ({1: T},), [[(1, 3, 32)], [(1, 20, 32)], [(1, 32, 32)]], 0,
                [("seq 33 (upper bound 32 + 1)", [(1, 33, 32)])])


def xnn_dyn_dqlinear() -> Dict[str, Any]:
    B = torch.export.Dim("batch", min=1, max=4)
    T = torch.export.Dim("rows", min=1, max=8)
    return _dyn(Mlp(), "pt2e dynamically quantized MLP (as xnn_dqlinear) on a 3-d input [batch, rows, 64], "
                       "batch and rows dynamic: get_symmetric_quantization_config(is_per_channel=True, "
                       "is_dynamic=True), prepare_pt2e/convert_pt2e on an export with the same dynamic_shapes",
                [(2, 6, 64)], ({0: B, 1: T},), [[(1, 1, 64)], [(3, 5, 64)], [(4, 8, 64)]], 1,
                [("rows 9 (upper bound 8 + 1)", [(4, 9, 64)])], quant="dynamic")


def xnn_dyn_partial() -> Dict[str, Any]:
    B = torch.export.Dim("batch", min=1, max=8)
    return _dyn(_bf16_rounded(Partial()), "partially delegated (as xnn_partial), dynamic batch: Conv2d+ReLU "
                "(XNNPACK) | flatten (symbolic view_copy), cumsum, div (portable) | Linear+tanh (XNNPACK) | flip "
                "(portable) | Linear (XNNPACK) | argmax (portable); outputs logits and argmax (int64)",
                [(3, 3, 16, 16)], ({0: B},), [[(1, 3, 16, 16)], [(2, 3, 16, 16)], [(8, 3, 16, 16)]], 1,
                [("batch 9 (upper bound 8 + 1)", [(9, 3, 16, 16)])])


class DynConv1d(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv1d(8, 8, 3, padding=1)

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        a = F.relu(self.conv(torch.cat([x, y], dim=1)))           # cat channels, Conv1d [1, 8, L]
        b = F.pad(a[:, 2:6, :], (1, 2), value=0.5)                 # slice (portable), pad -> [1, 4, L+3]
        c = torch.sigmoid(b) * torch.tanh(b) + F.hardtanh(b, -0.5, 0.5)
        return c, torch.softmax(c, dim=-1)


def xnn_dyn_conv1d() -> Dict[str, Any]:
    L = torch.export.Dim("len", min=8, max=64)
    return _dyn(_bf16_rounded(DynConv1d()),
                "two inputs [1, 4, len] sharing one dynamic length: cat on channels, Conv1d(8,8,3,p1) (as a "
                "2-d conv between static reshapes with a dynamic dim), ReLU, slice on channels (portable: "
                "XNNPACK slice takes no dynamic shapes), constant pad (1, 2) value 0.5, sigmoid*tanh + "
                "hardtanh, softmax over the dynamic dim; 2 outputs",
                [(1, 4, 16), (1, 4, 16)], ({2: L}, {2: L}),
                [[(1, 4, 8), (1, 4, 8)], [(1, 4, 23), (1, 4, 23)], [(1, 4, 64), (1, 4, 64)]], 1,
                [("len 65 (upper bound 64 + 1)", [(1, 4, 65), (1, 4, 65)]),
                 ("the two inputs' lengths differ: 20 and 24", [(1, 4, 20), (1, 4, 24)])])


class DynOps4d(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor):
        a = torch.cat([x, y], dim=0)                               # batch b1 + b2
        b = F.pad(a[:, 1:3], (1, 1, 2, 0), value=0.25)             # slice (portable), pad [.., 2, 10, 10]
        u = F.interpolate(b, scale_factor=2.0, mode="bilinear", align_corners=False)  # portable (dynamic)
        g = F.avg_pool2d(u, 2)
        m = g.mean(dim=(2, 3), keepdim=True)
        return torch.maximum(g - m, g * 0.1), u


def xnn_dyn_ops4d() -> Dict[str, Any]:
    B1 = torch.export.Dim("b1", min=1, max=4)
    B2 = torch.export.Dim("b2", min=1, max=4)
    return _dyn(DynOps4d(), "no weights, two inputs with independent dynamic batch: cat on batch (output batch "
                            "b1+b2), slice (portable), constant pad, bilinear upsample x2 (portable: XNNPACK "
                            "takes no dynamic output size), avg_pool2d, mean over H,W keepdim, sub, mul, "
                            "maximum; 2 outputs",
                [(2, 4, 8, 8), (3, 4, 8, 8)], ({0: B1}, {0: B2}),
                [[(1, 4, 8, 8), (1, 4, 8, 8)], [(1, 4, 8, 8), (2, 4, 8, 8)], [(4, 4, 8, 8), (1, 4, 8, 8)],
                 [(4, 4, 8, 8), (4, 4, 8, 8)]], 1,
                [("b2 5 (upper bound 4 + 1)", [(1, 4, 8, 8), (5, 4, 8, 8)])])


class DynPair(nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor):
        s = torch.bmm(x, y.transpose(1, 2))                        # [2, T, T]
        return torch.softmax(s, -1), torch.cat([x, y], dim=2)      # [2, T, T], [2, T, 16]


def xnn_dyn_pair() -> Dict[str, Any]:
    T = torch.export.Dim("t", min=1, max=16)
    return _dyn(DynPair(), "no weights, one payload: bmm(x, y^T) with a dynamic dim on both sides of the "
                           "product ([2, t, 8] x [2, 8, t] -> [2, t, t]), softmax, cat on the last dim",
                [(2, 5, 8), (2, 5, 8)], ({1: T}, {1: T}),
                [[(2, 1, 8), (2, 1, 8)], [(2, 9, 8), (2, 9, 8)], [(2, 16, 8), (2, 16, 8)]], 1,
                [("t 17 (upper bound 16 + 1)", [(2, 17, 8), (2, 17, 8)])])


DYNAMIC_MODELS = (xnn_dyn_mlp, xnn_dyn_cnn, xnn_dyn_transformer, xnn_dyn_encoder, xnn_dyn_dqlinear,
                  xnn_dyn_partial, xnn_dyn_conv1d, xnn_dyn_ops4d, xnn_dyn_pair)


MODELS: Dict[str, Callable[[], Dict[str, Any]]] = {f.__name__: f for f in (
    xnn_cnn, xnn_mobilenet_v3_small, xnn_transformer, xnn_qcnn, xnn_dqlinear, xnn_partial,
    xnn_ops_mix, xnn_ops_more, xnn_convt, xnn_4bit, xnn_fp16, xnn_nhwc_softmax, xnn_qunary) + DYNAMIC_MODELS}


# --------------------------------------------------------------------------- XNNPACK payloads

# XNNHeader (backends/xnnpack/serialization/xnnpack_graph_serialize.py): all little endian.
HEADER_LAYOUT = {
    "0..4": "zero bytes (so the magic sits where a bare flatbuffer's file identifier would)",
    "4..8": "magic 'XH00'", "8..10": "uint16 header length (30)",
    "10..14": "uint32 flatbuffer offset", "14..18": "uint32 flatbuffer size",
    "18..22": "uint32 constant data offset", "22..30": "uint64 constant data size",
    "padding": "header padded to 16 bytes, flatbuffer padded to 16, then the constant data",
}


def _decode_xnngraph(flatbuffer: bytes) -> Dict[str, Any]:
    """The payload's flatbuffer as JSON, decoded by flatc with the wheel's own schema.fbs."""
    import importlib.resources as resources
    import executorch.backends.xnnpack.serialization as serialization
    from executorch.exir._serialize._flatbuffer import _flatc_decompile

    with tempfile.TemporaryDirectory() as d:
        schema = Path(d) / "schema.fbs"
        schema.write_bytes(resources.files(serialization).joinpath("schema.fbs").read_bytes())
        (Path(d) / "graph.bin").write_bytes(flatbuffer)
        _flatc_decompile(d, str(schema), str(Path(d) / "graph.bin"), ["--raw-binary"])
        text = (Path(d) / "graph.json").read_text()
    # flatc writes non-finite floats (output_max of a fused ReLU) bare: quote them for JSON.
    text = re.sub(r'(:\s*)(-?)(inf|nan)\b', r'\1"\2\3"', text)
    return json.loads(text)


def _value_fact(v: Dict[str, Any]) -> Dict[str, Any]:
    kind = v["xvalue_union_type"]
    u = v["xvalue_union"]
    tv = u["tensor_value"] if kind == "XNNQuantizedTensorValue" else u
    d = {"kind": kind, "datatype": tv["datatype"], "dims": tv.get("dims", []),
         "constant_buffer_idx": tv.get("constant_buffer_idx", 0), "flags": tv.get("flags", 0),
         "external_id": tv.get("external_id")}
    if kind == "XNNQuantizedTensorValue":
        d["quant_params"] = u.get("quant_params_type")
    return d


def xnn_payload_facts(blob: bytes, graph: Dict[str, Any]) -> Dict[str, Any]:
    from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import XNNHeader

    h = XNNHeader.from_bytes(blob[:XNNHeader.EXPECTED_LENGTH])
    values = [_value_fact(v) for v in graph.get("xvalues", [])]
    consts = graph.get("constant_data", [])
    kinds = [n["xnode_union_type"] for n in graph.get("xnodes", [])]
    fused = [n["xnode_union_type"] for n in graph.get("xnodes", [])
             if n.get("output_min_max") not in (None, {})]
    return {
        "payload_bytes": len(blob),
        "magic": blob[4:8].decode("latin1"),
        "header": {"flatbuffer_offset": h.flatbuffer_offset, "flatbuffer_size": h.flatbuffer_size,
                   "constant_data_offset": h.constant_data_offset,
                   "constant_data_size": h.constant_data_size},
        "flatbuffer_file_identifier": blob[h.flatbuffer_offset + 4:h.flatbuffer_offset + 8].decode("latin1"),
        "version": graph.get("version"),
        "num_xnodes": len(kinds),
        "node_kinds_in_order": kinds,
        "node_kind_counts": dict(sorted(Counter(kinds).items())),
        "nodes_with_output_min_max": dict(sorted(Counter(fused).items())),
        "num_xvalues": len(values),
        "value_datatype_counts": dict(sorted(Counter(v["datatype"] for v in values).items())),
        "quantized_value_kinds": dict(sorted(Counter(
            f"{v['datatype']}/{v['quant_params']}" for v in values if "quant_params" in v).items())),
        "num_externs": graph.get("num_externs"),
        "input_ids": graph.get("input_ids", []),
        "output_ids": graph.get("output_ids", []),
        "external_values": [values[i] | {"id": i} for i in sorted(set(graph.get("input_ids", []))
                                                                   | set(graph.get("output_ids", [])))
                            if i < len(values)],
        "num_constant_data_entries": len(consts),
        "constant_data_named_keys": sum(1 for c in consts if c.get("named_key")),
        "constant_data_inline_bytes": sum(int(c.get("size", 0)) for c in consts if not c.get("named_key")),
    }


# --------------------------------------------------------------------------- export


def _max_diff(a: List[Any], b: List[torch.Tensor]) -> List[float]:
    return [float((x.double() - y.double()).abs().max()) if x.numel() else 0.0 for x, y in zip(a, b)]


def _quantize(spec: Dict[str, Any], model: nn.Module, ex: Tuple[Any, ...]) -> Tuple[nn.Module, List[str]]:
    """pt2e (static / dynamic) or torchao 4-bit quantization; returns the eager reference."""
    q = spec["quant"]
    if q == "4bit":
        from torchao.quantization.granularity import PerGroup
        from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig, quantize_
        from torchao.utils import unwrap_tensor_subclass
        quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4,
                                                               weight_granularity=PerGroup(32)))
        unwrap_tensor_subclass(model)
        return model, ["torchao quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, "
                       "weight_granularity=PerGroup(32)))", "unwrap_tensor_subclass(model)"]
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    dynamic = q == "dynamic"
    quantizer = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True, is_dynamic=dynamic))
    dyn = spec.get("dynamic_shapes")
    gm = prepare_pt2e(torch.export.export(model, ex, dynamic_shapes=dyn).module(), quantizer)
    with torch.no_grad():
        for s in CALIBRATION_SEEDS:
            gm(*spec["inputs"](s))
    gm = convert_pt2e(gm)
    return gm, [f"torch.export.export(model, inputs{', dynamic_shapes=DYN' if dyn else ''}).module()",
                "prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config("
                f"is_per_channel=True{', is_dynamic=True' if dynamic else ''})))",
                f"{len(CALIBRATION_SEEDS)} calibration batches (input seeds {CALIBRATION_SEEDS[0]}.."
                f"{CALIBRATION_SEEDS[-1]})", "convert_pt2e(gm)"]


# --------------------------------------------------------------------------- dynamic shapes


def _dim_words(dynamic_shapes) -> List[str]:
    """The dynamic_shapes spec in words: one line per dynamic dim."""
    words = []
    for i, spec in enumerate(dynamic_shapes):
        for d, dim in sorted((spec or {}).items()):
            words.append(f"input {i} dim {d}: Dim({dim.__name__!r}, min={dim.min}, max={dim.max})")
    names = Counter(w.split("Dim(")[1].split(",")[0] for w in words)
    for n, c in names.items():
        if c > 1:
            words.append(f"Dim {n} is shared by {c} dims: those sizes must be equal")
    return words


def _call_capturing_stderr(fn):
    """fn() with file descriptor 2 redirected: ExecuTorch's runtime logs (ET_LOG) go to stderr.
    Returns (result or None, exception or None, the log lines)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tf:
        os.dup2(tf.fileno(), 2)
        res = err = None
        try:
            res = fn()
        except Exception as e:  # noqa: BLE001
            err = e
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
        tf.seek(0)
        text = tf.read().decode("utf-8", "replace")
    lines = [ln for ln in text.splitlines() if ln.strip() and "cpuinfo" not in ln]
    return res, err, lines


def _sha(t: torch.Tensor) -> str:
    return hashlib.sha256(np.ascontiguousarray(t.detach().numpy()).tobytes()).hexdigest()


def _run_dynamic(name: str, spec: Dict[str, Any], pte: bytes, eager: nn.Module, ex, got, out: Path,
                 ep) -> Dict[str, Any]:
    """ExecuTorch's runtime at every extra shape (fresh loads, 1 thread), one module through all the
    shapes in turn, and what it answers for the out-of-range inputs."""
    from common import runtime_method_facts
    from executorch.extension.pybindings import portable_lib

    portable_lib._unsafe_reset_threadpool(THREADS)
    load = lambda: portable_lib._load_for_executorch_from_buffer(pte)  # noqa: E731
    make = spec["make_inputs"]
    rc = {}
    for sym, r in ep.range_constraints.items():
        rc[str(sym)] = [int(r.lower) if r.lower.is_integer else str(r.lower),
                        int(r.upper) if r.upper.is_integer else str(r.upper)]
    d: Dict[str, Any] = {
        "dynamic_shapes": _dim_words(spec["dynamic_shapes"]),
        "exported_range_constraints": rc,
        "export_shape": {"inputs": _shapes(list(ex)), "input_files": [f"{name}.input{i}.npy" for i in range(len(ex))],
                         "outputs": _shapes(got), "seed": INPUT_SEEDS[0]},
        "input_seeds": f"shape k: randn with seed {SHAPE_SEED} + k (+ 1000 * i for input i); export shape: "
                       f"seed {INPUT_SEEDS[0]} (+ 1000 * i)",
        "method_meta": runtime_method_facts(load())["forward"],
        "method_meta_note": "MethodMeta sizes are the program's tensor sizes: the upper bounds",
        "etdump_shape_index": spec["etdump_shape"],
        "bundled_program_cases": [
            f"case 0: shape {spec['etdump_shape']} (= {name}.shape{spec['etdump_shape']}.input<i>.npy); the "
            "ETRecord's representative input, the Inspector's AOT reference run; the ETDumps are at it too",
            f"case 1: the export shape (= {name}.input<i>.npy)"],
    }
    shapes, outs_by_k = [], {}
    for k, shp in enumerate(spec["shapes"]):
        inp = make(SHAPE_SEED + k, shp)
        o = list(load().run_method("forward", tuple(inp)))
        outs_by_k[k] = o
        for i, t in enumerate(inp):
            save_npy(out / f"{name}.shape{k}.input{i}.npy", t)
        for i, t in enumerate(o):
            save_npy(out / f"{name}.shape{k}.output{i}.npy", t)
        with torch.no_grad():
            ref = _flat(eager(*inp))
        shapes.append({"k": k, "inputs": _shapes(list(inp)), "outputs": _shapes(o),
                       "input_files": [f"{name}.shape{k}.input{i}.npy" for i in range(len(inp))],
                       "output_files": [f"{name}.shape{k}.output{i}.npy" for i in range(len(o))],
                       "seed": SHAPE_SEED + k, "max_abs_diff_vs_eager": _max_diff(o, ref),
                       "is_etdump_shape": k == spec["etdump_shape"]})
    d["shapes"] = shapes
    # One loaded method through every shape, growing and shrinking: same bits as fresh loads?
    order = ["export"] + list(range(len(spec["shapes"]))) + ["export"] + list(reversed(range(len(spec["shapes"]))))
    mod = load()
    same = []
    for k in order:
        inp = ex if k == "export" else make(SHAPE_SEED + k, spec["shapes"][k])
        ref = got if k == "export" else outs_by_k[k]
        o = list(mod.run_method("forward", tuple(inp)))
        same.append(all(a.shape == b.shape and torch.equal(a, b) for a, b in zip(o, ref)))
    d["one_module_all_shapes"] = {"order": order, "bit_identical_to_fresh_load": same}
    # Out of range.
    over = []
    for j, (label, shp) in enumerate(spec.get("oversize", [])):
        inp = make(SHAPE_SEED + 100 + j, shp)
        mod = load()
        res, err, lines = _call_capturing_stderr(lambda: list(mod.run_method("forward", tuple(inp))))
        e: Dict[str, Any] = {"label": label, "inputs": _shapes(list(inp)), "seed": SHAPE_SEED + 100 + j,
                             "stderr": lines}
        if err is not None:
            e["exception"] = {"type": type(err).__name__, "text": str(err)}
        else:
            e["exception"] = None
            e["outputs"] = _shapes(res)
            try:
                with torch.no_grad():
                    e["max_abs_diff_vs_eager"] = _max_diff(res, _flat(eager(*inp)))
            except Exception as ee:  # noqa: BLE001
                e["eager_error"] = repr(ee)[:300]
        # The same loaded method afterwards, at the ETDump shape.
        k = spec["etdump_shape"]
        res2, err2, lines2 = _call_capturing_stderr(
            lambda: list(mod.run_method("forward", tuple(make(SHAPE_SEED + k, spec["shapes"][k])))))
        e["then_same_module_at_shape"] = {
            "k": k, "exception": None if err2 is None else str(err2), "stderr": lines2,
            "bit_identical_to_fresh_load": None if res2 is None else
            all(torch.equal(a, b) for a, b in zip(res2, outs_by_k[k]))}
        if j == 0 and spec.get("store_oversize"):
            e["input_files"] = [f"{name}.oversize.input{i}.npy" for i in range(len(inp))]
            for i, t in enumerate(inp):
                save_npy(out / f"{name}.oversize.input{i}.npy", t)
        over.append(e)
    d["out_of_range"] = over
    d["_outputs"] = outs_by_k
    return d


def _program_tensor_dynamism(prog) -> Dict[str, Any]:
    """sizes and shape_dynamism of the plan's inputs, outputs and delegate-call arguments."""
    from executorch.exir.schema import DelegateCall, Tensor as STensor
    plan = prog.execution_plan[0]

    def t(i: int) -> Dict[str, Any]:
        v = plan.values[i].val
        if not isinstance(v, STensor):
            return {"value_index": i, "type": type(v).__name__}
        return {"value_index": i, "sizes": list(v.sizes), "shape_dynamism": v.shape_dynamism.name,
                "scalar_type": v.scalar_type.name, "planned": v.allocation_info is not None}

    calls = []
    for ch in plan.chains:
        for ins in ch.instructions:
            a = ins.instr_args
            if isinstance(a, DelegateCall):
                calls.append({"delegate_index": a.delegate_index, "args": [t(i) for i in a.args]})
    counts = Counter(v.val.shape_dynamism.name for v in plan.values if isinstance(v.val, STensor))
    return {"inputs": [t(i) for i in plan.inputs], "outputs": [t(i) for i in plan.outputs],
            "delegate_calls": calls, "tensor_shape_dynamism_counts": dict(sorted(counts.items()))}


SHAPE_NODES = ("XNNStaticReshape", "XNNStaticSlice", "XNNStaticConstantPad", "XNNStaticResizeBilinear2D",
               "XNNStaticTranspose", "XNNConcatenate2", "XNNConcatenate3", "XNNConcatenate4",
               "XNNConcatenate5", "XNNGlobalAvgPooling2d")


def _xnngraph_dynamic_facts(graph: Dict[str, Any], k: int) -> Dict[str, Any]:
    """What a payload says about shapes: external values' dims and flags, and the shape-carrying
    nodes (reshape new_shape, slice, pad, ...) with their input/output value dims."""
    vals = [v["xvalue_union"]["tensor_value"] if v["xvalue_union_type"] == "XNNQuantizedTensorValue"
            else v["xvalue_union"] for v in graph.get("xvalues", [])]

    def vdesc(i: int) -> Dict[str, Any]:
        v = vals[i]
        return {"id": i, "dims": v.get("dims", []), "flags": v.get("flags", 0),
                "external_id": v.get("external_id"), "datatype": v["datatype"]}

    ext = sorted(set(graph.get("input_ids", [])) | set(graph.get("output_ids", [])))
    nodes = []
    for pos, n in enumerate(graph.get("xnodes", [])):
        if n["xnode_union_type"] in SHAPE_NODES:
            u = n["xnode_union"]
            e = {"node": pos, "kind": n["xnode_union_type"],
                 **{f: u[f] for f in ("new_shape", "num_dims", "perm", "offsets", "sizes", "pre_paddings",
                                      "post_paddings", "axis", "new_height", "new_width", "flags") if f in u}}
            ins = [u[f] for f in ("input_id", "input1_id", "input2_id", "input3_id", "input4_id", "input5_id")
                   if f in u and u[f] != 0xFFFFFFFF]
            e["input_dims"] = [vals[i].get("dims", []) for i in ins]
            e["output_dims"] = vals[u["output_id"]].get("dims", [])
            nodes.append(e)
    return {"delegate_index": k,
            "external_values": [vdesc(i) for i in ext],
            "value_flags_counts": {str(f): c for f, c in sorted(Counter(v.get("flags", 0) for v in vals).items())},
            "node_flags_nonzero": [{"node": p, "kind": n["xnode_union_type"], "flags": n["xnode_union"]["flags"]}
                                   for p, n in enumerate(graph.get("xnodes", []))
                                   if n["xnode_union"].get("flags", 0)],
            "shape_nodes": nodes}


def export_one(name: str, out: Path) -> Dict[str, Any]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import to_edge_transform_and_lower
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.extension.pybindings import portable_lib
    from inspect_tools import run_inspector, run_with_etdump

    torch.manual_seed(MODEL_SEED)
    spec = MODELS[name]()
    model, inputs = spec["model"].eval(), spec["inputs"]
    ex = inputs(INPUT_SEEDS[0])
    float_model = None
    calls: List[str] = [f"torch.manual_seed({MODEL_SEED}); build the model; model.eval()"]
    eager = model
    if "quant" in spec:
        import copy
        float_model = copy.deepcopy(model)
        eager, qcalls = _quantize(spec, model, ex)
        calls += qcalls
    dyn = spec.get("dynamic_shapes")
    ep = torch.export.export(eager, ex, dynamic_shapes=dyn)
    calls.append("ep = torch.export.export(model, inputs, dynamic_shapes=DYN)  # DYN: see 'dynamic'"
                 if dyn else "ep = torch.export.export(model, inputs)")
    part = spec.get("partitioner", XnnpackPartitioner)()
    edge = to_edge_transform_and_lower(ep, partitioner=[part], generate_etrecord=True)
    calls.append(f"to_edge_transform_and_lower(ep, partitioner=[{spec.get('partitioner_call', 'XnnpackPartitioner()')}], "
                 "generate_etrecord=True)")
    et = edge.to_executorch()
    calls.append("to_executorch()  # default ExecutorchBackendConfig")
    pte = bytes(et.buffer)
    (out / f"{name}.pte").write_bytes(pte)

    # Bundled program (expected = eager) and the ETRecord with its representative inputs.
    cases = []
    if dyn:
        et_k = spec["etdump_shape"]
        et_inputs = spec["make_inputs"](SHAPE_SEED + et_k, spec["shapes"][et_k])
        case_inputs = [et_inputs, ex]
    else:
        case_inputs = [inputs(s) for s in INPUT_SEEDS]
    for inp in case_inputs:
        with torch.no_grad():
            cases.append(MethodTestCase(inputs=list(inp), expected_outputs=_flat(eager(*inp))))
    bp = BundledProgram(et, [MethodTestSuite(method_name="forward", test_cases=cases)])
    (out / f"{name}.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))
    etr = et.get_etrecord()
    etr.update_representative_inputs(bp)
    etr.update_reference_outputs(bp)
    etr.save(str(out / f"{name}.etrecord"))

    # ExecuTorch's own runtime (pybindings, XNNPACK backend registered), one thread.
    portable_lib._unsafe_reset_threadpool(THREADS)
    backends = list(portable_lib._get_registered_backend_names())
    assert "XnnpackBackend" in backends, backends
    rt = portable_lib._load_for_executorch_from_buffer(pte)
    got = list(rt.run_method("forward", tuple(ex)))
    for i, t in enumerate(ex):
        save_npy(out / f"{name}.input{i}.npy", t)
    for i, t in enumerate(got):
        save_npy(out / f"{name}.output{i}.npy", t)
    again = list(portable_lib._load_for_executorch_from_buffer(pte).run_method("forward", tuple(ex)))
    with torch.no_grad():
        ref = _flat(eager(*ex))
    meta: Dict[str, Any] = {
        "name": name, "family": spec["family"], "exporter_calls": calls, "versions": versions(),
        "model_seed": MODEL_SEED, "input_seed": INPUT_SEEDS[0], "pte_bytes": len(pte),
        "runtime": {"api": "executorch.extension.pybindings.portable_lib._load_for_executorch_from_buffer"
                           "(pte).run_method('forward', inputs)",
                    "registered_backends": backends,
                    "threadpool_threads": portable_lib._threadpool_get_thread_count(),
                    "threads_note": f"_unsafe_reset_threadpool({THREADS}) before loading (XNNPACK runs on "
                                    "ExecuTorch's threadpool)",
                    "second_load_bit_identical": all(torch.equal(a, b) for a, b in zip(got, again))},
        "inputs": _shapes(list(ex)), "outputs": _shapes(got),
        "max_abs_diff_vs_eager": _max_diff(got, ref),
        "eager_reference": "the quantized model (pt2e: the converted graph with q/dq ops; torchao: the "
                           "quantize_-d module)" if float_model is not None else "the float model",
    }
    if float_model is not None:
        with torch.no_grad():
            meta["max_abs_diff_vs_float_model"] = _max_diff(got, _flat(float_model(*ex)))
        meta["max_abs_ref"] = [float(r.abs().max()) for r in ref]

    dyn_info = _run_dynamic(name, spec, pte, eager, ex, got, out, ep) if dyn else None

    # The program and its XNNPACK payloads.
    facts = program_facts(pte)
    plan = facts["execution_plans"][0]
    kinds = plan["instruction_kind_counts"]
    meta["program"] = {
        "instruction_kind_counts": kinds,
        "num_delegate_calls": kinds.get("DelegateCall", 0),
        "num_kernel_calls": kinds.get("KernelCall", 0),
        "instructions_in_order": [i.get("op") or f"DELEGATE_CALL #{i['delegate_index']}" if i["kind"] in
                                  ("KernelCall", "DelegateCall") else i["kind"] for i in plan["instructions"]],
        "operators": plan["operators"],
        "delegates": plan["delegates"],
        "inputs": plan["inputs"], "outputs": plan["outputs"],
        "segments": facts["segments"],
        "raw_num_backend_delegate_data": facts["raw_num_backend_delegate_data"],
        "num_named_data": len(facts["raw_named_data"]),
        "constant_segment": facts["constant_segment"],
        "raw_num_constant_buffer": facts["raw_num_constant_buffer"],
        "raw_constant_segment_offsets": facts["raw_constant_segment_offsets"],
        "non_const_buffer_sizes": plan["non_const_buffer_sizes"],
    }
    from executorch.exir._serialize import _program as _p
    eh = _p._get_extended_header(pte)
    raw = _p._flatbuffer_to_program(pte[:eh.program_size] if eh and eh.is_valid() else pte)
    meta["program"]["raw_delegates"] = [
        {"id": dl.id, "location": dl.processed.location.name, "index": dl.processed.index,
         "segment": facts["segments"][dl.processed.index] if dl.processed.location.name == "SEGMENT" else None}
        for dl in raw.execution_plan[0].delegates]
    meta["program"]["named_data"] = [
        {"key": nd.key, "segment_index": nd.segment_index, "size": facts["segments"][nd.segment_index]["size"]}
        for nd in (raw.named_data or [])]
    prog = deserialize_pte_binary(pte).program
    payloads = []
    for k, dl in enumerate(prog.execution_plan[0].delegates):
        blob = bytes(prog.backend_delegate_data[dl.processed.index].data)
        from executorch.backends.xnnpack.serialization.xnnpack_graph_serialize import XNNHeader
        h = XNNHeader.from_bytes(blob[:XNNHeader.EXPECTED_LENGTH])
        graph = _decode_xnngraph(blob[h.flatbuffer_offset:h.flatbuffer_offset + h.flatbuffer_size])
        pf = xnn_payload_facts(blob, graph)
        pf["delegate_index"] = k
        pf["sha256"] = hashlib.sha256(blob).hexdigest()
        pf["graph_json"] = f"{name}.delegate{k}.xnngraph.json"
        write_json(out / pf["graph_json"], {"payload_sha256": pf["sha256"], "header": pf["header"],
                                           "flatbuffer_file_identifier": pf["flatbuffer_file_identifier"],
                                           "decoded_by": "flatc --json --raw-binary with the wheel's "
                                                         "backends/xnnpack/serialization/schema.fbs",
                                           "graph": graph})
        payloads.append(pf)
    meta["xnnpack_payloads"] = payloads
    if dyn:
        dyn_info["program_tensors"] = _program_tensor_dynamism(prog)
        dyn_info["xnngraph"] = [_xnngraph_dynamic_facts(
            json.loads((out / p["graph_json"]).read_text())["graph"], k) for k, p in enumerate(payloads)]
    meta["xnnpack_header_layout"] = HEADER_LAYOUT

    # ETDump (delegate profiling events from the XNNPACK profiler) and the Inspector.
    def load(**kw):
        return portable_lib._load_for_executorch_from_buffer(pte, **kw)

    log_lines: List[str] = []

    def log(s: str) -> None:
        print(f"[{name}] {s}", flush=True)
        log_lines.append(s)

    from inspect_tools import etdump_to_dict
    try:
        info = run_with_etdump(load, et_inputs if dyn else ex, out, name, runs=ETDUMP_RUNS, log=log)
        et_outs = info.pop("runtime_outputs", None)
        if dyn:
            info["run_at"] = {"shape_index": et_k, "inputs": _shapes(list(et_inputs)),
                              "input_files": [f"{name}.shape{et_k}.input{i}.npy" for i in range(len(et_inputs))],
                              "note": "ETDump, debug buffer, profile ETDump and Inspector are at this shape "
                                      "(bundled case 0 = the ETRecord's representative input), not at the "
                                      "export shape nor the upper bound",
                              "outputs_sha256_equal_shape_outputs": [
                                  o.get("sha256") == hashlib.sha256(np.ascontiguousarray(
                                      t.numpy()).tobytes()).hexdigest()
                                  for o, t in zip(et_outs or [], dyn_info["_outputs"][et_k])]}
        with_debug = True
    except subprocess.CalledProcessError as e:
        # fp16: the ETDump written with a debug buffer does not decode with the wheel's flatc
        # ("string contains non-utf8 bytes"). Keep the profile-only ETDump as <n>.etdp.
        for junk in out.glob(f".{name}.probe.*"):
            junk.unlink()
        log(f"ETDump with a debug buffer does not decode (flatc exit status {e.returncode}); "
            "profile-only ETDump instead")
        with_debug = False
        mod = load(enable_etdump=True, debug_buffer_size=0)
        for _ in range(ETDUMP_RUNS):
            mod.run_method("forward", tuple(et_inputs if dyn else ex))
        mod.write_etdump_result_to_file(str(out / f"{name}.etdp"))
        shutil.copyfile(out / f"{name}.etdp", out / f"{name}.profile.etdp")
        d = etdump_to_dict(out / f"{name}.etdp")
        write_json(out / f"{name}.etdump.json", d)
        info = {"intermediate": {"error": "flatc could not decode the ETDump written with a debug buffer "
                                          "(string contains non-utf8 bytes): profile-only ETDump stored"},
                "profile_only": {"etdp": f"{name}.etdp (same bytes as {name}.profile.etdp)",
                                 "executions": ETDUMP_RUNS},
                "delegate_profile_events": sum(1 for r in d["run_data"] for ev in (r.get("events") or [])
                                               if ev.get("profile_event") and
                                               ev["profile_event"].get("delegate_debug_id_str"))}
    prof = etdump_to_dict(out / f"{name}.profile.etdp")
    run1 = [r for r in prof["run_data"] if r["name"] == "Execute"][:1]
    info["delegate_event_names_first_execution"] = [
        (ev["profile_event"].get("delegate_debug_id_str") or ev["profile_event"].get("name"))
        for r in run1 for ev in (r.get("events") or []) if ev.get("profile_event")]
    tops = [n for n, _ in spec["model"].named_children()] if float_model is None else \
        [n for n, _ in float_model.named_children()]
    if with_debug:
        insp = run_inspector(out, name, out / f"{name}.etrecord", tops, log=log)
    else:
        insp = _inspector_without_debug_buffer(out, name, tops)
    gaps = insp.get("calculate_numeric_gap", {})
    info["inspector"] = {
        "file": f"{name}.inspector.json",
        "num_rows": insp["to_dataframe"]["num_rows"],
        "delegated_rows": sum(1 for r in insp["to_dataframe"]["rows"] if r.get("is_delegated_op")),
        "numeric_gap": {m: ("ok" if "error" not in g else g["error"][:300]) for m, g in gaps.items()},
        "aot_reference_graph": insp.get("aot_reference_graph"), "aot_error": insp.get("aot_error"),
    }
    meta["etdump"] = info
    if dyn:
        dyn_info.pop("_outputs")
        meta["dynamic"] = dyn_info
    meta["log"] = log_lines
    write_json(out / f"{name}.json", meta)
    return meta


def _inspector_without_debug_buffer(out: Path, name: str, tops: List[str]) -> Dict[str, Any]:
    """Inspector(etdump, etrecord) when there is no debug buffer: same layout as run_inspector's."""
    from executorch.devtools import Inspector
    from inspect_tools import _df_records, _event_structure
    insp = Inspector(etdump_path=str(out / f"{name}.etdp"), etrecord=str(out / f"{name}.etrecord"))
    res: Dict[str, Any] = {"meta": {"etdump": f"{name}.etdp", "etrecord": f"{name}.etrecord",
                                    "debug_buffer": None, "method": "forward",
                                    "note": "profile-only ETDump: no debug buffer, no numeric gap"}}
    res["to_dataframe"] = _df_records(insp.to_dataframe())
    res["event_blocks"] = _event_structure(insp)
    totals = {}
    for m in tops:
        try:
            totals[m] = insp.find_total_for_module(m)
        except Exception as ex:  # noqa: BLE001
            totals[m] = {"error": repr(ex)}
    res["find_total_for_module"] = {"unit": "ms (target time scale)", "totals": totals}
    res["calculate_numeric_gap"] = {}
    write_json(out / f"{name}.inspector.json", res)
    return res


# --------------------------------------------------------------------------- pack

RAW_LIMIT = 384 * 1024  # bigger files go into xnnpack.tar.xz
ARCHIVE = "xnnpack.tar.xz"
# Generated but not committed (size budget): the Inspector's AOT intermediates (numeric-gap
# inputs, random floats that do not compress) and the JSON decode of the profile-only ETDump.
EXCLUDE_SUFFIXES = tuple(os.environ.get(
    "ETSCOPE_XNN_EXCLUDE", ".aot_intermediates.ptd .aot_intermediates.json .profile.etdump.json").split())
# The AOT intermediates of these models are committed all the same: the tests check the numeric
# gap per node inside their delegates (fp32 CNN, transformer, 1-D conv and op mix, partial
# delegation, transposed convolution, and the NHWC-softmax divergence).
KEEP_AOT = tuple(f"{m}.aot_intermediates" for m in
                 ("xnn_cnn", "xnn_transformer", "xnn_nhwc_softmax", "xnn_ops_more", "xnn_partial", "xnn_convt"))
# ExecuTorch's JSON decodes go into the archive whatever their size (they compress ~10x).
ARCHIVE_SUFFIXES = (".etdump.json", ".inspector.json")
# The dynamic-shape models (xnn_dyn_*) are packed apart, into their own fixture directory
# (--pack-dynamic): `--pack` leaves them out, so the static directory stays as it was.
DYNAMIC_PREFIX = "xnn_dyn_"
DYNAMIC_ARCHIVE = "xnnpack_dynamic.tar.xz"
DYNAMIC_KEEP_AOT = tuple(f"{m}.aot_intermediates" for m in ("xnn_dyn_cnn", "xnn_dyn_transformer"))
# Size budget (~2 MB for the directory): the ETRecords, bundled programs, debug buffers, AOT
# intermediates and profile-only ETDumps of the dynamic models go into the archive too.
DYNAMIC_ARCHIVE_SUFFIXES = ARCHIVE_SUFFIXES + (".etrecord", ".bpte", ".debug.bin", ".aot_intermediates.ptd",
                                               ".aot_intermediates.json", ".profile.etdp")


def pack(work: Path, dest: Path, archive: str = ARCHIVE, dynamic: bool = False,
         keep_aot: Tuple[str, ...] = KEEP_AOT, archive_suffixes: Tuple[str, ...] = ARCHIVE_SUFFIXES) -> None:
    """Copy small files raw, put big ones (and the JSON decodes) into dest/<archive>; write
    dest/index.json (size, sha256, archive per file). Files sharing weights (<n>.pte, .bpte,
    .etrecord) sit next to each other in name order, inside xz's window. dynamic: pack the
    xnn_dyn_* models only (else every other model)."""
    import shutil
    work, dest = work.resolve(), dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    for old in dest.iterdir():
        if old.name != "MANIFEST.md":
            old.unlink()
    files = sorted(p for p in work.iterdir()
                   if p.is_file() and not p.name.startswith(".") and
                   p.name.startswith(DYNAMIC_PREFIX) == dynamic and
                   (not p.name.endswith(EXCLUDE_SUFFIXES) or p.name.startswith(keep_aot)))
    big = [p.name for p in files if p.stat().st_size > RAW_LIMIT or p.name.endswith(archive_suffixes)]
    index = {}
    for p in files:
        index[p.name] = {"size": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                         "archive": archive if p.name in big else None}
        if p.name not in big:
            shutil.copyfile(p, dest / p.name)
    if big:
        env = dict(os.environ, XZ_OPT="-9e")
        subprocess.run(["tar", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner",
                        "--format=gnu", "-cJf", str(dest / archive), *big], cwd=work, check=True, env=env)
    (dest / "index.json").write_text(json.dumps(index, indent=1) + "\n")


def main() -> None:
    if sys.argv[1] == "--pack":
        pack(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    if sys.argv[1] == "--pack-dynamic":
        pack(Path(sys.argv[2]), Path(sys.argv[3]), archive=DYNAMIC_ARCHIVE, dynamic=True,
             keep_aot=DYNAMIC_KEEP_AOT, archive_suffixes=DYNAMIC_ARCHIVE_SUFFIXES)
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    names = sys.argv[2:] or list(MODELS)
    failed = []
    for n in names:
        try:
            meta = export_one(n, out)
            kinds = sorted({k for p in meta["xnnpack_payloads"] for k in p["node_kind_counts"]})
            print(f"[{n}] ok pte={meta['pte_bytes']} max_abs_diff={meta['max_abs_diff_vs_eager']} "
                  f"delegates={meta['program']['num_delegate_calls']} kernels={meta['program']['num_kernel_calls']} "
                  f"nodes={kinds}", flush=True)
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
