"""etscope's two engines against ExecuTorch's own Python runtime, on the same .pte, interleaved.

    <venv>/bin/python bench/bench_engines.py [--build build] [--rounds 5] [--iterations 20] DIR...

Each DIR holds one program as samples/export/export_registry.py writes it (model.pte,
input<i>.npy, et_output<i>.npy, result.json); a folder of such folders is searched one level
down. Per program and round, one after the other on one thread each:
- ExecuTorch's Python runtime (the pybindings, threadpool reset to 1 thread): `iterations`
  calls of run_method, timed one by one with perf_counter_ns (this includes pybind's input and
  output conversion, a few microseconds);
- `etscope run --engine executorch --threads 1`: the same library in etscope's worker, each
  execution timed inside the worker (setting the inputs again plus Method::execute);
- `etscope run --engine etscope`: etscope's own kernels.
With --eager, each round also times eager PyTorch (the registry's module rebuilt as
export_registry.py builds it: same seed, same BatchNorm statistics, the .pte's inputs) under
torch.no_grad(), one thread: the issue's yardstick for portable programs ("etscope vs eager" =
eager time / etscope engine time). xnnpack_int8 programs are skipped (their eager form is the
quantizer's simulated graph, not a model a user runs).
--no-executorch leaves ExecuTorch's engine out (its portable kernels take seconds per run of a
registry CNN): the etscope engine alone, with eager beside it under --eager.
With --threads N (N > 1), each round also times both engines with --threads N (ExecuTorch's
threadpool; etscope's pool for the XNNPACK layers it splits): the scaling of each engine from 1
to N threads, and the ratio at N.
The figure per side is the median over all rounds of each round's median. Output: a table (and
--json FILE) with each ratio, and whether the ExecuTorch engine's outputs equal ExecuTorch's
recorded ones (bit for bit, or the largest difference).
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np


def program_dirs(paths):
    out = []
    for p in paths:
        if os.path.exists(os.path.join(p, "model.pte")):
            out.append(p)
        else:
            out.extend(sorted(d for d in glob.glob(os.path.join(p, "*")) if os.path.exists(os.path.join(d, "model.pte"))))
    return out


def inputs_of(d):
    return sorted(glob.glob(os.path.join(d, "input*.npy")), key=lambda p: int(os.path.basename(p)[5:-4]))


def etscope_median(etscope, d, engine, iterations, warmup, outdir=None, threads=1):
    cmd = [etscope, "run", os.path.join(d, "model.pte"), "--engine", engine, "--threads", str(threads), "--iterations", str(iterations),
           "--warmup", str(warmup), "--format", "json"]
    for i in inputs_of(d):
        cmd += ["--input", i]
    if outdir:
        cmd += ["--output-dir", outdir]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}")
    return json.loads(r.stdout)["latency_ms"]["p50"]


def median_ms(call, warmup, iterations):
    """Median wall time of `iterations` calls, each timed alone, after `warmup` untimed ones."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(iterations):
        t = time.perf_counter_ns()
        call()
        samples.append((time.perf_counter_ns() - t) / 1e6)
    return statistics.median(samples)


def eager_model(d):
    """The eager module behind a registry program (as export_registry.py builds it), or None."""
    with open(os.path.join(d, "result.json")) as fh:
        res = json.load(fh)
    if res.get("variant") == "xnnpack_int8":
        return None
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "samples", "export"))
    import torch
    import export_registry as reg

    spec = reg.MODELS.get(res.get("model"))
    if spec is None:
        return None
    torch.manual_seed(reg.MODEL_SEED)
    model = spec["build"]().eval()
    reg._calibrate_bn(model, spec["inputs"])
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1, help="also time both engines on this many threads")
    ap.add_argument("--eager", action="store_true", help="also time eager PyTorch (registry programs)")
    ap.add_argument("--no-executorch", action="store_true",
                    help="time only the etscope engine (and eager with --eager): ExecuTorch's portable kernels "
                         "take seconds per run of a registry CNN")
    ap.add_argument("--json")
    args = ap.parse_args()
    etscope = os.path.join(args.build, "bin", "etscope")

    import torch
    from executorch.extension.pybindings import portable_lib
    import executorch.kernels.quantized  # noqa: F401  registers quantized_decomposed::* kernels
    torch.set_num_threads(1)
    portable_lib._unsafe_reset_threadpool(1)
    assert portable_lib._threadpool_get_thread_count() == 1

    rows = []
    for d in program_dirs(args.dirs):
        name = os.path.basename(os.path.normpath(d))
        row = {"program": name}
        try:
            with open(os.path.join(d, "model.pte"), "rb") as f:
                pte = f.read()  # the module reads from this buffer: keep it alive
            m = portable_lib._load_for_executorch_from_buffer(pte)
            ins = tuple(torch.from_numpy(np.load(p)) for p in inputs_of(d))
            # Outputs: the ExecuTorch engine against ExecuTorch's recorded ones.
            with tempfile.TemporaryDirectory() as out:
                etscope_median(etscope, d, "executorch" if not args.no_executorch else "etscope", 1, 0, out)
                diffs = []
                for k, ref in enumerate(sorted(glob.glob(os.path.join(d, "et_output*.npy")))):
                    a, e = np.load(os.path.join(out, f"output_{k}.npy")), np.load(ref)
                    same = a.shape == e.shape and a.tobytes() == e.tobytes()
                    diffs.append(0.0 if same else float(np.max(np.abs(a.astype(np.float64) - e.astype(np.float64)))))
                # Without ExecuTorch's engine (--no-executorch), the etscope engine's outputs instead.
                key = "etscope_outputs_max_abs_diff" if args.no_executorch else "outputs_max_abs_diff"
                row[key] = max(diffs) if diffs else None
            eager = eager_model(d) if args.eager else None
            py, et, own, et_n, own_n, ea = [], [], [], [], [], []
            for _ in range(args.rounds):
                if not args.no_executorch:
                    py.append(median_ms(lambda: m.run_method("forward", ins), args.warmup, args.iterations))
                    et.append(etscope_median(etscope, d, "executorch", args.iterations, args.warmup))
                try:
                    own.append(etscope_median(etscope, d, "etscope", args.iterations, args.warmup))
                except RuntimeError as e:
                    row["etscope_engine"] = str(e)
                if eager is not None:
                    with torch.no_grad():
                        ea.append(median_ms(lambda: eager(*ins), args.warmup, args.iterations))
                if args.threads > 1 and not args.no_executorch:
                    et_n.append(etscope_median(etscope, d, "executorch", args.iterations, args.warmup, threads=args.threads))
                    try:
                        own_n.append(etscope_median(etscope, d, "etscope", args.iterations, args.warmup, threads=args.threads))
                    except RuntimeError:
                        pass
            if et:
                row["executorch_python_ms"] = statistics.median(py)
                row["executorch_engine_ms"] = statistics.median(et)
                row["engine_vs_python"] = row["executorch_engine_ms"] / row["executorch_python_ms"]
            if own:
                row["etscope_engine_ms"] = statistics.median(own)
                if et:
                    row["etscope_speed"] = row["executorch_engine_ms"] / row["etscope_engine_ms"]
            if ea:
                row["eager_ms"] = statistics.median(ea)
                if own:
                    row["etscope_vs_eager"] = row["eager_ms"] / row["etscope_engine_ms"]
            t = args.threads
            if et_n:
                row[f"executorch_engine_ms_t{t}"] = statistics.median(et_n)
                row[f"executorch_scaling_t{t}"] = row["executorch_engine_ms"] / row[f"executorch_engine_ms_t{t}"]
            if own_n and own:
                row[f"etscope_engine_ms_t{t}"] = statistics.median(own_n)
                row[f"etscope_scaling_t{t}"] = row["etscope_engine_ms"] / row[f"etscope_engine_ms_t{t}"]
                row[f"etscope_speed_t{t}"] = row[f"executorch_engine_ms_t{t}"] / row[f"etscope_engine_ms_t{t}"]
        except Exception as e:  # one line per program that could not be measured
            row["error"] = str(e).splitlines()[0] if str(e) else type(e).__name__
        rows.append(row)
        print(json.dumps(row), file=sys.stderr, flush=True)

    def f(v, fmt):
        return fmt % v if isinstance(v, (int, float)) else "-"

    print("| program | ExecuTorch (Python) ms | ExecuTorch engine ms | engine/Python | etscope engine ms | etscope speed vs ExecuTorch | outputs |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        if "error" in r:
            print(f"| {r['program']} | error: {r['error']} |||||| ")
            continue
        diff = r.get("outputs_max_abs_diff")
        out = "bit for bit" if diff == 0.0 else ("-" if diff is None else "max diff %.3g" % diff)
        print(f"| {r['program']} | {f(r.get('executorch_python_ms'), '%.4g')} | {f(r.get('executorch_engine_ms'), '%.4g')} | "
              f"{f(r.get('engine_vs_python'), '%.3f')} | {f(r.get('etscope_engine_ms'), '%.4g')} | {f(r.get('etscope_speed'), '%.2fx')} | {out} |")
    if args.eager:
        print()
        print("| program | eager PyTorch ms | etscope engine ms | etscope vs eager |")
        print("|---|---|---|---|")
        for r in rows:
            if "eager_ms" in r:
                print(f"| {r['program']} | {f(r['eager_ms'], '%.4g')} | {f(r.get('etscope_engine_ms'), '%.4g')} | "
                      f"{f(r.get('etscope_vs_eager'), '%.2fx')} |")
    if args.threads > 1:
        t = args.threads
        print()
        print(f"| program | ExecuTorch engine 1 / {t} threads ms | scaling | etscope engine 1 / {t} threads ms | scaling | etscope speed at {t} |")
        print("|---|---|---|---|---|---|")
        for r in rows:
            if "error" in r:
                continue
            print(f"| {r['program']} | {f(r.get('executorch_engine_ms'), '%.4g')} / {f(r.get(f'executorch_engine_ms_t{t}'), '%.4g')} | "
                  f"{f(r.get(f'executorch_scaling_t{t}'), '%.2fx')} | {f(r.get('etscope_engine_ms'), '%.4g')} / "
                  f"{f(r.get(f'etscope_engine_ms_t{t}'), '%.4g')} | {f(r.get(f'etscope_scaling_t{t}'), '%.2fx')} | "
                  f"{f(r.get(f'etscope_speed_t{t}'), '%.2fx')} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
