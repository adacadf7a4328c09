"""Run every program written by export_models.py through `etscope run` and compare.

Usage: python check_models.py ETSCOPE_BINARY MODELDIR [names...]

For each <name>.json in MODELDIR and each of its methods: `etscope run <name>.pte --method M
--input <inputs> --output-dir TMP --iterations 1 --warmup 0`, then max abs / max rel error of
every output against ExecuTorch's own <name>[.<method>].output<i>.npy. Prints one line per
method: ok (with errors), MISMATCH, or REFUSED with etscope's message.
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def check(etscope: str, d: Path, name: str) -> bool:
    meta = json.loads((d / f"{name}.json").read_text())
    good = True
    for method, entry in meta["methods"].items():
        prefix = name if method == "forward" else f"{name}.{method}"
        inputs = [str(d / f"{prefix}.input{i}.npy") for i in range(len(entry["inputs"]))]
        with tempfile.TemporaryDirectory() as td:
            cmd = [etscope, "run", str(d / f"{name}.pte"), "--method", method, "--input", *inputs,
                   "--output-dir", td, "--iterations", "1", "--warmup", "0"]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                msg = (r.stderr.strip() or r.stdout.strip()).replace("\n", " | ")
                print(f"{name}:{method}: REFUSED {msg}")
                good = False
                continue
            errs = []
            for i, o in enumerate(entry["outputs"]):
                if "shape" not in o:
                    continue
                want = np.load(d / f"{prefix}.output{i}.npy")
                gp = Path(td) / f"output_{i}.npy"
                if not gp.exists():
                    errs.append(f"out{i}: missing")
                    good = False
                    continue
                got = np.load(gp)
                if got.shape != want.shape or got.dtype != want.dtype:
                    errs.append(f"out{i}: {got.dtype}{list(got.shape)} != {want.dtype}{list(want.shape)}")
                    good = False
                    continue
                a, b = got.astype(np.float64), want.astype(np.float64)
                fin = np.isfinite(b)
                if not np.array_equal(np.isfinite(a), fin) or not np.array_equal(a[~fin], b[~fin]):
                    errs.append(f"out{i}: non-finite values differ")
                    good = False
                    continue
                diff = np.abs(a[fin] - b[fin])
                mabs = float(diff.max()) if diff.size else 0.0
                mrel = float((diff / np.maximum(np.abs(b[fin]), 1e-30)).max()) if diff.size else 0.0
                ok = bool(np.all(diff <= 1e-5 + 1e-4 * np.abs(b[fin])))
                if np.issubdtype(want.dtype, np.integer) or want.dtype == np.bool_:
                    ok = mabs == 0.0
                good &= ok
                errs.append(f"out{i}: abs {mabs:.3g} rel {mrel:.3g}{'' if ok else ' MISMATCH'}")
            print(f"{name}:{method}: {'ok' if good else 'MISMATCH'} " + "; ".join(errs))
    return good


def main() -> None:
    etscope, d = sys.argv[1], Path(sys.argv[2])
    names = sys.argv[3:] or sorted(p.stem for p in d.glob("*.json") if p.stem != "index")
    bad = [n for n in names if not check(etscope, d, n)]
    print(f"{len(names) - len(bad)}/{len(names)} programs run and match")


if __name__ == "__main__":
    main()
