#!/usr/bin/env python3
"""PyTorch timings of the fused ops, the comparators of benches/fused.rs: torch eager, and
with --compile also torch.compile (inductor, default mode, static shapes: one compile per op
and shape, the strongest it gives).

Times, in bf16 on the current CUDA device, at the shapes of benches/fused.rs (`--grid`: the
rows x cols grid, RoPE at head sizes 64, 80 and 128):
  rmsnorm_fwd              F.rms_norm(x, (cols,), w, eps)
  rmsnorm_fwd_residual     h = x + residual; y = rms_norm(h, (cols,), w, eps)  (returns h, y)
  layernorm_fwd            F.layer_norm(x, (cols,), w, b, eps)
  layernorm_fwd_residual   h = x + residual; y = layer_norm(h, (cols,), w, b, eps)
  softmax_fwd              torch.softmax(x, dim=-1)
  swiglu_fwd               F.silu(gate) * up
  swiglu_fwd_interleaved   g, u = gate_up.chunk(2, dim=-1); F.silu(g) * u
  rope_neox_hd{64,80,128}  q, k [tokens, heads, head_dim]; rotate-halves, cos, sin [tokens, head_dim / 2]
  rmsnorm_bwd              eager: autograd backward of rms_norm; compile: its formula (dx, dw)
  layernorm_bwd            eager: autograd backward of layer_norm; compile: its formula (dx, dw, db)
  softmax_bwd              eager: torch._softmax_backward_data; compile: y * (dy - sum(y * dy))

Each op is timed with CUDA events around windows of calls (as many as fill about a
millisecond, at most 256, in whole passes over the input sets), after a warm-up, as the median
over windows of the time per call. Every call uses the next input set: enough sets that one
pass touches more than 4x the L2, at most 256 (MAX_SETS, the crate bench's rule), so calls
that move more than about 1 MB are not L2-resident and smaller ones are, on both sides. With --graph each window is captured once
as a CUDA graph and replayed (the kernels' time without the host's launch cost, as the crate's
decode readings are taken); without it the calls are launched back to back.

--jobs N runs the cells in N worker processes: each compiles its cells while others time;
the timing (input sets, the check against eager, capture and windows) holds an exclusive
lock, so one process at a time uses the GPU for a reading.

Every result carries its "mode" ("eager" or "compile") and its "timing" ("graph" or
"launches"). A compiled op is checked against eager once before it is timed.

--rows 1,2,5, --cols 768,8192 and --ops rmsnorm_fwd,softmax_fwd keep those grid rows, columns
and ops (a grid split over several runs).

Usage: python3 benches/torch_fused.py OUT.json [--quick] [--grid] [--compile] [--graph] [--jobs N]
       [--rows R,R] [--cols C,C] [--ops OP,OP] [--assemble]
Then: CUBINS_TORCH_FUSED_JSON=OUT.json bundle/benches/fused --results DIR
"""

import fcntl
import gc
import json
import math
import multiprocessing as mp
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F

LARGE = [(32768, 4096), (16384, 8192), (8192, 14336), (4096, 32768)]
DECODE = [(rows, cols) for cols in (4096, 8192) for rows in (1, 8, 64)]
GRID_ROWS = [1, 2, 5, 16, 100, 1024, 4000, 16384, 32768]
GRID_COLS = [768, 2048, 3072, 6144, 8192, 14336, 20000, 32768]
ROPE_HEAD_DIMS = [64, 80, 128]
HEAD_DIM = 128
EPS = 1e-6
WARMUP = 10
WINDOWS = 41
GRID_WINDOWS = 21
WINDOW_US = 1000.0
MAX_CALLS_PER_WINDOW = 256
L2_MULTIPLE = 4
# At most this many input sets: the crate's fused bench (benches/fused.rs, MAX_SETS) rotates
# the same sets, and checks a torch reading only where the counts agree. Calls that move less
# than 4x L2 / MAX_SETS (about 1 MB on the H200) are therefore L2-resident on both sides.
MAX_SETS = 256
BF = torch.bfloat16

ROW_OPS = [
    "rmsnorm_fwd",
    "rmsnorm_fwd_residual",
    "layernorm_fwd",
    "layernorm_fwd_residual",
    "softmax_fwd",
    "swiglu_fwd",
    "swiglu_fwd_interleaved",
    "rmsnorm_bwd",
    "layernorm_bwd",
    "softmax_bwd",
]


def rope_op(head_dim):
    return f"rope_neox_hd{head_dim}"


def rope_head_dim(op):
    return int(op.removeprefix("rope_neox_hd"))


def rope_heads(cols, head_dim):
    """q and k heads of a RoPE cell: a row of `cols` q elements, a quarter as many k heads."""
    q = max(cols // head_dim, 1)
    return q, max(q // 4, 1)


def rope_neox(x, cos, sin):
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    c, s = cos[:, None, :], sin[:, None, :]
    return torch.cat((a * c - b * s, b * c + a * s), dim=-1)


def rmsnorm_bwd_formula(x, w, dy):
    xf, g = x.float(), dy.float() * w.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    dx = rstd * g - xf * rstd.pow(3) * (g * xf).mean(-1, keepdim=True)
    return dx.to(BF), (dy.float() * xf * rstd).sum(0).to(BF)


def layernorm_bwd_formula(x, w, dy):
    xf, dyf = x.float(), dy.float()
    mean = xf.mean(-1, keepdim=True)
    rstd = torch.rsqrt((xf - mean).pow(2).mean(-1, keepdim=True) + EPS)
    xhat = (xf - mean) * rstd
    g = dyf * w.float()
    dx = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
    return dx.to(BF), (dyf * xhat).sum(0).to(BF), dyf.sum(0).to(BF)


def softmax_bwd_formula(y, dy):
    yf, dyf = y.float(), dy.float()
    return (yf * (dyf - (yf * dyf).sum(-1, keepdim=True))).to(BF)


def make_inputs(op, rows, cols, dev, gen):
    """The op's input tensors and the bytes it must move (the formula of fused.md)."""

    def rand(*shape):
        return (torch.rand(*shape, device=dev, generator=gen) * 2 - 1).to(BF)

    def weight():
        return (rand(cols) * 0.5 + 1.0).to(BF)

    n = rows * cols
    if op == "rmsnorm_fwd":
        return (rand(rows, cols), weight()), 2 * (2 * n + cols)
    if op == "rmsnorm_fwd_residual":
        return (rand(rows, cols), rand(rows, cols), weight()), 2 * (4 * n + cols)
    if op == "layernorm_fwd":
        return (rand(rows, cols), weight(), rand(cols)), 2 * (2 * n + 2 * cols)
    if op == "layernorm_fwd_residual":
        return (rand(rows, cols), rand(rows, cols), weight(), rand(cols)), 2 * (4 * n + 2 * cols)
    if op == "softmax_fwd":
        return (rand(rows, cols),), 2 * 2 * n
    if op == "swiglu_fwd":
        return (rand(rows, cols), rand(rows, cols)), 2 * 3 * n
    if op == "swiglu_fwd_interleaved":
        return (rand(rows, 2 * cols),), 2 * 3 * n
    if op.startswith("rope_neox_hd"):
        hd = rope_head_dim(op)
        qh, kh = rope_heads(cols, hd)
        pos = torch.arange(rows, device=dev, dtype=torch.float32)[:, None]
        freq = 10000.0 ** (-2.0 * torch.arange(hd // 2, device=dev, dtype=torch.float32) / hd)
        ang = pos * freq
        q, k = rand(rows, qh, hd), rand(rows, kh, hd)
        moved = 2 * (2 * rows * (qh + kh) * hd + rows * hd)
        return (q, k, ang.cos().to(BF), ang.sin().to(BF)), moved
    if op in ("rmsnorm_bwd", "layernorm_bwd"):
        # The forward runs here, once; the timed call is the backward alone.
        x = rand(rows, cols).requires_grad_(True)
        w = weight().requires_grad_(True)
        if op == "rmsnorm_bwd":
            y = F.rms_norm(x, (cols,), w, EPS)
            return (x, w, y, rand(rows, cols)), 2 * (3 * n + 2 * cols)
        b = rand(cols).requires_grad_(True)
        y = F.layer_norm(x, (cols,), w, b, EPS)
        return (x, w, b, y, rand(rows, cols)), 2 * (3 * n + 3 * cols)
    if op == "softmax_bwd":
        return (torch.softmax(rand(rows, cols).float(), -1).to(BF), rand(rows, cols)), 2 * 3 * n
    raise ValueError(op)


def run_op(op, t, cols, mode):
    """One call of the op on input set `t`; `mode` picks the backward's form (autograd in
    eager, the formula under torch.compile, which does not take autograd.grad)."""
    if op == "rmsnorm_fwd":
        x, w = t
        return F.rms_norm(x, (cols,), w, EPS)
    if op == "rmsnorm_fwd_residual":
        x, r, w = t
        h = x + r
        return h, F.rms_norm(h, (cols,), w, EPS)
    if op == "layernorm_fwd":
        x, w, b = t
        return F.layer_norm(x, (cols,), w, b, EPS)
    if op == "layernorm_fwd_residual":
        x, r, w, b = t
        h = x + r
        return h, F.layer_norm(h, (cols,), w, b, EPS)
    if op == "softmax_fwd":
        return torch.softmax(t[0], dim=-1)
    if op == "swiglu_fwd":
        return F.silu(t[0]) * t[1]
    if op == "swiglu_fwd_interleaved":
        g, u = t[0].chunk(2, dim=-1)
        return F.silu(g) * u
    if op.startswith("rope_neox_hd"):
        q, k, c, s = t
        return rope_neox(q, c, s), rope_neox(k, c, s)
    if op == "rmsnorm_bwd":
        x, w, y, dy = t
        if mode == "compile":
            return rmsnorm_bwd_formula(x.detach(), w.detach(), dy)
        return torch.autograd.grad(y, (x, w), dy, retain_graph=True)
    if op == "layernorm_bwd":
        x, w, b, y, dy = t
        if mode == "compile":
            return layernorm_bwd_formula(x.detach(), w.detach(), dy)
        return torch.autograd.grad(y, (x, w, b), dy, retain_graph=True)
    if op == "softmax_bwd":
        y, dy = t
        if mode == "compile":
            return softmax_bwd_formula(y, dy)
        return torch._softmax_backward_data(dy, y, -1, BF)
    raise ValueError(op)


def outputs(r):
    return r if isinstance(r, tuple) else (r,)


class Gpu:
    """The exclusive lock a worker holds while it uses the GPU for a reading."""

    def __init__(self, path):
        self.path = path

    def __enter__(self):
        self.f = open(self.path, "w") if self.path else None
        if self.f:
            fcntl.flock(self.f, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.f:
            torch.cuda.synchronize()
            fcntl.flock(self.f, fcntl.LOCK_UN)
            self.f.close()


def time_cell(cell, opts, lock):
    op, rows, cols, mode = cell
    dev = torch.device("cuda")
    gen = torch.Generator(device=dev)
    gen.manual_seed(0x70C4 ^ (rows << 20) ^ cols)
    first, moved = make_inputs(op, rows, cols, dev, gen)
    fn = lambda t: run_op(op, t, cols, mode)
    compile_s = None
    if mode == "compile":
        torch._dynamo.reset()
        fn = torch.compile(fn, dynamic=False)
        t0 = time.perf_counter()
        fn(first)  # compiles (outside the lock: other workers may be timing)
        torch.cuda.synchronize()
        compile_s = time.perf_counter() - t0
    with Gpu(lock):
        if mode == "compile":
            got, want = outputs(fn(first)), outputs(run_op(op, first, cols, "eager"))
            for g, w in zip(got, want):
                torch.testing.assert_close(g.float(), w.float(), rtol=2e-2, atol=2e-2)
        sets = [first] + [make_inputs(op, rows, cols, dev, gen)[0] for _ in range(rotation_sets(moved, opts) - 1)]
        r = time_windows(fn, sets, opts)
        del sets, first
    r.update(op=op, mode=mode, dtype="bf16", rows=rows, cols=cols, bytes=moved, compile_s=compile_s)
    r["gbps_at_median"] = moved / r["median_us"] / 1e3
    if op.startswith("rope_neox_hd"):
        r["head_dim"] = rope_head_dim(op)
        r["q_heads"], r["k_heads"] = rope_heads(cols, r["head_dim"])
    return r


def rotation_sets(moved, opts):
    """The crate's RotationPlan: one pass over the sets touches more than 4x L2, capped."""
    return min(L2_MULTIPLE * opts["l2_bytes"] // max(moved, 1) + 1, MAX_SETS)


def time_windows(fn, sets, opts):
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(body):
        start.record()
        body()
        stop.record()
        stop.synchronize()
        return start.elapsed_time(stop) * 1e3

    def launches(calls, first):
        def body():
            for j in range(calls):
                fn(sets[(first + j) % len(sets)])

        return body

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(WARMUP):
            fn(sets[i % len(sets)])
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    single = statistics.median(timed(launches(1, i)) for i in range(5))
    # Whole passes over the sets, so each is used equally often (the crate's rule).
    calls = max(len(sets), min(MAX_CALLS_PER_WINDOW, math.ceil(WINDOW_US / max(single, 1e-3))))
    calls = math.ceil(calls / len(sets)) * len(sets)
    timing = "launches"
    if opts["graph"]:
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                launches(calls, 0)()
            g.replay()
            torch.cuda.synchronize()
            times = sorted(timed(g.replay) / calls for _ in range(opts["windows"]))
            timing = "graph"
        except RuntimeError as e:
            timing = f"launches (graph capture failed: {str(e).splitlines()[0][:120]})"
    if timing != "graph":
        times = sorted(timed(launches(calls, w * calls)) / calls for w in range(opts["windows"]))
    n = len(times)
    return {
        "median_us": statistics.median(times),
        "p10_us": times[n // 10],
        "p90_us": times[(9 * n) // 10],
        "p95_us": times[min(n - 1, (95 * n) // 100)],
        "samples_us": times,
        "windows": n,
        "calls_per_window": calls,
        "input_sets": len(sets),
        "timing": timing,
    }


def kept(grid, values, flag):
    """The grid's values that the flag lists (all without it); a value off the grid is an error."""
    if values is None:
        return grid
    unknown = [v for v in values if not v.isdigit() or int(v) not in grid]
    if unknown:
        raise SystemExit(f"{flag}: not on the grid: {', '.join(unknown)} (the grid's: {grid})")
    return [g for g in grid if str(g) in values]


def cells(quick, grid, compiled, rows=None, cols=None, ops=None):
    if grid:
        shapes = [(r, c) for r in kept(GRID_ROWS, rows, "--rows") for c in kept(GRID_COLS, cols, "--cols")]
    else:
        shapes = (LARGE[:2] if quick else LARGE) + (DECODE[:3] if quick else DECODE)
    every = ROW_OPS + [rope_op(h) for h in (ROPE_HEAD_DIMS if grid else [HEAD_DIM])]
    unknown = sorted(set(ops or []) - set(every))
    if unknown:
        raise SystemExit(f"--ops: unknown {', '.join(unknown)} (known: {', '.join(every)})")
    ops = [op for op in every if ops is None or op in ops]
    out = []
    for rows, cols in shapes:
        for op in ops:
            for mode in ["eager"] + (["compile"] if compiled else []):
                out.append((op, rows, cols, mode))
    return out


def worker(args):
    part, jobs, todo, opts, lock, path = args
    torch._dynamo.config.cache_size_limit = 1 << 16
    with open(path, "w") as f:
        for i, cell in enumerate(todo):
            if i % jobs != part:
                continue
            try:
                r = time_cell(cell, opts, lock)
            except Exception as e:  # a failed cell is reported, never dropped
                op, rows, cols, mode = cell
                r = {"op": op, "rows": rows, "cols": cols, "mode": mode, "error": f"{type(e).__name__}: {e}"[:400]}
            finally:
                # Every cell's tensors freed before the next allocates (a failed cell's frames,
                # and a graph's private pool, hold them until collected).
                gc.collect()
                torch.cuda.empty_cache()
            f.write(json.dumps(r) + "\n")
            f.flush()
            say = r.get("error") or f"median {r['median_us']:9.2f} us  {r['gbps_at_median']:7.0f} GB/s  {r['timing'][:8]}"
            print(f"{r['op']:24s} {r['mode']:7s} {r['rows']:6d}x{r['cols']:<6d} {say}", flush=True)


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        print(__doc__)
        return 2
    out, flags = sys.argv[1], sys.argv[2:]
    jobs = int(flags[flags.index("--jobs") + 1]) if "--jobs" in flags else 1
    grid = "--grid" in flags
    props = torch.cuda.get_device_properties(0)
    opts = {
        "graph": "--graph" in flags,
        "windows": GRID_WINDOWS if grid else WINDOWS,
        "l2_bytes": getattr(props, "L2_cache_size", 60 << 20),
    }
    listed = lambda name: flags[flags.index(name) + 1].split(",") if name in flags else None
    todo = cells("--quick" in flags, grid, "--compile" in flags, listed("--rows"), listed("--cols"), listed("--ops"))
    # Each worker appends its readings to OUT.parts/partN.jsonl as it goes; `--assemble`
    # writes OUT from what is there (after a run that was stopped early).
    parts_dir = out + ".parts"
    t0 = time.perf_counter()
    if "--assemble" not in flags:
        os.makedirs(parts_dir, exist_ok=True)
        lock = os.path.join(parts_dir, "gpu.lock") if jobs > 1 else None
        parts = [(p, jobs, todo, opts, lock, os.path.join(parts_dir, f"part{p}.jsonl")) for p in range(jobs)]
        if jobs == 1:
            worker(parts[0])
        else:
            with mp.get_context("spawn").Pool(jobs) as pool:
                pool.map(worker, parts)
    results = []
    for name in sorted(os.listdir(parts_dir)):
        if name.endswith(".jsonl"):
            with open(os.path.join(parts_dir, name)) as f:
                results += [json.loads(line) for line in f if line.strip()]
    errors = [r for r in results if "error" in r]
    doc = {
        "comparators": ["torch eager"] + (["torch.compile (inductor, default mode, static shapes)"] if "--compile" in flags else []),
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "device": props.name,
        "l2_bytes": opts["l2_bytes"],
        "timing": (
            f"CUDA events around windows of calls (~{WINDOW_US:.0f} us, at most {MAX_CALLS_PER_WINDOW}), "
            f"{'each window a CUDA graph replay' if opts['graph'] else 'launched back to back'}, "
            f"{WARMUP} warm-up, median over {opts['windows']} windows of the time per call, "
            f"inputs rotated past {L2_MULTIPLE}x L2 in at most {MAX_SETS} sets (whole passes per window); "
            f"{jobs} worker processes, one timing at a time"
        ),
        "wall_s": time.perf_counter() - t0,
        "cells_planned": len(todo),
        "errors": len(errors),
        "results": results,
    }
    with open(out, "w") as f:
        json.dump(doc, f, indent=1)
    print(f"wrote {len(results)} readings ({len(errors)} errors) to {out} in {doc['wall_s']:.0f} s")
    complete = len(results) == len(todo) and not errors
    return 0 if complete and all(math.isfinite(r["median_us"]) for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
