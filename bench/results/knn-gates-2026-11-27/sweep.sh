#!/bin/bash
# (the device script of this run, kept as it ran; paths under .carry/ are the local copies of the data and googletest)
# call 1: base bench_knn (HEAD) + new (with env gate overrides) full build; knn tests; gate sweep
root=$PWD; t0=$(date +%s); D=$root/.carry/data12
nvidia-smi --query-gpu=name --format=csv,noheader
rm -rf .carry/base && mkdir -p .carry/base && tar --exclude='./build*' --exclude=./.carry --exclude=./.gb --exclude=./.gb9 --exclude=./.gb10 -cf - . | tar -xf - -C .carry/base && (cd .carry/base && patch -s -R -p1 < $root/.carry/ab.patch) || { echo "BASE PATCH FAILED"; exit 1; }
patch -s -p1 < .carry/exp.patch || { echo "EXP PATCH FAILED"; exit 1; }
cfg=(-G Ninja -DCMAKE_BUILD_TYPE=Release -DSPIRA_ENABLE_CUDA=ON -DSPIRA_BUILD_BENCHMARKS=ON -DSPIRA_BUILD_EXAMPLES=OFF -DSPIRA_GTEST_SOURCE_DIR=$root/.carry/googletest -DSPIRA_DATA_DIR=$D)
(cmake -S .carry/base -B build-base "${cfg[@]}" -DSPIRA_BUILD_TESTS=OFF > /tmp/c1.log 2>&1 && ninja -C build-base -j5 bench_knn > /tmp/b1.log 2>&1 || echo "BASE BUILD FAILED") &
cmake -S . -B build-new "${cfg[@]}" -DSPIRA_BUILD_TESTS=ON > /tmp/c3.log 2>&1 && ninja -C build-new -j12 > /tmp/b3.log 2>&1 || { echo "BUILD FAILED"; grep -E "error|FAILED" -A3 /tmp/b3.log | head -30; exit 1; }
wait
echo "== build $(( $(date +%s) - t0 )) s"
for t in knn/test_knn_fused_paths knn/test_knn_fused semiring/test_semiring_zero_self knn/test_knn_device knn/test_knn_semiring_cuda knn/test_knn; do
  echo "-- $t: $(timeout 120 build-new/tests/$t --gtest_brief=1 2>&1 | tail -6 | tr '\n' ' ')"
done
echo "== tests $(( $(date +%s) - t0 )) s"
sets="sec-edgar-names:sec-edgar-names/char3gram_tfidf.mtx.gz uci-bow-kos:uci-bow-kos/docword.kos.mtx.gz snap-email-enron:snap-email-enron/email-Enron.txt.gz suitesparse-1138_bus:suitesparse-1138_bus/1138_bus.mtx movielens:movielens-latest-small/ratings.mtx.gz pbmc3k:pbmc3k/matrix.mtx.gz:transpose"
one() { # build label byp skip metrics
  local b=$1 lab=$2 byp=$3 skip=$4 m=$5
  for d in $sets; do
    label=${d%%:*}; rest=${d#*:}; path=${rest%%:*}; args=(); [ "$rest" != "$path" ] && args+=(--transpose)
    SPIRA_X_BYP=$byp SPIRA_X_SKIP=$skip timeout 60 build-$b/bench/bench_knn --file $D/$path "${args[@]}" --label $label --backend cuda --metrics $m --repeats 15 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$lab\", /" >> $OUT/sweep.jsonl
  done
}
one base base 8 0 cosine,manhattan,inner_product
one new new 8 2 cosine,manhattan,inner_product
for g in "8 1" "8 4" "8 8" "8 0" "4 2" "16 2" "-1 2" "-1 -1"; do set -- $g; one new "new-$1-$2" $1 $2 cosine,inner_product; done
one base base2 8 0 cosine,inner_product
one new new2 8 2 cosine,inner_product
echo "== sweep $(( $(date +%s) - t0 )) s"
for b in "base base 8 0" "new new 8 2" "new new-8-8 8 8" "new new--1-2 -1 2" "new new-8-0 8 0"; do set -- $b
  SPIRA_X_BYP=$3 SPIRA_X_SKIP=$4 timeout 100 build-$1/bench/bench_knn --synthetic sec-edgar --label syn-663k --backend cuda --metrics cosine --repeats 2 --resident 2>/dev/null | sed "s/^{/{\"build\": \"$2\", /" >> $OUT/sweep.jsonl
done
echo "== total $(( $(date +%s) - t0 )) s"
python3 - $OUT/sweep.jsonl <<'PY'
import json,sys
from collections import defaultdict
t={}; order=[]; builds=[]
for l in open(sys.argv[1]):
    r=json.loads(l); k=(r['dataset'],r['metric'])
    if k not in order: order.append(k)
    if r['build'] not in builds: builds.append(r['build'])
    t[k+(r['build'],)]=r.get('resident_median_ms') or r['median_ms']
print(f"{'':32s}"+''.join(f"{b:>10s}" for b in builds))
for k in order:
    print(f"{k[0]:20s}{k[1]:12s}"+''.join(f"{t[k+(b,)]:10.3f}" if k+(b,) in t else f"{'-':>10s}" for b in builds))
PY
