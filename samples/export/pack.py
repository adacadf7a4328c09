"""Copy generated artifacts into tests/fixtures/executorch/ and write MANIFEST.md.

Usage: python pack.py WORKDIR OUTDIR

Small files are committed raw. Files larger than RAW_LIMIT go into ONE archive,
OUTDIR/large.tar.xz (XZ_OPT=-9e), with paths relative to OUTDIR, ordered so that
files sharing weight bytes (pte, bpte, etrecord, ptd) sit next to each other inside
xz's 64 MiB window. index.json lists every file (raw or archived) with its size
and sha256.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from common import versions

RAW_LIMIT = int(os.environ.get("ETSCOPE_RAW_LIMIT", str(384 * 1024)))
# Generated but not committed (size budget); listed in MANIFEST.md.
EXCLUDE = set(os.environ.get(
    "ETSCOPE_EXCLUDE",
    "mobilenet_v2/mobilenet_v2.aot_intermediates.ptd",
).split())
MODEL_DIRS = ["simple_conv", "xor", "cifar10", "simple_conv_xnnpack", "mobilenet_v2"]

# Suffix -> description. Longest match wins.
KINDS = {
    ".pte": "ExecuTorch program (flatbuffer ET12), written by ExecutorchProgramManager.buffer",
    ".bpte": "bundled program (BP08) with 2 forward test cases; expected outputs from PyTorch eager",
    ".etrecord": "ETRecord zip (generate_etrecord=True), representative inputs + reference outputs from the bundled program",
    ".facts.json": "facts from ExecuTorch's Python APIs: deserialize_pte_binary (plans, operators, instructions, non_const_buffer_sizes, inputs/outputs), pybindings MethodMeta, final graph ops and signature",
    ".memory_trace.json": "activation memory profiler Chrome trace (generate_memory_trace, enable_memory_offsets=False)",
    ".memory_trace_offsets.json": "activation memory profiler Chrome trace (enable_memory_offsets=True: ts = memory offset)",
    ".etdp": "ETDump from 10 executions of forward in the pybindings runtime, enable_etdump=True, debug buffer on (intermediate outputs level)",
    ".debug.bin": "debug buffer of the .etdp above (intermediate + program outputs), sized exactly to the bytes used",
    ".profile.etdp": "ETDump from 10 executions with no debug buffer (profiling events only)",
    ".etdump.json": "the .etdp decoded by ExecuTorch's deserialize_from_etdump_flatcc (flatc), as JSON; bytes as hex",
    ".profile.etdump.json": "the .profile.etdp decoded by deserialize_from_etdump_flatcc, as JSON",
    ".inspector.json": "Inspector(etdump, etrecord, debug buffer): to_dataframe() all columns, event blocks, find_total_for_module, calculate_numeric_gap L1/MSE/SNR",
    ".aot_intermediates.ptd": "AOT intermediate outputs the Inspector compared against, keyed by debug handle, written by ExecuTorch's FlatTensorSerializer",
    ".aot_intermediates.json": "index of the .aot_intermediates.ptd keys (debug handle, op names, dtype, shape)",
    ".run.json": "run summary: runtime and eager outputs for the ETDump input, event counts, seeds, versions, log",
    ".program_outputs.etdp": "ETDump at the program-outputs debug level: 10 executions through ExecuTorch's C++ Module + ETDumpGen (the wheel's own libraries) via samples/export/etdump_runner",
    ".program_outputs.debug.bin": "debug buffer of the .program_outputs.etdp (program outputs only), sized to the bytes used + 64",
    ".program_outputs.etdump.json": "the .program_outputs.etdp decoded by deserialize_from_etdump_flatcc, as JSON",
    ".program_outputs.inspector.json": "Inspector on the program-outputs ETDump (+ ETRecord, debug buffer): to_dataframe, event blocks, find_total_for_module (no numeric gap: no intermediates)",
    ".input0.npy": "input used for all ETDump executions (= bundled test case 0 input)",
    ".testcase0.input0.npy": "bundled test case 0 input", ".testcase1.input0.npy": "bundled test case 1 input",
    ".testcase0.expected0.npy": "bundled test case 0 expected output (PyTorch eager)",
    ".testcase1.expected0.npy": "bundled test case 1 expected output (PyTorch eager)",
    ".ptd": "external tensor data (FlatTensor FT01) written by ExecuTorch with external_constants=True, external_mutable_weights=True",
    ".training.json": "training reference: losses and argmax of every step, step-0 gradients and final weights (summaries), ExecuTorch vs eager",
    ".executorch_final.ptd": "final weights after 20 SGD steps through ExecuTorch's TrainingModule + get_sgd_optimizer, written by FlatTensorSerializer",
    ".eager_final.ptd": "final weights after 20 SGD steps in PyTorch eager, written by FlatTensorSerializer",
    ".step0_grads.executorch.ptd": "gradients of the first training step from the ExecuTorch runtime (FlatTensorSerializer)",
    ".step0_grads.eager.ptd": "gradients of the first training step from PyTorch eager (FlatTensorSerializer)",
    ".initial_weights.ptd": "initial trainable weights (FlatTensorSerializer)",
    ".step0.x.npy": "training step 0 input", ".step0.label.npy": "training step 0 label",
    "synthetic_train.bin": "synthetic CIFAR-10 binary file (80 records x (1 label byte + 3072 pixel bytes))",
}


def describe(name: str) -> str:
    best = ""
    for suf in KINDS:
        if name.endswith(suf) and len(suf) > len(best):
            best = suf
    d = KINDS.get(best, "")
    if "_split.ptd" in name:
        d = "the split training program's weights (.ptd), external_constants + external_mutable_weights"
    return d


def sha256(p: Path) -> str:
    h = hashlib.sha256()
    with open(p, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def order_key(rel: str):
    # weights-sharing files first within a model dir, then everything else
    name = rel.split("/", 1)[1]
    pri = 1
    for i, suf in enumerate([".pte", ".bpte", ".etrecord", ".ptd"]):
        if name.endswith(suf):
            pri = 0
            break
    d = rel.split("/", 1)[0]
    return (MODEL_DIRS.index(d) if d in MODEL_DIRS else 99, pri, name)


def main() -> None:
    work, out = Path(sys.argv[1]), Path(sys.argv[2])
    if out.exists():
        # Only what this script writes: the sample directories and the top-level files. Fixtures
        # made by other scripts (models/ by export_models.py, two_methods/ by
        # export_two_method_profile.py, conv_transpose/ by export_conv_transpose.py) stay.
        for p in out.iterdir():
            if p.is_dir():
                if p.name in MODEL_DIRS:
                    shutil.rmtree(p)
            else:
                p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    files, excluded = [], []
    for d in MODEL_DIRS:
        for p in sorted((work / d).glob("*")) if (work / d).exists() else []:
            if p.name.startswith("."):
                continue
            if p.relative_to(work).as_posix() in EXCLUDE:
                excluded.append(p.relative_to(work).as_posix())
                continue
            files.append(p.relative_to(work).as_posix())
    raw, archived = [], []
    for rel in files:
        (archived if (work / rel).stat().st_size > RAW_LIMIT else raw).append(rel)
    for rel in raw:
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(work / rel, out / rel)
    archived.sort(key=order_key)
    if archived:
        lst = work / ".tar_list"
        lst.write_text("\n".join(archived) + "\n")
        env = dict(os.environ, XZ_OPT="-9e")
        subprocess.run(["tar", "--sort=none", "--mtime=@0", "--owner=0", "--group=0",
                        "--numeric-owner", "--no-recursion", "-C", str(work), "-cJf",
                        str(out / "large.tar.xz"), "-T", str(lst)], check=True, env=env)
    index = []
    for rel in files:
        index.append({"path": rel, "in_archive": rel in archived,
                      "size": (work / rel).stat().st_size, "sha256": sha256(work / rel),
                      "what": describe(rel)})
    vers = versions()
    run_info = {}
    for rel in files:
        if rel.endswith(".run.json") or rel.endswith(".training.json"):
            run_info[rel] = json.loads((work / rel).read_text())
    (out / "index.json").write_text(json.dumps(
        {"versions": vers, "files": index, "not_committed": excluded,
         "archive": "large.tar.xz" if archived else None}, indent=1) + "\n")
    committed = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"raw files: {len(raw)}, archived: {len(archived)}, committed bytes (before "
          f"MANIFEST.md): {committed}")
    extra = (Path(__file__).parent / "MANIFEST.head.md").read_text()
    lines = [extra.replace("@VERSIONS@", json.dumps(vers))]
    lines.append("\n## Run summary (from the *.run.json / *.training.json files)\n")
    for rel, info in sorted(run_info.items()):
        try:
            if rel.endswith(".run.json"):
                it = info["intermediate"]
                po = info.get("program_outputs_level", {})
                lines.append(
                    f"- `{rel}`: intermediate-level ETDump {it['executions']} executions, "
                    f"run_data {it['run_data_names'][0]} + {it['num_run_data'] - 1} x "
                    f"{it['run_data_names'][-1]}, debug buffer {it['debug_buffer_size']} B, "
                    f"{info['per_operator_profile_events']} per-operator profile events, "
                    f"{info['delegate_profile_events']} delegate profile events, "
                    f"{info['debug_events']} debug events; program-outputs level: "
                    + (f"{po['debug_events']} debug events, buffer {po['debug_buffer_size']} B"
                       if "etdp" in po else f"not produced ({po.get('error')})")
                    + f"; Inspector AOT reference graph: {info.get('inspector_aot_reference_graph')}"
                    + f"; memory trace: {'ok' if 'files' in info.get('memory_trace', {}) else info.get('memory_trace', {}).get('error')}")
            else:
                for key, r in info["runs"].items():
                    if "executorch" in r:
                        l = r["executorch"]["losses"]
                        el = r["eager"]["losses"]
                        c = r.get("compare", {})
                        lines.append(
                            f"- `{rel}` {key}: ExecuTorch loss {l[0]:.6f} -> {l[-1]:.6f}, eager "
                            f"{el[0]:.6f} -> {el[-1]:.6f}, max |loss diff| "
                            f"{c.get('max_abs_loss_diff', float('nan')):.3g}")
                    else:
                        lines.append(f"- `{rel}` {key}: {r}")
        except Exception as ex:  # keep the manifest going
            lines.append(f"- `{rel}`: summary failed: {ex!r}")
    lines.append("\n## Files\n")
    lines.append("`A` = inside `large.tar.xz` (paths relative to this directory), "
                 "`R` = committed raw. Sizes are uncompressed bytes.\n")
    lines.append("| path | R/A | size | what |\n|---|---|---|---|")
    for e in index:
        lines.append(f"| `{e['path']}` | {'A' if e['in_archive'] else 'R'} | {e['size']} | "
                     f"{e['what']} |")
    if excluded:
        lines.append("\n## Generated but not committed (size budget)\n")
        lines.append("| path | size | sha256 |\n|---|---|---|")
        for rel in excluded:
            lines.append(f"| `{rel}` | {(work / rel).stat().st_size} | {sha256(work / rel)} |")
    lines.append("")
    lines.append(f"Committed bytes in this directory: {committed} (+ this file).")
    (out / "MANIFEST.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
