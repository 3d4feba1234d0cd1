# run91: where the time goes on the sweep's cliffs (#40, #15, #31, #10): every kernel of the
# candidate's plan (operand passes, GEMM, split-K reduce) and cuBLAS's, one ncu reading each
# (duration, DRAM bytes, L2 write requests and sectors), on bundle b88 (kernel tree e47ade0).
set -u
R=/tmp/r91; mkdir -p $R
pack() { (cd /tmp && tar czf $OUT/r91.tar.gz r91); }
T0=$(date +%s); el() { echo "[$(( $(date +%s) - T0 )) s] $*"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv > $R/nvidia-smi.csv; cat $R/nvidia-smi.csv
A=.devcarry/b88
bash $A/run.sh $R/warm bench gemm --help > /dev/null 2>&1
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_requests_srcunit_tex_op_write.sum,lts__t_sectors_srcunit_tex_op_write.sum
for s in 40 15 31 10; do
  CUBINS_GEMM_RANDOM=48 CUBINS_GEMM_RANDOM_SEED=2026 CUBINS_GEMM_RANDOM_SHAPES=$s timeout 80 \
    ncu --clock-control none --metrics $M -c 24 --csv bash $A/run.sh $R/p$s bench gemm --quick > $R/ncu$s.csv 2> $R/ncu$s.err
  el "shape $s rc=$?"
  python3 - $R/ncu$s.csv <<'PY'
import csv,sys
rows=[r for r in csv.reader(open(sys.argv[1])) if len(r)>10]
if not rows: print("no rows"); sys.exit()
h=rows[0]; ki=h.index("Kernel Name"); mi=h.index("Metric Name"); vi=h.index("Metric Value"); ii=h.index("ID")
cur=None
for r in rows[1:]:
    if r[ii]!=cur:
        cur=r[ii]; print(); print(r[ii], r[ki][:90], end=" ")
    print(r[mi].split("__")[1][:28]+"="+r[vi], end=" ")
print()
PY
  pack
done
ls -la $OUT
