set -u
B=.devcarry/run61
R=/tmp/r62
mkdir -p $R /tmp/b62
pack() { (cd /tmp && tar czf $OUT/r62.tar.gz r62); }
xz -dc $B/payload.tar.xz | tar -xf - -C /tmp/b62
cp $B/BUILD.txt $R/bundle-BUILD.txt
export CUBINS_RESULTS_DIR=$R
for t in memcheck racecheck; do
  CUBINS_SANITIZER=$t timeout 60 compute-sanitizer --tool $t --error-exitcode 86 /tmp/b62/tests/gpu_axpy --include-ignored --test-threads=1 > $R/sanitize-$t-gpu_axpy.log 2>&1; echo "gpu_axpy $t rc=$?"
done
CUBINS_SANITIZER=memcheck timeout 150 compute-sanitizer --tool memcheck --error-exitcode 86 /tmp/b62/tests/gpu_graphs --include-ignored --test-threads=1 > $R/sanitize-memcheck-gpu_graphs.log 2>&1; echo "gpu_graphs memcheck rc=$?"
CUBINS_SANITIZER=memcheck timeout 90 compute-sanitizer --tool memcheck --error-exitcode 86 /tmp/b62/tests/gpu_runtime --include-ignored --test-threads=1 --exact both_kernels_copy_exactly_at_every_size explicit_geometries_copy_exactly > $R/sanitize-memcheck-gpu_runtime-copy.log 2>&1; echo "gpu_runtime copy memcheck rc=$?"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/sanitize-*.log
pack
PYTHONUNBUFFERED=1 timeout 200 python3 benches/torch_fused.py $R/torch_fused.json --quick --compile > $R/torch_fused.log 2>&1; echo "torch rc=$?"; tail -4 $R/torch_fused.log
pack
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 150 bash $B/run.sh $R/fused bench fused --quick > $R/fused.log 2>&1; echo "fused rc=$?"
grep -E "^CHECK (FAIL|PASS)" $R/fused.log | head -60
pack; ls -la $OUT
