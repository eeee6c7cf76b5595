#!/usr/bin/env bash
# 2^28, k = 2^18 (alpha 512): per-kernel GPU times, and the tile kernel's profile
set -uo pipefail
cd "$(dirname "$0")/../../.."
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_BUILD_CLI=OFF -DCMAKE_CUDA_FLAGS=-lineinfo > /tmp/build.log 2>&1 && ninja -C $B -j16 select_vector_bench > /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
VB=$B/bench/select_vector_bench
for c in "268435456 262144 delegate uniform" "268435456 262144 delegate adversarial"; do
  echo "select $c" > /tmp/c
  $VB < /tmp/c | cut -c1-200
  ncu --clock-control none --metrics gpu__time_duration.sum --csv --print-units base $VB < /tmp/c > /tmp/ncu.csv 2>/dev/null
  python3 - "$c" /tmp/ncu.csv <<'PY' | tee -a $O/ncu.txt
import csv,sys,collections
rows=[r for r in csv.reader(l for l in open(sys.argv[2]) if l.startswith('"'))]
h=rows[0]; kn=h.index('Kernel Name'); mv=h.index('Metric Value')
d=collections.OrderedDict()
for r in rows[1:]:
    name=r[kn].split('(')[0][-60:]
    d.setdefault(name,[]).append(float(r[mv].replace(',','')))
print('==',sys.argv[1]); tot=0; calls=13
for k,v in d.items():
    if 'fill' in k: continue
    med=sorted(v)[len(v)//2]; tot+=med*len(v)/calls
    print(f"  {k:60s} n={len(v):4d} per-call={len(v)/calls:5.2f} median_us={med/1000:8.2f}")
print(f"  sum per call: {tot/1000:.2f} us")
PY
done
echo "select 268435456 262144 delegate uniform" > /tmp/c
ncu --clock-control none --kernel-name regex:delegate_tile_kernel --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis -o /tmp/pt -f $VB < /tmp/c > /dev/null 2>&1
ncu -i /tmp/pt.ncu-rep --page details > $O/det_tile.txt 2>&1
grep -E "Duration|DRAM Through|Memory Through|Compute \(SM\)|Achieved Occ|Theoretical Occ|Registers Per|Warp Cycles Per Issued|Executed Ipc|Block Limit|Executed Instructions  " $O/det_tile.txt
