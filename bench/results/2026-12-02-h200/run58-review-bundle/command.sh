# Built here (commit 49c0c2f, same tree as cfbc288 but for the bundle folder):
#   CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run58
# Run on the H200:
bash .devcarry/run58/run.sh /tmp/r58/tests tests
