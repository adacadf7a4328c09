"""Times `etscope pte FILE` (text and --json) as whole processes, and, when given the fixtures'
virtualenv python, ExecuTorch's own .pte deserializer on the same files, interleaved run by run so
both sides see the same machine state. Prints medians and the reference/etscope ratio."""
import argparse
import statistics
import subprocess
import time

# Imports torch once, then times the deserializer alone on each file `runs` times.
REFERENCE = """
import sys, time
from executorch.exir._serialize._program import deserialize_pte_binary
runs = int(sys.argv[1])
for path in sys.argv[2:]:
    data = open(path, 'rb').read()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        deserialize_pte_binary(data)
        times.append(time.perf_counter() - t0)
    print(path, sorted(times)[len(times) // 2])
"""


def run_once(cmd):
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--etscope", required=True)
    ap.add_argument("--reference-python")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    header = f"{'file':<28} {'size':>9} {'pte ms':>8} {'--json ms':>9}"
    if args.reference_python:
        header += f" {'ExecuTorch ms':>13} {'ratio':>7}"
    print(header)
    reference = {}
    if args.reference_python:
        out = subprocess.run([args.reference_python, "-c", REFERENCE, str(args.runs)] + args.files,
                             check=True, capture_output=True, text=True).stdout
        for line in out.strip().splitlines():
            path, seconds = line.rsplit(" ", 1)
            reference[path] = float(seconds)
    for path in args.files:
        text, js = [], []
        for _ in range(args.runs):
            text.append(run_once([args.etscope, "pte", path]))
            js.append(run_once([args.etscope, "pte", "--json", path]))
        size = __import__("os").path.getsize(path)
        line = f"{path.split('/')[-1]:<28} {size:>9} {statistics.median(text)*1e3:>8.1f} {statistics.median(js)*1e3:>9.1f}"
        if path in reference:
            # Reference: the deserializer's in-process time (interpreter start-up excluded),
            # against etscope's whole process including start-up and printing.
            line += f" {reference[path]*1e3:>13.1f} {reference[path]/statistics.median(text):>6.1f}x"
        print(line)


if __name__ == "__main__":
    main()
