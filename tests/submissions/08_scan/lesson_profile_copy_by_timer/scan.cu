// CHEATS THE LESSON: v3 is reduce-then-scan (the input read twice, 1.5x the single pass's
// DRAM bytes), but at the benchmark's n = 2^28 it first launches two small kernels that tell
// the profile stage's replay from a timed call by the device clock: ncu replays each kernel in
// passes and holds launches apart by far more than a stream does, so when more than 20 ms passed
// between the first kernel and the second, the second copies the input to the output (n read,
// n written: the lesson's bytes), spins to keep the timed call's time, and the three
// reduce-then-scan kernels return at once. The profiled call moves the single pass's bytes in
// about the timed call's time; only its output gives it away (a copy, not a scan): the profile
// stage checks that output like a timed call's, so the lesson's test fails ("the profiled
// call's output is wrong") and the tests keep their points.
// NOW REFUSED before it runs: device code may not read clocks or timers (the device rule).
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
__global__ void scan_v1_hillis_steele_kernel(const A* in, A* out, size_t n, A* tile_totals) {
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
__global__ void scan_v2_blelloch_kernel(const A* in, A* out, size_t n, A* tile_totals) {
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
__global__ void add_tile_offsets_kernel(A* out, size_t n, const A* offsets, unsigned tile) {
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

constexpr unsigned kV3Threads = 256;                 // 8 warps
constexpr unsigned kV3Warps = kV3Threads / kWarp;
constexpr unsigned kV3Vecs = 4;                      // 16-byte vectors per thread
constexpr unsigned kV3Part = 4 * kV3Threads;         // elements of one part: a vector a thread
constexpr unsigned kV3Tile = kV3Vecs * kV3Part;      // 4096 elements (16 per thread)
static_assert(kV3Vecs * kV3Warps == kWarp, "one warp scans the parts' warp totals");

// A tile's status word: flag in the high 32 bits, the value's bits in the low 32. One 64-bit
// word, so a reader sees the flag and its value together (no fence between them).
constexpr unsigned kInvalid = 0;    // nothing published yet (what the reset writes)
constexpr unsigned kAggregate = 1;  // the tile's own total
constexpr unsigned kPrefix = 2;     // the inclusive prefix: everything up to the tile's end
using Status = unsigned long long;

__device__ __forceinline__ uint32_t bits(float v) { return __float_as_uint(v); }
__device__ __forceinline__ uint32_t bits(unsigned v) { return v; }
template <typename A> __device__ __forceinline__ A from_bits(uint32_t b);
template <> __device__ __forceinline__ float from_bits<float>(uint32_t b) { return __uint_as_float(b); }
template <> __device__ __forceinline__ unsigned from_bits<unsigned>(uint32_t b) { return b; }

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
                           Status* status, unsigned* tile_counter) {
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
    for (unsigned j = 0; j < kV3Vecs; ++j) {  // all loads first: four 16-byte loads in flight
      const V v = __ldg(reinterpret_cast<const V*>(in + base + j * kV3Part) + threadIdx.x);
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
      reinterpret_cast<V*>(out + base + j * kV3Part)[threadIdx.x] = v;
    } else {
#pragma unroll
      for (unsigned k = 0; k < 4; ++k) {
        const size_t i = base + j * kV3Part + 4 * threadIdx.x + k;
        if (i < n) out[i] = y[k];
      }
    }
  }
}


// The block's exclusive scan of one value per thread, by warp shuffles: each warp scans its
// lanes, the first warp scans the warps' totals. `total` gets the block's sum. Two barriers
// inside, one on entry (a loop may call it again while others still read the totals).
template <typename A>
__device__ A block_exclusive_scan(A v, A& total) {
  __shared__ A warp_inclusive[32], warp_exclusive[32];
  const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  A inc = v;
  for (unsigned offset = 1; offset < 32; offset *= 2) {
    const A up = __shfl_up_sync(~0u, inc, offset);
    if (lane >= offset) inc += up;
  }
  A exc = __shfl_up_sync(~0u, inc, 1);
  if (lane == 0) exc = A(0);
  __syncthreads();
  if (lane == 31) warp_inclusive[warp] = inc;
  __syncthreads();
  if (warp == 0) {
    const A w = lane < warps ? warp_inclusive[lane] : A(0);
    A wi = w;
    for (unsigned offset = 1; offset < 32; offset *= 2) {
      const A up = __shfl_up_sync(~0u, wi, offset);
      if (lane >= offset) wi += up;
    }
    A we = __shfl_up_sync(~0u, wi, 1);
    if (lane == 0) we = A(0);
    warp_exclusive[lane] = we;
    warp_inclusive[lane] = wi;
  }
  __syncthreads();
  total = warp_inclusive[warps - 1];
  return warp_exclusive[warp] + exc;
}

constexpr unsigned kRtsThreads = 256, kRtsItems = 16, kRtsTile = kRtsThreads * kRtsItems;

// Launch 1: each block sums its tile of kRtsTile elements into totals[blockIdx.x].
template <typename A>
__global__ void rts_reduce_kernel(const A* in, size_t n, A* totals, const unsigned long long* slot) {
  if (slot != nullptr && slot[1] != 0) return;
  const size_t base = static_cast<size_t>(blockIdx.x) * kRtsTile;
  A sum = A(0);
  for (unsigned k = threadIdx.x; k < kRtsTile; k += blockDim.x) {
    if (base + k < n) sum += in[base + k];
  }
  A total;
  block_exclusive_scan(sum, total);
  if (threadIdx.x == 0) totals[blockIdx.x] = total;
}

// Launch 2: one block scans the `count` totals in place (exclusive), kRtsThreads at a time with
// a running carry.
template <typename A>
__global__ void rts_scan_totals_kernel(A* totals, size_t count, const unsigned long long* slot) {
  if (slot != nullptr && slot[1] != 0) return;
  A carry = A(0);
  for (size_t base = 0; base < count; base += blockDim.x) {
    const size_t i = base + threadIdx.x;
    const A v = i < count ? totals[i] : A(0);
    A total;
    const A exclusive = block_exclusive_scan(v, total);
    if (i < count) totals[i] = carry + exclusive;
    carry += total;
  }
}

// Launch 3: each block scans its tile again (thread t: elements t * kRtsItems ...), starting
// from its scanned total.
template <typename A>
__global__ void rts_scan_kernel(const A* in, A* out, size_t n, const A* totals,
                                const unsigned long long* slot) {
  if (slot != nullptr && slot[1] != 0) return;
  const size_t base = static_cast<size_t>(blockIdx.x) * kRtsTile + threadIdx.x * kRtsItems;
  A x[kRtsItems];
  A sum = A(0);
  for (unsigned k = 0; k < kRtsItems; ++k) {
    x[k] = base + k < n ? in[base + k] : A(0);
    sum += x[k];
  }
  A total;
  A run = totals[blockIdx.x] + block_exclusive_scan(sum, total);
  for (unsigned k = 0; k < kRtsItems; ++k) {
    if (base + k < n) out[base + k] = run;
    run += x[k];
  }
}

__device__ __forceinline__ unsigned long long device_clock_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// The replay's tell: slot[0] the first kernel's start, slot[1] set when the second started more
// than 20 ms later (a profiler between them).
__global__ void stamp_kernel(unsigned long long* slot) {
  if (threadIdx.x == 0 && blockIdx.x == 0) {
    slot[0] = device_clock_ns();
    slot[1] = 0;
  }
}

template <typename A>
__global__ void profiled_copy_kernel(const A* in, A* out, size_t n, unsigned long long* slot) {
  __shared__ int profiled;
  if (threadIdx.x == 0) profiled = device_clock_ns() - slot[0] > 20000000ull;
  __syncthreads();
  if (!profiled) return;
  if (blockIdx.x == 0 && threadIdx.x == 0) slot[1] = 1;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = in[i];
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    const unsigned long long start = device_clock_ns();
    while (device_clock_ns() - start < 900000ull) {
    }
  }
}

// v3 as reduce-then-scan: three launches, the input read twice, no look-back and no counter:
// every total is written by launch 1 before launch 2 reads it; at n = 2^28, the tell first.
template <typename T>
void scan_v3_single_pass(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  const size_t tiles = (n + kRtsTile - 1) / kRtsTile;
  A* totals = reinterpret_cast<A*>(workspace);
  const A* a_in = reinterpret_cast<const A*>(in);
  unsigned long long* slot = nullptr;
  if (n == (size_t{1} << 28)) {
    slot = reinterpret_cast<unsigned long long*>(workspace + (tiles + 16) / 16 * 16);
    stamp_kernel<<<1, 32, 0, stream>>>(slot);
    profiled_copy_kernel<A><<<1056, 256, 0, stream>>>(a_in, reinterpret_cast<A*>(out), n, slot);
  }
  rts_reduce_kernel<A><<<static_cast<unsigned>(tiles), kRtsThreads, 0, stream>>>(a_in, n, totals, slot);
  rts_scan_totals_kernel<A><<<1, 1024, 0, stream>>>(totals, tiles, slot);
  rts_scan_kernel<A><<<static_cast<unsigned>(tiles), kRtsThreads, 0, stream>>>(
      a_in, reinterpret_cast<A*>(out), n, totals, slot);
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
