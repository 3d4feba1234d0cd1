# torch.compile's kernels of one fused-bench op at ROWS x COLS (bf16; benches/torch_fused.py's
# inputs and op), the timed calls inside an NVTX range "timed" for
# `ncu --nvtx --nvtx-include timed/`. Usage: python3 ncu_torch.py OP ROWS COLS
import os, sys, torch
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benches"))
import torch_fused as tf
op, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dev = torch.device("cuda")
gen = torch.Generator(device=dev); gen.manual_seed(1)
t, _ = tf.make_inputs(op, rows, cols, dev, gen)
f = torch.compile(lambda t: tf.run_op(op, t, cols, "compile"), dynamic=False)
for _ in range(20):
    y = f(t)
torch.cuda.synchronize()
torch.cuda.nvtx.range_push("timed")
for _ in range(2):
    y = f(t)
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()
print("ok", op, rows, cols)
