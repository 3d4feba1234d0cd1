# run126: the forward norms' and softmax's threads per row at mid rows, on main's kernels (b126),
# and b127 (main + the forwards' medium walk: weights loaded ahead up to 4 chunks a thread, bias
# not; never landed) beside it, each sweep in its own process:
# 1. the fused grid with CUBINS_FUSED_SWEEP=1 (automatic, then fixed 32..1024 threads a row) at
#    rows 100, 1024, 4000, 16384 x cols 768, 2048, 3072, 8192, the forward norms (with and
#    without residual), softmax forward and backward; graph replay; b126, then b127;
# 2. torch eager and torch.compile at those ops x rows x cols 768, 2048, 8192, same call;
# 3. b126's threads per row at 1024 and 4000 rows x 14336, 20000, 32768 columns (stopped by
#    the call's limit after 149 readings).
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b126   (main, c7ffde3)
#   b127: main with cuda/include/cubins/norm.cuh's kMidChunks walk, the same command
# There, with .devcarry carried: bash .devcarry/run126.sh; here: python3 sweep126.py r126
set -u
R=/tmp/r126; mkdir -p $R/torch
pack() { (cd /tmp && tar czf $OUT/r126.tar.gz r126); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-430}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b126 b127; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b126; M=/tmp/b127
export CUBINS_FUSED_GRID=1
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,layernorm_fwd_residual,softmax_fwd,softmax_bwd
ROWS=100,1024,4000,16384
CUBINS_FUSED_SWEEP=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=768,2048,3072,8192 CUBINS_FUSED_GRID_OPS=$OPS run sweep1 $A 170
pack
CUBINS_FUSED_SWEEP=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=768,2048,3072,8192 CUBINS_FUSED_GRID_OPS=$OPS run sweep1-mid $M 170
pack
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 170) - 8 )) python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --graph --jobs 4 --rows $ROWS --cols 768,2048,8192 --ops $OPS > $R/torch/mid.log 2>&1; echo "rc=$?" >> $R/torch/mid.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/mid.json ] || python3 benches/torch_fused.py $R/torch/mid.json --grid --compile --assemble >> $R/torch/mid.log 2>&1
el "torch $(tail -1 $R/torch/mid.log)"; rm -rf $R/torch/*.parts
pack
# 4. wide rows at 1024 and 4000 rows (the waves of one-row blocks), b126's threads per row
CUBINS_FUSED_SWEEP=1 CUBINS_FUSED_GRID_ROWS=1024,4000 CUBINS_FUSED_GRID_COLS=14336,20000,32768 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,softmax_fwd run sweep-wide $A 80
pack; ls -la $OUT
