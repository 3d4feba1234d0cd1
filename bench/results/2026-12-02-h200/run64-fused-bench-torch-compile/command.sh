set -u
B=.devcarry/run63
R=/tmp/r64
mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r64.tar.gz r64); }
cp $B/BUILD.txt $R/bundle-BUILD.txt
PYTHONUNBUFFERED=1 timeout 270 python3 benches/torch_fused.py $R/torch_fused.json --compile > $R/torch_fused.log 2>&1; echo "torch rc=$?"
pack
CUBINS_TORCH_FUSED_JSON=$R/torch_fused.json timeout 270 bash $B/run.sh $R/fused bench fused > $R/fused.log 2>&1; echo "fused rc=$?"
grep -E "^CHECK FAIL" $R/fused.log; grep -cE "^CHECK PASS" $R/fused.log
pack; ls -la $OUT
