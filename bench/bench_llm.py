#!/usr/bin/env python3
"""LLM speed at real size: etscope's engine against ExecuTorch's Python runtime on the same .pte.

    python bench_llm.py export [--out DIR] [--only 135m,1b]
    python bench_llm.py bench [--out DIR] [--only ...] [--etscope EXE] [--rounds R]
                              [--prompt-len N] [--new-tokens M] [--json FILE]
    python bench_llm.py bandwidth

Run with the virtualenv that has executorch 1.5.1 (e.g. /work/export-venv/bin/python).

export: writes DIR/<shape>/model.pte (not committed; default DIR /work/llm-bench) with ExecuTorch
1.5.1's own exporter, `python -m executorch.extension.llm.export.export_llm`, ExecuTorch's
llama_xnnpack.yaml settings (KV cache, use_sdpa_with_kv_cache, 8da4w linears, 4-bit embeddings
group 32, XNNPACK, dynamic shape) from a seeded random checkpoint of the shape's params.json:
  135m  SmolLM-135M's shape: dim 576, 30 layers, 9 heads, 3 kv heads, hidden 1536, vocab 49152
        (8da4w group 32: 576 is not a multiple of the yaml's 128)
  1b    Llama-3.2-1B's shape: dim 2048, 16 layers, 32 heads, 8 kv heads, hidden 8192,
        vocab 128256, rope theta 500000 (8da4w group 128, the yaml's)
max_seq_len 128 for both.

bench: per shape, R interleaved rounds (etscope, ExecuTorch, etscope, ...), each a fresh process
that loads the program, prefills a fixed prompt of N ids in one call (the sequence dimension is
dynamic) and decodes M greedy tokens, one call each:
  etscope    `etscope generate P --prompt-ids ... --max-new-tokens M --ignore-eos --format json`
             (its stats: prefill and decode tokens/s from the engine's per-call time)
  ExecuTorch executorch.runtime with llama custom ops and quantized kernels loaded, threadpool
             reset to 1 thread; time.perf_counter around each forward call only.
Prefill tokens/s = N / prefill call time; decode tokens/s = (M - 1) / sum of the decode call
times (the first new token comes from the prefill's logits, as in ExecuTorch's runner).
Medians over rounds; the greedy ids of both are compared.

bandwidth: one-thread read bandwidth (a small C loop summing a 1 GiB float array in 64-byte vectors, 4
accumulators, cc -O3 -march=native; numpy's own sum is compute-bound at ~3 GB/s here) and copy
bandwidth (memcpy 1 GiB, counted as bytes read + written), best of 5, GB/s = 1e9 B/s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

SHAPES = {
    "135m": ({"dim": 576, "n_layers": 30, "n_heads": 9, "n_kv_heads": 3, "vocab_size": 49152,
              "hidden_dim": 1536, "multiple_of": 32, "norm_eps": 1e-5, "rope_theta": 10000.0,
              "use_scaled_rope": False}, 32),
    "1b": ({"dim": 2048, "n_layers": 16, "n_heads": 32, "n_kv_heads": 8, "vocab_size": 128256,
            "hidden_dim": 8192, "multiple_of": 256, "norm_eps": 1e-5,
            "rope_theta": 500000.0, "use_scaled_rope": True}, 128),
}
# HQQ (the exporter's default way of choosing 4-bit scales) is iterative and takes most of an
# hour at 1B on two shared cores; plain min/max scales write the same operators and layouts.
NO_HQQ = {"1b"}
MAX_SEQ = 128
SEED = 20261126
BOS, EOS = 1, [2]


def prompt_ids(n: int, vocab: int) -> list[int]:
    """A fixed prompt: BOS then a deterministic spread of ids inside the vocabulary."""
    return [BOS] + [(7919 * i + 101) % vocab for i in range(1, n)]


# ---------------------------------------------------------------- export

def make_checkpoint(d: Path, params: dict) -> tuple[Path, Path]:
    import torch
    from executorch.examples.models.llama.llama_transformer import construct_transformer
    from executorch.examples.models.llama.model_args import ModelArgs
    ppath = d / "params.json"
    ppath.write_text(json.dumps(params, indent=1) + "\n")
    cpath = d / "checkpoint.pth"
    if cpath.exists():
        return ppath, cpath
    with torch.device("meta"):
        model = construct_transformer(ModelArgs(max_seq_len=MAX_SEQ, max_context_len=MAX_SEQ, **params))
    g = torch.Generator().manual_seed(SEED)
    sd = {}
    for name, p in model.named_parameters():
        if "norm" in name:
            w = 1.0 + 0.25 * (torch.rand(p.shape, generator=g) - 0.5)
        elif name == "tok_embeddings.weight":
            w = torch.randn(p.shape, generator=g)
        elif name == "output.weight":
            # logits of a few units, so greedy choices are not near-ties
            w = (torch.rand(p.shape, generator=g) * 2 - 1) * 4 * (3.0 / p.shape[-1]) ** 0.5
        else:
            w = (torch.rand(p.shape, generator=g) * 2 - 1) * (3.0 / p.shape[-1]) ** 0.5
        sd[name] = w.contiguous()
    torch.save(sd, cpath)
    del sd
    return ppath, cpath


def export_shape(out: Path, shape: str) -> None:
    from omegaconf import OmegaConf
    import executorch
    params, group = SHAPES[shape]
    d = out / shape
    d.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    ppath, cpath = make_checkpoint(d, params)
    print(f"[{shape}] checkpoint {time.time() - t0:.0f} s", flush=True)
    yaml = Path(list(executorch.__path__)[0]) / "examples/models/llama/config/llama_xnnpack.yaml"
    conf = OmegaConf.load(yaml)
    meta = json.dumps({"get_bos_id": BOS, "get_eos_ids": EOS}, separators=(",", ":"))
    conf = OmegaConf.merge(conf, OmegaConf.create({
        "base": {"model_class": "llama3", "params": str(ppath), "checkpoint": str(cpath), "metadata": meta},
        "quantization": {"group_size": group, **({"use_hqq": False} if shape in NO_HQQ else {})},
        "export": {"max_seq_length": MAX_SEQ, "max_context_length": MAX_SEQ,
                   "output_dir": str(d), "output_name": str(d / "model.pte")}}))
    (d / "config.yaml").write_text(f"# {shape}: ExecuTorch's llama_xnnpack.yaml, group_size {group}\n"
                                   + OmegaConf.to_yaml(conf))
    argv = [sys.executable, "-m", "executorch.extension.llm.export.export_llm",
            "--config", str(d / "config.yaml"), "hydra.run.dir=.", "hydra.output_subdir=null"]
    work = d / "hydra"
    work.mkdir(exist_ok=True)
    (d / "command.txt").write_text(f"cd {work}\n" + " ".join(argv) + "\n")
    t0 = time.time()
    with open(d / "export.log", "w") as log:
        rc = subprocess.run(["nice"] + argv, cwd=work, stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, PYTHONHASHSEED="0")).returncode
    secs = time.time() - t0
    print(f"[{shape}] export rc={rc} {secs:.0f} s", flush=True)
    if rc != 0 or not (d / "model.pte").exists():
        raise SystemExit(f"bench_llm.py: {d / 'export.log'}: export failed (rc {rc})")
    (d / "export.json").write_text(json.dumps({"seconds": secs, "group_size": group,
                                                "pte_bytes": (d / "model.pte").stat().st_size}) + "\n")


# ---------------------------------------------------------------- one ExecuTorch run (child)

def executorch_child(pte: str, ids: list[int], new_tokens: int) -> dict:
    import torch
    import executorch.extension.llm.custom_ops.custom_ops  # noqa: F401  (llama:: ops)
    import executorch.kernels.quantized  # noqa: F401  (quantized_decomposed:: out variants)
    from executorch.extension.pybindings import portable_lib
    from executorch.runtime import Runtime
    torch.set_num_threads(1)
    portable_lib._unsafe_reset_threadpool(1)
    threads = portable_lib._threadpool_get_thread_count()
    t0 = time.perf_counter()
    prog = Runtime.get().load_program(pte)
    fwd = prog.load_method("forward")
    load_ms = (time.perf_counter() - t0) * 1e3
    tok = torch.tensor([ids], dtype=torch.long)
    pos = torch.tensor([0], dtype=torch.long)
    t = time.perf_counter()
    out = fwd.execute([tok, pos])
    prefill_ms = (time.perf_counter() - t) * 1e3
    nxt = int(out[0].reshape(-1, out[0].shape[-1])[-1].argmax())
    new = [nxt]
    decode_ms = []
    n = len(ids)
    while len(new) < new_tokens:
        tok = torch.tensor([[nxt]], dtype=torch.long)
        pos = torch.tensor([n + len(new) - 1], dtype=torch.long)
        t = time.perf_counter()
        out = fwd.execute([tok, pos])
        decode_ms.append((time.perf_counter() - t) * 1e3)
        nxt = int(out[0].reshape(-1, out[0].shape[-1])[-1].argmax())
        new.append(nxt)
    return {"threads": threads, "load_ms": load_ms, "prefill_ms": prefill_ms, "decode_ms": decode_ms,
            "new_tokens": new}


def run_executorch(pte: Path, ids: list[int], m: int) -> dict:
    p = subprocess.run([sys.executable, __file__, "--child", str(pte), ",".join(map(str, ids)), str(m)],
                       capture_output=True, text=True, env=dict(os.environ, OMP_NUM_THREADS="1"))
    if p.returncode != 0:
        raise SystemExit(f"bench_llm.py: {pte}: ExecuTorch run failed: {p.stderr.strip()[-400:]}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    return summarize(r["prefill_ms"], r["decode_ms"], len(ids), r["new_tokens"], r["load_ms"], r["threads"])


def summarize(prefill_ms: float, decode_ms: list[float], n: int, new: list[int], load_ms: float,
              threads=None) -> dict:
    dsum = sum(decode_ms)
    return {"prefill_ms": prefill_ms, "prefill_tps": n / (prefill_ms / 1e3),
            "decode_ms_median": statistics.median(decode_ms) if decode_ms else 0.0,
            "decode_tps": len(decode_ms) / (dsum / 1e3) if dsum else 0.0,
            "load_ms": load_ms, "new_tokens": new, "threads": threads}


def run_etscope(exe: str, pte: Path, ids: list[int], m: int) -> dict:
    argv = [exe, "generate", str(pte), "--prompt-ids", ",".join(map(str, ids)), "--max-new-tokens", str(m),
            "--ignore-eos", "--format", "json"]
    p = subprocess.run(argv, capture_output=True, text=True)
    if p.returncode != 0:
        raise SystemExit(f"bench_llm.py: {pte}: etscope generate failed: {p.stderr.strip()[-400:]}")
    j = json.loads(p.stdout)
    return {"raw": j}


def etscope_summary(raw: dict, n: int) -> dict:
    """Reads etscope generate's JSON (docs/json.md, generate) into the same figures."""
    calls = raw.get("calls") or []
    st = raw.get("stats", {})
    prefill = [c for c in calls if c.get("phase") == "prefill"]
    decode = [c for c in calls if c.get("phase") == "decode"]
    if prefill and decode:
        pre_ms = sum(c["ms"] for c in prefill)
        dms = [c["ms"] for c in decode]
        s = summarize(pre_ms, dms, n, raw.get("generated_ids", []), st.get("load_ms", 0.0))
    else:
        s = {"prefill_tps": st.get("prefill_tokens_per_s"), "decode_tps": st.get("decode_tokens_per_s"),
             "new_tokens": raw.get("generated_ids", [])}
    s["etscope_stats"] = {k: st.get(k) for k in ("prefill_tokens_per_s", "decode_tokens_per_s")}
    return s


# ---------------------------------------------------------------- bandwidth

READ_C = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
typedef float v16 __attribute__((vector_size(64)));
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }
int main(void) {
  size_t n = (size_t)1 << 28;  /* 1 GiB of float */
  float *a = aligned_alloc(64, n * sizeof(float)), *b = aligned_alloc(64, n * sizeof(float));
  for (size_t i = 0; i < n; i++) a[i] = (float)(i & 7);
  memset(b, 0, n * sizeof(float));
  double best_read = 0, best_copy = 0;
  float total = 0;
  for (int r = 0; r < 5; r++) {
    double t = now();
    const v16 *v = (const v16 *)a;
    v16 s0 = {0}, s1 = {0}, s2 = {0}, s3 = {0};
    for (size_t i = 0; i < n / 16; i += 4) { s0 += v[i]; s1 += v[i + 1]; s2 += v[i + 2]; s3 += v[i + 3]; }
    t = now() - t;
    for (int k = 0; k < 16; k++) total += s0[k] + s1[k] + s2[k] + s3[k];
    if (n * sizeof(float) / t > best_read) best_read = n * sizeof(float) / t;
    t = now();
    memcpy(b, a, n * sizeof(float));
    t = now() - t;
    if (2.0 * n * sizeof(float) / t > best_copy) best_copy = 2.0 * n * sizeof(float) / t;
  }
  printf("{\"read_gbps\": %.3f, \"copy_gbps\": %.3f, \"checksum\": %g}\n", best_read / 1e9, best_copy / 1e9, total + b[n - 1]);
  return 0;
}
"""


def bandwidth() -> dict:
    """One thread, 1 GiB: read (a sum in 64-byte vectors, cc -O3 -march=native) and
    copy (memcpy, bytes read + written), best of 5, in GB/s (1e9 B/s)."""
    import tempfile
    with tempfile.TemporaryDirectory() as t:
        src, exe = Path(t) / "read.c", Path(t) / "read"
        src.write_text(READ_C)
        subprocess.run(["cc", "-O3", "-march=native", "-o", str(exe), str(src)], check=True)
        return json.loads(subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout)


def weight_bytes(pte: Path) -> dict:
    """Constant data + XNNPACK's named data (its packed weights) + delegate payloads of the
    program: the weights a decode step reads (an upper estimate: of the embedding table only one
    row per token is gathered)."""
    from executorch.exir._serialize._program import deserialize_pte_binary
    pp = deserialize_pte_binary(pte.read_bytes())
    prog = pp.program
    const = sum(len(b.storage) for b in prog.constant_buffer)
    named = sum(len(b) for b in pp.named_data.buffers) if pp.named_data is not None else 0
    delegate = sum(len(d.data) for d in prog.backend_delegate_data)
    return {"pte_bytes": pte.stat().st_size, "constant_buffer_bytes": const, "named_data_bytes": named,
            "delegate_bytes": delegate, "weights_bytes": const + named + delegate,
            # XNNPACK's part: every linear (output projection included), all read each step; the
            # constant buffer is mostly the 4-bit embedding table (portable op, one row a token)
            "xnnpack_bytes": named + delegate}


# ---------------------------------------------------------------- main

def load() -> str:
    return open("/proc/loadavg").read().split()[0]


def bench(args) -> dict:
    out = Path(args.out)
    res = {"machine": machine(), "prompt_len": args.prompt_len, "new_tokens": args.new_tokens,
           "rounds": args.rounds, "shapes": {}}
    for shape in args.only.split(","):
        pte = out / shape / "model.pte"
        if not pte.exists():
            print(f"[{shape}] no {pte}: skipped", flush=True)
            continue
        params, group = SHAPES[shape]
        ids = prompt_ids(args.prompt_len, params["vocab_size"])
        et, es, loads = [], [], []
        for r in range(args.rounds):
            loads.append(load())
            raw = run_etscope(args.etscope, pte, ids, args.new_tokens)["raw"]
            es.append(etscope_summary(raw, len(ids)))
            if r == 0:
                (out / shape / "etscope_generate.json").write_text(json.dumps(raw, indent=1) + "\n")
            et.append(run_executorch(pte, ids, args.new_tokens))
            print(f"[{shape}] round {r}: load {loads[-1]}  etscope prefill {es[-1]['prefill_tps']:.1f} tok/s decode "
                  f"{es[-1]['decode_tps']:.2f} tok/s | ExecuTorch prefill {et[-1]['prefill_tps']:.1f} decode "
                  f"{et[-1]['decode_tps']:.2f}", flush=True)

        def med(rows, k):
            return statistics.median(r[k] for r in rows)
        wb = weight_bytes(pte)
        entry = {"params": params, "group_size": group, "weights": wb, "loadavg_per_round": loads,
                 "same_greedy_tokens": all(a["new_tokens"] == b["new_tokens"] for a, b in zip(es, et)),
                 "etscope_tokens": es[0]["new_tokens"], "executorch_tokens": et[0]["new_tokens"],
                 "executorch_threads": et[0]["threads"]}
        for name, rows in (("etscope", es), ("executorch", et)):
            entry[name] = {"prefill_tps": med(rows, "prefill_tps"), "decode_tps": med(rows, "decode_tps"),
                           "prefill_tps_all": [r["prefill_tps"] for r in rows],
                           "decode_tps_all": [r["decode_tps"] for r in rows]}
        res["shapes"][shape] = entry
    return res


def machine() -> dict:
    model = ""
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            model = line.split(":", 1)[1].strip()
            break
    return {"cpu": model, "cores": os.cpu_count(), "loadavg": open("/proc/loadavg").read().strip()}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        pte, ids, m = sys.argv[2], [int(x) for x in sys.argv[3].split(",")], int(sys.argv[4])
        print(json.dumps(executorch_child(pte, ids, m)))
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["export", "bench", "bandwidth"])
    ap.add_argument("--out", default="/work/llm-bench")
    ap.add_argument("--only", default="135m,1b")
    ap.add_argument("--etscope", default=str(ROOT / "build/bin/etscope"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--prompt-len", type=int, default=32)
    ap.add_argument("--new-tokens", type=int, default=32)
    ap.add_argument("--json")
    args = ap.parse_args()
    if args.what == "export":
        for shape in args.only.split(","):
            export_shape(Path(args.out), shape)
        return
    if args.what == "bandwidth":
        print(json.dumps(bandwidth(), indent=1))
        return
    res = bench(args)
    bw = bandwidth()
    res["bandwidth"] = bw
    for shape, e in res["shapes"].items():
        wb = e["weights"]["weights_bytes"]
        for name in ("etscope", "executorch"):
            e[name]["bandwidth_fraction"] = wb * e[name]["decode_tps"] / (bw["read_gbps"] * 1e9)
            e[name]["bandwidth_fraction_xnnpack_bytes"] = (e["weights"]["xnnpack_bytes"] * e[name]["decode_tps"]
                                                           / (bw["read_gbps"] * 1e9))
    text = json.dumps(res, indent=1)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    print()
    print(f"read bandwidth (1 thread) {bw['read_gbps']:.1f} GB/s, copy {bw['copy_gbps']:.1f} GB/s")
    print("| shape | runtime | prefill tok/s | decode tok/s | weights MB (all / XNNPACK) | "
          "bandwidth fraction (all / XNNPACK) |")
    print("|---|---|---|---|---|---|")
    for shape, e in res["shapes"].items():
        for name in ("etscope", "executorch"):
            r = e[name]
            print(f"| {shape} | {name} | {r['prefill_tps']:.1f} | {r['decode_tps']:.2f} | "
                  f"{e['weights']['weights_bytes'] / 1e6:.0f} / {e['weights']['xnnpack_bytes'] / 1e6:.0f} | "
                  f"{r['bandwidth_fraction']:.2f} / {r['bandwidth_fraction_xnnpack_bytes']:.2f} |")
        print(f"same greedy tokens ({shape}): {e['same_greedy_tokens']}")


if __name__ == "__main__":
    main()
