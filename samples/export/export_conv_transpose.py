#!/usr/bin/env python3
"""Transposed convolutions in many configurations, as bundled programs checked by ExecuTorch.

One .bpte per configuration (ConvTranspose1d/2d: stride, padding, output_padding, dilation,
groups incl. depthwise, bias or none, 1x1 kernels, float32 and float64). Each holds two test
cases whose expected outputs are what ExecuTorch 1.5.1's portable runtime computes for the same
program (and which match eager PyTorch to within 1e-5, checked here). `etscope run --bundled`
must pass them all.

  python samples/export/export_conv_transpose.py [OUTDIR]   (default tests/fixtures/executorch/conv_transpose)
"""
import json
import sys
from pathlib import Path

import torch
from torch import nn

from common import versions

# name: (dims, in_channels, out_channels, kernel, stride, padding, output_padding, dilation, groups, bias, dtype, input spatial)
CONFIGS = {
    "t2d_k2s2": (2, 4, 3, 2, 2, 0, 0, 1, 1, True, torch.float32, (5, 6)),
    "t2d_k3s1p1": (2, 3, 5, 3, 1, 1, 0, 1, 1, True, torch.float32, (7, 4)),
    "t2d_k3s2p1op1": (2, 4, 2, 3, 2, 1, 1, 1, 1, True, torch.float32, (5, 5)),
    "t2d_k4s2p1_nobias": (2, 6, 4, 4, 2, 1, 0, 1, 1, False, torch.float32, (4, 3)),
    "t2d_rect": (2, 2, 3, (3, 2), (2, 3), (1, 0), (1, 2), 1, 1, True, torch.float32, (4, 5)),
    "t2d_dilated": (2, 3, 3, 3, 2, 2, 1, 2, 1, True, torch.float32, (5, 4)),
    "t2d_groups": (2, 4, 6, 3, 2, 1, 0, 1, 2, True, torch.float32, (4, 4)),
    "t2d_depthwise": (2, 5, 5, 3, 1, 1, 0, 1, 5, True, torch.float32, (6, 6)),
    "t2d_1x1": (2, 8, 3, 1, 1, 0, 0, 1, 1, True, torch.float32, (3, 5)),
    "t2d_1x1_stride2": (2, 3, 2, 1, 2, 0, 1, 1, 1, False, torch.float32, (3, 3)),
    "t2d_f64": (2, 3, 2, 3, 2, 0, 0, 1, 1, True, torch.float64, (4, 4)),
    "t1d_k3s2": (1, 4, 3, 3, 2, 1, 1, 1, 1, True, torch.float32, (9,)),
    "t1d_groups_dilated": (1, 6, 4, 2, 3, 0, 2, 2, 2, False, torch.float32, (5,)),
}


def build(cfg):
    dims, cin, cout, k, s, p, op, d, g, bias, dtype, spatial = cfg
    cls = nn.ConvTranspose1d if dims == 1 else nn.ConvTranspose2d
    m = cls(cin, cout, k, stride=s, padding=p, output_padding=op, dilation=d, groups=g, bias=bias).to(dtype).eval()
    return m, (2, cin) + tuple(spatial), dtype


def main() -> None:
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/executorch/conv_transpose")
    out.mkdir(parents=True, exist_ok=True)
    manifest = {"versions": versions(), "programs": {}}
    for name, cfg in CONFIGS.items():
        torch.manual_seed(11)
        m, shape, dtype = build(cfg)
        gen = torch.Generator().manual_seed(5)
        inputs = [torch.randn(shape, generator=gen, dtype=dtype) for _ in range(2)]
        et = to_edge_transform_and_lower(torch.export.export(m, (inputs[0],))).to_executorch()
        rt = _load_for_executorch_from_buffer(bytes(et.buffer))
        cases, worst = [], 0.0
        for x in inputs:
            got = rt.run_method("forward", (x,))[0]
            with torch.no_grad():
                ref = m(x)
            worst = max(worst, float((got.double() - ref.double()).abs().max()))
            cases.append(MethodTestCase(inputs=[x], expected_outputs=[got]))
        assert worst < 1e-5, f"{name}: ExecuTorch and eager differ by {worst}"
        bp = BundledProgram(et, [MethodTestSuite(method_name="forward", test_cases=cases)])
        (out / f"{name}.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))
        manifest["programs"][name] = {"config": repr(cfg), "output_shape": list(ref.shape),
                                      "executorch_vs_eager_max_abs": worst}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    main()
