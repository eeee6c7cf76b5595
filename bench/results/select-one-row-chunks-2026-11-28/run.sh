#!/bin/bash
# One command on the GPU machine: build everything, the one-row cells against CUB's DeviceTopK
# (../select-one-row-2026-11-27/table.py final THIS_FOLDER prints the tables), a CUPTI timeline of
# four cells, then the whole GPU test suite. Run from the repository root with the googletest
# sources, the datasets and the CUB harness (../../../../shared/tools/peers) under .carry/.
root=$PWD; t0=$(date +%s); here=bench/results/select-one-row-chunks-2026-11-28
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_TESTS=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=ON -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data)
cmake -S . -B build-gpu "${cfg[@]}" > /tmp/c.log 2>&1 && ninja -C build-gpu -j16 > /tmp/b.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b.log | head -30; exit 1; }
echo "== built $(( $(date +%s) - t0 )) s"; nvidia-smi --query-gpu=name --format=csv,noheader
B=build-gpu/bench/select_vector_bench; C=.carry/peers/cub_topk_peer; L=$PWD/build-gpu/bench/libspira_cuda_trace.so
{ for n in 1048576 4194304 16777216 67108864; do for k in 16 256 4096 65536 262144; do
    for a in radix auto; do echo "select $n $k $a normal resident int32"; done
    echo "select $n $k radix normal resident int32 pool"
    [ $n -ge 16777216 ] && echo "select $n $k delegate normal resident int32"; done; done
  for k in 16 4096 65536; do for a in radix delegate; do echo "select 33554432 $k $a normal resident int32"; done; done
  for d in uniform adversarial; do for k in 16 4096 65536; do for a in radix delegate; do echo "select 16777216 $k $a $d"; done; done; done
} > /tmp/cases
timeout 150 $B < /tmp/cases > $OUT/final-spira.jsonl 2>&1; echo "bench rc=$?"
for n in 1048576 4194304 16777216 67108864; do for k in 16 256 4096 65536 262144; do timeout 20 $C vector $n $k --warmup 3 --iters 30 | tail -1; done; done > $OUT/final-cub.jsonl 2>&1
python3 bench/results/select-one-row-2026-11-27/table.py final $OUT | tee $OUT/table-final.md
for c in "4194304 16" "4194304 4096" "16777216 16" "16777216 4096"; do
  set -- $c
  echo "select $1 $2 radix normal resident int32" | CUDA_INJECTION64_PATH=$L SPIRA_TRACE_OUT=/tmp/s.tsv timeout 60 $B > /dev/null 2>&1
  python3 bench/common/cuda_trace.py /tmp/s.tsv --anchor radix_vector_write_kernel --nth 2 > $OUT/trace-$1-$2.txt 2>&1; grep -E "device" $OUT/trace-$1-$2.txt | head -8
done
echo "== bench $(( $(date +%s) - t0 )) s"
cd build-gpu && timeout $(( 590 - ($(date +%s) - t0) )) ctest -j8 --timeout 200 -E "host_resources|cli_numerics" > $OUT/ctest.log 2>&1; echo "ctest rc=$?"; tail -15 $OUT/ctest.log
echo "== total $(( $(date +%s) - t0 )) s"
