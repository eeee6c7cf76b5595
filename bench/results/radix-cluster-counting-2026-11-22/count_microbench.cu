// microbenchmark: ways to count 16 keys per thread (1024 threads, 16384 keys in smem) into a 256-bin
// shared histogram; one block per SM, cycles per block (clock64), median over blocks
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
constexpr int T = 1024, ITEMS = 16, N = T * ITEMS, BINS = 256;
__device__ __forceinline__ unsigned lanes_below() { unsigned m; asm("mov.u32 %0, %%lanemask_lt;" : "=r"(m)); return m; }
__device__ __forceinline__ void count_vote(unsigned* hist, unsigned bin, bool active) {
  const unsigned act = __ballot_sync(~0u, active);
  if (act == 0) return;
  const int leader = __ffs(act) - 1;
  const unsigned first = __shfl_sync(~0u, bin, leader);
  if (__all_sync(~0u, !active || bin == first)) {
    if ((threadIdx.x & 31) == leader) atomicAdd(&hist[first], (unsigned)__popc(act));
  } else if (active) atomicAdd(&hist[bin], 1u);
}
__device__ __forceinline__ void count_vote_bf(unsigned* hist, unsigned bin, bool active) {
  // branch-free form: lane 0's bin as the candidate; all agree -> one atomic by the first active lane
  const unsigned act = __ballot_sync(~0u, active);
  const unsigned first = __shfl_sync(~0u, bin, 0);
  const bool same = __all_sync(~0u, !active || bin == first);
  const bool lead = (act & lanes_below()) == 0;
  const unsigned add = same ? (lead ? __popc(act) : 0u) : 1u;
  if (active && add) atomicAdd(&hist[bin], add);
}
template <int S>
__global__ void __launch_bounds__(T, 1) kern(const unsigned* in, int shift, unsigned mask, unsigned top, unsigned prefix, long long* cyc, unsigned* out) {
  extern __shared__ unsigned smem[];
  unsigned* keys = smem;
  unsigned* hist = smem + N;             // BINS, or 32 * BINS for S == 4
  const int tid = threadIdx.x, warp = tid / 32;
  for (int i = tid; i < N; i += T) keys[i] = in[blockIdx.x * N + i];
  for (int i = tid; i < 64 * BINS; i += T) hist[i] = 0;
  __syncthreads();
  long long t0 = clock64();
  for (int rep = 0; rep < 4; ++rep) {
  if (S == 0) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) { const unsigned k = keys[j * T + tid]; count_vote(hist, (k >> shift) & mask, (k >> top) == prefix); }
  } else if (S == 1) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) { const unsigned k = keys[j * T + tid]; if ((k >> top) == prefix) atomicAdd(&hist[(k >> shift) & mask], 1u); }
  } else if (S == 2) {
#pragma unroll
    for (int g = 0; g < ITEMS; g += 8) {
      unsigned kv[8];
#pragma unroll
      for (int j = 0; j < 8; ++j) kv[j] = keys[(g + j) * T + tid];
#pragma unroll
      for (int j = 0; j < 8; ++j) count_vote(hist, (kv[j] >> shift) & mask, (kv[j] >> top) == prefix);
    }
  } else if (S == 3) {
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) { const unsigned k = keys[j * T + tid]; count_vote_bf(hist, (k >> shift) & mask, (k >> top) == prefix); }
  } else if (S == 4) {
    unsigned* wh = hist + warp * BINS;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) { const unsigned k = keys[j * T + tid]; if ((k >> top) == prefix) atomicAdd(&wh[(k >> shift) & mask], 1u); }
  } else if (S == 5) {  // rank loop of the write phase: 2 ballots per item
    
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) {
      const unsigned k = keys[j * T + tid];
      const unsigned a = __ballot_sync(~0u, k < prefix), b = __ballot_sync(~0u, k == prefix);
      if ((tid & 31) == 0) hist[j * 32 + warp] = (__popc(b) << 16) | __popc(a);
    }
  } else if (S == 6) {  // warp-private histograms, keys spread so that each lane of a warp has its own copy for the first 8 lanes? (2 copies per warp)
    unsigned* wh = hist + (warp * 2 + ((tid >> 4) & 1)) * BINS;
#pragma unroll
    for (int j = 0; j < ITEMS; ++j) { const unsigned k = keys[j * T + tid]; if ((k >> top) == prefix) atomicAdd(&wh[((k >> shift) & mask)], 1u); }
  }
  __syncthreads();
  }
  long long t1 = clock64();
  if (tid == 0) cyc[blockIdx.x] = (t1 - t0) / 4;
  if (tid < BINS) out[blockIdx.x * BINS + tid] = hist[tid];
}
unsigned key_of(float v) { unsigned b; memcpy(&b, &v, 4); return b ^ 0x7fffffffu; }  // largest, positive
int main() {
  int sms = 132; const int blocks = sms;
  std::vector<unsigned> h((size_t)blocks * N);
  unsigned* d; cudaMalloc(&d, h.size() * 4); long long* cyc; cudaMalloc(&cyc, blocks * 8); unsigned* out; cudaMalloc(&out, blocks * BINS * 4 * 32);
  uint64_t x = 88172645463325252ull;
  auto rnd = [&]() { x ^= x << 13; x ^= x >> 7; x ^= x << 17; return x; };
  for (int dist = 0; dist < 3; ++dist) {
    for (auto& v : h) {
      float f = dist == 0 ? float((rnd() >> 40) & 0xffffff) / 16777216.0f + 1e-7f
              : dist == 1 ? 1.0f + float((rnd() >> 40) & 0xff) * (1.0f / 65536)   // peaked: 256 values
                          : float((rnd() >> 40) & 0xffffff) / 16777216.0f + 1e-7f;
      v = key_of(f);
    }
    cudaMemcpy(d, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
    // pass 0 (top=29 shift 21), pass 1 (prefix matching ~12.5%)
    struct P { const char* name; int shift; unsigned top, prefix; } ps[2] = {{"pass0", 21, 29, 0}, {"pass1", 13, 21, 0}};
    // prefix for pass1: the bin of the largest keys (smallest key): key >> 21 == min over data
    unsigned mn = *std::min_element(h.begin(), h.end());
    ps[1].prefix = mn >> 21;
    ps[0].prefix = mn >> 29;
    for (auto& p : ps) {
      for (int s = 0; s <= 6; ++s) {
        const size_t smem = (N + 64 * BINS) * 4;
        auto run = [&](auto k) { cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem); k<<<blocks, T, smem>>>(d, p.shift, 0xffu, p.top, p.prefix, cyc, out); };
        switch (s) { case 0: run(kern<0>); break; case 1: run(kern<1>); break; case 2: run(kern<2>); break; case 3: run(kern<3>); break; case 4: run(kern<4>); break; case 5: run(kern<5>); break; case 6: run(kern<6>); break; }
        cudaError_t e = cudaDeviceSynchronize(); if (e) { printf("err %s\n", cudaGetErrorString(e)); return 1; }
        std::vector<long long> c(blocks); cudaMemcpy(c.data(), cyc, blocks * 8, cudaMemcpyDeviceToHost);
        std::sort(c.begin(), c.end());
        printf("dist %s %s S%d: median %lld cycles (max %lld)\n", dist == 0 ? "uniform" : dist == 1 ? "peaked" : "uniform2", p.name, s, c[blocks / 2], c.back());
      }
    }
  }
}
