# run67 on the H200: the GPU suite from three bundles of commit a698931, built here in a clean clone:
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run67a
#   CUBINS_ARCHS="90"     cargo xtask gpu-bundle --out .devcarry/run67s
#   cargo xtask export-prebuilt --out PREBUILT
#   CUBINS_PREBUILT=PREBUILT CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run67p
# There, with .devcarry carried: bash .devcarry/run67.sh (this file)
set -u
R=/tmp/r67; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r67.tar.gz r67); }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv
for b in a s p; do
  B=.devcarry/run67$b; mkdir -p $R/$b; cp $B/BUILD.txt $R/$b/bundle-BUILD.txt
  CUBINS_RESULTS_DIR=$R/$b timeout 300 bash $B/run.sh $R/$b/tests tests > $R/$b/tests.log 2>&1; echo "bundle $b tests rc=$?"
  tail -1 $R/$b/tests/summary.txt; grep -h "^FAIL" $R/$b/tests/summary.txt | head
  grep -rh "STAMP" $R/$b/tests 2>/dev/null | grep -o "origin=[a-z]*" | sort | uniq -c
  pack
done
grep -h "PARITY\|RUNTIMES\|REFUSED\|STAMP" $R/a/tests/tests/gpu_decoder.log | head -60
mkdir -p /tmp/b67 && xz -dc .devcarry/run67a/payload.tar.xz | tar -xf - -C /tmp/b67 && (cd /tmp/b67 && sha256sum --quiet -c "$OLDPWD/.devcarry/run67a/BINARIES.sha256") && echo "binaries verified"
for t in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $t --error-exitcode 86 /tmp/b67/tests/gpu_decoder --include-ignored --test-threads=1 > $R/a/sanitize-$t-gpu_decoder.log 2>&1; echo "gpu_decoder $t rc=$?"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result" $R/a/sanitize-*.log
pack; ls -la $OUT
