"""Run ExecuTorch's runtime with ETDump and its Inspector, and store the answers."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any, Dict, List, Sequence

import numpy as np
import torch

from common import save_npy, to_jsonable, write_json, write_ptd

BIG_DEBUG_BUFFER = 512 << 20


def etdump_to_dict(etdp_path: Path) -> Dict[str, Any]:
    """Decode an .etdp with ExecuTorch's own deserializer (flatc under the hood)."""
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc

    with open(etdp_path, "rb") as f:
        et = deserialize_from_etdump_flatcc(f.read())

    def conv(o: Any) -> Any:
        if dataclasses.is_dataclass(o):
            return {fl.name: conv(getattr(o, fl.name)) for fl in dataclasses.fields(o)}
        if isinstance(o, list):
            return [conv(x) for x in o]
        if isinstance(o, bytes):
            return o.hex()
        if hasattr(o, "name") and hasattr(o, "value"):
            return o.name
        return o

    return conv(et)


def debug_buffer_end(etdump: Dict[str, Any]) -> int:
    """Highest byte referenced by a debug event tensor (offset + nbytes)."""
    elem = {
        "BYTE": 1, "CHAR": 1, "BOOL": 1, "SHORT": 2, "UINT16": 2, "BITS16": 2, "HALF": 2,
        "BFLOAT16": 2, "INT": 4, "FLOAT": 4, "DOUBLE": 8, "LONG": 8,
    }
    end = 0

    def tens(t: Dict[str, Any]) -> None:
        nonlocal end
        if t is None or t.get("offset") is None:
            return
        n = 1
        for s in t["sizes"]:
            n *= s
        end = max(end, t["offset"] + n * elem.get(t["scalar_type"], 8))

    for rd in etdump["run_data"]:
        for ev in rd.get("events") or []:
            de = ev.get("debug_event")
            if not de:
                continue
            v = de["debug_entry"]
            if v.get("tensor"):
                tens(v["tensor"])
            if v.get("tensor_list"):
                for t in v["tensor_list"]["tensors"]:
                    tens(t)
    return end


def _run(load, inputs: Sequence[torch.Tensor], runs: int, etdp: Path, dbg: Path | None,
         debug_buffer_size: int, method: str = "forward") -> List[Any]:
    mod = load(enable_etdump=True, debug_buffer_size=debug_buffer_size)
    outs = None
    for _ in range(runs):
        outs = mod.run_method(method, tuple(inputs))
    assert mod.has_etdump(), "pybindings built without ETDump"
    etdp.parent.mkdir(parents=True, exist_ok=True)
    if dbg is not None:
        mod.write_etdump_result_to_file(str(etdp), str(dbg))
    else:
        mod.write_etdump_result_to_file(str(etdp))
    return outs


def run_with_etdump(load, inputs: Sequence[torch.Tensor], outdir: Path, stem: str,
                    runs: int = 10, log=print) -> Dict[str, Any]:
    """10 executions with an intermediate-outputs debug buffer, then a profile-only run.

    The pybindings expose no debug-level switch: a non-zero debug_buffer_size makes
    ETDumpGen log intermediate outputs. The buffer file is written at the full
    requested size, so we measure the bytes used in a first pass and re-run with a
    buffer of exactly that size (same program, same input: identical ETDump layout).
    """
    info: Dict[str, Any] = {}
    tmp_etdp = outdir / f".{stem}.probe.etdp"
    tmp_bin = outdir / f".{stem}.probe.bin"
    _run(load, inputs, runs, tmp_etdp, tmp_bin, BIG_DEBUG_BUFFER)
    used = debug_buffer_end(etdump_to_dict(tmp_etdp))
    tmp_etdp.unlink()
    tmp_bin.unlink()
    # +64: the sink aligns each tensor's absolute address to 64, so a new buffer at a
    # different address may need up to 63 more bytes than the probe used.
    size = used + 64
    etdp = outdir / f"{stem}.etdp"
    dbg = outdir / f"{stem}.debug.bin"
    outs = _run(load, inputs, runs, etdp, dbg, size)
    d = etdump_to_dict(etdp)
    info["intermediate"] = {
        "etdp": etdp.name,
        "debug_buffer": dbg.name,
        "debug_buffer_size": size,
        "executions": runs,
        "num_run_data": len(d["run_data"]),
        "run_data_names": [r["name"] for r in d["run_data"]],
    }
    write_json(outdir / f"{stem}.etdump.json", d)
    # ExecuTorch's runtime outputs for the same input.
    info["runtime_outputs"] = [to_jsonable(o) for o in outs]
    # Profile-only: ETDump without a debug buffer, 10 executions.
    etdp2 = outdir / f"{stem}.profile.etdp"
    _run(load, inputs, runs, etdp2, None, 0)
    write_json(outdir / f"{stem}.profile.etdump.json", etdump_to_dict(etdp2))
    info["profile_only"] = {"etdp": etdp2.name, "executions": runs}
    # Count per-operator events.
    names = [
        (ev.get("profile_event") or {}).get("name")
        for r in d["run_data"] for ev in (r.get("events") or [])
    ]
    info["per_operator_profile_events"] = sum(
        1 for n in names if n and (n.startswith("native_call_") or n == "OPERATOR_CALL")
    )
    info["delegate_profile_events"] = sum(
        1 for r in d["run_data"] for ev in (r.get("events") or [])
        if ev.get("profile_event") and (
            (ev["profile_event"].get("delegate_debug_id_int") not in (None, -1))
            or ev["profile_event"].get("delegate_debug_id_str"))
    )
    info["debug_events"] = sum(
        1 for r in d["run_data"] for ev in (r.get("events") or []) if ev.get("debug_event")
    )
    return info


def run_cpp_program_outputs(runner: str, pte: Path, input_npys: Sequence[Path], outdir: Path,
                            stem: str, runs: int = 10, log=print) -> Dict[str, Any]:
    """ETDump at the program-outputs debug level, via etdump_runner (ExecuTorch's C++
    runtime from the wheel's own libraries; the pybindings cannot select this level)."""
    import subprocess

    def run(etdp: Path, dbg: Path, size: int) -> None:
        cmd = [runner, str(pte), str(etdp), str(dbg), "program_outputs", str(runs), str(size)]
        cmd += [str(p) for p in input_npys]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{cmd} failed: {r.stderr[-2000:]}")

    probe_e, probe_b = outdir / f".{stem}.po.probe.etdp", outdir / f".{stem}.po.probe.bin"
    run(probe_e, probe_b, 64 << 20)
    used = debug_buffer_end(etdump_to_dict(probe_e))
    probe_e.unlink()
    probe_b.unlink()
    etdp = outdir / f"{stem}.program_outputs.etdp"
    dbg = outdir / f"{stem}.program_outputs.debug.bin"
    run(etdp, dbg, used + 64)
    d = etdump_to_dict(etdp)
    write_json(outdir / f"{stem}.program_outputs.etdump.json", d)
    return {"etdp": etdp.name, "debug_buffer": dbg.name, "debug_buffer_size": used + 64,
            "executions": runs, "runner": "samples/export/etdump_runner (C++ Module + "
            "ETDumpGen, set_event_tracer_debug_level(kProgramOutputs))",
            "debug_events": sum(1 for r in d["run_data"] for ev in (r.get("events") or [])
                                if ev.get("debug_event"))}


def _event_structure(insp) -> List[Dict[str, Any]]:
    blocks = []
    for b in insp.event_blocks:
        evs = []
        for e in b.events:
            evs.append({
                "name": e.name,
                "instruction_id": e._instruction_id,
                "delegate_debug_identifier": e.delegate_debug_identifier,
                "is_delegated_op": e.is_delegated_op,
                "delegate_backend_name": e.delegate_backend_name,
                "debug_handles": e.debug_handles,
                "num_outputs": getattr(e, "num_outputs", None),
                "op_types": e.op_types,
                "num_perf_samples": len(e.perf_data.raw) if e.perf_data is not None else 0,
                "num_debug_values": len(e.debug_data) if e.debug_data is not None else 0,
            })
        blocks.append({
            "name": b.name,
            "num_events": len(b.events),
            "event_names": [e.name for e in b.events],
            "bundled_input_index": b.bundled_input_index,
            "source_time_scale": str(b.source_time_scale.value),
            "target_time_scale": str(b.target_time_scale.value),
            "run_output": to_jsonable(b.run_output) if b.run_output is not None else None,
            "reference_output": to_jsonable(b.reference_output)
            if b.reference_output is not None else None,
            "events": evs,
        })
    return blocks


def _df_records(df) -> Dict[str, Any]:
    cols = [str(c) for c in df.columns]
    rows = []
    for _, r in df.iterrows():
        rows.append({str(c): to_jsonable(r[c]) for c in df.columns})
    return {"columns": cols, "num_rows": len(rows), "rows": rows}


def run_inspector(outdir: Path, stem: str, etrecord: Any, top_modules: Sequence[str],
                  log=print, variant: str = "", numeric_gap: bool = True,
                  representative_inputs: Sequence[torch.Tensor] | None = None,
                  aot_intermediates: bool = True,
                  extra_meta: Dict[str, Any] | None = None) -> Dict[str, Any]:
    """ExecuTorch's Inspector on <stem><variant>.etdp/.debug.bin and `etrecord` -> <stem>.inspector.json.

    `etrecord` is a path, or an ETRecord object (executorch.devtools.etrecord.ETRecord) given to
    the Inspector as is. `representative_inputs`: when given, the ETRecord (parsed from the path
    if it is one) gets them with ETRecord.update_representative_inputs before the Inspector sees
    it (ExecuTorch's LLM exporter records none, and calculate_numeric_gap needs them); the file
    is not changed. `aot_intermediates=False` skips writing <stem>.aot_intermediates.ptd/.json
    (write_aot_intermediates.py writes them instead). `extra_meta` is merged into "meta".
    """
    from executorch.devtools import Inspector

    etdp = outdir / f"{stem}{variant}.etdp"
    dbg = outdir / f"{stem}{variant}.debug.bin"
    record = str(etrecord) if isinstance(etrecord, (str, Path)) else etrecord
    if representative_inputs is not None:
        if isinstance(record, str):
            from executorch.devtools.etrecord import parse_etrecord
            record = parse_etrecord(record)
        record.update_representative_inputs(list(representative_inputs))
    insp = Inspector(etdump_path=str(etdp), etrecord=record,
                     debug_buffer_path=str(dbg))
    meta = {
        "etdump": etdp.name,
        "etrecord": Path(etrecord).name if isinstance(etrecord, (str, Path)) else "(ETRecord object)",
        "debug_buffer": dbg.name,
        "source_time_scale": "ns (Inspector default)",
        "target_time_scale": "ms (Inspector default)",
        "method": "forward",
        "tensor_encoding": "tensors are objects with __tensor__=true, dtype, shape, numel, "
        "sha256 of the contiguous little-endian bytes, sum/abs_sum/min/max (float64), and "
        "'data' (all values, row-major) when numel <= 1024 else 'first' (first 16 values). "
        "Non-finite floats are the strings 'inf', '-inf', 'nan'.",
    }
    if representative_inputs is not None:
        meta["representative_inputs"] = ("set with ETRecord.update_representative_inputs before "
                                         "the Inspector read the ETRecord (not in the file)")
    meta.update(extra_meta or {})
    res: Dict[str, Any] = {"meta": meta}
    df = insp.to_dataframe()  # include_units=True by default
    res["to_dataframe"] = _df_records(df)
    res["to_dataframe_no_units"] = {"columns": [str(c) for c in insp.to_dataframe(include_units=False).columns]}
    res["event_blocks"] = _event_structure(insp)
    # find_total_for_module: top-level modules and every key seen in module_hierarchy.
    keys = set()
    for b in insp.event_blocks:
        for e in b.events:
            for h in (e.module_hierarchy or {}).values():
                keys.update(h.keys())
    totals = {}
    for m in list(top_modules) + sorted(keys):
        try:
            totals[m] = insp.find_total_for_module(m)
        except Exception as ex:  # record, do not fail
            totals[m] = {"error": repr(ex)}
    res["find_total_for_module"] = {"unit": "ms (target time scale)", "totals": totals,
                                    "top_level_modules": list(top_modules)}
    gaps = {}
    for metric in (("L1", "MSE", "SNR") if numeric_gap else ()):
        try:
            g = insp.calculate_numeric_gap(metric)
            gaps[metric] = _df_records(g)
        except Exception as ex:
            gaps[metric] = {"error": repr(ex)}
            log(f"calculate_numeric_gap({metric}) failed: {ex!r}")
    res["calculate_numeric_gap"] = gaps
    if not numeric_gap or not aot_intermediates:
        write_json(outdir / f"{stem}{variant}.inspector.json", res)
        return res
    # The AOT intermediate outputs the comparison used, keyed by debug handle.
    try:
        ref_gm, ref_name = insp._resolve_reference_graph(None, False)
        aot, aot_names = insp._get_aot_intermediate_outputs_and_op_names(ref_gm)
        tensors: Dict[str, torch.Tensor] = {}
        index = []
        for key, val in aot.items():
            hkey = ",".join(str(h) for h in key)
            vals = val if isinstance(val, (list, tuple)) else [val]
            for i, v in enumerate(vals):
                entry = {"debug_handle": list(key), "op_names": aot_names.get(key, []),
                         "output_index": i, "is_sequence": isinstance(val, (list, tuple))}
                if isinstance(v, torch.Tensor):
                    name = f"{hkey}/{i}" if isinstance(val, (list, tuple)) else hkey
                    tensors[name] = v.detach().contiguous()
                    entry.update({"key": name, "dtype": str(v.dtype), "shape": list(v.shape)})
                else:
                    entry.update({"key": None, "value": to_jsonable(v)})
                index.append(entry)
        write_ptd(outdir / f"{stem}.aot_intermediates.ptd", tensors)
        write_json(outdir / f"{stem}.aot_intermediates.json",
                   {"reference_graph": ref_name, "entries": index,
                    "note": "tensors stored in the .ptd (ExecuTorch FlatTensorSerializer) "
                            "under 'key'; key = debug handles joined by ',' "
                            "(+ '/i' for the i-th element of a sequence output)"})
        res["aot_reference_graph"] = ref_name
    except Exception as ex:
        log(f"AOT intermediates failed: {ex!r}")
        res["aot_error"] = repr(ex)
    write_json(outdir / f"{stem}.inspector.json", res)
    return res
