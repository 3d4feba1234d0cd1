# run124d (a third call on the same warm machine, after run124c): the early trigger (b125)
# against b124 at the few-row cells of SwiGLU, RMSNorm and LayerNorm forward, twice.
R=$OUT/r124d; mkdir -p $R; export CUBINS_FUSED_GRID=1 CUBINS_FUSED_GRID_ROWS=1,5,16,100,1024,4000 CUBINS_FUSED_GRID_COLS=768,2048,8192 CUBINS_FUSED_GRID_OPS=swiglu_fwd,rmsnorm_fwd,layernorm_fwd; for i in 1 2; do for b in b125 b124; do timeout 25 /tmp/$b/benches/fused --results $R/$b-$i > $R/fused-$b-$i.log 2>&1; echo "$b $i rc=$? $(grep -c ' p50 ' $R/fused-$b-$i.log)"; done; done
