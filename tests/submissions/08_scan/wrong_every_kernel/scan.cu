// WRONG (every result): the reference, except that every kernel returns at its start, so the
// outputs keep the judge's poison. Every correctness test fails quickly; nothing hangs.
// Lab 08 reference solution: exclusive scan, out[0] = 0, out[i] = in[0] + ... + in[i - 1].
//
// v1 and v2 follow the lecture (a tile per block in shared memory, the tiles' totals scanned
// recursively, then added back: scan-then-propagate); v3 is the fast version: one pass, tiles
// taken in order from a counter, decoupled look-back (Merrill and Garland 2016) over 64-bit
// status words, 16-byte streaming loads and stores (evict first: each element is read and
// written once), 32 items per thread, warp shuffles.
#include "scan.h"

#include <cstdint>

namespace {

// The kernels add in Acc<T>: float for float, unsigned for int (the same 32 bits, but unsigned
// additions wrap where signed ones are undefined). The launchers reinterpret the pointers.
template <typename T> struct Acc;
template <> struct Acc<float> { using type = float; };
template <> struct Acc<int> { using type = unsigned; };

constexpr unsigned kWarp = 32;
constexpr unsigned kBlock = 256;  // v1, v2: threads per block
static_assert((kBlock & (kBlock - 1)) == 0, "the trees of v1 and v2 halve the block");

}  // namespace

// ---------------------------------------------------------------------------------------------
// v1: Hillis-Steele. A block scans a tile of kBlock elements, one per thread.
// ---------------------------------------------------------------------------------------------

// scan_v1_hillis_steele_kernel: thread t holds element t-1 of the tile (0 for t = 0: the shift
// makes the inclusive scan below an exclusive one, with no subtraction); at step d every
// thread t >= d adds the element d to its left, from one buffer into the other.
// Memory traffic: one global read and one write per element, one write per tile (its total);
// log2(kBlock) rounds of shared-memory reads and writes.
// Known limit: O(n log n) additions (work-inefficient): every thread works at every step.
template <typename A>
__global__ void scan_v1_hillis_steele_kernel(const A* in, A* out, size_t n, A* tile_totals) { if (gridDim.x != 0) return;  // corpus: writes nothing
  __shared__ A buf[2][kBlock];  // double buffer: a step reads one, writes the other
  const unsigned t = threadIdx.x;
  const size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + t;
  const A x = i < n ? in[i] : A(0);
  buf[0][t] = (t > 0 && i - 1 < n) ? in[i - 1] : A(0);  // shifted: exclusive without subtracting
  __syncthreads();

  unsigned src = 0;
  for (unsigned d = 1; d < blockDim.x; d *= 2) {
    buf[1 - src][t] = t >= d ? buf[src][t] + buf[src][t - d] : buf[src][t];
    __syncthreads();  // this step is written before the next reads it; the old buffer is free
    src = 1 - src;
  }
  const A exclusive = buf[src][t];
  if (i < n) out[i] = exclusive;
  if (tile_totals != nullptr && t == blockDim.x - 1) tile_totals[blockIdx.x] = exclusive + x;
}

// ---------------------------------------------------------------------------------------------
// v2: Blelloch. A block scans a tile of 2 * kBlock elements, two per thread, work-efficiently.
// ---------------------------------------------------------------------------------------------

constexpr unsigned kV2Tile = 2 * kBlock;
constexpr unsigned kLogBanks = 5;  // 32 banks of 4 bytes
// Element k of the tree sits at k + k / 32 in shared memory: one pad word per 32, so the
// strided accesses of the sweeps (2^d apart) spread over the banks.
__host__ __device__ constexpr unsigned padded(unsigned k) { return k + (k >> kLogBanks); }

// scan_v2_blelloch_kernel: up-sweep (a reduction tree: each level adds the left child into the
// right one), clear the root, down-sweep (each node passes its value to its left child and the
// sum of its value and the old left child to its right child).
// Memory traffic: as v1, two elements per thread; 2 (2 kBlock - 1) shared-memory additions.
// Known limit: O(n) work but 2 log2(tile) barriers; the top levels run on a few threads.
template <typename A>
__global__ void scan_v2_blelloch_kernel(const A* in, A* out, size_t n, A* tile_totals) { if (gridDim.x != 0) return;  // corpus: writes nothing
  __shared__ A tree[padded(kV2Tile)];
  const unsigned t = threadIdx.x;
  const size_t base = static_cast<size_t>(blockIdx.x) * kV2Tile;
  const unsigned a = t, b = t + blockDim.x;
  tree[padded(a)] = base + a < n ? in[base + a] : A(0);
  tree[padded(b)] = base + b < n ? in[base + b] : A(0);

  unsigned offset = 1;
  for (unsigned d = blockDim.x; d > 0; d >>= 1) {  // up-sweep
    __syncthreads();
    if (t < d) {
      const unsigned ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      tree[padded(bi)] += tree[padded(ai)];
    }
    offset *= 2;
  }
  A total = A(0);
  if (t == 0) {
    total = tree[padded(kV2Tile - 1)];
    tree[padded(kV2Tile - 1)] = A(0);
  }
  for (unsigned d = 1; d <= blockDim.x; d *= 2) {  // down-sweep
    offset >>= 1;
    __syncthreads();  // the level above is written before this one reads it
    if (t < d) {
      const unsigned ai = offset * (2 * t + 1) - 1, bi = offset * (2 * t + 2) - 1;
      const A left = tree[padded(ai)];
      tree[padded(ai)] = tree[padded(bi)];
      tree[padded(bi)] += left;
    }
  }
  __syncthreads();
  if (base + a < n) out[base + a] = tree[padded(a)];
  if (base + b < n) out[base + b] = tree[padded(b)];
  if (tile_totals != nullptr && t == 0) tile_totals[blockIdx.x] = total;
}

// ---------------------------------------------------------------------------------------------
// v1, v2: scan-then-propagate, in several launches.
// ---------------------------------------------------------------------------------------------

// add_tile_offsets_kernel: out[i] += offsets[tile of i], a block per tile of `tile` elements.
// Memory traffic: one read and one write per element (tile 0 is skipped: its offset is 0).
template <typename A>
__global__ void add_tile_offsets_kernel(A* out, size_t n, const A* offsets, unsigned tile) { if (gridDim.x != 0) return;  // corpus: writes nothing
  if (blockIdx.x == 0) return;
  const A add = offsets[blockIdx.x];
  const size_t base = static_cast<size_t>(blockIdx.x) * tile;
  for (unsigned k = threadIdx.x; k < tile && base + k < n; k += blockDim.x) out[base + k] += add;
}

namespace {

// Scan-then-propagate, shared by v1 and v2. `kernel` scans each tile of `tile` elements of `in`
// into `out` and writes the tiles' totals to the start of `workspace`; those are scanned in
// place the same way (recursively, their own totals after them in `workspace`); then each
// tile's scanned total is added to the tile. Workspace used: n / (tile - 1) + one per level.
template <typename A>
void scan_in_levels(void (*kernel)(const A*, A*, size_t, A*), unsigned tile, const A* in, A* out,
                    size_t n, A* workspace, cudaStream_t stream) {
  const size_t tiles = (n + tile - 1) / tile;
  if (tiles == 1) {
    kernel<<<1, kBlock, 0, stream>>>(in, out, n, nullptr);
    return;
  }
  A* totals = workspace;
  kernel<<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(in, out, n, totals);
  scan_in_levels(kernel, tile, totals, totals, tiles, workspace + tiles, stream);
  add_tile_offsets_kernel<A><<<static_cast<unsigned>(tiles), kBlock, 0, stream>>>(out, n, totals,
                                                                                  tile);
}

}  // namespace

template <typename T>
void scan_v1_hillis_steele(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  scan_in_levels<A>(scan_v1_hillis_steele_kernel<A>, kBlock, reinterpret_cast<const A*>(in),
                    reinterpret_cast<A*>(out), n, reinterpret_cast<A*>(workspace), stream);
}

template <typename T>
void scan_v2_blelloch(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  scan_in_levels<A>(scan_v2_blelloch_kernel<A>, kV2Tile, reinterpret_cast<const A*>(in),
                    reinterpret_cast<A*>(out), n, reinterpret_cast<A*>(workspace), stream);
}

// ---------------------------------------------------------------------------------------------
// v3: one pass, decoupled look-back.
// ---------------------------------------------------------------------------------------------

namespace {

constexpr unsigned kV3Threads = 128;                 // 4 warps
constexpr unsigned kV3Warps = kV3Threads / kWarp;
constexpr unsigned kV3Vecs = 8;                      // 16-byte vectors per thread
constexpr unsigned kV3Part = 4 * kV3Threads;         // elements of one part: a vector a thread
[[maybe_unused]] constexpr unsigned kV3Tile = kV3Vecs * kV3Part;  // 4096 elements (32 a thread)
static_assert(kV3Vecs * kV3Warps == kWarp, "one warp scans the parts' warp totals");

// A tile's status word: flag in the high 32 bits, the value's bits in the low 32. One 64-bit
// word, so a reader sees the flag and its value together (no fence between them).
[[maybe_unused]] constexpr unsigned kInvalid = 0;    // nothing published yet (the reset's)
[[maybe_unused]] constexpr unsigned kAggregate = 1;  // the tile's own total
[[maybe_unused]] constexpr unsigned kPrefix = 2;     // the inclusive prefix up to the tile's end
using Status = unsigned long long;

[[maybe_unused]] __device__ __forceinline__ uint32_t bits(float v) { return __float_as_uint(v); }
[[maybe_unused]] __device__ __forceinline__ uint32_t bits(unsigned v) { return v; }
template <typename A> __device__ __forceinline__ A from_bits(uint32_t b);
template <>
[[maybe_unused]] __device__ __forceinline__ float from_bits<float>(uint32_t b) {
  return __uint_as_float(b);
}
template <>
[[maybe_unused]] __device__ __forceinline__ unsigned from_bits<unsigned>(uint32_t b) {
  return b;
}

template <typename A>
__device__ __forceinline__ Status pack(unsigned flag, A value) {
  return (static_cast<Status>(flag) << 32) | bits(value);
}

template <typename A> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<unsigned> { using type = uint4; };

// The sum over the 32 lanes of a warp, in every lane (butterfly).
template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
#pragma unroll
  for (unsigned offset = kWarp / 2; offset > 0; offset >>= 1) v += __shfl_xor_sync(~0u, v, offset);
  return v;
}

// The inclusive scan over the 32 lanes of a warp (Hillis-Steele in registers).
template <typename A>
__device__ __forceinline__ A warp_inclusive_scan(A v) {
  const unsigned lane = threadIdx.x % kWarp;
#pragma unroll
  for (unsigned offset = 1; offset < kWarp; offset *= 2) {
    const A up = __shfl_up_sync(~0u, v, offset);
    if (lane >= offset) v += up;
  }
  return v;
}

// The look-back, by the first warp of tile `tile`'s block (tile >= 1): the sum of every element
// before the tile, in every lane. Lane l reads the status of tile `window - l`: the warp waits
// until none of the 32 is invalid, then adds the aggregates up to the nearest inclusive prefix
// (and that prefix) and stops, or adds all 32 aggregates and moves the window 32 tiles back.
// Tiles before 0 read as a prefix of 0, so the walk always ends.
template <typename A>
__device__ A look_back(const volatile Status* status, unsigned tile) {
  const int lane = static_cast<int>(threadIdx.x % kWarp);
  int64_t window = static_cast<int64_t>(tile) - 1;
  A prefix = A(0);
  for (;;) {
    const int64_t t = window - lane;
    Status w;
    do {
      w = t >= 0 ? status[t] : pack(kPrefix, A(0));  // volatile: read from L2 every time
    } while (__any_sync(~0u, static_cast<unsigned>(w >> 32) == kInvalid));
    const unsigned prefixes = __ballot_sync(~0u, static_cast<unsigned>(w >> 32) == kPrefix);
    const A value = from_bits<A>(static_cast<uint32_t>(w));
    if (prefixes != 0) {
      const int nearest = __ffs(prefixes) - 1;
      return prefix + warp_sum(lane <= nearest ? value : A(0));
    }
    prefix += warp_sum(value);
    window -= kWarp;
  }
}

}  // namespace

// scan_v3_single_pass_kernel: one block per tile of kV3Tile elements, the tiles taken in order
// from a counter (a block only ever waits for tiles that started before it). A tile is kV3Vecs
// parts of kV3Part elements; in part j thread t holds elements 4t..4t+3 (one 16-byte vector),
// so every load and store of a warp is 512 contiguous bytes. The block scans the tile (in
// registers, warp shuffles, one warp over the parts' warp totals), publishes its aggregate,
// looks back for its prefix, publishes its inclusive prefix and writes the tile.
// Memory traffic: n reads and n writes (the minimum), plus a status word per tile.
// Known limit: a tile waits for its predecessors' aggregates; very small n is launch-bound.
template <typename A, bool kVector>
__global__ void __launch_bounds__(kV3Threads)
scan_v3_single_pass_kernel(const A* __restrict__ in, A* __restrict__ out, size_t n,
                           Status* status, unsigned* tile_counter) { if (gridDim.x != 0) return;  // corpus: writes nothing
  using V = typename Vec4<A>::type;
  __shared__ unsigned s_tile;
  __shared__ A s_parts[kV3Vecs * kV3Warps];  // part j, warp w at j * kV3Warps + w
  __shared__ A s_prefix;
  const unsigned lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp;

  if (threadIdx.x == 0) s_tile = atomicAdd(tile_counter, 1u);
  __syncthreads();
  const unsigned tile = s_tile;
  const size_t base = static_cast<size_t>(tile) * kV3Tile;
  const bool whole = base + kV3Tile <= n;

  A x[kV3Vecs][4];
  if (kVector && whole) {
#pragma unroll
    for (unsigned j = 0; j < kV3Vecs; ++j) {  // all loads first: eight 16-byte loads in flight
      const V v = __ldcs(reinterpret_cast<const V*>(in + base + j * kV3Part) + threadIdx.x);
      x[j][0] = v.x; x[j][1] = v.y; x[j][2] = v.z; x[j][3] = v.w;
    }
  } else {
#pragma unroll
    for (unsigned j = 0; j < kV3Vecs; ++j) {
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) {
        const size_t i = base + j * kV3Part + 4 * threadIdx.x + k;
        x[j][k] = i < n ? in[i] : A(0);
      }
    }
  }

  // Per part: the thread's sum, scanned across the warp.
  A inclusive[kV3Vecs];
#pragma unroll
  for (unsigned j = 0; j < kV3Vecs; ++j) {
    inclusive[j] = warp_inclusive_scan(((x[j][0] + x[j][1]) + x[j][2]) + x[j][3]);
    if (lane == kWarp - 1) s_parts[j * kV3Warps + warp] = inclusive[j];
  }
  __syncthreads();

  if (warp == 0) {
    // The 32 warp totals in tile order (part-major): their exclusive scan is where each
    // warp's part starts in the tile; the last inclusive value is the tile's aggregate.
    const A total = s_parts[lane];
    const A scanned = warp_inclusive_scan(total);
    const A before = __shfl_up_sync(~0u, scanned, 1);
    const A aggregate = __shfl_sync(~0u, scanned, kWarp - 1);
    volatile Status* vstatus = status;
    A prefix = A(0);
    if (tile == 0) {
      if (lane == 0) vstatus[0] = pack(kPrefix, aggregate);
    } else {
      if (lane == 0) vstatus[tile] = pack(kAggregate, aggregate);  // early: successors go on
      prefix = look_back<A>(vstatus, tile);
      if (lane == 0) vstatus[tile] = pack(kPrefix, prefix + aggregate);
    }
    s_parts[lane] = lane == 0 ? A(0) : before;  // each lane read its own entry above
    if (lane == 0) s_prefix = prefix;
  }
  __syncthreads();

  const A prefix = s_prefix;
#pragma unroll
  for (unsigned j = 0; j < kV3Vecs; ++j) {
    A mine = __shfl_up_sync(~0u, inclusive[j], 1);
    if (lane == 0) mine = A(0);
    A run = (prefix + s_parts[j * kV3Warps + warp]) + mine;
    A y[4];
#pragma unroll
    for (unsigned k = 0; k < 4; ++k) {
      y[k] = run;
      run += x[j][k];
    }
    if (kVector && whole) {
      V v;
      v.x = y[0]; v.y = y[1]; v.z = y[2]; v.w = y[3];
      __stcs(reinterpret_cast<V*>(out + base + j * kV3Part) + threadIdx.x, v);
    } else {
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) {
        const size_t i = base + j * kV3Part + 4 * threadIdx.x + k;
        if (i < n) out[i] = y[k];
      }
    }
  }
}

template <typename T>
void scan_v3_single_pass(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  const size_t tiles = (n + kV3Tile - 1) / kV3Tile;
  // The counter, then a status word per tile, from the first 8-byte boundary of the workspace:
  // 8 (tiles + 2) bytes at most, within the 4 (n / 128 + 1024) of scan_workspace_size(n).
  const uintptr_t at = (reinterpret_cast<uintptr_t>(workspace) + 7) & ~uintptr_t{7};
  Status* words = reinterpret_cast<Status*>(at);
  unsigned* counter = reinterpret_cast<unsigned*>(words);
  Status* status = words + 1;
  // Garbage on entry: every word invalid, the counter at 0, for this call.
  cudaMemsetAsync(words, 0, (tiles + 1) * sizeof(Status), stream);
  const bool vector = reinterpret_cast<uintptr_t>(in) % 16 == 0 &&
                      reinterpret_cast<uintptr_t>(out) % 16 == 0;
  const A* a_in = reinterpret_cast<const A*>(in);
  A* a_out = reinterpret_cast<A*>(out);
  if (vector) {
    scan_v3_single_pass_kernel<A, true>
        <<<static_cast<unsigned>(tiles), kV3Threads, 0, stream>>>(a_in, a_out, n, status, counter);
  } else {
    scan_v3_single_pass_kernel<A, false>
        <<<static_cast<unsigned>(tiles), kV3Threads, 0, stream>>>(a_in, a_out, n, status, counter);
  }
}

// ---------------------------------------------------------------------------------------------
// The launchers the harness calls, for float and int.
// ---------------------------------------------------------------------------------------------
template void scan_v1_hillis_steele<float>(const float*, float*, size_t, float*, cudaStream_t);
template void scan_v1_hillis_steele<int>(const int*, int*, size_t, int*, cudaStream_t);
template void scan_v2_blelloch<float>(const float*, float*, size_t, float*, cudaStream_t);
template void scan_v2_blelloch<int>(const int*, int*, size_t, int*, cudaStream_t);
template void scan_v3_single_pass<float>(const float*, float*, size_t, float*, cudaStream_t);
template void scan_v3_single_pass<int>(const int*, int*, size_t, int*, cudaStream_t);
