# slim.sh BUNDLE_DIR: keep only tests/gpu_fused and benches/fused in the bundle's payload (and
# its BINARIES.sha256), so experiment bundles fit the device call's 64 MiB beside full ones.
set -eu
B=$1; T=$(mktemp -d)
xz -dc $B/payload.tar.xz | tar -xf - -C $T tests/gpu_fused benches/fused
(cd $T && tar -cf - tests/gpu_fused benches/fused | xz -T2 -6 > payload.tar.xz && sha256sum tests/gpu_fused benches/fused > BINARIES.sha256)
mv $T/payload.tar.xz $T/BINARIES.sha256 $B/
echo "slim: tests/gpu_fused benches/fused only" >> $B/BUILD.txt
(cd $B && sha256sum BINARIES.sha256 BUILD.txt payload.tar.xz run.sh > SHA256SUMS)
rm -rf $T; du -sh $B
