"""Opens ETDumps written by etscope in ExecuTorch's own Python Inspector and compares them with
ExecuTorch's dumps of the same program: run blocks, event names and counts per block.

    build/export-venv/bin/python samples/export/check_etscope_etdump.py OURS.etdp OURS.bin THEIRS.etdp THEIRS.bin ETRECORD

Prints a summary and exits 1 when the Inspector sees different events.
"""
import collections
import sys
import warnings

warnings.filterwarnings("ignore")


def summary(etdp, debug_bin, etrecord):
    from executorch.devtools import Inspector

    insp = Inspector(etdump_path=etdp, etrecord=etrecord, debug_buffer_path=debug_bin)
    blocks = []
    for block in insp.event_blocks:
        counts = collections.Counter(e.name for e in block.events)
        blocks.append((block.name, len(block.events), counts))
    return insp, blocks


def main():
    ours_etdp, ours_bin, theirs_etdp, theirs_bin, etrecord = sys.argv[1:6]
    _, ours = summary(ours_etdp, ours_bin, etrecord)
    insp, theirs = summary(theirs_etdp, theirs_bin, etrecord)
    ok = len(ours) == len(theirs)
    for (on, oc, ocounts), (tn, tc, tcounts) in zip(ours, theirs):
        # etscope's documented additions: the run's inputs (one event named '', chain -1,
        # instruction -1) and, inside XNNPACK delegates, each node's output under its debug
        # handle (events named by the integer id). Everything else must match.
        extras = {k: v for k, v in (ocounts - tcounts).items() if k == "" or k.isdigit()}
        if extras:
            print(f"  etscope's additions in {on!r}: program inputs {extras.get('', 0)}, "
                  f"delegate node outputs {sum(v for k, v in extras.items() if k)}")
            ocounts = ocounts - collections.Counter(extras)
        same = on == tn and ocounts == tcounts
        ok &= same
        print(f"block {on!r}: {oc} events (ExecuTorch {tn!r}: {tc}) {'same names and counts' if same else 'DIFFERENT'}")
        if not same:
            print("  only ours:", dict(ocounts - tcounts), " only theirs:", dict(tcounts - ocounts))
    df = insp.to_dataframe()
    print(f"Inspector table on ExecuTorch's dump: {len(df)} rows; columns: {', '.join(df.columns)}")
    print("RESULT:", "compatible" if ok else "DIFFERENT")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
