"""Export programs of ExecuTorch's own example-model registry (executorch.examples.models,
MODEL_NAME_TO_MODEL) with the real ExecuTorch exporter, with random weights, and record
ExecuTorch's own runtime answers: outputs and single-thread timings of `forward`.

Usage (the export venv of samples/export/requirements.txt; run it niced, one export at a time):
  PYTHONPATH=/work/export-extras nice -n 10 /work/export-venv/bin/python \\
      samples/export/export_registry.py OUT [--models a,b,...] [--variants portable,xnnpack,xnnpack_int8] [--redo] [--timeout S]
  python export_registry.py --list                 # the models and how each is built
  python export_registry.py --one MODEL VARIANT OUT   # one program in this process (internal)
OUT defaults to /work/ext-models when only options are given. Each model/variant runs in its own
subprocess (a runtime crash loses one program); directories with a result.json are skipped
unless --redo.

Extras: timm (deit_tiny, ic4), torchaudio (w2l, emformer_*), torchsr (edsr) and transformers
(mobilebert) are not in requirements.txt. They go into a separate directory put on PYTHONPATH:
  /work/export-venv/bin/pip install --no-deps --target /work/export-extras timm==1.0.31 \\
      safetensors==0.8.0 torchsr==1.0.4 transformers==5.24.0 torchaudio==2.11.0
  mkdir -p /work/export-extras/_torchaudio_native_disabled && \\
      mv /work/export-extras/torchaudio/lib/*.so /work/export-extras/_torchaudio_native_disabled/
(PyPI has no torchaudio for torch 2.15; 2.11's native library refuses to load next to torch 2.15
(CUDA 13.0 vs 13.2), so it is moved away and torchaudio's pure-Python models are used.) Models
whose packages are missing fail and are listed in failures.json.

Per program OUT/<model>__<variant>/:
  model.pte, input<i>.npy (tensor inputs of forward, flattened in order; bfloat16 ones as
  input<i>.bin raw bytes + input<i>.as_f32.npy), et_output<i>.npy (ExecuTorch pybindings
  runtime, quantized kernels registered), eager_output<i>.npy, result.json.
OUT/index.json (list of {dir, model, variant, family, et_ms_median, inputs}) and
OUT/failures.json ({"<model>__<variant>": first line of the exception}) are rewritten after every
program.

Variants:
  portable      torch.export.export(model, inputs, strict=False); to_edge_transform_and_lower(ep)
                (no partitioner); to_executorch()
  xnnpack       as ExecuTorch's examples/xnnpack/aot_compiler.py without --quantize:
                to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()],
                transform_passes=get_transform_passes(), compile_config=EdgeCompileConfig(
                _check_ir_validity=True, _skip_dim_order=True)); to_executorch(
                ExecutorchBackendConfig(extract_delegate_segments=False))
  xnnpack_int8  as aot_compiler.py --quantize, but always symmetric per-channel static:
                XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True)),
                prepare_pt2e, 4 calibration inputs (seeds 100..103), convert_pt2e, export again,
                then the xnnpack lowering with _check_ir_validity=False
Weights: torch.manual_seed(0) before building; registry classes that download pretrained weights
are replaced by the same architecture built with weights=None / pretrained=False (see --list).
Models with BatchNorm get their running statistics from 3 batches of 4 random inputs (momentum
None, only the BN layers in train mode), as the other scripts here do: fresh statistics make deep random nets' outputs
vanish. Inputs: the shapes and dtypes of the registry's get_example_inputs(), values from
torch.Generator().manual_seed(1) (randn for floats unless the registry draws uniform [-1, 1)).

Timing: executorch.extension.pybindings.portable_lib._unsafe_reset_threadpool(1) (ExecuTorch's
own threadpool, used by XNNPACK and the optimized kernels; checked with
_threadpool_get_thread_count()), torch.set_num_threads(1); 3 warm-ups then 30 timed
module.run_method("forward", inputs) calls, wall clock (time.perf_counter_ns) around the call.
A second module loaded with enable_etdump=True is run the same way and its ETDump's
"Method::execute" events give ExecuTorch's own durations without the Python binding. Programs
whose first run takes over 2 s get fewer runs, and over 5 s no ETDump pass (recorded in
result.json).
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import common  # noqa: F401  (sets sys.path)
from common import versions, write_json

MODEL_SEED = 0
INPUT_SEED = 1
CALIBRATION_SEEDS = (100, 101, 102, 103)
BN_SEEDS = (1000, 1001, 1002)
WARMUPS = 3
TIMED_RUNS = 30
SLOW_RUN_S = 2.0          # first run slower than this: fewer timed runs
TIMING_BUDGET_S = 40.0    # ... about this much time for the timed runs of one module
ETDUMP_MAX_RUN_S = 5.0    # first run slower than this: no second (ETDump) timing pass
VARIANTS = ("portable", "xnnpack", "xnnpack_int8")
DEFAULT_OUT = Path("/work/ext-models")
EXTRAS = os.environ.get("REGISTRY_EXTRAS", "/work/export-extras")


# --------------------------------------------------------------------------- models
# Each entry: build() -> nn.Module (eval), inputs: the registry's example-input structure as
# (kind, shape, dtype[, extra]) leaves, family, how (what the registry class does and what is
# built here instead).


def _registry(name: str) -> Any:
    """The registry's own EagerModelBase object (its __init__ downloads nothing for the models
    that use this)."""
    import importlib
    from executorch.examples.models import MODEL_NAME_TO_MODEL
    mod, cls = MODEL_NAME_TO_MODEL[name]
    return getattr(importlib.import_module(f"executorch.examples.models.{mod}"), cls)()


def _from_registry(name: str) -> Callable[[], Any]:
    return lambda: _registry(name).get_eager_model()


def _tv(fn: str, **kw: Any) -> Callable[[], Any]:
    def build() -> Any:
        import torchvision.models as tvm
        return getattr(tvm, fn)(weights=None, **kw)
    return build


def _vit_b_16() -> Any:
    import torch.nn as nn
    import torchvision.models as tvm
    m = tvm.vit_b_16(weights=None)
    nn.init.normal_(m.heads.head.weight, std=0.2)  # torchvision zero-inits the head: all-zero logits
    return m


def _dl3() -> Any:
    import torch.nn as nn
    from torchvision.models.segmentation import deeplabv3_resnet50

    class OutAux(nn.Module):
        """The registry's DeepLabV3 returns a dict {out, aux}; ExecuTorch flattens it to (out, aux)."""

        def __init__(self, m: nn.Module) -> None:
            super().__init__()
            self.m = m

        def forward(self, x):
            d = self.m(x)
            return d["out"], d["aux"]
    # DEFAULT weights mean num_classes=21 and the auxiliary classifier: the same architecture.
    return OutAux(deeplabv3_resnet50(weights=None, weights_backbone=None, num_classes=21, aux_loss=True))


def _timm(fn: str) -> Callable[[], Any]:
    def build() -> Any:
        import timm.models as tm
        return getattr(tm, fn)(pretrained=False)
    return build


def _edsr() -> Any:
    from torchsr.models import edsr_r16f64
    return edsr_r16f64(2, False)   # registry: edsr_r16f64(2, True) (pretrained)


def _mobilebert() -> Any:
    from transformers import MobileBertConfig, MobileBertModel
    cfg = MobileBertConfig()       # the defaults are google/mobilebert-uncased's configuration
    cfg.return_dict = False
    return MobileBertModel(cfg)


class _Emformer:
    """The registry wraps torchaudio's EMFORMER_RNNT_BASE_LIBRISPEECH decoder model (downloads its
    weights); the bundle's factory is emformer_rnnt_base(num_symbols=4097): built here unloaded."""

    @staticmethod
    def build(part: str) -> Callable[[], Any]:
        def b() -> Any:
            import torch.nn as nn
            from torchaudio.models import emformer_rnnt_base

            class Part(nn.Module):
                def __init__(self) -> None:
                    super().__init__()
                    self.rnnt = emformer_rnnt_base(num_symbols=4097)

                def forward(self, args):
                    return getattr(self.rnnt, part)(*args)
            return Part()
        return b


def _efficient_sam() -> Any:
    from executorch.examples.models.efficient_sam.efficient_sam_core.efficient_sam import build_efficient_sam
    # registry: build_efficient_sam_vitt(), i.e. these sizes plus a checkpoint download
    return build_efficient_sam(encoder_patch_embed_dim=192, encoder_num_heads=3, checkpoint=None)


F32 = "float32"
IMG224 = (("randn", (1, 3, 224, 224), F32),)

MODELS: Dict[str, Dict[str, Any]] = {
    # toy models of examples/models/toy_model (registry classes used as they are)
    "mul": dict(build=_from_registry("mul"), inputs=(("randn", (3, 2), F32), ("randn", (3, 2), F32)), family="toy"),
    "linear": dict(build=_from_registry("linear"), inputs=(("randn", (3, 3), F32),), family="toy"),
    "add": dict(build=_from_registry("add"), inputs=(("randn", (1,), F32), ("randn", (1,), F32)), family="toy",
                input_note="the registry's inputs are torch.ones(1); random values here"),
    "add_mul": dict(build=_from_registry("add_mul"), inputs=tuple(("randn", (2, 2), F32) for _ in range(3)),
                    family="toy", input_note="the registry's inputs are ones, 2*ones, 3*ones; random values here"),
    "softmax": dict(build=_from_registry("softmax"), inputs=(("randn", (2, 2), F32),), family="toy",
                    input_note="the registry's input is torch.ones(2, 2); random values here"),
    "conv1d": dict(build=_from_registry("conv1d"), inputs=(("randn", (1, 3, 10), F32),), family="toy"),
    "sdpa": dict(build=_from_registry("sdpa"), inputs=tuple(("randn", (2, 8, 128, 64), "bfloat16") for _ in range(3)),
                 family="transformer", note="F.scaled_dot_product_attention on bfloat16 q, k, v as the registry has"),
    # MLPerf Tiny (examples/models/mlperf_tiny; registry classes used as they are)
    "deep_autoencoder": dict(build=_from_registry("deep_autoencoder"), inputs=(("uniform", (1, 640), F32),),
                             family="mlp"),
    "ds_cnn": dict(build=_from_registry("ds_cnn"), inputs=(("uniform", (1, 1, 49, 10), F32),), family="audio"),
    "resnet8": dict(build=_from_registry("resnet8"), inputs=(("uniform", (1, 3, 32, 32), F32),), family="cnn"),
    "mobilenet_v1_025": dict(build=_from_registry("mobilenet_v1_025"), inputs=(("uniform", (1, 3, 96, 96), F32),),
                             family="cnn"),
    "lstm": dict(build=_from_registry("lstm"),
                 inputs=(("randn", (5, 3, 10), F32), (("randn", (2, 3, 20), F32), ("randn", (2, 3, 20), F32))),
                 family="rnn", note="torch.nn.quantizable.LSTM(10, 20, 2), input (x, (h0, c0))"),
    "mv2": dict(build=_tv("mobilenet_v2"), inputs=IMG224, family="cnn",
                how="registry: mobilenet_v2(MobileNet_V2_Weights.DEFAULT); here weights=None, which is "
                    "also exactly the registry's mv2_untrained (not exported twice)"),
    "mv3": dict(build=_tv("mobilenet_v3_small"), inputs=IMG224, family="cnn",
                how="registry: mobilenet_v3_small(IMAGENET1K_V1); here weights=None"),
    "resnet18": dict(build=_tv("resnet18"), inputs=IMG224, family="cnn",
                     how="registry: resnet18(IMAGENET1K_V1); here weights=None"),
    "w2l": dict(build=_from_registry("w2l"), inputs=(("randn", (10, 1, 700), F32),), family="audio",
                note="torchaudio Wav2Letter(num_classes=4096), batch 10 x 700 frames"),
    "deit_tiny": dict(build=_timm("deit_tiny_patch16_224"), inputs=IMG224, family="transformer",
                      how="registry: timm deit_tiny_patch16_224(pretrained=True); here pretrained=False"),
    "ic3": dict(build=_tv("inception_v3"), inputs=IMG224, family="cnn",
                how="registry: inception_v3(IMAGENET1K_V1); here weights=None (aux_logits=True, "
                    "init_weights as torchvision does without weights; transform_input=False)"),
    "ic4": dict(build=_timm("inception_v4"), inputs=(("randn", (1, 3, 299, 299), F32),), family="cnn",
                how="registry: timm inception_v4(pretrained=True); here pretrained=False"),
    "edsr": dict(build=_edsr, inputs=IMG224, family="cnn",
                 how="registry: torchsr edsr_r16f64(2, True); here edsr_r16f64(2, False) (x2 super-resolution)"),
    "emformer_join": dict(build=_Emformer.build("join"), family="audio",
                          inputs=((("randn", (1, 128, 1024), F32), ("const", [128], "int64"),
                                   ("randn", (1, 128, 1024), F32), ("const", [128], "int64")),),
                          how="registry: torchaudio EMFORMER_RNNT_BASE_LIBRISPEECH decoder (downloads); here "
                              "emformer_rnnt_base(num_symbols=4097) unloaded, join(*inputs)",
                          input_note="registry draws the two sources with torch.rand; randn here"),
    "emformer_predict": dict(build=_Emformer.build("predict"), family="rnn",
                             inputs=((("randint", (1, 128), "int64", 4096), ("const", [128], "int64"), None),),
                             how="registry: torchaudio EMFORMER_RNNT_BASE_LIBRISPEECH decoder (downloads); here "
                                 "emformer_rnnt_base(num_symbols=4097) unloaded, predict(tokens, lengths, None)",
                             input_note="registry's tokens are zeros; random tokens in [0, 4096) here"),
    "emformer_transcribe": dict(build=_Emformer.build("transcribe"), family="audio",
                                inputs=((("randn", (1, 128, 80), F32), ("const", [128], "int64")),),
                                how="registry: torchaudio EMFORMER_RNNT_BASE_LIBRISPEECH decoder (downloads); here "
                                    "emformer_rnnt_base(num_symbols=4097) unloaded, transcribe(*inputs)"),
    "resnet50": dict(build=_tv("resnet50"), inputs=IMG224, family="cnn",
                     how="registry: resnet50(IMAGENET1K_V1); here weights=None"),
    "dl3": dict(build=_dl3, inputs=IMG224, family="segmentation",
                how="registry: deeplabv3_resnet50(DeepLabV3_ResNet50_Weights.DEFAULT); here weights=None, "
                    "weights_backbone=None, num_classes=21, aux_loss=True; outputs (out, aux)"),
    "mobilebert": dict(build=_mobilebert, inputs=(("randint", (1, 8), "int64", 30522),), family="transformer",
                       how="registry: MobileBertModel.from_pretrained('google/mobilebert-uncased', "
                           "return_dict=False); here MobileBertModel(MobileBertConfig()) with return_dict=False",
                       input_note="registry: tokenizer('Hello, my dog is cute') -> 8 token ids; here 8 random "
                                  "ids in [0, 30522) (no tokenizer download)"),
    "vit": dict(build=_vit_b_16, inputs=IMG224, family="transformer",
                how="registry: vit_b_16(IMAGENET1K_V1); here weights=None, head weight ~ N(0, 0.2) "
                    "(torchvision zero-inits it)"),
    "efficient_sam": dict(build=_efficient_sam, family="segmentation",
                          inputs=(("randn", (1, 3, 1024, 1024), F32), ("uniform01", (1, 1, 1, 2), F32, 1024.0),
                                  ("const", [[[1.0]]], F32)),
                          how="registry: build_efficient_sam_vitt() (checkpoint download); here "
                              "build_efficient_sam(192, 3, checkpoint=None)",
                          input_note="points are uniform [0, 1024) as the registry draws them, labels ones"),
}

# aot_compiler.py's MODEL_NAME_TO_OPTIONS: what ExecuTorch's own example would quantize with
# (recorded; this script always uses static per-channel, see the docstring).
AOT_QUANT = {"linear": "STATIC_PER_CHANNEL", "add": "STATIC_PER_TENSOR", "add_mul": "STATIC_PER_TENSOR",
             "dl3": "STATIC_PER_CHANNEL", "ic3": "STATIC_PER_CHANNEL", "ic4": "STATIC_PER_CHANNEL",
             "mv2": "STATIC_PER_CHANNEL", "mv3": "STATIC_PER_CHANNEL", "resnet18": "STATIC_PER_CHANNEL",
             "resnet50": "STATIC_PER_CHANNEL", "vit": "DYNAMIC_PER_CHANNEL", "w2l": "DYNAMIC_PER_CHANNEL",
             "edsr": "STATIC_PER_CHANNEL", "mobilebert": "DYNAMIC_PER_CHANNEL",
             "emformer_join": "DYNAMIC_PER_CHANNEL", "emformer_predict": "DYNAMIC_PER_CHANNEL",
             "emformer_transcribe": "STATIC_PER_CHANNEL"}


# --------------------------------------------------------------------------- inputs


def make_inputs(spec: Any, seed: int) -> Any:
    """The example-input structure with values from one torch.Generator().manual_seed(seed),
    drawn leaf by leaf in order."""
    import torch
    g = torch.Generator().manual_seed(seed)

    def leaf(s: Any) -> Any:
        if s is None:
            return None
        if not isinstance(s[0], str):          # a nested group of leaves
            return tuple(leaf(x) for x in s)
        kind, shape, dtype = s[0], s[1], getattr(torch, s[2])
        if kind == "randn":
            return torch.randn(*shape, generator=g).to(dtype)
        if kind == "uniform":      # the registry's torch.rand(...) * 2 - 1
            return (torch.rand(*shape, generator=g) * 2 - 1).to(dtype)
        if kind == "uniform01":    # torch.rand(...) * scale
            return (torch.rand(*shape, generator=g) * s[3]).to(dtype)
        if kind == "randint":
            return torch.randint(0, s[3], shape, generator=g, dtype=dtype)
        if kind == "const":
            return torch.tensor(shape, dtype=dtype)
        raise ValueError(kind)
    return tuple(leaf(s) for s in spec)


def flat_tensors(o: Any) -> List[Any]:
    import torch
    from torch.utils._pytree import tree_flatten
    return [t for t in tree_flatten(o)[0] if isinstance(t, torch.Tensor)]


def method_inputs(ex: Any) -> List[Any]:
    """The program's inputs: the example inputs flattened in order; a None leaf stays an input
    (ExecuTorch keeps it as a None value)."""
    import torch
    from torch.utils._pytree import tree_flatten
    return [t for t in tree_flatten(ex, is_leaf=lambda x: x is None)[0] if t is None or isinstance(t, torch.Tensor)]


def _calibrate_bn(model: Any, spec: Any) -> bool:
    """BatchNorm running statistics from 3 batches of 4 different random inputs (momentum None:
    cumulative average), the BN layers alone in train mode. Only for single-tensor inputs (every BN
    model here)."""
    import torch
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return False
    model.eval()   # only the BN layers train: no dropout, no training-only branches (inception's aux head)
    for m in bns:
        m.momentum = None
        m.train()
    with torch.no_grad():
        for s in BN_SEEDS:
            batch = torch.cat([make_inputs(spec, s * 10 + k)[0] for k in range(4)])
            model(batch)
    model.eval()
    return True


# --------------------------------------------------------------------------- helpers


def _save_input(d: Path, i: int, t: Any) -> Dict[str, Any]:
    import numpy as np
    import torch
    t = t.detach().contiguous()
    info = {"index": i, "shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", "")}
    if t.dtype == torch.bfloat16:
        t.view(torch.int16).numpy().tofile(d / f"input{i}.bin")
        np.save(d / f"input{i}.as_f32.npy", t.float().numpy())
        info["file"] = f"input{i}.bin"
        info["note"] = "raw bfloat16 bytes (no .npy dtype); input{i}.as_f32.npy holds the same values as float32"
    else:
        np.save(d / f"input{i}.npy", t.numpy())
        info["file"] = f"input{i}.npy"
    return info


def _save_output(path_base: Path, t: Any) -> str:
    import numpy as np
    import torch
    t = t.detach().contiguous()
    if t.dtype == torch.bfloat16:   # .npy has no bfloat16: float32 values + the raw bytes
        t.view(torch.int16).numpy().tofile(f"{path_base}.bf16.bin")
        t = t.float()
    np.save(f"{path_base}.npy", t.numpy())
    return Path(f"{path_base}.npy").name


def _diff(a: Any, b: Any) -> Dict[str, Any]:
    import torch
    a, b = a.detach().double(), b.detach().double()
    if a.shape != b.shape:
        return {"shape_mismatch": [list(a.shape), list(b.shape)]}
    if a.numel() == 0:
        return {"max_abs": 0.0, "ref_max_abs": 0.0}
    d = (a - b).abs()
    ok = ~(torch.isnan(a) | torch.isnan(b))
    scale = float(b[ok].abs().max()) if ok.any() else 0.0
    mx = float(d[ok].max()) if ok.any() else 0.0
    return {"max_abs": mx, "ref_max_abs": scale, "max_rel_norm": mx / scale if scale > 0 else mx,
            "nan_et": int(torch.isnan(a).sum()), "nan_ref": int(torch.isnan(b).sum())}


def _out_stats(t: Any) -> Dict[str, Any]:
    d = t.detach().double()
    if d.numel() == 0:
        return {"numel": 0}
    return {"numel": d.numel(), "min": float(d.min()), "max": float(d.max()),
            "std": float(d.std()) if d.numel() > 1 else 0.0}


def _program_counts(pte: bytes) -> Dict[str, Any]:
    from executorch.exir._serialize._program import deserialize_pte_binary
    from executorch.exir.schema import DelegateCall, KernelCall
    plan = deserialize_pte_binary(pte).program.execution_plan[0]
    dc, kc = 0, []
    for ch in plan.chains:
        for ins in ch.instructions:
            a = ins.instr_args
            if isinstance(a, DelegateCall):
                dc += 1
            elif isinstance(a, KernelCall):
                op = plan.operators[a.op_index]
                kc.append(op.name + (f".{op.overload}" if op.overload else ""))
    return {"delegate_calls": dc, "kernel_calls": len(kc),
            "kernel_ops": dict(sorted({k: kc.count(k) for k in kc}.items())),
            "delegates": [dl.id for dl in plan.delegates]}


def _ms(ns: List[int]) -> List[float]:
    return [round(x / 1e6, 4) for x in ns]


def _etdump_execute_ms(path: str) -> List[float]:
    """Durations of the "Method::execute" profile events of an ETDump, in ms (ticks are ns on
    Linux: ExecuTorch's POSIX PAL counts nanoseconds)."""
    from executorch.devtools.etdump.serialize import deserialize_from_etdump_flatcc
    with open(path, "rb") as f:
        et = deserialize_from_etdump_flatcc(f.read())
    out = []
    for rd in et.run_data:
        for ev in rd.events or []:
            pe = ev.profile_event
            if pe is not None and pe.name == "Method::execute":
                out.append(round((pe.end_time - pe.start_time) / 1e6, 4))
    return out


def _runs_for(first_s: float) -> Tuple[int, int]:
    if first_s <= SLOW_RUN_S:
        return WARMUPS, TIMED_RUNS
    n = max(3, min(TIMED_RUNS, int(TIMING_BUDGET_S / first_s)))
    return (1 if first_s > 10 else WARMUPS), n


# --------------------------------------------------------------------------- one program


def export_one(name: str, variant: str, out: Path) -> Dict[str, Any]:
    import torch
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower

    spec = MODELS[name]
    d = out / f"{name}__{variant}"
    d.mkdir(parents=True, exist_ok=True)
    for f in d.iterdir():
        f.unlink()
    torch.set_num_threads(1)
    res: Dict[str, Any] = {"model": name, "variant": variant, "family": spec["family"],
                           "registry": _registry_entry(name), "how_built": spec.get("how", "the registry class"),
                           "model_seed": MODEL_SEED, "input_seed": INPUT_SEED,
                           "input_values": "torch.Generator().manual_seed(1), leaves drawn in order",
                           "versions": versions(), "extras_versions": _extras_versions()}
    for k in ("note", "input_note"):
        if k in spec:
            res[k] = spec[k]
    t0 = time.time()
    torch.manual_seed(MODEL_SEED)
    model = spec["build"]().eval()
    res["bn_calibrated"] = _calibrate_bn(model, spec["inputs"])
    ex = make_inputs(spec["inputs"], INPUT_SEED)
    calls = [f"torch.manual_seed({MODEL_SEED}); model = build().eval()"]
    if res["bn_calibrated"]:
        calls.append("BN statistics: eval(), BN layers momentum=None and train(), 3 batches of 4 inputs (seeds 10*s+k, s in "
                     "1000..1002, k 0..3), eval()")
    with torch.no_grad():
        eager_fp32 = flat_tensors(model(*ex))
    ref_model = model
    if variant == "xnnpack_int8":
        from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
            XNNPACKQuantizer, get_symmetric_quantization_config)
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
        q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
        gm = prepare_pt2e(torch.export.export(model, ex, strict=False).module(), q)
        with torch.no_grad():
            for s in CALIBRATION_SEEDS:
                gm(*make_inputs(spec["inputs"], s))
        ref_model = convert_pt2e(gm)
        res["aot_compiler_quant_type"] = AOT_QUANT.get(name, "not in MODEL_NAME_TO_OPTIONS")
        calls += ["gm = torch.export.export(model, inputs, strict=False).module()",
                  "gm = prepare_pt2e(gm, XNNPACKQuantizer().set_global(get_symmetric_quantization_config("
                  "is_per_channel=True)))",
                  f"calibration: gm(*inputs(seed)) for seeds {list(CALIBRATION_SEEDS)}",
                  "gm = convert_pt2e(gm)"]
    with torch.no_grad():
        eager = flat_tensors(ref_model(*ex))
    ep = torch.export.export(ref_model, ex, strict=False)
    calls.append(f"ep = torch.export.export({'gm' if ref_model is not model else 'model'}, inputs, strict=False)")
    if variant == "portable":
        et_prog = to_edge_transform_and_lower(ep).to_executorch()
        calls += ["to_edge_transform_and_lower(ep)  # no partitioner", "to_executorch()"]
    else:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
        from executorch.backends.xnnpack.utils.configs import get_transform_passes
        quant = variant == "xnnpack_int8"
        edge = to_edge_transform_and_lower(
            ep, partitioner=[XnnpackPartitioner()], transform_passes=get_transform_passes(),
            compile_config=EdgeCompileConfig(_check_ir_validity=not quant, _skip_dim_order=True))
        et_prog = edge.to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))
        calls += ["to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()], "
                  "transform_passes=get_transform_passes(), compile_config=EdgeCompileConfig("
                  f"_check_ir_validity={not quant}, _skip_dim_order=True))",
                  "to_executorch(config=ExecutorchBackendConfig(extract_delegate_segments=False))"]
    pte = bytes(et_prog.buffer)
    res["export_seconds"] = round(time.time() - t0, 1)
    res["exporter_calls"] = calls
    (d / "model.pte").write_bytes(pte)
    res["pte_bytes"] = len(pte)
    res["program"] = _program_counts(pte)

    flat_in = method_inputs(ex)
    res["inputs"] = [_save_input(d, i, t) if t is not None else
                     {"index": i, "value": None, "note": "a None input: no file"} for i, t in enumerate(flat_in)]
    res["eager_outputs"] = []
    for i, t in enumerate(eager):
        res["eager_outputs"].append({"file": _save_output(d / f"eager_output{i}", t), "shape": list(t.shape),
                                     "dtype": str(t.dtype).replace("torch.", ""), "stats": _out_stats(t)})
    res["eager_reference"] = ("the convert_pt2e module (torch's float emulation of the int8 graph)"
                              if variant == "xnnpack_int8" else "the float model in eager torch")

    # ExecuTorch's own runtime
    from executorch.extension.pybindings import portable_lib
    import executorch.kernels.quantized  # noqa: F401  registers quantized_decomposed::*.out with the runtime
    before = portable_lib._threadpool_get_thread_count()
    portable_lib._unsafe_reset_threadpool(1)
    res["threads"] = {"threadpool_before": before, "threadpool_after": portable_lib._threadpool_get_thread_count(),
                      "how": "portable_lib._unsafe_reset_threadpool(1); torch.set_num_threads(1)"}
    m = portable_lib._load_for_executorch_from_buffer(pte)
    t1 = time.perf_counter_ns()
    got = flat_tensors(list(m.run_method("forward", tuple(flat_in))))
    first_s = (time.perf_counter_ns() - t1) / 1e9
    res["et_outputs"] = []
    for i, t in enumerate(got):
        res["et_outputs"].append({"file": _save_output(d / f"et_output{i}", t), "shape": list(t.shape),
                                  "dtype": str(t.dtype).replace("torch.", "")})
    res["max_abs_diff_et_vs_eager"] = [_diff(a, b).get("max_abs") for a, b in zip(got, eager)]
    res["et_vs_eager"] = [_diff(a, b) for a, b in zip(got, eager)]
    if variant == "xnnpack_int8":
        res["et_vs_eager_fp32"] = [_diff(a, b) for a, b in zip(got, eager_fp32)]
    if len(got) != len(eager):
        res["output_count_mismatch"] = [len(got), len(eager)]

    warm, n = _runs_for(first_s)
    res["first_run_ms"] = round(first_s * 1e3, 3)
    for _ in range(warm):
        m.run_method("forward", tuple(flat_in))
    samples = []
    for _ in range(n):
        t1 = time.perf_counter_ns()
        m.run_method("forward", tuple(flat_in))
        samples.append(time.perf_counter_ns() - t1)
    ms = _ms(samples)
    res["timing"] = {"what": "wall clock of portable_lib module.run_method('forward', inputs) (includes the "
                             "pybind input/output conversion), 1 ExecuTorch thread",
                     "warmups": warm, "runs": n, "samples_ms": ms, "median_ms": statistics.median(ms),
                     "min_ms": min(ms)}
    if n < TIMED_RUNS:
        res["timing"]["reduced"] = f"first run took {first_s:.1f} s: {warm} warm-ups and {n} timed runs"
    res["et_ms_median"] = res["timing"]["median_ms"]
    del m
    # ExecuTorch's own measure: ETDump Method::execute events
    try:
        if first_s > ETDUMP_MAX_RUN_S:
            raise RuntimeError(f"skipped: the first run took {first_s:.1f} s")
        me = portable_lib._load_for_executorch_from_buffer(pte, enable_etdump=True)
        for _ in range(warm + n):
            me.run_method("forward", tuple(flat_in))
        with tempfile.TemporaryDirectory() as td:
            p = os.path.join(td, "run.etdp")
            me.write_etdump_result_to_file(p)
            ex_ms = _etdump_execute_ms(p)
        timed = ex_ms[warm:]
        res["etdump_timing"] = {"what": "ETDump 'Method::execute' event durations (enable_etdump=True module, "
                                        "same warm-ups and runs; only the timed runs kept)",
                                "events_found": len(ex_ms), "samples_ms": timed,
                                "median_ms": statistics.median(timed) if timed else None}
    except Exception as e:  # noqa: BLE001  recorded, not fatal
        res["etdump_timing"] = {"error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
    res["total_seconds"] = round(time.time() - t0, 1)
    write_json(d / "result.json", res)
    return res


def _registry_entry(name: str) -> Any:
    try:
        from executorch.examples.models import MODEL_NAME_TO_MODEL
        return list(MODEL_NAME_TO_MODEL[name])
    except Exception:  # noqa: BLE001
        return None


def _extras_versions() -> Dict[str, str]:
    import importlib.metadata as md
    out = {}
    for p in ("timm", "torchaudio", "torchsr", "transformers"):
        try:
            out[p] = md.version(p)
        except Exception:  # noqa: BLE001
            pass
    return out


# --------------------------------------------------------------------------- driver


def _first_line(s: str) -> str:
    for ln in s.splitlines():
        if ln.strip():
            return ln.strip()[:400]
    return ""


def write_index(out: Path) -> None:
    index = []
    for name in MODELS:
        for v in VARIANTS:
            f = out / f"{name}__{v}" / "result.json"
            if not f.exists():
                continue
            r = json.loads(f.read_text())
            index.append({"dir": f"{name}__{v}", "model": name, "variant": v, "family": r["family"],
                          "et_ms_median": r.get("et_ms_median"),
                          "inputs": [{"file": i["file"], "shape": i["shape"], "dtype": i["dtype"]} if "file" in i
                                     else {"value": None} for i in r["inputs"]],
                          "max_abs_diff_et_vs_eager": r.get("max_abs_diff_et_vs_eager")})
    (out / "index.json").write_text(json.dumps(index, indent=1) + "\n")


def run_all(out: Path, models: List[str], variants: List[str], redo: bool, timeout: int = 3600) -> None:
    out.mkdir(parents=True, exist_ok=True)
    ff = out / "failures.json"
    failures: Dict[str, str] = json.loads(ff.read_text()) if ff.exists() else {}
    env = dict(os.environ)
    if os.path.isdir(EXTRAS):
        env["PYTHONPATH"] = EXTRAS + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    for name in models:
        for v in variants:
            key = f"{name}__{v}"
            if not redo and (out / key / "result.json").exists():
                continue
            t0 = time.time()
            print(f"=== {key}", flush=True)
            try:
                p = subprocess.run(["nice", "-n", "10", sys.executable, __file__, "--one", name, v, str(out)],
                                   capture_output=True, text=True, timeout=timeout, env=env)
                log = p.stdout + "\n--- stderr\n" + p.stderr
                if p.returncode == 0 and (out / key / "result.json").exists():
                    failures.pop(key, None)
                    r = json.loads((out / key / "result.json").read_text())
                    print(f"    ok {time.time() - t0:.0f}s pte={r['pte_bytes']} median={r['et_ms_median']} ms "
                          f"diff={r['max_abs_diff_et_vs_eager']}", flush=True)
                else:
                    err = [ln for ln in p.stdout.splitlines() if ln.startswith("FAILED: ")]
                    msg = err[-1][len("FAILED: "):] if err else (
                        f"process exit {p.returncode}: " + _first_line("\n".join(p.stderr.splitlines()[-3:])))
                    failures[key] = msg
                    (out / key).mkdir(parents=True, exist_ok=True)
                    (out / key / "result.json").unlink(missing_ok=True)
                    print(f"    FAILED {time.time() - t0:.0f}s: {msg}", flush=True)
                (out / key).mkdir(parents=True, exist_ok=True)
                (out / key / "log.txt").write_text(log)
            except subprocess.TimeoutExpired:
                failures[key] = f"timeout after {timeout} s (export + {WARMUPS} warm-ups + timed runs)"
            (out / "failures.json").write_text(json.dumps(failures, indent=1, sort_keys=True) + "\n")
            write_index(out)


def main(argv: List[str]) -> int:
    if argv[:1] == ["--list"]:
        for n, s in MODELS.items():
            print(f"{n:22s} {s['family']:13s} {s.get('how', 'the registry class as it is')}")
        return 0
    if argv[:1] == ["--one"]:
        name, variant, out = argv[1], argv[2], Path(argv[3])
        if os.path.isdir(EXTRAS) and EXTRAS not in sys.path:
            sys.path.append(EXTRAS)
        try:
            export_one(name, variant, out)
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            d = out / f"{name}__{variant}"
            (d / "result.json").unlink(missing_ok=True)
            (d / "model.pte").unlink(missing_ok=True)
            print(f"FAILED: {type(e).__name__}: {_first_line(str(e))}", flush=True)
            return 1
        return 0
    args = list(argv)
    opts: Dict[str, Any] = {"models": list(MODELS), "variants": list(VARIANTS), "redo": False, "timeout": 3600}
    pos = []
    while args:
        a = args.pop(0)
        if a == "--models":
            opts["models"] = args.pop(0).split(",")
        elif a == "--variants":
            opts["variants"] = args.pop(0).split(",")
        elif a == "--redo":
            opts["redo"] = True
        elif a == "--timeout":
            opts["timeout"] = int(args.pop(0))
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            pos.append(a)
    unknown = [m for m in opts["models"] if m not in MODELS] + [v for v in opts["variants"] if v not in VARIANTS]
    if unknown:
        print(f"unknown: {unknown}")
        return 2
    run_all(Path(pos[0]) if pos else DEFAULT_OUT, opts["models"], opts["variants"], opts["redo"], opts["timeout"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
