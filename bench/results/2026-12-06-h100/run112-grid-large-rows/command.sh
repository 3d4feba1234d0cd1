# run112: the landed state (b112, main 77360e8) on the grid's large rows, first measured:
# rows 100, 1024, 4000, 16384, 32768 x cols 768, 2048, 8192, 20000, 32768, every op (RoPE at
# head sizes 64, 80, 128), the crate's grid (graph replay, % of the same run's best copy)
# then torch eager and torch.compile at the same cells.
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/b112   (77360e8)
# There, with .devcarry carried: bash .devcarry/run112.sh
set -u
R=/tmp/r112; mkdir -p $R/torch
pack() { (cd /tmp && tar czf $OUT/r112.tar.gz r112); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-570}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
B=.devcarry/b112; D=/tmp/b112; mkdir -p $D; cp $B/BUILD.txt $R/bundle-b112-BUILD.txt
xz -dc $B/payload.tar.xz | tar -xf - -C $D && (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle b112 verified"
ROWS=100,1024,4000,16384,32768
COLS=768,2048,8192,20000,32768
# 1. the crate's grid
CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=$ROWS CUBINS_FUSED_GRID_COLS=$COLS timeout $(t 230) $D/benches/fused --results $R/fused-new > $R/fused-new.log 2>&1
el "fused grid rc=$? $(grep -c '^  [a-z_0-9]* [0-9]*x[0-9]*: p50' $R/fused-new.log) cells"
grep -h "ceiling\|best copy" $R/fused-new.log | head -5
pack
# 2. torch eager and torch.compile at the same cells
( PYTHONUNBUFFERED=1 timeout $(( $(t 330) - 12 )) python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --graph --jobs 10 --rows $ROWS --cols $COLS > $R/torch/compile.log 2>&1; echo "rc=$?" >> $R/torch/compile.log )
pkill -f torch_fused.py; sleep 1
[ -f $R/torch/compile.json ] || python3 benches/torch_fused.py $R/torch/compile.json --grid --compile --assemble >> $R/torch/compile.log 2>&1
el "torch $(tail -1 $R/torch/compile.log)"
rm -rf $R/torch/*.parts; cp $R/torch/compile.json $R/torch_grid.json
python3 .devcarry/summarize78.py $R > $R/summary.txt 2>&1; tail -40 $R/summary.txt
pack; ls -la $OUT
# ---- run112b.sh (torch at rows 100 and 1024 with 8 workers; its 4000-32768 half ran out of GPU memory)
# as run112c.sh below with R=/tmp/r112b, no PYTORCH_CUDA_ALLOC_CONF, and:
#   run small 100,1024 8 150
#   run large 4000,16384,32768 2 400
# ---- run112c.sh
# run112c: torch eager and torch.compile at run112b's large rows again (out of memory there:
# a failed cell's tensors were held; now freed after every cell), expandable segments.
set -u
R=/tmp/r112c; mkdir -p $R/torch
pack() { (cd /tmp && tar czf $OUT/r112c.tar.gz r112c); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-540}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
COLS=768,2048,8192,20000,32768
run() {  # name rows jobs limit
  ( PYTHONUNBUFFERED=1 timeout $(( $(t $4) - 8 )) python3 benches/torch_fused.py $R/torch/$1.json --grid --compile --graph --jobs $3 --rows $2 --cols $COLS > $R/torch/$1.log 2>&1; echo "rc=$?" >> $R/torch/$1.log )
  pkill -f torch_fused.py; sleep 1
  [ -f $R/torch/$1.json ] || python3 benches/torch_fused.py $R/torch/$1.json --grid --compile --assemble >> $R/torch/$1.log 2>&1
  el "torch $1 $(tail -1 $R/torch/$1.log) errors: $(grep -c Error $R/torch/$1.log)"
  rm -rf $R/torch/*.parts; pack
}

export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
run large 4000,16384,32768 2 520
pack; ls -la $OUT
# ---- here: the readings merged (a later run's reading of a cell replaces an earlier one;
# failed cells dropped) into torch_grid.json, then the table:
python3 - <<'PY'
import json
res = {}
for p in ["torch/run112-compile.json", "torch/run112b-small.json", "torch/run112c-large.json"]:
    d = json.load(open(p))
    for r in d["results"]:
        if "median_us" in r:
            res[(r["mode"], r["op"], r["rows"], r["cols"])] = r
d["results"] = list(res.values())
json.dump(d, open("torch_grid.json", "w"))
PY
python3 summarize78.py . > summary.txt
