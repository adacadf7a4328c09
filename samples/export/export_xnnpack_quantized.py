#!/usr/bin/env python3
"""Small pt2e static-int8 XNNPACK programs where rounding ties matter.

Each model is quantized with XNNPACKQuantizer().set_global(get_symmetric_quantization_config(
is_per_channel=True)), lowered with to_edge_transform_and_lower(..., [XnnpackPartitioner()]) and run
with ExecuTorch's own runtime (portable_lib, threadpool reset to 1 thread). Per model <n>:
  <n>.pte, <n>.input0.npy, <n>.output0.npy (ExecuTorch's output), <n>.json (facts).

The facts include how ExecuTorch's output compares with torch's float emulation of the quantized
graph (the convert_pt2e module: dequantize -> float op -> quantize), counted in output quantization
steps, and how many global-average-pool outputs are exact rounding ties.

Usage: python export_xnnpack_quantized.py OUT_DIR [name ...]
       python export_xnnpack_quantized.py --nonfinite OUT_DIR [name ...]   (only <n>.nonfinite.output0.npy)
Models: xnnq_resnet_block, xnnq_mbv2_pool, xnnq_mixed, xnnq_clamps, xnnq_conv_windows, xnnq_adds, xnnq_concats.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import common  # noqa: F401  (sets sys.path)
from common import save_npy, versions, write_json
from export_xnnpack import randn

MODEL_SEED = 0
INPUT_SEED = 1
CALIBRATION_SEEDS = (100, 101, 102, 103)
BN_SEEDS = (1000, 1001, 1002)
THREADS = 1


# --------------------------------------------------------------------------- models


class ResnetBlock(nn.Module):
    """torchvision resnet18 stem + maxpool + layer1[0] + layer1[1] (conv1-bn1-relu-conv2-bn2,
    + identity, relu). layer1[1].conv1 has the exact tie (acc * scale == 69.5) for this input."""

    def __init__(self) -> None:
        super().__init__()
        import torchvision.models as tvm
        self.r = tvm.resnet18(weights=None)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        r = self.r
        x = r.maxpool(r.relu(r.bn1(r.conv1(x))))
        for b in r.layer1[:2]:
            y = b.relu(b.bn1(b.conv1(x)))
            y = b.bn2(b.conv2(y))
            x = b.relu(y + x)
        return x


def mbv2() -> nn.Module:
    import torchvision.models as tvm
    m = tvm.mobilenet_v2(weights=None, width_mult=0.25, num_classes=10)
    # torchvision keeps last_channel at 1280 for width_mult < 1; shrink the final 1x1 conv so the
    # program stays small (features[-1] is Conv2dNormActivation(in, 1280, 1)).
    from torchvision.ops.misc import Conv2dNormActivation
    cin = m.features[-1][0].in_channels
    m.features[-1] = Conv2dNormActivation(cin, 320, kernel_size=1, norm_layer=nn.BatchNorm2d,
                                          activation_layer=nn.ReLU6)
    m.classifier[1] = nn.Linear(320, 10)
    m.last_channel = 320
    return m


class Mixed(nn.Module):
    """conv+relu6, depthwise conv, residual add, hardtanh, global average pool, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3, stride=2, padding=1)
        self.dw = nn.Conv2d(16, 16, 3, padding=1, groups=16)
        self.pw = nn.Conv2d(16, 16, 1)
        self.down = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.dw2 = nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32)
        self.fc = nn.Linear(32, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu6(self.stem(x))                 # [1,16,16,16]
        y = self.pw(F.relu6(self.dw(x)))
        x = F.hardtanh(x + y, -2.0, 2.0)          # residual add, hardtanh
        x = F.relu6(self.down(x))                 # [1,32,8,8]
        x = self.dw2(x)                           # [1,32,4,4]
        x = F.adaptive_avg_pool2d(x, 1)           # 16-element windows
        return self.fc(torch.flatten(x, 1))


class Clamps(nn.Module):
    """relu6 quantized apart from its input (pt2e gives it its own observer): after a convolution
    whose output is also read elsewhere, after a depthwise convolution, after an add and after a
    linear layer. The output is the last feature map, so that a one-step difference anywhere
    shows."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.dw = nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.pw = nn.Conv2d(8, 8, 1)
        self.fc = nn.Linear(8, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        t = self.conv(x)
        a = F.relu6(t)                                         # conv output read twice: not fused
        b = F.relu6(self.dw(a))                                # depthwise conv, relu6
        c = F.relu6(self.pw(b) + t)                            # 1x1 conv, add, relu6
        return F.relu6(self.fc(c.permute(0, 2, 3, 1)))         # linear over channels, relu6


class ConvWindows(nn.Module):
    """Dense int8 convolutions of many window shapes on odd image sizes: stride 2 whose last
    rows no window reaches, dilation 2, a rectangular kernel with rectangular strides and padding,
    a 1x1 stride-2 and a 2x2 stride-2 convolution, a 5x5 window, an explicit asymmetric zero pad
    before a convolution, and a grouped (not depthwise) convolution. The etscope engine reads the
    windows with channels a multiple of 4 in place and the others (3 and 6 channels, groups) from
    an im2col matrix."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.b = nn.Conv2d(8, 12, 3, padding=2, dilation=2)
        self.c = nn.Conv2d(12, 16, (3, 5), stride=(2, 1), padding=(0, 2))
        self.d = nn.Conv2d(16, 16, 1, stride=2)
        self.e = nn.Conv2d(16, 20, 2, stride=2)
        self.f = nn.Conv2d(20, 24, 5, padding=2)
        self.g = nn.Conv2d(24, 24, 3, padding=1, groups=4)
        self.h = nn.Conv2d(24, 6, 3)
        self.i = nn.Conv2d(6, 8, 3, padding=1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.a(x))                       # 31x29 -> 16x15 (C = 3: im2col)
        x = F.relu(self.b(x))                       # dilation 2
        x = F.relu(self.c(x))                       # 16x15 -> 7x15, rows past the last window
        y = F.relu(self.d(x))                       # 1x1 stride 2 -> 4x8
        z = F.relu(self.e(F.pad(x, (1, 0, 1, 0))))  # asymmetric pad, 2x2 stride 2 -> 4x8
        x = F.relu(self.f(z)) + F.pad(y, (0, 0, 0, 0, 0, 8))
        x = F.relu(self.g(x))                       # groups 4
        x = F.relu(self.h(F.pad(x, (2, 1, 0, 2))))  # 6 channels out, explicit pad
        return self.i(x)                            # C = 6: im2col


class Adds(nn.Module):
    """int8 adds of every operand layout a transformer block has: a learned per-feature offset
    added along the last dimension (one row repeated), two maps of the same shape, rows of a width
    that is not a multiple of 16, and the graph input itself as an operand."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(40, 40)
        self.fc2 = nn.Linear(40, 40)
        self.offset = nn.Parameter(torch.randn(40))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        a = h + self.offset            # a row repeated along [1, 9, 40]
        b = a + x                      # same shape, the graph input as an operand
        c = F.relu(self.fc2(b)) + a    # same shape
        return c + self.offset


class Concats(nn.Module):
    """An Inception-like int8 block: branches of a 1x1 convolution, a 3x3 convolution and a 3x3 max
    pooling joined along the channels (the quantizer gives the concatenation's inputs its own
    grid: XNNPACK copies their bytes, "Copy (NC, X8)"), then a 1x1 convolution; and a second
    concatenation of a map and its pooling (half as wide) along the width."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3, padding=1)
        self.a = nn.Conv2d(8, 5, 1)
        self.b = nn.Conv2d(8, 7, 3, padding=1)
        self.c = nn.Conv2d(20, 6, 1)
        self.d = nn.Conv2d(6, 4, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = F.relu(self.stem(x))
        y = torch.cat([F.relu(self.a(s)), F.relu(self.b(s)), F.max_pool2d(s, 3, 1, 1)], dim=1)
        z = F.relu(self.c(y))
        w = torch.cat([z, F.max_pool2d(z, (1, 2))], dim=3)
        return self.d(w)


MODELS: Dict[str, Dict[str, Any]] = {
    "xnnq_resnet_block": dict(
        build=ResnetBlock, shape=(1, 3, 64, 64),
        family="torchvision resnet18(weights=None) stem + maxpool + layer1[0..1] (includes the residual adds); "
               "the sweep's trunc_q_r18l1_b1_c4",
        tie="layer1[1].conv1 (+bn1 folded, relu) output (c22,h10,w13): int32 acc 38505 * f32 requant scale "
            "is exactly 69.5; XNNPACK rounds half to even (70), float emulation (acc*in_scale*w_scale "
            "then /out_scale) lands just below and gives 69. The one-step difference then flows through "
            "conv2 and the residual add."),
    "xnnq_mbv2_pool": dict(
        build=mbv2, shape=(1, 3, 64, 64),
        family="torchvision mobilenet_v2(weights=None, width_mult=0.25, num_classes=10) with the final 1x1 "
               "conv narrowed 1280 -> 320 channels (and classifier Linear(320, 10)) to keep the .pte small; "
               "features (2x2 final map) + adaptive_avg_pool2d + flatten + dropout(eval) + linear",
        tie="global average pool over 2x2 int8 values: whenever sum(q) % 4 == 2 the mean is a tie; "
            "XNNPACK's GlobalAvgPooling rounds half to even in raw-q space; with an odd zero point, "
            "rounding half to even in (q - zp) space gives the other neighbour"),
    "xnnq_mixed": dict(
        build=Mixed, shape=(1, 3, 32, 32),
        family="hand-written int8 CNN: conv+relu6, depthwise conv+relu6, 1x1 conv, residual add, "
               "hardtanh(-2, 2), strided conv+relu6, strided depthwise conv, global average pool (4x4), linear",
        tie="global average pool over 4x4 int8 values: ties when sum(q) % 16 == 8; plus whatever "
            "requantization ties the convs / add hit"),
    "xnnq_clamps": dict(
        build=Clamps, shape=(1, 3, 32, 32),
        family="hand-written int8 net of relu6 quantized apart from its input: conv (read twice)+relu6, "
               "depthwise conv+relu6, 1x1 conv, add, relu6, linear over channels+relu6; the output is "
               "that [1,32,32,16] map",
        tie="XNNPACK fuses a clamp that alone reads a convolution's or linear layer's output into that "
            "layer, which then requantizes once, straight into the clamp's quantization; requantizing "
            "into the layer's own output first and then into the clamp's rounds twice"),
    "xnnq_adds": dict(
        build=Adds, shape=(1, 9, 40),
        family="hand-written int8 block of linear layers and adds: a per-feature offset (a row repeated), "
               "same-shape maps, the graph input as an operand, rows of 40",
        tie="none sought: every output must equal ExecuTorch's, whichever way the engine adds"),
    "xnnq_concats": dict(
        build=Concats, shape=(1, 3, 17, 19),
        family="hand-written int8 Inception-like block: 1x1 conv, 3x3 conv and 3x3 max pooling branches "
               "concatenated along the channels, a 1x1 conv, and two branches of unequal widths "
               "concatenated along the width",
        tie="none sought: every output must equal ExecuTorch's, whichever way the engine copies"),
    "xnnq_conv_windows": dict(
        build=ConvWindows, shape=(1, 3, 31, 29),
        family="hand-written int8 CNN of dense convolutions with many window shapes (strides, dilation, "
               "rectangular kernels, asymmetric padding, groups) on odd image sizes",
        tie="none sought: every output must equal ExecuTorch's, whichever way the engine reads the windows"),
}


# --------------------------------------------------------------------------- helpers


def _inputs(shape: Tuple[int, ...], seed: int) -> Tuple[torch.Tensor]:
    return (randn(seed, *shape),)


def _calibrate_bn(model: nn.Module, shape: Tuple[int, ...]) -> bool:
    """As /tmp/sweep/sweep.py did: BN momentum None (cumulative), train mode, 3 batches of
    4 copies of randn(seed 1000..1002). Keeps the resnet tie reproducible."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return False
    for m in bns:
        m.momentum = None
    model.train()
    with torch.no_grad():
        for s in BN_SEEDS:
            model(torch.cat([randn(s, *shape)] * 4))
    model.eval()
    return True


def _quantize(model: nn.Module, ex, shape) -> torch.fx.GraphModule:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    gm = prepare_pt2e(torch.export.export(model, ex).module(), q)
    with torch.no_grad():
        for s in CALIBRATION_SEEDS:
            gm(*_inputs(shape, s))
    return convert_pt2e(gm)


EXPORTER_CALLS = [
    "torch.manual_seed(0); model = build()",
    "BN calibration: momentum=None, train(), 3 batches torch.cat([randn(seed)]*4) for seeds 1000..1002, eval()",
    "torch.export.export(model, (x,)).module()",
    "prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True)))",
    "4 calibration batches randn(seed) for seeds 100..103 (batch 1)",
    "convert_pt2e(gm)",
    "torch.export.export(gm, (x,))",
    "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer",
    "portable_lib._unsafe_reset_threadpool(1); _load_for_executorch_from_buffer(pte).run_method('forward', (x,))",
]


def _capture(gm: torch.fx.GraphModule, ex) -> Dict[str, Any]:
    vals: Dict[str, Any] = {}

    class I(torch.fx.Interpreter):
        def run_node(self, n):
            r = super().run_node(n)
            vals[n.name] = r
            return r

    with torch.no_grad():
        I(gm).run(*ex)
    return vals


def _pool_ties(gm: torch.fx.GraphModule, vals: Dict[str, Any]) -> List[Dict[str, Any]]:
    """For each global average pool / mean over H, W: its int8 input, the window, the zero point and
    how many outputs are exact ties (sum(q) * 2 % window == window)."""
    out = []
    for n in gm.graph.nodes:
        t = str(n.target)
        if n.op != "call_function" or not ("adaptive_avg_pool2d" in t or "mean" in t):
            continue
        dq = n.args[0]
        if "dequantize" not in str(getattr(dq, "target", "")):
            continue
        q = vals[dq.args[0].name].to(torch.int64)
        zp = int(dq.args[2])
        win = q.shape[2] * q.shape[3]
        s = q.sum(dim=(2, 3))
        ties = int(((2 * s) % win == 0).logical_and((s % win) != 0).sum()) if win % 2 == 0 else 0
        # the pool's own requantization: the next quantize node's scale / zp
        out.append({"node": n.name, "op": t, "input_shape": list(q.shape), "window": win,
                    "input_scale": float(dq.args[1]), "input_zero_point": zp,
                    "outputs": int(s.numel()), "exact_ties_in_raw_q_mean": ties})
    return out


def _steps(a: torch.Tensor, b: torch.Tensor, scale: float) -> Dict[str, Any]:
    d = (a.double() - b.double()).abs()
    steps = int(torch.round(d.max() / scale)) if scale == scale else None  # scale is nan if unknown
    return {"max_abs_diff": float(d.max()), "n_differ": int((d > 0).sum()), "numel": int(d.numel()),
            "max_steps": steps, "output_scale": scale}


def _out_scale(gm: torch.fx.GraphModule) -> float:
    out = [n for n in gm.graph.nodes if n.op == "output"][0]
    a = out.args[0][0] if isinstance(out.args[0], (list, tuple)) else out.args[0]
    return float(a.args[1]) if "dequantize" in str(getattr(a, "target", "")) else float("nan")


def _program_counts(pte: bytes) -> Dict[str, Any]:
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DelegateCall, KernelCall
    plan = deserialize_pte_binary(pte).program.execution_plan[0]
    dc, kc = 0, []
    for ch in plan.chains:
        for ins in ch.instructions:
            a = ins.instr_args
            if isinstance(a, DelegateCall):
                dc += 1
            elif isinstance(a, KernelCall):
                op = plan.operators[a.op_index]
                kc.append(op.name + (f".{op.overload}" if op.overload else ""))
    return {"delegate_calls": dc, "kernel_calls": dict(sorted({k: kc.count(k) for k in kc}.items()))}


def nonfinite_input(x: torch.Tensor) -> torch.Tensor:
    """The input with NaN at every 7th element, +inf at every 11th from 1, -inf at every 13th
    from 2 (row-major): what int8 conversion does with values that have no integer."""
    y = x.clone().reshape(-1)
    y[0::7] = float("nan")
    y[1::11] = float("inf")
    y[2::13] = float("-inf")
    return y.reshape(x.shape)


def export_nonfinite(name: str, out: Path) -> None:
    """ExecuTorch's output for nonfinite_input(<name>.input0.npy), from the .pte already in OUT."""
    from executorch.extension.pybindings import portable_lib
    import numpy as np
    x = torch.from_numpy(np.load(out / f"{name}.input0.npy"))
    portable_lib._unsafe_reset_threadpool(THREADS)
    pte = (out / f"{name}.pte").read_bytes()  # kept alive while the module uses it
    m = portable_lib._load_for_executorch_from_buffer(pte)
    got = list(m.run_method("forward", (nonfinite_input(x),)))
    save_npy(out / f"{name}.nonfinite.output0.npy", got[0])


def export_one(name: str, out: Path) -> Dict[str, Any]:
    import executorch.exir as exir
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.extension.pybindings import portable_lib

    spec = MODELS[name]
    shape = spec["shape"]
    torch.manual_seed(MODEL_SEED)
    model = spec["build"]()
    bn = _calibrate_bn(model, shape)
    model.eval()
    ex = _inputs(shape, INPUT_SEED)
    gm = _quantize(model, ex, shape)
    vals = _capture(gm, ex)
    with torch.no_grad():
        emu = gm(*ex)
    ep = torch.export.export(gm, ex)
    pte = exir.to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    (out / f"{name}.pte").write_bytes(pte)
    portable_lib._unsafe_reset_threadpool(THREADS)
    m = portable_lib._load_for_executorch_from_buffer(pte)
    got = list(m.run_method("forward", ex))
    save_npy(out / f"{name}.input0.npy", ex[0])
    save_npy(out / f"{name}.output0.npy", got[0])
    # repeatability: a second fresh load gives the same bits
    again = list(portable_lib._load_for_executorch_from_buffer(pte).run_method("forward", ex))
    scale = _out_scale(gm)
    facts: Dict[str, Any] = {
        "name": name,
        "versions": versions(),
        "family": spec["family"],
        "tie_case": spec["tie"],
        "model_seed": MODEL_SEED, "input_seed": INPUT_SEED,
        "input_note": "randn(1, ...) from torch.Generator().manual_seed(1)",
        "bn_calibrated": bn,
        "calibration_seeds": list(CALIBRATION_SEEDS),
        "exporter_calls": EXPORTER_CALLS,
        "threads": THREADS,
        "pte_bytes": len(pte),
        "inputs": [{"file": f"{name}.input0.npy", "shape": list(ex[0].shape), "dtype": str(ex[0].dtype)}],
        "outputs": [{"file": f"{name}.output0.npy", "shape": list(got[0].shape), "dtype": str(got[0].dtype),
                     "source": "ExecuTorch portable_lib run_method, threadpool 1"}],
        "et_repeat_bit_identical": bool(torch.equal(got[0], again[0])),
        "et_vs_float_emulation": _steps(got[0], emu, scale),
        "float_emulation_note": "the convert_pt2e module run in eager torch (dequantize -> float op -> "
                                "quantize); differences are rounding-tie / float-order effects",
        "global_pool_ties": _pool_ties(gm, vals),
    }
    facts["program"] = _program_counts(pte)
    write_json(out / f"{name}.json", facts)
    export_nonfinite(name, out)
    return facts


def main(argv: List[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    if argv[0] == "--nonfinite":  # only the NaN/inf outputs, for programs already exported to OUT
        for name in argv[2:] or list(MODELS):
            export_nonfinite(name, Path(argv[1]))
        return 0
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    for name in argv[1:] or list(MODELS):
        f = export_one(name, out)
        print(f"{name}: {f['pte_bytes']} bytes, ET vs float emulation {f['et_vs_float_emulation']}, "
              f"pool ties {[(p['node'], p['exact_ties_in_raw_q_mean'], p['outputs'], p['input_zero_point']) for p in f['global_pool_ties']]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
