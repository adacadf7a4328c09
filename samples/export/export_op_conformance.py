#!/usr/bin/env python3
"""Operator conformance programs, made and answered by the real ExecuTorch.

For each case below (an operator, or a small composition that makes the exporter emit it, in
several shapes, with broadcasting, scalar overloads, negative dims, empty tensors and every
dtype the case lists) this script exports a program with ExecuTorch's exporter, runs it with
ExecuTorch's portable runtime, and writes one bundled program `<case>.bpte` whose test cases
hold the inputs and the outputs *ExecuTorch* computed. `manifest.json` lists every case with the
operators the exported program actually calls (read from the program, not assumed), the
tolerance the C++ suite uses, and how far ExecuTorch's answer is from eager PyTorch.
`operators.json` is ExecuTorch's own operator list, read from the wheel's kernel yaml files,
so that docs/operators.md can say which operators the suite covers and which it does not.

A case ExecuTorch's exporter or runtime refuses is recorded in the manifest with the reason
(and has no .bpte): it documents a limit of ExecuTorch itself.

  python samples/export/export_op_conformance.py [OUTDIR]   (default tests/fixtures/executorch/ops)
  ETSCOPE_OPS_ONLY=add,mul_bcast ...                       (only these cases, updating the manifest)

Runs single-threaded and deterministic: every input comes from a generator seeded with the
case's name, so a regeneration is byte-identical. Cases marked isolate run ExecuTorch's runtime in
a forked child, since some of its kernel checks abort the process. `random/` (programs calling
rand/randn, whose values cannot be compared) is made when no subset is given or the subset names
`random`.
"""
from __future__ import annotations

import functools
import json
import os
import sys
import zlib
from pathlib import Path

import torch
from torch import nn
import torch.nn.functional as F
import torch.ao.quantization.fx._decomposed  # noqa: F401  registers the quantized_decomposed ops
import executorch.kernels.quantized  # noqa: F401  their out variants
import executorch.exir.passes._quant_patterns_and_replacements  # noqa: F401  embedding_byte/2bit/4bit, mixed_mm, ...

from common import versions

F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
U8, I8, I16, I32, I64, B = torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool
SHORT = {F32: "f32", F64: "f64", F16: "f16", BF16: "bf16", U8: "u8", I8: "i8", I16: "i16",
         I32: "i32", I64: "i64", B: "bool"}
FLOATS = [F32, F64, F16, BF16]
INTS = [U8, I8, I16, I32, I64]
REAL = [F32, F64, F16, BF16, U8, I8, I16, I32, I64]
ALL = REAL + [B]


class In:
    """One input: shape, value kind and an optional fixed dtype (else the variant's)."""

    def __init__(self, shape, kind="normal", dtype=None, hi=None):
        self.shape, self.kind, self.dtype, self.hi = tuple(shape), kind, dtype, hi

    def make(self, dtype, gen):
        dt = self.dtype or dtype
        shape = self.shape
        if self.kind == "index":  # integers in [0, hi)
            return torch.randint(0, self.hi, shape, generator=gen).to(dt)
        if self.kind == "sindex":  # integers in [-hi, hi): negative ones count from the end
            return torch.randint(-self.hi, self.hi, shape, generator=gen).to(dt)
        if self.kind == "eindex":  # integers in [0, hi), the first one 0 and the last one hi - 1
            v = torch.randint(0, self.hi, shape, generator=gen)
            if v.numel():
                v.view(-1)[0], v.view(-1)[-1] = 0, self.hi - 1
            return v.to(dt)
        if self.kind == "perm":  # distinct integers in [0, hi) (positions written once)
            n = 1
            for d in shape:
                n *= d
            return torch.randperm(self.hi, generator=gen)[:n].reshape(shape).to(dt)
        if self.kind == "scale":  # quantization scales in [0.01, 0.1), the first one and ~1/5 zero
            v = torch.rand(shape, generator=gen) * 0.09 + 0.01
            v = v * (torch.rand(shape, generator=gen) >= 0.2)
            if v.numel():
                v.view(-1)[0] = 0.0
            return v.to(dt)
        if dt == B:
            return torch.randint(0, 2, shape, generator=gen).bool()
        if not dt.is_floating_point:
            lo, hi = (0, 12) if dt == U8 else (-9, 9)
            if self.kind == "pos" or self.kind == "nonzero":
                lo = max(lo, 1)
            v = torch.randint(lo, hi, shape, generator=gen)
            if self.kind == "nonzero" and dt != U8:
                v = v * (torch.randint(0, 2, shape, generator=gen) * 2 - 1)
            return v.to(dt)
        if self.kind == "pos":
            v = torch.rand(shape, generator=gen) * 3 + 0.25
        elif self.kind == "unit":
            v = torch.rand(shape, generator=gen) * 1.8 - 0.9
        elif self.kind == "nonzero":
            v = torch.rand(shape, generator=gen) + 0.5
            v = v * (torch.randint(0, 2, shape, generator=gen) * 2 - 1)
        elif self.kind == "big":
            v = torch.rand(shape, generator=gen) * 4 + 1.1
        elif self.kind == "special":  # zeros, infinities, NaN, halves for rounding
            base = torch.tensor([0.0, -0.0, 0.5, -0.5, 1.5, -2.5, float("inf"), float("-inf"), float("nan"), 3.25])
            v = base[torch.randint(0, base.numel(), shape, generator=gen)]
        else:
            v = torch.randn(shape, generator=gen)
        return v.to(dt)


class Case:
    """core_ir=False exports operators outside the core ATen opset that ExecuTorch's portable
    library still has kernels for (masked_select, var_mean, ...), skipping the exporter's check.

    module: a factory of the nn.Module to export instead of `fn` (modules with buffers the
    program mutates: one instance is exported, a fresh one gives eager's answers, and both test
    cases run in order on one loaded method, so the second sees the state the first left).
    backend: ExecutorchBackendConfig arguments for to_executorch (ExecuTorch's own passes, e.g.
    the quantization fusion or the reinplace pass). isolate: run the program in a child process,
    because ExecuTorch's kernels stop the process (ET_CHECK) on some arguments; the log line
    ExecuTorch printed is kept as the reason. note: stored in the manifest entry. exact: the C++
    suite must give ExecuTorch's floats bit for bit (rtol = atol = 0), where etscope computes what
    ExecuTorch's portable kernel computes in the same order."""

    def __init__(self, name, fn, inputs, dtypes=(F32,), core_ir=True, module=None, backend=None,
                 isolate=False, note=None, exact=False):
        self.name, self.fn, self.inputs, self.dtypes, self.core_ir = name, fn, inputs, tuple(dtypes), core_ir
        self.module, self.backend, self.isolate, self.note = module, backend, isolate, note
        self.exact = exact

    def make_module(self):
        return (self.module() if self.module else Fn(self.fn)).eval()


class Fn(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *xs):
        return self.fn(*xs)


# ExecuTorch defines quantized_decomposed::mixed_mm and ::mixed_linear (schemas, and out
# variants with kernels in its runtime) but gives them no eager kernel, so nothing could export a
# call to them. These eager definitions (float32 arithmetic, then the output dtype) let the
# exporter trace the calls and give the "eager" side of the comparison; they follow the
# semantics ExecuTorch's kernels document (vec_quantized_matmul_int8 / _transb_int8):
#   mixed_mm(x[m,n], w[n,p] int8, s[n])           = x @ (w * s[:, None])
#   mixed_linear(x[m,n], w[p,n] int8, s[p] | s[p,G]) = x @ (w * s[j, k // ceil(n / G)]).T
def _dequantized_rows(w, s, zp, axis_len):
    s2 = s.float() if s.dim() == 2 else s.float()[:, None]
    g = -(-axis_len // s2.shape[1])
    d = w.float()
    if zp is not None:
        z2 = zp.float() if zp.dim() == 2 else zp.float()[:, None]
        d = d - z2.repeat_interleave(g, dim=1)[:, :axis_len]
    return d * s2.repeat_interleave(g, dim=1)[:, :axis_len]


def _mixed_mm_eager(x, w, s, zp=None):
    return torch.mm(x.float(), _dequantized_rows(w, s, zp, w.shape[1])).to(x.dtype)


def _mixed_linear_eager(x, w, s, zp=None, dtype=None):
    return torch.mm(x.float(), _dequantized_rows(w, s, zp, w.shape[1]).t()).to(dtype or x.dtype)


_EAGER_LIB = torch.library.Library("quantized_decomposed", "IMPL")
for _op, _f in (("mixed_mm", _mixed_mm_eager), ("mixed_linear", _mixed_linear_eager)):
    if not torch._C._dispatch_has_kernel_for_dispatch_key(f"quantized_decomposed::{_op}", "CompositeExplicitAutograd"):
        _EAGER_LIB.impl(_op, _f, "CompositeExplicitAutograd")


def some(dtypes):
    """The first dtype and, when there is one, the first integer or bool one."""
    rest = [d for d in dtypes[1:] if not d.is_floating_point][:1]
    return [dtypes[0]] + rest


def unary(name, fn, dtypes=FLOATS, kind="normal"):
    # Every dtype on a 2-D tensor; an empty tensor and a 0-d tensor in the first dtype.
    return [Case(f"{name}", fn, [In((3, 5), kind)], dtypes),
            Case(f"{name}_empty", fn, [In((2, 0, 4), kind)], dtypes[:1]),
            Case(f"{name}_0d", fn, [In((), kind)], dtypes[:1])]


def binary(name, fn, dtypes=REAL, kind2="normal", scalar=None):
    out = [Case(f"{name}", fn, [In((2, 3, 4)), In((2, 3, 4), kind2)], dtypes),
           Case(f"{name}_bcast", fn, [In((4, 1, 5)), In((3, 1), kind2)], some(dtypes))]
    if scalar is not None:
        out.append(Case(f"{name}_scalar", lambda x: fn(x, scalar), [In((3, 4))], some(dtypes)))
    return out


def cases():
    c = []
    # ---------------------------------------------------------------- elementwise unary
    for name, fn, kind, dts in [
        ("abs", torch.abs, "normal", REAL), ("neg", torch.neg, "normal", [F32, F64, I32, I64, I8]),
        ("exp", torch.exp, "normal", FLOATS), ("expm1", torch.expm1, "normal", FLOATS),
        ("log", torch.log, "pos", FLOATS), ("log2", torch.log2, "pos", FLOATS),
        ("log10", torch.log10, "pos", FLOATS), ("log1p", torch.log1p, "pos", FLOATS),
        ("sqrt", torch.sqrt, "pos", FLOATS), ("rsqrt", torch.rsqrt, "pos", FLOATS),
        ("reciprocal", torch.reciprocal, "nonzero", FLOATS),
        ("sin", torch.sin, "normal", FLOATS), ("cos", torch.cos, "normal", FLOATS),
        ("tan", torch.tan, "unit", FLOATS), ("asin", torch.asin, "unit", FLOATS),
        ("acos", torch.acos, "unit", FLOATS), ("atan", torch.atan, "normal", FLOATS),
        ("sinh", torch.sinh, "normal", FLOATS), ("cosh", torch.cosh, "normal", FLOATS),
        ("tanh", torch.tanh, "normal", FLOATS), ("asinh", torch.asinh, "normal", FLOATS),
        ("acosh", torch.acosh, "big", FLOATS), ("atanh", torch.atanh, "unit", FLOATS),
        ("erf", torch.erf, "normal", FLOATS), ("sigmoid", torch.sigmoid, "normal", FLOATS),
        ("ceil", torch.ceil, "special", [F32, F64]), ("floor", torch.floor, "special", [F32, F64]),
        ("round", torch.round, "special", [F32, F64]), ("trunc", torch.trunc, "special", [F32, F64]),
        ("sign", torch.sign, "special", [F32, I32]), ("relu", torch.relu, "normal", [F32, F64, I32]),
        ("isnan", torch.isnan, "special", [F32, F64]), ("isinf", torch.isinf, "special", [F32, F64]),
        ("logical_not", torch.logical_not, "normal", [F32, I32, B]),
        ("bitwise_not", torch.bitwise_not, "normal", [I32, I64, U8, B]),
        ("logit", lambda x: torch.logit(x, 1e-3), "unit", [F32]),
        ("gelu", F.gelu, "normal", [F32, F64]),
        ("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), "normal", [F32]),
        ("hardtanh", lambda x: F.hardtanh(x, -0.5, 0.75), "normal", [F32, F64]),
        ("leaky_relu", lambda x: F.leaky_relu(x, 0.1), "normal", [F32, F64]),
        ("elu", lambda x: F.elu(x, 0.7), "normal", [F32]),
        ("silu", F.silu, "normal", [F32]), ("hardswish", F.hardswish, "normal", [F32]),
        ("hardsigmoid", F.hardsigmoid, "normal", [F32]),
        ("clamp", lambda x: torch.clamp(x, -0.5, 0.8), "normal", [F32, F64, I32]),
        ("clamp_min", lambda x: torch.clamp(x, min=0.1), "normal", [F32]),
        ("clamp_int", lambda x: torch.clamp(x, -3, 4), "normal", [I32, I64, U8]),
        ("pow_scalar", lambda x: torch.pow(x, 2.0), "normal", [F32, F64]),
        ("pow_int", lambda x: torch.pow(x, 3), "normal", [I32, I64]),
        ("scalar_pow", lambda x: torch.pow(2.0, x), "normal", [F32]),
    ]:
        c += unary(name, fn, dts, kind)
    # ---------------------------------------------------------------- elementwise binary
    c += binary("add", torch.add, REAL, scalar=2)
    c += [Case("add_alpha", lambda a, b: torch.add(a, b, alpha=3), [In((3, 4)), In((4,))], [F32, I32]),
          Case("add_bool", torch.add, [In((3, 4)), In((3, 4))], [B]),
          Case("add_mixed", lambda a, b: a + b, [In((3, 4), dtype=I32), In((3, 4), dtype=F32)], [F32]),
          Case("add_f32_scalar_float", lambda a: a + 0.5, [In((3, 4))], [F32, I32])]
    c += binary("sub", torch.sub, [F32, F64, I32, I64, I8], scalar=1.5)
    c += [Case("sub_alpha", lambda a, b: torch.sub(a, b, alpha=2), [In((3, 4)), In((1, 4))], [F32, I64]),
          Case("rsub", lambda a: 2.0 - a, [In((3, 4))], [F32, I32])]
    c += binary("mul", torch.mul, ALL, scalar=3)
    c += binary("div", torch.div, [F32, F64, I32, I64], kind2="nonzero", scalar=4.0)
    c += [Case("div_trunc", lambda a, b: torch.div(a, b, rounding_mode="trunc"), [In((3, 4)), In((3, 4), "nonzero")], [F32, I32, I64]),
          Case("div_floor", lambda a, b: torch.div(a, b, rounding_mode="floor"), [In((3, 4)), In((3, 4), "nonzero")], [F32, I32, I64]),
          Case("floor_divide", torch.floor_divide, [In((3, 4)), In((3, 4), "nonzero")], [F32, I32, I64]),
          Case("fmod", torch.fmod, [In((3, 4)), In((3, 4), "nonzero")], [F32, I32]),
          Case("fmod_scalar", lambda a: torch.fmod(a, 1.5), [In((3, 4))], [F32]),
          Case("remainder", torch.remainder, [In((3, 4)), In((3, 4), "nonzero")], [F32, I32, I64]),
          Case("remainder_scalar", lambda a: torch.remainder(a, 2.5), [In((3, 4))], [F32]),
          Case("pow", torch.pow, [In((3, 4), "pos"), In((4,))], [F32, F64]),
          Case("pow_intt", torch.pow, [In((3, 4)), In((3, 4), "pos")], [I32, I64]),
          Case("atan2", torch.atan2, [In((3, 4)), In((2, 1, 4))], [F32, F64]),
          Case("maximum", torch.maximum, [In((3, 4)), In((4,))], [F32, I32, U8, B]),
          Case("minimum", torch.minimum, [In((3, 4)), In((3, 1))], [F32, I64, I8]),
          Case("bitwise_and", torch.bitwise_and, [In((3, 4)), In((4,))], [I32, I64, U8, B]),
          Case("bitwise_or", torch.bitwise_or, [In((3, 4)), In((4,))], [I32, U8, B]),
          Case("bitwise_xor", torch.bitwise_xor, [In((3, 4)), In((4,))], [I32, I16, B]),
          Case("bitwise_and_scalar", lambda a: torch.bitwise_and(a, 6), [In((3, 4))], [I32, U8]),
          Case("left_shift", torch.bitwise_left_shift, [In((3, 4)), In((3, 4), "index", hi=7)], [I32, I64, U8, I8], core_ir=False),
          Case("left_shift_scalar", lambda a: torch.bitwise_left_shift(a, 3), [In((3, 4))], [I32, I16], core_ir=False),
          Case("right_shift", torch.bitwise_right_shift, [In((3, 4)), In((4,), "index", hi=7)], [I32, I64, U8, I8], core_ir=False),
          Case("right_shift_scalar", lambda a: torch.bitwise_right_shift(a, 2), [In((3, 4))], [I32, I64], core_ir=False),
          Case("logical_and", torch.logical_and, [In((3, 4)), In((4,))], [F32, I32, B]),
          Case("logical_or", torch.logical_or, [In((3, 4)), In((4,))], [F32, B]),
          Case("logical_xor", torch.logical_xor, [In((3, 4)), In((4,))], [F32, B]),
          Case("where", torch.where, [In((3, 4), dtype=B), In((3, 4)), In((4,))], [F32, I64, B]),
          Case("where_scalar", lambda c_, a: torch.where(c_, a, 0.0), [In((3, 1), dtype=B), In((3, 4))], [F32]),
          Case("masked_fill", lambda a, m: a.masked_fill(m, -1.5), [In((3, 4)), In((4,), dtype=B)], [F32, F64]),
          Case("masked_fill_int", lambda a, m: a.masked_fill(m, 7), [In((3, 4)), In((3, 4), dtype=B)], [I32, I64]),
          Case("glu", lambda x: F.glu(x, -1), [In((3, 6))], [F32]),
          Case("prelu", lambda x, w: F.prelu(x, w), [In((2, 3, 4)), In((3,))], [F32]),
          ]
    for op, fn in [("eq", torch.eq), ("ne", torch.ne), ("lt", torch.lt), ("le", torch.le),
                   ("gt", torch.gt), ("ge", torch.ge)]:
        c += binary(op, fn, [F32, F64, I32, I64, U8, B], scalar=1)
    c += [Case("eq_mixed", torch.eq, [In((3, 4), dtype=I32), In((3, 4), dtype=F32)], [F32])]
    # ---------------------------------------------------------------- reductions
    for name, fn, dts in [
        ("sum_dim", lambda x: x.sum(dim=1), [F32, F64, I32, I64, B]),
        ("sum_dims_keep", lambda x: x.sum(dim=(0, -1), keepdim=True), [F32, I64]),
        ("sum_all", lambda x: x.sum(), [F32, I32]),
        ("sum_dtype", lambda x: x.sum(dim=-1, dtype=torch.float64), [F32, I32]),
        ("mean_dim", lambda x: x.mean(dim=-1), [F32, F64]),
        ("mean_keep", lambda x: x.mean(dim=(1, 2), keepdim=True), [F32]),
        ("mean_all", lambda x: x.mean(), [F32]),
        ("prod_dim", lambda x: x.prod(dim=1), [F32, I64]),
        ("prod_all", lambda x: x.prod(), [F32, I32]),
        ("amax", lambda x: x.amax(dim=-1), [F32, I32, U8]),
        ("amax_keep", lambda x: x.amax(dim=(0, 2), keepdim=True), [F32]),
        ("amin", lambda x: x.amin(dim=1), [F32, I64]),
        ("argmax", lambda x: x.argmax(dim=1), [F32, I32]),
        ("argmax_all", lambda x: x.argmax(), [F32]),
        ("argmin", lambda x: x.argmin(dim=-1, keepdim=True), [F32, I64]),
        ("max_dim", lambda x: x.max(dim=1), [F32, I32]),
        ("min_dim", lambda x: x.min(dim=-1, keepdim=True), [F32]),
        ("max_all", lambda x: x.max(), [F32, I32]),
        ("min_all", lambda x: x.min(), [F32]),
        ("any_dim", lambda x: x.any(dim=1), [B, F32, I32]),
        ("any_all", lambda x: x.any(), [B]),
        ("all_dim", lambda x: x.all(dim=-1), [B, F32]),
        ("all_all", lambda x: x.all(), [B]),
        ("var_dim", lambda x: x.var(dim=1), [F32, F64]),
        ("var_unbiased0", lambda x: x.var(dim=-1, unbiased=False, keepdim=True), [F32]),
        ("std_dim", lambda x: x.std(dim=1), [F32]),
        ("cumsum", lambda x: x.cumsum(dim=1), [F32, F64, I32, I64]),
        ("cumsum_neg", lambda x: x.cumsum(dim=-1, dtype=torch.float32), [I32]),
        ("logsumexp", lambda x: torch.logsumexp(x, dim=-1), [F32]),
        ("norm_l2", lambda x: torch.linalg.vector_norm(x, dim=-1), [F32]),
        ("softmax", lambda x: F.softmax(x, dim=-1), [F32, F64]),
        ("softmax_dim0", lambda x: F.softmax(x, dim=0), [F32]),
        ("log_softmax", lambda x: F.log_softmax(x, dim=1), [F32, F64]),
    ]:
        c.append(Case(name, fn, [In((3, 4, 5))], dts))
    # Vectorised float32 exp, sigmoid, softmax and the exact GELU (util/expf.h, util/erff.h give
    # glibc's expf and erff bit for bit): ExecuTorch's values exactly, rows of ragged lengths.
    c += [Case("exp_exact", torch.exp, [In((7, 53), "special")], [F32], exact=True),
          Case("exp_exact_wide", lambda x: torch.exp(x * 30.0), [In((5, 211))], [F32], exact=True),
          Case("sigmoid_exact", lambda x: torch.sigmoid(x * 20.0), [In((9, 37))], [F32], exact=True),
          Case("softmax_exact", lambda x: F.softmax(x * 25.0, dim=-1), [In((3, 6, 197))], [F32], exact=True),
          Case("softmax_exact_short", lambda x: F.softmax(x, dim=-1), [In((4, 5, 17))], [F32], exact=True),
          Case("gelu_exact", lambda x: F.gelu(x * 6.0), [In((13, 97))], [F32], exact=True)]
    c += [Case("sum_empty", lambda x: x.sum(dim=1), [In((3, 0, 2))], [F32]),
          Case("topk", lambda x: torch.topk(x, 3, dim=-1), [In((4, 7))], [F32, I32]),
          Case("topk_smallest", lambda x: torch.topk(x, 2, dim=0, largest=False), [In((5, 3))], [F32]),
          Case("sort", lambda x: torch.sort(x, dim=-1), [In((4, 6))], [F32]),
          Case("cdist", lambda a, b: torch.cdist(a, b), [In((2, 4, 3)), In((2, 5, 3))], [F32]),
          Case("pdist", lambda a: F.pdist(a), [In((5, 3))], [F32])]
    # ---------------------------------------------------------------- linear algebra
    c += [Case("mm", torch.mm, [In((3, 4)), In((4, 5))], [F32, F64, I32]),
          Case("bmm", torch.bmm, [In((2, 3, 4)), In((2, 4, 5))], [F32, F64, I64]),
          Case("addmm", lambda b, x, w: torch.addmm(b, x, w, beta=0.5, alpha=2.0), [In((5,)), In((3, 4)), In((4, 5))], [F32]),
          Case("linear", lambda x, w, b: F.linear(x, w, b), [In((2, 3, 4)), In((5, 4)), In((5,))], [F32]),
          Case("linear_nobias", lambda x, w: F.linear(x, w), [In((3, 4)), In((6, 4))], [F32]),
          # Linears of up to 8 rows: ExecuTorch's addmm sums, bit for bit (util/ordered_gemm.cpp).
          Case("linear_gemv_exact", lambda x, w, b: F.linear(x, w, b), [In((1, 300)), In((200, 300)), In((200,))], [F32],
               exact=True),
          Case("linear_rows3_exact", lambda x, w, b: F.linear(x, w, b), [In((3, 96)), In((40, 96)), In((40,))], [F32],
               exact=True),
          Case("linear_rows8_exact", lambda x, w, b: F.linear(x, w, b), [In((8, 130)), In((77, 130)), In((77,))], [F32],
               exact=True),
          Case("matmul_4d", torch.matmul, [In((2, 2, 3, 4)), In((2, 2, 4, 3))], [F32]),
          Case("matmul_bcast", torch.matmul, [In((2, 3, 4)), In((4, 2))], [F32]),
          Case("matmul_vec", torch.matmul, [In((3, 4)), In((4,))], [F32]),
          Case("mm_empty", torch.mm, [In((3, 0)), In((0, 2))], [F32]),
          Case("einsum", lambda a, b: torch.einsum("bij,bjk->bik", a, b), [In((2, 3, 4)), In((2, 4, 2))], [F32])]
    # ---------------------------------------------------------------- shape and data movement
    c += [Case("view", lambda x: x.view(4, -1) + 0, [In((2, 3, 4))], [F32, I64, B]),
          Case("reshape_nc", lambda x: x.transpose(0, 1).reshape(-1), [In((2, 3))], [F32]),
          Case("permute", lambda x: x.permute(2, 0, 1), [In((2, 3, 4))], [F32, I32, B]),
          Case("permute_neg", lambda x: x.permute(-1, -3, -2), [In((2, 3, 4))], [F32]),
          Case("transpose", lambda x: x.transpose(-1, 0), [In((2, 3, 4))], [F32, U8]),
          Case("t", lambda x: x.t(), [In((3, 5))], [F32]),
          Case("squeeze", lambda x: x.squeeze(1), [In((3, 1, 4))], [F32]),
          Case("squeeze_dims", lambda x: x.squeeze((0, 2)), [In((1, 3, 1))], [F32]),
          Case("unsqueeze", lambda x: x.unsqueeze(-1), [In((3, 4))], [F32, I32]),
          Case("expand", lambda x: x.expand(2, 3, 4), [In((3, 1))], [F32, B]),
          Case("repeat", lambda x: x.repeat(2, 1, 3), [In((3, 2))], [F32, I64]),
          Case("repeat_interleave", lambda x: x.repeat_interleave(2, dim=1), [In((3, 2))], [F32]),
          Case("cat", lambda a, b: torch.cat([a, b], dim=1), [In((2, 3, 4)), In((2, 1, 4))], [F32, I32, B]),
          Case("cat_neg_empty", lambda a, b: torch.cat([a, b], dim=-1), [In((2, 3)), In((2, 0))], [F32]),
          Case("cat_mixed", lambda a, b: torch.cat([a, b]), [In((2, 3), dtype=I32), In((1, 3), dtype=F32)], [F32]),
          Case("stack", lambda a, b: torch.stack([a, b], dim=1), [In((3, 4)), In((3, 4))], [F32, I64]),
          Case("split", lambda x: torch.split(x, 2, dim=1), [In((3, 5))], [F32]),
          Case("split_sizes", lambda x: torch.split(x, [1, 3], dim=-1), [In((2, 4))], [F32, I32]),
          Case("chunk", lambda x: torch.chunk(x, 3, dim=0), [In((6, 2))], [F32]),
          Case("unbind", lambda x: torch.unbind(x, dim=1), [In((2, 3, 2))], [F32]),
          Case("slice", lambda x: x[:, 1:5:2], [In((3, 6))], [F32, I32, B]),
          Case("slice_neg", lambda x: x[..., -3:], [In((2, 3, 5))], [F32]),
          Case("narrow", lambda x: torch.narrow(x, 1, 1, 2), [In((3, 4))], [F32]),
          Case("select", lambda x: x[:, 2], [In((3, 4, 2))], [F32, I64]),
          Case("select_neg", lambda x: x.select(-1, -1), [In((3, 4))], [F32]),
          Case("flip", lambda x: torch.flip(x, [0, -1]), [In((3, 4))], [F32, I32]),
          Case("roll", lambda x: torch.roll(x, shifts=(1, -2), dims=(0, 1)), [In((3, 4))], [F32]),
          Case("tril", lambda x: torch.tril(x, diagonal=-1), [In((4, 5))], [F32, I32]),
          Case("triu", lambda x: torch.triu(x, 1), [In((4, 4))], [F32]),
          Case("diagonal", lambda x: torch.diagonal(x, offset=1) + 0, [In((4, 5))], [F32]),
          Case("unfold", lambda x: x.unfold(1, 3, 2) + 0, [In((2, 7))], [F32]),
          Case("as_strided", lambda x: torch.as_strided(x, (3, 2), (1, 3)) + 0, [In((9,))], [F32]),
          Case("clone", lambda x: x.clone() * 1, [In((3, 4))], [F32]),
          Case("contiguous_cl", lambda x: x.contiguous(memory_format=torch.channels_last) + 1, [In((1, 3, 4, 5))], [F32]),
          Case("to_f64", lambda x: x.to(torch.float64), [In((3, 4))], [F32, I32, B]),
          Case("to_i32", lambda x: x.to(torch.int32), [In((3, 4))], [F32, I64, B]),
          Case("to_bool", lambda x: x.to(torch.bool), [In((3, 4))], [F32, I32]),
          Case("to_u8", lambda x: x.to(torch.uint8), [In((3, 4), "pos")], [F32, I32]),
          Case("to_f16", lambda x: x.to(torch.float16), [In((3, 4))], [F32, I32]),
          Case("to_bf16", lambda x: x.to(torch.bfloat16), [In((3, 4))], [F32]),
          Case("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), [In((1, 8, 2, 3))], [F32]),
          Case("pixel_unshuffle", lambda x: F.pixel_unshuffle(x, 2), [In((1, 2, 4, 6))], [F32]),
          Case("flatten", lambda x: torch.flatten(x, 1) * 2, [In((2, 3, 4))], [F32]),
          Case("constant_pad", lambda x: F.pad(x, (1, 2, 0, 1), value=0.5), [In((2, 3, 4))], [F32, I32]),
          Case("reflection_pad1d", lambda x: F.pad(x, (2, 1), mode="reflect"), [In((2, 3, 5))], [F32]),
          Case("reflection_pad2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"), [In((1, 2, 4, 5))], [F32]),
          Case("reflection_pad3d", lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="reflect"), [In((1, 2, 3, 3, 4))], [F32]),
          Case("replication_pad1d", lambda x: F.pad(x, (2, 1), mode="replicate"), [In((2, 3, 5))], [F32]),
          Case("replication_pad2d", lambda x: F.pad(x, (1, 2, 2, 1), mode="replicate"), [In((1, 2, 4, 5))], [F32]),
          Case("replication_pad3d", lambda x: F.pad(x, (1, 1, 1, 0, 0, 1), mode="replicate"), [In((1, 2, 3, 3, 4))], [F32]),
          Case("circular_pad2d", lambda x: F.pad(x, (1, 1, 1, 1), mode="circular"), [In((1, 2, 3, 4))], [F32]),
          ]
    # ---------------------------------------------------------------- creation
    c += [Case("full_like", lambda x: x + torch.full_like(x, 2.5), [In((3, 4))], [F32]),
          Case("zeros_like", lambda x: torch.zeros_like(x) + x, [In((3, 4))], [F32, I32]),
          Case("ones_like", lambda x: torch.ones_like(x) * x, [In((3, 4))], [F32]),
          Case("full", lambda x: x + torch.full((3, 4), 1.5), [In((3, 4))], [F32]),
          Case("zeros", lambda x: torch.cat([x, torch.zeros(1, 4)]), [In((3, 4))], [F32]),
          Case("ones", lambda x: torch.cat([x, torch.ones(2, 4)]), [In((3, 4))], [F32]),
          Case("arange", lambda x: x + torch.arange(4), [In((3, 4))], [F32, I64]),
          Case("arange_step", lambda x: x * torch.arange(1.0, 3.0, 0.5), [In((2, 4))], [F32]),
          Case("scalar_tensor", lambda x: x * torch.tensor(3.0), [In((3, 4))], [F32]),
          Case("empty_like_fill", lambda x: torch.empty_like(x).fill_(2.0) + x, [In((3, 4))], [F32], core_ir=False),
          Case("fill", lambda x: x.clone().fill_(0.25) + x, [In((3,))], [F32])]
    # ---------------------------------------------------------------- indexing
    c += [Case("index_select", lambda x, i: torch.index_select(x, 1, i), [In((3, 5)), In((4,), "index", I64, hi=5)], [F32, I32]),
          Case("index_select_i32", lambda x, i: torch.index_select(x, 0, i), [In((3, 5)), In((2,), "index", I32, hi=3)], [F32]),
          Case("index_tensor", lambda x, i: x[i], [In((5, 3)), In((4,), "index", I64, hi=5)], [F32, I64]),
          Case("index_two", lambda x, i, j: x[i, j], [In((5, 3)), In((4,), "index", I64, hi=5), In((4,), "index", I64, hi=3)], [F32]),
          Case("index_bool", lambda x, m: x[m], [In((3, 4)), In((3,), dtype=B)], [F32]),
          Case("index_mid", lambda x, i: x[:, i], [In((2, 5, 3)), In((2, 2), "index", I64, hi=5)], [F32]),
          Case("gather", lambda x, i: torch.gather(x, 1, i), [In((3, 4)), In((3, 2), "index", I64, hi=4)], [F32, I32]),
          Case("scatter", lambda x, i, s: torch.scatter(x, 1, i, s), [In((3, 4)), In((3, 2), "index", I64, hi=4), In((3, 2))], [F32]),
          Case("scatter_value", lambda x, i: torch.scatter(x, 0, i, 1.5), [In((3, 4)), In((2, 4), "index", I64, hi=3)], [F32]),
          Case("scatter_add", lambda x, i, s: torch.scatter_add(x, 1, i, s), [In((3, 4)), In((3, 5), "index", I64, hi=4), In((3, 5))], [F32, I64]),
          Case("index_put", lambda x, i, v: torch.index_put(x, (i,), v), [In((5, 3)), In((2,), "index", I64, hi=5), In((2, 3))], [F32]),
          Case("index_put_acc", lambda x, i, v: torch.index_put(x, (i,), v, accumulate=True), [In((5, 3)), In((4,), "index", I64, hi=5), In((3,))], [F32]),
          Case("select_scatter", lambda x, s: torch.select_scatter(x, s, 1, 2), [In((3, 4)), In((3,))], [F32]),
          Case("slice_scatter", lambda x, s: torch.slice_scatter(x, s, 1, 0, 4, 2), [In((3, 4)), In((3, 2))], [F32]),
          Case("masked_scatter", lambda x, m, s: x.masked_scatter(m, s), [In((3, 4)), In((3, 4), dtype=B), In((12,))], [F32]),
          Case("masked_select", lambda x, m: torch.masked_select(x, m), [In((3, 4)), In((3, 4), dtype=B)], [F32], core_ir=False),
          Case("nonzero", lambda x: torch.nonzero(x), [In((3, 4))], [B, I32]),
          Case("index_negative", lambda x, i: x[i], [In((5, 3)), In((2, 3), "sindex", I64, hi=5)], [F32, B]),
          Case("index_i32", lambda x, i: x[:, i], [In((2, 5, 3)), In((4,), "sindex", I32, hi=5)], [F32]),
          Case("index_nonadjacent", lambda x, i, j: x[i, :, j], [In((4, 3, 5)), In((2, 1), "index", I64, hi=4), In((3,), "index", I64, hi=5)], [F32, I64]),
          Case("index_mask2d", lambda x, m: x[m], [In((3, 4, 2)), In((3, 4), dtype=B)], [F32]),
          Case("index_put_mask", lambda x, m, v: torch.index_put(x, (m,), v), [In((3, 4)), In((3, 4), dtype=B), In(())], [F32]),
          Case("index_put_2idx", lambda x, i, j, v: torch.index_put(x, (i, j), v), [In((4, 5)), In((3,), "index", I64, hi=4), In((3,), "sindex", I64, hi=5), In((3,))], [F32, I32]),
          Case("var_mean", lambda x: torch.var_mean(x, dim=1), [In((3, 4, 5))], [F32, F64], core_ir=False),
          Case("var_mean_keep", lambda x: torch.var_mean(x, dim=(0, 2), correction=0, keepdim=True), [In((3, 4, 5))], [F32], core_ir=False),
          Case("topk_unsorted_dim1", lambda x: torch.topk(x, 2, dim=1), [In((2, 5, 3))], [F32, I64]),
          Case("diagonal_neg", lambda x: torch.diagonal(x, offset=-1, dim1=0, dim2=2) + 0, [In((4, 2, 3))], [F32]),
          Case("unfold_3d", lambda x: x.unfold(-1, 2, 1) + 0, [In((2, 3, 4))], [F32]),
          Case("embedding", lambda w, i: F.embedding(i, w), [In((10, 4)), In((2, 3), "index", I64, hi=10)], [F32]),
          Case("embedding_i32", lambda w, i: F.embedding(i, w), [In((10, 4)), In((5,), "index", I32, hi=10)], [F32])]
    # ---------------------------------------------------------------- convolution, pooling, norms
    c += [Case("conv1d", lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=1), [In((2, 3, 9)), In((4, 3, 3)), In((4,))], [F32, F64]),
          Case("conv2d", lambda x, w, b: F.conv2d(x, w, b, padding=1), [In((1, 3, 6, 5)), In((4, 3, 3, 3)), In((4,))], [F32, F64]),
          Case("conv2d_groups_dil", lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=2, dilation=2, groups=2), [In((2, 4, 7, 6)), In((6, 2, 3, 3))], [F32]),
          Case("conv2d_depthwise", lambda x, w: F.conv2d(x, w, padding=1, groups=3), [In((1, 3, 5, 5)), In((3, 1, 3, 3))], [F32]),
          # Depthwise convolutions sum their taps as ExecuTorch's portable kernel does: its values
          # bit for bit, for every path (16-wide rows, stride 2, masked tails, the scalar loop).
          Case("conv2d_depthwise_exact", lambda x, w, b: F.conv2d(x, w, b, padding=1, groups=8),
               [In((2, 8, 19, 37)), In((8, 1, 3, 3)), In((8,))], [F32], exact=True),
          Case("conv2d_depthwise_s2_exact", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=2, groups=6),
               [In((1, 6, 23, 41)), In((6, 1, 5, 5)), In((6,))], [F32], exact=True),
          Case("conv2d_depthwise_mult_exact", lambda x, w: F.conv2d(x, w, stride=(1, 2), padding=(0, 3), dilation=2, groups=4),
               [In((1, 4, 11, 50)), In((8, 1, 3, 4))], [F32], exact=True),
          Case("conv2d_depthwise_s3_exact", lambda x, w, b: F.conv2d(x, w, b, stride=3, padding=1, groups=5),
               [In((1, 5, 13, 17)), In((5, 1, 3, 3)), In((5,))], [F32], exact=True),
          Case("conv3d", lambda x, w, b: F.conv3d(x, w, b, padding=1), [In((1, 2, 4, 4, 3)), In((3, 2, 3, 3, 3)), In((3,))], [F32]),
          Case("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2), [In((1, 3, 4, 4)), In((3, 2, 3, 3))], [F32]),
          Case("max_pool1d", lambda x: F.max_pool1d(x, 3, 2, 1), [In((2, 3, 9))], [F32]),
          Case("max_pool2d", lambda x: F.max_pool2d(x, 3, 2, 1), [In((1, 2, 7, 6))], [F32, F64]),
          Case("max_pool2d_ceil_dil", lambda x: F.max_pool2d(x, 2, 2, 0, dilation=2, ceil_mode=True), [In((1, 2, 7, 7))], [F32]),
          Case("max_pool2d_idx", lambda x: F.max_pool2d(x, 2, 2, return_indices=True), [In((1, 2, 6, 6))], [F32]),
          Case("max_pool3d", lambda x: F.max_pool3d(x, 2, 2), [In((1, 2, 4, 4, 4))], [F32]),
          Case("avg_pool1d", lambda x: F.avg_pool1d(x, 3, 2, 1), [In((2, 3, 9))], [F32]),
          Case("avg_pool2d", lambda x: F.avg_pool2d(x, 3, 2, 1), [In((1, 2, 7, 6))], [F32, F64]),
          Case("avg_pool2d_nopad", lambda x: F.avg_pool2d(x, 3, 2, 1, ceil_mode=True, count_include_pad=False), [In((1, 2, 7, 6))], [F32]),
          Case("avg_pool2d_div", lambda x: F.avg_pool2d(x, 2, divisor_override=3), [In((1, 2, 4, 6))], [F32]),
          Case("avg_pool3d", lambda x: F.avg_pool3d(x, 2, 2), [In((1, 2, 4, 4, 4))], [F32]),
          Case("adaptive_avg_pool2d", lambda x: F.adaptive_avg_pool2d(x, 1), [In((2, 3, 5, 4))], [F32]),
          Case("adaptive_avg_pool2d_3", lambda x: F.adaptive_avg_pool2d(x, (3, 2)), [In((1, 2, 6, 4))], [F32]),
          Case("adaptive_max_pool2d", lambda x: F.adaptive_max_pool2d(x, (2, 2)), [In((1, 2, 6, 4))], [F32], core_ir=False),
          Case("layer_norm", lambda x, w, b: F.layer_norm(x, (5,), w, b), [In((2, 3, 5)), In((5,)), In((5,))], [F32, F64]),
          Case("layer_norm_2d_noaffine", lambda x: F.layer_norm(x, (3, 5)), [In((2, 3, 5))], [F32]),
          # Rows shorter than 256 as ExecuTorch sums them (in float, in order): bit for bit.
          Case("layer_norm_exact", lambda x, w, b: F.layer_norm(x * 3.0 + 0.5, (192,), w, b), [In((3, 41, 192)), In((192,)), In((192,))],
               [F32], exact=True),
          Case("layer_norm_exact_noaffine", lambda x: F.layer_norm(x, (5, 51)), [In((4, 5, 51))], [F32], exact=True),
          # Rows of 256 or more: Welford's method in 8 lanes (ExecuTorch's optimized kernel), with
          # values past the last whole vector (300 = 37 x 8 + 4).
          Case("layer_norm_exact_wide", lambda x, w, b: F.layer_norm(x * 2.0 - 0.25, (768,), w, b), [In((2, 9, 768)), In((768,)), In((768,))],
               [F32], exact=True),
          Case("layer_norm_exact_wide_tail", lambda x: F.layer_norm(x, (300,)), [In((5, 300))], [F32], exact=True),
          Case("group_norm", lambda x, w, b: F.group_norm(x, 2, w, b), [In((2, 4, 3, 3)), In((4,)), In((4,))], [F32]),
          Case("batch_norm", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, False, 0.1, 1e-5), [In((2, 3, 4, 4)), In((3,)), In((3,), "pos"), In((3,)), In((3,))], [F32]),
          Case("batch_norm1d", lambda x, m, v: F.batch_norm(x, m, v, None, None, False, 0.1, 1e-3), [In((4, 3)), In((3,)), In((3,), "pos")], [F32]),
          Case("instance_norm", lambda x: F.instance_norm(x), [In((2, 3, 4, 4))], [F32]),
          Case("rms_norm", lambda x, w: F.rms_norm(x, (4,), w), [In((2, 3, 4)), In((4,))], [F32]),
          Case("upsample_nearest2d", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), [In((1, 2, 3, 4))], [F32]),
          Case("upsample_nearest2d_size", lambda x: F.interpolate(x, size=(5, 7), mode="nearest"), [In((1, 2, 3, 4))], [F32]),
          Case("upsample_bilinear2d", lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"), [In((1, 2, 3, 4))], [F32]),
          Case("upsample_bilinear2d_ac", lambda x: F.interpolate(x, size=(5, 6), mode="bilinear", align_corners=True), [In((1, 2, 3, 4))], [F32]),
          Case("grid_sample", lambda x, g: F.grid_sample(x, g, align_corners=False), [In((1, 2, 4, 5)), In((1, 3, 3, 2), "unit")], [F32]),
          Case("grid_sample_outside", lambda x, g: F.grid_sample(x, g * 1.5, align_corners=True), [In((2, 2, 4, 5)), In((2, 3, 4, 2), "unit")], [F32, F64]),
          Case("grid_sample_nearest_border", lambda x, g: F.grid_sample(x, g * 1.5, mode="nearest", padding_mode="border", align_corners=False), [In((1, 3, 4, 5)), In((1, 3, 3, 2), "unit")], [F32]),
          Case("grid_sample_reflection", lambda x, g: F.grid_sample(x, g * 2.5, padding_mode="reflection", align_corners=False), [In((1, 2, 4, 5)), In((1, 4, 3, 2), "unit")], [F32]),
          Case("grid_sample_reflection_ac", lambda x, g: F.grid_sample(x, g * 2.5, padding_mode="reflection", align_corners=True), [In((1, 2, 4, 5)), In((1, 4, 3, 2), "unit")], [F32]),
          Case("dropout_eval", lambda x: F.dropout(x, 0.5, training=False) + 1, [In((3, 4))], [F32]),
          Case("sdpa", lambda q, k, v: F.scaled_dot_product_attention(q, k, v), [In((1, 2, 4, 8)), In((1, 2, 5, 8)), In((1, 2, 5, 8))], [F32]),
          Case("sdpa_mask", lambda q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m), [In((1, 2, 4, 8)), In((1, 2, 4, 8)), In((1, 2, 4, 8)), In((4, 4), dtype=B)], [F32]),
          ]
    # ---------------------------------------------------------------- quantized (decomposed)
    qd = torch.ops.quantized_decomposed
    c += [Case("quantize_per_tensor", lambda x: qd.quantize_per_tensor(x, 0.05, 3, -128, 127, torch.int8), [In((3, 4))], [F32]),
          Case("quantize_per_tensor_u8", lambda x: qd.quantize_per_tensor(x, 0.02, 128, 0, 255, torch.uint8), [In((3, 4))], [F32]),
          Case("dequantize_per_tensor", lambda q: qd.dequantize_per_tensor(q, 0.05, 3, -128, 127, torch.int8), [In((3, 4), dtype=I8)], [F32]),
          Case("qdq_roundtrip", lambda x: qd.dequantize_per_tensor(qd.quantize_per_tensor(x, 0.01, -2, -128, 127, torch.int8), 0.01, -2, -128, 127, torch.int8), [In((4, 5))], [F32]),
          Case("quantize_per_channel", lambda x, s, z: qd.quantize_per_channel(x, s, z, 1, -128, 127, torch.int8), [In((2, 3, 4)), In((3,), "pos", F64), In((3,), "index", I64, hi=4)], [F32]),
          Case("dequantize_per_channel", lambda q, s, z: qd.dequantize_per_channel(q, s, z, 0, -128, 127, torch.int8), [In((3, 4), dtype=I8), In((3,), "pos", F64), In((3,), "index", I64, hi=4)], [F32]),
          Case("choose_qparams", lambda x: qd.choose_qparams.tensor(x, -128, 127, 1e-5, torch.int8), [In((4, 5))], [F32]),
          Case("choose_qparams_per_token", lambda x: qd.choose_qparams_per_token_asymmetric(x, torch.int8), [In((2, 3, 5))], [F32]),
          Case("dequantize_per_token", lambda q, s, z: qd.dequantize_per_token(q, s, z, -128, 127, torch.int8, torch.float32), [In((3, 4), dtype=I8), In((3, 1), "pos", F64), In((3, 1), "index", I64, hi=3)], [F32]),
          Case("quantize_per_token", lambda x, s, z: qd.quantize_per_token(x, s, z, -128, 127, torch.int8), [In((3, 4)), In((3, 1), "pos", F64), In((3, 1), "index", I64, hi=3)], [F32]),
          ]
    c += weight_only_quantized_cases()
    c += quantized_add_cases()
    # ---------------------------------------------------------------- antialiased bilinear resize
    aa = lambda **kw: (lambda x: F.interpolate(x, mode="bilinear", antialias=True, **kw))  # noqa: E731
    c += [Case("upsample_bilinear2d_aa_down", aa(size=(3, 5)), [In((1, 2, 7, 9))], [F32, F64]),
          Case("upsample_bilinear2d_aa_down_ac", aa(size=(3, 4), align_corners=True), [In((2, 3, 8, 11))], [F32]),
          Case("upsample_bilinear2d_aa_down_scale", aa(scale_factor=0.45), [In((1, 2, 9, 13))], [F32]),
          Case("upsample_bilinear2d_aa_down_scale_ac", aa(scale_factor=(0.3, 0.6), align_corners=True), [In((1, 1, 10, 7))], [F32]),
          Case("upsample_bilinear2d_aa_up", aa(scale_factor=1.7), [In((1, 2, 3, 4))], [F32, F64]),
          Case("upsample_bilinear2d_aa_up_ac", aa(size=(7, 9), align_corners=True), [In((1, 2, 4, 5))], [F32]),
          Case("upsample_bilinear2d_aa_mixed", aa(size=(3, 12)), [In((1, 3, 8, 5))], [F32]),
          Case("upsample_bilinear2d_aa_to1", aa(size=(1, 1)), [In((1, 2, 5, 6))], [F32]),
          Case("upsample_bilinear2d_aa_same", aa(size=(4, 5)), [In((1, 2, 4, 5))], [F32]),
          Case("upsample_bilinear2d_aa_empty", aa(size=(2, 3)), [In((0, 2, 5, 6))], [F32])]
    # ---------------------------------------------------------------- mutable buffers
    c += mutable_buffer_cases()
    return c


# The variant dtype (the name's suffix) of these cases is the dtype of the scales (and zero
# points); "_to_<dtype>" cases ask for another output dtype through the .dtype overload.
# ExecuTorch's 2- and 4-bit tables pack 4 / 2 values per byte (lowest bits first for 2-bit, high
# nibble first for 4-bit, both stored with an offset of 2 / 8); 2-D scales hold one scale per
# group of columns.
_QEMB = {8: ("embedding_byte", -128, 127, 1), 4: ("embedding_4bit", -8, 7, 2), 2: ("embedding_2bit", -2, 1, 4)}


def weight_only_quantized_cases():
    qd = torch.ops.quantized_decomposed
    c = []
    for bits, (name, lo, hi, per) in _QEMB.items():
        op = getattr(qd, name)
        rows, packed = 7, (6 if bits == 8 else 3)  # 4-bit: 6 values, 2-bit: 12 values per row
        dim = packed * per
        if bits == 8:
            w = In((rows, packed), "sindex", I8, hi=128)
        else:
            w = In((rows, packed), "index", U8, hi=256)
        plain = lambda w_, s_, i_, op=op, lo=lo, hi=hi: op(w_, s_, None, lo, hi, i_)  # noqa: E731
        zp = lambda w_, s_, z_, i_, op=op, lo=lo, hi=hi: op(w_, s_, z_, lo, hi, i_)  # noqa: E731
        idx = In((2, 3), "eindex", I64, hi=rows)
        c += [Case(name, plain, [w, In((rows,), "scale"), idx], [F32, F16, BF16], isolate=True),
              Case(f"{name}_zp", zp, [w, In((rows,), "scale"), In((rows,), "sindex", hi=3), idx], [F32, F16], isolate=True),
              Case(f"{name}_1d_idx", plain, [w, In((rows,), "scale"), In((9,), "eindex", I64, hi=rows)], [F32], isolate=True),
              Case(f"{name}_empty", plain, [w, In((rows,), "scale"), In((2, 0), "index", I64, hi=rows)], [F32], isolate=True),
              Case(f"{name}_i32_idx", plain, [w, In((rows,), "scale"), In((2, 3), "eindex", I32, hi=rows)], [F32], isolate=True)]
        # Per-group scales: group sizes that split a packed byte, match it, or span bytes.
        for groups in ({8: (3, 2), 4: (3, 2, 6), 2: (4, 6, 3)}[bits]):
            g = f"{name}_group{dim // groups}"
            c += [Case(g, plain, [w, In((rows, groups), "scale"), In((5,), "eindex", I64, hi=rows)], [F32], isolate=True),
                  Case(f"{g}_zp", zp, [w, In((rows, groups), "scale"), In((rows, groups), "sindex", hi=3), In((2, 2), "eindex", I64, hi=rows)], [F32], isolate=True)]
        for out_dt in (F32, F16, BF16):
            to = lambda w_, s_, i_, op=op, lo=lo, hi=hi, dt=out_dt: op.dtype(w_, s_, None, lo, hi, i_, dtype=dt)  # noqa: E731
            c.append(Case(f"{name}_to_{SHORT[out_dt]}", to, [w, In((rows,), "scale"), idx],
                          [d for d in (F32, F16, BF16) if d != out_dt], isolate=True))
        to16zp = lambda w_, s_, z_, i_, op=op, lo=lo, hi=hi: op.dtype(w_, s_, z_, lo, hi, i_, dtype=F16)  # noqa: E731
        to32g = lambda w_, s_, i_, op=op, lo=lo, hi=hi: op.dtype(w_, s_, None, lo, hi, i_, dtype=F32)  # noqa: E731
        c += [Case(f"{name}_to_f16_zp", to16zp, [w, In((rows,), "scale"), In((rows,), "sindex", hi=3), idx], [F32], isolate=True),
              Case(f"{name}_to_f32_group", to32g, [w, In((rows, 2), "scale"), In((4,), "eindex", I64, hi=rows)], [F16], isolate=True),
              Case(f"{name}_same_dtype", lambda w_, s_, i_, op=op, lo=lo, hi=hi: op.dtype(w_, s_, None, lo, hi, i_, dtype=s_.dtype),
                   [w, In((rows,), "scale"), idx], [F32, F16], isolate=True)]
    c += [Case("embedding_byte_u8_zp", lambda w_, s_, z_, i_: qd.embedding_byte(w_, s_, z_, 0, 255, i_),
               [In((5, 4), "index", U8, hi=256), In((5,), "scale"), In((5,), "index", hi=256), In((3, 2), "eindex", I64, hi=5)], [F32], isolate=True)]
    # mixed_mm / mixed_linear: int8 weights, scales in the input's dtype (the variant).
    mm = lambda x, w, s_: qd.mixed_mm(x, w, s_, None)  # noqa: E731
    lin = lambda x, w, s_: qd.mixed_linear(x, w, s_, None)  # noqa: E731
    c += [Case("mixed_mm", mm, [In((3, 5)), In((5, 4), "sindex", I8, hi=128), In((5,), "scale")], [F32, F16], core_ir=False, isolate=True),
          Case("mixed_mm_wide", mm, [In((1, 9)), In((9, 7), "sindex", I8, hi=128), In((9,), "scale")], [F32], core_ir=False, isolate=True),
          Case("mixed_mm_empty", mm, [In((0, 5)), In((5, 4), "sindex", I8, hi=128), In((5,), "scale")], [F32], core_ir=False, isolate=True),
          Case("mixed_mm_zp", lambda x, w, s_, z: qd.mixed_mm(x, w, s_, z), [In((3, 5)), In((5, 4), "sindex", I8, hi=128), In((5,), "scale"), In((5,), "sindex", hi=3)], [F32], core_ir=False, isolate=True),
          Case("mixed_linear", lin, [In((3, 5)), In((4, 5), "sindex", I8, hi=128), In((4,), "scale")], [F32, F16], core_ir=False, isolate=True),
          Case("mixed_linear_group", lin, [In((2, 8)), In((3, 8), "sindex", I8, hi=128), In((3, 4), "scale")], [F32, F16], core_ir=False, isolate=True),
          Case("mixed_linear_group_ragged", lin, [In((2, 10)), In((3, 10), "sindex", I8, hi=128), In((3, 4), "scale")], [F32], core_ir=False, isolate=True),
          Case("mixed_linear_to_f16", lambda x, w, s_: qd.mixed_linear(x, w, s_, None, F16), [In((3, 6)), In((5, 6), "sindex", I8, hi=128), In((5,), "scale")], [F32], core_ir=False, isolate=True),
          Case("mixed_linear_to_f32", lambda x, w, s_: qd.mixed_linear(x, w, s_, None, F32), [In((3, 6)), In((5, 6), "sindex", I8, hi=128), In((5,), "scale")], [F16], core_ir=False, isolate=True),
          Case("mixed_linear_zp", lambda x, w, s_, z: qd.mixed_linear(x, w, s_, z), [In((3, 5)), In((4, 5), "sindex", I8, hi=128), In((4,), "scale"), In((4,), "sindex", hi=3)], [F32], core_ir=False, isolate=True),
          Case("mixed_linear_empty", lin, [In((0, 5)), In((4, 5), "sindex", I8, hi=128), In((4,), "scale")], [F32], core_ir=False, isolate=True)]
    return c


class _QAdd(nn.Module):
    """dequantize a and b, add, quantize: ExecuTorch's quantization fusion
    (ExecutorchBackendConfig(do_quant_fusion_and_const_prop=True), as its LLM export uses) turns
    this into quantized_decomposed::add when the dtype is uint8."""

    def __init__(self, qa, qb, qout, dtype, lo, hi):
        super().__init__()
        self.qa, self.qb, self.qout, self.dtype, self.lo, self.hi = qa, qb, qout, dtype, lo, hi

    def forward(self, a, b):
        qd = torch.ops.quantized_decomposed
        x = qd.dequantize_per_tensor(a, *self.qa, self.lo, self.hi, self.dtype)
        y = qd.dequantize_per_tensor(b, *self.qb, self.lo, self.hi, self.dtype)
        return qd.quantize_per_tensor(x + y, *self.qout, self.lo, self.hi, self.dtype)


def quantized_add_cases():
    fuse = {"do_quant_fusion_and_const_prop": True}
    u8 = lambda shape: In(shape, "index", U8, hi=256)  # noqa: E731
    return [
        Case("quantized_add", None, [u8((2, 3, 4)), u8((2, 3, 4))], [U8], backend=fuse, isolate=True,
             module=lambda: _QAdd((0.05, 3), (0.1, 7), (0.08, 5), U8, 0, 255)),
        # out scale small: many sums are clamped to quant_max
        Case("quantized_add_clamp", None, [u8((5, 3)), u8((5, 3))], [U8], backend=fuse, isolate=True,
             module=lambda: _QAdd((0.2, 128), (0.02, 0), (0.01, 100), U8, 0, 255)),
        # a narrower quantization range than the dtype's
        Case("quantized_add_range", None, [In((4, 4), "index", U8, hi=128), In((4, 4), "index", U8, hi=128)], [U8], backend=fuse, isolate=True,
             module=lambda: _QAdd((0.03, 64), (0.04, 60), (0.05, 64), U8, 0, 127)),
        Case("quantized_add_empty", None, [u8((0, 3)), u8((0, 3))], [U8], backend=fuse, isolate=True,
             module=lambda: _QAdd((0.05, 3), (0.1, 7), (0.08, 5), U8, 0, 255)),
        # broadcasting: fused too, but ExecuTorch's kernel needs equal shapes
        Case("quantized_add_bcast", None, [u8((2, 3)), u8((3,))], [U8], backend=fuse, isolate=True,
             module=lambda: _QAdd((0.05, 3), (0.1, 7), (0.08, 5), U8, 0, 255)),
        # int8: the fusion pattern is for uint8, the program keeps dequantize/add/quantize
        Case("quantized_add_fusion", None, [In((2, 5), "sindex", I8, hi=128), In((2, 5), "sindex", I8, hi=128)], [I8], backend=fuse, isolate=True,
             module=lambda: _QAdd((0.05, 3), (0.1, -7), (0.08, 5), I8, -128, 127)),
    ]


class _BufferCopy(nn.Module):
    def __init__(self, shape=(2, 3), dtype=F32):
        super().__init__()
        self.register_buffer("buf", torch.zeros(shape, dtype=dtype))

    def forward(self, x):
        self.buf.copy_(x)
        return self.buf * 2


class _BufferAccumulate(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("total", torch.zeros(3, 4))
        self.register_buffer("calls", torch.zeros((), dtype=I64))

    def forward(self, x):
        self.total.add_(x)
        self.calls.add_(1)
        return self.total / self.calls, self.calls.clone()


class _KvCache(nn.Module):
    """A KV cache as ExecuTorch's llama example (examples/models/llama/attention.py, KVCache with
    static shapes) writes it: k_cache[:, :, input_pos] = k_val."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 2, 8, 4))
        self.register_buffer("v_cache", torch.zeros(1, 2, 8, 4))

    def forward(self, input_pos, k, v):
        self.k_cache[:, :, input_pos] = k
        self.v_cache[:, :, input_pos] = v
        return self.k_cache + 0, self.v_cache + 0


class _KvIndexCopy(nn.Module):
    """The llama example's dynamic-shape KV cache: index_copy_ at arange(seq) + input_pos[0]."""

    def __init__(self):
        super().__init__()
        self.register_buffer("k_cache", torch.zeros(1, 2, 8, 4))

    def forward(self, input_pos, k):
        start = input_pos[0].item()
        torch._check_is_size(start)
        torch._check(start + k.size(2) <= 8)
        self.k_cache.index_copy_(2, torch.arange(k.size(2)) + start, k)
        return self.k_cache * 1


class _IndexPutInPlace(nn.Module):
    def __init__(self, accumulate=False):
        super().__init__()
        self.accumulate = accumulate
        self.register_buffer("table", torch.zeros(6, 3))

    def forward(self, idx, values):
        torch.ops.aten.index_put_(self.table, [idx], values, self.accumulate)
        return self.table + 0


def mutable_buffer_cases():
    """Buffers the program updates in place. ExecuTorch functionalizes the update and writes the
    new value back into the buffer at the end of the method with aten::copy_ (the default); with
    ExecutorchBackendConfig(run_reinplace_pass=True) an index_put becomes aten::index_put_ on the
    buffer itself and there is no write-back copy."""
    state = "stateful: test case 1 runs after test case 0 on the same loaded method and sees its buffer updates"
    reinplace = {"run_reinplace_pass": True}
    return [
        Case("buffer_copy", None, [In((2, 3))], [F32, I32, F64], module=_BufferCopy, isolate=True, note=state),
        Case("buffer_copy_bcast", None, [In((3,))], [F32], module=_BufferCopy, isolate=True, note=state),
        Case("buffer_accumulate", None, [In((3, 4))], [F32], module=_BufferAccumulate, isolate=True, note=state),
        Case("kv_cache_index_put", None, [In((2,), "perm", I64, hi=8), In((1, 2, 2, 4)), In((1, 2, 2, 4))], [F32],
             module=_KvCache, isolate=True, note=state),
        Case("kv_cache_index_put_reinplace", None, [In((2,), "perm", I64, hi=8), In((1, 2, 2, 4)), In((1, 2, 2, 4))], [F32],
             module=_KvCache, backend=reinplace, isolate=True, note=state),
        Case("kv_cache_index_copy", None, [In((1,), "index", I64, hi=6), In((1, 2, 3, 4))], [F32],
             module=_KvIndexCopy, isolate=True, core_ir=False, note=state),
        Case("kv_cache_index_copy_reinplace", None, [In((1,), "index", I64, hi=6), In((1, 2, 3, 4))], [F32],
             module=_KvIndexCopy, backend=reinplace, isolate=True, core_ir=False, note=state),
        Case("index_put_inplace", None, [In((2,), "perm", I64, hi=6), In((2, 3))], [F32], module=_IndexPutInPlace,
             backend=reinplace, isolate=True, note=state),
        Case("index_put_inplace_acc", None, [In((4,), "index", I64, hi=6), In((4, 3))], [F32],
             module=lambda: _IndexPutInPlace(True), backend=reinplace, isolate=True, note=state),
        Case("index_put_inplace_default", None, [In((2,), "perm", I64, hi=6), In((2, 3))], [F32], module=_IndexPutInPlace,
             isolate=True, note=state),
    ]


@functools.lru_cache(maxsize=None)
def operator_list() -> dict:
    """ExecuTorch's kernel libraries' operators, from the wheel's yaml files."""
    import executorch
    import yaml

    root = Path(list(executorch.__path__)[0])
    found = {}
    for rel in ["kernels/portable/functions.yaml", "kernels/portable/custom_ops.yaml",
                "kernels/portable/et_copy_ops.yaml", "kernels/quantized/quantized.yaml"]:
        path = root / rel
        if not path.exists():
            hits = sorted(root.rglob(Path(rel).name))
            hits = [h for h in hits if Path(rel).parent.name in str(h)]
            if not hits:
                found[rel] = []
                continue
            path = hits[0]
        names = []
        for entry in yaml.safe_load(path.read_text()) or []:
            if "op" in entry:
                name = entry["op"]
                ns = "aten"
            else:
                sig = entry["func"]
                name = sig.split("(")[0]
                ns = "aten"
                if "::" in name:
                    ns, name = name.split("::", 1)
                elif rel.startswith("kernels/quantized"):
                    ns = "quantized_decomposed"
            names.append(f"{ns}::{name}")
        found[rel] = names
    return found


def main() -> None:
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import EdgeCompileConfig, ExecutorchBackendConfig, to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    torch.set_num_threads(1)
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/executorch/ops")
    out.mkdir(parents=True, exist_ok=True)
    only = set(filter(None, os.environ.get("ETSCOPE_OPS_ONLY", "").split(",")))
    manifest = {"versions": versions(), "cases": {}}
    if only and (out / "manifest.json").exists():  # a subset updates the existing manifest
        manifest = json.loads((out / "manifest.json").read_text())
    for case in cases():
        if only and case.name not in only:
            continue
        for dtype in case.dtypes:
            name = f"{case.name}_{SHORT[dtype]}"
            seed = zlib.crc32(name.encode())
            gen = torch.Generator().manual_seed(seed)
            inputs = [[i.make(dtype, gen) for i in case.inputs] for _ in range(2)]
            entry = {"dtype": SHORT[dtype], "inputs": [f"{SHORT[x.dtype]}{list(x.shape)}" for x in inputs[0]]}
            if case.note:
                entry["note"] = case.note
            module = case.make_module()
            # A module with state gives eager's answers from a fresh instance (the exported one
            # must keep its initial buffers).
            eager_module = case.make_module() if case.module else module
            try:
                with torch.no_grad():
                    eager = [eager_module(*xs) for xs in inputs]
                ep = torch.export.export(module, tuple(inputs[0]), strict=False)
                config = None if case.core_ir else EdgeCompileConfig(_check_ir_validity=False)
                backend = ExecutorchBackendConfig(**case.backend) if case.backend else None
                et = to_edge_transform_and_lower(ep, compile_config=config).to_executorch(backend)
                plan = et.executorch_program.execution_plan[0]
                entry["ops"] = sorted({f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators})
                entry["delegates"] = [d.id for d in plan.delegates]
                if case.backend:
                    entry["backend_config"] = dict(sorted(case.backend.items()))
                if case.isolate:
                    got = run_in_child(bytes(et.buffer), inputs)
                else:
                    rt = _load_for_executorch_from_buffer(bytes(et.buffer))
                    got = [list(rt.run_method("forward", tuple(xs))) for xs in inputs]
            except Exception as e:  # ExecuTorch itself refuses: document it, no program
                msg = str(e).strip().splitlines()
                entry["executorch_error"] = (msg[0] if msg else type(e).__name__)[:300]
                manifest["cases"][name] = entry
                print(f"{name}: ExecuTorch refuses: {entry['executorch_error']}", flush=True)
                continue
            e_types = [t.dtype for t in (list(eager[0]) if isinstance(eager[0], (tuple, list)) else [eager[0]])
                       if isinstance(t, torch.Tensor)]
            g_types = [t.dtype for t in got[0] if isinstance(t, torch.Tensor)]
            if e_types != g_types:
                # The exporter planned another output dtype than eager computes (a fake kernel
                # that disagrees with the eager one, a conversion lost in functionalization):
                # no expected outputs can be bundled.
                desc = lambda ts: ", ".join(SHORT.get(t, str(t)) for t in ts)  # noqa: E731
                entry["executorch_error"] = (f"the exported program returns {desc(g_types)} where eager returns "
                                             f"{desc(e_types)}: the exporter changed the output dtype")
                manifest["cases"][name] = entry
                save(out, manifest)
                print(f"{name}: ExecuTorch refuses: {entry['executorch_error']}", flush=True)
                continue
            worst, exact = 0.0, True
            outs = []
            for e_out, g_out in zip(eager, got):
                e_list = list(e_out) if isinstance(e_out, (tuple, list)) else [e_out]
                for e_t, g_t in zip(e_list, g_out):
                    if not isinstance(g_t, torch.Tensor):
                        continue
                    if g_t.dtype.is_floating_point:
                        exact = exact and False
                        d = (g_t.double() - e_t.double()).abs()
                        both_nan = torch.isnan(g_t.double()) & torch.isnan(e_t.double())
                        d = torch.where(both_nan | (g_t.double() == e_t.double()), torch.zeros_like(d), d)
                        scale = e_t.double().abs().clamp_min(1.0)
                        worst = max(worst, float((d / scale).max()) if d.numel() else 0.0)
                    elif not torch.equal(g_t, e_t.to(g_t.dtype)):
                        worst = max(worst, float("inf"))
                outs.append([g for g in g_out if isinstance(g, torch.Tensor)])
            floats = any(t.dtype.is_floating_point for o in outs for t in o)
            half = any(t.dtype in (F16, BF16) for o in outs for t in o) or dtype in (F16, BF16)
            f64 = all(t.dtype == F64 for o in outs for t in o if t.dtype.is_floating_point) and floats
            if not floats or case.exact:
                entry["rtol"], entry["atol"] = 0.0, 0.0
            elif half:
                entry["rtol"], entry["atol"] = 1e-2, 1e-3
            elif f64 and worst <= 1e-10:
                entry["rtol"], entry["atol"] = 1e-10, 1e-12
            elif f64:  # ExecuTorch's kernel works in float32 precision here
                entry["rtol"], entry["atol"] = 1e-5, 1e-6
                entry["executorch_float32_precision"] = True
            else:
                entry["rtol"], entry["atol"] = 1e-5, 1e-6
            # Largest relative difference from eager; "unequal" for integer or shape differences.
            entry["executorch_vs_eager"] = worst if worst != float("inf") else "unequal"
            if worst > max(entry["rtol"], 1e-5):
                # ExecuTorch's kernel is wrong here (e.g. nonzero ignores the column-major dim
                # order the exporter plans for its output): the suite expects eager's answer.
                entry["executorch_differs_from_eager"] = True
                entry["expected"] = "eager"
                outs = [[t.contiguous() for t in (list(e) if isinstance(e, (tuple, list)) else [e]) if isinstance(t, torch.Tensor)]
                        for e in eager]
            entry["outputs"] = [f"{SHORT.get(t.dtype, str(t.dtype))}{list(t.shape)}" for t in outs[0]]
            tests = [MethodTestCase(inputs=list(xs), expected_outputs=o) for xs, o in zip(inputs, outs)]
            bp = BundledProgram(et, [MethodTestSuite(method_name="forward", test_cases=tests)])
            (out / f"{name}.bpte").write_bytes(serialize_from_bundled_program_to_flatbuffer(bp))
            manifest["cases"][name] = entry
            save(out, manifest)
            print(f"{name}: {' '.join(entry['ops'])} (vs eager {worst:.3g})", flush=True)
    save(out, manifest)
    if not only or only & {"random", "allclose"}:
        export_random(out, manifest["versions"])
    (out / "README.md").write_text(README.format(executorch=manifest["versions"]["executorch"]))


README = """# ops: the operator conformance suite

Made by `samples/export/export_op_conformance.py` (also run by `make_fixtures.sh`) with
ExecuTorch {executorch} from PyPI (all versions in `manifest.json`). One bundled program per case
and dtype (`<case>_<dtype>.bpte`): a small module calling one operator (or a composition the
exporter turns into it), exported with `to_edge_transform_and_lower` and `to_executorch`, with two
test cases whose expected outputs are what ExecuTorch's portable runtime computed (eager PyTorch's
where ExecuTorch's kernel gives another answer: `"expected": "eager"`). `manifest.json`
lists, per program, the operators it calls (read from the program), its input and output
dtypes and shapes, the tolerance, and how far ExecuTorch's answer is from eager PyTorch;
`executorch_operators` is ExecuTorch's operator list from the wheel's kernel yaml files.
Programs ExecuTorch itself refuses are listed with the reason and have no file (a reason
beginning "ExecuTorch's runtime stopped the process (SIGABRT)" is a kernel check that aborts;
such cases run in a child process).

Some entries carry more: `backend_config` (the `ExecutorchBackendConfig` arguments used, e.g.
`do_quant_fusion_and_const_prop` for `quantized_decomposed::add`, `run_reinplace_pass` for
`aten::index_put_`) and `note`. Cases noted "stateful" update buffers of the program
(`aten::copy_` writes them back, or `aten::index_put_` updates them in place): their second test
case expects the state the first one left, running in order on one loaded method. The
quantized embedding cases' dtype suffix is the dtype of the scales; `_to_<dtype>` asks for
another output dtype (`.dtype_out`). `mixed_mm` / `mixed_linear` have no eager kernel in
ExecuTorch: the script defines one (float32 arithmetic) for the comparison.

`random/` holds programs calling `aten::rand.out` / `aten::randn.out`, whose values cannot be
compared (ExecuTorch seeds them from `std::random_device`): plain `.pte` files and
`random/random.json` with the distribution, input and output, and the check of ExecuTorch's
runtime's statistics; it also records that `torch.allclose` cannot be exported.

`tests/runtime/op_conformance_test.cpp` runs every program with etscope and renders
`docs/operators.md` from the results.
"""


def run_in_child(program: bytes, inputs, method: str = "forward") -> list:
    """Runs `method` on every input list, in order on one loaded method, in a forked child:
    ExecuTorch's kernels stop the whole process on some arguments (ET_CHECK -> abort). The lines
    ExecuTorch's runtime logged (check failures, missing operators) become the error's reason."""
    import re
    import signal
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        result, log, err = Path(d) / "result.pt", Path(d) / "log.txt", Path(d) / "error.txt"
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:  # child: never returns
            code = 0
            try:
                fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer
                rt = _load_for_executorch_from_buffer(program)
                torch.save([list(rt.run_method(method, tuple(xs))) for xs in inputs], result)
            except BaseException as e:  # noqa: BLE001
                lines = str(e).strip().splitlines()
                err.write_text(lines[0] if lines else type(e).__name__)
                code = 1
            finally:
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:
            return torch.load(result)
        logged = log.read_text(errors="replace").splitlines() if log.exists() else []
        reasons = [line.strip() for line in logged
                   if re.search(r"Check failed|assert failed|Missing operator|not found|KernelCall failed", line)]
        if os.WIFSIGNALED(status):
            head = f"ExecuTorch's runtime stopped the process ({signal.Signals(os.WTERMSIG(status)).name})"
        else:
            head = err.read_text() if err.exists() else f"child exited with {os.WEXITSTATUS(status)}"
        raise RuntimeError(head + (": " + " | ".join(reasons[:2]) if reasons else ""))


class _Random(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, x):
        return self.fn(x)


# Random-number operators: ExecuTorch's portable rand/randn kernels seed std::mt19937 from
# std::random_device on every call, so no expected values exist. These programs are stored as
# plain .pte files (ops/random/) with the distribution their outputs must follow, checked here
# on ExecuTorch's own runtime, so a runtime's shapes, dtypes and statistics can be tested.
RANDOM = [
    ("randn_f32", lambda x: x + torch.randn(64, 32), (64, 32), F32, "normal", True),
    ("randn_f16", lambda x: x + torch.randn(64, 32, dtype=F16), (64, 32), F16, "normal", True),
    ("rand_f32", lambda x: x + torch.rand(64, 32), (64, 32), F32, "uniform", True),
    ("rand_f64", lambda x: x + torch.rand(32, 16, dtype=F64), (32, 16), F64, "uniform", True),
    ("randn_like_f32", lambda x: x + torch.randn_like(x), (8, 4), F32, "normal", False),
    ("rand_like_f32", lambda x: x + torch.rand_like(x), (8, 4), F32, "uniform", False),
]
RANDOM_RUNS = 20


def export_random(out: Path, versions_: dict) -> None:
    from executorch.exir import EdgeCompileConfig, to_edge_transform_and_lower

    rdir = out / "random"
    rdir.mkdir(parents=True, exist_ok=True)
    doc = {"versions": versions_, "runs_per_program": RANDOM_RUNS, "programs": {},
           "about": "input: zeros of the given shape and dtype; output = input + samples. normal: "
                    "N(0, 1); uniform: [0, 1). executorch_check: the statistics of "
                    f"{RANDOM_RUNS} runs of ExecuTorch's runtime on one loaded method, and whether two "
                    "runs differ (ExecuTorch seeds every call from std::random_device)."}
    for name, fn, shape, dtype, dist, core_ir in RANDOM:
        entry = {"input": f"{SHORT[dtype]}{list(shape)}", "distribution": dist}
        x = torch.zeros(shape, dtype=dtype)
        try:
            ep = torch.export.export(_Random(fn), (x,), strict=False)
            config = None if core_ir else EdgeCompileConfig(_check_ir_validity=False)
            et = to_edge_transform_and_lower(ep, compile_config=config).to_executorch()
            plan = et.executorch_program.execution_plan[0]
            entry["ops"] = sorted({f"{o.name}.{o.overload}" if o.overload else o.name for o in plan.operators})
            if not core_ir:
                entry["core_aten"] = False
            got = run_in_child(bytes(et.buffer), [[x]] * RANDOM_RUNS)
        except Exception as e:  # noqa: BLE001
            msg = str(e).strip().splitlines()
            entry["executorch_error"] = (msg[0] if msg else type(e).__name__)[:300]
            doc["programs"][name] = entry
            print(f"random {name}: ExecuTorch refuses: {entry['executorch_error']}", flush=True)
            continue
        (rdir / f"{name}.pte").write_bytes(bytes(et.buffer))
        outs = [g[0] for g in got]
        entry["pte"] = f"{name}.pte"
        entry["output"] = f"{SHORT[outs[0].dtype]}{list(outs[0].shape)}"
        v = torch.stack(outs).double()
        mean, std = float(v.mean()), float(v.std())
        if dist == "normal":
            crit = "|mean| < 0.05 and |std - 1| < 0.05" if v.numel() >= 10000 else "|mean| < 0.1 and |std - 1| < 0.1"
            tol = 0.05 if v.numel() >= 10000 else 0.1
            ok = abs(mean) < tol and abs(std - 1) < tol
        else:
            crit = "all in [0, 1), |mean - 0.5| < 0.02, |std - 0.2887| < 0.02"
            ok = bool(((v >= 0) & (v < 1)).all()) and abs(mean - 0.5) < 0.02 and abs(std - 12 ** -0.5) < 0.02
        entry["executorch_check"] = {
            "samples": v.numel(), "criteria": crit, "passed": bool(ok and torch.isfinite(v).all()),
            "output_shape_and_dtype_as_exported": all(o.shape == outs[0].shape and o.dtype == dtype for o in outs),
            "runs_differ": not torch.equal(outs[0], outs[1])}
        doc["programs"][name] = entry
        print(f"random {name}: {' '.join(entry['ops'])} check={entry['executorch_check']['passed']}", flush=True)
    # aten::allclose returns a Python bool: the exporter cannot put it into a program.
    try:
        torch.export.export(Fn(lambda a, b: torch.allclose(a, b)), (torch.ones(3), torch.ones(3)), strict=False)
        doc["allclose"] = "exported"
    except Exception as e:  # noqa: BLE001
        msg = str(e).strip().splitlines()
        doc["allclose"] = f"torch.export refuses torch.allclose(a, b): {type(e).__name__}: {(msg[0] if msg else '')[:200]}"
    (rdir / "random.json").write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")


def save(out: Path, manifest: dict) -> None:
    """Writes the manifest (after every case: ExecuTorch's runtime aborts the process on some
    invalid arguments, and what was made before must not be lost)."""
    manifest["executorch_operators"] = operator_list()
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
