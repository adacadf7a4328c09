"""etscope's runtime against ExecuTorch's and eager PyTorch on the same programs, interleaved.

Run with the fixtures' virtualenv (it has executorch and torch):
    build/export-venv/bin/python bench/bench_runtime.py [--build build] [--rounds 5] [--iterations 20]
                                                        [--suite portable|xnnpack|all]

--suite xnnpack times the XNNPACK-delegated programs (tests/fixtures/executorch/xnnpack): etscope
executes their delegates with its own kernels, ExecuTorch with XNNPACK (one thread).

Both sides run single-threaded (ExecuTorch's threadpool is reset to one thread) on identical
inputs; each round runs etscope's runtime_bench in a subprocess, then the same number of
ExecuTorch executions in this process, then (for inference programs whose PyTorch module this
repository builds: cifar10 and the model zoo of samples/export/export_models.py) the same number of
eager PyTorch calls under torch.no_grad() with torch.set_num_threads(1); the medians of all rounds
are compared. Eager time does not depend on the weights' values, so the zoo's modules are rebuilt
with the exporter's seed and fed the stored inputs.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "samples"))


def export_cifar10_batch1(path):
    """The fixtures hold cifar10 at batch 4; export the same model at batch 1 for the benchmark."""
    import torch
    from executorch.exir import to_edge_transform_and_lower
    from models import cifar10

    model = cifar10.make(0).eval()
    ep = torch.export.export(model, (torch.randn(1, 3, 32, 32),))
    et = to_edge_transform_and_lower(ep).to_executorch()
    with open(path, "wb") as f:
        f.write(et.buffer)


def eager_module(name):
    """The eager PyTorch module behind a benchmark case, or None (training steps, unknown programs)."""
    import torch

    if name.startswith("cifar10 inference"):
        from models import cifar10

        return cifar10.make(0).eval()
    sys.path.insert(0, os.path.join(ROOT, "samples", "export"))
    import export_models

    builder = export_models.MODELS.get(name)
    if builder is None:
        return None
    torch.manual_seed(export_models.MODEL_SEED)
    spec = builder()
    return None if spec.get("kind", "infer") != "infer" else spec["model"].eval()


def et_inputs(paths):
    import numpy as np
    import torch

    return tuple(torch.from_numpy(np.load(p)) for p in paths)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--suite", choices=("portable", "xnnpack", "all"), default="portable")
    args = ap.parse_args()

    from executorch.extension.pybindings import portable_lib as pl
    import executorch.kernels.quantized  # noqa: F401  ExecuTorch's quantized kernels (zoo's pt2e and LLM programs)
    import numpy as np

    import torch

    pl._unsafe_reset_threadpool(1)
    torch.set_num_threads(1)
    fx = os.path.join(ROOT, "tests", "fixtures", "executorch")
    fx_build = os.path.join(args.build, "fixtures", "executorch")

    def fixture(rel):
        p = os.path.join(fx, rel)
        return p if os.path.exists(p) else os.path.join(fx_build, rel)

    bench_dir = os.path.join(args.build, "bench")
    os.makedirs(bench_dir, exist_ok=True)
    b1 = os.path.join(bench_dir, "cifar10_b1.pte")
    if not os.path.exists(b1):
        export_cifar10_batch1(b1)
    b1_input = os.path.join(bench_dir, "cifar10_b1.input0.npy")
    if not os.path.exists(b1_input):
        np.save(b1_input, np.random.default_rng(0).uniform(-1, 1, (1, 3, 32, 32)).astype(np.float32))

    cases = [
        ("cifar10 inference, batch 1", b1, [b1_input]),
        ("cifar10 inference, batch 4", fixture("cifar10/cifar10.pte"), [fixture("cifar10/cifar10.input0.npy")]),
        ("cifar10 training step, batch 4", fixture("cifar10/cifar10_train.pte"),
         [fixture("cifar10/cifar10_train.step0.x.npy"), fixture("cifar10/cifar10_train.step0.label.npy")]),
        ("mobilenet_v2 inference, batch 1", fixture("mobilenet_v2/mobilenet_v2.pte"), [fixture("mobilenet_v2/mobilenet_v2.input0.npy")]),
    ]
    # Families beyond the samples (tests/fixtures/executorch/models, made by export_models.py).
    with open(fixture("models/index.json")) as f:
        zoo = sorted({k.split(".")[0] for k in json.load(f)})
    for model in [m for m in zoo if m not in ("index", "models") and not m.startswith("train_")]:
        pte = fixture(f"models/{model}.pte")
        if os.path.exists(pte):
            inputs, i = [], 0
            while os.path.exists(fixture(f"models/{model}.input{i}.npy")):
                inputs.append(fixture(f"models/{model}.input{i}.npy"))
                i += 1
            cases.append((model, pte, inputs))
    # XNNPACK-delegated programs (tests/fixtures/executorch/xnnpack, made by export_xnnpack.py).
    xnn_cases = []
    with open(fixture("xnnpack/index.json")) as f:
        for model in sorted({k.split(".")[0] for k in json.load(f) if k.endswith(".pte")}):
            inputs, i = [], 0
            while os.path.exists(fixture(f"xnnpack/{model}.input{i}.npy")):
                inputs.append(fixture(f"xnnpack/{model}.input{i}.npy"))
                i += 1
            xnn_cases.append((model, fixture(f"xnnpack/{model}.pte"), inputs))
    if args.suite == "xnnpack":
        cases = xnn_cases
    elif args.suite == "all":
        cases += xnn_cases
    runtime_bench = os.path.join(args.build, "bin", "runtime_bench")
    print(f"machine: {os.cpu_count()} cores; both runtimes single-threaded; {args.rounds} rounds x {args.iterations} iterations")
    print(f"{'case':<32} {'etscope ms':>11} {'ExecuTorch ms':>14} {'vs ET':>7} {'eager ms':>9} {'vs eager':>9} "
          f"{'etscope RSS beyond arenas+weights':>34}")
    for name, pte, inputs in cases:
        module = pl._load_for_executorch(pte)
        ins = et_inputs(inputs)
        eager = eager_module(name)
        for _ in range(3):
            module.forward(ins)
            if eager is not None:
                with torch.no_grad():
                    eager(*ins)
        ours, theirs, eager_ms, extra_rss = [], [], [], None
        for _ in range(args.rounds):
            cmd = [runtime_bench, pte, "--iterations", str(args.iterations), "--warmup", "3"]
            for i in inputs:
                cmd += ["--input", i]
            out = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout)
            ours += out["samples_ms"]
            extra_rss = out["peak_rss_kb"] * 1024 - out["arena_bytes"] - out["file_bytes"]
            for _ in range(args.iterations):
                t0 = time.perf_counter()
                module.forward(ins)
                theirs.append((time.perf_counter() - t0) * 1e3)
            if eager is not None:
                with torch.no_grad():
                    for _ in range(args.iterations):
                        t0 = time.perf_counter()
                        eager(*ins)
                        eager_ms.append((time.perf_counter() - t0) * 1e3)
        o, t = statistics.median(ours), statistics.median(theirs)
        e = f"{statistics.median(eager_ms):>9.3f} {statistics.median(eager_ms) / o:>8.2f}x" if eager_ms else f"{'-':>9} {'-':>9}"
        print(f"{name:<32} {o:>11.3f} {t:>14.3f} {t / o:>6.1f}x {e} {extra_rss / 2**20:>30.1f} MiB")


if __name__ == "__main__":
    main()
