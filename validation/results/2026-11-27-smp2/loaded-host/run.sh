#!/bin/sh
# One busy loop pinned to host CPU 1 while 3 boots of buffered-writers-3p 6.1 MGLRU run:
# the two vCPU threads then get unequal host time, as on 2026-11-26 when other jobs ran.
taskset -c 1 sh -c 'while :; do :; done' &
HOG=$!
/work/main/target/release/reclaimlab validate --workload buffered-writers-3p --kernel 6.1,6.12 --mode mglru --boots 3 --cache /work/valcache --out /work/helpers/smp2run/hog
kill $HOG
