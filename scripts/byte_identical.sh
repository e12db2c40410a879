#!/usr/bin/env bash
# Runs every scenario under the kernel policies (and a few +/- switch, @walk, --with and
# lru_gen variants) with BIN and writes one JSON (or text) output per run into DIR.
# Compare two such directories with `diff -r`: the behaviour table must not move any result.
#   scripts/byte_identical.sh BIN DIR
set -u
bin=$1
out=$2
mkdir -p "$out"
policies=(classic:6.1 classic:6.12 mglru:6.1 mglru:6.12 mglru:7.1 mglru:7.2 mglru:7.2.13
  mglru:7.1+restructure-reclaim-loop mglru:7.2-unify-writeback-throttling
  mglru:7.2+fg-promotion mglru:7.2.13-second-access-promotion
  mglru:7.1+simplify-dirty-writeback+remove-unqueued-dirty
  classic:6.12@heat mglru:7.2@iter mglru:6.12@heat mglru:6.1@heat)
scenarios=$("$bin" scenarios | awk '{print $1}')
n=0
for s in $scenarios; do
  for p in "${policies[@]}"; do
    "$bin" run "$s" --policy "$p" --seed 1 --json >"$out/$s.$p.json" 2>&1
    n=$((n + 1))
  done
  # --kernel, --with/--without, and the era-dependent lru_gen output.
  "$bin" run "$s" --policy mglru --kernel 6.12 --seed 2 --json >"$out/$s.kernel-6.12.json" 2>&1
  "$bin" run "$s" --policy mglru:7.1 --with avoid-type-fallback,smaller-reclaim-batch \
    --seed 1 --json >"$out/$s.with.json" 2>&1
  "$bin" run "$s" --policy mglru:7.2 --without dont-abort-after-aging --seed 1 \
    --json >"$out/$s.without.json" 2>&1
  for k in 6.1 6.12 7.2; do
    "$bin" run "$s" --policy mglru:$k --seed 1 --lru-gen-full --enabled 0x3 \
      --lru-gen-cmd "50:+ 0 0 3 1 1" --lru-gen-cmd "80:- 0 0 1 100 8" >"$out/$s.lrugen-$k.txt" 2>&1
    "$bin" run "$s" --policy mglru:$k --seed 1 --enabled 0 --json >"$out/$s.core-off-$k.json" 2>&1
    # lru_gen writes to the root memcg (id 1) that run: aging, eviction, sampling.
    "$bin" run "$s" --policy mglru:$k --seed 1 --lru-gen-sample-ms 5 --lru-gen-cmd "10:+ 1 0 3" \
      --lru-gen-cmd "15:+ 1 0 4 0 1" --lru-gen-cmd "20:- 1 0 2 60 64" \
      --lru-gen-cmd "25:- 1 0 3 0 4096" --json >"$out/$s.lrugen-cmds-$k.json" 2>&1
  done
  n=$((n + 12))
done
echo "$n runs written to $out"
