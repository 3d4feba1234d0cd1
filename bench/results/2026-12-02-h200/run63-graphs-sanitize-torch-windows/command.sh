set -u
B=.devcarry/run63
R=/tmp/r63
mkdir -p $R /tmp/b63
pack() { (cd /tmp && tar czf $OUT/r63.tar.gz r63); }
xz -dc $B/payload.tar.xz | tar -xf - -C /tmp/b63 && (cd /tmp/b63 && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "binaries verified"
cp $B/BUILD.txt $R/bundle-BUILD.txt
export CUBINS_RESULTS_DIR=$R
for t in memcheck racecheck; do
  CUBINS_SANITIZER=$t timeout 170 compute-sanitizer --tool $t --error-exitcode 86 /tmp/b63/tests/gpu_graphs --include-ignored --test-threads=1 > $R/sanitize-$t-gpu_graphs.log 2>&1; echo "gpu_graphs $t rc=$?"
done
grep -h "ERROR SUMMARY\|RACECHECK SUMMARY\|test result\|NOT CHECKED" $R/sanitize-*.log
pack
PYTHONUNBUFFERED=1 timeout 200 python3 benches/torch_fused.py $R/torch_fused.json --quick --compile > $R/torch_fused.log 2>&1; echo "torch rc=$?"
pack
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 120 bash $B/run.sh $R/fused bench fused --quick > $R/fused.log 2>&1; echo "fused rc=$?"
grep -E "^CHECK FAIL" $R/fused.log; grep -cE "^CHECK PASS" $R/fused.log
grep -E "torch.compile|copy ceiling" $R/fused.log | grep -E "CHECK|STAMP.*copy" | head -30
pack; ls -la $OUT
