# run139: bfew (branch few-rows: spread rows past one warp take at least a block of 128 threads,
# the backward norms and softmax's forward a chunk a thread up to 256; SwiGLU's interleaved rows
# spread up to a wave; SwiGLU's small flat launches take blocks of 128 or 64 threads) against
# bmain (main's kernels and selector). Two device calls:
# PART=1: 1. gpu_fused (every test, the digest gate skipped), the record merged (expected
#            changes: f32 rows at 50 x 392 in the backward norms and softmax, 64 -> 128 threads,
#            another reduction tree; added: every op at 5 x 2048 in each dtype, where the
#            backward norms and softmax's forward now take 256 threads), the digest gate in a
#            second process;
#            racecheck and memcheck over the bf16 row ops; gpu_graphs;
#         2. A/B round 1, bmain then bnew in separate processes (graph replay): the 9 row ops
#            and SwiGLU's flat kernel at rows 1, 5, 100, 1024, 4000 x cols 768, 2048, 3072, 8192;
#         3. torch eager and torch.compile (outputs rotated) at rows 1, 5, 100, 1024, 4000 x cols
#            768, 2048, 8192.
# PART=2: 4. A/B round 2 (bnew first);
#         5. bnew's sweep of the backward norms at rows 1024, 4000 x cols 3072, 8192, 14336:
#            fixed threads (32 .. 1024) and fixed row ranges (132, 264, 528) beside automatic
#            (RMSNorm backward 1024 x 8192: 512 threads 1.261x its automatic 256, run136; its
#            partial rows, one per range, are a third of the bytes at one wave of 528 ranges).
# Here (bundles in .devcarry, the script copied to .devcarry/scripts; bench/tools/README.md):
#   git checkout main && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bmain
#   git checkout few-rows && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/bfew
# There, from the repository root with .devcarry carried:
#   PART=1 LIMIT=560 bash .devcarry/scripts/run139.sh, then PART=2.
# Table: python3 bench/tools/abx.py r139 base new (per op and cell, the median of the two rounds'
# p50s).
set -u
PART=${PART:-1}
R=/tmp/r139 NAME=r139-part$PART; source bench/tools/device.sh; mkdir -p $R/tests $R/torch
gpu_info part$PART
unpack bfew bmain
A=/tmp/bfew; Z=/tmp/bmain
el "bundles ready"
OPS=rmsnorm_fwd,layernorm_fwd,rmsnorm_fwd_residual,layernorm_fwd_residual,softmax_fwd,softmax_bwd,swiglu_fwd_interleaved,swiglu_fwd,rmsnorm_bwd,layernorm_bwd
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
ab() {
  CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,5,100,1024,4000 CUBINS_FUSED_GRID_COLS=768,2048,3072,8192 \
    CUBINS_FUSED_GRID_OPS=$OPS run "$@"
}
if [ "$PART" = 1 ]; then
  timeout $(t 150) $A/tests/gpu_fused --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/gpu_fused.log 2>&1
  el "gpu_fused rc=$? $(grep -h 'test result' $R/tests/gpu_fused.log | tail -1)"
  grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/gpu_fused.log | head -30 | cut -c1-400
  cp tests/digests/fused.txt $R/fused-digests-main.txt
  python3 bench/tools/merge_digests.py $R/fused-digests-main.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
  tail -8 $R/digest-merge.log
  # The gate reads the record at the path the bundle was built at (CARGO_MANIFEST_DIR) first.
  DIG=${DIG:-/work/main/tests/digests/fused.txt}
  mkdir -p $(dirname $DIG); cp $R/fused-digests.txt $DIG
  timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
  el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
  timeout $(t 60) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/racecheck.log 2>&1
  el "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck.log | tr '\n' ' ')"
  timeout $(t 60) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact row_ops_match_the_reference_bf16 --test-threads=1 > $R/memcheck.log 2>&1
  el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
  timeout $(t 40) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
  el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
  pack
  ab base1 $Z 75
  ab new1 $A 75
  pack
  export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
  ( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 150) - 8 )) python3 benches/torch_fused.py $R/torch/grid.json --grid --compile --graph --jobs 8 --rows 1,5,100,1024,4000 --cols 768,2048,8192 --ops $OPS > $R/torch/grid.log 2>&1; echo "rc=$?" >> $R/torch/grid.log )
  pkill -f torch_fused; sleep 1
  [ -f $R/torch/grid.json ] || python3 benches/torch_fused.py $R/torch/grid.json --grid --compile --assemble >> $R/torch/grid.log 2>&1
  el "torch $(tail -1 $R/torch/grid.log)"; rm -rf $R/torch/*.parts
  (cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $R/inductor.tar.gz --null -T -)
else
  ab new2 $A 75
  ab base2 $Z 75
  pack
  CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1024,4000 CUBINS_FUSED_GRID_COLS=3072,8192,14336 \
    CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd CUBINS_FUSED_SWEEP=1 CUBINS_FUSED_SWEEP_BLOCKS=132,264,528 \
    run sweep $A 200
fi
pack; ls -la $OUT
