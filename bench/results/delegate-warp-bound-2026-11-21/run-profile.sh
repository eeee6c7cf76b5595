#!/usr/bin/env bash
# delegate construction profile (delegate_warp_kernel at alpha 8192 and 65536, n = 2^28)
set -uo pipefail
cd "$(dirname "$0")/../../.."
R=$PWD
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON \
  -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF > /tmp/build.log 2>&1 &&
ninja -C $B -j16 select_vector_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
VB=$B/bench/select_vector_bench
{ echo copy; for a in 2048 8192 65536; do echo "select 268435456 4096 delegate uniform $a"; done; echo "select 268435456 4096 auto uniform"; echo "select 268435456 16 auto uniform"; echo "select 268435456 262144 auto uniform"; } | $VB > $O/base.jsonl 2>&1; cat $O/base.jsonl | cut -c1-250
for a in 8192 65536; do
  echo "select 268435456 4096 delegate uniform $a" > /tmp/c
  ncu --kernel-name regex:delegate_warp_kernel --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats --section SourceCounters --section MemoryWorkloadAnalysis -o /tmp/pd$a -f $VB < /tmp/c > /tmp/ncud.log 2>&1; tail -1 /tmp/ncud.log
  ncu -i /tmp/pd$a.ncu-rep --page details > $O/det_$a.txt 2>&1
  ncu -i /tmp/pd$a.ncu-rep --page source --print-source sass --csv > /tmp/srcd$a.csv 2>&1
  python3 - /tmp/srcd$a.csv > $O/src_$a.txt <<'PY'
import csv,sys
rows=list(csv.reader(open(sys.argv[1])))
hdr=rows[1]; ie=hdr.index('Instructions Executed'); src=hdr.index('Source'); st=hdr.index('Warp Stall Sampling (All Samples)')
tot=sum(int(r[ie] or 0) for r in rows[2:] if len(r)>ie)
print('total warp instructions', tot, 'per element', tot*32/268435456)
c=0
for r in rows[2:]:
    if len(r)<=ie: continue
    n=int(r[ie] or 0)
    if n==0: continue
    c+=n
    print(f"{c/1e6:9.2f}M {n/1e6:8.3f}M {r[st]:>6} {r[src].strip()}")
PY
  head -1 $O/src_$a.txt
  grep -E "Duration|DRAM Through|Memory Through|Compute \(SM\)|Achieved Occ|Theoretical Occ|Registers Per|Warp Cycles Per Issued|Executed Ipc|Block Limit" $O/det_$a.txt
done
echo "done at $(el) s"
