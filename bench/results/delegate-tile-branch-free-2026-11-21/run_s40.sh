#!/usr/bin/env bash
# fixed cost of delegate / radix single-vector calls: event vs host enqueue, and ncu per-kernel durations
set -uo pipefail
cd "$(dirname "$0")/../../.."
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
cp .carry/diag/select_vector.cu bench/select_vector.cu
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON \
  -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF > /tmp/build.log 2>&1 &&
ninja -C $B -j16 select_vector_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
VB=$B/bench/select_vector_bench
{ for n in 1048576 4194304 16777216 67108864; do for a in delegate radix; do echo "select $n 256 $a uniform"; done; done; echo "select 67108864 65536 delegate uniform"; } | $VB 2>&1 | grep host | tee $O/host.jsonl
echo "== host at $(el) s"
for c in "1048576 256 radix" "1048576 256 delegate" "16777216 256 delegate" "67108864 256 delegate" "67108864 65536 delegate"; do
  echo "select $c uniform" > /tmp/c
  ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base $VB < /tmp/c > /tmp/ncu.csv 2>/dev/null
  python3 - "$c" /tmp/ncu.csv <<'PY' | tee -a $O/ncu.txt
import csv,sys,collections
rows=[r for r in csv.reader(l for l in open(sys.argv[2]) if l.startswith('"'))]
h=rows[0]; kn=h.index('Kernel Name'); mv=h.index('Metric Value')
d=collections.OrderedDict()
for r in rows[1:]:
    name=r[kn].split('(')[0].split('<')[0][-40:]
    v=float(r[mv].replace(',',''))
    d.setdefault(name,[]).append(v)
print('==',sys.argv[1])
calls=63
tot=0
for k,v in d.items():
    if 'fill' in k: continue
    med=sorted(v)[len(v)//2]; tot+=med*len(v)/63
    print(f"  {k:42s} n={len(v):5d} per-call={len(v)/63:5.2f} median_us={med/1000:8.2f}")
print(f"  sum of medians x count per call: {tot/1000:.2f} us")
PY
done
echo "done at $(el) s"
