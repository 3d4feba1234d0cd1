# run132: experiments on main's kernels (bundle b132: main ab82363 + the experiment commit of
# branch exp-short, whose knobs are environment variables, so each pair is one binary):
# 1. the short walk's width: forward-norm rows (with and without residual) of at most 2 chunks a
#    thread over up to 128 (CUBINS_EXP_SHORT=128) or 192 threads, where the warp walk does not
#    hold them, against the selector (unset); rows 1024, 4000, 16384, 32768 x cols 768, 2048, 3072;
#    two rounds, the arms alternating in separate processes;
# 2. programmatic-dependent launches off (CUBINS_EXP_NO_PDL=1) against on, every row op at rows
#    4000, 16384, 32768 x cols 768, 2048, 8192; two rounds;
# 3. ncu: LayerNorm forward at 1024 x 768, the crate's (b132, selector) and torch.compile's.
#   git checkout exp-short && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b132
# There, with .devcarry carried: LIMIT=... bash .devcarry/run132.sh
set -u
R=/tmp/r132; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r132.tar.gz r132); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b132; A=/tmp/b132; mkdir -p $A; cp $B/BUILD.txt $R/bundle-b132-BUILD.txt
[ -x $A/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $A; }
(cd $A && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b132 verified"
el "bundle ready"
export CUBINS_FUSED_GRID=1
run() { local name=$1 secs=$2; shift 2; timeout $(t $secs) env "$@" $A/benches/fused --results $R/$name > $R/fused-$name.log 2>&1; el "$name rc=$? $(grep -c ' p50 ' $R/fused-$name.log) readings"; }
# 1. short walk width
export CUBINS_FUSED_GRID_ROWS=1024,4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,3072 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,layernorm_fwd,rmsnorm_fwd_residual,layernorm_fwd_residual
run short-base1 40 X=0
run short-128-1 40 CUBINS_EXP_SHORT=128
run short-192-1 40 CUBINS_EXP_SHORT=192
pack
run short-192-2 40 CUBINS_EXP_SHORT=192
run short-128-2 40 CUBINS_EXP_SHORT=128
run short-base2 40 X=0
pack
# 2. programmatic-dependent launches
export CUBINS_FUSED_GRID_ROWS=4000,16384,32768 CUBINS_FUSED_GRID_COLS=768,2048,8192 CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,layernorm_fwd_residual,softmax_fwd,softmax_bwd
run pdl-on1 45 X=0
run pdl-off1 45 CUBINS_EXP_NO_PDL=1
pack
run pdl-off2 45 CUBINS_EXP_NO_PDL=1
run pdl-on2 45 X=0
pack
# 3. ncu at 1024 x 768
SEC="--section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy --section MemoryWorkloadAnalysis --section SpeedOfLight --section InstructionStats"
CUBINS_FUSED_GRID_COLS=768 CUBINS_FUSED_GRID_ROWS=1024 CUBINS_FUSED_GRID_OPS=layernorm_fwd timeout $(t 30) ncu --clock-control none -k regex:layernorm_fwd_bf16 --launch-skip 20 -c 1 $SEC $A/benches/fused --results $R/ncu-ln > $R/ncu-layernorm_fwd-1024x768-b132.log 2>&1
el "ncu ln b132 rc=$?"
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
timeout $(t 60) ncu --clock-control none --nvtx --nvtx-include timed/ -k regex:triton -c 1 $SEC python3 .devcarry/ncu_compile.py 1024 768 ln > $R/ncu-layernorm_fwd-1024x768-compile.log 2>&1
el "ncu ln compile rc=$?"
(cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $R/inductor.tar.gz --null -T -)
pack; ls -la $OUT
