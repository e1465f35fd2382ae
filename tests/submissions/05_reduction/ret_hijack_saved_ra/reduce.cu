// Lab 05: parallel reduction. THIS is the file you edit (and the only one the grader takes).
//
// out[0] = in[0] + in[1] + ... + in[n - 1], for float and int, any n >= 1. Four versions:
// v1..v3 follow the lecture (a tree in shared memory, one launch per level of partial sums),
// v4 is your fastest. Read README.md in this folder first. Build and test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 05  (your grade)
#include "reduce.h"

#include <cstdint>

namespace {

constexpr unsigned kBlock = 256;  // v1..v3: threads per block = elements per block per level
static_assert((kBlock & (kBlock - 1)) == 0, "v1..v3 halve the block: a power of two");

}  // namespace

// ---------------------------------------------------------------------------------------------
// v1..v3: one launch per level. Each block loads kBlock consecutive elements of its input into
// shared memory (zeros past n), reduces them to one value and writes it to out[blockIdx.x].
// The shared array has a fixed size: `extern __shared__ T sdata[]` clashes between the float and
// int instantiations of a template.
// ---------------------------------------------------------------------------------------------

// reduce_v1_interleaved_kernel: a tree in shared memory; at step s the threads whose index is a
// multiple of 2s add the element s to their right.
// Memory traffic: one global read per element and one write per block; log2(kBlock) rounds of
// shared-memory reads and writes.
// Known limit: `tid % (2*s)` keeps a scattered few threads of every warp busy (divergence).
template <typename T>
__global__ void reduce_v1_interleaved_kernel(const T* __restrict__ in, T* __restrict__ out,
                                             size_t n) {
  __shared__ T sdata[kBlock];
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. Load: thread tid = threadIdx.x of block b stores in[b * blockDim.x + tid] into sdata[tid],
  //    or 0 when that index is >= n (the last block is partial). Compute the index in size_t:
  //    n can exceed 2^31.
  // 2. Barrier: no thread may start adding before every thread has stored its element.
  // 3. The tree: for s = 1, 2, 4, ... while s < blockDim.x: if tid is a multiple of 2*s (and
  //    tid + s is still inside the block), sdata[tid] += sdata[tid + s]. Put a barrier INSIDE
  //    the loop, after the if: the next step reads what this step wrote. (The lecture's first
  //    listing puts it after the loop: that is a race.)
  // 4. Thread 0 writes the block's sum, sdata[0], to out[blockIdx.x].
  (void)in; (void)out; (void)n; (void)sdata;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

// reduce_v2_strided_kernel: the same tree, but thread t works on element 2*s*t, so the active
// threads are the first kBlock/(2s): whole warps are busy or idle, no divergence inside a warp.
// Memory traffic: as v1.
// Known limit: the addresses 2*s*t are 2s words apart: the threads of a warp collide on the
// same shared-memory banks.
template <typename T>
__global__ void reduce_v2_strided_kernel(const T* __restrict__ in, T* __restrict__ out,
                                         size_t n) {
  __shared__ T sdata[kBlock];
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Load and barrier as in v1. Then, for s = 1, 2, 4, ... while s < blockDim.x:
  //   index = 2 * s * tid;  if index + s < blockDim.x: sdata[index] += sdata[index + s];
  //   barrier.
  // Thread 0 writes sdata[0] to out[blockIdx.x].
  (void)in; (void)out; (void)n; (void)sdata;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

// reduce_v3_sequential_kernel: the tree folded in halves: at step s the first s threads add
// element tid + s to element tid, so a warp reads 32 consecutive words (no bank conflicts).
// Memory traffic: as v1.
// Known limit: half the threads are idle from the first step on, the last steps run on one
// warp with a full barrier each, and every level is a launch of its own.
template <typename T>
__global__ void reduce_v3_sequential_kernel(const T* __restrict__ in, T* __restrict__ out,
                                            size_t n) {
  __shared__ T sdata[kBlock];
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Load and barrier as in v1. Then, for s = blockDim.x / 2 down to 1 (s >>= 1):
  //   if tid < s: sdata[tid] += sdata[tid + s];   barrier.
  // Thread 0 writes sdata[0] to out[blockIdx.x].
  (void)in; (void)out; (void)n; (void)sdata;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

namespace {

// Kernel decomposition, shared by v1..v3: launches `kernel` level after level until one value
// is left, in out[0]. Every launch goes on `stream`; nothing here waits.
template <typename T>
void reduce_in_levels(void (*kernel)(const T*, T*, size_t), const T* in, T* out, size_t n,
                      T* workspace, cudaStream_t stream) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Keep the current level's input (`in` at first), its element count (n at first) and where
  // its partial sums go (the start of `workspace` at first). While more than kBlock elements
  // are left:
  //   blocks = ceil(count / kBlock);
  //   kernel<<<blocks, kBlock, 0, stream>>>(level_in, level_out, count);
  //   the partials just written become the next level's input (count = blocks), and the next
  //   level writes right AFTER them in workspace (level_out += blocks), never over them.
  // The last level (count <= kBlock) is one block writing straight into out:
  //   kernel<<<1, kBlock, 0, stream>>>(level_in, out, count);
  // The workspace holds garbage on entry: only read partials that this call wrote.
  (void)kernel; (void)in; (void)out; (void)n; (void)workspace; (void)stream;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

}  // namespace

template <typename T>
void reduce_v1_interleaved(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(reduce_v1_interleaved_kernel<T>, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v2_strided(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(reduce_v2_strided_kernel<T>, in, out, n, workspace, stream);
}

template <typename T>
void reduce_v3_sequential(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  reduce_in_levels<T>(reduce_v3_sequential_kernel<T>, in, out, n, workspace, stream);
}

// ---------------------------------------------------------------------------------------------
// v4: as fast as you can make it. The plan the README walks through: two launches for any n.
// Launch 1: a grid that just fills the GPU walks the whole input, each thread summing many
// elements in registers; one partial per block goes to workspace. Launch 2: one block of the
// same kernel sums those partials into out[0]. You may change the constants and helpers below.
// ---------------------------------------------------------------------------------------------

namespace {

constexpr unsigned kV4Threads = 512;     // threads per block (16 warps)
constexpr unsigned kV4Unroll = 4;        // independent 16-byte loads in flight per thread
constexpr unsigned kV4MaxBlocks = 1024;  // partials fit in workspace for every n (>= 1024)
constexpr unsigned kWarp = 32;
static_assert(kV4Threads % kWarp == 0 && kV4Threads / kWarp <= kWarp,
              "the block's warp sums are reduced by one warp");
static_assert(kV4Unroll >= 1 && kV4MaxBlocks <= 1024,
              "workspace holds at least 1024 elements for any n");

// Four elements in one 16-byte load: Vec4<float>::type is float4, Vec4<int>::type is int4.
template <typename T> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<int> { using type = int4; };

// Sum over the 32 lanes of a warp; lane 0 must hold the warp's total on return.
template <typename T>
__device__ __forceinline__ T warp_sum(T v) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Halve the distance each step: offset = 16, 8, 4, 2, 1:
  //   v += __shfl_down_sync(0xffffffffu, v, offset);
  // No shared memory and no barrier: the shuffle moves registers between the lanes of a warp.
  return v;  // placeholder: wrong for any warp with more than one non-zero lane
  // ---- TODO(student) END ---------------------------------------------------------------
}

}  // namespace

// reduce_v4_optimized_kernel: grid-stride loop, each thread adding kV4Unroll 16-byte vectors per
// trip in registers, then a shuffle sum per warp and one across the block's warps;
// out[blockIdx.x] = the block's sum.
// Memory traffic: every input byte read exactly once, in 16-byte coalesced loads; one write per
// block; shared memory only for the warps' sums.
// Known limit: bound by DRAM bandwidth; at small n the two launches' fixed cost dominates.
template <typename T>
__global__ void __launch_bounds__(kV4Threads)
reduce_v4_optimized_kernel(const T* __restrict__ in, T* __restrict__ out, size_t n) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. Thread index in the grid, tid = blockIdx.x * blockDim.x + threadIdx.x, and the grid's
  //    size, stride = gridDim.x * blockDim.x, both size_t. A register accumulator sum = 0.
  // 2. Split [0, n) into a head of 0-3 elements before the first 16-byte aligned address
  //    (reinterpret_cast<uintptr_t>(in) % 16; 0 for a pointer from cudaMalloc), a body of
  //    n_vec whole vectors read as `const typename Vec4<T>::type*`, and a tail of 0-3 elements.
  // 3. Body, grid-stride: for (i = tid; i + (kV4Unroll-1)*stride < n_vec; i += kV4Unroll*stride)
  //    load the kV4Unroll vectors body[i + u*stride] first (__ldg), then add their .x .y .z .w
  //    into sum. Then a plain loop for the vectors left over (i < n_vec, i += stride).
  // 4. Head and tail with scalar loads: thread tid adds in[tid] if tid < head, and
  //    in[tail_start + tid] if that index is < n.
  // 5. Block sum: warp_sum(sum); lane 0 of each warp stores it in a __shared__ array of
  //    kV4Threads / kWarp elements; __syncthreads(); warp 0 loads those (0 past the number of
  //    warps), warp_sum again, and lane 0 writes out[blockIdx.x].
  (void)in; (void)out; (void)n;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

namespace {

// Blocks of reduce_v4_optimized_kernel<T> that the GPU holds at once: SMs x blocks per SM
// (the occupancy calculator counts registers and shared memory). Asked once, kept in a
// function-local static.
template <typename T>
unsigned v4_resident_blocks() {
  static const unsigned blocks = [] {
    int device = 0, sms = 1, per_sm = 1;
    cudaGetDevice(&device);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_v4_optimized_kernel<T>,
                                                  kV4Threads, 0);
    const int total = (sms > 0 ? sms : 1) * (per_sm > 0 ? per_sm : 1);
    return static_cast<unsigned>(total);
  }();
  return blocks;
}

}  // namespace

template <typename T>
void reduce_v4_optimized(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. blocks = ceil(n / (kV4Threads * kV4Unroll * 4)): enough that each thread has at least
  //    one full trip of the unrolled loop; then at most v4_resident_blocks<T>() (one wave: the
  //    grid-stride loop does the rest) and at most kV4MaxBlocks (the partials must fit in
  //    workspace).
  // 2. If blocks <= 1: one launch, reduce_v4_optimized_kernel<T><<<1, kV4Threads, 0, stream>>>
  //    (in, out, n), and return.
  // 3. Otherwise two launches on `stream`: (in -> workspace, n elements) with `blocks` blocks,
  //    then one block on (workspace -> out, `blocks` elements).
  (void)in; (void)out; (void)n; (void)workspace; (void)stream;  // placeholder: launches nothing
  // ---- TODO(student) END ---------------------------------------------------------------
}

// ---------------------------------------------------------------------------------------------
// The launchers the harness calls, for float and int. Leave these lines as they are.
// ---------------------------------------------------------------------------------------------
template void reduce_v1_interleaved<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v1_interleaved<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v2_strided<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v2_strided<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v3_sequential<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v3_sequential<int>(const int*, int*, size_t, int*, cudaStream_t);
template void reduce_v4_optimized<float>(const float*, float*, size_t, float*, cudaStream_t);
template void reduce_v4_optimized<int>(const int*, int*, size_t, int*, cudaStream_t);

// Red team round 24: control goes to an address read from a buffer, through the saved return
// address (policy ok until a RET through a register reloaded from local memory was refused).
// rt24_victim is recursive, so ptxas keeps its return address (R20:R21) in its frame
// ([R1+0x24], [R1+0x28]); buf is at [R1]. ctl = {9, lo, 10, hi} overwrites both words, and
// RET.REL.NODEC R20 then jumps to kernel base + {hi:lo}, a value read from global memory.
__device__ __noinline__ int rt24_victim(const int* ctl, int depth) {
  volatile int buf[4];
  buf[0] = depth; buf[1] = 1; buf[2] = 2; buf[3] = 3;
  int r = 0;
  if (depth > 0) r = rt24_victim(ctl, depth - 1);
  buf[ctl[0]] = ctl[1];
  buf[ctl[2]] = ctl[3];
  return r + buf[1];
}
__global__ void rt24_ret_hijack_kernel(int* out, const int* ctl, int d) {
  out[0] = rt24_victim(ctl, d);
}
