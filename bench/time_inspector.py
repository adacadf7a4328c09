"""Times etscope's Inspector against ExecuTorch's Python Inspector on the same ETDumps, side by
side in one run, and prints the ratio.

    python3 bench/time_inspector.py --bench build/bin/inspector_bench [--reference-python VENV/bin/python] TRACE.etdp ...

etscope: `inspector_bench load` (ETDump read + Inspector build + per-type summary, best of 3).
ExecuTorch: `Inspector(etdump_path=...)` construction (flatc decode + event blocks) plus
`to_dataframe()`, best of --reference-repeat (default 1: it takes minutes on a million events).
"""
import argparse
import json
import subprocess
import sys
import time

REFERENCE = r"""
import sys, time, warnings
warnings.filterwarnings("ignore")
from executorch.devtools import Inspector
best = None
for _ in range(int(sys.argv[2])):
    t0 = time.perf_counter()
    insp = Inspector(etdump_path=sys.argv[1])
    df = insp.to_dataframe()
    dt = time.perf_counter() - t0
    best = dt if best is None else min(best, dt)
print(best * 1000.0, len(df))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True)
    ap.add_argument("--reference-python")
    ap.add_argument("--reference-repeat", type=int, default=1)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for path in args.files:
        ours = json.loads(subprocess.check_output([args.bench, "load", path, "--repeat", "3"], text=True))
        line = (f"{path}: {ours['events']} events, {ours['event_blocks']} blocks: etscope {ours['total_ms']:.1f} ms "
                f"(read {ours['read_ms']:.1f} + inspector {ours['inspector_ms']:.1f}), "
                f"{ours['heap_bytes_per_event']['total']:.1f} heap bytes/event")
        if args.reference_python:
            out = subprocess.run([args.reference_python, "-c", REFERENCE, path, str(args.reference_repeat)],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                line += f"; ExecuTorch Inspector failed: {out.stderr.strip().splitlines()[-1] if out.stderr else out.returncode}"
            else:
                ref_ms, rows = out.stdout.split()
                ref_ms = float(ref_ms)
                line += f"; ExecuTorch Inspector {ref_ms:.0f} ms ({rows} rows): etscope {ref_ms / ours['total_ms']:.0f}x faster"
        print(line, flush=True)


if __name__ == "__main__":
    sys.exit(main())
