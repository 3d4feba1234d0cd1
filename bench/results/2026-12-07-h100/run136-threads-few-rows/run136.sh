# run136: threads per row at the cells where main (b133's code) trails torch.compile at few rows
# (run134): fixed 32..1024 beside the automatic choice (CUBINS_FUSED_SWEEP=1), rows 1, 5, 100,
# 1024 x cols 768, 2048, 8192, graph replay.
# There, with .devcarry carried: LIMIT=... bash .devcarry/run136.sh
set -u
R=/tmp/r136; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r136.tar.gz r136); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b133; A=/tmp/b133; mkdir -p $A; cp $B/BUILD.txt $R/bundle-b133-BUILD.txt
[ -x $A/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $A; }
(cd $A && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b133 verified"
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_SWEEP=1 CUBINS_FUSED_GRID_ROWS=1,5,100,1024 CUBINS_FUSED_GRID_COLS=768,2048,8192
run() { timeout $(t $2) env CUBINS_FUSED_GRID_OPS=$3 $A/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
run sweep-a 110 softmax_fwd,softmax_bwd,swiglu_fwd_interleaved
pack
run sweep-b 110 rmsnorm_bwd,layernorm_bwd
pack
run sweep-c 80 layernorm_fwd,layernorm_fwd_residual,rmsnorm_fwd_residual
pack; ls -la $OUT
