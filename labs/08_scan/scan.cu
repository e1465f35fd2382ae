// Lab 08: prefix sum (exclusive scan). THIS is the file you edit (and the only one the grader
// takes).
//
// out[0] = 0, out[i] = in[0] + ... + in[i - 1], for float and int, any n >= 1. Three versions:
// v1 (Hillis-Steele) and v2 (Blelloch) scan tiles, scan the tiles' totals the same way and add
// them back (several launches); v3 is one pass with decoupled look-back, your fastest. Read
// README.md in this folder first. Build and test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 08  (your grade)
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
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. i = blockIdx.x * blockDim.x + threadIdx.x in size_t (n can exceed 2^31). Thread t loads
  //    x = in[i] (0 past n) and stores the element to its LEFT in the tile, in[i - 1] (0 for
  //    t = 0 and past n), into buf[0][t]: the inclusive scan of the shifted tile is the
  //    exclusive scan of the tile. Barrier.
  // 2. For d = 1, 2, 4, ... < blockDim.x: read from buf[src], write to buf[1 - src]:
  //    buf[dst][t] = buf[src][t] + (t >= d ? buf[src][t - d] : 0); barrier; swap src, dst.
  // 3. out[i] = buf[src][t] when i < n. The last thread of the block writes the tile's total,
  //    its exclusive value plus its own x, to tile_totals[blockIdx.x] unless tile_totals is
  //    nullptr (the tile is the whole input).
  (void)in; (void)out; (void)n; (void)tile_totals; (void)buf;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
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
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. Load: elements a = t and b = t + blockDim.x of the tile (coalesced), 0 past n, into
  //    tree[padded(a)] and tree[padded(b)].
  // 2. Up-sweep: offset = 1; for d = blockDim.x down to 1 (d >>= 1): barrier; if t < d:
  //    ai = offset * (2t + 1) - 1, bi = offset * (2t + 2) - 1;
  //    tree[padded(bi)] += tree[padded(ai)]; then offset *= 2.
  // 3. Thread 0 keeps the tile's total (the root, tree[padded(tile - 1)]) and writes 0 there.
  // 4. Down-sweep: for d = 1 up to blockDim.x (d *= 2): offset >>= 1; barrier; if t < d:
  //    ai, bi as above; tmp = tree[ai]; tree[ai] = tree[bi]; tree[bi] += tmp (padded).
  // 5. Barrier; write both elements back to out (only below n). Thread 0 writes the total to
  //    tile_totals[blockIdx.x] unless tile_totals is nullptr.
  (void)in; (void)out; (void)n; (void)tile_totals; (void)tree;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

// ---------------------------------------------------------------------------------------------
// v1, v2: scan-then-propagate, in several launches.
// ---------------------------------------------------------------------------------------------

// add_tile_offsets_kernel: out[i] += offsets[tile of i], a block per tile of `tile` elements.
// Memory traffic: one read and one write per element (tile 0 is skipped: its offset is 0).
template <typename A>
__global__ void add_tile_offsets_kernel(A* out, size_t n, const A* offsets, unsigned tile) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Block b adds offsets[b] to out[b * tile + k] for every k < tile with an index below n
  // (k = threadIdx.x, threadIdx.x + blockDim.x, ...). Indices in size_t.
  (void)out; (void)n; (void)offsets; (void)tile;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

namespace {

// Scan-then-propagate, shared by v1 and v2: `kernel` scans tiles of `tile` elements with
// blocks of kBlock threads. Every launch goes on `stream`; nothing here waits.
template <typename A>
void scan_in_levels(void (*kernel)(const A*, A*, size_t, A*), unsigned tile, const A* in, A* out,
                    size_t n, A* workspace, cudaStream_t stream) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // tiles = ceil(n / tile). One tile: kernel<<<1, kBlock, 0, stream>>>(in, out, n, nullptr).
  // Otherwise:
  //   kernel<<<tiles, kBlock, 0, stream>>>(in, out, n, workspace)      totals to workspace
  //   scan_in_levels(kernel, tile, workspace, workspace, tiles, workspace + tiles, stream)
  //                                                     the totals, scanned in place
  //   add_tile_offsets_kernel<A><<<tiles, kBlock, 0, stream>>>(out, n, workspace, tile)
  // The workspace holds garbage on entry: read only totals this call wrote.
  (void)kernel; (void)tile; (void)in; (void)out; (void)n; (void)workspace; (void)stream;
  // ---- TODO(student) END ---------------------------------------------------------------
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

// Four elements in one 16-byte load: Vec4<float>::type is float4, Vec4<unsigned>::type uint4.
template <typename A> struct Vec4;
template <> struct Vec4<float> { using type = float4; };
template <> struct Vec4<unsigned> { using type = uint4; };

// The sum over the 32 lanes of a warp, in every lane.
template <typename A>
__device__ __forceinline__ A warp_sum(A v) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // offset = 16, 8, 4, 2, 1: v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

// The inclusive scan over the 32 lanes of a warp: lane l gets v_0 + ... + v_l.
template <typename A>
__device__ __forceinline__ A warp_inclusive_scan(A v) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // offset = 1, 2, 4, 8, 16: up = __shfl_up_sync(0xffffffffu, v, offset);
  //                          if (lane >= offset) v += up;
  return v;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

// The look-back, by the first warp of a tile's block: the sum of everything before `tile`,
// read from the status words of the tiles before it. In every lane of the warp.
template <typename A>
__device__ A look_back(const volatile Status* status, unsigned tile) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // window = tile - 1 (as a signed 64-bit number), prefix = 0. Loop:
  //   lane l reads w = status[window - l] (a tile before 0: pack(kPrefix, 0)), again while
  //   any lane of the warp has an invalid word (__any_sync);
  //   p = __ballot_sync(~0u, flag(w) == kPrefix); value = from_bits<A>(low 32 bits of w);
  //   if p != 0: the nearest prefix is at lane __ffs(p) - 1: add warp_sum of the values of
  //     the lanes up to it (0 for the others) to prefix, and return it;
  //   else add warp_sum(value) and move the window 32 tiles back.
  (void)status; (void)tile;
  return A(0);  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
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
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. Thread 0 takes the tile number, atomicAdd(tile_counter, 1u), into shared memory;
  //    barrier. base = tile * kV3Tile (size_t).
  // 2. Load x[j][0..3] = in[base + j * kV3Part + 4 * threadIdx.x + 0..3] for j < kV3Vecs:
  //    one Vec4 when kVector and the tile is whole (base + kV3Tile <= n), else one element at
  //    a time, 0 past n.
  // 3. Per part j: the thread's sum s[j]; inclusive warp scan of each s[j]; lane 31 of warp
  //    w stores its part-j total in shared memory at [j * kV3Warps + w]; barrier.
  // 4. Warp 0: lane l scans entry l of those 32 (warp_inclusive_scan; the exclusive value is
  //    __shfl_up_sync of it by 1, 0 in lane 0); the tile's aggregate is lane 31's inclusive
  //    value. Lane 0 publishes: tile 0 pack(kPrefix, aggregate), else pack(kAggregate,
  //    aggregate), then (tile > 0) prefix = look_back<A>(status, tile) and lane 0 publishes
  //    pack(kPrefix, prefix + aggregate). The 32 exclusive values and the prefix go to
  //    shared memory; barrier.
  // 5. Each thread's running value for part j: prefix + the part-j warp entry + its own
  //    exclusive in the warp (__shfl_up_sync of the inclusive scan by 1); out = running,
  //    running += x, element by element; stores like the loads (Vec4 or guarded scalars).
  (void)in; (void)out; (void)n; (void)status; (void)tile_counter;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

template <typename T>
void scan_v3_single_pass(const T* in, T* out, size_t n, T* workspace, cudaStream_t stream) {
  using A = typename Acc<T>::type;
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. Lay out the workspace: round its address up to 8 bytes; the tile counter (as 8 bytes),
  //    then one Status word per tile, tiles = ceil(n / kV3Tile).
  // 2. Reset both: the workspace is garbage on entry (cudaMemsetAsync on `stream` to 0 makes
  //    every status word kInvalid and the counter 0).
  // 3. Launch tiles blocks of kV3Threads: the vector kernel when `in` and `out` are 16-byte
  //    aligned (reinterpret_cast<uintptr_t>(p) % 16 == 0), the scalar one otherwise.
  (void)in; (void)out; (void)n; (void)workspace; (void)stream;  // placeholder: launches nothing
  // ---- TODO(student) END ---------------------------------------------------------------
}

// ---------------------------------------------------------------------------------------------
// The launchers the harness calls, for float and int. Leave these lines as they are.
// ---------------------------------------------------------------------------------------------
template void scan_v1_hillis_steele<float>(const float*, float*, size_t, float*, cudaStream_t);
template void scan_v1_hillis_steele<int>(const int*, int*, size_t, int*, cudaStream_t);
template void scan_v2_blelloch<float>(const float*, float*, size_t, float*, cudaStream_t);
template void scan_v2_blelloch<int>(const int*, int*, size_t, int*, cudaStream_t);
template void scan_v3_single_pass<float>(const float*, float*, size_t, float*, cudaStream_t);
template void scan_v3_single_pass<int>(const int*, int*, size_t, int*, cudaStream_t);
