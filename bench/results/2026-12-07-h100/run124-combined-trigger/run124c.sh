# run124b (after run124): b125 (branch early-trigger: b124 + griddepcontrol.launch_dependents
# after the grid wait in every fused row kernel) against b124 at the small and mid cells of
# every op, alternating; b125's gpu_fused; torch eager and torch.compile at the backward norms'
# and SwiGLU's cells of run124; a second round of run124's backward and SwiGLU cells.
#   git checkout early-trigger && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b125
# There, with .devcarry carried: bash .devcarry/run124b.sh
set -u
R=/tmp/r124c; mkdir -p $R/torch $R/tests
pack() { (cd /tmp && tar czf $OUT/r124c.tar.gz r124c); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-585}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b125 b124 b114; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
E=/tmp/b125; A=/tmp/b124; Z=/tmp/b114
export CUBINS_FUSED_GRID=1
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
[ -f /tmp/r124b/torch/compile.json ] && cp /tmp/r124b/torch/compile.json $R/torch/compile.json || echo '{"results": []}' > $R/torch/compile.json
TR=1,5,16,100,1024,4000; TC=768,2048,8192
# 3. run124's backward and SwiGLU cells again, base first
BR=100,1024,4000,16384; BC=768,2048,8192,14336
CUBINS_FUSED_GRID_ROWS=$BR CUBINS_FUSED_GRID_COLS=$BC CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd run bwd-base $Z 50
CUBINS_FUSED_GRID_ROWS=$BR CUBINS_FUSED_GRID_COLS=$BC CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd run bwd-new $A 50
SR=1,2,5,16,100,1024,4000,16384; SC=768,2048,8192,14336,32768
CUBINS_FUSED_GRID_ROWS=$SR CUBINS_FUSED_GRID_COLS=$SC CUBINS_FUSED_GRID_OPS=swiglu_fwd run swiglu-base $Z 40
CUBINS_FUSED_GRID_ROWS=$SR CUBINS_FUSED_GRID_COLS=$SC CUBINS_FUSED_GRID_OPS=swiglu_fwd run swiglu-new $A 40
for p in bwd swiglu; do mkdir -p $R/ab-$p; cp $R/fused-$p-new.log $R/ab-$p/fused-new.log; cp $R/fused-$p-base.log $R/ab-$p/fused-base.log; cp $R/torch/compile.json $R/ab-$p/torch_grid.json; python3 .devcarry/summarize78.py $R/ab-$p > $R/summary-$p.txt 2>&1; tail -n 8 $R/summary-$p.txt; done
pack
# 4. ncu: the crate's forward norms and torch.compile's kernels at mid cells where torch.compile leads
M=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum,dram__bytes_write.sum,sm__warps_active.avg.pct_of_peak_sustained_active,launch__grid_size,launch__block_size,launch__registers_per_thread,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,lts__t_sector_hit_rate.pct
for cell in 1024x2048 4000x768 1024x8192; do for op in rmsnorm_fwd layernorm_fwd; do
  [ $(t 40) -lt 30 ] && break 2
  r=${cell%x*}; c=${cell#*x}
  CUBINS_FUSED_GRID_OPS=$op CUBINS_FUSED_GRID_ROWS=$r CUBINS_FUSED_GRID_COLS=$c timeout $(t 30) \
    ncu --clock-control none --cache-control none --metrics $M -k "regex:${op}_bf16" -c 3 --csv \
    $A/benches/fused --results $R/ncu-b > $R/ncu-crate-$op-$cell.csv 2> $R/ncu-crate-$op-$cell.err
  el "ncu crate $op $cell rc=$?"
  PYTHONUNBUFFERED=1 timeout $(t 40) ncu --clock-control none --cache-control none --metrics $M -k "regex:triton" -c 3 --csv \
    python3 benches/torch_fused.py $R/ncu-torch.json --grid --compile --rows $r --cols $c --ops $op > $R/ncu-torch-$op-$cell.csv 2> $R/ncu-torch-$op-$cell.err
  el "ncu torch.compile $op $cell rc=$?"
done; done
pack
# 5. the early trigger's second round, base first
CUBINS_FUSED_GRID_ROWS=$TR CUBINS_FUSED_GRID_COLS=$TC run trig-base2 $A 60
CUBINS_FUSED_GRID_ROWS=$TR CUBINS_FUSED_GRID_COLS=$TC run trig-new2 $E 60
mkdir -p $R/ab-trig2; cp $R/fused-trig-new2.log $R/ab-trig2/fused-new.log; cp $R/fused-trig-base2.log $R/ab-trig2/fused-base.log; echo '{"results": []}' > $R/ab-trig2/torch_grid.json
python3 .devcarry/summarize78.py $R/ab-trig2 > $R/summary-trig2.txt 2>&1
pack; ls -la $OUT
