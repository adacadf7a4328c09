"""Export a joint forward+backward training program and record training references.

Usage: python export_training.py MODEL OUTDIR      MODEL: xor | cifar10

For each variant
  pte      : everything inside the .pte (trainable weights in the mutable segment)
  split    : ExecutorchBackendConfig(external_constants=True, external_mutable_weights=True),
             weights in <name>.split.ptd
writes <name>.<variant>.pte (+ .ptd), .etrecord, .facts.json, .memory_trace*.json.
Then runs 20 SGD steps through ExecuTorch's training module (pybindings) and through
PyTorch eager, lr 0.001, momentum 0 and 0.9, on deterministic synthetic data.
"""
from __future__ import annotations

import copy
import os
import sys
import time
from pathlib import Path
from typing import Any, Dict, List, Tuple

import numpy as np
import torch

import common  # noqa: F401
from common import (aot_graph_facts, program_facts, runtime_method_facts, save_npy,
                    tensor_to_json, to_jsonable, versions, write_json, write_ptd)

MODEL_SEED = 0
DATA_SEED = 1234
STEPS = 20
LR = 0.001
MOMENTA = (0.0, 0.9)


# ----------------------------------------------------------------------------- data


def xor_data() -> List[Tuple[torch.Tensor, torch.Tensor]]:
    from models import xor

    g = torch.Generator().manual_seed(DATA_SEED)
    order = torch.randint(0, 4, (STEPS,), generator=g).tolist()
    out = []
    for i in order:
        x, y = xor.DATA[i]
        out.append((torch.tensor([x], dtype=torch.float32), torch.tensor([y], dtype=torch.int64)))
    return out


def write_cifar_bin(path: Path, n: int) -> None:
    """Synthetic CIFAR-10 binary file: n records of 1 label byte + 3072 pixel bytes (CHW)."""
    g = torch.Generator().manual_seed(DATA_SEED)
    labels = torch.randint(0, 10, (n,), generator=g, dtype=torch.int64)
    pixels = torch.randint(0, 256, (n, 3072), generator=g, dtype=torch.int64)
    rec = torch.cat([labels[:, None], pixels], dim=1).to(torch.uint8)
    path.write_bytes(rec.numpy().tobytes())


def read_cifar_bin(path: Path, batch: int) -> List[Tuple[torch.Tensor, torch.Tensor]]:
    raw = np.frombuffer(path.read_bytes(), dtype=np.uint8).reshape(-1, 3073)
    labels = torch.from_numpy(raw[:, 0].astype(np.int64))
    imgs = torch.from_numpy(raw[:, 1:].astype(np.float32) / 255.0).reshape(-1, 3, 32, 32)
    return [(imgs[i:i + batch].contiguous(), labels[i:i + batch].contiguous())
            for i in range(0, len(raw) - batch + 1, batch)]


# ----------------------------------------------------------------------------- export


def build(name: str, dropout: bool = True):
    if name == "xor":
        from models import xor
        net = xor.make(MODEL_SEED)
        ex = xor.example_inputs()
    elif name == "cifar10":
        from models import cifar10
        net = cifar10.make_training(MODEL_SEED)
        ex = (cifar10.example_inputs(1)[0],
              torch.tensor([0, 1, 2, 3], dtype=torch.int64))
    else:
        raise SystemExit(name)
    net.train()
    if not dropout:
        for m in net.modules():
            if isinstance(m, torch.nn.Dropout):
                m.eval()
    return net, ex


def export(name: str, net, ex, split: bool, out: Path, stem: str, log) -> Dict[str, Any]:
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge
    from executorch.util.activation_memory_profiler import generate_memory_trace
    from torch.export.experimental import _export_forward_backward

    ep = torch.export.export(net, ex, strict=True)
    ep = _export_forward_backward(ep)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False),
                   generate_etrecord=True)
    cfg = ExecutorchBackendConfig(external_constants=True, external_mutable_weights=True) \
        if split else ExecutorchBackendConfig()
    et = edge.to_executorch(cfg)
    pte = bytes(et.buffer)
    (out / f"{stem}.pte").write_bytes(pte)
    files = {"pte": f"{stem}.pte"}
    if split:
        import tempfile
        with tempfile.TemporaryDirectory() as td:
            et.write_tensor_data_to_file(td)
            written = sorted(os.listdir(td))
            assert len(written) == 1, f"expected one data file, got {written}"
            (out / f"{stem}.ptd").write_bytes((Path(td) / written[0]).read_bytes())
        files["ptd"] = f"{stem}.ptd"
        files["ptd_name_written_by_executorch"] = written[0]
    etr = et.get_etrecord()
    etr.update_representative_inputs([list(ex)])
    etr.save(str(out / f"{stem}.etrecord"))
    files["etrecord"] = f"{stem}.etrecord"
    generate_memory_trace(et, str(out / f"{stem}.memory_trace.json"))
    generate_memory_trace(et, str(out / f"{stem}.memory_trace_offsets.json"),
                          enable_memory_offsets=True)
    facts = program_facts(pte)
    facts["aot_graph"] = aot_graph_facts(et)
    facts["versions"] = versions()
    facts["files"] = files
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    mod = _load_for_executorch(str(out / files["pte"]),
                               data_path=str(out / files["ptd"]) if split else None)
    facts["runtime_method_meta"] = runtime_method_facts(mod)
    # Training metadata methods, run through the runtime.
    md = {}
    for mname in mod.method_names():
        if mname.startswith("__et_training"):
            md[mname] = to_jsonable(mod.run_method(mname, ()))
    facts["training_metadata_method_results"] = md
    write_json(out / f"{stem}.facts.json", facts)
    log(f"exported {stem}: {files}")
    return files


# ----------------------------------------------------------------------------- training


def train_executorch(out: Path, files: Dict[str, str], data, momentum: float, log):
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    from executorch.extension.training import TrainingModule, get_sgd_optimizer

    mod = _load_for_executorch(str(out / files["pte"]),
                               data_path=str(out / files["ptd"]) if "ptd" in files else None)
    tm = TrainingModule(mod)
    losses, preds = [], []
    first_grads = None
    opt = None
    for step, (x, y) in enumerate(data):
        outs = tm.forward_backward("forward", (x, y))
        if opt is None:
            opt = get_sgd_optimizer(tm.named_parameters(), LR, momentum)
        grads = tm.named_gradients()
        if step == 0:
            first_grads = {k: v.clone() for k, v in grads.items()}
        opt.step(grads)
        losses.append(float(outs[0]))
        preds.append(outs[1].tolist())
    params = {k: v.clone() for k, v in tm.named_parameters().items()}
    return losses, preds, first_grads, params


def train_eager(net, data, momentum: float):
    net = copy.deepcopy(net)
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=momentum)
    named = dict(net.named_parameters())
    losses, preds = [], []
    first_grads = None
    for step, (x, y) in enumerate(data):
        opt.zero_grad()
        loss, pred = net(x, y)
        loss.backward()
        if step == 0:
            first_grads = {k: p.grad.detach().clone() for k, p in named.items()}
        opt.step()
        losses.append(float(loss))
        preds.append(pred.tolist())
    params = {k: p.detach().clone() for k, p in named.items()}
    return losses, preds, first_grads, params


def max_abs_diff(a: Dict[str, torch.Tensor], b: Dict[str, torch.Tensor]) -> Dict[str, float]:
    return {k: float((a[k].double() - b[k].double()).abs().max()) for k in a if k in b}


def main() -> None:
    name, outroot = sys.argv[1], Path(sys.argv[2])
    out = outroot / name
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    lines: List[str] = []

    def log(s: str) -> None:
        print(f"[{name}-train] {s}", flush=True)
        lines.append(s)

    # Data.
    if name == "xor":
        data = xor_data()
        data_desc = {"kind": "XOR samples drawn with torch.randint(0,4,(20,)) from "
                     f"torch.Generator().manual_seed({DATA_SEED})", "batch": 1}
    else:
        from models import cifar10
        binp = out / "synthetic_train.bin"
        write_cifar_bin(binp, STEPS * cifar10.BATCH)
        data = read_cifar_bin(binp, cifar10.BATCH)
        data_desc = {"kind": "CIFAR-10 binary format, 80 records of 1 label byte + 3072 pixel "
                     "bytes (R,G,B planes of 32x32), labels and pixels from torch.randint with "
                     f"torch.Generator().manual_seed({DATA_SEED}); pixels scaled /255; "
                     "batches of 4 in file order, no shuffling", "file": binp.name,
                     "batch": cifar10.BATCH}
    for i, (x, y) in enumerate(data[:1]):
        save_npy(out / f"{name}_train.step0.x.npy", x)
        save_npy(out / f"{name}_train.step0.label.npy", y)

    result: Dict[str, Any] = {"model": name, "steps": STEPS, "lr": LR, "data": data_desc,
                              "seeds": {"model": MODEL_SEED, "data": DATA_SEED},
                              "versions": versions(), "runs": {}}
    programs = [("train", True)]
    if name == "cifar10":
        # Dropout makes ExecuTorch's and eager's steps use different random masks; a
        # second program with the Dropout module in eval mode (no dropout op) gives a
        # deterministic ExecuTorch-vs-eager comparison.
        programs.append(("train_nodropout", False))
    for prog, dropout in programs:
        net, ex = build(name, dropout)
        init_state = {k: v.detach().clone() for k, v in net.named_parameters()}
        variants = {}
        for split in (False, True):
            if prog != "train" and split:
                continue
            stem = f"{name}_{prog}" + ("_split" if split else "")
            try:
                variants["split" if split else "pte"] = export(name, net, ex, split, out, stem, log)
            except Exception as e:
                log(f"EXPORT FAILED {stem}: {e!r}")
                result["runs"][stem] = {"export_error": repr(e)}
        for vname, files in variants.items():
            for mom in MOMENTA:
                vstem = files["pte"][:-4]
                key = f"{vstem}." + ("sgd" if mom == 0.0 else f"sgd_momentum{mom}")
                try:
                    torch.manual_seed(DATA_SEED)
                    l, p, g0, w = train_executorch(out, files, data, mom, log)
                    r: Dict[str, Any] = {"executorch": {"losses": l, "argmax": p}}
                    wfile = f"{key}.executorch_final.ptd"
                    # Full tensors as .ptd: all of xor; for cifar10 only the deterministic
                    # no-dropout program (size budget); the rest as summaries in JSON.
                    full = name == "xor" or prog == "train_nodropout"
                    if vname == "pte" and full:
                        write_ptd(out / wfile, dict(sorted(w.items())))
                        r["executorch"]["final_weights_ptd"] = wfile
                    r["executorch"]["final_weights"] = {k: tensor_to_json(v) for k, v in w.items()}
                    if mom == 0.0 and vname == "pte" and full:
                        gf = f"{vstem}.step0_grads.executorch.ptd"
                        write_ptd(out / gf, dict(sorted(g0.items())))
                        r["executorch"]["step0_grads_ptd"] = gf
                    r["executorch"]["step0_grads"] = {k: tensor_to_json(v) for k, v in g0.items()}
                    log(f"{key}: ET losses {l[0]:.6f} -> {l[-1]:.6f}")
                except Exception as e:
                    log(f"ET TRAINING FAILED {key}: {e!r}")
                    r = {"executorch_error": repr(e)}
                    w = g0 = None
                torch.manual_seed(DATA_SEED)
                el, ep_, eg0, ew = train_eager(net, data, mom)
                r["eager"] = {"losses": el, "argmax": ep_,
                              "final_weights": {k: tensor_to_json(v) for k, v in ew.items()},
                              "step0_grads": {k: tensor_to_json(v) for k, v in eg0.items()}}
                if mom == 0.0 and vname == "pte" and name == "xor":
                    gf = f"{vstem}.step0_grads.eager.ptd"
                    write_ptd(out / gf, dict(sorted(eg0.items())))
                    r["eager"]["step0_grads_ptd"] = gf
                    if name == "xor":
                        wf = f"{key}.eager_final.ptd"
                        write_ptd(out / wf, dict(sorted(ew.items())))
                        r["eager"]["final_weights_ptd"] = wf
                if w is not None:
                    r["compare"] = {
                        "max_abs_loss_diff": max(abs(a - b) for a, b in zip(l, el)),
                        "final_weights_max_abs_diff": max_abs_diff(w, ew),
                        "step0_grads_max_abs_diff": max_abs_diff(g0, eg0),
                    }
                log(f"{key}: eager losses {el[0]:.6f} -> {el[-1]:.6f}; "
                    f"compare {r.get('compare', {}).get('max_abs_loss_diff')}")
                result["runs"][key] = r
        # Initial weights, for reference.
        write_ptd(out / f"{name}_{prog}.initial_weights.ptd", dict(sorted(init_state.items()))) \
            if name == "xor" else None
    result["elapsed_s"] = round(time.time() - t0, 1)
    result["log"] = lines
    write_json(out / f"{name}.training.json", result)
    log(f"done in {result['elapsed_s']} s")


if __name__ == "__main__":
    main()
