#!/usr/bin/env bash
# racecheck on the cluster kernel, new and old (HEAD 22c44ec) builds side by side
set -uo pipefail
cd "$(dirname "$0")/.."
R=$PWD
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
B=$PWD/build-gpu; O=$OUT/n; mkdir -p $O
Z=()
if [ ! -f /usr/include/zlib.h ]; then
  libz=$(ldconfig -p 2>/dev/null | awk '/libz\.so\.1 .*x86-64/ {print $NF; exit}')
  Z=(-DZLIB_INCLUDE_DIR=$PWD/.carry/zlib -DZLIB_LIBRARY=${libz:-/usr/lib/x86_64-linux-gnu/libz.so.1})
fi
cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_TESTS=OFF -DSPIRA_BUILD_BENCHMARKS=ON \
  -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_BUILD_FUZZERS=OFF "${Z[@]}" > /tmp/build.log 2>&1 &&
ninja -C $B -j16 select_k_bench >> /tmp/build.log 2>&1 || { grep error -A3 /tmp/build.log | head -30; exit 1; }
echo "== built at $(el) s"
cd $B
CMD=$(ninja -t commands CMakeFiles/spira.dir/src/selection/select_k_cuda.cu.o | tail -1)
LK=$(ninja -t commands bench/select_k_bench | tail -1)
V=/tmp/var; n=old; mkdir -p $V/$n
c=${CMD//-MD -MT CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o -MF CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o.d/}
c=${c/-c $R\/src\/selection\/select_k_cuda.cu/-c $R/.carry/var/old/src/selection/select_k_cuda.cu}
c=${c/-o CMakeFiles\/spira.dir\/src\/selection\/select_k_cuda.cu.o/-o $V/$n\/select_k_cuda.cu.o}
c=${c/nvcc /nvcc -I$R/.carry/var/old }
eval "$c" > $V/$n.log 2>&1 && cp libspira.a $V/$n/libspira.a && ar r $V/$n/libspira.a $V/$n/select_k_cuda.cu.o &&
lk=${LK//libspira.a/$V/$n/libspira.a} && eval "${lk//-o bench\/select_k_bench/-o $V/$n/select_k_bench}"
echo "== old at $(el) s"; cd $R
compute-sanitizer --version | tail -n 1
for v in new old; do
  if [ $v = new ]; then KB=$B/bench/select_k_bench; else KB=$V/old/select_k_bench; fi
  for c in "1 65536 33 radix" "200 16384 50 radix"; do
    echo "$c" | timeout 60 compute-sanitizer --tool racecheck --kernel-name kns=radix_cluster_kernel --launch-count 2 --error-exitcode 97 $KB > /tmp/rc.log 2>&1; echo "racecheck $v ($c) rc=$? $(grep -E 'RACECHECK SUMMARY|Internal' /tmp/rc.log | tr '\n' ' ')"
    cat /tmp/rc.log >> $O/racecheck_${v}.log
  done
  echo "1 65536 33 radix" | timeout 60 compute-sanitizer --tool memcheck --kernel-name kns=radix_cluster_kernel --launch-count 2 --error-exitcode 97 $KB > /tmp/mc.log 2>&1; echo "memcheck $v rc=$? $(grep -E 'ERROR SUMMARY|Internal' /tmp/mc.log | tr '\n' ' ')"
  echo "1 65536 33 radix" | timeout 60 compute-sanitizer --tool synccheck --kernel-name kns=radix_cluster_kernel --launch-count 2 --error-exitcode 97 $KB > /tmp/sc.log 2>&1; echo "synccheck $v rc=$? $(grep -E 'ERROR SUMMARY|Internal' /tmp/sc.log | tr '\n' ' ')"
done
echo "done at $(el) s"
