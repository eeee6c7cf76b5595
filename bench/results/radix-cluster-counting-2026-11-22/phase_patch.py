# applies phase timestamps to a source tree (argv[1]): radix_cluster.cuh, select_k_cuda.cu, bench/select_k.cu
import sys, os
root = sys.argv[1]
def edit(rel, pairs, append=None):
    p = os.path.join(root, rel); s = open(p).read()
    for old, new in pairs:
        assert old in s, (rel, old[:60]); s = s.replace(old, new, 1)
    if append: s = s.rstrip() + append
    open(p, 'w').write(s)
edit('selection/radix_cluster.cuh', [
('namespace detail_cluster {\n', '''static __device__ unsigned long long phase_ts[4096 * 32];
#define PH(slot) do { if (threadIdx.x == 0) phase_ts[blockIdx.x * 32 + (slot)] = clock64(); } while (0)
#define PHG(slot) do { if (threadIdx.x == 0) { unsigned long long g_; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g_)); phase_ts[blockIdx.x * 32 + (slot)] = g_; } } while (0)
namespace detail_cluster {
'''),
('  cg::cluster_group cluster = cg::this_cluster();', '  PHG(0); PH(1);\n  cg::cluster_group cluster = cg::this_cluster();'),
('''  lo = warp::reduce_min(lo);
  hi = warp::reduce_max(hi);
  if (lane == 0) {
    detail_cluster''', '''  PH(2);
  lo = warp::reduce_min(lo);
  hi = warp::reduce_max(hi);
  if (lane == 0) {
    detail_cluster'''),
('''  __syncthreads();
  cluster.sync();
  if (warp_id == 0) {
    lo = traits::worst;''', '''  __syncthreads();
  cluster.sync();
  PH(3);
  if (warp_id == 0) {
    lo = traits::worst;'''),
('''  __syncthreads();

  // ---- 2. the threshold''', '''  __syncthreads();
  PH(4);

  // ---- 2. the threshold'''),
('''        __syncthreads();
        cluster.sync();
        {''', '''        __syncthreads();
        if (pass < 6) PH(5 + 3 * pass);
        cluster.sync();
        if (pass < 6) PH(6 + 3 * pass);
        {'''),
('''        __syncthreads();
        prefix |= key_type(pick_digit) << shift;''', '''        __syncthreads();
        if (pass < 6) PH(7 + 3 * pass);
        if (threadIdx.x == 0) phase_ts[blockIdx.x * 32 + 28] = pass + 1;
        prefix |= key_type(pick_digit) << shift;'''),
('''    if (tid == 0) { block_total = total; }
  }
  __syncthreads();
  cluster.sync();''', '''    if (tid == 0) { block_total = total; }
  }
  __syncthreads();
  PH(23);
  cluster.sync();'''),
('''      before_eq = eq;
    }
  }
  __syncthreads();''', '''      before_eq = eq;
    }
  }
  __syncthreads();
  PH(24);'''),
('  // block_total (and the histograms) may still be read', '  PH(25);\n  // block_total (and the histograms) may still be read'),
('''  cluster.sync();
#else
  __trap();''', '''  cluster.sync();
  PH(26); PHG(27);
#else
  __trap();'''),
])
edit('src/selection/select_k_cuda.cu', [], append='''

extern "C" void spira_phase_dump(unsigned long long* h, int blocks)
{
  cudaMemcpyFromSymbol(h, spira::selection::phase_ts, sizeof(unsigned long long) * 32 * blocks);
}
extern "C" void spira_phase_clear()
{
  static unsigned long long z[4096 * 32];
  cudaMemcpyToSymbol(spira::selection::phase_ts, z, sizeof(z));
}
''')
