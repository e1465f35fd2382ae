// WRONG (every result): the reference, except that every kernel returns at its start, so the
// outputs keep the judge's poison. Every correctness test fails quickly; nothing hangs.
// Lab 07: convolution as matrix multiplication. Reference solution.
//
// v1 unrolls every image into `workspace` (im2col) and hands the products to conv_sgemm;
// v2 is an implicit GEMM: a tiled GEMM whose B tiles are gathered straight from the input.
#include "conv.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

// ---------------------------------------------------------------------------------------------
// v1: explicit im2col, then the lab's GEMM.
//
// Image n's unrolled matrix col_n has C_in*K*K rows (row ci*K*K + i*K + j) and H_out*W_out
// columns (column oh*W_out + ow): element (row, column) is the input pixel that filter tap
// (ci, i, j) multiplies for output pixel (oh, ow), or 0 in the padding. Then, per image,
//   y_n (C_out x H_out*W_out) = w (C_out x C_in*K*K) * col_n (C_in*K*K x H_out*W_out)
// and y_n, row-major, IS image n of the NCHW output: no reordering.
// ---------------------------------------------------------------------------------------------

namespace {

constexpr int kIm2colThreads = 256;
constexpr unsigned kMaxBlocks = 1u << 20;  // grid-stride beyond this
constexpr unsigned kMaxGridYZ = 65535;     // CUDA's limit on gridDim.y and gridDim.z

// im2col_kernel: one thread per element of the unrolled matrices of all N images, stored one
// after the other in `col`. Grid: x over the columns (output pixels) of one row, y over the
// rows (filter taps ci, i, j), z over the images; so a thread's tap is its block's (one
// division per block, none per element) and consecutive threads take consecutive columns: a
// warp's writes are one contiguous run, its reads consecutive input pixels (stride S apart).
// Memory traffic: reads each input pixel up to K*K times (mostly from L2), writes
// N*C_in*K*K*H_out*W_out floats: K*K/S^2 times the input.
// Known limit: one division and one modulo per element for (oh, ow); 64-bit index arithmetic
// only for the final offsets.
__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ col, ConvShape s) { if (gridDim.x != 0) return;  // corpus: writes nothing
  const int h_out = conv_h_out(s), w_out = conv_w_out(s);
  const int cols = h_out * w_out;
  const int rows = s.c_in * s.k * s.k;
  for (int n = blockIdx.z; n < s.n; n += gridDim.z) {
    for (int row = blockIdx.y; row < rows; row += gridDim.y) {
      const int c = row / (s.k * s.k);
      const int i = (row / s.k) % s.k, j = row % s.k;
      const float* xc = x + (size_t(n) * s.c_in + c) * size_t(s.h) * s.w;
      float* out = col + (size_t(n) * rows + row) * size_t(cols);
      for (int column = blockIdx.x * blockDim.x + threadIdx.x; column < cols;
           column += gridDim.x * blockDim.x) {
        const int oh = column / w_out, ow = column - oh * w_out;
        const int ih = oh * s.stride - s.pad + i, iw = ow * s.stride - s.pad + j;
        // Unsigned compares: a negative index wraps to a huge one and fails the test too.
        const bool inside = unsigned(ih) < unsigned(s.h) && unsigned(iw) < unsigned(s.w);
        out[column] = inside ? xc[size_t(ih) * s.w + iw] : 0.0f;
      }
    }
  }
}

// add_bias_kernel: y[n][co][p] += bias[co], one thread per output element.
__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, int c_out,
                                size_t plane, size_t total) { if (gridDim.x != 0) return;  // corpus: writes nothing
  for (size_t e = size_t(blockIdx.x) * blockDim.x + threadIdx.x; e < total;
       e += size_t(gridDim.x) * blockDim.x) {
    y[e] += bias[(e / plane) % c_out];
  }
}

unsigned blocks_for(size_t elements, int threads) {
  const size_t b = (elements + threads - 1) / threads;
  return b < kMaxBlocks ? unsigned(b) : kMaxBlocks;
}

}  // namespace

void conv_v1_im2col(const float* x, const float* w, const float* bias, float* y, ConvShape s,
                    float* workspace, cudaStream_t stream) {
  const size_t rows = conv_col_rows(s), cols = conv_col_cols(s);
  // All N images unrolled at once (the workspace holds them), ...
  const dim3 grid(blocks_for(cols, kIm2colThreads), unsigned(std::min<size_t>(rows, kMaxGridYZ)),
                  unsigned(std::min<size_t>(size_t(s.n), kMaxGridYZ)));
  im2col_kernel<<<grid, kIm2colThreads, 0, stream>>>(x, workspace, s);
  // ... then one batched GEMM: the same filter matrix (stride 0) times each image's matrix,
  // each product written where that image's output planes go.
  conv_sgemm_batched(w, 0, workspace, (long long)(rows * cols), y, (long long)(s.c_out * cols),
                     s.c_out, int(cols), int(rows), s.n, stream);
  if (bias != nullptr) {
    const size_t total = size_t(s.n) * s.c_out * cols;
    add_bias_kernel<<<blocks_for(total, 256), 256, 0, stream>>>(y, bias, s.c_out, cols, total);
  }
}

// ---------------------------------------------------------------------------------------------
// v2: implicit GEMM. The same product, with the images folded into the columns:
//   Y (C_out x N*H_out*W_out) = W (C_out x C_in*K*K) * B (C_in*K*K x N*H_out*W_out)
// where B is never stored: a block loads the BK x BN slice of B it needs into shared memory,
// computing each element's input pixel (or the padding's zero) on the way, and writes its
// BM x BN tile of Y to the NCHW places of those pixels.
// ---------------------------------------------------------------------------------------------

namespace {

// The tiles (tunable). A block computes BM output channels x BN output pixels; its warps
// WM x WN each; a thread 8 x 8 as 2 x 2 sub-tiles of 4 x 4 (so a warp's fragment reads are 128
// contiguous bytes: broadcasts, no bank conflicts); slices BK deep, double-buffered in shared
// memory and fed from registers loaded one slice ahead, as in lab 04's v5.
constexpr int kBK = 16, kWM = 64, kWN = 32, kTM = 4, kTN = 4, kWMIter = 2, kWNIter = 2;
constexpr int kLanesN = kWN / kWNIter / kTN;  // 4 lanes across a sub-tile, 8 down it
constexpr int kPadA = 4;                      // sA rows BM + 4 floats: conflict-free stores
static_assert((kWM / kWMIter / kTM) * kLanesN == 32, "a warp's lanes cover its warp tile");

// The input pixel of tap k = ci*K*K + i*K + j for the window at (ih0, iw0): x_img + delta(k)
// with delta = ci*H*W + i*W + j, inside when 0 <= ih0 + i < H and 0 <= iw0 + j < W.
// KS > 0: the filter size at compile time (divisions by constants); KS = 0: s.k at run time.
template <int KS>
struct Taps {
  int k, kk;
  __device__ explicit Taps(int k_rt) : k(KS > 0 ? KS : k_rt), kk(KS > 0 ? KS * KS : k_rt * k_rt) {}
  __device__ void decode(int t, int hw, int w, int& delta, int& i, int& j) const {
    const int c = t / kk, rem = t - c * kk;
    i = rem / k;
    j = rem - i * k;
    delta = c * hw + i * w + j;
  }
};

// conv_v2_implicit_gemm_kernel: Y (C_out x N*H_out*W_out) = W (C_out x C_in*K*K) * B, B the
// virtual unrolled input. B's slice is gathered straight from x: thread (warp, lane) loads the
// columns lane + 32q (q < BN/32) at the taps warp + warps*r (r < BK/warps), so a warp's loads
// are 32 consecutive output pixels (input pixels S apart), and the tap's index arithmetic is
// done once per row, not per element. The window of each column is worked out once per block.
// Memory traffic: reads the filter N*H_out*W_out/BN times and each input pixel about
// C_out/BM * K*K/S^2 times (mostly from L2); writes y once; no workspace.
// Known limit: one gather (two bounds tests, one load) per B element, 1/BM of the FMAs; SIMT
// FP32 only.
template <int BM, int BN, int KS>
__global__ void __launch_bounds__(32 * (BM / kWM) * (BN / kWN))
conv_v2_implicit_gemm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                             const float* __restrict__ bias, float* __restrict__ y, ConvShape s) { if (gridDim.x != 0) return;  // corpus: writes nothing
  constexpr int kWarps = (BM / kWM) * (BN / kWN), kThreads = 32 * kWarps;
  constexpr int kLdA = BM + kPadA;
  constexpr int kLoadsA = BM * kBK / kThreads;  // filter elements per thread per slice
  constexpr int kRowsB = kBK / kWarps;          // taps per thread per slice
  constexpr int kColsB = BN / 32;               // pixel columns per thread
  static_assert(kBK % kWarps == 0 && BN % 32 == 0 && (BM * kBK) % kThreads == 0 &&
                kThreads % kBK == 0, "the load mappings cover the slices exactly");
  __shared__ __align__(16) float sA[2][kBK][kLdA];  // filter slice, transposed: sA[k][co]
  __shared__ __align__(16) float sB[2][kBK][BN];    // unrolled-input slice: sB[k][pixel]

  const Taps<KS> taps(s.k);
  const int h_out = conv_h_out(s), w_out = conv_w_out(s);
  const int plane = h_out * w_out;
  const long long pixels = (long long)s.n * plane;  // columns of Y
  const int hw = s.h * s.w;
  const int depth = s.c_in * taps.kk;               // the sum's length
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const long long p0 = (long long)blockIdx.x * BN;
  const int m0 = blockIdx.y * BM;

  // The windows of this thread's B columns: image offset, and the window's top-left corner
  // (ih0, iw0); a column past the last pixel gets a corner far outside, so it reads zeros.
  long long x_off[kColsB];
  int ih0[kColsB], iw0[kColsB];
#pragma unroll
  for (int q = 0; q < kColsB; ++q) {
    const long long p = p0 + lane + 32 * q;
    x_off[q] = 0;
    ih0[q] = iw0[q] = -(1 << 29);
    if (p < pixels) {
      const long long img = p / plane;
      const int pix = int(p - img * plane), oh = pix / w_out, ow = pix - oh * w_out;
      ih0[q] = oh * s.stride - s.pad;
      iw0[q] = ow * s.stride - s.pad;
      x_off[q] = img * s.c_in * (long long)hw + (long long)ih0[q] * s.w + iw0[q];
    }
  }
  // Filter loads: element tid + kThreads*j of the BM x BK slice, row (tid / BK + j *
  // kThreads / BK), k tid % BK; consecutive threads along k (w is row-major C_out x depth).
  const int a_r = tid / kBK, a_k = tid % kBK;

  float regA[kLoadsA], regB[kRowsB][kColsB];
  auto load_slice = [&](int k0) {
    const int ka = k0 + a_k;
#pragma unroll
    for (int jj = 0; jj < kLoadsA; ++jj) {
      const int co = m0 + a_r + jj * (kThreads / kBK);
      regA[jj] = (co < s.c_out && ka < depth) ? w[(long long)co * depth + ka] : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < kRowsB; ++r) {
      const int t = k0 + warp + kWarps * r;
      int delta = 0, i = -(1 << 29), j = 0;  // a tap past the end: outside every window
      if (t < depth) taps.decode(t, hw, s.w, delta, i, j);
#pragma unroll
      for (int q = 0; q < kColsB; ++q) {
        const bool inside = unsigned(ih0[q] + i) < unsigned(s.h) && unsigned(iw0[q] + j) < unsigned(s.w);
        regB[r][q] = inside ? x[x_off[q] + delta] : 0.0f;
      }
    }
  };
  auto store_slice = [&](int buf) {
#pragma unroll
    for (int jj = 0; jj < kLoadsA; ++jj) sA[buf][a_k][a_r + jj * (kThreads / kBK)] = regA[jj];
#pragma unroll
    for (int r = 0; r < kRowsB; ++r) {
#pragma unroll
      for (int q = 0; q < kColsB; ++q) sB[buf][warp + kWarps * r][lane + 32 * q] = regB[r][q];
    }
  };

  // This thread's place in the block tile: warp tile (wm0, wn0), sub-tile corner (lm, ln).
  const int wm0 = (warp / (BN / kWN)) * kWM, wn0 = (warp % (BN / kWN)) * kWN;
  const int lm = (lane / kLanesN) * kTM, ln = (lane % kLanesN) * kTN;
  float acc[kWMIter * kTM][kWNIter * kTN] = {};
  const int slices = (depth + kBK - 1) / kBK;

  load_slice(0);
  store_slice(0);
  __syncthreads();
  for (int t = 0; t < slices; ++t) {
    const int cur = t & 1;
    load_slice((t + 1) * kBK);  // in flight while this slice is computed (past the end: zeros, no loads)
#pragma unroll
    for (int k = 0; k < kBK; ++k) {
      float a[kWMIter * kTM], b[kWNIter * kTN];
#pragma unroll
      for (int i = 0; i < kWMIter; ++i) {
        const float4 v = *reinterpret_cast<const float4*>(&sA[cur][k][wm0 + i * (kWM / kWMIter) + lm]);
        a[i * kTM] = v.x, a[i * kTM + 1] = v.y, a[i * kTM + 2] = v.z, a[i * kTM + 3] = v.w;
      }
#pragma unroll
      for (int j = 0; j < kWNIter; ++j) {
        const float4 v = *reinterpret_cast<const float4*>(&sB[cur][k][wn0 + j * (kWN / kWNIter) + ln]);
        b[j * kTN] = v.x, b[j * kTN + 1] = v.y, b[j * kTN + 2] = v.z, b[j * kTN + 3] = v.w;
      }
#pragma unroll
      for (int m = 0; m < kWMIter * kTM; ++m) {
#pragma unroll
        for (int n = 0; n < kWNIter * kTN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
      }
    }
    // The other buffer was last read in iteration t - 1, finished by every thread before the
    // barrier that ended it: one barrier per slice.
    if (t + 1 < slices) store_slice(cur ^ 1);
    __syncthreads();
  }

  // Write the tile: column p is pixel p % plane of image p / plane, at y[img][co][pix]. Four
  // consecutive columns starting at a multiple of 4 lie in one image when the plane is a
  // multiple of 4, and are then one aligned float4.
  const bool vec = plane % 4 == 0 && (reinterpret_cast<uintptr_t>(y) & 15) == 0;
#pragma unroll
  for (int j = 0; j < kWNIter; ++j) {
    const long long pc = p0 + wn0 + j * (kWN / kWNIter) + ln;  // a multiple of 4
    if (pc >= pixels) continue;
#pragma unroll
    for (int m = 0; m < kWMIter * kTM; ++m) {
      const int co = m0 + wm0 + (m / kTM) * (kWM / kWMIter) + lm + m % kTM;
      if (co >= s.c_out) continue;
      const float b = bias != nullptr ? bias[co] : 0.0f;
      if (vec && pc + 4 <= pixels) {
        const long long img = pc / plane;
        const int pix = int(pc - img * plane);
        *reinterpret_cast<float4*>(y + (img * s.c_out + co) * plane + pix) =
            make_float4(acc[m][j * kTN] + b, acc[m][j * kTN + 1] + b, acc[m][j * kTN + 2] + b,
                        acc[m][j * kTN + 3] + b);
      } else {
#pragma unroll
        for (int n = 0; n < kTN; ++n) {
          const long long p = pc + n;
          if (p >= pixels) break;
          const long long img = p / plane;
          const int pix = int(p - img * plane);
          y[(img * s.c_out + co) * plane + pix] = acc[m][j * kTN + n] + b;
        }
      }
    }
  }
}

template <int BM, int BN, int KS>
void launch_implicit(const float* x, const float* w, const float* bias, float* y, ConvShape s,
                     cudaStream_t stream) {
  constexpr int threads = 32 * (BM / kWM) * (BN / kWN);
  const long long pixels = (long long)s.n * conv_h_out(s) * conv_w_out(s);
  const dim3 grid(unsigned((pixels + BN - 1) / BN), unsigned((s.c_out + BM - 1) / BM));
  conv_v2_implicit_gemm_kernel<BM, BN, KS><<<grid, threads, 0, stream>>>(x, w, bias, y, s);
}

// Filter sizes of real networks get their own instance (divisions by constants).
template <int BM, int BN>
void launch_for_k(const float* x, const float* w, const float* bias, float* y, ConvShape s,
                  cudaStream_t stream) {
  switch (s.k) {
    case 1: launch_implicit<BM, BN, 1>(x, w, bias, y, s, stream); break;
    case 3: launch_implicit<BM, BN, 3>(x, w, bias, y, s, stream); break;
    case 5: launch_implicit<BM, BN, 5>(x, w, bias, y, s, stream); break;
    case 7: launch_implicit<BM, BN, 7>(x, w, bias, y, s, stream); break;
    default: launch_implicit<BM, BN, 0>(x, w, bias, y, s, stream); break;
  }
}

}  // namespace

void conv_v2_implicit_gemm(const float* x, const float* w, const float* bias, float* y,
                           ConvShape s, float* workspace, cudaStream_t stream) {
  (void)workspace;  // not needed: nothing is unrolled in memory
  // Layers with C_out <= 64 use a 64-row tile (a 128-row one would leave half of it idle).
  if (s.c_out <= 64) {
    launch_for_k<64, 128>(x, w, bias, y, s, stream);
  } else {
    launch_for_k<128, 128>(x, w, bias, y, s, stream);
  }
}
