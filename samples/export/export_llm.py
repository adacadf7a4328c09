#!/usr/bin/env python3
"""Small random-weight Llama 3 programs written by ExecuTorch's own LLM exporter, with answers.

    python export_llm.py [--out DIR] [--only NAME,...] [--full]
    python export_llm.py --refresh-ops DIR          rewrite every ops.json and DIR/index.json
    python export_llm.py --bundle DIR [NAME ...]    DIR/<name>/model.bpte (default: BUNDLED)
    python export_llm.py --pack DIR DEST [NAME ...] the fixture folder (default: FIXTURES)
    python export_llm.py --docs DIR FILE            docs/operators-llm.md
    python export_llm.py --etrecord-fixtures DEST [--work WORK] [NAME ...]
                                                    numeric-gap fixtures with the exporter's
                                                    ETRecord (default: ETRECORD_FIXTURES into
                                                    DEST, work in build/export-work/llm_etrecord)

For every configuration below this runs ExecuTorch 1.5.1's exporter,
`python -m executorch.extension.llm.export.export_llm` (a bundled yaml and/or command-line
overrides), into OUT/<name>/ and records:

  model.pte (+ *.ptd)  the program as the exporter wrote it
  command.txt          the exact command line (cwd, argv)
  export.log           the exporter's output
  ops.json             every operator of every execution plan and every delegate id
  metadata.json        the values of the program's metadata methods (get_max_seq_len, ...)
  tokens_<k>.npy, input_pos_<k>.npy, ref_call_<k>.npy
                       each call of one generation on ONE loaded program: its inputs and its
                       logits (float32; result.json says the program's own dtype). Calls 0..P-1
                       are the prefill (one call when the sequence dimension is dynamic, one per
                       prompt token otherwise), then one call per greedy decode step.
  eager_call_<k>.npy   the exporter's eager model (same checkpoint, same source transforms) on
                       the same inputs, when it runs
  result.json          status, reference ("executorch" or "eager"), errors, greedy ids, ...

OUT/index.json lists every configuration, OUT/STATUS.md is rewritten after each one.
The weights are a seeded random checkpoint (OUT/checkpoint.pth, passed as base.checkpoint) of
the architecture in OUT/params.json (dim 64, 2 layers, vocab 256; --full: dim 128, vocab 512), so
eager and exported programs share weights. The default size's weights lie on a coarse grid (33
levels per tensor) so that xz packs the fixtures small.

Each configuration's ExecuTorch run happens in its own process (the runtime can abort).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent

PARAMS_FULL = {
    "dim": 128, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 512,
    "multiple_of": 32, "hidden_dim": 384, "norm_eps": 1e-5,
    "rope_theta": 500000.0, "use_scaled_rope": True,
}
# The fixture size: every quantizer group (32) still divides every linear's input.
PARAMS_SMALL = {
    "dim": 64, "n_layers": 2, "n_heads": 4, "n_kv_heads": 2, "vocab_size": 256,
    "multiple_of": 32, "hidden_dim": 128, "norm_eps": 1e-5,
    "rope_theta": 500000.0, "use_scaled_rope": True,
}
MAX_SEQ = 64
BOS, EOS = 1, [2]
PROMPT = [1, 17, 42, 200, 7, 99, 150, 5]
NEW_TOKENS = 8
SEED = 20261126

XNN = ["backend.xnnpack.enabled=True", "backend.xnnpack.extended_ops=True"]
KV = ["model.use_kv_cache=True"]
SDPA = ["model.use_sdpa_with_kv_cache=True"]
STATIC = ["model.enable_dynamic_shape=False"]
Q8DA4W = ["quantization.qmode=8da4w", "quantization.group_size=32"]
EMB4 = ["quantization.embedding_quantize=4,32"]


def bundled_yaml(name: str) -> str:
    import executorch
    return str(Path(list(executorch.__path__)[0]) / "examples/models/llama/config" / name)


# name -> (bundled yaml or None, overrides, what it is)
CONFIGS: list[tuple[str, str | None, list[str], str]] = [
    ("xnn_8da4w_emb4", "llama_xnnpack.yaml", ["quantization.group_size=32"],
     "llama_xnnpack.yaml: KV cache, sdpa_with_kv_cache, 8da4w linears (group 32), 4-bit embeddings (group 32), XNNPACK"),
    ("xnn_fp32_sdpa", None, KV + SDPA + XNN, "XNNPACK fp32, KV cache, sdpa_with_kv_cache"),
    ("portable_fp32_sdpa", None, KV + SDPA, "portable fp32, KV cache, sdpa_with_kv_cache"),
    ("portable_kv_nosdpa", None, KV, "portable fp32, KV cache, no sdpa custom op"),
    ("xnn_kv_nosdpa", None, KV + XNN, "XNNPACK fp32, KV cache, no sdpa custom op"),
    ("xnn_8da4w_emb4_static", "llama_xnnpack.yaml", ["quantization.group_size=32"] + STATIC,
     "llama_xnnpack.yaml with static shapes (one token per call)"),
    ("portable_fp32_sdpa_static", None, KV + SDPA + STATIC, "portable fp32, KV cache, sdpa, static shapes"),
    ("portable_nokv", None, [], "portable fp32, no KV cache (whole sequence per call), dynamic"),
    ("xnn_nokv", None, XNN, "XNNPACK fp32, no KV cache, dynamic"),
    ("xnn_8da8w", None, KV + SDPA + XNN + ["quantization.qmode=8da8w"], "XNNPACK 8da8w linears"),
    ("xnn_8da4w_g64", None, KV + SDPA + XNN + ["quantization.qmode=8da4w", "quantization.group_size=64"],
     "XNNPACK 8da4w linears, group 64"),
    ("portable_int8", None, KV + SDPA + ["quantization.qmode=int8"], "portable, int8 weight-only linears"),
    ("portable_4w", None, KV + SDPA + ["quantization.qmode=4w", "quantization.group_size=32"],
     "portable, 4-bit weight-only linears (group 32)"),
    ("portable_8da4w", None, KV + SDPA + Q8DA4W, "8da4w linears without XNNPACK"),
    ("portable_emb8", None, KV + SDPA + ["quantization.embedding_quantize=8,0"],
     "portable, 8-bit per-row embeddings"),
    ("portable_emb4_g32", None, KV + SDPA + EMB4, "portable, 4-bit embeddings group 32"),
    ("portable_emb8_g64", None, KV + SDPA + ["quantization.embedding_quantize=8,64"],
     "portable, 8-bit embeddings group 64"),
    ("xnn_quant_kv", None, KV + SDPA + XNN + ["model.quantize_kv_cache=True"],
     "XNNPACK fp32, int8 quantized KV cache (custom_quantized_sdpa)"),
    ("portable_quant_kv", None, KV + SDPA + ["model.quantize_kv_cache=True"],
     "portable fp32, int8 quantized KV cache"),
    ("portable_static_quant_kv", None, KV + STATIC + ["model.static_quantize_kv_cache=True"],
     "portable fp32, statically quantized KV cache"),
    ("xnn_attention_sink", "llama_attention_sink.yaml",
     ["quantization.group_size=32", "model.use_attention_sink=4,28"],
     "llama_attention_sink.yaml: attention sink 4 + window 28, 8da4w, emb4, XNNPACK"),
    ("portable_attention_sink", None, KV + SDPA + ["model.use_attention_sink=4,28"],
     "portable fp32, attention sink 4 + window 28"),
    ("portable_local_global", None, KV + SDPA + ["model.local_global_attention=[16,0]"],
     "portable fp32, layer 0 sliding window 16, layer 1 global (ring KV cache)"),
    ("xnn_local_global", None, KV + SDPA + XNN + ["model.local_global_attention=[16,0]"],
     "XNNPACK fp32, layer 0 sliding window 16 (ring KV cache)"),
    ("portable_bf16_sdpa", "llama_bf16.yaml", [], "llama_bf16.yaml: bf16, KV cache, sdpa (portable)"),
    ("xnn_bf16_sdpa", None, KV + SDPA + XNN + ["model.dtype_override=bf16", "backend.xnnpack.enable_bf16=True"],
     "XNNPACK bf16, KV cache, sdpa"),
    ("q8da4w_yaml", "llama_q8da4w.yaml", ["quantization.group_size=32"],
     "llama_q8da4w.yaml as shipped: 8da4w + emb4, no KV cache, no backend (portable path)"),
    ("xnn_torchao_8da8w", None, KV + SDPA + XNN + ["quantization.qmode=torchao:8da8w", "quantization.group_size=32"],
     "XNNPACK, qmode torchao:8da8w (the accepted spelling of 8-bit-activation 8-bit-weight)"),
    ("portable_torchao_8da4w", None, KV + SDPA + ["quantization.qmode=torchao:8da4w", "quantization.group_size=32"],
     "no XNNPACK, qmode torchao:8da4w (torchao's own low-bit kernels)"),
    ("portable_emb2_g32", None, KV + SDPA + ["quantization.embedding_quantize=2,32"],
     "portable, 2-bit embeddings group 32"),
    ("portable_fp16_sdpa", None, KV + SDPA + ["model.dtype_override=fp16"], "portable fp16, KV cache, sdpa"),
    ("portable_attention_sink_w32", None, KV + SDPA + ["model.use_attention_sink=4,32"],
     "portable fp32, attention sink 4 + window 32 (ring covers max_seq_length)"),
    ("xnn_attention_sink_w32", "llama_attention_sink.yaml",
     ["quantization.group_size=32", "model.use_attention_sink=4,32"],
     "llama_attention_sink.yaml with window 32: 8da4w, emb4, XNNPACK"),
    ("portable_attention_sink_static", None, KV + SDPA + STATIC + ["model.use_attention_sink=4,4"],
     "portable fp32, attention sink 4 + window 4, static shapes: the 16-token generation evicts"),
    ("portable_local_global_w32", None, KV + SDPA + ["model.local_global_attention=[32,0]"],
     "portable fp32, layer 0 sliding window 32, layer 1 global"),
    ("xnn_local_global_w32", None, KV + SDPA + XNN + ["model.local_global_attention=[32,0]"],
     "XNNPACK fp32, layer 0 sliding window 32, layer 1 global"),
    ("portable_local_global_static", None, KV + SDPA + STATIC + ["model.local_global_attention=[4,0]"],
     "portable fp32, layer 0 sliding window 4 (ring 8), static shapes: the 16-token generation wraps"),
    ("xnn_quant_kv_static", None, KV + SDPA + XNN + STATIC + ["model.quantize_kv_cache=True"],
     "XNNPACK fp32, int8 quantized KV cache, static shapes"),
]


def write_status(out: Path, index: list[dict]) -> None:
    lines = ["# ExecuTorch LLM exporter programs", "",
             f"Written by samples/export/export_llm.py, {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC. "
             "One directory per configuration; see each result.json.", "",
             "| configuration | status | reference | path | operators / delegates |",
             "|---|---|---|---|---|"]
    for e in index:
        ops = ", ".join(e.get("operators", [])) or "-"
        dels = ", ".join(e.get("delegates", []))
        if dels:
            ops += "; delegates: " + dels
        if e.get("xnnpack_nodes"):
            ops += " (" + ", ".join(e["xnnpack_nodes"]) + ")"
        lines.append(f"| {e['name']} | {e['status']} | {e.get('reference', '-')} | {e['path']} | {ops} |")
    failed = [e for e in index if e["status"] != "ok"]
    if failed:
        lines += ["", "## Problems", ""]
        for e in failed:
            lines.append(f"- {e['name']}: {e['status']}: {e.get('error', '')[:600]}")
    (out / "STATUS.md").write_text("\n".join(lines) + "\n")


def make_checkpoint(out: Path, small: bool) -> tuple[Path, Path]:
    import torch
    params = PARAMS_SMALL if small else PARAMS_FULL
    ppath = out / "params.json"
    ppath.write_text(json.dumps(params, indent=1) + "\n")
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs
    torch.manual_seed(SEED)
    args = ModelArgs(max_seq_len=MAX_SEQ, max_context_len=MAX_SEQ, **params)
    model = construct_transformer(args)
    sd = {}
    g = torch.Generator().manual_seed(SEED)
    for name, p in model.named_parameters():
        if name.endswith("norm.weight") or ".norm" in name or "_norm" in name:
            # RMSNorm gains around 1, not all ones (so the norm weights matter)
            w = 1.0 + 0.25 * (torch.rand(p.shape, generator=g) - 0.5)
        elif name == "output.weight":
            # logits of a few units, so greedy choices are not near-ties
            w = (torch.rand(p.shape, generator=g) * 2 - 1) * 4 * (3.0 / p.shape[-1]) ** 0.5
        elif name == "tok_embeddings.weight":
            w = torch.randn(p.shape, generator=g)
        else:
            fan_in = p.shape[-1]
            w = (torch.rand(p.shape, generator=g) * 2 - 1) * (3.0 / fan_in) ** 0.5
        if small:
            # coarse grid: 33 levels per tensor, so the fixture compresses
            m = float(w.abs().max())
            w = torch.round(w / m * 16) * (m / 16)
        sd[name] = w.to(torch.float32).contiguous()
    cpath = out / "checkpoint.pth"
    torch.save(sd, cpath)
    return ppath, cpath


def config_dict(name: str, yaml: str | None, overrides: list[str], ppath: Path, cpath: Path,
                d: Path) -> str:
    """The whole exporter configuration as one yaml: the bundled yaml (if any), our model and
    output settings, then the configuration's overrides (dotted keys)."""
    from omegaconf import OmegaConf
    conf = OmegaConf.load(bundled_yaml(yaml)) if yaml else OmegaConf.create({})
    meta = json.dumps({"get_bos_id": BOS, "get_eos_ids": EOS}, separators=(",", ":"))
    conf = OmegaConf.merge(conf, OmegaConf.create({
        "base": {"model_class": "llama3", "params": str(ppath), "checkpoint": str(cpath),
                 "metadata": meta},
        "export": {"max_seq_length": MAX_SEQ, "max_context_length": MAX_SEQ,
                   "output_dir": str(d), "output_name": str(d / "model.pte")}}))
    conf = OmegaConf.merge(conf, OmegaConf.from_dotlist(overrides))
    head = f"# {name}: " + (f"ExecuTorch's {yaml}" if yaml else "defaults") + (
        " + " + " ".join(overrides) if overrides else "") + "\n"
    return head + OmegaConf.to_yaml(conf)


def export_one(out: Path, name: str, yaml: str | None, overrides: list[str], ppath: Path,
               cpath: Path) -> tuple[bool, str]:
    d = out / name
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        if f.is_file():
            f.unlink()
    cfg = config_dict(name, yaml, overrides, ppath, cpath, d)
    (d / "config.yaml").write_text(cfg)
    argv = [sys.executable, "-m", "executorch.extension.llm.export.export_llm",
            "--config", str(d / "config.yaml"), "hydra.run.dir=.", "hydra.output_subdir=null"]
    work = d / "hydra"
    work.mkdir(exist_ok=True)
    (d / "command.txt").write_text(f"cd {work}\n" + " ".join(_shq(a) for a in argv) + "\n")
    env = dict(os.environ, PYTHONHASHSEED="0")
    t0 = time.time()
    with open(d / "export.log", "w") as log:
        rc = subprocess.run(["nice"] + argv, cwd=work, stdout=log, stderr=subprocess.STDOUT, env=env).returncode
    (d / "export.log").open("a").write(f"\n[export_llm.py] rc={rc} seconds={time.time() - t0:.1f}\n")
    if rc != 0 or not (d / "model.pte").exists():
        return False, export_error(d / "export.log")
    return True, ""


def export_error(log: Path) -> str:
    """The exporter's exception line (the last 'SomethingError: ...'), else its last lines."""
    import re
    tail = log.read_text().strip().splitlines()
    exc = [l for l in tail if re.match(r"^[\w.]*(Error|Exception)\b.*: ", l)]
    if exc:
        i = tail.index(exc[-1])
        return " ".join(x.strip() for x in tail[i:i + 3] if x.strip())[:600]
    return " | ".join(tail[-3:])


def _shq(a: str) -> str:
    import shlex
    return shlex.quote(a)


def program_ops(pte: Path) -> dict:
    """Per execution plan: its operators (with how many kernel calls name each), its delegate ids
    (with how many delegate calls), and, when etscope is at hand ($ETSCOPE, else
    build/bin/etscope of this checkout or of /work/main), the XNNPACK node kinds of its
    delegates with their value types."""
    import collections
    from executorch.exir._serialize._program import deserialize_pte_binary
    prog = deserialize_pte_binary(pte.read_bytes()).program
    plans = {}
    for plan in prog.execution_plan:
        names = [o.name + ("." + o.overload if o.overload else "") for o in plan.operators]
        calls, dcalls = collections.Counter(), collections.Counter()
        for chain in plan.chains:
            for ins in chain.instructions:
                a = ins.instr_args
                if hasattr(a, "op_index"):
                    calls[names[a.op_index]] += 1
                elif hasattr(a, "delegate_index"):
                    dcalls[plan.delegates[a.delegate_index].id] += 1
        odd_bools = _odd_bool_constants(prog, plan)
        plans[plan.name] = {"operators": sorted(set(names)), "delegates": sorted({d.id for d in plan.delegates}),
                            "kernel_calls": dict(sorted(calls.items())), "delegate_calls": dict(sorted(dcalls.items()))}
        if odd_bools:
            plans[plan.name]["bool_constants"] = odd_bools
    kinds = xnnpack_node_kinds(pte)
    if kinds is not None:
        for name, k in kinds.items():
            plans.setdefault(name, {})["xnnpack_nodes"] = k
    return plans


def _odd_bool_constants(prog, plan) -> list:
    """Constant bool tensors of the plan: value index, shape, buffer, how many bytes are 1, 0
    and neither (with the distinct other values)."""
    out = []
    try:
        for i, v in enumerate(plan.values):
            t = v.val
            if type(t).__name__ != "Tensor" or int(t.scalar_type) != 11 or t.data_buffer_idx <= 0:
                continue
            if t.allocation_info is not None or not prog.constant_buffer:
                continue
            data = bytes(prog.constant_buffer[t.data_buffer_idx].storage)
            n = 1
            for s_ in t.sizes:
                n *= s_
            odd = [b for b in data[:n] if b not in (0, 1)]
            out.append({"value": i, "shape": list(t.sizes), "buffer": t.data_buffer_idx,
                        "ones": data[:n].count(1), "zeros": data[:n].count(0),
                        "bytes_not_0_or_1": len(odd), "distinct_other": sorted(set(odd))[:16]})
    except Exception as e:  # noqa: BLE001
        out.append({"error": repr(e)})
    return out


def xnnpack_node_kinds(pte: Path):
    import collections
    cands = [os.environ.get("ETSCOPE", ""), str(HERE.parent.parent / "build/bin/etscope"), "/work/main/build/bin/etscope"]
    exe = next((c for c in cands if c and os.access(c, os.X_OK)), None)
    if exe is None:
        return None
    p = subprocess.run([exe, "pte", "--delegates", "--json", str(pte)], capture_output=True, text=True)
    if p.returncode != 0:
        return None
    out = {}
    for plan in json.loads(p.stdout).get("plans", []):
        c = collections.Counter()
        for dl in plan.get("delegates", []):
            g = dl.get("graph") or {}
            vals = {v["id"]: v for v in g.get("values", [])}
            for n in g.get("nodes", []):
                ts = sorted({vals[i].get("type", "?") for i in n["inputs"] + n["outputs"] if i in vals})
                c[f"{n['kind']} ({'/'.join(ts)})"] += 1
        if c:
            out[plan["method"]] = dict(sorted(c.items()))
    return out


# ---------------------------------------------------------------- the reference run (child)

def _load_custom_ops() -> list[str]:
    notes = []
    try:
        import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401
    except Exception as e:  # noqa: BLE001
        notes.append(f"llama custom ops library not loaded: {e!r}")
    try:
        import executorch.kernels.quantized  # noqa: F401
    except Exception as e:  # noqa: BLE001
        notes.append(f"quantized kernels library not loaded: {e!r}")
    return notes


def plan_calls(meta: dict) -> list[dict]:
    """The prefill calls for PROMPT; decode calls are added as tokens come."""
    if not meta.get("use_kv_cache", False):
        return [{"tokens": list(PROMPT), "input_pos": None}]
    if meta.get("enable_dynamic_shape", False):
        return [{"tokens": list(PROMPT), "input_pos": 0}]
    return [{"tokens": [t], "input_pos": i} for i, t in enumerate(PROMPT)]


def _inputs(call: dict):
    import torch
    tok = torch.tensor([call["tokens"]], dtype=torch.long)
    if call["input_pos"] is None:
        return (tok,), None
    return (tok,), torch.tensor([call["input_pos"]], dtype=torch.long)


def generate(step, meta: dict):
    """Prefill then greedy decode with step(call) -> logits (1-D float tensor). Returns calls,
    logits list, new token ids."""
    calls = plan_calls(meta)
    logits = [step(c) for c in calls]
    seq = list(PROMPT)
    new = []
    while True:
        nxt = int(logits[-1].argmax())
        new.append(nxt)
        seq.append(nxt)
        if len(new) == NEW_TOKENS:
            break
        if not meta.get("use_kv_cache", False):
            c = {"tokens": list(seq), "input_pos": None}
        else:
            c = {"tokens": [nxt], "input_pos": len(seq) - 1}
        calls.append(c)
        logits.append(step(c))
    return calls, logits, new


def _last_logits(t):
    import torch
    t = t.detach()
    dtype = str(t.dtype).replace("torch.", "")
    t = t.to(torch.float32)
    if t.dim() == 3:
        t = t[:, -1, :]
    return t.reshape(-1), dtype


def reference_child(d: Path, cfg_json: str) -> None:
    """Runs in its own process: ExecuTorch's runtime on d/model.pte, then the eager model."""
    import numpy as np
    import torch
    res = json.loads((d / "result.json").read_text()) if (d / "result.json").exists() else {}
    res["notes"] = _load_custom_ops()
    from executorch.runtime import Runtime
    rt = Runtime.get()
    ptd = sorted(d.glob("*.ptd"))
    prog = rt.load_program(str(d / "model.pte"), data_path=str(ptd[0]) if ptd else None)
    meta = {}
    for m in sorted(prog.method_names):
        if m == "forward":
            continue
        try:
            out = prog.load_method(m).execute([])
            v = out[0] if len(out) == 1 and m != "get_eos_ids" else list(out)
            if isinstance(v, torch.Tensor):
                v = v.tolist()
            elif isinstance(v, list):
                v = [x.item() if isinstance(x, torch.Tensor) else x for x in v]
            meta[m] = v
        except Exception as e:  # noqa: BLE001
            meta[m] = f"error: {e!r}"
    (d / "metadata.json").write_text(json.dumps(meta, indent=1) + "\n")
    res["metadata"] = meta
    (d / "result.json").write_text(json.dumps(res, indent=1) + "\n")
    fwd = prog.load_method("forward")
    dtypes = set()
    ncalls = [0]

    def et_step(call):
        args, pos = _inputs(call)
        ins = list(args) + ([pos] if pos is not None else [])
        out = fwd.execute(ins)
        lg, dt = _last_logits(out[0])
        dtypes.add(dt)
        k = ncalls[0]
        np.save(d / f"tokens_{k}.npy", args[0].numpy())
        if pos is not None:
            np.save(d / f"input_pos_{k}.npy", pos.numpy())
        np.save(d / f"ref_call_{k}.npy", lg.numpy())
        ncalls[0] += 1
        # progress on disk: if the runtime aborts, the parent knows how far it got
        (d / "progress.json").write_text(json.dumps({"calls_done": ncalls[0]}))
        return lg

    calls, logits, new = generate(et_step, meta)
    res.update({
        "status": "ok", "reference": "executorch", "logits_dtype": sorted(dtypes),
        "prompt": PROMPT, "calls": calls, "greedy_new_tokens": new, "n_calls": len(calls),
        "prefill_calls": len(plan_calls(meta)),
        "top2_margin": [float(l.topk(2).values[0] - l.topk(2).values[1]) for l in logits],
    })
    (d / "result.json").write_text(json.dumps(res, indent=1) + "\n")


def eager_child(d: Path, cfg_json: str) -> None:
    """The exporter's eager model (same config, checkpoint, source transforms) on the same calls."""
    import numpy as np
    import torch
    _load_custom_ops()
    from omegaconf import OmegaConf
    from executorch.extension.llm.export.config.llm_config import LlmConfig
    from executorch.examples.models.llama.export_llama_lib import _prepare_for_llama_export
    base = OmegaConf.merge(OmegaConf.structured(LlmConfig), OmegaConf.load(d / "config.yaml"))
    llm_config = OmegaConf.to_object(base)
    torch.manual_seed(0)
    mgr = _prepare_for_llama_export(llm_config)
    model = mgr.model.eval()
    meta = {"use_kv_cache": llm_config.model.use_kv_cache,
            "enable_dynamic_shape": llm_config.model.enable_dynamic_shape}
    k = [0]

    def step(call):
        args, pos = _inputs(call)
        with torch.no_grad():
            out = model(args[0], {"input_pos": pos}) if pos is not None else model(args[0])
        if isinstance(out, tuple):
            out = out[0]
        lg, dt = _last_logits(out)
        np.save(d / f"eager_call_{k[0]}.npy", lg.numpy())
        if not (d / f"tokens_{k[0]}.npy").exists():
            np.save(d / f"tokens_{k[0]}.npy", args[0].numpy())
            if pos is not None:
                np.save(d / f"input_pos_{k[0]}.npy", pos.numpy())
        k[0] += 1
        return lg

    calls, logits, new = generate(step, meta)
    (d / "eager.json").write_text(json.dumps({
        "calls": calls, "greedy_new_tokens": new, "logits_dtype": str(llm_config.model.dtype_override.value),
        "top2_margin": [float(l.topk(2).values[0] - l.topk(2).values[1]) for l in logits]}, indent=1) + "\n")


def run_child(mode: str, d: Path, cfg: dict) -> tuple[int, str]:
    argv = [sys.executable, __file__, "--child", mode, str(d), json.dumps(cfg)]
    p = subprocess.run(["nice"] + argv, capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"))
    (d / f"{mode}.log").write_text(p.stdout + p.stderr)
    err = ""
    if p.returncode != 0:
        lines = (p.stdout + p.stderr).strip().splitlines()
        interesting = [l for l in lines if any(s in l for s in ("Error", "assert", "failed", "Failed", "abort", "Abort"))]
        err = " | ".join((interesting or lines)[-4:])
    return p.returncode, err


def do_config(out: Path, name: str, yaml, overrides, what, ppath, cpath) -> dict:
    import numpy as np
    d = out / name
    entry = {"name": name, "path": str(d), "what": what, "yaml": yaml, "overrides": overrides}
    print(f"=== {name}: export", flush=True)
    ok, err = export_one(out, name, yaml, overrides, ppath, cpath)
    if not ok:
        entry.update(status="export_failed", error=err)
        (d / "result.json").write_text(json.dumps(entry, indent=1) + "\n")
        return entry
    plans = program_ops(d / "model.pte")
    (d / "ops.json").write_text(json.dumps(plans, indent=1) + "\n")
    fwd = plans.get("forward", {"operators": [], "delegates": []})
    entry.update(operators=fwd["operators"], delegates=fwd["delegates"],
                 xnnpack_nodes=sorted(fwd.get("xnnpack_nodes", {})),
                 files=sorted(p.name for p in d.glob("*.pt[ed]")),
                 pte_bytes=(d / "model.pte").stat().st_size)
    (d / "result.json").write_text(json.dumps(entry, indent=1) + "\n")
    cfg = {}
    print(f"=== {name}: executorch run", flush=True)
    rc, err = run_child("executorch", d, cfg)
    print(f"=== {name}: eager run", flush=True)
    erc, eerr = run_child("eager", d, cfg)
    res = json.loads((d / "result.json").read_text())
    if rc != 0:
        done = 0
        if (d / "progress.json").exists():
            done = json.loads((d / "progress.json").read_text())["calls_done"]
        res.update(status="executorch_failed", executorch_error=err or f"exit code {rc}",
                   executorch_calls_done=done, error=f"ExecuTorch runtime failed after {done} calls: {err or rc}")
        # the ExecuTorch logits of the calls that did run stay as et_call_<k>.npy
        for k in range(done):
            (d / f"ref_call_{k}.npy").rename(d / f"et_call_{k}.npy")
        if erc == 0:
            e = json.loads((d / "eager.json").read_text())
            for k in range(len(e["calls"])):
                np.save(d / f"ref_call_{k}.npy", np.load(d / f"eager_call_{k}.npy"))
            res.update(reference="eager", calls=e["calls"], greedy_new_tokens=e["greedy_new_tokens"],
                       n_calls=len(e["calls"]), prompt=PROMPT, top2_margin=e["top2_margin"])
        else:
            res.update(reference="none")
    if erc != 0:
        res["eager_error"] = eerr or f"exit code {erc}"
    else:
        e = json.loads((d / "eager.json").read_text())
        res["eager_greedy_new_tokens"] = e["greedy_new_tokens"]
        if res.get("reference") == "executorch":
            diffs = []
            for k in range(res["n_calls"]):
                a = np.load(d / f"ref_call_{k}.npy")
                if (d / f"eager_call_{k}.npy").exists() and k < len(e["calls"]) and e["calls"][k] == res["calls"][k]:
                    b = np.load(d / f"eager_call_{k}.npy")
                    diffs.append(float(np.abs(a - b).max()))
            res["max_abs_diff_executorch_vs_eager"] = diffs
    (d / "progress.json").unlink(missing_ok=True)
    res["status"] = res.get("status", "ok")
    (d / "result.json").write_text(json.dumps(res, indent=1) + "\n")
    entry.update({k: res[k] for k in ("status", "reference", "error", "greedy_new_tokens",
                                      "eager_greedy_new_tokens", "eager_error", "metadata")
                  if k in res})
    return entry


# --------------------------------------------------------------------------- bundle

# The configurations whose bundled program is committed: ExecuTorch's own reference, and a
# model.pte small enough (< 300 KB) that a second copy inside the .bpte keeps the fixtures small.
BUNDLED = ("xnn_8da4w_emb4", "xnn_8da4w_emb4_static", "portable_bf16_sdpa", "portable_fp16_sdpa",
           "xnn_bf16_sdpa")
BUNDLE_MAX_PTE = 300_000
# The tolerances the committed cases are checked with (tests/runtime/llm_bundled_test.cpp): the
# logits' own precision, as tests/llm/llm_test.cpp. Here ExecuTorch's bundled checker proves that
# ExecuTorch passes its own cases with them.
BUNDLE_ATOL = {"float32": 1e-4, "float16": 2e-2, "bfloat16": 1.3e-1}


def bundle(work: Path, names: list[str]) -> None:
    """Wraps work/<name>/model.pte into work/<name>/model.bpte with ExecuTorch's bundled-program
    API: one suite for "forward" whose cases are the recorded calls in order (tokens_<k>.npy and,
    when recorded, input_pos_<k>.npy; expected output ref_call_<k>.npy in the program's output
    dtype and shape). The cases are one generation (prefill, then decode steps): they pass only
    when run in order on one loaded method, as ExecuTorch's BundledModule runs them (the KV
    cache carries over), which this checks with ExecuTorch's runtime before keeping the file."""
    import numpy as np
    import torch
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    for name in names:
        d = work / name
        res = json.loads((d / "result.json").read_text())
        pte = d / "model.pte"
        if res.get("reference") != "executorch":
            sys.exit(f"{name}: not bundled, the reference is not ExecuTorch's ({res.get('reference')})")
        if pte.stat().st_size >= BUNDLE_MAX_PTE:
            sys.exit(f"{name}: not bundled, model.pte is {pte.stat().st_size} bytes (limit {BUNDLE_MAX_PTE})")
        (dtype,) = res["logits_dtype"]
        shape = _forward_output_shape(pte)
        cases = []
        for k in range(res["n_calls"]):
            ins = [torch.from_numpy(np.load(d / f"tokens_{k}.npy"))]
            if (d / f"input_pos_{k}.npy").exists():
                ins.append(torch.from_numpy(np.load(d / f"input_pos_{k}.npy")))
            ref = torch.from_numpy(np.load(d / f"ref_call_{k}.npy"))
            # ref_call is float32 widened from the program's own dtype: the cast back is exact.
            exp = ref.reshape(shape).to(getattr(torch, dtype))
            cases.append(MethodTestCase(inputs=ins, expected_outputs=[exp]))
        bp = BundledProgram(None, pte_file_path=str(pte),
                            method_test_suites=[MethodTestSuite(method_name="forward", test_cases=cases)])
        out = d / "model.bpte"
        out.write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))
        # ExecuTorch's bundled checker in its own process (its runtime can abort).
        r = subprocess.run([sys.executable, __file__, "--verify-bundle", str(out), str(len(cases)),
                            str(BUNDLE_ATOL[dtype])], capture_output=True, text=True)
        if r.returncode != 0:
            out.unlink()
            sys.exit(f"{name}: ExecuTorch's bundled checker refuses model.bpte:\n{r.stdout}{r.stderr}")
        print(f"{out}: {out.stat().st_size} bytes, {len(cases)} cases of forward "
              f"(output {dtype} {list(shape)}), {r.stdout.strip()}")


def _forward_output_shape(pte: Path) -> tuple:
    """The forward method's output 0 shape, as the program declares it."""
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    _load_custom_ops()
    meta = _load_for_executorch(str(pte)).method_meta("forward")
    return tuple(meta.output_tensor_meta(0).sizes())


def verify_bundle_child(bpte: Path, n: int, atol: float) -> None:
    """Every case of forward, in order on one loaded method, through ExecuTorch's BundledModule
    (rtol 0, atol the logits' precision)."""
    _load_custom_ops()
    from executorch.extension.pybindings.portable_lib import _load_bundled_program_from_buffer
    bmod = _load_bundled_program_from_buffer(bpte.read_bytes())
    for i in range(n):
        bmod.verify_result_with_bundled_expected_output("forward", i, 0.0, atol)
    print(f"ExecuTorch's BundledModule passes all {n} in order (rtol 0, atol {atol:g})")


# --------------------------------------------------------------------------- ETRecord fixtures

# Numeric gaps (AOT vs runtime) on programs of ExecuTorch's LLM exporter with the ETRecord as the
# exporter writes it (`debug.generate_etrecord: true`): no representative inputs, example inputs
# of the edge program only.
ETRECORD_FIXTURES = ("xnn_8da4w_emb4", "portable_fp32_sdpa")
ETRECORD_ARCHIVE = "llm_etrecord.tar.xz"
# In the archive (big: the ETRecords are 2.6-2.9 MB and compress 25x, weights on a 33-level
# grid; the Inspector answers are 4-4.5 MB of JSON, mostly tensor values and stack traces, and
# compress 30x); the rest is raw.
ETRECORD_ARCHIVED = (".pte", ".etrecord", ".inspector.json")
ETRECORD_PROBE_BUFFER = 64 << 20
# Top-level children of the Llama transformer (find_total_for_module).
LLAMA_TOP_MODULES = ("tok_embeddings", "layers.0", "layers.1", "norm", "output")


def etrecord_example_inputs(rec) -> list:
    """The tensors of the example inputs the ETRecord's edge program (else its exported program)
    was exported with, in flattening order ((tokens, {"input_pos": ...}) -> [tokens, input_pos]),
    as write_aot_intermediates.py and etscope take them."""
    import torch
    import torch.utils._pytree as pytree
    programs = rec.edge_dialect_program
    program = programs.get("forward") if isinstance(programs, dict) else programs
    if program is None:
        program = rec.exported_program
    example = getattr(program, "example_inputs", None)
    if not example:
        raise SystemExit("the ETRecord's programs have no example inputs")
    return [t for t in pytree.tree_leaves(example) if isinstance(t, torch.Tensor)]


def etrecord_child(d: Path, name: str) -> None:
    """Runs in its own process on d/<name>.pte + d/<name>.etrecord: the ETRecord's example
    inputs -> <name>.input<i>.npy; ExecuTorch's runtime runs forward once with ETDump and an
    intermediate-output debug buffer -> <name>.etdp/.debug.bin; write_aot_intermediates.py ->
    <name>.aot_intermediates.ptd/.json; ExecuTorch's Inspector with the example inputs as
    representative inputs -> <name>.inspector.json."""
    import functools
    import numpy as np
    notes = _load_custom_ops()
    if notes:
        raise SystemExit("; ".join(notes))
    sys.path.insert(0, str(HERE))
    from common import to_jsonable
    from executorch.devtools.etrecord import parse_etrecord
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    from inspect_tools import _run, debug_buffer_end, etdump_to_dict, run_inspector
    import write_aot_intermediates as wai

    etrecord = d / f"{name}.etrecord"
    rec = parse_etrecord(str(etrecord))
    if getattr(rec, "_representative_inputs", None):
        print(f"{etrecord}: has representative inputs (not as ExecuTorch's LLM exporter writes it)")
    inputs = [t.detach().clone().contiguous() for t in etrecord_example_inputs(rec)]
    for i, t in enumerate(inputs):
        np.save(d / f"{name}.input{i}.npy", t.numpy())
    # One forward, as inspect_tools.run_with_etdump does it (ExecuTorch writes the whole debug
    # buffer to the file): a probe run with a big buffer measures the bytes the debug events
    # use, the kept run has a buffer of that size + 64 (the sink aligns each tensor's absolute
    # address to 64), and its file is cut to the end of its last tensor. Each run loads the
    # program afresh (the KV caches start at zero).
    load = functools.partial(_load_for_executorch, str(d / f"{name}.pte"))
    probe_e, probe_b = d / f".{name}.probe.etdp", d / f".{name}.probe.bin"
    _run(load, inputs, 1, probe_e, probe_b, ETRECORD_PROBE_BUFFER)
    used = debug_buffer_end(etdump_to_dict(probe_e))
    probe_e.unlink()
    probe_b.unlink()
    etdp, dbg = d / f"{name}.etdp", d / f"{name}.debug.bin"
    outs = _run(load, inputs, 1, etdp, dbg, used + 64)
    end = debug_buffer_end(etdump_to_dict(etdp))
    written = dbg.stat().st_size
    with open(dbg, "r+b") as f:
        f.truncate(end)
    print(f"{dbg}: {end} bytes used (buffer {used + 64}, file was {written})")
    wai.write_aot_intermediates(str(etrecord), str(etdp), str(dbg), d / name)
    meta = {
        "versions": versions(),
        "runtime": "executorch.extension.pybindings.portable_lib._load_for_executorch(pte, "
                   "enable_etdump=True, debug_buffer_size=N), run_method('forward') once, "
                   "with executorch.extension.llm.custom_ops.custom_ops and "
                   "executorch.kernels.quantized imported",
        "inputs": [f"{name}.input{i}.npy" for i in range(len(inputs))],
        "inputs_source": "the ETRecord's edge program example_inputs, flattened "
                         "(tokens, {'input_pos': ...}) -> [tokens, input_pos]",
        "debug_buffer_bytes": end, "debug_buffer_size": used + 64,
        "runtime_outputs": [to_jsonable(o) for o in outs],
        "aot_intermediates": "written by samples/export/write_aot_intermediates.py "
                             "(write_aot_intermediates) from the same .etrecord/.etdp/.debug.bin",
    }
    res = run_inspector(d, name, etrecord, LLAMA_TOP_MODULES, representative_inputs=inputs,
                        aot_intermediates=False, extra_meta=meta)
    summary = {}
    for metric, g in res["calculate_numeric_gap"].items():
        summary[metric] = {"error": g["error"]} if "error" in g else {"rows": g["num_rows"]}
    (d / "etrecord_child.json").write_text(json.dumps({
        "inputs": [{"dtype": str(t.dtype), "shape": list(t.shape), "values": t.tolist()} for t in inputs],
        "debug_buffer_bytes": end, "calculate_numeric_gap": summary}, indent=1) + "\n")


def etrecord_fixtures(dest: Path, work: Path, names: list[str]) -> None:
    """Export every configuration of `names` with debug.generate_etrecord into work/<name>/ (same
    seeded checkpoint as the llm fixtures), make its fixture files there (etrecord_child, in its
    own process: the runtime can abort), then pack them into dest/."""
    import shutil
    work, dest = work.resolve(), dest.resolve()
    work.mkdir(parents=True, exist_ok=True)
    ppath, cpath = make_checkpoint(work, small=True)
    conf = {c[0]: c for c in CONFIGS}
    entries = []
    for name in names:
        _, yaml, overrides, what = conf[name]
        overrides = overrides + ["debug.generate_etrecord=True"]
        print(f"=== {name}: export", flush=True)
        ok, err = export_one(work, name, yaml, overrides, ppath, cpath)
        d = work / name
        if not ok or not (d / "etrecord.bin").exists():
            sys.exit(f"{name}: export failed or wrote no etrecord.bin: {err}")
        shutil.copyfile(d / "model.pte", d / f"{name}.pte")
        shutil.copyfile(d / "etrecord.bin", d / f"{name}.etrecord")
        print(f"=== {name}: ExecuTorch runtime, write_aot_intermediates, Inspector", flush=True)
        p = subprocess.run(["nice", sys.executable, __file__, "--etrecord-child", str(d), name],
                           capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"))
        (d / "etrecord_child.log").write_text(p.stdout + p.stderr)
        if p.returncode != 0:
            sys.exit(f"{name}: failed (rc {p.returncode}), see {d / 'etrecord_child.log'}:\n"
                     + "\n".join((p.stdout + p.stderr).strip().splitlines()[-6:]))
        child = json.loads((d / "etrecord_child.json").read_text())
        for metric, g in child["calculate_numeric_gap"].items():
            if "error" in g:
                print(f"!!! {name}: calculate_numeric_gap({metric}) failed: {g['error'][:300]}", flush=True)
        import hashlib
        pte_sha = hashlib.sha256((d / f"{name}.pte").read_bytes()).hexdigest()
        llm_index = HERE.parent.parent / "tests/fixtures/executorch/llm/index.json"
        llm_sha = (json.loads(llm_index.read_text())["files"].get(f"{name}/model.pte", {}).get("sha256")
                   if llm_index.exists() else None)
        entries.append({"name": name, "what": what, "yaml": yaml, "overrides": overrides,
                        "pte_sha256": pte_sha,
                        "same_pte_as_llm_fixture": None if llm_sha is None else llm_sha == pte_sha,
                        "inputs": child["inputs"], "debug_buffer_bytes": child["debug_buffer_bytes"],
                        "calculate_numeric_gap": child["calculate_numeric_gap"]})
    pack_etrecord(work, dest, entries)


def _write_index(dest: Path, top: Dict[str, Any], manifest_text: str, files: int, archived: int, archive: str) -> None:
    (dest / "index.json").write_text(json.dumps(top, indent=1) + "\n")
    (dest / "MANIFEST.md").write_text(manifest_text)
    print(f"{dest}: {files} files, {archived} in {archive} ({(dest / archive).stat().st_size} bytes)")


def _pack_files(work: Path, dest: Path, files: List[str], big: List[str], archive: str) -> Dict[str, Any]:
    """Copies `files` (paths relative to `work`) to `dest`, those in `big` into the xz archive
    `dest/archive` instead (reproducible: fixed mtime and owner); returns their index (size, sha256,
    archive or None)."""
    index = {}
    for rel in files:
        p = work / rel
        index[rel] = {"size": p.stat().st_size, "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
                      "archive": archive if rel in big else None}
        if rel not in big:
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(p, dest / rel)
    env = dict(os.environ, XZ_OPT="-9e")
    subprocess.run(["tar", "--mtime=@0", "--owner=0", "--group=0", "--numeric-owner",
                    "--format=gnu", "-cJf", str(dest / archive), *big], cwd=work, check=True, env=env)
    return index


def pack_etrecord(work: Path, dest: Path, entries: list[dict]) -> None:
    """dest/<name>/: every fixture file of work/<name>/ (<name>.*, config.yaml, command.txt);
    the .pte, .etrecord and .inspector.json files in dest/llm_etrecord.tar.xz (paths
    <name>/<name>.pte, XZ_OPT=-9e), the others raw; dest/index.json (size, sha256, archive of every file), dest/MANIFEST.md."""
    import hashlib
    import shutil
    if dest.exists():
        for old in sorted(dest.rglob("*"), reverse=True):
            if old.is_file():
                old.unlink()
            elif old.is_dir():
                old.rmdir()
    dest.mkdir(parents=True, exist_ok=True)
    files = ["params.json"]
    for e in entries:
        n = e["name"]
        files += [f"{n}/config.yaml", f"{n}/command.txt"]
        files += sorted(f"{n}/{p.name}" for p in (work / n).glob(f"{n}.*") if p.is_file())
    big = [f for f in files if f.endswith(ETRECORD_ARCHIVED)]
    index = _pack_files(work, dest, files, big, ETRECORD_ARCHIVE)
    top = {"generator": "samples/export/export_llm.py --etrecord-fixtures",
           "params": json.loads((work / "params.json").read_text()), "max_seq_length": MAX_SEQ,
           "max_context_length": MAX_SEQ, "bos": BOS, "eos": EOS, "seed": SEED,
           "versions": versions(), "configurations": entries, "files": index}
    _write_index(dest, top, etrecord_manifest(top, dest), len(files), len(big), ETRECORD_ARCHIVE)


def etrecord_manifest(top: dict, dest: Path) -> str:
    v = top["versions"]
    names = [e["name"] for e in top["configurations"]]
    lines = [
        "# Numeric gaps on ExecuTorch LLM exporter programs, ETRecord as the exporter writes it", "",
        "Written by `samples/export/export_llm.py --etrecord-fixtures "
        "tests/fixtures/executorch/llm_etrecord` (step `llm_etrecord` of "
        "`samples/export/make_fixtures.sh`); do not edit. Each directory is one configuration of "
        "`llm/` (same `config.yaml` plus `debug.generate_etrecord: true`, same seeded random-weight "
        "checkpoint of `params.json`, not committed) exported by ExecuTorch's own LLM exporter, "
        "`python -m executorch.extension.llm.export.export_llm --config <dir>/config.yaml` "
        f"(executorch {v['executorch']}, torch {v['torch']}, torchao {v['torchao']}; exact "
        "command in `command.txt`), `PYTHONHASHSEED=0`.", "",
        f"`<name>.pte`, `<name>.etrecord` and `<name>.inspector.json` are in `{ETRECORD_ARCHIVE}` "
        "(paths `<name>/<name>.pte` ...; to be unpacked into "
        "`build/fixtures/executorch/llm_etrecord/`), everything else is raw; `index.json` lists "
        "every file (size, sha256, archive).", "",
        "Per configuration `<name>`:", "",
        "- `<name>.pte`: the exporter's `model.pte`; `<name>.etrecord`: the exporter's "
        "`etrecord.bin`, byte for byte (no representative inputs, no reference outputs; its edge "
        "program's example inputs are `tokens` int64 [1, 3] = [[2, 3, 4]] and `{'input_pos': "
        "int64 [1] = [0]}`). *same .pte as llm/*: whether the `.pte` is byte-identical to the "
        "committed `llm/<name>/model.pte` (sha256 of `llm/index.json`). The `.etrecord` is not "
        "byte-reproducible: its "
        "serialized graphs hold Python object ids (`nn_module_stack` entries like "
        "`Transformer;140012838418320`, `export_graph_id`) and its zip entries the export time; "
        "re-exporting gives a file of the same size with those bytes changed.",
        "- `<name>.input0.npy`, `<name>.input1.npy`: those example inputs, flattened (tokens, "
        "input_pos).",
        "- `<name>.etdp`, `<name>.debug.bin`: ExecuTorch's Python runtime "
        "(`_load_for_executorch(pte, enable_etdump=True, debug_buffer_size=N)`, "
        "`executorch.extension.llm.custom_ops.custom_ops` and `executorch.kernels.quantized` "
        "imported) ran `forward` ONCE on a freshly loaded program with those inputs (KV caches "
        "zero) with an intermediate-output debug buffer; N = the bytes a probe run used + 64, and "
        "the `.debug.bin` is cut to the end of its last debug tensor.",
        "- `<name>.aot_intermediates.ptd/.json`: `samples/export/write_aot_intermediates.py` "
        "(`write_aot_intermediates`) on that `.etrecord`, `.etdp` and `.debug.bin`: it gives the "
        "ETRecord the example inputs as representative inputs and stores the outputs of the "
        "Inspector's default reference graph.",
        "- `<name>.inspector.json`: ExecuTorch's Inspector on the same three files, the ETRecord "
        "given the same inputs with `ETRecord.update_representative_inputs` first (in memory; "
        "without it `calculate_numeric_gap` raises): `to_dataframe`, event blocks, "
        "`find_total_for_module`, `calculate_numeric_gap(\"L1\" | \"MSE\" | \"SNR\")` with default "
        "arguments (an error is kept as `{\"error\": ...}`), `meta` (versions, runtime outputs). "
        "Same layout as the other fixtures' `*.inspector.json` (`samples/export/inspect_tools.py` "
        "`run_inspector`).",
        "- `config.yaml`, `command.txt`: the exporter's exact input (absolute paths of the "
        "machine that made them).", "",
        "| configuration | what | same .pte as llm/ | inputs | debug buffer bytes | calculate_numeric_gap |",
        "|---|---|---|---|---|---|"]
    for e in top["configurations"]:
        ins = ", ".join(f"{i['dtype'].replace('torch.', '')} {i['shape']} = {i['values']}" for i in e["inputs"])
        gaps = "; ".join(f"{m}: " + (f"{g['rows']} rows" if "rows" in g else "error " + g["error"][:200].replace("|", "/"))
                         for m, g in e["calculate_numeric_gap"].items())
        same = {True: "yes", False: "no", None: "-"}[e.get("same_pte_as_llm_fixture")]
        lines.append(f"| `{e['name']}` | {e['what']} + `debug.generate_etrecord` | {same} | {ins} | "
                     f"{e['debug_buffer_bytes']} | {gaps} |")
    total = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    lines += ["", f"Committed bytes in this directory: {total} (+ this file)."]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- pack

FIXTURES = (
    "xnn_8da4w_emb4", "xnn_fp32_sdpa", "portable_fp32_sdpa", "portable_kv_nosdpa",
    "xnn_8da4w_emb4_static", "portable_attention_sink_static", "portable_local_global_static",
    "xnn_nokv", "xnn_bf16_sdpa", "portable_bf16_sdpa", "portable_fp16_sdpa", "portable_quant_kv",
    "xnn_quant_kv_static", "portable_static_quant_kv", "portable_emb8", "portable_emb2_g32",
    "portable_4w",
)
ARCHIVE = "llm.tar.xz"
# Not committed: the exporter's log and hydra work dir, the per-run logs, the checkpoint.
SKIP = ("export.log", "executorch.log", "eager.log", "progress.json")


def pack(work: Path, dest: Path, names: list[str]) -> None:
    """Copy configurations work/<name>/ into dest/<name>/ the way the other fixture folders are
    packed: programs (.pte/.ptd) into dest/llm.tar.xz (paths <name>/model.pte, XZ_OPT=-9e),
    every other file raw; dest/index.json gives size, sha256 and archive of every file."""
    import hashlib
    import shutil
    work, dest = work.resolve(), dest.resolve()
    if dest.exists():
        for old in sorted(dest.rglob("*"), reverse=True):
            if old.is_file() and old.name != "MANIFEST.md":
                old.unlink()
            elif old.is_dir():
                old.rmdir()
    dest.mkdir(parents=True, exist_ok=True)
    top = json.loads((work / "index.json").read_text())
    ref = {e["name"]: e.get("reference") for e in top["configurations"]}
    bad = [n for n in names if ref.get(n) not in ("executorch", "eager") or not (work / n / "model.pte").exists()]
    if bad:
        sys.exit(f"not packed, no ExecuTorch reference: {bad}")
    files = ["params.json"]
    for n in names:
        files += sorted(f"{n}/{p.name}" for p in (work / n).iterdir()
                        if p.is_file() and p.name not in SKIP)
    big = [f for f in files if f.endswith((".pte", ".ptd", ".bpte"))]
    index = _pack_files(work, dest, files, big, ARCHIVE)
    top["configurations"] = [e for e in top["configurations"] if e["name"] in names]
    for e in top["configurations"]:
        e["path"] = e["name"]
    top["files"] = index
    _write_index(dest, top, manifest(top, dest), len(files), len(big), ARCHIVE)


def manifest(top: dict, dest: Path) -> str:
    v = top["versions"]
    lines = [
        "# ExecuTorch LLM exporter programs", "",
        "Written by `samples/export/export_llm.py` (step `llm` of `samples/export/make_fixtures.sh`); "
        "do not edit. Each directory is one configuration of ExecuTorch's own LLM exporter, "
        "`python -m executorch.extension.llm.export.export_llm --config <dir>/config.yaml` "
        f"(executorch {v['executorch']}, torch {v['torch']}, torchao {v['torchao']}), for a "
        "random-weight Llama 3 architecture (`params.json`; seeded checkpoint, weights on a "
        "33-level grid per tensor so the programs compress; not committed), "
        f"max_seq_length = max_context_length = {top['max_seq_length']}, metadata bos "
        f"{top['bos']}, eos {top['eos']}.", "",
        f"`model.pte` of every directory is in `{ARCHIVE}` (paths `<configuration>/model.pte`, "
        "unpacked by the build into `build/fixtures/executorch/llm/`), everything else is raw; "
        "`index.json` lists every file (size, sha256, archive) and every configuration's "
        "result.", "",
        "Per configuration: `config.yaml` and `command.txt` (the exporter's exact input), "
        "`ops.json` (each execution plan's operators and delegate ids), `metadata.json` (what "
        "the metadata methods return), `result.json`; then the calls of one generation on ONE "
        f"loaded program, prompt `{top['prompt']}`: the prefill (one call with all prompt ids at "
        "input_pos 0 when `enable_dynamic_shape`, else one call per prompt token), then 7 greedy "
        "decode steps of one token each (`result.json` `calls` lists them): `tokens_<k>.npy` (int64 [1, n]), `input_pos_<k>.npy` (int64 [1]), "
        "`ref_call_<k>.npy` (float32 logits of the last position, ExecuTorch's Python runtime "
        "with `executorch.extension.llm.custom_ops` and `executorch.kernels.quantized` loaded), "
        "`eager_call_<k>.npy` (the exporter's eager model after its source transforms, same "
        "inputs), `eager.json`. `result.json` has `greedy_new_tokens` (8 ids: the argmax of "
        "every call), `top2_margin` per call and `max_abs_diff_executorch_vs_eager`.", "",
        "*reference* `executorch`: the `ref_call_<k>.npy` are ExecuTorch's; `eager`: ExecuTorch's "
        "runtime refuses the program (`result.json` `executorch_error`), so they are the eager "
        "model's.", "",
        "`model.bpte` (in `" + ARCHIVE + "` too, paths `<configuration>/model.bpte`) of "
        + ", ".join(f"`{n}`" for n in names_with(top, "model.bpte")) + ": the bundled program "
        "(`python export_llm.py --bundle WORK`, ExecuTorch's `executorch.devtools.bundled_program` "
        "API) of that `model.pte` with one suite for `forward` whose test cases are the recorded "
        "calls in order (inputs `tokens_<k>.npy` and, when present, `input_pos_<k>.npy`; expected "
        "output `ref_call_<k>.npy` in the program's output dtype and shape, [1, vocab]). The cases "
        "are one generation: they pass only run in order on one loaded method (the KV cache "
        "carries over from case to case), as ExecuTorch's `BundledModule` and `etscope run "
        "--bundled` run them; a case alone (`--bundled K`, K > 0) does not. The script keeps a "
        "`.bpte` only when ExecuTorch's own bundled checker passes every case in order with rtol 0 "
        "and atol " + ", ".join(f"{v:g} ({k})" for k, v in BUNDLE_ATOL.items()) + "; "
        "`tests/runtime/llm_bundled_test.cpp` runs each with `etscope run --bundled --engine "
        "etscope` at the same bounds. Only programs under " + f"{BUNDLE_MAX_PTE // 1000} KB with "
        "an ExecuTorch reference are bundled (the `.bpte` holds the program again).", "",
        "| configuration | what | reference | operators | delegates | greedy ids |", "|---|---|---|---|---|---|"]
    for e in top["configurations"]:
        lines.append(f"| `{e['name']}` | {e['what']} | {e.get('reference')} | "
                     + " ".join(f"`{o}`" for o in e["operators"])
                     + " | " + (" ".join(e["delegates"]) or "-") + f" | {e.get('greedy_new_tokens')} |")
    total = sum(p.stat().st_size for p in dest.rglob("*") if p.is_file() and p.name != "MANIFEST.md")
    lines += ["", f"Committed bytes in this directory: {total} (+ this file)."]
    return "\n".join(lines) + "\n"


def names_with(top: dict, filename: str) -> list[str]:
    """The configurations of a packed index that have `filename`."""
    return [e["name"] for e in top["configurations"] if f"{e['name']}/{filename}" in top["files"]]


def flags_of(e: dict) -> str:
    parts = [f"`--config {e['yaml']}`"] if e.get("yaml") else []
    parts += [f"`{o}`" for o in e.get("overrides", [])]
    return " ".join(parts) or "(defaults: no KV cache, dynamic shape)"


def docs_section(work: Path) -> str:
    """The "LLM exporter configurations" table from OUT/index.json (every operator and delegate
    each configuration's forward plan uses, and what ExecuTorch's runtime did with it)."""
    top = json.loads((work / "index.json").read_text())
    v = top["versions"]
    lines = [
        "## LLM exporter configurations", "",
        "Programs written by ExecuTorch's own LLM exporter (`python -m "
        "executorch.extension.llm.export.export_llm`, executorch "
        f"{v['executorch']}, torch {v['torch']}, torchao {v['torchao']}) for a small random-weight "
        f"Llama 3 architecture (`{json.dumps(top['params'])}`, max_seq_length = "
        f"max_context_length = {top['max_seq_length']}), made by `samples/export/export_llm.py` "
        "(each configuration's exact `config.yaml` and command are in its directory). Every "
        "configuration not otherwise marked has `enable_dynamic_shape` on (the exporter's default). "
        "*operators* are the forward plan's operator table, *delegates* its delegate ids. "
        "*ExecuTorch* is what ExecuTorch's Python runtime (custom-ops and quantized libraries "
        "loaded) did with the program on a prefill and 7 greedy decode steps; where it fails the "
        "reference is the exporter's eager model. *fixture*: committed under "
        "`tests/fixtures/executorch/llm/<configuration>/` with its references; the others are "
        "made by `python samples/export/export_llm.py --out DIR` (about a minute each). "
        "*etscope* is for the kernel work to fill.", "",
        "| configuration | fixture | flags | operators | delegates (XNNPACK node kinds with value types) | ExecuTorch | etscope |",
        "|---|---|---|---|---|---|---|"]
    fx = HERE.parent.parent / "tests/fixtures/executorch/llm/index.json"
    fixtures = {e["name"] for e in json.loads(fx.read_text())["configurations"]} if fx.exists() else set()
    users: dict[str, list[str]] = {}
    for e in top["configurations"]:
        ops = " ".join(f"`{o}`" for o in e.get("operators", [])) or "-"
        dels = " ".join(f"`{x}`" for x in e.get("delegates", [])) or "-"
        if e.get("xnnpack_nodes"):
            dels += " (" + ", ".join(e["xnnpack_nodes"]) + ")"
        if e["status"] == "ok":
            et = "runs: reference = ExecuTorch"
        elif e["status"] == "export_failed":
            et = "exporter refuses: " + e.get("error", "").replace("|", "/")[:200]
        else:
            et = (f"runtime fails: {e.get('error', '').replace('|', '/')[:200]}; reference = "
                  f"{e.get('reference', 'none')}")
        lines.append(f"| `{e['name']}` | {'yes' if e['name'] in fixtures else '-'} | {flags_of(e)} | "
                     f"{ops} | {dels} | {et} | ? |")
        for o in e.get("operators", []) + [f"{d} delegate: {k}" for d in e.get("delegates", [])
                                           for k in e.get("xnnpack_nodes", [])]:
            users.setdefault(o, []).append(e["name"])
    lines += ["", "What ExecuTorch 1.5.1 did, observed on these programs:", "",
              "- `qmode=8da8w` is not a qmode the exporter accepts; `torchao:8da8w` is, but not with "
              "XNNPACK (\"Cannot use low-bit Ao ops ... while also delegating to XNNPack\"), and "
              "`torchao:8da4w` without XNNPACK needs torchao's kernel library, which the wheels do "
              "not ship (\"TorchAO kernel library is not loaded\").",
              "- `qmode=4w`, `qmode=8da4w` without XNNPACK, and `llama_q8da4w.yaml` as shipped (no "
              "backend) export, but ExecuTorch's runtime refuses the program at its first linear "
              "(`aten::linear.out`: `tensors_have_same_dtype(in, mat2, out)` fails): the reference "
              "of those is the exporter's eager model.",
              "- `qmode=int8` (weight-only) leaves no quantized operator in the program: the "
              "linears are plain `aten::linear.out` on float weights (the dequantized values).",
              "- `use_attention_sink` and `local_global_attention` with dynamic shapes export only "
              "when the ring buffer holds `max_seq_length` tokens (window 28 / 16 with "
              "max_seq_length 64 fail in `torch.export`; window 32 works); with static shapes small "
              "windows export (the `_static` configurations, whose 16-token generation wraps the "
              "ring). Both emit `llama::update_cache_with_indices`.",
              "- `quantize_kv_cache` (portable and XNNPACK with dynamic shapes, XNNPACK with static "
              "shapes) and `static_quantize_kv_cache` ran every call here: the `choose_qparams` `scale > 0` abort on a second call seen elsewhere did "
              "not occur with these weights.",
              "- The causal-mask bool constant of `portable_kv_nosdpa` ([64, 64], shared by both "
              "layers) holds only 0 and 1 bytes in these programs (`ops.json` `bool_constants`).",
              "", "Every operator and XNNPACK node kind above, with the configurations that use it:", "",
              "| operator / node kind | configurations | etscope |", "|---|---|---|"]
    for o in sorted(users, key=lambda k: (not k.startswith(("llama::", "quantized_decomposed::", "torchao::")), k)):
        lines.append(f"| `{o}` | {' '.join(users[o])} | ? |")
    return "\n".join(lines) + "\n"


def refresh_ops(out: Path) -> None:
    idx = json.loads((out / "index.json").read_text())
    what = {c[0]: c[3] for c in CONFIGS}
    for e in idx["configurations"]:
        e["what"] = what.get(e["name"], e.get("what"))
        pte = out / e["name"] / "model.pte"
        if e["status"] == "export_failed" and (out / e["name"] / "export.log").exists():
            e["error"] = export_error(out / e["name"] / "export.log")
            r = json.loads((out / e["name"] / "result.json").read_text())
            r["error"] = e["error"]
            (out / e["name"] / "result.json").write_text(json.dumps(r, indent=1) + "\n")
        if not pte.exists():
            continue
        plans = program_ops(pte)
        (out / e["name"] / "ops.json").write_text(json.dumps(plans, indent=1) + "\n")
        fwd = plans.get("forward", {})
        e.update(operators=fwd.get("operators", []), delegates=fwd.get("delegates", []),
                 xnnpack_nodes=sorted(fwd.get("xnnpack_nodes", {})))
    (out / "index.json").write_text(json.dumps(idx, indent=1) + "\n")
    write_status(out, idx["configurations"])


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--refresh-ops":
        # --refresh-ops OUT: rewrite every ops.json and the index's operator lists
        refresh_ops(Path(sys.argv[2]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--docs":
        # --docs WORK FILE: write the docs page (the section under a title) to FILE
        Path(sys.argv[3]).write_text(
            "# Operators of ExecuTorch's LLM exporter\n\n"
            "Written by `python samples/export/export_llm.py --docs OUT docs/operators-llm.md` from "
            "an export run into OUT; do not edit by hand except the *etscope* columns. This is the "
            "section \"LLM exporter configurations\" of [operators.md](operators.md), kept in its own "
            "file because `tests/runtime/op_conformance_test.cpp` renders operators.md whole.\n\n"
            + docs_section(Path(sys.argv[2])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--bundle":
        # --bundle WORK [NAME ...]
        bundle(Path(sys.argv[2]), sys.argv[3:] or list(BUNDLED))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--verify-bundle":
        verify_bundle_child(Path(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--pack":
        # --pack WORK DEST [NAME ...]
        pack(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4:] or list(FIXTURES))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--etrecord-fixtures":
        # --etrecord-fixtures DEST [--work WORK] [NAME ...]
        rest = sys.argv[2:]
        work = HERE.parent.parent / "build/export-work/llm_etrecord"
        if "--work" in rest:
            i = rest.index("--work")
            work = Path(rest[i + 1])
            rest = rest[:i] + rest[i + 2:]
        etrecord_fixtures(Path(rest[0]), work, rest[1:] or list(ETRECORD_FIXTURES))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--etrecord-child":
        etrecord_child(Path(sys.argv[2]), sys.argv[3])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        mode, d, cfg = sys.argv[2], Path(sys.argv[3]), sys.argv[4]
        (reference_child if mode == "executorch" else eager_child)(d, cfg)
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="/work/ext-llm")
    ap.add_argument("--only", default="", help="comma-separated configuration names")
    ap.add_argument("--full", action="store_true",
                    help="dim 128, vocab 512 (default: the fixture size, dim 64, vocab 256)")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    ppath, cpath = make_checkpoint(out, small=not args.full)
    only = [s for s in args.only.split(",") if s]
    idx_path = out / "index.json"
    index = json.loads(idx_path.read_text())["configurations"] if idx_path.exists() else []
    for name, yaml, overrides, what in CONFIGS:
        if only and name not in only:
            continue
        entry = do_config(out, name, yaml, overrides, what, ppath, cpath)
        index = [e for e in index if e["name"] != name] + [entry]
        order = [c[0] for c in CONFIGS]
        index.sort(key=lambda e: order.index(e["name"]) if e["name"] in order else 999)
        idx_path.write_text(json.dumps({
            "generator": "samples/export/export_llm.py", "params": json.loads(ppath.read_text()),
            "max_seq_length": MAX_SEQ, "max_context_length": MAX_SEQ, "prompt": PROMPT,
            "bos": BOS, "eos": EOS, "seed": SEED, "versions": versions(),
            "configurations": index}, indent=1) + "\n")
        write_status(out, index)
        print(f"=== {name}: {entry['status']} {entry.get('error', '')[:300]}", flush=True)


def versions() -> dict:
    from importlib.metadata import version
    return {p: version(p) for p in ("executorch", "torch", "torchao")}


if __name__ == "__main__":
    main()
