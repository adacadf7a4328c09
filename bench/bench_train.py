"""`etscope train` against ExecuTorch's TrainingModule + SGD and eager PyTorch, interleaved, and
a check that ExecuTorch's runtime loads the weights etscope saves.

Run with the fixtures' virtualenv (it has executorch and torch):
    build/export-venv/bin/python bench/bench_train.py [--build build] [--rounds 5] [--steps 20]
        [--batches 4,32] [--check]

Speed: the CIFAR-10 fine-tuning network of samples/models/cifar10 (dropout off, so every side
computes the same thing), exported as a training program at each batch size with the exporter
of samples/export/export_training.py, trained on synthetic CIFAR-10 records with SGD (lr 0.001,
momentum 0.9). Each round runs `etscope train --steps N` in a subprocess (its per-step times come
from --curve: forward-backward + optimizer, the process's load left out), then N steps of
ExecuTorch's TrainingModule.forward_backward + SGD.step in this process, then N steps of the
eager module with torch.optim.SGD; one thread everywhere; the medians of all steps of all rounds
are compared.

--check: for the split form (.pte + .ptd) of the same network and of the fixtures' MLP, etscope
trains K steps and saves; ExecuTorch's runtime loads the split program with etscope's .ptd and
runs batch K; its loss must equal etscope's loss at step K+1 (from a K+1-step run).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "samples"))
sys.path.insert(0, os.path.join(ROOT, "samples", "export"))

LR = 0.001
MOMENTUM = 0.9


def cifar_net():
    import torch
    from models import cifar10

    torch.manual_seed(0)
    net = cifar10.make_training(0)
    net.train()
    for m in net.modules():
        if isinstance(m, torch.nn.Dropout):
            m.eval()
    return net


def export_training(net, batch, path, split):
    import torch
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge
    from torch.export.experimental import _export_forward_backward

    ex = (torch.rand(batch, 3, 32, 32), torch.randint(0, 10, (batch,)))
    ep = _export_forward_backward(torch.export.export(net, ex, strict=True))
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    cfg = ExecutorchBackendConfig(external_constants=True, external_mutable_weights=True) if split \
        else ExecutorchBackendConfig()
    et = edge.to_executorch(cfg)
    with open(path, "wb") as f:
        f.write(et.buffer)
    if split:
        with tempfile.TemporaryDirectory() as td:
            et.write_tensor_data_to_file(td)
            (name,) = os.listdir(td)
            ptd = path[:-4] + ".ptd"
            with open(os.path.join(td, name), "rb") as src, open(ptd, "wb") as dst:
                dst.write(src.read())
            return ptd
    return None


def write_cifar(path, records):
    import torch

    g = torch.Generator().manual_seed(1234)
    labels = torch.randint(0, 10, (records,), generator=g, dtype=torch.uint8)
    pixels = torch.randint(0, 256, (records, 3072), generator=g, dtype=torch.uint8)
    with open(path, "wb") as f:
        for i in range(records):
            f.write(bytes([int(labels[i])]))
            f.write(pixels[i].numpy().tobytes())


def read_cifar(path, batch):
    import numpy as np
    import torch

    raw = np.fromfile(path, dtype=np.uint8).reshape(-1, 3073)
    x = torch.from_numpy(raw[:, 1:].astype(np.float32) / 255.0).reshape(-1, 3, 32, 32)
    y = torch.from_numpy(raw[:, 0].astype(np.int64))
    return [(x[i:i + batch].contiguous(), y[i:i + batch].contiguous()) for i in range(0, len(raw) - batch + 1, batch)]


def etscope_steps(etscope, pte, data, steps, workdir, extra=()):
    curve = os.path.join(workdir, "curve.json")
    cmd = [etscope, "train", pte, "--data", *data, "--steps", str(steps), "--lr", str(LR), "--momentum", str(MOMENTUM),
           "--curve", curve, *extra]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with open(curve) as f:
        return json.load(f)


def executorch_steps(pte, batches, steps):
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    from executorch.extension.training import TrainingModule, get_sgd_optimizer

    tm = TrainingModule(_load_for_executorch(pte))
    opt = None
    times = []
    for k in range(steps):
        x, y = batches[k % len(batches)]
        t0 = time.perf_counter()
        tm.forward_backward("forward", (x, y))
        if opt is None:
            opt = get_sgd_optimizer(tm.named_parameters(), LR, MOMENTUM, 0.0, 0.0, False)
        opt.step(tm.named_gradients())
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def eager_steps(net, batches, steps):
    import copy

    import torch

    net = copy.deepcopy(net)
    opt = torch.optim.SGD(net.parameters(), lr=LR, momentum=MOMENTUM)
    times = []
    for k in range(steps):
        x, y = batches[k % len(batches)]
        t0 = time.perf_counter()
        opt.zero_grad()
        loss = net(x, y)[0]
        loss.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def bench(args, etscope, work):
    net = cifar_net()
    cifar = os.path.join(work, "train.bin")
    for batch in [int(b) for b in args.batches.split(",")]:
        records = batch * args.steps
        write_cifar(cifar, records)
        batches = read_cifar(cifar, batch)
        pte = os.path.join(work, f"cifar10_train_b{batch}.pte")
        export_training(net, batch, pte, split=False)
        et_ms, ea_ms, es_ms, es_fb, es_opt = [], [], [], [], []
        for _ in range(args.rounds):
            c = etscope_steps(etscope, pte, [cifar], args.steps, work)
            es_ms += c["step_ms"]
            es_fb += c["forward_backward_ms"]
            es_opt += c["optimizer_ms"]
            et_ms += executorch_steps(pte, batches, args.steps)
            ea_ms += eager_steps(net, batches, args.steps)
        m = statistics.median
        print(f"cifar10 fine-tuning, batch {batch}, SGD momentum {MOMENTUM}: median step "
              f"etscope {m(es_ms):.2f} ms (fwd+bwd {m(es_fb):.2f}, optimizer {m(es_opt):.3f}), "
              f"ExecuTorch {m(et_ms):.2f} ms, eager {m(ea_ms):.2f} ms; "
              f"steps/s etscope {1e3 / m(es_ms):.1f}, ExecuTorch {1e3 / m(et_ms):.1f}, eager {1e3 / m(ea_ms):.1f}; "
              f"ExecuTorch/etscope {m(et_ms) / m(es_ms):.1f}x, eager/etscope {m(ea_ms) / m(es_ms):.2f}x",
              flush=True)


def check(etscope, work):
    import numpy as np
    import torch
    from executorch.extension.pybindings.portable_lib import _load_for_executorch
    from executorch.extension.training import TrainingModule

    fx = os.path.join(ROOT, "tests", "fixtures", "executorch", "training")
    cases = [("mlp_mse_split", os.path.join(fx, "mlp_mse_split.pte"), os.path.join(fx, "mlp_mse_split.ptd"),
              [os.path.join(fx, "mlp_mse.data0.npy"), os.path.join(fx, "mlp_mse.data1.npy")], 4)]
    pte = os.path.join(work, "cifar10_split.pte")
    ptd = export_training(cifar_net(), 4, pte, split=True)
    cifar = os.path.join(work, "check.bin")
    write_cifar(cifar, 80)
    cases.append(("cifar10_split (no dropout)", pte, ptd, [cifar], 4))
    for name, pte, ptd, data, batch in cases:
        for k in (5, 12):
            saved = os.path.join(work, "saved.ptd")
            etscope_steps(etscope, pte, data, k, work, ["--ptd", ptd, "--save", saved])
            mine = etscope_steps(etscope, pte, data, k + 1, work, ["--ptd", ptd])["loss"][k]
            tm = TrainingModule(_load_for_executorch(pte, data_path=saved))
            if data[0].endswith(".bin"):
                x, y = read_cifar(data[0], batch)[k]
                inputs = (x, y)
            else:
                inputs = tuple(torch.from_numpy(np.load(f)[k * batch:(k + 1) * batch].copy()) for f in data)
            theirs = float(tm.forward_backward("forward", inputs)[0])
            print(f"check {name}: after {k} etscope steps, ExecuTorch's loss on batch {k} with etscope's .ptd "
                  f"{theirs:.9g}, etscope's {mine:.9g}, |diff| {abs(theirs - mine):.3g}", flush=True)
            assert abs(theirs - mine) <= 1e-5 * max(1.0, abs(mine)), name


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--batches", default="4,32")
    ap.add_argument("--check", action="store_true", help="only the .ptd check")
    args = ap.parse_args()

    import torch
    from executorch.extension.pybindings import portable_lib as pl

    pl._unsafe_reset_threadpool(1)
    torch.set_num_threads(1)
    etscope = os.path.join(args.build, "bin", "etscope")
    with tempfile.TemporaryDirectory() as work:
        if args.check:
            check(etscope, work)
        else:
            bench(args, etscope, work)


if __name__ == "__main__":
    main()
