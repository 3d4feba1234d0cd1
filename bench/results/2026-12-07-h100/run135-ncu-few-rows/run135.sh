# run135: ncu of the cells where main (b133's code) trails torch.compile most (run134), the
# crate's kernel and torch.compile's at each: durations, instructions, stall reasons.
# There, with .devcarry carried: LIMIT=... bash .devcarry/run135.sh
set -u
R=/tmp/r135; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r135.tar.gz r135); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b133; A=/tmp/b133; mkdir -p $A; cp $B/BUILD.txt $R/bundle-b133-BUILD.txt
[ -x $A/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $A; }
(cd $A && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b133 verified"
SEC="--section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight --section InstructionStats"
export CUBINS_FUSED_GRID=1 TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
for cell in swiglu_fwd_interleaved:1024:2048 swiglu_fwd:5:8192 softmax_fwd:5:768 rmsnorm_bwd:1:768 swiglu_fwd_interleaved:100:768 softmax_bwd:1024:768 layernorm_bwd:1:768; do
  IFS=: read op rows cols <<< "$cell"
  CUBINS_FUSED_GRID_OPS=$op CUBINS_FUSED_GRID_ROWS=$rows CUBINS_FUSED_GRID_COLS=$cols timeout $(t 25) ncu --clock-control none -k regex:"^${op}_bf16" --launch-skip 20 -c 1 $SEC $A/benches/fused --results $R/b-$op-$rows > $R/ncu-$op-${rows}x$cols-crate.log 2>&1
  el "crate $cell rc=$?"
  timeout $(t 45) ncu --clock-control none --nvtx --nvtx-include timed/ -c 4 $SEC python3 .devcarry/ncu_torch.py $op $rows $cols > $R/ncu-$op-${rows}x$cols-compile.log 2>&1
  el "compile $cell rc=$?"
  pack
done
(cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $R/inductor.tar.gz --null -T -)
pack; ls -la $OUT
