#!/usr/bin/env python3
"""Does acting on `etscope findings`' top finding save the time it promises?

Pairs of programs: a problem program and the same model with its top finding acted on.
For each pair the problem program is profiled with ExecuTorch's own runtime, `etscope findings`
reads that profile and promises a saving (time_ms); the fixed program is timed the same way and
the measured saving (median problem - median fixed) is set against the promise.

Subcommands

  export --out DIR      (needs the exporter venv: torch, torchvision, executorch 1.5.1)
      nice /work/export-venv/bin/python bench/findings_validation.py export --out /tmp/fv
      Writes per program NAME.pte, NAME.etrecord, NAME.input0.npy, and DIR/pairs.json
      (the pairs, how each was exported, and ExecuTorch's outputs of the two programs
      compared: the fix must not change what the model computes).

  measure --dir DIR [--rounds 5] [--iterations 20] [--json OUT] [--only NAME ...]
      (python3 standard library; the etscope CLI at build/bin/etscope)
      For each pair, rounds interleaved (problem, fixed, problem, fixed, ...), each run a fresh
      `etscope run PROGRAM --engine executorch --threads 1 --input NAME.input0.npy
      --iterations N --etdump D --format json` process; then `etscope findings PROGRAM
      --etdump D --etrecord R --format json` on every dump. Prints a markdown table and
      writes JSON (default DIR/measure.json). Besides the top finding it reports the promise
      of the rule acted on (restricted to the pair's operator where the fix targets one), and
      the same with `--min-share 0`: every instance the fix removes, also those under the
      default 0.5% cut. --reuse re-reads the kept dumps without timing again.

  scan PROGRAM...       `etscope findings PROGRAM --format json` (program only, no profile)
      for each program: rule counts and the top finding, as a markdown table.

The four committed pairs of tests/fixtures/executorch/findings/ are measured too (by path).
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[1]
ETSCOPE = Path(os.environ.get("ETSCOPE_BIN", REPO / "build" / "bin" / "etscope"))
FIXTURES = REPO / "tests" / "fixtures" / "executorch" / "findings"

MODEL_SEED = 0   # torch.manual_seed right before each model is built
INPUT_SEED = 1   # torch.Generator seed of each stored input

# The committed pairs (samples/export/export_findings.py): name, problem, fixed, rule acted on.
COMMITTED = [
    ("partial_lowering", "partial_lowering", "partial_lowering_fixed", "partial-delegation",
     "SmallCnn with nn.ELU, XNNPACK; fixed: ELU as relu(x)+exp(clamp(x,max=0))-1"),
    ("permuted_constant", "permuted_constant", "permuted_constant_folded", "constant-work",
     "relu(x @ w.t()), 384x384, portable; fixed: constant_prop_pass"),
    ("qdq_portable", "qdq_portable", "qdq_portable_fixed", "qdq-pairs",
     "int8 CNN with channel flip, XNNPACK without lone q/dq configs; fixed: flip folded into conv3"),
    ("dtype_roundtrip", "dtype_roundtrip", "dtype_roundtrip_fixed", "dtype-round-trip",
     "tanh in float64 between float32 ops, portable; fixed: tanh in float32"),
]


# =========================================================================== export
# Everything below up to `measure` runs in the exporter venv only (torch imported lazily).


def _models():
    """Model builders. Imported lazily so that `measure` needs no torch."""
    import math

    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torchvision

    class LayerNormFromDelegatedOps(nn.Module):
        """LayerNorm over the last dim from ops ExecuTorch 1.5.1's XNNPACK partitioner takes:
        the two means are products with a constant 1/D column (linear), then sub, mul, rsqrt,
        add. Its XNNPACK mean.dim config takes only 4D means over dims (2, 3)."""

        def __init__(self, ln: nn.LayerNorm) -> None:
            super().__init__()
            d = ln.normalized_shape[-1]
            self.eps = ln.eps
            self.weight = nn.Parameter(ln.weight.detach().clone())
            self.bias = nn.Parameter(ln.bias.detach().clone())
            self.register_buffer("avg", torch.full((1, d), 1.0 / d))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            mu = F.linear(x, self.avg)
            c = x - mu
            var = F.linear(c * c, self.avg)
            return c * torch.rsqrt(var + self.eps) * self.weight + self.bias

    class HardsigmoidFromDelegatedOps(nn.Module):
        """hardsigmoid(x) = relu6(x + 3) / 6 (hardtanh, add, div: all taken by XNNPACK)."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return F.hardtanh(x + 3.0, 0.0, 6.0) / 6.0

    class EluFromDelegatedOps(nn.Module):
        """ELU(alpha=1) = relu(x) + exp(min(x, 0)) - 1."""

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return F.relu(x) + (torch.exp(torch.clamp(x, max=0.0)) - 1.0)

    class TinyViT(nn.Module):
        """DeiT-tiny-like classifier: 8x8 patches of 1x3x64x64 (64 tokens + cls), width 192,
        4 pre-norm nn.TransformerEncoder layers (3 heads, GELU MLP 768), LayerNorm, head."""

        def __init__(self, dim: int = 192, depth: int = 4, heads: int = 3, classes: int = 100,
                     img: int = 64, patch: int = 8) -> None:
            super().__init__()
            self.patch = nn.Conv2d(3, dim, patch, stride=patch)
            n = (img // patch) ** 2
            self.cls = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
            self.pos = nn.Parameter(torch.randn(1, n + 1, dim) * 0.02)
            layer = nn.TransformerEncoderLayer(dim, heads, 4 * dim, dropout=0.0,
                                               activation="gelu", batch_first=True,
                                               norm_first=True)
            self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)
            self.norm = nn.LayerNorm(dim)
            self.head = nn.Linear(dim, classes)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            t = self.patch(x).flatten(2).transpose(1, 2)
            t = torch.cat([self.cls.expand(t.shape[0], -1, -1), t], dim=1) + self.pos
            t = self.norm(self.encoder(t))
            return self.head(t[:, 0])

    def swap(model: nn.Module, kind: type, make) -> nn.Module:
        """Replace every submodule of type `kind` by make(old) (in place)."""
        for name, child in list(model.named_children()):
            if isinstance(child, kind):
                setattr(model, name, make(child))
            else:
                swap(child, kind, make)
        return model

    def seeded(build):
        torch.manual_seed(MODEL_SEED)
        return build().eval()

    def cifar10():
        sys.path.insert(0, str(REPO / "samples"))
        from models import cifar10 as c
        return c.make(MODEL_SEED).eval()

    def resnet18_elu():
        m = seeded(lambda: torchvision.models.resnet18(num_classes=1000))
        return swap(m, nn.ReLU, lambda _: nn.ELU())

    def resnet18_elu_fixed():
        m = resnet18_elu()
        return swap(m, nn.ELU, lambda _: EluFromDelegatedOps())

    def mbv3s():
        return seeded(lambda: torchvision.models.mobilenet_v3_small(num_classes=1000))

    def mbv3s_fixed():
        return swap(mbv3s(), nn.Hardsigmoid, lambda _: HardsigmoidFromDelegatedOps())

    def vit():
        return seeded(TinyViT)

    def vit_fixed():
        return swap(vit(), nn.LayerNorm, LayerNormFromDelegatedOps)

    return {
        "mobilenet_v2": lambda: seeded(lambda: torchvision.models.mobilenet_v2(num_classes=1000)),
        "resnet18": lambda: seeded(lambda: torchvision.models.resnet18(num_classes=1000)),
        "mobilenet_v3_small": mbv3s,
        "mobilenet_v3_small_fixed": mbv3s_fixed,
        "tiny_vit": vit,
        "tiny_vit_fixed": vit_fixed,
        "cifar10": cifar10,
        "resnet18_elu": resnet18_elu,
        "resnet18_elu_fixed": resnet18_elu_fixed,
    }


# pair name -> (problem: (program, model, shape, exporter), fixed: (...), rule acted on, what, fix)
PAIRS: List[Dict[str, Any]] = [
    dict(name="mobilenet_v2_portable", rule="constant-work",
         problem=("mobilenet_v2_portable", "mobilenet_v2", (1, 3, 96, 96), "portable"),
         fixed=("mobilenet_v2_portable_folded", "mobilenet_v2", (1, 3, 96, 96), "portable_cp"),
         what="torchvision mobilenet_v2, 1x3x96x96, to_edge (portable kernels)",
         fix="constant_prop_pass on the edge program"),
    dict(name="resnet18_portable", rule="constant-work",
         problem=("resnet18_portable", "resnet18", (1, 3, 64, 64), "portable"),
         fixed=("resnet18_portable_folded", "resnet18", (1, 3, 64, 64), "portable_cp"),
         what="torchvision resnet18, 1x3x64x64, to_edge (portable kernels)",
         fix="constant_prop_pass on the edge program"),
    dict(name="mobilenet_v3_small_portable", rule="constant-work",
         problem=("mobilenet_v3_small_portable", "mobilenet_v3_small", (1, 3, 96, 96), "portable"),
         fixed=("mobilenet_v3_small_portable_folded", "mobilenet_v3_small", (1, 3, 96, 96),
                "portable_cp"),
         what="torchvision mobilenet_v3_small, 1x3x96x96, to_edge (portable kernels)",
         fix="constant_prop_pass on the edge program"),
    dict(name="tiny_vit_portable", rule="constant-work",
         problem=("tiny_vit_portable", "tiny_vit", (1, 3, 64, 64), "portable"),
         fixed=("tiny_vit_portable_folded", "tiny_vit", (1, 3, 64, 64), "portable_cp"),
         what="DeiT-tiny-like nn.TransformerEncoder classifier (4 layers, width 192, 65 tokens), "
              "to_edge (portable kernels)",
         fix="constant_prop_pass on the edge program"),
    dict(name="cifar10_portable", rule="constant-work",
         problem=("cifar10_portable", "cifar10", (4, 3, 32, 32), "portable"),
         fixed=("cifar10_portable_folded", "cifar10", (4, 3, 32, 32), "portable_cp"),
         what="samples/models/cifar10.py Cifar10Net, 4x3x32x32, to_edge (portable kernels)",
         fix="constant_prop_pass on the edge program"),
    dict(name="mobilenet_v3_small_xnnpack", rule="constant-work",
         problem=("mobilenet_v3_small_xnnpack", "mobilenet_v3_small", (1, 3, 224, 224), "xnnpack"),
         fixed=("mobilenet_v3_small_xnnpack_fixed", "mobilenet_v3_small_fixed", (1, 3, 224, 224),
                "xnnpack"),
         what="torchvision mobilenet_v3_small, 1x3x224x224, XnnpackPartitioner: each "
              "nn.Hardsigmoid decomposes with int64 scalar constants 3 and 6, converted to "
              "float32 by 18 portable _to_dim_order_copy calls ahead of the one delegate call",
         fix="nn.Hardsigmoid written as hardtanh(x + 3.0, 0, 6) / 6.0 (float literals)",
         match="_to_dim_order_copy"),
    dict(name="tiny_vit_xnnpack", rule="partial-delegation",
         problem=("tiny_vit_xnnpack", "tiny_vit", (1, 3, 64, 64), "xnnpack"),
         fixed=("tiny_vit_xnnpack_fixed", "tiny_vit_fixed", (1, 3, 64, 64), "xnnpack"),
         what="DeiT-tiny-like classifier, XnnpackPartitioner (1.5.1 has no layer_norm config)",
         fix="every nn.LayerNorm written as linear-mean, sub, mul, rsqrt, mul, add",
         match="native_layer_norm"),
    dict(name="resnet18_elu_xnnpack", rule="partial-delegation",
         problem=("resnet18_elu_xnnpack", "resnet18_elu", (1, 3, 96, 96), "xnnpack"),
         fixed=("resnet18_elu_xnnpack_fixed", "resnet18_elu_fixed", (1, 3, 96, 96), "xnnpack"),
         what="torchvision resnet18 with every ReLU an nn.ELU, 1x3x96x96, XnnpackPartitioner "
              "(1.5.1's EluConfig is commented out)",
         fix="ELU written as relu(x) + exp(clamp(x, max=0)) - 1"),
]


def _export_program(out: Path, prog: str, model_name: str, shape, how: str,
                    cache: Dict[str, Any]) -> Dict[str, Any]:
    import copy

    import numpy as np
    import torch
    from executorch.exir import to_edge, to_edge_transform_and_lower

    if model_name not in cache:
        cache[model_name] = _models()[model_name]()
    model = cache[model_name]
    x = torch.randn(*shape, generator=torch.Generator().manual_seed(INPUT_SEED))
    ex = (x,)
    with torch.no_grad():
        ep = torch.export.export(model, ex)
    etr = out / f"{prog}.etrecord"
    if how == "portable":
        calls = ["torch.export.export", "to_edge(ep, generate_etrecord=True)", "to_executorch()"]
        edge = to_edge(ep, generate_etrecord=True)
        et = edge.to_executorch()
        et.get_etrecord().save(str(etr))
    elif how == "portable_cp":
        from executorch.devtools import generate_etrecord
        from executorch.exir.passes.constant_prop_pass import constant_prop_pass
        calls = ["torch.export.export", "to_edge(ep)",
                 "constant_prop_pass(edge.exported_program())", "to_executorch()",
                 "generate_etrecord(edge_dialect_program=<deepcopy of the edge before "
                 "to_executorch()>, executorch_program=et, exported_program=ep)"]
        edge = to_edge(ep)
        constant_prop_pass(edge.exported_program())   # in place
        edge_copy = copy.deepcopy(edge)                # to_executorch() renumbers debug handles
        et = edge.to_executorch()
        generate_etrecord(str(etr), edge_dialect_program=edge_copy, executorch_program=et,
                          exported_program=ep)
    elif how == "xnnpack":
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        calls = ["torch.export.export",
                 "to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()], "
                 "generate_etrecord=True)", "to_executorch()"]
        edge = to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()],
                                           generate_etrecord=True)
        et = edge.to_executorch()
        et.get_etrecord().save(str(etr))
    else:
        raise ValueError(how)
    pte = out / f"{prog}.pte"
    pte.write_bytes(bytes(et.buffer))
    np.save(out / f"{prog}.input0.npy", x.numpy().astype(np.float32))

    from executorch.runtime import Runtime
    method = Runtime.get().load_program(pte).load_method("forward")
    got = method.execute([x])[0]
    with torch.no_grad():
        eager = model(x)
    diff = float((got - eager).abs().max())
    np.save(out / f"{prog}.output0.npy", got.numpy())
    return {"program": prog, "model": model_name, "input_shape": list(shape), "exporter": how,
            "calls": calls, "pte_bytes": pte.stat().st_size,
            "max_abs_diff_vs_eager": diff}


def cmd_export(args: argparse.Namespace) -> int:
    import numpy as np
    import torch
    import executorch.version as ev

    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cache: Dict[str, Any] = {}
    pairs = []
    for spec in PAIRS:
        if args.only and spec["name"] not in args.only:
            continue
        rec = dict(name=spec["name"], rule=spec["rule"], what=spec["what"], fix=spec["fix"],
                   match=spec.get("match", ""))
        for side in ("problem", "fixed"):
            prog, model_name, shape, how = spec[side]
            r = _export_program(out, prog, model_name, shape, how, cache)
            rec[side] = prog
            rec[side + "_export"] = r
            print(f"[{prog}] {how} {r['pte_bytes']} B, max |ET - eager| "
                  f"{r['max_abs_diff_vs_eager']:.3g}", flush=True)
        a = np.load(out / f"{rec['problem']}.output0.npy")
        b = np.load(out / f"{rec['fixed']}.output0.npy")
        rec["max_abs_diff_problem_vs_fixed"] = float(np.abs(a - b).max())
        pairs.append(rec)
    meta = {"torch": torch.__version__, "executorch": getattr(ev, "__version__", "?"),
            "model_seed": MODEL_SEED, "input_seed": INPUT_SEED, "pairs": pairs}
    old = out / "pairs.json"
    if args.only and old.exists():   # keep the pairs not exported this time
        prev = json.loads(old.read_text())["pairs"]
        meta["pairs"] = [p for p in prev if p["name"] not in args.only] + pairs
    old.write_text(json.dumps(meta, indent=1) + "\n")
    return 0


# =========================================================================== measure


def _run(cmd: List[str]) -> Dict[str, Any]:
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> {p.returncode}\n{p.stderr[-2000:]}")
    return json.loads(p.stdout)


def _findings(pte: Path, etdump: Optional[Path], etrecord: Optional[Path],
              extra: Optional[List[str]] = None) -> Dict[str, Any]:
    cmd = [str(ETSCOPE), "findings", str(pte), "--format", "json"] + (extra or [])
    if etdump:
        cmd += ["--etdump", str(etdump)]
    if etrecord and etrecord.exists():
        cmd += ["--etrecord", str(etrecord)]
    return _run(cmd)


def _time_once(pte: Path, inp: Path, iterations: int, etdump: Path) -> Dict[str, Any]:
    j = _run([str(ETSCOPE), "run", str(pte), "--engine", "executorch", "--threads", "1",
              "--input", str(inp), "--iterations", str(iterations), "--etdump", str(etdump),
              "--format", "json"])
    lat = j["latency_ms"]
    return {"p50_ms": lat["p50"], "min_ms": lat["min"], "samples": lat["samples"]}


def _short_finding(f: Dict[str, Any]) -> Dict[str, Any]:
    return {"rule": f["rule"], "severity": f["severity"], "what": f["what"],
            "time_ms": f.get("time_ms"), "share": f.get("share"),
            "where": [f"{w.get('instruction')}:{w.get('op')}" for w in f.get("where", [])][:6],
            "where_count": len(f.get("where", []))}


def _pairs(dirpath: Optional[Path]) -> List[Dict[str, Any]]:
    out = []
    for name, prob, fixed, rule, what in COMMITTED:
        out.append(dict(name=name, dir=FIXTURES, problem=prob, fixed=fixed, rule=rule, what=what,
                        committed=True))
    if dirpath and (dirpath / "pairs.json").exists():
        for p in json.loads((dirpath / "pairs.json").read_text())["pairs"]:
            out.append(dict(name=p["name"], dir=dirpath, problem=p["problem"], fixed=p["fixed"],
                            rule=p["rule"], what=p["what"] + "; fixed: " + p["fix"],
                            committed=False, match=p.get("match", ""),
                            max_abs_diff_problem_vs_fixed=p.get("max_abs_diff_problem_vs_fixed")))
    return out


def _med(xs: List[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def _machine() -> Dict[str, Any]:
    model = "?"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "kernel": platform.release(),
            "loadavg": open("/proc/loadavg").read().split()[:3]
            if os.path.exists("/proc/loadavg") else None}


def cmd_measure(args: argparse.Namespace) -> int:
    d = Path(args.dir)
    work = d / "runs"
    work.mkdir(parents=True, exist_ok=True)
    pairs = [p for p in _pairs(d) if not args.only or p["name"] in args.only]
    started = datetime.datetime.now().astimezone().isoformat(timespec="seconds")
    machine = _machine()
    print(f"machine: {machine['nproc']} CPUs, {machine['cpu']}, load {machine['loadavg']}")
    print("command: " + " ".join([sys.executable] + sys.argv))
    print(f"etscope: {ETSCOPE}; each timing: etscope run P --engine executorch --threads 1 "
          f"--input P.input0.npy --iterations {args.iterations} --etdump D --format json")
    prev: Dict[str, Any] = {}
    if args.reuse:   # re-read the kept dumps; the timings come from the earlier measure.json
        old = json.loads((Path(args.json) if args.json else d / "measure.json").read_text())
        prev = {w["pair"]: w["rounds"] for w in old["rows"]}
        args.rounds = old["rounds"]
        args.iterations = old["iterations"]
        started = old["started"] + " (timings; findings re-read " + started + ")"
        machine = old["machine"]
    res: Dict[str, Dict[str, Any]] = {
        p["name"]: {"pair": p, "problem": [], "fixed": [], "promised": [], "total": [],
                    "acted": [], "acted_all": [], "top": [], "fixed_findings": []}
        for p in pairs}
    for r in range(args.rounds):
        for p in pairs:
            rr = res[p["name"]]
            for side in ("problem", "fixed"):
                prog = p[side]
                pte = p["dir"] / f"{prog}.pte"
                inp = p["dir"] / f"{prog}.input0.npy"
                etr = p["dir"] / f"{prog}.etrecord"
                dump = work / f"{prog}.r{r}.etdp"
                if args.reuse:
                    t = dict(prev[p["name"]][side][r])
                else:
                    t = _time_once(pte, inp, args.iterations, dump)
                fj = _findings(pte, dump, etr)
                t["run_ms"] = fj.get("run_ms")
                rr[side].append(t)
                fs = fj.get("findings", [])
                if side == "problem":
                    rr["top"].append(_short_finding(fs[0]) if fs else None)
                    rr["promised"].append((fs[0].get("time_ms") or 0.0) if fs else 0.0)
                    rr["total"].append(fj.get("total_ms") or 0.0)
                    acted = [f for f in fs if f["rule"] == p["rule"]
                             and p.get("match", "") in f["what"]]
                    rr["acted"].append(sum(f.get("time_ms") or 0.0 for f in acted))
                    # The same rule with no --min-share cut: every instance the fix removes.
                    fa = _findings(pte, dump, etr, ["--min-share", "0", "--rule", p["rule"]])
                    rr["acted_all"].append(sum(f.get("time_ms") or 0.0
                                               for f in fa.get("findings", [])
                                               if p.get("match", "") in f["what"]))
                else:
                    rr["fixed_findings"].append([_short_finding(f) for f in fs])
            print(f"round {r + 1}/{args.rounds} {p['name']}: problem p50 "
                  f"{rr['problem'][-1]['p50_ms']:.3f} ms, fixed {rr['fixed'][-1]['p50_ms']:.3f} "
                  f"ms, promised {rr['promised'][-1]:.3f} ms", flush=True)

    rows = []
    for name, rr in res.items():
        p = rr["pair"]
        prob = [t["p50_ms"] for t in rr["problem"]]
        fix = [t["p50_ms"] for t in rr["fixed"]]
        prob_dump = [t["run_ms"] for t in rr["problem"]]
        fix_dump = [t["run_ms"] for t in rr["fixed"]]
        paired = [a - b for a, b in zip(prob, fix)]
        saved = _med(prob) - _med(fix)
        promised = _med(rr["promised"])
        acted = _med(rr["acted"])
        acted_all = _med(rr["acted_all"])
        top = next((t for t in rr["top"] if t), None)
        fixed_last = rr["fixed_findings"][-1] if rr["fixed_findings"] else []
        rows.append({
            "pair": name, "problem": p["problem"], "fixed": p["fixed"], "what": p["what"],
            "rule_acted_on": p["rule"], "acted_match": p.get("match", ""),
            "top_rule": top["rule"] if top else None, "top_what": top["what"] if top else None,
            "top_where_count": top["where_count"] if top else 0,
            "top_rules_over_rounds": [t["rule"] if t else None for t in rr["top"]],
            "promised_ms": promised, "promised_ms_range": [min(rr["promised"]), max(rr["promised"])],
            "acted_rule_promised_ms": acted,
            "acted_rule_promised_ms_min_share_0": acted_all,
            "ratio_vs_acted_rule_min_share_0": saved / acted_all if acted_all else None,
            "total_ms": _med(rr["total"]),
            "problem_ms": _med(prob), "problem_ms_range": [min(prob), max(prob)],
            "fixed_ms": _med(fix), "fixed_ms_range": [min(fix), max(fix)],
            "problem_dump_run_ms": _med(prob_dump), "fixed_dump_run_ms": _med(fix_dump),
            "saved_ms": saved, "saved_ms_paired_range": [min(paired), max(paired)],
            "ratio": saved / promised if promised else None,
            "ratio_vs_acted_rule": saved / acted if acted else None,
            "fixed_findings": [{"rule": f["rule"], "time_ms": f["time_ms"], "what": f["what"]}
                               for f in fixed_last],
            "max_abs_diff_problem_vs_fixed": p.get("max_abs_diff_problem_vs_fixed"),
            "rounds": {"problem": rr["problem"], "fixed": rr["fixed"],
                       "promised": rr["promised"], "total": rr["total"],
                       "acted": rr["acted"], "acted_all": rr["acted_all"],
                       "top": rr["top"], "fixed_findings": rr["fixed_findings"]},
        })

    def f3(x: Optional[float]) -> str:
        return "-" if x is None else f"{x:.3f}"

    print()
    print("| pair | top finding (rule: what) | promised ms (top) | promised ms (acted on) | "
          "all instances, --min-share 0 | total ms | problem ms (range) | fixed ms (range) | "
          "saved ms (paired range) | saved/top | saved/acted | saved/all | "
          "fixed still gets (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for w in rows:
        still = ", ".join(f"{f['rule']} {f3(f['time_ms'])}" for f in w["fixed_findings"]) or "none"
        top = f"{w['top_rule']}: {w['top_what']}" if w["top_rule"] else "none"
        acted = w["rule_acted_on"] + (f" [{w['acted_match']}]" if w["acted_match"] else "")
        ratio = lambda x: "-" if x is None else f"{x:.2f}"  # noqa: E731
        print(f"| {w['pair']} | {top} | {f3(w['promised_ms'])} | "
              f"{acted}: {f3(w['acted_rule_promised_ms'])} | "
              f"{f3(w['acted_rule_promised_ms_min_share_0'])} | {f3(w['total_ms'])} | "
              f"{f3(w['problem_ms'])} ({f3(w['problem_ms_range'][0])}-{f3(w['problem_ms_range'][1])}) | "
              f"{f3(w['fixed_ms'])} ({f3(w['fixed_ms_range'][0])}-{f3(w['fixed_ms_range'][1])}) | "
              f"{f3(w['saved_ms'])} ({f3(w['saved_ms_paired_range'][0])}..{f3(w['saved_ms_paired_range'][1])}) | "
              f"{ratio(w['ratio'])} | {ratio(w['ratio_vs_acted_rule'])} | "
              f"{ratio(w['ratio_vs_acted_rule_min_share_0'])} | {still} |")
    out = Path(args.json) if args.json else d / "measure.json"
    out.write_text(json.dumps({"started": started, "machine": machine,
                               "command": [sys.executable] + sys.argv,
                               "rounds": args.rounds, "iterations": args.iterations,
                               "rows": rows}, indent=1) + "\n")
    print(f"\nwrote {out}")
    return 0


# =========================================================================== scan


def cmd_scan(args: argparse.Namespace) -> int:
    rows = []
    print("| program | findings (rule x count) | top finding |")
    print("|---|---|---|")
    for prog in args.programs:
        try:
            j = _findings(Path(prog), None, None)
        except RuntimeError as e:
            print(f"| {prog} | error: {str(e).splitlines()[-1][:120]} | |")
            rows.append({"program": prog, "error": str(e)})
            continue
        fs = j.get("findings", [])
        counts = collections.Counter(f["rule"] for f in fs)
        top = fs[0] if fs else None
        rows.append({"program": prog, "counts": dict(counts),
                     "findings": [_short_finding(f) for f in fs]})
        c = ", ".join(f"{k} x{v}" for k, v in counts.items()) or "none"
        t = f"[{top['severity']}] {top['rule']}: {top['what']}" if top else "-"
        print(f"| {prog} | {c} | {t} |")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")
    return 0


def main(argv: List[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="export the pairs (exporter venv)")
    e.add_argument("--out", required=True)
    e.add_argument("--only", nargs="*", default=[])
    m = sub.add_parser("measure", help="time the pairs and check the promises")
    m.add_argument("--dir", required=True)
    m.add_argument("--rounds", type=int, default=5)
    m.add_argument("--iterations", type=int, default=20)
    m.add_argument("--json")
    m.add_argument("--only", nargs="*", default=[])
    m.add_argument("--reuse", action="store_true",
                   help="no timing: re-read the dumps kept in DIR/runs with the timings of the "
                        "earlier DIR/measure.json (after a change to etscope findings)")
    s = sub.add_parser("scan", help="program-only findings of some programs")
    s.add_argument("programs", nargs="+")
    s.add_argument("--json")
    a = ap.parse_args(argv)
    return {"export": cmd_export, "measure": cmd_measure, "scan": cmd_scan}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
