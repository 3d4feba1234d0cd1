# run103: where the cluster forward pays: the crate's grid at few rows and 6144-20000 columns,
# this change (b100, d11370d + the twins without a streamed walk) against main's fused kernels
# (b97), alternating new, base, new, base in one call; and memcheck and racecheck over the
# cluster forward's test (every dtype, shape and layout). There: bash .devcarry/run103.sh
set -u
R=/tmp/r103; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r103.tar.gz r103); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
LIMIT=${LIMIT:-300}
t() { local l=$(( LIMIT - ($(date +%s) - T0) )); [ $l -lt 3 ] && l=3; [ $1 -lt $l ] && l=$1; echo $l; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
for b in b100 b97; do
  B=.devcarry/$b; D=/tmp/$b; mkdir -p $D; cp $B/BUILD.txt $R/bundle-$b-BUILD.txt
  [ -x $D/benches/fused ] || { xz -dc $B/payload.tar.xz | tar -xf - -C $D; }
  (cd $D && sha256sum --quiet -c "$OLDPWD/$B/BINARIES.sha256") && echo "bundle $b verified"
done
A=/tmp/b100; Z=/tmp/b97
export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,2,5,16 CUBINS_FUSED_GRID_COLS=6144,8192,14336,20000
for round in 1 2; do
  CUBINS_FUSED_GRID_OPS=rmsnorm_fwd,rmsnorm_fwd_residual,layernorm_fwd,layernorm_fwd_residual timeout $(t 60) $A/benches/fused --results $R/new$round > $R/fused-new$round.log 2>&1; el "new $round rc=$?"
  timeout $(t 90) $Z/benches/fused --results $R/base$round > $R/fused-base$round.log 2>&1; el "base $round rc=$?"
done
pack
for tool in memcheck racecheck; do
  timeout $(t 100) compute-sanitizer --tool $tool --error-exitcode 86 $A/tests/gpu_fused --include-ignored --exact forward_norms_split_few_long_rows_over_clusters > $R/$tool.log 2>&1
  el "$tool rc=$? $(grep -h 'ERROR SUMMARY\|RACECHECK SUMMARY\|test result' $R/$tool.log | tr '\n' ' ')"
done
pack; ls -la $OUT
