set -u
B=.devcarry/run66
R=/tmp/r66
mkdir -p $R /tmp/b66
pack() { (cd /tmp && tar czf $OUT/r66.tar.gz r66); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
cp $B/BUILD.txt $R/bundle-BUILD.txt
export CUBINS_RESULTS_DIR=$R
timeout 300 bash $B/run.sh $R/tests tests > $R/tests.log 2>&1; echo "tests rc=$?"
grep -E "^test result|FAILED|panicked" $R/tests.log | head -20
grep -E "MEASURE launch|RUNTIMES" $R/tests.log | head -30
pack
xz -dc $B/payload.tar.xz | tar -xf - -C /tmp/b66 && (cd /tmp/b66 && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
for t in memcheck racecheck; do
  CUBINS_SANITIZER=$t timeout 100 compute-sanitizer --tool $t --error-exitcode 86 /tmp/b66/tests/gpu_cudarc --include-ignored --test-threads=1 > $R/sanitize-$t-gpu_cudarc.log 2>&1; echo "gpu_cudarc $t rc=$?"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/sanitize-*.log
pack
pack; ls -la $OUT
