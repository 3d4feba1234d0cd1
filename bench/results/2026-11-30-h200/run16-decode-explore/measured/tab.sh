#!/bin/bash
# tab.sh decode.txt NK : rows variant x (dt,lay), cols M: med(ratio)
f=$1; nk=${2:-4096}
for v in $(grep RESULT $f | awk '{print $7}' | awk '!s[$0]++'); do for D in bf16 fp16; do for L in NT NN; do
 line=$(for m in 1 2 8 16; do grep -E "$D $L +${m}x +$nk""x +$nk $v " $f | sed -E 's/.*med_us= *([0-9.]+).*ratio=([0-9.]+).*/\1(\2)/' | tr -d '\n'; echo -n " "; done)
 [ -n "$(echo $line | tr -d ' ')" ] && printf "%-28s %s %s %s\n" $v $D $L "$line"; done; done; done
