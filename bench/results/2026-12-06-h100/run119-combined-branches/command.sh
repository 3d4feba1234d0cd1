# run119: one bundle (b120, commit ede36ac on branch swiglu-one-chunk: main + the backward norms'
# packed row groups and loops not unrolled + LayerNorm backward cluster halves past a block's
# shared memory + SwiGLU's flat kernel at one chunk a thread under a grid covering the chunks)
# against main (b114, 5e1a68c kernels = main's):
# 1. gpu_fused of b120 (every test, the digest gate skipped); the record merged (changed / added
#    digests listed) and the digest gate in a second process; memcheck over both backward
#    parity tests;
# 2. rmsnorm_bwd, layernorm_bwd, swiglu_fwd at rows 1..16384 x cols 768..32768, b120 then b114
#    (separate processes, graph replay);
# 3. racecheck over the LayerNorm backward's parity test, gpu_graphs;
# 4. the standalone SwiGLU grid / tile exploration (.devcarry/explore/swiglu_explore.cu);
# 5. a second round of 2 where time is left.
#   git checkout ede36ac && CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b120
# There, with .devcarry carried: bash .devcarry/run119.sh
set -u
R=/tmp/r119; mkdir -p $R/tests
pack() { (cd /tmp && tar czf $OUT/r119.tar.gz r119); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-585}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b120 b114; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b120; Z=/tmp/b114
el "bundles ready"
# 1. gates
for n in gpu_fused; do
  timeout $(t 180) $A/tests/$n --include-ignored --test-threads=1 --show-output --skip digests_match_the_record > $R/tests/$n.log 2>&1
  el "$n rc=$? $(grep -h 'test result' $R/tests/$n.log | tail -1)"
done
grep -h "^test .*FAILED\|panicked at" -A4 $R/tests/*.log | head -40 | cut -c1-400
grep -h "^8192x\|^4096x32768" $R/tests/gpu_fused.log | cut -c1-300
DIG=/work/main/tests/digests/fused.txt; mkdir -p $(dirname $DIG); cp tests/digests/fused.txt $DIG
python3 .devcarry/merge_digests.py tests/digests/fused.txt $R/tests/gpu_fused.log $R/fused-digests.txt > $R/digest-merge.log
tail -12 $R/digest-merge.log; cp $R/fused-digests.txt $DIG
timeout $(t 60) $A/tests/gpu_fused --include-ignored --exact digests_match_the_record --show-output > $R/tests/gpu_fused-gate.log 2>&1
el "digest gate (second process) rc=$? $(grep -h 'test result' $R/tests/gpu_fused-gate.log)"
pack
# 3. sanitizers
timeout $(t 90) compute-sanitizer --tool memcheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact rmsnorm_backward_matches_the_reference layernorm::layernorm_backward_matches_the_reference --test-threads=1 > $R/memcheck.log 2>&1
el "memcheck rc=$? $(grep -h 'ERROR SUMMARY\|test result' $R/memcheck.log | tr '\n' ' ')"
pack
# 2. the changed ops against main
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,2,5,16,100,1024,4000,16384 CUBINS_FUSED_GRID_COLS=768,2048,8192,14336,32768 CUBINS_FUSED_GRID_OPS=rmsnorm_bwd,layernorm_bwd,swiglu_fwd
run() { timeout $(t $3) $2/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
run new1 $A 90; run base1 $Z 90
mkdir -p $R/ab1; cp $R/fused-new1.log $R/ab1/fused-new.log; cp $R/fused-base1.log $R/ab1/fused-base.log; echo '{"results": []}' > $R/ab1/torch_grid.json
python3 .devcarry/summarize78.py $R/ab1 > $R/summary-ab1.txt 2>&1; tail -1 $R/summary-ab1.txt
pack
# 3b. racecheck, gpu_graphs
timeout $(t 90) compute-sanitizer --tool racecheck --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact layernorm::layernorm_backward_matches_the_reference --test-threads=1 > $R/racecheck.log 2>&1
el "racecheck rc=$? $(grep -h 'RACECHECK SUMMARY\|test result' $R/racecheck.log | tr '\n' ' ')"
pack
timeout $(t 120) $A/tests/gpu_graphs --include-ignored --test-threads=1 --show-output > $R/tests/gpu_graphs.log 2>&1
el "gpu_graphs rc=$? $(grep -h 'test result' $R/tests/gpu_graphs.log | tail -1)"
pack
# 4. SwiGLU grid and tile shapes (standalone, paired windows against the device copy)
timeout $(t 100) .devcarry/explore/swiglu_explore > $R/swiglu-explore.log 2>&1; el "swiglu explore rc=$?"
grep -h "^[0-9]\|crate\|full_u1_t128 \|interleaved" $R/swiglu-explore.log | head -60
pack
# 5. the second round where time is left
run new2 $A 80; run base2 $Z 80
pack; ls -la $OUT
