#!/usr/bin/env python3
"""Small XNNPACK programs of an LLM's RMSNorm, alone and before an 8da4w linear, and of HardSwish.

ExecuTorch's LLM exporter writes RMSNorm as a mean of squares outside the delegate
(aten::mean.out, ExecuTorch's portable kernel: a float sum in order) and the rest inside
XNNPACK (Add eps, ReciprocalSquareRoot, two Multiplies). The 8da4w linear after it quantizes
each row to int8 with XNNPACK's dynamic quantization, so one last-place difference in the
norm can move an integer and the layer's outputs by a quantization step. ExecuTorch's outputs
are recorded so that etscope's engine can be held to them bit for bit:
  rsqrt_values   torch.rsqrt alone on values from 1e-30 to 1e30 (XNNPACK's reciprocal square
                 root: on x86-64 with AVX512F a 14-bit estimate and one Newton-Raphson step)
  rmsnorm_8da4w  RMSNorm(64) then Linear(64, 48) quantized with torchao's 8da4w (groups of 32),
                 on 512 rows, the last six on an int8 rounding edge (EDGE_ROWS)
  depthwise_9x9  a depthwise Conv2d(32, 32, 9, groups=32, padding=4): 81 taps, more than the
                 per-pixel tap lists of etscope's depthwise kernels hold (they once wrote past them)
  hardswish_values  F.hardswish alone (MobileNetV3's activation) on values in [-5, 5] and special
                 ones: XNNPACK computes x * min(max(x * (1/6) + 1/2, 0), 1) with a fused
                 multiply-add, which differs from x * clamp(x + 3, 0, 6) / 6 in the last place
Models are built after torch.manual_seed(MODEL_SEED), exported, lowered with
to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]) and run with ExecuTorch's own
runtime (portable_lib, threadpool reset to 1 thread). Per model <n>:
  <n>.pte, <n>.input0.npy, <n>.output0.npy (ExecuTorch's output), <n>.json (facts).

Usage: python export_xnnpack_rmsnorm.py OUT_DIR [name ...]
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import torch
import torch.nn as nn

import common  # noqa: F401  (sets sys.path)
from common import save_npy, versions, write_json
from export_xnnpack_qd8 import THREADS, _file_fact, _run_executorch  # portable_lib, threadpool of 1

MODEL_SEED = 0
INPUT_SEED = 1
DIM = 64
EPS = 1e-5
ROWS = 512  # rows of the RMSNorm input (the last ones are EDGE_ROWS)


class RsqrtOnly(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.rsqrt(x)


class HardswishOnly(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return nn.functional.hardswish(x)


class RMSNorm(nn.Module):
    """As ExecuTorch's llama model writes it (examples/models/llama/norm.py)."""

    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class NormThenLinear(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.norm = RMSNorm(DIM, EPS)
        self.linear = nn.Linear(DIM, 48, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(self.norm(x))


# Where XNNPACK's kernel is not 1 / sqrt: zeros and subnormals (denormals are zero: NaN), +inf
# (masked to 0), negatives, NaN, and inputs above 8.5e37, where the estimate's square is subnormal
# and flushed to zero.
SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), -1.0, -1e-3, 1e-40, 1e-45, -1e-42,
           1.17549435e-38, 1.2e-38, 5e37, 8e37, 9e37, 1e38, 2e38, 3.4e38, 3.4028235e38, 1e-38, 1.0, 4.0]


def _rsqrt_inputs() -> torch.Tensor:
    """A log-spaced sweep over 60 decades, values near 1 (an RMSNorm's) and the special values."""
    g = torch.Generator().manual_seed(INPUT_SEED)
    sweep = torch.logspace(-30, 30, 1536)
    near_one = 0.5 + 1.5 * torch.rand(512 - len(SPECIAL), generator=g)
    return torch.cat([sweep, near_one, torch.tensor(SPECIAL)]).reshape(32, 64)


# Rows on an int8 rounding edge: after the norm, one of their values times the row's quantization
# multiplier lies so near k + 1/2 that computing the mean in double or the rsqrt as 1 / sqrt (one
# last place) rounds it to the other integer, and the linear's outputs move by a quantization
# step. Found by a search (trial t of numpy's default_rng(3): a row randn(64) * 10^uniform(-1, 1),
# its element t % 64 stepped by 7 * k units in the last place): (t, k).
EDGE_ROWS = [(4, 109434), (5, 8801), (10, 78899), (13, 30243), (14, 3223), (20, 120487)]


def _edge_rows() -> torch.Tensor:
    import numpy as np
    g = np.random.default_rng(3)
    rows = []
    wanted = dict(EDGE_ROWS)
    for t in range(max(wanted) + 1):
        base = (g.standard_normal(DIM) * 10 ** g.uniform(-1, 1)).astype(np.float32)
        if t in wanted:
            j = t % DIM
            base[j] = (base[j:j + 1].view(np.int32) + np.int32(7 * wanted[t])).view(np.float32)[0]
            rows.append(base)
    return torch.from_numpy(np.stack(rows))


def _norm_inputs() -> torch.Tensor:
    """Rows of activations at an LLM's scales: randn times a per-row scale, then the edge rows."""
    g = torch.Generator().manual_seed(INPUT_SEED)
    plain = ROWS - len(EDGE_ROWS)
    scale = torch.logspace(-1, 1, plain).reshape(plain, 1)
    rows = torch.cat([torch.randn(plain, DIM, generator=g) * scale, _edge_rows()])
    return rows.reshape(1, ROWS, DIM)


def _quantize_8da4w(model: nn.Module) -> str:
    from torchao.quantization.granularity import PerGroup
    from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.utils import unwrap_tensor_subclass
    quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, weight_granularity=PerGroup(32)),
              filter_fn=lambda m, _: isinstance(m, nn.Linear))
    unwrap_tensor_subclass(model)
    return ("quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int4, "
            "weight_granularity=PerGroup(32)), filter_fn=Linear layers)")


# HardSwish's edges: zeros, infinities, NaN, the clamp's corners (-3, 3) and their neighbours, a
# subnormal (read as zero), large magnitudes.
HARDSWISH_SPECIAL = [0.0, -0.0, float("inf"), float("-inf"), float("nan"), -3.0, 3.0, -3.0000002, -2.9999998, 2.9999998, 3.0000002,
                     1e-40, -1e-40, 1e30, -1e30, 6.0, -6.0, 0.5, -0.5, 1.0]


def _hardswish_inputs() -> torch.Tensor:
    g = torch.Generator().manual_seed(INPUT_SEED)
    plain = torch.rand(2048 - len(HARDSWISH_SPECIAL), generator=g) * 10 - 5
    return torch.cat([plain, torch.tensor(HARDSWISH_SPECIAL)]).reshape(32, 64)


def _hardswish_model() -> Tuple[nn.Module, str]:
    return HardswishOnly().eval(), "torch.nn.functional.hardswish(x)"


def _depthwise_inputs() -> torch.Tensor:
    g = torch.Generator().manual_seed(INPUT_SEED)
    return torch.randn(1, 32, 20, 20, generator=g)


def _depthwise_model() -> Tuple[nn.Module, str]:
    return nn.Conv2d(32, 32, 9, groups=32, padding=4).eval(), "nn.Conv2d(32, 32, 9, groups=32, padding=4)"


def _rsqrt_model() -> Tuple[nn.Module, str]:
    return RsqrtOnly().eval(), "torch.rsqrt(x)"


def _norm_model() -> Tuple[nn.Module, str]:
    model = NormThenLinear().eval()
    return model, _quantize_8da4w(model)


# name: (model factory, input factory, description)
MODELS: Dict[str, Tuple[Callable[[], Tuple[nn.Module, str]], Callable[[], torch.Tensor], str]] = {
    "rsqrt_values": (_rsqrt_model, _rsqrt_inputs, "torch.rsqrt on f32[32, 64]: 1e-30 .. 1e30 log-spaced, 490 values in [0.5, 2), then the SPECIAL values"),
    "rmsnorm_8da4w": (_norm_model, _norm_inputs,
                      "RMSNorm(64, eps 1e-5) then Linear(64, 48, bias=False) 8da4w groups of 32 on f32[1, 512, 64]"),
    "depthwise_9x9": (_depthwise_model, _depthwise_inputs, "depthwise Conv2d(32, 32, 9, groups=32, padding=4) on f32[1, 32, 20, 20]"),
    "hardswish_values": (_hardswish_model, _hardswish_inputs,
                         "F.hardswish on f32[32, 64]: 2028 values uniform in [-5, 5), then the HARDSWISH_SPECIAL values"),
}


def export_one(name: str, out: Path) -> Dict[str, Any]:
    import executorch.exir as exir
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    make_model, make_input, what = MODELS[name]
    torch.manual_seed(MODEL_SEED)
    model, call = make_model()
    ex = (make_input(),)
    with torch.no_grad():
        eager = model(*ex)
    edge = exir.to_edge_transform_and_lower(torch.export.export(model, ex), partitioner=[XnnpackPartitioner()])
    pte = edge.to_executorch().buffer
    got, again = _run_executorch(pte, ex), _run_executorch(pte, ex)  # two fresh loads
    (out / f"{name}.pte").write_bytes(pte)
    for kind, t in (("input0", ex[0]), ("output0", got[0])):
        save_npy(out / f"{name}.{kind}.npy", t)
    both_finite = got[0].isfinite() & eager.isfinite()
    ops = sorted({str(n.target) for n in edge.exported_program().graph.nodes
                  if n.op == "call_function" and "built-in" not in str(n.target) and "alloc" not in str(n.target)})
    facts: Dict[str, Any] = {
        "name": name,
        "versions": versions(),
        "model": what,
        "exporter_calls": [call, "torch.export.export(model, inputs)",
                           "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])", "to_executorch()"],
        "graph_ops_after_lowering": ops,
        "model_seed": MODEL_SEED, "input_seed": INPUT_SEED,
        "pte_bytes": len(pte),
        "et_runs": f"portable_lib run_method on two fresh loads, threadpool {THREADS}",
        "et_repeat_bit_identical": bool(torch.equal(got[0].view(torch.int32), again[0].view(torch.int32))),
        "et_vs_eager_max_abs": float((got[0] - eager)[both_finite].abs().max()),  # where both are finite
        "et_vs_eager_max_rel": float(((got[0] - eager).abs() / eager.abs().clamp_min(1e-30))[both_finite].max()),
        "et_vs_eager_elements_differ": int((got[0] != eager).sum()),
        "inputs": [_file_fact(f"{name}.input0.npy", ex[0])],
        "outputs": [_file_fact(f"{name}.output0.npy", got[0])],
    }
    write_json(out / f"{name}.json", facts)
    return facts


def main(argv: List[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    names = argv[1:] or list(MODELS)
    for f in (export_one(name, out) for name in names):
        print(f"{f['name']}: {f['pte_bytes']} bytes; ExecuTorch vs eager {f['et_vs_eager_max_abs']:.3g} abs, "
              f"{f['et_vs_eager_max_rel']:.3g} rel, {f['et_vs_eager_elements_differ']} elements differ; "
              f"operators {f['graph_ops_after_lowering']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
