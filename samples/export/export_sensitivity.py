#!/usr/bin/env python3
"""Per-layer quantization sensitivity references: fp32, int8 and "keep some layers float"
XNNPACK programs of one model, with ExecuTorch's own runtime answers.

The int8 program is pt2e: XNNPACKQuantizer().set_global(get_symmetric_quantization_config(
is_per_channel=True[, is_dynamic=True])), prepare_pt2e, calibration, convert_pt2e, then
to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()], generate_etrecord=True) and
to_executorch(). Every program is run with ExecuTorch's runtime (portable_lib, threadpool reset to
1 thread) on the representative input; SQNR = 10*log10(sum(ref^2) / sum((ref - x)^2)) over the
whole output, ref = the eager fp32 model.

Usage: python export_sensitivity.py OUT_DIR MODEL [--keep-float FQN1,FQN2,...]
Models: sens_cnn, mv2, resnet18, dqlinear_mlp.

Writes into OUT_DIR:
  MODEL.fp32.pte            the float model lowered to XNNPACK (no quantization)
  MODEL.fp32.etrecord       its ETRecord (module paths for `etscope debug --against`), same inputs
  MODEL.int8.pte            the quantized program
  MODEL.int8.etrecord       its ETRecord, with the representative input (MODEL.input0.npy) and the
                            eager fp32 output as reference output
  MODEL.input0.npy          the representative input (randn, torch.Generator seed 1)
  MODEL.eager.output0.npy   the eager fp32 model's output for it
  MODEL.json                versions, SQNRs (int8 / fp32 / keep programs vs eager), the FQNs of
                            the quantized Conv2d / Linear modules in graph order, timings
With --keep-float also:
  MODEL.keep.pte            the program with those modules (names as in model.named_modules())
                            left out of quantization; everything else as in MODEL.int8.pte
  and one JSON line on stdout: {"keep_float", "sqnr_db", "int8_sqnr_db", "fp32_sqnr_db", ...}.
Without it, stdout gets one JSON line with the int8 / fp32 SQNRs. Progress goes to stderr.

Leaving a module out: ExecuTorch 1.5.1's XNNPACKQuantizer.set_module_name(fqn, None) asserts
("quantization_config == None is not supported yet"), so the script stores None in
quantizer.module_name_config[fqn] itself. The quantizer then annotates nothing for that module
(_annotate_all_patterns returns at once for a None config) and the global config skips every node
whose nn_module_stack contains fqn. A name matches a module and everything below it: a Conv2d
("features.3.conv.0.0", "layer1.0.conv1") or any container ("features.3", "layer1.0"). BatchNorm
is folded into the convolution before annotation (the folded conv keeps the conv's
nn_module_stack), so a BatchNorm's name ("layer1.0.bn1", "features.1.conv.0.1") leaves nothing
float. A ReLU module's name does leave the convolution before it float: the conv+relu pattern is
skipped as a whole and a conv read by a single relu is never annotated alone ("layer1.0.relu"
makes layer1.0.conv1 float). A tensor between two layers stays quantized if either its producer
or its consumer is quantized. The JSON lists the Conv2d / Linear layers left float, read both
from the convert_pt2e graph and from the lowered XNNPACK subgraphs (float weight, no dequantize).

sens_cnn: conv1 -> conv2 -> conv3 -> (divide by a per-channel buffer: channel OUTLIER_CHANNEL
gets x OUTLIER_GAIN) -> conv4, depthwise, whose weights for that channel are divided by
OUTLIER_GAIN (so the eager function is the unscaled one, and per-channel weight quantization does
not mind) -> conv5 (1x1) -> global average pool -> fc. Weights are Kaiming-normal with small
biases (PyTorch's default init leaves the output mostly bias). The division is not an operator
XNNPACKQuantizer annotates, so the wide tensor is quantized only as conv4's input (per-tensor
int8: the outlier channel sets the scale, the other channels lose their bits). Keeping conv4
float removes that quantization; keeping any other layer does not.
"""
from __future__ import annotations

import argparse
import copy
import json
import math
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence, Tuple

import torch
import torch.nn as nn
import torch.nn.functional as F

import common  # noqa: F401  (sets sys.path)
from common import save_npy, versions, write_json

MODEL_SEED = 0
INPUT_SEED = 1
CALIBRATION_SEEDS = (100, 101, 102, 103)
BN_SEEDS = (1000, 1001, 1002)
BN_BATCH = 4
THREADS = 1
OUTLIER_CHANNEL = 5
OUTLIER_GAIN = 200.0


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- models


def _init_(model: nn.Module) -> nn.Module:
    """Kaiming-normal weights (fan_in, ReLU gain), small biases: with PyTorch's default init the
    hand-written models' outputs are mostly their biases (near the same for any input), which
    would make every SQNR look good."""
    g = torch.Generator().manual_seed(MODEL_SEED)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                fan_in = m.weight[0].numel()
                m.weight.copy_(torch.randn(m.weight.shape, generator=g) * math.sqrt(2.0 / fan_in))
                m.bias.copy_(torch.randn(m.bias.shape, generator=g) * 0.01)
    return model


class SensCnn(nn.Module):
    """Six layers; the activation between conv3 and conv4 has one channel OUTLIER_GAIN times
    wider than the rest (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, stride=2, padding=1)
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.conv4 = nn.Conv2d(32, 32, 3, stride=2, padding=1, groups=32)  # depthwise
        self.conv5 = nn.Conv2d(32, 32, 1)
        self.fc = nn.Linear(32, 10)
        _init_(self)
        gain = torch.ones(32)
        gain[OUTLIER_CHANNEL] = OUTLIER_GAIN
        # x / (1 / gain): a division, which XNNPACKQuantizer leaves unannotated
        self.register_buffer("inv_gain", (1.0 / gain).reshape(1, 32, 1, 1))
        with torch.no_grad():
            # depthwise: output channel c reads input channel c only, so dividing its weights
            # brings the channel back, and per-channel weight quantization does not mind
            self.conv4.weight.div_(gain.reshape(32, 1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))               # [1,16,32,32]
        x = F.relu(self.conv2(x))               # [1,32,16,16]
        x = F.relu(self.conv3(x))               # [1,32,16,16]
        x = torch.div(x, self.inv_gain)         # channel OUTLIER_CHANNEL x OUTLIER_GAIN
        x = F.relu(self.conv4(x))               # [1,32,8,8]  depthwise, scales it back
        x = F.relu(self.conv5(x))               # [1,32,8,8]  1x1
        x = torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)
        return self.fc(x)


class Mlp(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, 128)
        self.fc2 = nn.Linear(128, 128)
        self.fc3 = nn.Linear(128, 64)
        self.fc4 = nn.Linear(64, 10)
        _init_(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = F.relu(self.fc3(x))
        return self.fc4(x)


def _calibrate_bn(model: nn.Module, shape: Tuple[int, ...]) -> nn.Module:
    """Fresh BatchNorm statistics are (0, 1) and a random torchvision network's output then
    vanishes (mobilenet_v2: ~1e-9, all zero in int8). Cumulative statistics (momentum None) over
    BN_SEEDS batches of BN_BATCH random inputs, in train mode, then eval()."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            m.momentum = None
    model.train()
    with torch.no_grad():
        for s in BN_SEEDS:
            model(randn(s, BN_BATCH, *shape[1:]))
    return model.eval()


def _mv2() -> nn.Module:
    import torchvision.models as tvm
    return _calibrate_bn(tvm.mobilenet_v2(weights=None), (1, 3, 224, 224))


def _resnet18() -> nn.Module:
    import torchvision.models as tvm
    return _calibrate_bn(tvm.resnet18(weights=None), (1, 3, 224, 224))


MODELS: Dict[str, Dict[str, Any]] = {
    "sens_cnn": dict(build=SensCnn, shape=(1, 3, 32, 32), dynamic=False,
                     family=f"hand-written CNN (5 conv + 1 linear); depthwise conv4's input has channel "
                            f"{OUTLIER_CHANNEL} scaled x{OUTLIER_GAIN:g} (conv4's weights scaled back)",
                     sensitive="conv4"),
    "mv2": dict(build=_mv2, shape=(1, 3, 224, 224), dynamic=False,
                family="torchvision mobilenet_v2(weights=None); BatchNorm statistics from 3 batches of 4 "
                       "random inputs (seeds 1000..1002)"),
    "resnet18": dict(build=_resnet18, shape=(1, 3, 224, 224), dynamic=False,
                     family="torchvision resnet18(weights=None); BatchNorm statistics from 3 batches of 4 "
                            "random inputs (seeds 1000..1002)"),
    "dqlinear_mlp": dict(build=Mlp, shape=(1, 64), dynamic=True,
                         family="MLP Linear 64->128->128->64->10 with ReLU (Kaiming-normal init, small biases); "
                                "dynamic int8 activations, per-channel int8 weights"),
}


# --------------------------------------------------------------------------- quantization


def _quantizer(dynamic: bool, keep_float: Sequence[str]) -> Tuple[Any, List[str]]:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    q = XNNPACKQuantizer().set_global(
        get_symmetric_quantization_config(is_per_channel=True, is_dynamic=dynamic))
    how = []
    for fqn in keep_float:
        try:
            q.set_module_name(fqn, None)
            how.append(f"set_module_name({fqn!r}, None)")
        except AssertionError:  # 1.5.1: "quantization_config == None is not supported yet"
            q.module_name_config[fqn] = None
            how.append(f"module_name_config[{fqn!r}] = None (set_module_name(fqn, None) asserts)")
    return q, how


def quantize(model: nn.Module, ex: Tuple[torch.Tensor, ...], shape: Tuple[int, ...], dynamic: bool,
             keep_float: Sequence[str] = ()) -> Tuple[torch.fx.GraphModule, List[str]]:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    q, how = _quantizer(dynamic, keep_float)
    gm = prepare_pt2e(torch.export.export(model, ex).module(), q)
    with torch.no_grad():
        for s in CALIBRATION_SEEDS:
            gm(randn(s, *shape))
    return convert_pt2e(gm), how


def _fqn(node: torch.fx.Node) -> Tuple[str, str]:
    """Innermost module of a node: (name as in named_modules(), class name)."""
    stack = node.meta.get("nn_module_stack") or {}
    if not stack:
        return "", ""
    path, tp = list(stack.values())[-1]
    if path.startswith("L['self']."):
        path = path[len("L['self']."):]
    return path, tp if isinstance(tp, str) else getattr(tp, "__name__", str(tp))


def layer_table(gm: torch.fx.GraphModule) -> List[Dict[str, Any]]:
    """Every conv / linear node of a convert_pt2e graph in order: its module and whether its
    weight comes through a dequantize node (quantized) or is float."""
    rows = []
    for n in gm.graph.nodes:
        if n.op != "call_function" or n.target not in (torch.ops.aten.conv2d.default,
                                                       torch.ops.aten.linear.default):
            continue
        w = n.args[1]
        wq = isinstance(w, torch.fx.Node) and "dequantize" in str(w.target)
        x = n.args[0]
        xq = isinstance(x, torch.fx.Node) and "dequantize" in str(x.target)
        fqn, tp = _fqn(n)
        rows.append({"node": n.name, "fqn": fqn, "module_type": tp.rsplit(".", 1)[-1],
                     "weight_quantized": wq, "input_quantized": xq})
    return rows


# --------------------------------------------------------------------------- lowering / running


def save_etrecord(program: Any, path: Path, ex: Tuple[torch.Tensor, ...], ref: torch.Tensor) -> None:
    """The ETRecord of a lowered program with the representative input and the eager output."""
    etr = program.get_etrecord()
    etr.update_representative_inputs(list(ex))
    etr.update_reference_outputs({"forward": [[ref]]})
    etr.save(str(path))


def lower(ep: torch.export.ExportedProgram, etrecord: bool = False) -> Tuple[bytes, Any, Dict[str, Any]]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()],
                                       generate_etrecord=etrecord)
    left = sorted({str(n.target) for n in edge.exported_program().graph.nodes
                   if n.op == "call_function" and "executorch_call_delegate" not in str(n.target)
                   and "getitem" not in str(n.target)})
    delegates = sum(1 for n in edge.exported_program().graph.nodes
                    if n.op == "call_function" and "executorch_call_delegate" in str(n.target))
    facts = {"delegate_calls": delegates, "non_delegated_ops": left,
             "delegated_layers": delegated_layers(edge.exported_program().graph_module)}
    et = edge.to_executorch()
    return bytes(et.buffer), et, facts


def delegated_layers(gm: torch.fx.GraphModule) -> List[Dict[str, Any]]:
    """The convolutions / linear layers the XNNPACK partitioner took, read from each lowered
    module's original (edge) graph: their module and whether the weight is dequantized."""
    rows = []
    for _, sub in gm.named_children():
        om = getattr(sub, "original_module", None)
        if om is None:
            continue
        for n in om.graph.nodes:
            t = str(n.target)
            if n.op == "call_function" and ("aten.convolution" in t or "aten.linear" in t):
                w = n.args[1]
                rows.append({"fqn": _fqn(n)[0],
                             "weight_quantized": isinstance(w, torch.fx.Node) and "dequantize" in str(w.target)})
    return rows


def run_et(pte: bytes, ex: Tuple[torch.Tensor, ...]) -> torch.Tensor:
    from executorch.extension.pybindings import portable_lib
    portable_lib._unsafe_reset_threadpool(THREADS)
    m = portable_lib._load_for_executorch_from_buffer(pte)
    return list(m.run_method("forward", ex))[0]


def sqnr_db(ref: torch.Tensor, x: torch.Tensor) -> float:
    ref, x = ref.double(), x.double()
    noise = float(((ref - x) ** 2).sum())
    return math.inf if noise == 0 else 10.0 * math.log10(float((ref ** 2).sum()) / noise)


def _json_float(v: float) -> Any:
    return round(v, 4) if math.isfinite(v) else str(v)


# --------------------------------------------------------------------------- main


def export(out: Path, name: str, keep_float: Sequence[str]) -> Dict[str, Any]:
    spec = MODELS[name]
    shape, dynamic = spec["shape"], spec["dynamic"]
    timings: Dict[str, float] = {}
    torch.manual_seed(MODEL_SEED)
    model = spec["build"]().eval()
    modules = dict(model.named_modules())
    unknown = [f for f in keep_float if f not in modules]
    if unknown:
        raise SystemExit(f"{name}: no module named {', '.join(unknown)} in model.named_modules()")
    ex = (randn(INPUT_SEED, *shape),)
    with torch.no_grad():
        ref = model(*ex)
    save_npy(out / f"{name}.input0.npy", ex[0])
    save_npy(out / f"{name}.eager.output0.npy", ref)

    t = time.perf_counter()
    fp32_pte, fp32_et, fp32_prog = lower(torch.export.export(model, ex), etrecord=True)
    timings["fp32_export_s"] = time.perf_counter() - t
    (out / f"{name}.fp32.pte").write_bytes(fp32_pte)
    save_etrecord(fp32_et, out / f"{name}.fp32.etrecord", ex, ref)
    fp32_out = run_et(fp32_pte, ex)
    log(f"[{name}] fp32.pte {len(fp32_pte)} B in {timings['fp32_export_s']:.1f} s")

    t = time.perf_counter()
    gm, _ = quantize(copy.deepcopy(model), ex, shape, dynamic)
    int8_pte, et, int8_prog = lower(torch.export.export(gm, ex), etrecord=True)
    timings["int8_export_s"] = time.perf_counter() - t
    (out / f"{name}.int8.pte").write_bytes(int8_pte)
    save_etrecord(et, out / f"{name}.int8.etrecord", ex, ref)
    int8_out = run_et(int8_pte, ex)
    with torch.no_grad():
        emu_out = gm(*ex)
    layers = layer_table(gm)
    quantized = [r["fqn"] for r in layers if r["weight_quantized"]]
    log(f"[{name}] int8.pte {len(int8_pte)} B in {timings['int8_export_s']:.1f} s, "
        f"{len(quantized)} quantized conv/linear")

    facts: Dict[str, Any] = {
        "name": name, "family": spec["family"], "versions": versions(),
        "model_seed": MODEL_SEED, "input_seed": INPUT_SEED, "calibration_seeds": list(CALIBRATION_SEEDS),
        "input": {"file": f"{name}.input0.npy", "shape": list(ex[0].shape),
                  "note": "randn from torch.Generator().manual_seed(input_seed)"},
        "eager_output": {"file": f"{name}.eager.output0.npy", "shape": list(ref.shape)},
        "quantization": ("XNNPACKQuantizer().set_global(get_symmetric_quantization_config("
                         f"is_per_channel=True{', is_dynamic=True' if dynamic else ''})); "
                         "prepare_pt2e; calibration inputs randn(seed) for calibration_seeds; convert_pt2e"),
        "lowering": "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()]"
                    "[, generate_etrecord=True for int8]).to_executorch()",
        "runtime": f"portable_lib._unsafe_reset_threadpool({THREADS}); "
                   "_load_for_executorch_from_buffer(pte).run_method('forward', (input0,))",
        "sqnr_definition": "10*log10(sum(ref^2)/sum((ref-x)^2)) over the whole output, ref = eager fp32",
        "sqnr_db": {"int8_vs_eager": _json_float(sqnr_db(ref, int8_out)),
                    "fp32_vs_eager": _json_float(sqnr_db(ref, fp32_out)),
                    "int8_torch_emulation_vs_eager": _json_float(sqnr_db(ref, emu_out)),
                    "int8_vs_int8_torch_emulation": _json_float(sqnr_db(emu_out, int8_out))},
        "programs": {"fp32": {"file": f"{name}.fp32.pte", "bytes": len(fp32_pte), **fp32_prog},
                     "int8": {"file": f"{name}.int8.pte", "bytes": len(int8_pte), **int8_prog,
                              "etrecord": f"{name}.int8.etrecord",
                              "etrecord_representative_inputs": [f"{name}.input0.npy"],
                              "etrecord_reference_outputs": [f"{name}.eager.output0.npy"]}},
        "quantized_layers": quantized,
        "num_quantized_layers": len(quantized),
        "layers": layers,
        "timings_s": timings,
    }
    if "sensitive" in spec:
        facts["sensitive_layer"] = spec["sensitive"]

    line: Dict[str, Any] = {"model": name, "int8_sqnr_db": facts["sqnr_db"]["int8_vs_eager"],
                            "fp32_sqnr_db": facts["sqnr_db"]["fp32_vs_eager"]}
    if keep_float:
        t = time.perf_counter()
        kgm, how = quantize(copy.deepcopy(model), ex, shape, dynamic, keep_float)
        keep_pte, _, keep_prog = lower(torch.export.export(kgm, ex))
        timings["keep_export_s"] = time.perf_counter() - t
        (out / f"{name}.keep.pte").write_bytes(keep_pte)
        keep_out = run_et(keep_pte, ex)
        krows = layer_table(kgm)
        now_float = [r["fqn"] for r in krows if not r["weight_quantized"]]
        lowered_float = [r["fqn"] for r in keep_prog["delegated_layers"] if not r["weight_quantized"]]
        per_fqn = {f: [r["fqn"] for r in krows if not r["weight_quantized"]
                       and (r["fqn"] == f or r["fqn"].startswith(f + "."))] for f in keep_float}
        keep = {"keep_float": list(keep_float), "how": how,
                "sqnr_db": _json_float(sqnr_db(ref, keep_out)),
                "float_layers": now_float,
                "float_layers_in_lowered_graph": lowered_float,
                "float_layers_per_name": per_fqn,
                "names_with_no_float_layer_below": [f for f, v in per_fqn.items() if not v],
                "program": {"file": f"{name}.keep.pte", "bytes": len(keep_pte), **keep_prog},
                "export_s": round(timings["keep_export_s"], 3)}
        facts["keep"] = keep
        line = {"keep_float": list(keep_float), "sqnr_db": keep["sqnr_db"],
                "int8_sqnr_db": line["int8_sqnr_db"], "fp32_sqnr_db": line["fp32_sqnr_db"],
                "float_layers": now_float, "float_layers_in_lowered_graph": lowered_float,
                "names_with_no_float_layer_below": keep["names_with_no_float_layer_below"],
                "model": name}
        log(f"[{name}] keep.pte {len(keep_pte)} B in {timings['keep_export_s']:.1f} s")
    facts["timings_s"] = {k: round(v, 3) for k, v in timings.items()}
    write_json(out / f"{name}.json", facts)
    line["timings_s"] = facts["timings_s"]
    print(json.dumps(line), flush=True)
    return facts


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--keep-float", default="",
                    help="comma-separated module FQNs (model.named_modules()) to leave float")
    args = ap.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    torch.set_num_threads(1)
    keep = [f.strip() for f in args.keep_float.split(",") if f.strip()]
    export(args.out_dir, args.model, keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
