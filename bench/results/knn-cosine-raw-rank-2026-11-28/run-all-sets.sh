#!/bin/bash
# session 25, call 5: the kept cosine raw ranking (68439f4) against main 0e6eaec: knn-resident A/B, one round, every shared set (20newsgroups too)
root=$PWD; t0=$(date +%s)
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 || { echo CONFIG FAILED; tail /tmp/c.log; exit 1; }
( ninja -C build-gpu -j8 bench_knn > /tmp/b.log 2>&1 || echo "CUR BUILD FAILED" ) &
( cmake -S .carry/base -B .carry/base/build-bench "${cfg[@]}" > /tmp/bc.log 2>&1 && ninja -C .carry/base/build-bench -j8 bench_knn > /tmp/bb.log 2>&1 || echo "BASE BUILD FAILED" ) &
wait
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
SPIRA_BENCH_ROUNDS=1 SPIRA_BENCH_SUITES=knn-resident SPIRA_BENCH_SECONDS=3 timeout $(( 215 - ($(date +%s) - t0) )) bench/before_after.sh .carry/base build-gpu $OUT/ab.jsonl .carry/data_small > $OUT/ab-table.txt 2>&1; echo "ab rc $?"
cat $OUT/ab-table.txt | head -40
echo "== total $(( $(date +%s) - t0 )) s"
