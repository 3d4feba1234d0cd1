set -u
B=.devcarry/run61
R=/tmp/r61
mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
cp $B/BUILD.txt $R/bundle-BUILD.txt
bash $B/run.sh $R/tests tests > $R/tests.log 2>&1
tail -3 $R/tests.log
for t in memcheck racecheck; do
  CUBINS_SANITIZER=$t compute-sanitizer --tool $t --error-exitcode 86 $B/tests/gpu_axpy --include-ignored --test-threads=1 > $R/sanitize-$t-gpu_axpy.log 2>&1; echo "gpu_axpy $t rc=$?"
done
CUBINS_SANITIZER=memcheck compute-sanitizer --tool memcheck --error-exitcode 86 $B/tests/gpu_graphs --include-ignored --test-threads=1 > $R/sanitize-memcheck-gpu_graphs.log 2>&1; echo "gpu_graphs memcheck rc=$?"
CUBINS_SANITIZER=memcheck compute-sanitizer --tool memcheck --error-exitcode 86 $B/tests/gpu_runtime --include-ignored --test-threads=1 > $R/sanitize-memcheck-gpu_runtime.log 2>&1; echo "gpu_runtime memcheck rc=$?"
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/sanitize-*.log
bash $B/run.sh $R/copy bench copy_ceiling > $R/copy_ceiling.log 2>&1
grep -E "CHECK|PASS|FAIL|ratio|x the driver" $R/copy_ceiling.log | tail -15
cd /tmp && tar czf $OUT/r61.tar.gz r61 && ls -la $OUT
