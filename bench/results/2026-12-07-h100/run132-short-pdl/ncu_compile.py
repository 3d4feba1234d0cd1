# torch.compile's RMSNorm (or LayerNorm: OP=ln) at ROWS x COLS (bf16), the timed calls inside an
# NVTX range "timed" for `ncu --nvtx --nvtx-include timed/`; the generated code stays in
# TORCHINDUCTOR_CACHE_DIR. Usage: python3 ncu_compile.py ROWS COLS [rms|ln]
import sys, torch
import torch.nn.functional as F
rows, cols = int(sys.argv[1]), int(sys.argv[2])
op = sys.argv[3] if len(sys.argv) > 3 else "rms"
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16, generator=g)
w = torch.randn(cols, device="cuda", dtype=torch.bfloat16, generator=g)
b = torch.randn(cols, device="cuda", dtype=torch.bfloat16, generator=g)
if op == "ln":
    f = torch.compile(lambda x, w: F.layer_norm(x, (cols,), w, b, 1e-6))
else:
    f = torch.compile(lambda x, w: F.rms_norm(x, (cols,), w, 1e-6))
for _ in range(20):
    y = f(x, w)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("timed")
for _ in range(3):
    y = f(x, w)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("ok", op, y.shape, float(y.float().abs().mean()))
