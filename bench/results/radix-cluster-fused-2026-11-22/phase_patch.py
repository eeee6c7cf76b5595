# phase timestamps for the fused-first-digit cluster kernel: radix_cluster.cuh, select_k_cuda.cu (bench from var/phb)
import sys, os
root = sys.argv[1]
def edit(rel, pairs, append=None):
    p = os.path.join(root, rel); s = open(p).read()
    for old, new in pairs:
        assert old in s, (rel, old[:70]); s = s.replace(old, new, 1)
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
  if (lane == 0) {''', '''  PH(2);
  lo = warp::reduce_min(lo);
  hi = warp::reduce_max(hi);
  if (lane == 0) {'''),
('''  cluster.sync();  // the first digit's''', '''  cluster.sync();  PH(3); // the first digit's'''),
('''        __syncthreads();
        cluster.sync();
      }
      pick(pass, remaining);''', '''        __syncthreads();
        if (pass < 6) PH(4 + 3 * pass);
        cluster.sync();
        if (pass < 6) PH(5 + 3 * pass);
      }
      pick(pass, remaining);
      if (pass < 6) PH(6 + 3 * pass);
      if (threadIdx.x == 0) phase_ts[blockIdx.x * 32 + 28] = pass + 1;'''),
('''  __syncthreads();
  const unsigned earlier''', '''  __syncthreads();
  PH(23);
  const unsigned earlier'''),
('''  // Padding of rows shorter than k, by the cluster's first block.''', '''  PH(25);
  // Padding of rows shorter than k, by the cluster's first block.'''),
('''  cluster.barrier_wait(std::move(arrived));''', '''  cluster.barrier_wait(std::move(arrived));
  PH(26); PHG(27);'''),
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
