// Event-to-event floors for the cluster radix design: empty launches, load-only, load + N cluster barriers.
#include <cuda_runtime.h>
#include <cooperative_groups.h>
#include <cstdio>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;
__global__ void plain(int* p) { if (p && threadIdx.x == 0) p[blockIdx.x] = 1; }
template <int T>
__global__ void __launch_bounds__(T, 1024 / T) clus(const float* in, int per_block, int syncs, int* out) {
  extern __shared__ float s[];
  cg::cluster_group c = cg::this_cluster();
  const float* src = in + (long long)blockIdx.x * per_block;
  float acc = 0;
  if (in && syncs >= 0) {
    for (int i = threadIdx.x; i < per_block; i += T) { float v = src[i]; s[i] = v; acc += v; }
  } else if (in) {  // float4, 16 loads in flight per thread
    syncs = -syncs - 1;
    const float4* s4 = reinterpret_cast<const float4*>(src);
    float4* d4 = reinterpret_cast<float4*>(s);
    for (int base = threadIdx.x; base < per_block / 4; base += T * 4) {
      float4 v[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) { int i = base + j * T; v[j] = i < per_block / 4 ? s4[i] : make_float4(0, 0, 0, 0); }
#pragma unroll
      for (int j = 0; j < 4; ++j) { int i = base + j * T; if (i < per_block / 4) { d4[i] = v[j]; acc += v[j].x + v[j].w; } }
    }
  }
  for (int i = 0; i < syncs; ++i) { __syncthreads(); c.sync(); acc += c.map_shared_rank(s, (c.block_rank() + 1) % c.num_blocks())[threadIdx.x]; }
  if (acc == 12345.f) out[0] = 1;
}
template <class F> double med(F f) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 5; ++i) f(i);
  cudaDeviceSynchronize();
  std::vector<float> v;
  for (int i = 0; i < 50; ++i) { cudaEventRecord(a); f(i); cudaEventRecord(b); cudaEventSynchronize(b); float x; cudaEventElapsedTime(&x, a, b); v.push_back(x); }
  std::sort(v.begin(), v.end()); return v[v.size() / 2] * 1000;
}
template <int T> void run(const char* name, float* in, int rows, int csize, int per_row, int syncs, int* out) {
  auto k = clus<T>;
  int per_block = per_row / csize;
  cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 64 * 1024);
  cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
  cudaLaunchConfig_t cfg{}; cfg.gridDim = dim3(rows * csize); cfg.blockDim = dim3(T); cfg.dynamicSmemBytes = per_block * 4;
  cudaLaunchAttribute a{}; a.id = cudaLaunchAttributeClusterDimension; a.val.clusterDim.x = csize; a.val.clusterDim.y = 1; a.val.clusterDim.z = 1;
  cfg.attrs = &a; cfg.numAttrs = 1;
  const int copies = 16;
  if (rows * csize > 2 * 132 && T == 1024) return;
  double us = med([&](int i) { cudaLaunchKernelEx(&cfg, k, in ? in + (long long)(i % copies) * rows * per_row : nullptr, per_block, syncs, out); });
  cudaError_t e = cudaGetLastError();
  if (syncs < 0) syncs = -syncs - 1;
  printf("%-28s T=%4d rows=%3d cluster=%2d per_row=%7d syncs=%d : %7.2f us %s\n", name, T, rows, csize, per_row, syncs, us, e ? cudaGetErrorString(e) : "");
}
int main() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  int* out; cudaMalloc(&out, 1 << 20);
  float* in; size_t n = size_t(64) * 131072 * 16; cudaMalloc(&in, n * 4); cudaMemset(in, 0, n * 4);
  printf("plain empty 1 block: %.2f us\n", med([&](int) { plain<<<1, 32>>>(out); }));
  printf("plain empty 128 blocks: %.2f us\n", med([&](int) { plain<<<128, 1024>>>(out); }));
  for (int rows : {1, 16, 64}) {
    run<1024>("cluster empty", nullptr, rows, 8, 131072, 0, out);
    run<512>("cluster empty", nullptr, rows, 8, 131072, 0, out);
    run<1024>("cluster load", in, rows, 8, 131072, 0, out);
    run<512>("cluster load", in, rows, 8, 131072, 0, out);
    run<512>("cluster load", in, rows, 16, 131072, 0, out);
    run<1024>("cluster load+4 sync", in, rows, 8, 131072, 4, out);
    run<512>("cluster load+4 sync", in, rows, 8, 131072, 4, out);
    run<512>("cluster load+8 sync", in, rows, 8, 131072, 8, out);
    run<1024>("cluster load4", in, rows, 8, 131072, -1, out);
    run<512>("cluster load4", in, rows, 8, 131072, -1, out);
    run<512>("cluster load4+4 sync", in, rows, 8, 131072, -5, out);
  }
}
