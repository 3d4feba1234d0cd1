"""Few-row backward explorer: RMSNorm backward of `rows` bf16 rows (default one of 768),
every variant of rowbwd.cu and the crate's own kernel (cuda/rmsnorm.cu, the crate's flags)
against torch.compile of the bench's formula, in one process: CUDA-graph replay of CALLS
launches over SETS rotated buffer sets, ROUNDS alternating windows; parity against float64.
Usage: python3 explore.py CUBIN_DIR [cols]"""
import ctypes, statistics, sys, json
import torch

cols = int(sys.argv[2]) if len(sys.argv) > 2 else 768
SETS, CALLS, ROUNDS, EPS = 64, 256, 21, 1e-6
BF = torch.bfloat16
torch.zeros(1, device="cuda")
cu = ctypes.CDLL("libcuda.so.1")


def ok(r, what):
    if r != 0:
        raise RuntimeError(f"{what}: CUresult {r}")


def function(path, name):
    mod, f = ctypes.c_void_p(), ctypes.c_void_p()
    ok(cu.cuModuleLoadData(ctypes.byref(mod), open(path, "rb").read()), path)
    ok(cu.cuModuleGetFunction(ctypes.byref(f), mod, name.encode()), name)
    return f


class Value(ctypes.Union):
    _fields_ = [("pad", ctypes.c_char * 64), ("i", ctypes.c_int)]


class Attr(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("pad", ctypes.c_char * 4), ("value", Value)]


class Config(ctypes.Structure):
    _fields_ = [("g", ctypes.c_uint * 3), ("b", ctypes.c_uint * 3), ("smem", ctypes.c_uint),
                ("stream", ctypes.c_void_p), ("attrs", ctypes.POINTER(Attr)), ("n", ctypes.c_uint)]


def launcher(f, block, smem, pdl, args_of):
    attr = Attr(id=6)  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
    attr.value.i = 1

    def launch(t):
        vals = args_of(t)
        ptrs = (ctypes.c_void_p * len(vals))(*[ctypes.cast(ctypes.pointer(v), ctypes.c_void_p) for v in vals])
        cfg = Config((1, 1, 1), (block, 1, 1), smem, torch.cuda.current_stream().cuda_stream,
                     ctypes.pointer(attr) if pdl else None, 1 if pdl else 0)
        ok(cu.cuLaunchKernelEx(ctypes.byref(cfg), f, ptrs, None), "launch")
        return t["dx"], t["dw"]
    return launch


def p(t):
    return ctypes.c_uint64(t.data_ptr())


gen = torch.Generator(device="cuda").manual_seed(7)


def inputs():
    r = lambda: (torch.rand(1, cols, device="cuda", generator=gen) * 2 - 1).to(BF)
    return {"x": r(), "w": (torch.rand(cols, device="cuda", generator=gen) + 0.5).to(BF), "dy": r(),
            "dx": torch.full((1, cols), float("nan"), device="cuda", dtype=BF),
            "dw": torch.full((cols,), float("nan"), device="cuda", dtype=BF)}


sets = [inputs() for _ in range(SETS)]


def formula(x, w, dy):
    xf, g = x.float(), dy.float() * w.float()
    rstd = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS)
    dx = rstd * g - xf * rstd.pow(3) * (g * xf).mean(-1, keepdim=True)
    return dx.to(BF), (dy.float() * xf * rstd).sum(0).to(BF)


def reference(t):
    x, w, dy = t["x"].double(), t["w"].double(), t["dy"].double()
    rstd = torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS)
    g = dy * w
    return rstd * g - x * rstd.pow(3) * (g * x).mean(-1, keepdim=True), (dy * x * rstd).sum(0)


cubins = sys.argv[1]
mine = f"{cubins}/rowbwd.sm90a.cubin"
crate = f"{cubins}/rmsnorm.sm90a.cubin"
mine_args = lambda t: [p(t["x"]), p(t["w"]), p(t["dy"]), p(t["dx"]), p(t["dw"]), ctypes.c_int(cols), ctypes.c_float(EPS)]
crate_args = lambda t: [p(t["x"]), p(t["w"]), p(t["dy"]), p(t["dx"]), ctypes.c_uint64(0), p(t["dw"]),
                        ctypes.c_uint32(1), ctypes.c_uint32(cols), ctypes.c_uint32(1), ctypes.c_float(EPS)]
acc = ((cols // 8) + 1) * 8 * 4
threads = cols // 8
variants = {}
for name, pdl in [("min_plain", False), ("min_pdl", True), ("min_pdl_acc", True), ("min_pdl_acc_bar", True)]:
    variants[name] = launcher(function(mine, name), threads, cols * 4, pdl, mine_args)
variants["min_pdl_4"] = launcher(function(mine, "min_pdl_4"), cols // 4, 0, True, mine_args)
crate_f = function(crate, "rmsnorm_bwd_bf16")
variants["crate_pdl"] = launcher(crate_f, threads, acc, True, crate_args)
variants["crate_plain"] = launcher(crate_f, threads, acc, False, crate_args)
variants["crate_pdl_128"] = launcher(crate_f, 128, acc, True, crate_args)
compiled = torch.compile(lambda t: formula(t["x"], t["w"], t["dy"]), dynamic=False)
variants["torch_compile"] = compiled

# Parity: every variant against float64 (bf16 outputs: a few bf16 ulps of the magnitudes).
for name, fn in variants.items():
    t = sets[0]
    t["dx"].fill_(float("nan")); t["dw"].fill_(float("nan"))
    dx, dw = fn(t)
    torch.cuda.synchronize()
    rdx, rdw = reference(t)
    edx = ((dx.double() - rdx).abs().max() / rdx.abs().max()).item()
    edw = ((dw.double() - rdw).abs().max() / rdw.abs().max()).item()
    print(f"PARITY {name}: dx {edx:.2e} dw {edw:.2e} {'ok' if max(edx, edw) < 1.6e-2 else 'FAIL'}")

graphs = {}
for name, fn in variants.items():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for i in range(8):
            fn(sets[i % SETS])
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    held = [None] * SETS
    with torch.cuda.graph(g):
        for j in range(CALLS):
            held[j % SETS] = fn(sets[j % SETS])
    g.replay()
    torch.cuda.synchronize()
    graphs[name] = (g, held)

a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
samples = {n: [] for n in graphs}
for r in range(ROUNDS):
    order = list(graphs) if r % 2 == 0 else list(reversed(graphs))
    for n in order:
        a.record(); graphs[n][0].replay(); b.record(); b.synchronize()
        samples[n].append(a.elapsed_time(b) * 1e3 / CALLS)
base = samples["torch_compile"]
print(f"{torch.cuda.get_device_name()} rmsnorm_bwd 1 x {cols} bf16, graph of {CALLS} launches, {ROUNDS} rounds")
print(f"{'variant':18} {'p50 us':>8} {'p95 us':>8} {'compile/variant':>16}")
for n, s in samples.items():
    q = sorted(s)
    ratio = statistics.median(c / v for c, v in zip(base, s))
    print(f"{n:18} {statistics.median(s):8.3f} {q[int(0.95 * (len(q) - 1))]:8.3f} {ratio:16.3f}")
json.dump(samples, open(f"samples-{cols}.json", "w"))
