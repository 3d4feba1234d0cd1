X=.devcarry/explore/explore; $X tf32 2>&1 | grep RESULT   # e-tf32; and: $X micro   # c-ceilings
