# fused_acceptance.sh: issue 23's acceptance grid for one GPU bundle (.devcarry/$B, main's code by
# default): every op at rows {1, 2, 5, 16, 100, 1024, 4000, 16384, 32768} x cols {768, 2048,
# 3072, 6144, 8192, 14336, 20000, 32768} (RoPE at head sizes 64, 80, 128), graph replay, the
# same run's copy ceiling, then torch eager and torch.compile (outputs rotated) at the same
# cells, in three device calls by rows:
#   PART=1  the gates first (gpu_fused with the committed digest record, racecheck and memcheck
#           over the bf16 row ops, gpu_graphs), then rows 1, 2, 5, 16;
#   PART=2  rows 100, 1024, 4000;   PART=3  rows 16384, 32768.
# From the repository root with .devcarry carried:
#   B=bmain PART=1 LIMIT=560 bash .devcarry/scripts/fused_acceptance.sh   (then PART=2, PART=3)
# Results in $OUT/fused-acceptance-partN.tar.gz. Table per part (after unpacking):
#   mkdir -p /tmp/t && cp fused-acceptance/fused-partN.log /tmp/t/fused-new.log && \
#     cp fused-acceptance/torch/partN.json /tmp/t/torch_grid.json && python3 bench/tools/vs_torch.py /tmp/t
set -u
B=${B:-bmain}; PART=${PART:-1}
R=/tmp/fused-acceptance NAME=fused-acceptance-part$PART; source bench/tools/device.sh
mkdir -p $R/tests $R/torch; gpu_info part$PART; unpack $B; A=/tmp/$B
el "bundle ready"
COLS=768,2048,3072,6144,8192,14336,20000,32768
case $PART in
1) ROWS=1,2,5,16; CRATE=150; TORCH=200
  STEP=150 gpu_tests $A gpu_fused
  STEP=60 sanitize $A gpu_fused --exact row_ops_match_the_reference_bf16
  STEP=40 gpu_tests $A gpu_graphs
  pack ;;
2) ROWS=100,1024,4000; CRATE=220; TORCH=300 ;;
3) ROWS=16384,32768; CRATE=260; TORCH=260 ;;
esac
CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=$COLS \
  timeout $(t $CRATE) $A/benches/fused --results $R/part$PART > $R/fused-part$PART.log 2>&1
el "crate grid rc=$? $(grep -c ' p50 ' $R/fused-part$PART.log) readings"; pack
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t $TORCH) - 8 )) python3 benches/torch_fused.py $R/torch/part$PART.json --grid --compile --graph --jobs 8 --rows $ROWS --cols $COLS > $R/torch/part$PART.log 2>&1; echo "rc=$?" >> $R/torch/part$PART.log )
pkill -f torch_fused; sleep 1
[ -f $R/torch/part$PART.json ] || python3 benches/torch_fused.py $R/torch/part$PART.json --grid --compile --assemble >> $R/torch/part$PART.log 2>&1
el "torch $(tail -1 $R/torch/part$PART.log)"; rm -rf $R/torch/*.parts
grep -h "copy ceiling 1 GiB:\|CHECK FAIL" $R/fused-part$PART.log | cut -c1-120 | head -40
pack; ls -la $OUT
