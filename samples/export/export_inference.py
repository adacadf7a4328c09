"""Export an inference model with ExecuTorch and record reference answers.

Usage: python export_inference.py MODEL OUTDIR
MODEL: simple_conv | simple_conv_xnnpack | cifar10 | mobilenet_v2 | mobilenet_v2_xnnpack

Writes into OUTDIR/<MODEL>/:
  <m>.pte, <m>.etrecord, <m>.bpte, <m>.facts.json, <m>.memory_trace.json,
  <m>.memory_trace_offsets.json, <m>.input0.npy (the ETDump-run input),
  <m>.testcase{0,1}.input0.npy / .expected0.npy, <m>.etdp + <m>.debug.bin,
  <m>.profile.etdp, <m>.etdump.json, <m>.inspector.json,
  <m>.aot_intermediates.ptd/.json, <m>.run.json
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import torch

import common  # noqa: F401  (sets sys.path for models)
from common import (aot_graph_facts, program_facts, runtime_method_facts, save_npy,
                    versions, write_json)
from inspect_tools import run_cpp_program_outputs, run_inspector, run_with_etdump

MODEL_SEED = 0          # torch.manual_seed before building the model
TESTCASE_SEEDS = (1, 2)  # input generators for the two bundled test cases
ETDUMP_INPUT_SEED = 1    # the ETDump runs use test case 0's input


def build(name: str):
    """Return (model, input_fn(seed), partitioner-or-None, top-level module names)."""
    if name.startswith("simple_conv"):
        from models import simple_conv as m
        model = m.make(MODEL_SEED)
    elif name == "cifar10":
        from models import cifar10 as m
        model = m.make(MODEL_SEED).eval()
    elif name.startswith("mobilenet_v2"):
        from models import mobilenet_v2 as m
        # 10 classes instead of torchvision's 1000 keeps the fixtures under the size
        # budget (the 1280x1000 classifier weight and its runtime permute_copy alone
        # would add ~5 MB per copy).
        nc = int(os.environ.get("ETSCOPE_MOBILENET_CLASSES", "10"))
        model = m.make(MODEL_SEED, num_classes=nc)
    else:
        raise SystemExit(f"unknown model {name}")
    part = None
    if name.endswith("_xnnpack"):
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        part = [XnnpackPartitioner()]
    tops = [n for n, _ in model.named_children()]
    return model, m.example_inputs, part, tops


def main() -> None:
    name, outroot = sys.argv[1], Path(sys.argv[2])
    out = outroot / name
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    log_lines = []

    def log(s: str) -> None:
        print(f"[{name}] {s}", flush=True)
        log_lines.append(s)

    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import (
        serialize_from_bundled_program_to_flatbuffer,
    )
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
    )
    from executorch.util.activation_memory_profiler import generate_memory_trace

    model, input_fn, partitioner, tops = build(name)
    example = input_fn(ETDUMP_INPUT_SEED)
    ep = torch.export.export(model, example)
    edge = to_edge_transform_and_lower(ep, partitioner=partitioner, generate_etrecord=True)
    et = edge.to_executorch()
    pte = bytes(et.buffer)
    (out / f"{name}.pte").write_bytes(pte)
    log(f"pte {len(pte)} bytes")

    # Bundled program: two test cases, expected outputs from PyTorch eager.
    cases = []
    for i, s in enumerate(TESTCASE_SEEDS):
        inp = input_fn(s)
        with torch.no_grad():
            exp = model(*inp)
        exp = exp if isinstance(exp, tuple) else (exp,)
        cases.append(MethodTestCase(inputs=list(inp), expected_outputs=list(exp)))
        for j, t in enumerate(inp):
            save_npy(out / f"{name}.testcase{i}.input{j}.npy", t)
        for j, t in enumerate(exp):
            save_npy(out / f"{name}.testcase{i}.expected{j}.npy", t)
    bp = BundledProgram(et, [MethodTestSuite(method_name="forward", test_cases=cases)])
    (out / f"{name}.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))

    etr = et.get_etrecord()
    etr.update_representative_inputs(bp)
    etr.update_reference_outputs(bp)
    etr.save(str(out / f"{name}.etrecord"))

    # Memory plan, as the activation memory profiler writes it.
    memory_trace = {}
    try:
        generate_memory_trace(et, str(out / f"{name}.memory_trace.json"))
        generate_memory_trace(et, str(out / f"{name}.memory_trace_offsets.json"),
                              enable_memory_offsets=True)
        memory_trace = {"files": [f"{name}.memory_trace.json",
                                  f"{name}.memory_trace_offsets.json"]}
    except Exception as ex:
        memory_trace = {"error": repr(ex)}
        log(f"generate_memory_trace failed: {ex!r}")

    # Facts.
    facts = program_facts(pte)
    rt = _load_for_executorch_from_buffer(pte)
    facts["runtime_method_meta"] = runtime_method_facts(rt)
    facts["aot_graph"] = aot_graph_facts(et)
    facts["versions"] = versions()
    write_json(out / f"{name}.facts.json", facts)

    # Bundled program verification through the runtime (reference answer).
    bundled_check = {}
    try:
        from executorch.extension.pybindings.portable_lib import (
            _load_bundled_program_from_buffer)
        bbytes = (out / f"{name}.bpte").read_bytes()
        bmod = _load_bundled_program_from_buffer(bbytes)
        for i in range(len(TESTCASE_SEEDS)):
            bmod.verify_result_with_bundled_expected_output("forward", i, 1e-3, 1e-5)
            bundled_check[f"testcase{i}"] = "verified by BundledModule.verify_result_with_bundled_expected_output (rtol=1e-3, atol=1e-5)"
    except Exception as ex:
        bundled_check["error"] = repr(ex)
    log(f"bundled verification: {bundled_check}")

    # ETDump runs through ExecuTorch's runtime.
    for j, t in enumerate(example):
        save_npy(out / f"{name}.input{j}.npy", t)

    def load(**kw):
        return _load_for_executorch_from_buffer(pte, **kw)

    info = run_with_etdump(load, example, out, name, runs=10, log=log)
    with torch.no_grad():
        eager = model(*example)
    eager = eager if isinstance(eager, tuple) else (eager,)
    info["eager_outputs"] = [common.to_jsonable(o) for o in eager]
    log(f"etdump: {info['intermediate']}, per-op events {info['per_operator_profile_events']},"
        f" delegate events {info['delegate_profile_events']}, debug events {info['debug_events']}")
    insp = run_inspector(out, name, out / f"{name}.etrecord", tops, log=log)
    runner = os.environ.get("ETSCOPE_ETDUMP_RUNNER", "")
    if runner and os.path.exists(runner):
        try:
            info["program_outputs_level"] = run_cpp_program_outputs(
                runner, out / f"{name}.pte",
                [out / f"{name}.input{j}.npy" for j in range(len(example))], out, name, 10, log)
            run_inspector(out, name, out / f"{name}.etrecord", tops, log=log,
                          variant=".program_outputs", numeric_gap=False)
            log(f"program outputs level: {info['program_outputs_level']}")
        except Exception as ex:
            info["program_outputs_level"] = {"error": repr(ex)}
            log(f"program outputs level failed: {ex!r}")
    else:
        info["program_outputs_level"] = {"error": "ETSCOPE_ETDUMP_RUNNER not set or missing"}
    info["inspector_aot_reference_graph"] = insp.get("aot_reference_graph")
    info["bundled_verification"] = bundled_check
    info["memory_trace"] = memory_trace
    info["seeds"] = {"model": MODEL_SEED, "testcases": list(TESTCASE_SEEDS),
                     "etdump_input": ETDUMP_INPUT_SEED}
    info["versions"] = versions()
    info["elapsed_s"] = round(time.time() - t0, 1)
    info["log"] = log_lines
    write_json(out / f"{name}.run.json", info)
    log(f"done in {info['elapsed_s']} s")


if __name__ == "__main__":
    main()
