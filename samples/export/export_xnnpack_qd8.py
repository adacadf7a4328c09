#!/usr/bin/env python3
"""Small XNNPACK programs of dynamically quantized linears (qd8 fully connected layers).

Each model is one torch Linear quantized with torchao's
quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=..., weight_granularity=...))
(ExecuTorch's LLM exporter's 8da4w / 8da8w), exported, lowered with
to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]) and run with ExecuTorch's own
runtime (portable_lib, threadpool reset to 1 thread). XNNPACK writes them as a Convert
(f32 -> qdint8, one zero point and scale per row) and a FullyConnected on qcint8 (per channel),
qcint4 (per channel) or qbint4 (blockwise, bf16 block scales) filters. Per model <n>:
  <n>.pte, <n>.input0.npy, <n>.output0.npy (ExecuTorch's output), <n>.json (facts).

Inputs mix rows of different ranges: a row of zeros, an all-positive row, a row of large values,
so the rows' zero points and scales differ (and one is XNNPACK's degenerate all-zero case).

Usage: python export_xnnpack_qd8.py OUT_DIR [name ...]
       python export_xnnpack_qd8.py --infinities FIXTURE_DIR   (<n>.inf.*: rows with infinities)
Models: see MODELS.
"""
from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Dict, List, Tuple

import torch
import torch.nn as nn

import common  # noqa: F401  (sets sys.path)
from common import save_npy, versions, write_json

MODEL_SEED = 0
INPUT_SEED = 1
THREADS = 1

# name: (input features, output features, bias, weight bits, group size (0: per channel), input shape)
MODELS: Dict[str, Tuple[int, int, bool, int, int, Tuple[int, ...]]] = {
    "qd8_4w_g32": (64, 48, True, 4, 32, (5, 64)),
    "qd8_4w_g64_nobias": (128, 40, False, 4, 64, (2, 3, 128)),
    "qd8_4w_g128": (256, 24, True, 4, 128, (4, 256)),
    "qd8_4w_g256_wide": (512, 100, True, 4, 256, (1, 512)),
    "qd8_8w_odd": (67, 33, True, 8, 0, (4, 67)),
    "qd8_8w_nobias": (96, 50, False, 8, 0, (3, 96)),
    "qd8_4w_row": (96, 36, True, 4, 0, (3, 96)),
    # Prefill-sized: enough rows for etscope's AMX tile path (12 or more), partial row tiles,
    # an odd number of 16-output tiles with a narrow last one, inputs not a multiple of 64.
    "qd8_8w_rows40": (200, 72, True, 8, 0, (40, 200)),
    "qd8_4w_g64_rows19": (320, 40, True, 4, 64, (19, 320)),
    "qd8_4w_row_rows24": (160, 33, False, 4, 0, (2, 12, 160)),
    "qd8_4w_g32_rows16": (96, 48, True, 4, 32, (16, 96)),
}


def _inputs(shape: Tuple[int, ...], seed: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(*shape, generator=g)
    rows = x.reshape(-1, shape[-1])
    if rows.shape[0] >= 2:
        rows[0] = 0.0                      # XNNPACK's degenerate row: range 0, multiplier 1
        rows[1] = rows[1].abs() + 0.25      # all positive: the range widened to include 0
    if rows.shape[0] >= 3:
        rows[2] = rows[2] * 40.0            # large values
    return rows.reshape(shape)


def _quantize(model: nn.Module, bits: int, group: int) -> str:
    from torchao.quantization.granularity import PerAxis, PerGroup
    from torchao.quantization.quant_api import Int8DynamicActivationIntxWeightConfig, quantize_
    from torchao.utils import unwrap_tensor_subclass
    dtype = torch.int4 if bits == 4 else torch.int8
    gran = PerGroup(group) if group else PerAxis(0)
    quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=dtype, weight_granularity=gran))
    unwrap_tensor_subclass(model)
    return (f"quantize_(model, Int8DynamicActivationIntxWeightConfig(weight_dtype=torch.int{bits}, "
            f"weight_granularity={'PerGroup(%d)' % group if group else 'PerAxis(0)'}))")


def _run_executorch(pte: bytes, inputs: Tuple[torch.Tensor, ...]) -> List[torch.Tensor]:
    """ExecuTorch's own outputs: portable_lib on a fresh load, its threadpool at THREADS."""
    from executorch.extension.pybindings import portable_lib
    portable_lib._unsafe_reset_threadpool(THREADS)
    return list(portable_lib._load_for_executorch_from_buffer(pte).run_method("forward", inputs))


def _file_fact(file: str, t: torch.Tensor) -> Dict[str, Any]:
    return {"file": file, "shape": list(t.shape), "dtype": str(t.dtype)}


def export_one(name: str, out: Path) -> Dict[str, Any]:
    import executorch.exir as exir
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner

    k, n, bias, bits, group, shape = MODELS[name]
    torch.manual_seed(MODEL_SEED)
    model = nn.Sequential(nn.Linear(k, n, bias=bias)).eval()
    call = _quantize(model, bits, group)
    ex = (_inputs(shape, INPUT_SEED),)
    with torch.no_grad():
        eager = model(*ex)
    pte = exir.to_edge_transform_and_lower(torch.export.export(model, ex),
                                           partitioner=[XnnpackPartitioner()]).to_executorch().buffer
    got, again = _run_executorch(pte, ex), _run_executorch(pte, ex)  # two fresh loads
    (out / f"{name}.pte").write_bytes(pte)
    for kind, t in (("input0", ex[0]), ("output0", got[0])):
        save_npy(out / f"{name}.{kind}.npy", t)
    facts: Dict[str, Any] = {
        "name": name,
        "versions": versions(),
        "linear": {"in_features": k, "out_features": n, "bias": bias},
        "weights": {"bits": bits, "group_size": group or "per channel"},
        "exporter_calls": [call, "unwrap_tensor_subclass(model)", "torch.export.export(model, inputs)",
                           "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])", "to_executorch()"],
        "model_seed": MODEL_SEED, "input_seed": INPUT_SEED,
        "input_note": "randn from torch.Generator().manual_seed(1); row 0 zeros, row 1 |x| + 0.25, row 2 x 40",
        "pte_bytes": len(pte),
        "et_runs": f"portable_lib run_method on two fresh loads, threadpool {THREADS}",
        "et_repeat_bit_identical": bool(torch.equal(got[0], again[0])),
        "et_vs_eager_max_abs": float((got[0] - eager).abs().max()),
        "inputs": [_file_fact(f"{name}.input0.npy", ex[0])],
        "outputs": [_file_fact(f"{name}.output0.npy", got[0])],
    }
    write_json(out / f"{name}.json", facts)
    return facts


# Int8-weight layers whose rows with infinities etscope gives as ExecuTorch does (4-bit blockwise
# layers do not yet: ExecuTorch gives -inf where etscope gives NaN in such rows).
INFINITY_MODELS = ("qd8_8w_odd", "qd8_8w_rows40")


def infinities(name: str, fixtures: Path) -> None:
    """<name>.inf.input0.npy: the committed input with infinities in its first rows (row 0: +inf
    at 3; row 1: -inf at 0; row 2: +inf at 1 and -inf at 2), and ExecuTorch's output for it,
    from the committed program. A row's range is then infinite: XNNPACK's multiplier is 0 and
    its zero point NaN before its clamp (qmin after it)."""
    import numpy as np
    pte = (fixtures / f"{name}.pte").read_bytes()
    x = torch.from_numpy(np.load(fixtures / f"{name}.input0.npy"))
    rows = x.clone().reshape(-1, x.shape[-1])
    rows[0, 3] = float("inf")
    rows[1, 0] = float("-inf")
    rows[2, 1], rows[2, 2] = float("inf"), float("-inf")
    y = rows.reshape(x.shape)
    got, again = _run_executorch(pte, (y,)), _run_executorch(pte, (y,))
    assert torch.equal(got[0].nan_to_num(), again[0].nan_to_num())
    save_npy(fixtures / f"{name}.inf.input0.npy", y)
    save_npy(fixtures / f"{name}.inf.output0.npy", got[0])


def main(argv: List[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    if argv[0] == "--infinities":  # --infinities FIXTURE_DIR: inputs with infinities for INFINITY_MODELS
        for name in INFINITY_MODELS:
            infinities(name, Path(argv[1]))
        return 0
    Path(argv[0]).mkdir(parents=True, exist_ok=True)
    for name in argv[1:] or list(MODELS):
        f = export_one(name, Path(argv[0]))
        print(name, "pte", f["pte_bytes"], "bytes; ExecuTorch vs eager", f["et_vs_eager_max_abs"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
