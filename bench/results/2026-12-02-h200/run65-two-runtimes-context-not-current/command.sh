set -u
B=.devcarry/run65
R=/tmp/r65
mkdir -p $R /tmp/b65
pack() { (cd /tmp && tar czf $OUT/r65.tar.gz r65); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
cp $B/BUILD.txt $R/bundle-BUILD.txt
export CUBINS_RESULTS_DIR=$R
timeout 300 bash $B/run.sh $R/tests tests > $R/tests.log 2>&1; echo "tests rc=$?"
grep -E "^test result|FAILED|panicked" $R/tests.log | head -20
grep -E "MEASURE launch|RUNTIMES" $R/tests.log | head -30
pack
xz -dc $B/payload.tar.xz | tar -xf - -C /tmp/b65 && (cd /tmp/b65 && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
for t in memcheck racecheck; do
  CUBINS_SANITIZER=$t timeout 100 compute-sanitizer --tool $t --error-exitcode 86 /tmp/b65/tests/gpu_cudarc --include-ignored --test-threads=1 > $R/sanitize-$t-gpu_cudarc.log 2>&1; echo "gpu_cudarc $t rc=$?"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/sanitize-*.log
pack
timeout 90 bash $B/run.sh $R/copy bench copy_ceiling > $R/copy_ceiling.log 2>&1; echo "copy rc=$?"
grep -E "CHECK|x the driver" $R/copy_ceiling.log | tail -8
pack; ls -la $OUT
