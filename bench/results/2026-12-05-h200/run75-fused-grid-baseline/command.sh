set -u
R=/tmp/r75; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r75.tar.gz r75); }
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv > $R/nvidia-smi.txt 2>&1
( PYTHONUNBUFFERED=1 timeout 320 python3 benches/torch_fused.py $R/torch_grid.json --grid --compile --graph --jobs 10 > $R/torch_grid.log 2>&1; echo "torch rc=$?" >> $R/torch_grid.log )
pkill -f torch_fused.py; sleep 2
[ -f $R/torch_grid.json ] || python3 benches/torch_fused.py $R/torch_grid.json --grid --compile --assemble >> $R/torch_grid.log 2>&1
tail -2 $R/torch_grid.log; grep -c error $R/torch_grid.log
pack
CUBINS_FUSED_GRID=1 CUBINS_TORCH_FUSED_JSON=$R/torch_grid.json timeout 230 .devcarry/run75/fused --results $R/fused > $R/fused.log 2>&1; echo "fused rc=$?"
grep -cE "^CHECK PASS" $R/fused.log; grep -cE "^CHECK FAIL" $R/fused.log; tail -3 $R/fused.log
pack; ls -la $OUT
