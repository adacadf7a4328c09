"""Programs with a performance problem, and clean twins, for `etscope findings`.

Usage: PYTHONHASHSEED=0 python export_findings.py OUTDIR [name ...]   (default: every program)

Every program is written by the real ExecuTorch exporter (samples/export/requirements.txt);
nothing is edited by hand. Per program <n> OUTDIR gets:
  <n>.pte            the program
  <n>.etrecord       ETRecord (generate_etrecord=True, or executorch.devtools.generate_etrecord
                     for the constant-folded program, so that it records the folded edge graph)
  <n>.input0.npy     the input of `forward` (torch.randn, generator seed INPUT_SEED)
  <n>.output0.npy    ExecuTorch's own output for that input (executorch.runtime.Runtime)
and OUTDIR/findings.json (per program: exporter calls, the plan as ExecuTorch's deserializer
reads it, the instructions that carry the problem, q/dq pairs, suspicious constants) and
OUTDIR/MANIFEST.md written from it.

Programs (the problem, then its fixed twin where there is one):
  partial_lowering         CNN with nn.ELU in the middle, XnnpackPartitioner: ExecuTorch 1.5.1's
                           XNNPACK partitioner has no ELU config (EluConfig is commented out), so
                           the plan is DELEGATE_CALL, aten::elu.out (portable), DELEGATE_CALL
  partial_lowering_fixed   the same weights, ELU written as relu(x) + (exp(clamp(x, max=0)) - 1):
                           every op delegated, one DELEGATE_CALL
  permuted_constant        x @ w.t() with a 512x512 parameter, portable: permute_copy of the
                           constant runs on every call and feeds mm
  permuted_constant_folded the same, constant_prop_pass on the edge program: w.t() is a constant
  qdq_portable             the CNN with torch.flip over channels, pt2e-quantized
                           (XNNPACKQuantizer, symmetric config), XnnpackPartitioner without the
                           two configs that take lone quantize/dequantize nodes: XNNPACK has no
                           flip, so dequantize_per_tensor -> flip -> quantize_per_tensor (same
                           scale and zero point: a cancelling pair) run portable between two
                           delegates
  qdq_portable_default     the same with the default XnnpackPartitioner(): it pulls the lone
                           q/dq into the delegates, only the float flip runs between them
  qdq_portable_fixed       the flip folded into the next convolution's weights (input channels
                           reversed), partitioned like qdq_portable: one delegate
  dtype_roundtrip          x.to(float64) -> tanh -> .to(float32) -> Linear, portable (with
                           constant_prop_pass): two _to_dim_order_copy calls every run
  dtype_roundtrip_fixed    tanh in float32, exported the same way
  zero_and_nan_weights     Linear layers, one weight all zeros, another holding a NaN and an Inf
"""
from __future__ import annotations

import copy
import json
import math
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import common  # noqa: F401  (sets sys.path)
from common import save_npy, to_jsonable, versions

MODEL_SEED = 0          # torch.manual_seed right before a model is built
INPUT_SEED = 1          # the stored input
CALIB_SEEDS = tuple(range(100, 108))  # pt2e calibration batches
PERMUTED_N = 384        # permuted_constant: the weight is N x N float32
DTYPE_ROWS, DTYPE_COLS = 256, 128


def randn(seed: int, *shape: int) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


# --------------------------------------------------------------------------- models


class EluFromDelegatedOps(nn.Module):
    """ELU(alpha=1) from ops XNNPACK takes: relu, clamp, exp, sub, add."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.relu(x) + (torch.exp(torch.clamp(x, max=0.0)) - 1.0)


class ChannelFlip(nn.Module):
    """Reverse the channel order: pure data movement, values unchanged."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flip(x, dims=[1])


class SmallCnn(nn.Module):
    """conv-relu-conv-[middle]-conv-relu-conv-relu-pool-linear on 1x3x32x32."""

    def __init__(self, middle: nn.Module) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.middle = middle
        self.conv3 = nn.Conv2d(32, 32, 3, padding=1)
        self.conv4 = nn.Conv2d(32, 16, 3, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.conv1(x))
        x = self.middle(self.conv2(x))
        x = F.relu(self.conv3(x))
        x = F.relu(self.conv4(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


class PermutedConstant(nn.Module):
    def __init__(self, n: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(n, n) / math.sqrt(n))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x @ self.w.t())


class DtypeRoundTrip(nn.Module):
    def __init__(self, roundtrip: bool) -> None:
        super().__init__()
        self.roundtrip = roundtrip
        self.fc = nn.Linear(DTYPE_COLS, 16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.roundtrip:
            h = torch.tanh(x.to(torch.float64)).to(torch.float32)
        else:
            h = torch.tanh(x)
        return self.fc(h)


class SuspiciousWeights(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(16, 32)
        self.fc2 = nn.Linear(32, 32)   # weight all zeros (only its bias is added)
        self.fc3 = nn.Linear(32, 8)    # weight[0, 3] = NaN, weight[1, 5] = +Inf
        with torch.no_grad():
            self.fc2.weight.zero_()
            self.fc3.weight[0, 3] = float("nan")
            self.fc3.weight[1, 5] = float("inf")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.fc1(x))
        h = h + self.fc2(h)
        return self.fc3(h)


# --------------------------------------------------------------------------- exporters


def _xnnpack(standalone_qdq: bool = True) -> Tuple[List[Any], str]:
    """XnnpackPartitioner; without standalone_qdq, every config but the two that take a lone
    quantize_per_tensor / dequantize_per_tensor node (ExecuTorch 1.5.1's default partitioner
    pulls those into the neighbouring delegates, so they never run as portable kernels)."""
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    if standalone_qdq:
        return [XnnpackPartitioner()], "XnnpackPartitioner()"
    from executorch.backends.xnnpack.partition.config import ALL_PARTITIONER_CONFIGS
    from executorch.backends.xnnpack.partition.config.generic_node_configs import (
        DeQuantizedPerTensorConfig, QuantizedPerTensorConfig)
    configs = [c for c in ALL_PARTITIONER_CONFIGS
               if c not in (QuantizedPerTensorConfig, DeQuantizedPerTensorConfig)]
    return ([XnnpackPartitioner(configs=configs)],
            "XnnpackPartitioner(configs=[c for c in ALL_PARTITIONER_CONFIGS if c not in "
            "(QuantizedPerTensorConfig, DeQuantizedPerTensorConfig)])")


def _lower_xnnpack(model: nn.Module, ex: Tuple[torch.Tensor, ...], standalone_qdq: bool = True):
    from executorch.exir import to_edge_transform_and_lower
    ep = torch.export.export(model, ex)
    part, text = _xnnpack(standalone_qdq)
    edge = to_edge_transform_and_lower(ep, partitioner=part, generate_etrecord=True)
    calls = ["torch.export.export(model, inputs)",
             f"to_edge_transform_and_lower(ep, partitioner=[{text}], generate_etrecord=True)",
             "to_executorch()"]
    return edge, None, calls


def _portable(model: nn.Module, ex: Tuple[torch.Tensor, ...]):
    from executorch.exir import to_edge
    ep = torch.export.export(model, ex)
    edge = to_edge(ep, generate_etrecord=True)
    calls = ["torch.export.export(model, inputs)", "to_edge(ep, generate_etrecord=True)",
             "to_executorch()"]
    return edge, None, calls


def _portable_const_prop(model: nn.Module, ex: Tuple[torch.Tensor, ...]):
    from executorch.exir import to_edge
    from executorch.exir.passes.constant_prop_pass import constant_prop_pass
    ep = torch.export.export(model, ex)
    edge = to_edge(ep)
    # constant_prop_pass rewrites the ExportedProgram in place (and returns it): the edge
    # manager then holds the folded graph. The ETRecord is made afterwards from that graph.
    folded = constant_prop_pass(edge.exported_program())
    assert folded is edge.exported_program()
    calls = ["torch.export.export(model, inputs)", "to_edge(ep)",
             "constant_prop_pass(edge.exported_program())  # executorch.exir.passes.constant_prop_pass",
             "to_executorch()",
             "executorch.devtools.generate_etrecord(path, edge_dialect_program=<copy of the folded edge taken before to_executorch()>, "
             "executorch_program=et, exported_program=ep)"]
    return edge, ep, calls


def _quantize(model: nn.Module, ex: Tuple[torch.Tensor, ...]) -> nn.Module:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer, get_symmetric_quantization_config)
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config())
    gm = prepare_pt2e(torch.export.export(model, ex).module(), q)
    with torch.no_grad():
        for s in CALIB_SEEDS:
            gm(randn(s, *ex[0].shape))
    return convert_pt2e(gm)


def _quantized_xnnpack(model: nn.Module, ex: Tuple[torch.Tensor, ...],
                       standalone_qdq: bool = True):
    import executorch.kernels.quantized  # noqa: F401  quantize/dequantize out variants
    gm = _quantize(model, ex)
    edge, _, calls = _lower_xnnpack(gm, ex, standalone_qdq)
    calls = ["torch.export.export(model, inputs).module()",
             "prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))",
             f"{len(CALIB_SEEDS)} calibration batches (torch.randn, generator seeds "
             f"{CALIB_SEEDS[0]}..{CALIB_SEEDS[-1]})", "convert_pt2e(gm)"] + calls
    return edge, gm, calls


def _quantized_xnnpack_no_lone_qdq(model: nn.Module, ex: Tuple[torch.Tensor, ...]):
    return _quantized_xnnpack(model, ex, standalone_qdq=False)


def _fold_flip_into_conv3(model: SmallCnn) -> SmallCnn:
    """conv3(flip(y, channels)) == conv3'(y) with conv3' = conv3's input channels reversed."""
    fixed = SmallCnn(nn.Identity())
    fixed.load_state_dict(model.state_dict())
    with torch.no_grad():
        fixed.conv3.weight.copy_(model.conv3.weight.flip(1))
    return fixed.eval()


# name -> (builder() -> model, input shape, exporter, eager reference or None, what, problem, twin)
def _programs() -> Dict[str, Dict[str, Any]]:
    return {
        "partial_lowering": dict(
            build=lambda: SmallCnn(nn.ELU()), shape=(1, 3, 32, 32), export=_lower_xnnpack,
            what="CNN conv-relu-conv-ELU-conv-relu-conv-relu-avgpool-linear, 1x3x32x32, "
                 "XnnpackPartitioner",
            problem="aten::elu.out runs as a portable kernel between two XNNPACK delegates: "
                    "ExecuTorch 1.5.1's XnnpackPartitioner has no ELU config (EluConfig is "
                    "commented out in backends/xnnpack/partition/config/__init__.py, 'Waiting "
                    "for PyTorch Pin Update'), so the graph is cut in two; the 1x32x32x32 "
                    "activation leaves XNNPACK (NHWC -> NCHW), runs the portable ELU and goes "
                    "back in, and XNNPACK cannot fuse or plan across the cut",
            twin="partial_lowering_fixed"),
        "partial_lowering_fixed": dict(
            build=lambda: SmallCnn(EluFromDelegatedOps()), shape=(1, 3, 32, 32),
            export=_lower_xnnpack,
            what="partial_lowering's model (same weights) with ELU written as "
                 "relu(x) + (exp(clamp(x, max=0)) - 1), XnnpackPartitioner",
            problem=None, twin="partial_lowering"),
        "permuted_constant": dict(
            build=lambda: PermutedConstant(PERMUTED_N), shape=(4, PERMUTED_N), export=_portable,
            what=f"relu(x @ w.t()), w a {PERMUTED_N}x{PERMUTED_N} float32 parameter, x "
                 f"4x{PERMUTED_N}, portable kernels (to_edge)",
            problem="aten::permute_copy.out transposes the constant weight on every call "
                    f"({PERMUTED_N}x{PERMUTED_N} floats, strided) and feeds aten::mm.out; the "
                    "transpose of a constant can be computed once at export",
            twin="permuted_constant_folded"),
        "permuted_constant_folded": dict(
            build=lambda: PermutedConstant(PERMUTED_N), shape=(4, PERMUTED_N),
            export=_portable_const_prop,
            what="permuted_constant's model exported with ExecuTorch's constant_prop_pass on "
                 "the edge program: w.t() is stored as a constant, mm reads it directly",
            problem=None, twin="permuted_constant"),
        "qdq_portable": dict(
            build=lambda: SmallCnn(ChannelFlip()), shape=(1, 3, 32, 32),
            export=_quantized_xnnpack_no_lone_qdq,
            what="CNN conv-relu-conv-flip(channels)-conv-relu-conv-relu-avgpool-linear, "
                 "pt2e int8 (XNNPACKQuantizer, get_symmetric_quantization_config), "
                 "XnnpackPartitioner without its lone quantize/dequantize configs",
            problem="XNNPACK has no flip, so quantized_decomposed::dequantize_per_tensor.out -> "
                    "aten::flip.out (float32, portable) -> quantized_decomposed::"
                    "quantize_per_tensor.out run as portable kernels between two delegates; "
                    "flip only moves values and the dequantize and quantize carry the same "
                    "scale and zero point, so the pair cancels: the flip could run on the int8 "
                    "tensor (or be folded away) and the two conversions dropped. The program's "
                    "input quantize and output dequantize are portable kernels too",
            twin="qdq_portable_fixed"),
        "qdq_portable_default": dict(
            build=lambda: SmallCnn(ChannelFlip()), shape=(1, 3, 32, 32),
            export=_quantized_xnnpack,
            what="qdq_portable's quantized model lowered with the default XnnpackPartitioner()",
            problem="the default partitioner takes the lone dequantize and quantize into the "
                    "neighbouring delegates, so no q/dq kernel runs outside XNNPACK, but "
                    "aten::flip.out (float32) still splits the graph into two delegates: the "
                    "first ends by dequantizing to float32, the second starts by quantizing "
                    "back (the same cancelling pair, inside the delegates)",
            twin="qdq_portable_fixed"),
        "qdq_portable_fixed": dict(
            build=lambda: _fold_flip_into_conv3(_built("qdq_portable")), shape=(1, 3, 32, 32),
            export=_quantized_xnnpack_no_lone_qdq,
            what="qdq_portable's model with the flip folded into conv3 (its weight's input "
                 "channels reversed), quantized and lowered the same way as qdq_portable",
            problem=None, twin="qdq_portable"),
        "dtype_roundtrip": dict(
            build=lambda: DtypeRoundTrip(True), shape=(DTYPE_ROWS, DTYPE_COLS),
            export=_portable_const_prop,
            what=f"tanh(x.to(float64)).to(float32) then Linear({DTYPE_COLS}, 16), x "
                 f"{DTYPE_ROWS}x{DTYPE_COLS}, portable kernels, constant_prop_pass (so the "
                 "Linear weight's transpose is folded and only the round trip differs from "
                 "the twin)",
            problem="two dim_order_ops::_to_dim_order_copy.out per run (float32 -> float64 and "
                    "back) around a float64 tanh: twice the bytes moved and a double-precision "
                    "tanh for a float32 result; ExecuTorch keeps both conversions (constant "
                    "propagation does not touch them: they convert the input)",
            twin="dtype_roundtrip_fixed"),
        "dtype_roundtrip_fixed": dict(
            build=lambda: DtypeRoundTrip(False), shape=(DTYPE_ROWS, DTYPE_COLS),
            export=_portable_const_prop,
            what="dtype_roundtrip's model (same weights) with tanh in float32, exported the same "
                 "way", problem=None, twin="dtype_roundtrip"),
        "zero_and_nan_weights": dict(
            build=SuspiciousWeights, shape=(2, 16), export=_portable,
            what="Linear(16,32)-relu, h + Linear(32,32)(h) with an all-zero weight, "
                 "Linear(32,8) whose weight holds a NaN ([0,3]) and an Inf ([1,5]); portable",
            problem="suspicious constants: fc2.weight (32x32) is all zeros (the layer adds "
                    "only its bias: dead compute), fc3.weight holds NaN and +Inf, so output "
                    "column 0 is NaN and column 1 is +-Inf/NaN for every input. Exported with "
                    "plain to_edge, so like every portable nn.Linear it also transposes each "
                    "weight at run time (permute_copy of a constant before each addmm, as in "
                    "permuted_constant)",
            twin=None),
    }


_BUILT: Dict[str, nn.Module] = {}


def _built(name: str) -> nn.Module:
    """The model of another program, built the same way (seeded)."""
    if name not in _BUILT:
        torch.manual_seed(MODEL_SEED)
        _BUILT[name] = _programs()[name]["build"]().eval()
    return _BUILT[name]


# --------------------------------------------------------------------------- plan facts


def _op_name(op: Any) -> str:
    return op.name + ("." + op.overload if op.overload else "")


def plan_facts(pte: bytes) -> Dict[str, Any]:
    """forward's instructions as ExecuTorch's deserializer reads them, with their arguments."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import (Bool, DelegateCall, Double, Int, KernelCall,
                                        Tensor as STensor)

    prog = deserialize_pte_binary(pte).program
    plan = next(p for p in prog.execution_plan if p.name == "forward")
    inputs = set(plan.inputs)

    def arg(i: int) -> Any:
        v = plan.values[i].val
        if isinstance(v, STensor):
            const = v.data_buffer_idx > 0 or (
                v.extra_tensor_info is not None and v.allocation_info is None and i not in inputs)
            return {"value": i, "tensor": list(v.sizes),
                    "dtype": getattr(v.scalar_type, "name", str(v.scalar_type)),
                    **({"constant": True} if const else {}),
                    **({"input": True} if i in inputs else {})}
        if isinstance(v, Double):
            return {"value": i, "double": v.double_val}
        if isinstance(v, Int):
            return {"value": i, "int": v.int_val}
        if isinstance(v, Bool):
            return {"value": i, "bool": v.bool_val}
        return {"value": i, "type": type(v).__name__}

    instrs = []
    for ci, chain in enumerate(plan.chains):
        for k, ins in enumerate(chain.instructions):
            a = ins.instr_args
            d: Dict[str, Any] = {"chain": ci, "index": k, "kind": type(a).__name__}
            if isinstance(a, KernelCall):
                d["op"] = _op_name(plan.operators[a.op_index])
                d["args"] = [arg(i) for i in a.args]
            elif isinstance(a, DelegateCall):
                d["delegate"] = plan.delegates[a.delegate_index].id
                d["args"] = [arg(i) for i in a.args]
            instrs.append(d)
    return {"num_instructions": len(instrs), "instructions": instrs,
            "operators": [_op_name(o) for o in plan.operators],
            "delegates": [dl.id for dl in plan.delegates]}


def _short(ins: Dict[str, Any]) -> str:
    if ins["kind"] == "DelegateCall":
        return f"{ins['index']}:DELEGATE_CALL({ins['delegate']})"
    if ins["kind"] == "KernelCall":
        return f"{ins['index']}:{ins['op']}"
    return f"{ins['index']}:{ins['kind']}"


def problem_instructions(name: str, facts: Dict[str, Any]) -> Dict[str, Any]:
    """The instructions that show each program's problem (or its absence in the twin)."""
    ins = facts["instructions"]
    kernels = [i for i in ins if i["kind"] == "KernelCall"]
    delegates = [i for i in ins if i["kind"] == "DelegateCall"]
    out: Dict[str, Any] = {"plan": [_short(i) for i in ins],
                           "delegate_calls": [i["index"] for i in delegates]}
    if name.startswith("partial_lowering") or name.startswith("qdq_portable"):
        if len(delegates) >= 2:
            lo, hi = delegates[0]["index"], delegates[-1]["index"]
            out["portable_between_delegates"] = [_short(i) for i in kernels if lo < i["index"] < hi]
    if name.startswith("permuted_constant"):
        perm = [i for i in kernels if i["op"].startswith("aten::permute_copy")
                or i["op"].startswith("aten::t_copy")]
        out["permute_of_constant"] = [
            _short(i) for i in perm if i["args"] and i["args"][0].get("constant")]
        out["matmul"] = [
            _short(i) + (" (weight arg constant)" if any(a.get("constant") for a in i["args"]) else "")
            for i in kernels if i["op"].split(".")[0] in ("aten::mm", "aten::addmm", "aten::linear")]
    if name.startswith("dtype_roundtrip"):
        out["dtype_conversions"] = [
            _short(i) + " " + "->".join(a["dtype"] for a in (i["args"][0], i["args"][-1]))
            for i in kernels if "_to_copy" in i["op"] or "_to_dim_order_copy" in i["op"]]
    if name.startswith("qdq_portable"):
        out["quantize_dequantize"] = [
            {"instruction": _short(i),
             "scale": next((a["double"] for a in i["args"] if "double" in a), None),
             "zero_point": next((a["int"] for a in i["args"] if "int" in a), None)}
            for i in kernels if "quantize_per_tensor" in i["op"]]
    return out


def qdq_pairs(edge: Any) -> List[Dict[str, Any]]:
    """Non-delegated dequantize -> (ops) -> quantize chains in the lowered edge graph."""
    gm = edge.exported_program().graph_module
    pairs = []
    for n in gm.graph.nodes:
        if n.op != "call_function" or "dequantize_per_tensor" not in str(n.target):
            continue
        path, cur = [], n
        while len(cur.users) == 1:
            nxt = next(iter(cur.users))
            if nxt.op != "call_function" or "getitem" in str(nxt.target) or \
                    "executorch_call_delegate" in str(nxt.target):
                break
            if "quantize_per_tensor" in str(nxt.target) and "dequantize" not in str(nxt.target):
                dq, q = n.args[1:], nxt.args[1:]
                pairs.append({
                    "dequantize": {"node": n.name, "scale": float(dq[0]), "zero_point": int(dq[1])},
                    "between": path,
                    "quantize": {"node": nxt.name, "scale": float(q[0]), "zero_point": int(q[1])},
                    "same_scale_and_zero_point": tuple(dq) == tuple(q),
                })
                break
            path.append(str(nxt.target).split(".")[-2] if "." in str(nxt.target) else str(nxt.target))
            cur = nxt
    return pairs


def suspicious_constants(et: Any) -> List[Dict[str, Any]]:
    ep = et.exported_program()
    found = []
    tensors = dict(ep.state_dict)
    tensors.update({k: v for k, v in ep.constants.items() if isinstance(v, torch.Tensor)})
    for k, t in sorted(tensors.items()):
        if not t.is_floating_point():
            continue
        d: Dict[str, Any] = {}
        if t.numel() > 0 and bool((t == 0).all()):
            d["all_zero"] = True
        if bool(torch.isnan(t).any()):
            d["nan"] = int(torch.isnan(t).sum())
        if bool(torch.isinf(t).any()):
            d["inf"] = int(torch.isinf(t).sum())
        if d:
            found.append({"name": k, "shape": list(t.shape), **d})
    return found


# --------------------------------------------------------------------------- export


def run_executorch(pte_path: Path, inputs: Tuple[torch.Tensor, ...]) -> List[torch.Tensor]:
    """ExecuTorch's own answer: the executorch.runtime API (pybindings underneath)."""
    import executorch.kernels.quantized  # noqa: F401  quantized_decomposed kernels
    from executorch.runtime import Runtime
    program = Runtime.get().load_program(pte_path)
    method = program.load_method("forward")
    return [o for o in method.execute(list(inputs))]


def _max_abs_diff(a: torch.Tensor, b: torch.Tensor) -> float:
    """max |a - b| over the entries where both are finite; inf if they differ in finiteness."""
    a, b = a.double(), b.double()
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    if not torch.equal(fa, fb):
        return math.inf
    both = fa & fb
    return float((a[both] - b[both]).abs().max()) if bool(both.any()) else 0.0


def export_one(name: str, out: Path) -> Dict[str, Any]:
    spec = _programs()[name]
    model = _built(name)
    ex = (randn(INPUT_SEED, *spec["shape"]),)
    edge, extra, calls = spec["export"](model, ex)
    quantized = spec["export"] in (_quantized_xnnpack, _quantized_xnnpack_no_lone_qdq)
    eager_fn = extra if quantized else model
    from executorch.devtools.backend_debug import get_delegation_info
    info = get_delegation_info(edge.exported_program().graph_module)
    df = info.get_operator_delegation_dataframe()
    pairs = qdq_pairs(edge) if quantized else None
    # The ETRecord of a constant-propagated program is made from a copy of the edge program taken
    # before to_executorch(), whose passes renumber debug handles in place.
    edge_copy = copy.deepcopy(edge) if spec["export"] is _portable_const_prop else None
    et = edge.to_executorch()
    pte = bytes(et.buffer)
    pte_path = out / f"{name}.pte"
    pte_path.write_bytes(pte)
    etr_path = out / f"{name}.etrecord"
    if spec["export"] is _portable_const_prop:
        from executorch.devtools import generate_etrecord
        generate_etrecord(str(etr_path), edge_dialect_program=edge_copy,
                          executorch_program=et, exported_program=extra)
    else:
        et.get_etrecord().save(str(etr_path))
    save_npy(out / f"{name}.input0.npy", ex[0])
    got = run_executorch(pte_path, ex)
    for i, t in enumerate(got):
        save_npy(out / f"{name}.output{i}.npy", t)
    with torch.no_grad():
        eager = eager_fn(*ex)
    eager = list(eager) if isinstance(eager, (tuple, list)) else [eager]

    facts = plan_facts(pte)
    rec: Dict[str, Any] = {
        "name": name, "what": spec["what"], "problem": spec["problem"], "twin": spec["twin"],
        "exporter_calls": calls, "model_seed": MODEL_SEED, "input_seed": INPUT_SEED,
        "input_shape": list(ex[0].shape),
        "output_shapes": [list(t.shape) for t in got],
        "max_abs_diff_vs_eager": [_max_abs_diff(g, e) for g, e in zip(got, eager)],
        "nonfinite_outputs": [int((~torch.isfinite(g)).sum()) for g in got],
        "pte_bytes": len(pte), "etrecord_bytes": etr_path.stat().st_size,
        "delegation": {
            "num_delegated_subgraphs": info.num_delegated_subgraphs,
            "num_delegated_nodes": info.num_delegated_nodes,
            "num_non_delegated_nodes": info.num_non_delegated_nodes,
            "non_delegated_ops": {str(r[0]): int(r[2]) for r in df.itertuples(index=False)
                                  if r[2] and r[0] not in ("Total", "getitem")},
        },
        "problem_instructions": problem_instructions(name, facts),
        "plan": facts,
    }
    if pairs is not None:
        rec["qdq_pairs_outside_delegates"] = pairs
    rec["suspicious_constants"] = suspicious_constants(et)
    return rec


# --------------------------------------------------------------------------- manifest


def write_manifest(out: Path, recs: Dict[str, Dict[str, Any]]) -> None:
    v = versions()
    L = [
        "# Programs with performance problems, and fixed twins (`etscope findings`)",
        "",
        "Written by `samples/export/export_findings.py` with the real ExecuTorch exporter; "
        "nothing here is edited by hand. Command, from `samples/export/`:",
        "",
        "    PYTHONHASHSEED=0 $VENV/bin/python export_findings.py WORK   "
        "# VENV: pip install -r requirements.txt",
        "    cp WORK/* ../../tests/fixtures/executorch/findings/",
        "",
        f"Versions: python {v['python']}, torch {v['torch']}, executorch {v['executorch']} "
        f"(git {v['executorch_git']}), numpy {v['numpy']}; torchao "
        f"{_torchao_version()}. Weights: `torch.manual_seed({MODEL_SEED})` right before each "
        f"model is built; inputs `torch.randn` from `torch.Generator().manual_seed({INPUT_SEED})`"
        f"; pt2e calibration seeds {CALIB_SEEDS[0]}..{CALIB_SEEDS[-1]}.",
        "",
        "Per program `<n>`: `<n>.pte` (the program), `<n>.etrecord` (ETRecord), "
        "`<n>.input0.npy` (the input of `forward`), `<n>.output0.npy` (ExecuTorch's own output "
        "for it, `executorch.runtime.Runtime`, portable + XNNPACK + quantized kernels of the "
        "wheel). `findings.json` holds each program's exporter calls, its whole plan "
        "(instructions with arguments, as `deserialize_pte_binary` reads them), the delegation "
        "summary (`get_delegation_info`), q/dq pairs outside delegates and suspicious constants.",
        "Instruction numbers below are indices in chain 0 of `forward`. The .pte, .npy and "
        "findings.json files are byte-reproducible; the .etrecord files are not (zip entry "
        "times, `export_graph_id`, the serialized edge graph's text differ between runs).",
        "",
        "## Programs",
        "",
    ]
    for name, r in recs.items():
        pi = r["problem_instructions"]
        L.append(f"### `{name}`" + (f" (fixed twin: `{r['twin']}`)" if r["problem"] and r["twin"]
                                    else (f" (clean twin of `{r['twin']}`)" if r["twin"] else "")))
        L.append("")
        L.append(f"- what: {r['what']}")
        L.append(f"- exporter: `" + "` -> `".join(r["exporter_calls"]) + "`")
        L.append(f"- problem: {r['problem'] or 'none (clean)'}")
        L.append(f"- plan ({r['plan']['num_instructions']} instructions): `" + "`, `".join(pi["plan"]) + "`")
        d = r["delegation"]
        L.append(f"- delegation: {d['num_delegated_subgraphs']} delegated subgraph(s), "
                 f"non-delegated ops {d['non_delegated_ops'] or '{}'}")
        for key, label in (("portable_between_delegates", "portable kernels between delegates"),
                           ("permute_of_constant", "permute of a constant"),
                           ("matmul", "matmul"), ("dtype_conversions", "dtype conversions")):
            if key in pi:
                L.append(f"- {label}: {pi[key] or 'none'}")
        if "quantize_dequantize" in pi:
            L.append("- quantize/dequantize kernel calls outside delegates: " + (", ".join(
                f"`{q['instruction']}` (scale {q['scale']:.9g}, zero point {q['zero_point']})"
                for q in pi["quantize_dequantize"]) or "none"))
        if "qdq_pairs_outside_delegates" in r:
            for p in r["qdq_pairs_outside_delegates"]:
                L.append(f"- q/dq pair: dequantize(scale {p['dequantize']['scale']:.9g}, zp "
                         f"{p['dequantize']['zero_point']}) -> {' -> '.join(p['between']) or '(nothing)'} "
                         f"-> quantize(scale {p['quantize']['scale']:.9g}, zp "
                         f"{p['quantize']['zero_point']}): "
                         + ("same scale and zero point (cancelling pair)"
                            if p["same_scale_and_zero_point"] else "different parameters (a requantize)"))
        if r["suspicious_constants"]:
            L.append("- suspicious constants: " + ", ".join(
                f"`{c['name']}` {c['shape']}" + "".join(
                    f" {k}={c[k]}" for k in ("all_zero", "nan", "inf") if k in c)
                for c in r["suspicious_constants"]))
        L.append(f"- ExecuTorch output vs eager, max abs (finite entries): "
                 f"{r['max_abs_diff_vs_eager']}; non-finite outputs: {r['nonfinite_outputs']}")
        L.append("")
    L += ["## Files", "", "| file | bytes | what |", "|---|---|---|"]
    kinds = {".pte": "program", ".etrecord": "ETRecord", ".input0.npy": "input of forward",
             ".output0.npy": "ExecuTorch's output for input0"}
    for name in recs:
        for suf, what in kinds.items():
            p = out / f"{name}{suf}"
            if p.exists():
                L.append(f"| `{p.name}` | {p.stat().st_size} | {name}: {what} |")
    fj = out / "findings.json"
    L.append(f"| `findings.json` | {fj.stat().st_size} | facts of every program (see above) |")
    L.append("")
    (out / "MANIFEST.md").write_text("\n".join(L) + "\n")


def _torchao_version() -> str:
    try:
        import torchao
        return torchao.__version__
    except Exception:  # noqa: BLE001
        return "?"


def main(argv: List[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    names = argv[1:] or list(_programs())
    recs: Dict[str, Dict[str, Any]] = {}
    for n in names:
        recs[n] = export_one(n, out)
        r = recs[n]
        print(f"[{n}] pte {r['pte_bytes']} B, etrecord {r['etrecord_bytes']} B, "
              f"plan {r['problem_instructions']['plan']}", flush=True)
    with open(out / "findings.json", "w") as f:
        json.dump(to_jsonable({"versions": versions(), "programs": recs}), f, indent=1,
                  allow_nan=False)
        f.write("\n")
    write_manifest(out, recs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
