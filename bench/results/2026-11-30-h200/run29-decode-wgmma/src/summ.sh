#!/bin/bash
# ptxas summary: kernel (demangled, shortened) regs spills smem
CF=c++filt
for f in "$@"; do
awk '/Compiling entry function/ {match($0, /'"'"'[^'"'"']+'"'"'/); fn=substr($0, RSTART+1, RLENGTH-2)}
     /spill stores/ {sp=$5"/"$9}
     /Used [0-9]+ registers/ {match($0,/Used [0-9]+/); r=substr($0,RSTART+5,RLENGTH-5); sm="0"; if (match($0,/[0-9]+ bytes smem/)) sm=substr($0,RSTART,RLENGTH-11); print fn, r, sp, sm}' $f
done | while read fn r sp sm; do echo "$($CF $fn | sed -e 's/cubins::gemm::Layout::/L/g' -e 's/__nv_bfloat16/bf16/g' -e 's/cubins::gemm::GemmArgs//' -e 's/(int)//g') regs=$r spill=$sp smem=$sm"; done
