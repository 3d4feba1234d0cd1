# torch.compile's RMSNorm at ROWS x COLS (bf16), the timed calls inside an NVTX range "timed"
# for `ncu --nvtx --nvtx-include timed/`; the generated code stays in TORCHINDUCTOR_CACHE_DIR.
import sys, torch
import torch.nn.functional as F
rows, cols = int(sys.argv[1]), int(sys.argv[2])
g = torch.Generator(device="cuda").manual_seed(1)
x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16, generator=g)
w = torch.randn(cols, device="cuda", dtype=torch.bfloat16, generator=g)
f = torch.compile(lambda x, w: F.rms_norm(x, (cols,), w, 1e-6))
for _ in range(20):
    y = f(x, w)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("timed")
for _ in range(3):
    y = f(x, w)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("ok", y.shape, float(y.float().abs().mean()))
