# run124 then run124b in one call, the second within what the first left of LIMIT.
T0=$(date +%s); L=${LIMIT:-570}
LIMIT=$L bash .devcarry/run124.sh
LIMIT=$(( L - ($(date +%s) - T0) )) bash .devcarry/run124b.sh
