#!/usr/bin/env python3
"""PyTorch timings of the fused ops, the comparators of benches/fused.rs: eager, and with
--compile also torch.compile (inductor, default mode, static shapes: one compile per op and
shape, the strongest it gives) for the forward ops.

Times, in bf16 on the current CUDA device, at the shapes of benches/fused.rs:
  rmsnorm_fwd            torch.nn.functional.rms_norm(x, (cols,), w, eps)
  rmsnorm_fwd_residual   h = x + residual; y = rms_norm(h, (cols,), w, eps)  (returns h, y)
  softmax_fwd            torch.softmax(x, dim=-1)
  swiglu_fwd             F.silu(gate) * up
  swiglu_fwd_interleaved g, u = gate_up.chunk(2, dim=-1); F.silu(g) * u
  rope_neox              q, k [tokens, heads, 128]; rotate-halves with cos, sin [tokens, 64]
  rmsnorm_bwd            autograd backward of rms_norm (forward run once, outside the timing)
  softmax_bwd            torch._softmax_backward_data(dy, y, -1, bf16)

Each op is timed with CUDA events around windows of back-to-back calls (as many as fill
about a millisecond, so the host's launch and guard overhead overlaps the GPU's work as it
does in a running model), after a warm-up, as the median over windows of the time per call;
every call uses the next of several input sets, so the bytes touched between two uses of one
set exceed 4x the L2 (inputs are not L2-resident). At decode row counts a call's time is
bounded by its launch overhead (that is what torch costs there).

Every result carries its "mode" ("eager" or "compile"). A compiled op is warmed up (which
compiles it) before its timing, and its outputs are checked against eager's once.

Usage: python3 benches/torch_fused.py OUT.json [--quick] [--compile]
Then: CUBINS_TORCH_FUSED_JSON=OUT.json bundle/benches/fused --results DIR
"""

import json
import math
import statistics
import sys

import torch
import torch.nn.functional as F

LARGE = [(32768, 4096), (16384, 8192), (8192, 14336), (4096, 32768)]
DECODE = [(rows, cols) for cols in (4096, 8192) for rows in (1, 8, 64)]
HEAD_DIM = 128
EPS = 1e-6
WARMUP = 10
WINDOWS = 41
WINDOW_US = 1000.0
MAX_CALLS_PER_WINDOW = 256
L2_MULTIPLE = 4


def rope_neox(x, cos, sin):
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((a * c - b * s, b * c + a * s), dim=-1)


def make_inputs(op, rows, cols, dev, gen):
    """The op's input tensors and the bytes it must move (the formula of fused.md)."""
    bf = torch.bfloat16

    def rand(*shape):
        return (torch.rand(*shape, device=dev, generator=gen) * 2 - 1).to(bf)

    n = rows * cols
    if op == "rmsnorm_fwd":
        return (rand(rows, cols), (rand(cols) * 0.5 + 1.0).to(bf)), 2 * (2 * n + cols)
    if op == "rmsnorm_fwd_residual":
        return (rand(rows, cols), rand(rows, cols), (rand(cols) * 0.5 + 1.0).to(bf)), 2 * (4 * n + cols)
    if op == "softmax_fwd":
        return (rand(rows, cols),), 2 * 2 * n
    if op == "swiglu_fwd":
        return (rand(rows, cols), rand(rows, cols)), 2 * 3 * n
    if op == "swiglu_fwd_interleaved":
        return (rand(rows, 2 * cols),), 2 * 3 * n
    if op == "rope_neox":
        qh = max(cols // HEAD_DIM, 1)
        kh = max(qh // 4, 1)
        pos = torch.arange(rows, device=dev, dtype=torch.float32)[:, None]
        freq = 10000.0 ** (-2.0 * torch.arange(HEAD_DIM // 2, device=dev, dtype=torch.float32) / HEAD_DIM)
        ang = pos * freq
        q, k = rand(rows, qh, HEAD_DIM), rand(rows, kh, HEAD_DIM)
        moved = 2 * (2 * rows * (qh + kh) * HEAD_DIM + rows * HEAD_DIM)
        return (q, k, ang.cos().to(bf), ang.sin().to(bf)), moved
    if op == "rmsnorm_bwd":
        # The forward runs here, once; the timed call is the backward alone.
        x = rand(rows, cols).requires_grad_(True)
        w = (rand(cols) * 0.5 + 1.0).to(bf).requires_grad_(True)
        y = F.rms_norm(x, (cols,), w, EPS)
        return (x, w, y, rand(rows, cols)), 2 * (3 * n + 2 * cols)
    if op == "softmax_bwd":
        return (torch.softmax(rand(rows, cols).float(), -1).to(bf), rand(rows, cols)), 2 * 3 * n
    raise ValueError(op)


def run_op(op, t, cols):
    if op == "rmsnorm_fwd":
        x, w = t
        return F.rms_norm(x, (cols,), w, EPS)
    if op == "rmsnorm_fwd_residual":
        x, r, w = t
        h = x + r
        return h, F.rms_norm(h, (cols,), w, EPS)
    if op == "softmax_fwd":
        return torch.softmax(t[0], dim=-1)
    if op == "swiglu_fwd":
        return F.silu(t[0]) * t[1]
    if op == "swiglu_fwd_interleaved":
        g, u = t[0].chunk(2, dim=-1)
        return F.silu(g) * u
    if op == "rope_neox":
        q, k, c, s = t
        return rope_neox(q, c, s), rope_neox(k, c, s)
    if op == "rmsnorm_bwd":
        x, w, y, dy = t
        return torch.autograd.grad(y, (x, w), dy, retain_graph=True)
    if op == "softmax_bwd":
        y, dy = t
        return torch._softmax_backward_data(dy, y, -1, torch.bfloat16)
    raise ValueError(op)


# The backward ops go through autograd or a private op, which torch.compile does not take
# alone; they are compared with eager only.
COMPILED_OPS = {"rmsnorm_fwd", "rmsnorm_fwd_residual", "softmax_fwd", "swiglu_fwd", "swiglu_fwd_interleaved", "rope_neox"}

OPS = [
    "rmsnorm_fwd",
    "rmsnorm_fwd_residual",
    "softmax_fwd",
    "swiglu_fwd",
    "swiglu_fwd_interleaved",
    "rope_neox",
    "rmsnorm_bwd",
    "softmax_bwd",
]


def outputs(r):
    return r if isinstance(r, tuple) else (r,)


def time_op(op, rows, cols, dev, l2_bytes, gen, mode):
    first, moved = make_inputs(op, rows, cols, dev, gen)
    sets = [first]
    resident = sum(x.numel() * x.element_size() for x in first)
    while len(sets) * resident <= L2_MULTIPLE * l2_bytes and len(sets) < 20000:
        sets.append(make_inputs(op, rows, cols, dev, gen)[0])
    fn = lambda t, cols: run_op(op, t, cols)
    if mode == "compile":
        fn = torch.compile(fn, dynamic=False)
        got, want = outputs(fn(first, cols)), outputs(run_op(op, first, cols))
        for g, w in zip(got, want):
            torch.testing.assert_close(g.float(), w.float(), rtol=2e-2, atol=2e-2)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def window(calls, first):
        start.record()
        for j in range(calls):
            fn(sets[(first + j) % len(sets)], cols)
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3 / calls

    for i in range(WARMUP):
        fn(sets[i % len(sets)], cols)
    torch.cuda.synchronize()
    single = statistics.median(window(1, i) for i in range(5))
    calls = max(1, min(MAX_CALLS_PER_WINDOW, math.ceil(WINDOW_US / max(single, 1e-3))))
    times = sorted(window(calls, w * calls) for w in range(WINDOWS))
    return {
        "op": op,
        "mode": mode,
        "dtype": "bf16",
        "rows": rows,
        "cols": cols,
        "median_us": statistics.median(times),
        "p10_us": times[len(times) // 10],
        "p90_us": times[(9 * len(times)) // 10],
        "windows": WINDOWS,
        "calls_per_window": calls,
        "input_sets": len(sets),
        "bytes": moved,
        "gbps_at_median": moved / statistics.median(times) / 1e3,
    }


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        return 2
    out, quick, compiled = sys.argv[1], "--quick" in sys.argv[2:], "--compile" in sys.argv[2:]
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2_bytes = getattr(props, "L2_cache_size", 60 << 20)
    gen = torch.Generator(device=dev)
    gen.manual_seed(0x70C4)
    shapes = (LARGE[:2] if quick else LARGE) + (DECODE[:3] if quick else DECODE)
    results = []
    for rows, cols in shapes:
        for op in OPS:
            modes = ["eager"] + (["compile"] if compiled and op in COMPILED_OPS else [])
            for mode in modes:
                r = time_op(op, rows, cols, dev, l2_bytes, gen, mode)
                results.append(r)
                print(f"{op:24s} {mode:7s} {rows:6d}x{cols:<6d} median {r['median_us']:9.2f} us  {r['gbps_at_median']:7.0f} GB/s", flush=True)
                torch.cuda.empty_cache()
    doc = {
        "comparators": ["torch eager"] + (["torch.compile (inductor, default mode, static shapes)"] if compiled else []),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": props.name,
        "l2_bytes": l2_bytes,
        "timing": f"CUDA events around windows of back-to-back calls (~{WINDOW_US:.0f} us, at most {MAX_CALLS_PER_WINDOW} calls), {WARMUP} warm-up, median over {WINDOWS} windows of the time per call, inputs rotated past {L2_MULTIPLE}x L2",
        "results": results,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {len(results)} readings to {out}")
    return 0 if all(math.isfinite(r["median_us"]) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
