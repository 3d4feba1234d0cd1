# run147: explorers (bench/results/.../run147-explore/explore): (1) one-row RMSNorm backward
# (explore.py: minimal kernels adding the crate kernel's pieces, and the crate's kernel, against
# torch.compile in one process); (2) a bulk-copy ring for the RMSNorm backward at large shapes
# (ring.py: against the device's copy of the same bytes); (3) ncu with SASS-level stall
# sampling of main's backward norms at 1 x 768 (bmain).
# There: LIMIT=400 bash .devcarry/scripts/run147.sh
set -u
R=/tmp/r147 NAME=r147; source bench/tools/device.sh; mkdir -p $R/explore
gpu_info
cp .devcarry/explore/* $R/explore/
for c in 768 2048; do
  (cd $R/explore && timeout $(t 100) python3 explore.py . $c > explore-$c.log 2>&1); el "explore $c rc=$?"; tail -13 $R/explore/explore-$c.log
  pack
done
(cd $R/explore && timeout $(t 150) python3 ring.py . > ring.log 2>&1); el "ring rc=$?"; cat $R/explore/ring.log
pack
unpack bmain
A=/tmp/bmain
SEC="--section WarpStateStats --section SourceCounters --section InstructionStats --section LaunchStats --section SpeedOfLight"
export CUBINS_FUSED_GRID=1
for cell in rmsnorm_bwd:1:768 layernorm_bwd:1:768; do
  IFS=: read op rows cols <<< "$cell"
  CUBINS_FUSED_GRID_OPS=$op CUBINS_FUSED_GRID_ROWS=$rows CUBINS_FUSED_GRID_COLS=$cols timeout $(t 40) ncu --clock-control none --cache-control none --sampling-interval 0 -k regex:"^${op}_bf16" --launch-skip 20 -c 1 $SEC -o $R/$op-${rows}x$cols $A/benches/fused --results $R/b-$op > $R/ncu-$op.log 2>&1
  el "$cell rc=$?"
  ncu -i $R/$op-${rows}x$cols.ncu-rep --page source --csv --print-source sass > $R/sass-$op.csv 2> $R/sass-$op.err
  ncu -i $R/$op-${rows}x$cols.ncu-rep --page details > $R/details-$op.txt 2>&1
  el "$cell printed rc=$? $(wc -l < $R/sass-$op.csv) sass lines"
  pack
done
pack; ls -la $OUT
