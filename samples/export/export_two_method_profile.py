#!/usr/bin/env python3
"""A two-method program profiled by ExecuTorch's own runtime, for per-method ETRecord linking.

Writes into OUTDIR (default tests/fixtures/executorch/two_methods):
  two_methods.pte        forward (autoencoder: enc then dec) and encode (enc only)
  two_methods.etrecord   to_edge({...}, generate_etrecord=True) + to_executorch()
  two_methods.etdp       ExecuTorch's pybindings runtime: 2 x forward, then 2 x encode, one ETDump
  two_methods.inspector.json  what ExecuTorch's Inspector makes of the pair (1.5.1 raises: it
                         reads one edge program only)

Run with the samples' virtualenv (ExecuTorch 1.5.1 from PyPI):
  python samples/export/export_two_method_profile.py [OUTDIR]
"""
import json
import sys
from pathlib import Path

import torch
from torch import nn

from common import versions


class EncDec(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8))
        self.dec = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 16), nn.Sigmoid())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dec(self.enc(x))


class Encode(nn.Module):
    def __init__(self, m: EncDec) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(self.m.enc(x))


def main() -> None:
    from executorch.devtools import Inspector
    from executorch.exir import to_edge
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/executorch/two_methods")
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(7)
    m = EncDec().eval()
    x = torch.randn(3, 16)
    eps = {"forward": torch.export.export(m, (x,)), "encode": torch.export.export(Encode(m).eval(), (x,))}
    edge = to_edge(eps, generate_etrecord=True)
    et = edge.to_executorch()
    pte = bytes(et.buffer)
    (out / "two_methods.pte").write_bytes(pte)
    et.get_etrecord().save(str(out / "two_methods.etrecord"))

    rt = _load_for_executorch_from_buffer(pte, enable_etdump=True, debug_buffer_size=0)
    for method in ("forward", "forward", "encode", "encode"):
        rt.run_method(method, (x,))
    rt.write_etdump_result_to_file(str(out / "two_methods.etdp"))

    # ExecuTorch 1.5.1's Inspector cannot read a multi-method ETRecord (gen_graphs_from_etrecord
    # expects one edge program); what it says is kept as the reference's answer.
    try:
        insp = Inspector(etdump_path=str(out / "two_methods.etdp"), etrecord=str(out / "two_methods.etrecord"))
        blocks = [{"name": b.name, "events": [
            {"name": e.name, "instruction_id": e._instruction_id, "op_types": list(e.op_types or [])}
            for e in b.events]} for b in insp.event_blocks]
        inspector = {"event_blocks": blocks}
    except Exception as ex:  # record, do not fail
        inspector = {"error": f"{type(ex).__name__}: {ex}"}
    (out / "two_methods.inspector.json").write_text(json.dumps(
        {"versions": versions(), "run_order": ["forward", "forward", "encode", "encode"],
         "inspector": inspector}, indent=1) + "\n")

if __name__ == "__main__":
    main()
