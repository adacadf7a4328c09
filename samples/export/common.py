"""Shared helpers for etscope's reference-artifact scripts.

Everything here calls ExecuTorch's own Python APIs; the scripts only decide
what to run and how to store the answers.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import platform
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Sequence

import numpy as np
import torch

HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent
if str(SAMPLES) not in sys.path:
    sys.path.insert(0, str(SAMPLES))

# Tensors with at most this many elements are written out in full in JSON;
# bigger ones are summarised (see tensor_to_json).
INLINE_LIMIT = int(os.environ.get("ETSCOPE_INLINE_LIMIT", "1024"))


def versions() -> Dict[str, str]:
    import executorch.version as ev
    import torchvision

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "torchvision": torchvision.__version__,
        "executorch": getattr(ev, "__version__", "?"),
        "executorch_git": getattr(ev, "git_version", "?"),
        "numpy": np.__version__,
    }


# --------------------------------------------------------------------------- JSON


def _float(x: float) -> Any:
    """JSON has no inf/nan: write them as strings so any strict parser copes."""
    x = float(x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def tensor_to_json(t: torch.Tensor) -> Dict[str, Any]:
    t = t.detach().cpu()
    out: Dict[str, Any] = {
        "__tensor__": True,
        "dtype": str(t.dtype).replace("torch.", ""),
        "shape": list(t.shape),
        "numel": t.numel(),
    }
    contiguous = t.contiguous()
    if t.dtype == torch.bool:
        raw = contiguous.numpy().astype(np.uint8).tobytes()
    elif t.dtype == torch.bfloat16:
        raw = contiguous.view(torch.int16).numpy().tobytes()
    else:
        raw = contiguous.numpy().tobytes()
    out["sha256"] = hashlib.sha256(raw).hexdigest()
    if t.numel() > 0 and (t.is_floating_point() or not t.dtype == torch.bool):
        d = t.double()
        out["sum"] = _float(d.sum())
        out["abs_sum"] = _float(d.abs().sum())
        out["min"] = _float(d.min())
        out["max"] = _float(d.max())
    flat = contiguous.reshape(-1)
    if t.numel() <= INLINE_LIMIT:
        out["data"] = [_float(v) if t.is_floating_point() else int(v) for v in flat.tolist()]
    else:
        out["first"] = [_float(v) if t.is_floating_point() else int(v) for v in flat[:16].tolist()]
    return out


def to_jsonable(v: Any) -> Any:
    if isinstance(v, torch.Tensor):
        return tensor_to_json(v)
    if isinstance(v, np.ndarray):
        return tensor_to_json(torch.from_numpy(np.ascontiguousarray(v)))
    if isinstance(v, (np.floating, float)):
        return _float(v)
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (np.bool_,)):
        return bool(v)
    if isinstance(v, dict):
        return {str(k): to_jsonable(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return [to_jsonable(x) for x in v]
    if isinstance(v, list):
        return [to_jsonable(x) for x in v]
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if hasattr(v, "value") and hasattr(v, "name"):  # enums
        return {"name": v.name, "value": to_jsonable(v.value)}
    return repr(v)


def write_json(path: Path, obj: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(to_jsonable(obj), f, indent=1, allow_nan=False)
        f.write("\n")


def save_npy(path: Path, t: torch.Tensor) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, t.detach().cpu().contiguous().numpy())


# --------------------------------------------------------------------------- .ptd


def write_ptd(path: Path, tensors: Dict[str, torch.Tensor], alignment: int = 16) -> None:
    """Write named tensors with ExecuTorch's own FlatTensor serializer."""
    from executorch.exir._serialize.data_serializer import DataEntry, DataPayload
    from executorch.exir.tensor_layout import TensorLayout
    from executorch.extension.flat_tensor.serialize.serialize import FlatTensorSerializer

    buffers: List[bytes] = []
    entries: Dict[str, DataEntry] = {}
    for key, t in tensors.items():
        t = t.detach().cpu().contiguous()
        entries[key] = DataEntry(
            buffer_index=len(buffers),
            alignment=alignment,
            tensor_layout=TensorLayout.from_tensor(t),
        )
        if t.dtype == torch.bool:
            buffers.append(t.numpy().astype(np.uint8).tobytes())
        else:
            buffers.append(t.numpy().tobytes())
    blob = FlatTensorSerializer().serialize(DataPayload(buffers=buffers, named_data=entries))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        f.write(bytes(blob))


# --------------------------------------------------------------------------- facts


def _scalar_type_name(st: Any) -> Any:
    return getattr(st, "name", st)


def program_facts(pte_bytes: bytes) -> Dict[str, Any]:
    """Facts about a .pte as seen by ExecuTorch's own Python deserializer."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import (
        DelegateCall,
        FreeCall,
        JumpFalseCall,
        KernelCall,
        MoveCall,
        Tensor as STensor,
    )

    from executorch.exir._serialize import _program as _p

    # Raw view (segments not moved back into the Program).
    eh = _p._get_extended_header(pte_bytes)
    psize = eh.program_size if eh and eh.is_valid() else len(pte_bytes)
    raw = _p._flatbuffer_to_program(pte_bytes[:psize])
    pte = deserialize_pte_binary(pte_bytes)
    prog = pte.program
    facts: Dict[str, Any] = {
        "file_size": len(pte_bytes),
        "file_identifier": pte_bytes[4:8].decode("latin1"),
        "extended_header": {
            "program_size": eh.program_size,
            "segment_base_offset": eh.segment_base_offset,
            "segment_data_size": getattr(eh, "segment_data_size", None),
        } if eh and eh.is_valid() else None,
        "program_version": prog.version,
        "num_execution_plans": len(prog.execution_plan),
        "raw_num_constant_buffer": len(raw.constant_buffer),
        "raw_num_backend_delegate_data": len(raw.backend_delegate_data),
        "raw_backend_delegate_data_sizes": [len(d.data) for d in raw.backend_delegate_data],
        "raw_constant_segment_offsets": list(raw.constant_segment.offsets)
        if raw.constant_segment is not None else None,
        "raw_mutable_data_segments": [
            {"segment_index": m.segment_index, "offsets": list(m.offsets)}
            for m in (raw.mutable_data_segments or [])
        ],
        "raw_named_data": [{"key": nd.key, "segment_index": nd.segment_index}
                           for nd in (raw.named_data or [])],
        "num_segments": len(raw.segments),
        "segments": [{"offset": s.offset, "size": s.size} for s in raw.segments],
        "note": "raw_* and segments come from the flatbuffer as stored; the rest from "
                "deserialize_pte_binary, which moves segment data back into the Program",
        "constant_segment": {
            "segment_index": prog.constant_segment.segment_index,
            "num_offsets": len(prog.constant_segment.offsets),
        }
        if prog.constant_segment is not None
        else None,
        "mutable_data_segments": [
            {"segment_index": m.segment_index, "num_offsets": len(m.offsets)}
            for m in (prog.mutable_data_segments or [])
        ],
        "named_data_keys": [nd.key for nd in (prog.named_data or [])],
        "execution_plans": [],
    }
    for plan in prog.execution_plan:
        values = plan.values

        def describe(idx: int) -> Dict[str, Any]:
            v = values[idx].val
            kind = type(v).__name__
            d: Dict[str, Any] = {"value_index": idx, "type": kind}
            if isinstance(v, STensor):
                d["scalar_type"] = _scalar_type_name(v.scalar_type)
                d["sizes"] = list(v.sizes)
                d["dim_order"] = list(v.dim_order)
                d["data_buffer_idx"] = v.data_buffer_idx
                d["planned"] = v.allocation_info is not None
                if v.extra_tensor_info is not None:
                    d["fully_qualified_name"] = v.extra_tensor_info.fully_qualified_name
                    d["location"] = _scalar_type_name(v.extra_tensor_info.location)
            elif hasattr(v, "int_val"):
                d["value"] = v.int_val
            elif hasattr(v, "string_val"):
                d["value"] = v.string_val
            elif hasattr(v, "bool_val"):
                d["value"] = v.bool_val
            elif hasattr(v, "double_val"):
                d["value"] = v.double_val
            return d

        instr_kinds: Dict[str, int] = {}
        kernel_ops: List[str] = []
        instrs = []
        for chain in plan.chains:
            for ins in chain.instructions:
                a = ins.instr_args
                k = type(a).__name__
                instr_kinds[k] = instr_kinds.get(k, 0) + 1
                if isinstance(a, KernelCall):
                    op = plan.operators[a.op_index]
                    name = op.name + ("." + op.overload if op.overload else "")
                    kernel_ops.append(name)
                    instrs.append({"kind": k, "op": name, "args": list(a.args)})
                elif isinstance(a, DelegateCall):
                    instrs.append(
                        {"kind": k, "delegate_index": a.delegate_index, "args": list(a.args)}
                    )
                elif isinstance(a, MoveCall):
                    instrs.append({"kind": k, "move_from": a.move_from, "move_to": a.move_to})
                elif isinstance(a, JumpFalseCall):
                    instrs.append(
                        {
                            "kind": k,
                            "cond_value_index": a.cond_value_index,
                            "destination_instruction": a.destination_instruction,
                        }
                    )
                elif isinstance(a, FreeCall):
                    instrs.append({"kind": k, "value_index": a.value_index})
        planned = [
            i
            for i, ev in enumerate(values)
            if isinstance(ev.val, STensor) and ev.val.allocation_info is not None
        ]
        value_types: Dict[str, int] = {}
        for ev in values:
            n = type(ev.val).__name__
            value_types[n] = value_types.get(n, 0) + 1
        facts["execution_plans"].append(
            {
                "name": plan.name,
                "num_values": len(values),
                "value_type_counts": value_types,
                "num_inputs": len(plan.inputs),
                "num_outputs": len(plan.outputs),
                "inputs": [describe(i) for i in plan.inputs],
                "outputs": [describe(i) for i in plan.outputs],
                "num_chains": len(plan.chains),
                "num_instructions": sum(len(c.instructions) for c in plan.chains),
                "instruction_kind_counts": instr_kinds,
                "instructions": instrs,
                "operators": [
                    o.name + ("." + o.overload if o.overload else "") for o in plan.operators
                ],
                "kernel_call_ops_in_order": kernel_ops,
                "delegates": [
                    {
                        "id": dl.id,
                        "location": _scalar_type_name(dl.processed.location),
                        "index": dl.processed.index,
                        "compile_specs": [cs.key for cs in dl.compile_specs],
                    }
                    for dl in plan.delegates
                ],
                "non_const_buffer_sizes": list(plan.non_const_buffer_sizes),
                "num_planned_tensors": len(planned),
                "container_meta_type": {
                    "encoded_inp_str": plan.container_meta_type.encoded_inp_str,
                    "encoded_out_str": plan.container_meta_type.encoded_out_str,
                },
            }
        )
    return facts


def runtime_method_facts(module: Any) -> Dict[str, Any]:
    """What the pybindings runtime reports through MethodMeta."""
    out: Dict[str, Any] = {}
    for name in module.method_names():
        mm = module.method_meta(name)

        def info(ti: Any) -> Dict[str, Any]:
            return {
                "sizes": list(ti.sizes()),
                "dtype": int(ti.dtype()),
                "is_memory_planned": bool(ti.is_memory_planned()),
                "nbytes": int(ti.nbytes()),
            }

        d: Dict[str, Any] = {
            "num_inputs": mm.num_inputs(),
            "num_outputs": mm.num_outputs(),
        }
        ins, outs = [], []
        for i in range(mm.num_inputs()):
            try:
                ins.append(info(mm.input_tensor_meta(i)))
            except Exception as e:  # non-tensor input
                ins.append({"error": str(e)})
        for i in range(mm.num_outputs()):
            try:
                outs.append(info(mm.output_tensor_meta(i)))
            except Exception as e:
                outs.append({"error": str(e)})
        d["inputs"] = ins
        d["outputs"] = outs
        try:
            d["num_attributes"] = mm.num_attributes()
        except Exception:
            pass
        out[name] = d
    return out


def aot_graph_facts(et_manager: Any) -> Dict[str, Any]:
    """Operators in the final ExecuTorch graph and the planned sizes it recorded."""
    ep = et_manager.exported_program()
    ops = []
    for n in ep.graph.nodes:
        if n.op == "call_function":
            t = n.target
            if callable(t) and not hasattr(t, "_schema") and hasattr(t, "__qualname__"):
                # plain Python functions (memory.alloc, memory.view, ...): a stable name
                # instead of "<function alloc at 0x...>"
                ops.append(f"{getattr(t, '__module__', '')}.{t.__qualname__}")
            else:
                ops.append(str(t))
    sig = ep.graph_signature
    return {
        "graph_call_function_targets": ops,
        "input_specs": [
            {"kind": s.kind.name, "target": s.target, "name": getattr(s.arg, "name", None)}
            for s in sig.input_specs
        ],
        "output_specs": [
            {"kind": s.kind.name, "target": s.target, "name": getattr(s.arg, "name", None)}
            for s in sig.output_specs
        ],
    }
