// WRONG (hang): the reference, except that every kernel spins forever at its start (a
// condition that never becomes false). Every test times out; the judge must bound what it
// costs (a variant that hangs three times in a row is not run again), not wait a timeout per test.
// Lab 04 reference solution: boundary handling (v4) and an optimized SIMT SGEMM (v5).
//
// v4 is lab 03's kernel for any M, N, K >= 1: the grid is rounded up, the number of slices is
// rounded up, every load checks its row and column and reads 0 past an edge, every store
// checks its row and column.
// v5 keeps the same idea (block tile in shared memory, thread tile in registers) and adds what
// the fastest FP32 kernels do without tensor cores: warp tiling, A transposed in shared memory
// with padding, double-buffered shared memory filled one slice ahead, and a grouped block order
// for L2. Where the sizes allow 16-byte loads, the next slice comes through registers as
// float4s; where they do not (K or N not a multiple of 4), it comes element by element with
// cp.async, straight from global to shared memory.
#include "matmul.h"

#include <cstdint>

// ================================================================================== v4

namespace v4 {

constexpr int L = 128;  // block tile: L x L elements of C per block
constexpr int S = 8;    // slice depth
constexpr int V = 8;    // thread tile: V x V per thread
constexpr int kThreadsX = L / V;
constexpr int kThreads = kThreadsX * kThreadsX;
static_assert(L % V == 0 && V % 4 == 0, "V divides L; the thread tile is read as float4");

}  // namespace v4

// matmul_v4_boundary_kernel: lab 03's kernel (block tile L x L, slices of depth S, thread tile
// V x V) for any M, N, K.
// Memory traffic: as lab 03 (2N^3/L global, 2N^3/V shared); the zeros past the edges cost
// shared-memory stores only.
// Known limit: the edge blocks do the full tile's arithmetic on zeros; scalar global loads.
__global__ void __launch_bounds__(v4::kThreads)
    matmul_v4_boundary_kernel(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ C, int M, int N, int K) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  using namespace v4;
  __shared__ __align__(16) float sA[S][L];  // sA[s][m] = A(row0 + m, ko + s), 0 past an edge
  __shared__ __align__(16) float sB[S][L];  // sB[s][n] = B(ko + s, col0 + n), 0 past an edge

  const int tid = threadIdx.y * kThreadsX + threadIdx.x;
  const int row0 = blockIdx.y * L;
  const int col0 = blockIdx.x * L;

  float c[V][V] = {};
  float a[V], b[V];

  // ko runs while ko < K: the last slice may be partial (K not a multiple of S); its missing
  // k are zeros in both slices, so they add nothing.
  for (int ko = 0; ko < K; ko += S) {
    __syncthreads();  // barrier 1: the previous slice is no longer being read
    for (int idx = tid; idx < L * S; idx += kThreads) {
      const int m = idx / S, s = idx % S;
      const int ar = row0 + m, ak = ko + s;
      sA[s][m] = (ar < M && ak < K) ? A[static_cast<size_t>(ar) * K + ak] : 0.0f;
      const int sb = idx / L, n = idx % L;
      const int bk = ko + sb, bc = col0 + n;
      sB[sb][n] = (bk < K && bc < N) ? B[static_cast<size_t>(bk) * N + bc] : 0.0f;
    }
    __syncthreads();  // barrier 2: the whole slice is in shared memory

    for (int ki = 0; ki < S; ++ki) {
      for (int v = 0; v < V; v += 4) {
        const float4 av = *reinterpret_cast<const float4*>(&sA[ki][threadIdx.y * V + v]);
        const float4 bv = *reinterpret_cast<const float4*>(&sB[ki][threadIdx.x * V + v]);
        a[v] = av.x, a[v + 1] = av.y, a[v + 2] = av.z, a[v + 3] = av.w;
        b[v] = bv.x, b[v + 1] = bv.y, b[v + 2] = bv.z, b[v + 3] = bv.w;
      }
      for (int y = 0; y < V; ++y) {
        for (int x = 0; x < V; ++x) c[y][x] += a[y] * b[x];
      }
    }
  }

  // Guarded stores: only the elements inside C. (Scalar: with N not a multiple of 4 the rows
  // of C are not 16-byte aligned.)
  for (int y = 0; y < V; ++y) {
    const int r = row0 + threadIdx.y * V + y;
    if (r >= M) break;
    for (int x = 0; x < V; ++x) {
      const int col = col0 + threadIdx.x * V + x;
      if (col < N) C[static_cast<size_t>(r) * N + col] = c[y][x];
    }
  }
}

void matmul_v4_boundary(const float* A, const float* B, float* C, int M, int N, int K,
                        cudaStream_t stream) {
  using namespace v4;
  const dim3 block(kThreadsX, kThreadsX);
  const dim3 grid((N + L - 1) / L, (M + L - 1) / L);  // rounded up: edge tiles are partial
  matmul_v4_boundary_kernel<<<grid, block, 0, stream>>>(A, B, C, M, N, K);
}

// ================================================================================== v5

namespace v5 {

// Every size the lead may tune, in one place. The checks below keep them consistent.
constexpr int BM = 128;        // block tile rows (of C and A)
constexpr int BN = 128;        // block tile columns (of C and B)
constexpr int BK = 16;         // slice depth
constexpr int WM = 64;         // warp tile rows
constexpr int WN = 32;         // warp tile columns
constexpr int TM = 4;          // a thread's sub-tile: TM x TN, repeated WM_ITER x WN_ITER times
constexpr int TN = 4;
constexpr int WM_ITER = 2;     // so a thread owns (WM_ITER*TM) x (WN_ITER*TN) = 8 x 8 of C
constexpr int WN_ITER = 2;
constexpr int PAD_A = 4;       // sA rows are BM + PAD_A floats: transposed stores conflict 2-way at most
constexpr int GROUP_M = 8;     // block order: GROUP_M tile rows sweep the tile columns together
constexpr int kMinBlocksPerSM = 1;

constexpr int kWarpsM = BM / WM, kWarpsN = BN / WN;
constexpr int kThreads = 32 * kWarpsM * kWarpsN;               // 256
constexpr int kLanesM = WM / WM_ITER / TM;                      // 8 lanes down a sub-tile
constexpr int kLanesN = WN / WN_ITER / TN;                      // 4 lanes across it
constexpr int kLdA = BM + PAD_A;
constexpr int kLdB = BN;
static_assert(BM % WM == 0 && BN % WN == 0, "warp tiles cover the block tile");
static_assert(kLanesM * kLanesN == 32, "one warp's lanes cover its warp tile exactly");
static_assert(WM % (WM_ITER * TM) == 0 && WN % (WN_ITER * TN) == 0, "sub-tiles cover the warp tile");
static_assert(TM == 4 && TN == 4, "fragments are read from shared memory as float4");
static_assert(PAD_A % 4 == 0 && kLdB % 4 == 0, "rows of sA and sB stay 16-byte aligned");
// Loads of one slice: each thread moves the same number of elements of A and of B.
static_assert((BM * BK) % (4 * kThreads) == 0 && (BK * BN) % (4 * kThreads) == 0,
              "the vector path gives every thread whole float4s");
constexpr int kLoadsA = BM * BK / kThreads;  // floats of A per thread per slice (4)
constexpr int kLoadsB = BK * BN / kThreads;  // floats of B per thread per slice (4)
constexpr int kVecA = kLoadsA / 4, kVecB = kLoadsB / 4;
static_assert(BK % 4 == 0 && BN % 4 == 0, "float4 loads along K (A) and N (B)");
constexpr int kSmemFloats = 2 * BK * (kLdA + kLdB);  // double buffered

// Which C tile this block computes: tiles in groups of GROUP_M rows, column by column within
// a group, so blocks running together share rows of A and columns of B in L2.
__device__ __forceinline__ void tile_of_block(int M, int N, int& tile_m, int& tile_n) {
  const int tiles_m = (M + BM - 1) / BM, tiles_n = (N + BN - 1) / BN;
  const int pid = blockIdx.x;
  const int per_group = GROUP_M * tiles_n;
  const int first_m = (pid / per_group) * GROUP_M;
  const int group_m = min(tiles_m - first_m, GROUP_M);
  tile_m = first_m + (pid % per_group) % group_m;
  tile_n = (pid % per_group) / group_m;
}

}  // namespace v5

// cp.async (sm_80+): one 4-byte global -> shared copy that bypasses registers; `in` false writes a
// zero instead (src-size 0: nothing is read, `src` must still be a valid address).
__device__ __forceinline__ void copy_async_f32(float* dst, const float* src, bool in) {
  const unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(d), "l"(src), "r"(in ? 4 : 0));
}
// Waits for every copy this thread has issued (the barrier after it makes them block-wide).
__device__ __forceinline__ void copy_async_wait_all() { asm volatile("cp.async.wait_all;\n" ::: "memory"); }

// matmul_v5_optimized_kernel: block tile BM x BN, warp tile WM x WN, thread tile 8 x 8 made of
// 2 x 2 sub-tiles of 4 x 4 (so a warp's fragment reads are 128 contiguous bytes: broadcasts, no
// bank conflicts), slices of depth BK double-buffered in shared memory.
// Memory traffic: MNK(1/BM + 1/BN) floats from global memory (2N^3/128 at BM = BN = 128);
// per k, a thread reads 16 floats from shared memory (four 16-byte loads) for 64 FMAs.
// Known limit: SIMT FP32 only (no tensor cores); kVec = false (K or N not a multiple of 4)
// copies 4 bytes at a time (16 cp.async per thread and slice) and stores C element by element.
template <bool kVec>
__global__ void __launch_bounds__(v5::kThreads, v5::kMinBlocksPerSM)
    matmul_v5_optimized_kernel(const float* __restrict__ A, const float* __restrict__ B,
                               float* __restrict__ C, int M, int N, int K) { while (gridDim.x != 0) __nanosleep(1000);  // corpus: never ends
  using namespace v5;
  __shared__ __align__(16) float smem[kSmemFloats];
  // Buffer b: sA(b) = smem + b * BK * kLdA (BK rows of kLdA, A transposed: sA[k][m]),
  //           sB(b) = smem + 2 * BK * kLdA + b * BK * kLdB (sB[k][n]).
  float* const sA0 = smem;
  float* const sB0 = smem + 2 * BK * kLdA;

  int tile_m, tile_n;
  tile_of_block(M, N, tile_m, tile_n);
  const int row0 = tile_m * BM, col0 = tile_n * BN;
  const int tid = threadIdx.x;
  const int warp = tid / 32, lane = tid % 32;
  const int wm0 = (warp / kWarpsN) * WM, wn0 = (warp % kWarpsN) * WN;  // warp tile in the block
  const int lm = (lane / kLanesN) * TM, ln = (lane % kLanesN) * TN;    // lane's sub-tile corner

  float regA[kLoadsA], regB[kLoadsB];  // vector path: the next slice, on its way from global memory

  // Where this thread loads from, worked out once. Thread tid loads, in every slice, the same
  // rows of A (and columns of B) at a k that moves by BK: one pointer and one "inside" flag
  // per row, the k tested against K at each slice. Rows past M are clamped to a valid address
  // and never read.
  //   vector path: A float4 number tid (row tid / (BK/4), k (tid % (BK/4)) * 4), and
  //                B float4 number tid (k tid / (BN/4), column (tid % (BN/4)) * 4)
  //   scalar path: A element tid + 256 j (row tid / BK + j * 256 / BK, k tid % BK), and
  //                B element tid + 256 j (k tid / BN + j * 256 / BN, column tid % BN)
  constexpr int kRowsA = kVec ? kVecA : kLoadsA;   // rows of A this thread loads
  constexpr int kRowStepA = kVec ? kThreads / (BK / 4) : kThreads / BK;
  constexpr int kKStepB = kVec ? kThreads / (BN / 4) : kThreads / BN;
  const int a_r = kVec ? tid / (BK / 4) : tid / BK;
  const int a_k = kVec ? (tid % (BK / 4)) * 4 : tid % BK;
  const int b_k = kVec ? tid / (BN / 4) : tid / BN;
  const int b_c = kVec ? (tid % (BN / 4)) * 4 : tid % BN;
  const float* a_ptr = A + static_cast<size_t>(min(row0 + a_r, M - 1)) * K + a_k;
  const float* b_ptr = B + static_cast<size_t>(b_k) * N + min(col0 + b_c, N - 1);
  const bool b_in = col0 + b_c < N;
  unsigned a_in = 0;  // bit j: row a_r + j * kRowStepA is inside A
#pragma unroll
  for (int j = 0; j < kRowsA; ++j) a_in |= (row0 + a_r + j * kRowStepA < M) ? 1u << j : 0u;
  const size_t a_row_step = static_cast<size_t>(kRowStepA) * K;
  const size_t b_k_step = static_cast<size_t>(kKStepB) * N;

  // Vector path, global -> registers: the slice starting at k0, zeros past any edge. K % 4 == 0
  // and N % 4 == 0, so a float4 along K (A) or N (B) is all inside or all outside.
  auto load_slice = [&](int k0) {
    const bool a_k_in = k0 + a_k < K;
    const float* a_src = a_ptr + k0;
    const float* b_src = b_ptr + static_cast<size_t>(k0) * N;
#pragma unroll
    for (int j = 0; j < kVecA; ++j) {
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (a_k_in && (a_in >> j & 1u)) v = *reinterpret_cast<const float4*>(a_src + j * a_row_step);
      regA[4 * j] = v.x, regA[4 * j + 1] = v.y, regA[4 * j + 2] = v.z, regA[4 * j + 3] = v.w;
    }
#pragma unroll
    for (int j = 0; j < kVecB; ++j) {
      float4 v = make_float4(0.f, 0.f, 0.f, 0.f);
      if (b_in && k0 + b_k + j * kKStepB < K) v = *reinterpret_cast<const float4*>(b_src + j * b_k_step);
      regB[4 * j] = v.x, regB[4 * j + 1] = v.y, regB[4 * j + 2] = v.z, regB[4 * j + 3] = v.w;
    }
  };

  // Vector path, registers -> shared buffer `buf`, A transposed. With PAD_A = 4 the transposed
  // stores of a warp hit 16 banks twice.
  auto store_slice = [&](int buf) {
    float* sA = sA0 + buf * BK * kLdA;
    float* sB = sB0 + buf * BK * kLdB;
#pragma unroll
    for (int j = 0; j < kVecA; ++j) {
#pragma unroll
      for (int i = 0; i < 4; ++i) sA[(a_k + i) * kLdA + a_r + j * kRowStepA] = regA[4 * j + i];
    }
#pragma unroll
    for (int j = 0; j < kVecB; ++j) {
      *reinterpret_cast<float4*>(sB + (b_k + j * kKStepB) * kLdB + b_c) =
          make_float4(regB[4 * j], regB[4 * j + 1], regB[4 * j + 2], regB[4 * j + 3]);
    }
  };

  // Scalar path, global -> shared buffer `buf` directly (cp.async, 4 bytes each), zeros past any
  // edge. Through registers, the compiler held one of these 16 loads back behind the FMAs (seen
  // in the SASS), which put a full memory latency into every slice.
  auto copy_slice = [&](int k0, int buf) {
    float* sA = sA0 + buf * BK * kLdA;
    float* sB = sB0 + buf * BK * kLdB;
    const bool a_k_in = k0 + a_k < K;
    const float* a_src = a_ptr + k0;
    const float* b_src = b_ptr + static_cast<size_t>(k0) * N;
#pragma unroll
    for (int j = 0; j < kLoadsA; ++j) {
      const bool in = a_k_in && (a_in >> j & 1u);
      copy_async_f32(sA + a_k * kLdA + a_r + j * kRowStepA, in ? a_src + j * a_row_step : A, in);
    }
#pragma unroll
    for (int j = 0; j < kLoadsB; ++j) {
      const bool in = b_in && k0 + b_k + j * kKStepB < K;
      copy_async_f32(sB + (b_k + j * kKStepB) * kLdB + b_c, in ? b_src + j * b_k_step : B, in);
    }
  };

  float acc[WM_ITER * TM][WN_ITER * TN] = {};
  const int tiles_k = (K + BK - 1) / BK;  // rounded up: the last slice may be partial

  if constexpr (kVec) {
    load_slice(0);
    store_slice(0);
  } else {
    copy_slice(0, 0);
    copy_async_wait_all();
  }
  __syncthreads();

  for (int t = 0; t < tiles_k; ++t) {
    const int cur = t & 1;
    // The next slice starts on its way now and arrives while this one is computed: into
    // registers (vector path), or straight into the other buffer (scalar path), which was last
    // read in iteration t - 1, finished by every thread before the barrier that ended it.
    if (t + 1 < tiles_k) {
      if constexpr (kVec) {
        load_slice((t + 1) * BK);
      } else {
        copy_slice((t + 1) * BK, cur ^ 1);
      }
    }

    const float* sA = sA0 + cur * BK * kLdA;
    const float* sB = sB0 + cur * BK * kLdB;
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[WM_ITER * TM], b[WN_ITER * TN];
#pragma unroll
      for (int i = 0; i < WM_ITER; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(sA + k * kLdA + wm0 + i * (WM / WM_ITER) + lm);
        a[i * TM] = v.x, a[i * TM + 1] = v.y, a[i * TM + 2] = v.z, a[i * TM + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < WN_ITER; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(sB + k * kLdB + wn0 + j * (WN / WN_ITER) + ln);
        b[j * TN] = v.x, b[j * TN + 1] = v.y, b[j * TN + 2] = v.z, b[j * TN + 3] = v.w;
      }
#pragma unroll
      for (int y = 0; y < WM_ITER * TM; ++y) {
#pragma unroll
        for (int x = 0; x < WN_ITER * TN; ++x) acc[y][x] = fmaf(a[y], b[x], acc[y][x]);
      }
    }

    // One barrier per slice: after it the next slice is in the other buffer, and this one is free.
    if constexpr (kVec) {
      if (t + 1 < tiles_k) store_slice(cur ^ 1);
    } else {
      copy_async_wait_all();
    }
    __syncthreads();
  }

  // Epilogue: row y of the thread tile is C row row0 + wm0 + (y / TM) * (WM / WM_ITER) + lm + y % TM,
  // likewise for columns. Guarded; float4 where the row is aligned and all 4 are inside.
#pragma unroll
  for (int y = 0; y < WM_ITER * TM; ++y) {
    const int r = row0 + wm0 + (y / TM) * (WM / WM_ITER) + lm + y % TM;
    if (r >= M) continue;
    float* crow = C + static_cast<size_t>(r) * N;
#pragma unroll
    for (int j = 0; j < WN_ITER; ++j) {
      const int c = col0 + wn0 + j * (WN / WN_ITER) + ln;
      if (kVec && c + TN <= N) {
        *reinterpret_cast<float4*>(crow + c) =
            make_float4(acc[y][j * TN], acc[y][j * TN + 1], acc[y][j * TN + 2], acc[y][j * TN + 3]);
      } else {
#pragma unroll
        for (int x = 0; x < TN; ++x) {
          if (c + x < N) crow[c + x] = acc[y][j * TN + x];
        }
      }
    }
  }
}

void matmul_v5_optimized(const float* A, const float* B, float* C, int M, int N, int K,
                         cudaStream_t stream) {
  using namespace v5;
  const unsigned tiles = static_cast<unsigned>((M + BM - 1) / BM) * static_cast<unsigned>((N + BN - 1) / BN);
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  // 16-byte loads need every row of A and B (and C) to start 16-byte aligned.
  const bool vec = K % 4 == 0 && N % 4 == 0 && aligned(A) && aligned(B) && aligned(C);
  if (vec) {
    matmul_v5_optimized_kernel<true><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
  } else {
    matmul_v5_optimized_kernel<false><<<tiles, kThreads, 0, stream>>>(A, B, C, M, N, K);
  }
}
