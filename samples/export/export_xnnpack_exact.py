#!/usr/bin/env python3
"""Float XNNPACK programs whose every output the etscope engine computes bit for bit as
ExecuTorch does: convolutions of few input channels (kernel rows read in the image), XNNPACK's softmax (its AVX-512 exp and sum order, denormals flushed), its
batch matrix products (each output summed from zero with fused multiply-adds) and ExecuTorch's
optimized layer norm (rows shorter than 256 in float, longer ones by Welford's method in 8 lanes).

Each program is lowered with to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])
and run by ExecuTorch's own runtime (portable_lib, threadpool reset to 1 thread). Per program
<n>: <n>.pte, <n>.input0.npy, <n>.output0.npy (ExecuTorch's output), <n>.json (facts).
ExecuTorch's x86-64 XNNPACK picks its kernels by CPU features: these outputs are from a CPU with
AVX-512F (the json names the machine), and etscope's AVX-512 build reproduces them.

Usage: python export_xnnpack_exact.py OUT_DIR [name ...]
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Dict, List

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import common  # noqa: F401  (sets sys.path)
from common import save_npy, versions, write_json

MODEL_SEED = 0
INPUT_SEED = 1


class Softmaxes(nn.Module):
    """Softmax over 32 rows of 7, 17, 64, 197 and 1000 values (XNNPACK's kernel: blocks of 64,
    whole 16s and a masked rest), some spanning 90 in the exponent (results that flush to zero),
    some of many comparable terms (where the sum's order shows)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        cases = ((7, 1.0), (17, 12.0), (64, 3.0), (197, 1.0), (197, 25.0), (1000, 1.0), (1000, 40.0))
        rows = [torch.softmax(x[:, :n] * s, dim=-1) for n, s in cases]
        return torch.cat(rows, dim=-1)


class Attention(nn.Module):
    """Scores of 4 heads (a batch matrix product against the transposed keys), their softmax
    and the weighted values (a batch matrix product), 33 queries of 40 features."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = x[0], x[1] * 0.7, x[2] - 0.1
        scores = torch.matmul(q, k.transpose(-1, -2)) * 0.3
        return torch.matmul(torch.softmax(scores, dim=-1), v)


class LayerNorms(nn.Module):
    """Layer norms over rows of 40 (float sums), 256 and 300 values (8-lane Welford, the last
    with values past the last whole vector), with and without weight and bias."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.LayerNorm(40)
        self.b = nn.LayerNorm(256)
        nn.init.normal_(self.a.weight)
        nn.init.normal_(self.a.bias)
        nn.init.normal_(self.b.weight)
        nn.init.normal_(self.b.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.a(x[:, :, :40] * 3.0)
        z = self.b(x[:, :, :256] - 0.5)
        w = F.layer_norm(x * 2.0, (300,))
        return torch.cat([y, z, w], dim=-1)


class Stems(nn.Module):
    """Convolutions of 1 to 3 input channels (the etscope engine reads their kernel rows in the
    image, and copies those of windows that cross the left or right edge): stride 2 with padding
    1, a 5x5 window with padding 2 on a 1-channel map, a 7x7 window with stride 2, padding 3 and
    vertical dilation 2 on 2 channels, and a window wider than its 3-column input."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.b = nn.Conv2d(1, 4, 5, padding=2)
        self.c = nn.Conv2d(2, 6, 7, stride=2, padding=3, dilation=(2, 1))
        self.d = nn.Conv2d(3, 5, (3, 5), padding=(1, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.a(x[:, :3])                          # 23x29 -> 12x15
        b = self.b(x[:, 3:4])                         # 23x29
        c = self.c(x[:, 4:6])                         # 23x29 -> 9x15
        d = self.d(x[:, :3, :, :3])                   # 3 columns, a 5-wide window
        return torch.cat([a.flatten(1), b.flatten(1), c.flatten(1), d.flatten(1)], dim=1)


class WideStems(nn.Module):
    """Convolutions of 1 to 3 input channels on rows of many windows (the etscope engine runs each
    output row's windows inside the image together, kernel rows read in place, and the edge
    windows from copies) and a spectrogram-like stem of few columns (a 10x4 window, stride 2, on
    one channel with 64 outputs, which XNNPACK takes as a depthwise convolution and runs as an
    IGEMM; the etscope engine reads a padded copy): 3x3 stride 2 and 7x7 stride 2 padding 3 on 3
    channels, 5x5 on one channel with 8 outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.b = nn.Conv2d(3, 8, 7, stride=2, padding=3)
        self.c = nn.Conv2d(1, 8, 5, padding=2)
        self.d = nn.Conv2d(1, 64, (10, 4), stride=2, padding=(5, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = self.a(x[:, :3])                          # 40x90 -> 20x45
        b = self.b(x[:, :3])                          # 40x90 -> 20x45
        c = self.c(x[:, 3:4])                         # 40x90
        d = self.d(x[:, 3:4, :, :10])                 # 40x10 -> 21x5
        return torch.cat([a.flatten(1), b.flatten(1), c.flatten(1), d.flatten(1)], dim=1)


class Clamps(nn.Module):
    """Clamps XNNPACK's runtime fuses into the node that produces their input (the node writes
    the clamped output in one pass, its range and the Clamp's combined): after a 3-channel
    convolution, a depthwise convolution whose ReLU the exporter already fused (the ranges meet
    in [0, 0.7]), an Add, a fully connected layer and a Multiply; and one whose input has a
    second reader (no fusion)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.b = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.c = nn.Linear(8, 12)
        self.d = nn.Conv2d(3, 4, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.clamp(self.a(x), -0.5, 1.5)
        z = torch.clamp(F.relu(self.b(y)), max=0.7)
        s = torch.clamp(z + y, -0.2, 0.9)
        t = torch.clamp(self.c(s.mean((2, 3))), -0.3, 0.3)
        u = torch.clamp(s * 3.0, 0.1, 2.0)
        v = self.d(x)
        w = torch.clamp(v, 0.0, 1.0) + v
        return torch.cat([s.flatten(1), t.flatten(1), u.flatten(1), w.flatten(1)], dim=1)


class Depthwise(nn.Module):
    """Depthwise convolutions XNNPACK runs with its depthwise kernels, which add a window's taps
    column by column (3x3 over 17, 40 and 70 channels, stride 2, dilation 2; 5x5 with padding 2;
    1x3; 2x2; a 3x3 on a map narrower than its window), and ones it runs as grouped GEMMs, whose
    sums go row by row (7x7: 49 taps; a channel multiplier of 2)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(17, 17, 3, padding=1, groups=17)
        self.b = nn.Conv2d(40, 40, 3, stride=2, padding=1, groups=40)
        self.c = nn.Conv2d(70, 70, 3, padding=2, dilation=2, groups=70)
        self.d = nn.Conv2d(17, 17, 5, padding=2, groups=17)
        self.e = nn.Conv2d(40, 40, (1, 3), padding=(0, 1), groups=40)
        self.f = nn.Conv2d(17, 17, 2, groups=17)
        self.g = nn.Conv2d(17, 17, 7, padding=3, groups=17)
        self.h = nn.Conv2d(17, 34, 3, padding=1, groups=17)
        self.i = nn.Conv2d(40, 40, 3, padding=1, groups=40)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x17, x40, x70 = x[:, :17], x[:, :40], x[:, :70]
        outs = [self.a(x17), self.b(x40), self.c(x70), self.d(x17), self.e(x40), self.f(x17), self.g(x17), self.h(x17),
                self.i(x40[:, :, :, :2])]
        return torch.cat([o.flatten(1) for o in outs], dim=1)


class Pools(nn.Module):
    """Means and average poolings as XNNPACK sums them: a mean over 7x7 and 5x3 pixels (rows in
    order, times the reciprocal of the count); average poolings of 2x2 and 3x3 windows with stride
    2, 5x5 with stride 5, and padded 3x3 and 5x5 ones that leave the padding out of the count
    (XNNPACK's pixelwise pooling): taps column by column, nine at a time in a fixed tree."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [
            x.mean(dim=(2, 3)),
            x[:, :17, :5, :3].mean(dim=(2, 3)),
            F.adaptive_avg_pool2d(x * 3.0, 1),
            F.avg_pool2d(x, 2, 2),
            F.avg_pool2d(x, 3, 2),
            F.avg_pool2d(x[:, :, :5, :5], 5, 5),
            F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
            F.avg_pool2d(x, 5, 1, 2, count_include_pad=False),
        ]
        return torch.cat([o.flatten(1) for o in outs], dim=1)


class Unary(nn.Module):
    """GELU (erf, and the tanh form, which XNNPACK computes as the erf one), tanh, exp, sigmoid,
    SiLU, square roots and logs as XNNPACK's AVX-512 kernels compute them (ratios of polynomials,
    clamped where they saturate; exp from a magic-bias split; sigmoid from a 32-entry table of
    2^(k/32); sqrt as x times a refined reciprocal-root estimate; log from the exponent and a ratio
    of polynomials in the mantissa), over [-12, 12] and, for exp and sigmoid, [-100, 100] (0, 1 and
    infinity); square roots of [0, 84] and of zeros; logs of [-6, 6] (NaN below 0) and [0, 1.2e5]."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = x * 6.0
        outs = [F.gelu(y), F.gelu(y * 0.7, approximate="tanh"), torch.tanh(y * 0.9), torch.exp(y), torch.exp(x * 50.0), torch.sigmoid(y),
                torch.sigmoid(x * 50.0), F.silu(y), torch.sqrt(torch.abs(y) * 7.0), torch.sqrt(x * 0.0), torch.log(x * 3.0), torch.log(torch.abs(y) * 1e4)]
        return torch.cat([o.flatten(1) for o in outs], dim=1)


class Resize(nn.Module):
    """Bilinear resizes as XNNPACK's ibilinear kernel blends (source coordinates from its
    indirection: o x scale + (0.5 scale - 0.5), or o x scale with align_corners; no fused
    multiply-add): x2, and to 33x27 (scales that are no simple fractions), with and without
    align_corners."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [
            F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False),
            F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=True),
            F.interpolate(x, size=(33, 27), mode="bilinear", align_corners=False),
            F.interpolate(x, size=(33, 27), mode="bilinear", align_corners=True),
        ]
        return torch.cat([o.flatten(1) for o in outs], dim=1)


class Deconvolutions(nn.Module):
    """Transposed convolutions as XNNPACK's deconvolution computes them (per output pixel the
    bias, then each tap that reaches an input pixel, row by row, column by column, over the input
    channels in order, with fused multiply-adds): 3x3 stride 1, 3x3 stride 2 with output padding,
    4x4 stride 2 padding 1, 2x2 stride 2, two groups, dilation 2, and a 2x2 window with stride 3
    (output pixels no tap reaches: the bias alone)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.ConvTranspose2d(16, 8, 3, stride=1, padding=1)
        self.b = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, output_padding=1)
        self.c = nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1)
        self.d = nn.ConvTranspose2d(16, 12, 2, stride=2)
        self.e = nn.ConvTranspose2d(16, 8, 3, stride=2, padding=1, groups=2)
        self.f = nn.ConvTranspose2d(16, 8, 3, stride=1, padding=2, dilation=2)
        self.g = nn.ConvTranspose2d(16, 8, 2, stride=3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [self.a(x), self.b(x), self.c(x), self.d(x), self.e(x), self.f(x), self.g(x)]
        return torch.cat([o.flatten(1) for o in outs], dim=1)


class Gemms(nn.Module):
    """Convolutions and fully connected layers through every blocking of the etscope engine's
    float GEMM, each output the bias then its products in input order with fused multiply-adds:
    3x3 convolutions of 64 and 16 channels into 72 (225 pixels: blocks of 10 or 8 rows, the
    next panel fetched meanwhile, the last rows several panels at a time, a last panel of 8
    outputs), 1x1 convolutions of 64 into 16 and 200 and a layer of 300 inputs on 48 rows (blocks
    of 7 rows over every panel, the last rows apart), a layer of 576 inputs to 230 on 25 rows (a
    packing past the second-level cache: 10-row blocks, 5 last rows two panels at a time)."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(64, 72, 3, padding=1)
        self.b = nn.Conv2d(64, 16, 1)
        self.c = nn.Conv2d(16, 72, 3, padding=1)
        self.d = nn.Conv2d(64, 200, 1)
        self.e = nn.Linear(576, 230)
        self.f = nn.Linear(300, 100)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        outs = [self.a(x), self.c(self.b(x)), self.d(x), self.e(x.reshape(25, 576)), self.f(x.reshape(48, 300))]
        return torch.cat([o.flatten() for o in outs]).unsqueeze(0)


MODELS: Dict[str, Dict[str, Any]] = {
    "xnn_exact_softmax": dict(build=Softmaxes, shape=(32, 1000)),
    "xnn_exact_attention": dict(build=Attention, shape=(3, 4, 33, 40)),
    "xnn_exact_layer_norm": dict(build=LayerNorms, shape=(2, 5, 300)),
    "xnn_exact_stems": dict(build=Stems, shape=(1, 6, 23, 29)),
    "xnn_exact_wide_stems": dict(build=WideStems, shape=(1, 4, 40, 90)),
    "xnn_exact_clamps": dict(build=Clamps, shape=(1, 3, 21, 27)),
    "xnn_exact_depthwise": dict(build=Depthwise, shape=(1, 70, 13, 19)),
    "xnn_exact_pools": dict(build=Pools, shape=(1, 40, 7, 7)),
    "xnn_exact_unary": dict(build=Unary, shape=(4, 1001)),
    "xnn_exact_resize": dict(build=Resize, shape=(1, 12, 14, 11)),
    "xnn_exact_deconv": dict(build=Deconvolutions, shape=(1, 16, 9, 7)),
    "xnn_exact_gemms": dict(build=Gemms, shape=(1, 64, 15, 15)),
}


def max_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """The largest |a - b|, equal values (infinities of one sign, both NaN) differing by 0."""
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    return float(torch.where(same, 0.0, (a - b).abs()).max())


def export(name: str, out: Path) -> None:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings import portable_lib

    spec = MODELS[name]
    torch.manual_seed(MODEL_SEED)
    model = spec["build"]().eval()
    g = torch.Generator().manual_seed(INPUT_SEED)
    x = (torch.rand(spec["shape"], generator=g) * 4.0 - 2.0).float()
    ep = torch.export.export(model, (x,))
    pte = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    portable_lib._unsafe_reset_threadpool(1)
    y = portable_lib._load_for_executorch_from_buffer(pte).run_method("forward", (x,))[0]
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.pte").write_bytes(pte)
    save_npy(out / f"{name}.input0.npy", x)
    save_npy(out / f"{name}.output0.npy", y)
    with torch.no_grad():
        eager = model(x)
    import platform
    write_json(out / f"{name}.json", {
        "model": name, "doc": spec["build"].__doc__, "versions": versions(), "machine": platform.processor() or platform.machine(),
        "cpu": open("/proc/cpuinfo").read().split("model name")[1].split("\n")[0].strip(": \t") if Path("/proc/cpuinfo").exists() else "",
        "input_shape": list(x.shape), "output_shape": list(y.shape),
        "executorch_vs_eager_max_abs_diff": max_diff(y, eager),
        "exporter_calls": ["torch.manual_seed(0); model = build().eval()", "torch.export.export(model, (x,))",
                           "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer",
                           "portable_lib._unsafe_reset_threadpool(1); _load_for_executorch_from_buffer(pte).run_method('forward', (x,))"],
        "pte_bytes": len(pte),
    })
    print(f"{name}: {len(pte)} bytes, ExecuTorch vs eager {max_diff(y, eager):.3g}")


def main(argv: List[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    for name in argv[1:] or list(MODELS):
        export(name, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
