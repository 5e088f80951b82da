#!/usr/bin/env python3
"""Which kernels tell two machines apart under whale's CPU pins (issue 25): the sha256 of every op
whale's models use, forward and gradients, on fixed inputs, one thread. Run it on both machines with
the pins in the environment and diff the outputs; the first differing op names the library (MKL:
matmul/linear/bmm and exp/log/tanh/sqrt; ATen: softmax/log_softmax/cross-entropy; oneDNN: gelu).
    ATEN_CPU_CAPABILITY=avx2 MKL_CBWR=COMPATIBLE ONEDNN_MAX_CPU_ISA=AVX2 python bench/ops_probe.py > a.txt
Needs torch (PyPI's links the same MKL and oneDNN families as DJL's libtorch). Two Intel Xeons
(AVX-512, one with AMX) printed the same 80 lines, pinned and unpinned (torch 2.11, 2026-12-04).
"""
import hashlib, os, sys, subprocess
import torch
torch.set_num_threads(1)
torch.set_num_interop_threads(1)

def h(t):
    return hashlib.sha256(t.detach().contiguous().float().numpy().tobytes()).hexdigest()[:10]

def op(name, ins, f):
    ins = [x.clone().requires_grad_(True) for x in ins]
    y = f(*ins)
    w = torch.randn(y.shape, generator=torch.Generator().manual_seed(7))
    (y * w).sum().backward()
    print(name, "out=" + h(y), " ".join("g=" + h(x.grad) for x in ins), flush=True)

g = torch.Generator().manual_seed(1)
def r(*s): return torch.randn(*s, generator=g)
F = torch.nn.functional
for B, T, D, K in [(8, 16, 64, 192), (16, 64, 128, 128), (4, 30, 96, 384), (1, 7, 576, 1536)]:
    sz = f"{B}x{T}x{D}x{K}"
    op("matmul3d " + sz, [r(B, T, D), r(D, K)], lambda a, b: a @ b)
    op("matmul2d " + sz, [r(B * T, D), r(D, K)], lambda a, b: a @ b)
    op("linear " + sz, [r(B, T, D), r(K, D)], lambda a, b: F.linear(a, b))
    op("bmm4d " + sz, [r(B, 4, T, D // 4), r(B, 4, T, D // 4)], lambda a, b: a @ b.transpose(-1, -2))
    op("softmax " + sz, [r(B, 4, T, T)], lambda a: a.softmax(-1))
    op("logsoftmax " + sz, [r(B, T, K)], lambda a: a.log_softmax(-1))
    op("gelu " + sz, [r(B, T, K)], lambda a: F.gelu(a))
    op("silu " + sz, [r(B, T, K)], lambda a: F.silu(a))
    op("sigmoid " + sz, [r(B, T, K)], lambda a: torch.sigmoid(a))
    op("layernorm " + sz, [r(B, T, D), r(D), r(D)], lambda a, w, b: F.layer_norm(a, (D,), w, b, 1e-5))
    op("exp " + sz, [r(B, T, K)], lambda a: a.exp())
    op("log " + sz, [r(B, T, K).abs() + 0.1], lambda a: a.log())
    op("sqrt " + sz, [r(B, T, K).abs() + 0.1], lambda a: a.sqrt())
    op("rsqrt " + sz, [r(B, T, K).abs() + 0.1], lambda a: a.rsqrt())
    op("powhalf " + sz, [r(B, T, K).abs() + 0.1], lambda a: a.pow(0.7))
    op("tanh " + sz, [r(B, T, K)], lambda a: a.tanh())
    op("meanpow " + sz, [r(B, T, D)], lambda a: a.pow(2).mean(-1, keepdim=True))
    op("sum " + sz, [r(B, T, K)], lambda a: a.sum(-1))
    op("emb " + sz, [r(K, D)], lambda w: F.embedding(torch.arange(B * T).remainder(K).reshape(B, T), w))
    op("xent " + sz, [r(B * T, K)], lambda a: F.cross_entropy(a, torch.arange(B * T).remainder(K), reduction="none"))
