#!/bin/bash
# (the device script of this run, kept as it ran; paths under .carry/ are the local copies of the data and googletest)
# call A: base bench_knn (HEAD) + new full build; the whole ctest suite
root=$PWD; t0=$(date +%s); D=$root/.carry/data12
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf .carry/base && mkdir -p .carry/base && tar --exclude='./build*' --exclude=./.carry --exclude=./.gb --exclude=./.gb9 --exclude=./.gb10 -cf - . | tar -xf - -C .carry/base && (cd .carry/base && patch -s -R -p1 < $root/.carry/ab.patch) || { echo "BASE PATCH FAILED"; exit 1; }
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$D)
(cmake -S .carry/base -B build-base "${cfg[@]}" -DSPIRA_BUILD_TESTS=OFF > /tmp/c1.log 2>&1 && ninja -C build-base -j5 bench_knn > /tmp/b1.log 2>&1 || echo "BASE BUILD FAILED") &
cmake -S . -B build-new "${cfg[@]}" -DSPIRA_BUILD_TESTS=ON > /tmp/c3.log 2>&1 && ninja -C build-new -j12 > /tmp/b3.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b3.log | head -30; exit 1; }
wait
echo "== build $(( $(date +%s) - t0 )) s"
build-new/tests/knn/test_knn_fused_paths --gtest_brief=1 2>&1 | tail -30
(cd build-new && OMP_NUM_THREADS=2 timeout 380 ctest -j8 --timeout 300 2>&1 | tail -12) | tee $OUT/ctest.txt
echo "== ctest $(( $(date +%s) - t0 )) s"
