#!/bin/bash
# A/B: base (HEAD) vs current (working tree) for select_k: build both, tests on current, bench alternating
root=$PWD; t0=$(date +%s)
nvidia-smi --query-gpu=name --format=csv,noheader
ex="--exclude=./build* --exclude=./.carry"
if [ ! -x build-base/bench/select_k_bench ]; then
rm -rf .carry/base && mkdir -p .carry/base && tar $ex -cf - . | tar -xf - -C .carry/base && (cd .carry/base && patch -s -R -p1 < $root/.carry/ab.patch) || { echo "BASE PATCH FAILED"; exit 1; }
fi
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_CLI=OFF -DSPIRA_BUILD_FUZZERS=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$root/.carry/data)
(cmake -S .carry/base -B build-base "${cfg[@]}" -DSPIRA_BUILD_TESTS=OFF > /tmp/c1.log 2>&1 && ninja -C build-base -j8 select_k_bench > /tmp/b1.log 2>&1 || echo "BASE BUILD FAILED") &
cmake -S . -B build-gpu "${cfg[@]}" -DSPIRA_BUILD_TESTS=ON > /tmp/c3.log 2>&1 && ninja -C build-gpu -j8 test_selection_select_k select_k_bench > /tmp/b3.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b3.log | head -30; exit 1; }
wait
echo "== build $(( $(date +%s) - t0 )) s"
if false; then
  timeout 400 build-gpu/tests/selection/test_selection_select_k --gtest_brief=1 --gtest_filter='*cuda*' 2>&1 | tail -25
  echo "== tests $(( $(date +%s) - t0 )) s"
  exit 0
fi
timeout 200 build-gpu/tests/selection/test_selection_select_k --gtest_brief=1 --gtest_filter='*cuda*:-*cuda.long_rows:*cuda.special_and_adversarial_long_rows:*cuda.ragged_csr_long_rows:*beyond_the_cluster_form' 2>&1 | tail -3
echo "== tests $(( $(date +%s) - t0 )) s"
timeout 100 compute-sanitizer --tool memcheck --error-exitcode 97 build-gpu/tests/selection/test_selection_select_k --gtest_brief=1 --gtest_filter='select_k_test/cuda.small_k*:select_k_test/cuda.hand*' 2>&1 | tail -2; echo "memcheck rc ${PIPESTATUS[0]}"
printf '64 2048 16 binary_search normal\n64 1024 32 binary_search normal\n64 2048 5 binary_search uniform\n64 256 256 binary_search normal\n' | timeout 120 compute-sanitizer --tool racecheck --error-exitcode 97 build-gpu/bench/select_k_bench 2>&1 | tail -2; echo "racecheck bench rc ${PIPESTATUS[1]}"
timeout 60 compute-sanitizer --tool racecheck --error-exitcode 97 build-gpu/tests/selection/test_selection_select_k --gtest_brief=1 --gtest_filter='select_k_test/cuda.hand*:select_k_test/cuda.strided*' 2>&1 | tail -2; echo "racecheck tests rc ${PIPESTATUS[0]}"
echo "== sanitizers $(( $(date +%s) - t0 )) s"
cases() {
for len in 512 768 1024 2048; do for k in 1 5 16 32 33 64; do echo "16384 $len $k auto normal"; done; done
for k in 16 32; do echo "65536 2048 $k auto normal"; echo "262144 2048 $k auto normal"; done
for c in "16384 256 16" "16384 256 256" "65536 256 256" "262144 256 256" "1048576 256 256" "16384 768 768"; do echo "$c auto normal"; done
for c in "16384 256 256" "65536 256 256" "262144 256 256" "1048576 256 256" "16384 2048 16" "16384 2048 32" "65536 2048 16" "65536 2048 32"; do echo "$c auto normal resident int32"; done
}
for round in 1 2 3; do for b in base gpu; do
  cases | timeout 100 build-$b/bench/select_k_bench 2>/dev/null | sed "s/^{/{\"build\": \"$b\", \"round\": $round, /" >> $OUT/ab.jsonl
done; done
echo "== ab $(( $(date +%s) - t0 )) s"
C=$root/.carry/peers/cub_topk_peer
for c in "16384 256 256" "65536 256 256" "262144 256 256" "1048576 256 256" "16384 2048 16" "16384 2048 32" "65536 2048 16" "65536 2048 32" "262144 2048 16" "262144 2048 32"; do
  timeout 60 $C batched $c --warmup 3 --iters 50 2>&1 | tail -1 >> $OUT/cub.jsonl
done
echo "== cub $(( $(date +%s) - t0 )) s"
left=$(( 585 - ($(date +%s) - t0) ))
PYTHONUNBUFFERED=1 timeout $left python3 bench/select_k/select_k.py --bench build-gpu/bench/select_k_bench --out $OUT --no-graphs --cub $C > $OUT/select_k.log 2>&1; echo "select_k.py rc $?"
tail -12 $OUT/select_k.log
echo "== total $(( $(date +%s) - t0 )) s"
