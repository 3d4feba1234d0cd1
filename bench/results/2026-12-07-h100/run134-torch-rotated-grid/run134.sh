# run134: main (b133's code, f2cd759) against torch eager and torch.compile with outputs rotated on
# both sides, every grid op at rows 1, 5, 100, 1024, 4000 x cols 768, 2048, 8192 (graph replay):
# 1. the crate's bench, first round; 2. torch (benches/torch_fused.py of main); 3. the crate's
# second round (each reading: the median of the two rounds' p50s).
# There, with .devcarry carried: LIMIT=... bash .devcarry/run134.sh
set -u
R=/tmp/r134; mkdir -p $R/torch
pack() { (cd /tmp && tar czf $OUT/r134.tar.gz r134); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-530}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b133; A=/tmp/b133; mkdir -p $A; cp $B/BUILD.txt $R/bundle-b133-BUILD.txt
[ -x $A/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $A; }
(cd $A && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b133 verified"
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,5,100,1024,4000 CUBINS_FUSED_GRID_COLS=768,2048,8192
run() { timeout $(t $2) $A/benches/fused --results $R/$1 > $R/fused-$1.log 2>&1; el "$1 rc=$? $(grep -c ' p50 ' $R/fused-$1.log) readings"; }
run crate1 110
pack
export TORCHINDUCTOR_CACHE_DIR=/tmp/inductor
( PYTHONUNBUFFERED=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True timeout $(( $(t 200) - 8 )) python3 benches/torch_fused.py $R/torch/grid.json --grid --compile --graph --jobs 8 --rows 1,5,100,1024,4000 --cols 768,2048,8192 > $R/torch/grid.log 2>&1; echo "rc=$?" >> $R/torch/grid.log )
pkill -f torch_fused; sleep 1
[ -f $R/torch/grid.json ] || python3 benches/torch_fused.py $R/torch/grid.json --grid --compile --assemble >> $R/torch/grid.log 2>&1
el "torch $(tail -1 $R/torch/grid.log)"; rm -rf $R/torch/*.parts
pack
run crate2 110
(cd /tmp && find inductor \( -name '*.py' -o -name '*.best_config' \) -print0 | tar czf $R/inductor.tar.gz --null -T -)
pack; ls -la $OUT
