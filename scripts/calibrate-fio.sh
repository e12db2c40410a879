#!/bin/sh
# fio's own CPU per request, for fio-pmem (seed 002): the seed's fio command line (io_uring,
# buffered 4 KiB random reads, batches of 32 submitted and completed) on a file this host has
# cached, so that no request misses: what remains is fio's work and io_uring's, plus the
# page cache's lookup and copy that the model charges as `cpu_access_ns` + `fd_syscall_ns`.
#
#   sh scripts/calibrate-fio.sh [DIR]     (DIR: a disk file system, not tmpfs; default /tmp)
#
# Prints, per queue depth, the median over 5 runs of 5 s of fio's user and system CPU per
# request (fio's usr_cpu and sys_cpu over its runtime, divided by the requests), the CPU time
# of the whole host per request (/proc/stat's busy time over the run: this also counts
# io_uring's io-wq workers, which fio's figures leave out; run it on an idle host), and the
# same for fio's psync engine (one pread per request) for comparison. The "punted" rows set
# fio's `force_async=1` (IOSQE_ASYNC on every request): each read goes to an io-wq worker, as
# 6.1's io_uring sends every read of a file on pmem (docs/model.md §3, "fio's request"); their
# host CPU less the inline rows' is `io_wq_punt_ns`. Needs fio and python3.
set -eu
dir=${1:-/tmp}
file="$dir/reclaimlab-calibrate-fio.$$"
trap 'rm -f "$file"' EXIT INT TERM
command -v fio >/dev/null || { echo "calibrate-fio: fio is not installed" >&2; exit 1; }
fio --name=prep --filename="$file" --size=1G --rw=write --bs=1M --end_fsync=1 \
    --output=/dev/null
cat "$file" >/dev/null
one() {
    # --invalidate=0: fio would otherwise drop the file's cache before each run.
    fio --name=randread --filename="$file" --size=1G --invalidate=0 --rw=randread --bs=4k \
        --direct=0 --norandommap --time_based --runtime=5 --numjobs=1 \
        --output-format=json "$@"
}
report() {
    label=$1
    shift
    for _ in 1 2 3 4 5; do
        # The host's busy clock ticks (user, nice, system, irq, softirq) around the run.
        before=$(awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat)
        one "$@"
        echo "ticks $before $(awk '/^cpu /{print $2+$3+$4+$7+$8}' /proc/stat)"
    done | python3 -c '
import json, os, statistics, sys
dec = json.JSONDecoder()
text, pos, usr, sys_, host = sys.stdin.read(), 0, [], [], []
tick_ns = 1e9 / os.sysconf("SC_CLK_TCK")
while True:
    while pos < len(text) and text[pos] != "{":
        pos += 1
    if pos >= len(text):
        break
    d, pos = dec.raw_decode(text, pos)
    ticks = text[pos:].split("ticks ", 1)[1].split()[:2]
    j = d["jobs"][0]
    ios = j["read"]["total_ios"]
    ns = j["job_runtime"] * 1e6 / ios
    usr.append(ns * j["usr_cpu"] / 100)
    sys_.append(ns * j["sys_cpu"] / 100)
    host.append((int(ticks[1]) - int(ticks[0])) * tick_ns / ios)
print("%-32s usr %5.0f ns  sys %5.0f ns  host %5.0f ns  per request (median of %d)" % (
    sys.argv[1], statistics.median(usr), statistics.median(sys_), statistics.median(host),
    len(usr)))
' "$label"
}
echo "host kernel: $(cat /proc/sys/kernel/osrelease)"
for depth in 32 64 96 128; do
    report "io_uring, iodepth $depth" --ioengine=io_uring --iodepth=$depth \
        --iodepth_batch_submit=32 --iodepth_batch_complete=32
    report "io_uring, iodepth $depth, punted" --ioengine=io_uring --iodepth=$depth \
        --iodepth_batch_submit=32 --iodepth_batch_complete=32 --force_async=1
done
report "psync (pread)" --ioengine=psync
