# Built here (commit 64df6b8): CUBINS_ARCHS="90;90a" cargo xtask gpu-bundle --out .devcarry/run57
# Run on the H200:
bash .devcarry/run57/run.sh /tmp/r57/tests tests
