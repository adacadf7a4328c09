"""Write the AOT intermediate outputs ExecuTorch's Inspector compares against, for etscope.

`etscope inspect --aot-intermediates FILE.ptd --gap L1|MSE|SNR` computes
`Inspector.calculate_numeric_gap` natively, but C++ cannot run the reference graph. This script
runs it once, the way the Inspector does (reference graph resolved with the Inspector's own
default rules, fed the ETRecord's representative inputs, or the example inputs the program was
exported with when it has none, as ExecuTorch's LLM exporter writes it), and stores every
captured output:

    OUT.aot_intermediates.ptd   FlatTensor file, one tensor per key
    OUT.aot_intermediates.json  index: per key its debug handles, op names, dtype and shape

Keys are the debug handles joined with "," ("3" or "4,5"), with "/i" appended for element i of a
sequence output. Run it with the virtualenv that produced the ETRecord (ExecuTorch, torch):

    python write_aot_intermediates.py --etrecord m.etrecord --etdump m.etdp --debug-buffer m.bin \
        --out build/m
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Dict, List

import torch

from common import to_jsonable, write_json, write_ptd


def _register_optional_ops() -> None:
    """ExecuTorch's LLM custom ops (llama::sdpa_with_kv_cache, update_cache...) and quantized
    kernels, when installed: the reference graphs of LLM exports call them."""
    for module in ("executorch.extension.llm.custom_ops.custom_ops", "executorch.kernels.quantized"):
        try:
            __import__(module)
        except Exception:  # not installed, or built without them: graphs that need them fail below
            pass


def _with_inputs(etrecord: str):
    """The parsed ETRecord; when it has no representative inputs (ExecuTorch's LLM exporter
    records none), given the example inputs its edge program was exported with (their tensors in
    flattening order), as etscope's EtRecord::aot_inputs_of takes them."""
    from executorch.devtools.etrecord import parse_etrecord

    rec = parse_etrecord(etrecord)
    if getattr(rec, "_representative_inputs", None):
        return rec
    programs = rec.edge_dialect_program
    program = programs.get("forward") if isinstance(programs, dict) else programs
    if program is None and rec.exported_program is not None:
        program = rec.exported_program
    example = getattr(program, "example_inputs", None) if program is not None else None
    if not example:
        return rec
    import torch.utils._pytree as pytree

    # The program's inputs are the leaves of (args, kwargs), e.g. an LLM's (tokens,
    # {"input_pos": ...}): in order, as the program flattened them at export.
    inputs = [leaf for leaf in pytree.tree_leaves(example) if isinstance(leaf, torch.Tensor)]
    rec.update_representative_inputs(inputs)
    print(f"{etrecord}: no representative inputs; using the example inputs "
          f"({', '.join(str(tuple(t.shape)) for t in inputs)})")
    return rec


def write_aot_intermediates(etrecord: str, etdump: str, debug_buffer: str | None, out_stem: Path,
                            reference_graph: str | None = None) -> int:
    from executorch.devtools import Inspector

    _register_optional_ops()
    insp = Inspector(etdump_path=etdump, etrecord=_with_inputs(etrecord), debug_buffer_path=debug_buffer)
    graph_module, graph_name = insp._resolve_reference_graph(reference_graph, False)
    outputs, op_names = insp._get_aot_intermediate_outputs_and_op_names(graph_module)
    if not outputs:
        raise SystemExit(f"{etrecord}: no AOT intermediate outputs (does it hold representative inputs?)")
    tensors: Dict[str, torch.Tensor] = {}
    index: List[dict] = []
    for handles, value in outputs.items():
        joined = ",".join(str(h) for h in handles)
        is_sequence = isinstance(value, (list, tuple))
        for i, element in enumerate(value if is_sequence else [value]):
            entry = {"debug_handle": list(handles), "op_names": op_names.get(handles, []),
                     "output_index": i, "is_sequence": is_sequence}
            if isinstance(element, torch.Tensor):
                key = f"{joined}/{i}" if is_sequence else joined
                tensors[key] = element.detach().contiguous()
                entry.update({"key": key, "dtype": str(element.dtype), "shape": list(element.shape)})
            else:
                entry.update({"key": None, "value": to_jsonable(element)})
            index.append(entry)
    out_stem.parent.mkdir(parents=True, exist_ok=True)
    write_ptd(Path(f"{out_stem}.aot_intermediates.ptd"), tensors)
    write_json(Path(f"{out_stem}.aot_intermediates.json"),
               {"reference_graph": graph_name, "entries": index,
                "note": "tensors stored in the .ptd (ExecuTorch FlatTensorSerializer) under 'key'; "
                        "key = debug handles joined by ',' (+ '/i' for the i-th element of a "
                        "sequence output)"})
    print(f"{out_stem}.aot_intermediates.ptd: {len(tensors)} tensors from '{graph_name}'")
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--etrecord", required=True)
    p.add_argument("--etdump", required=True, help="any ETDump of the program (the Inspector needs one)")
    p.add_argument("--debug-buffer", default=None)
    p.add_argument("--reference-graph", default=None,
                   help="exported_program, edge_dialect_exported_program or a graph_map name "
                        "(default: the Inspector's choice)")
    p.add_argument("--out", required=True, help="output path stem (OUT.aot_intermediates.ptd/.json)")
    a = p.parse_args()
    return write_aot_intermediates(a.etrecord, a.etdump, a.debug_buffer, Path(a.out), a.reference_graph)


if __name__ == "__main__":
    sys.exit(main())
