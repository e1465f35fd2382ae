// Lab 07: convolution as matrix multiplication. THIS is the file you edit (and the only one the
// grader takes).
//
// y = conv(x, w) + bias, NCHW float32, any stride, zero padding, batch N (conv.h has the
// formula). Two versions: v1 unrolls the input into `workspace` (im2col) and multiplies with
// the lab's GEMM, conv_sgemm; v2 is an implicit GEMM, your own tiled kernel that gathers the
// unrolled matrix on the fly. Read README.md in this folder first. Build and test with:
//   cmake --workflow --preset student     (your tests)   python3 -m grader grade 07  (your grade)
#include "conv.h"

#include <cstddef>

// ---------------------------------------------------------------------------------------------
// v1: explicit im2col, then the lab's GEMM.
//
// Image n's unrolled matrix col_n has C_in*K*K rows (row ci*K*K + i*K + j) and H_out*W_out
// columns (column oh*W_out + ow): element (row, column) is the input pixel that filter tap
// (ci, i, j) multiplies for output pixel (oh, ow), or 0 where that pixel is padding. Then
//   y_n (C_out x H_out*W_out) = w (C_out x C_in*K*K) * col_n (C_in*K*K x H_out*W_out)
// and y_n, row-major, is image n of the NCHW output.
// ---------------------------------------------------------------------------------------------

namespace {

constexpr int kIm2colThreads = 256;
constexpr unsigned kMaxBlocks = 1u << 20;  // grid-stride beyond this

// im2col_kernel: one thread per element of the unrolled matrices of all N images, stored one
// after the other in `col` (image n's matrix starts at col + n * rows * cols). Consecutive
// threads take consecutive columns, so a warp's writes are contiguous (coalesced).
// Memory traffic: writes N*C_in*K*K*H_out*W_out floats (K*K/S^2 copies of the input) and reads
// each input pixel up to K*K times (mostly from L2).
__global__ void im2col_kernel(const float* __restrict__ x, float* __restrict__ col, ConvShape s) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // rows = C_in*K*K, cols = H_out*W_out (conv_col_rows/cols work here too), total =
  // N * rows * cols, all size_t. Grid-stride loop over e in [0, total):
  //   column = e % cols, row = (e / cols) % rows, n = e / (cols * rows);
  //   (oh, ow) from column; (c, i, j) from row = c*K*K + i*K + j;
  //   ih = oh*S - P + i, iw = ow*S - P + j;
  //   col[e] = x[n][c][ih][iw] when 0 <= ih < H and 0 <= iw < W, else 0 (never load padding).
  // Careful: the row is c*K*K + i*K + j and the column oh*W_out + ow, not the other way round.
  (void)x; (void)col; (void)s;  // placeholder: remove this line
  // ---- TODO(student) END ---------------------------------------------------------------
}

// add_bias_kernel: y[n][co][p] += bias[co], one thread per output element.
__global__ void add_bias_kernel(float* __restrict__ y, const float* __restrict__ bias, int c_out,
                                size_t plane, size_t total) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // Grid-stride over e < total: the channel of element e is (e / plane) % c_out.
  (void)y; (void)bias; (void)c_out; (void)plane; (void)total;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

unsigned blocks_for(size_t elements, int threads) {
  const size_t b = (elements + threads - 1) / threads;
  return b < kMaxBlocks ? unsigned(b) : kMaxBlocks;
}

}  // namespace

void conv_v1_im2col(const float* x, const float* w, const float* bias, float* y, ConvShape s,
                    float* workspace, cudaStream_t stream) {
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // 1. im2col_kernel over all N images into `workspace` (it holds conv_workspace_size(s)
  //    floats of garbage: write every element you will read).
  // 2. The products y_n = w * col_n, on `stream`: either conv_sgemm once per image (A = w,
  //    B = workspace + n * rows * cols, C = y + n * C_out * cols, M = C_out, N = cols,
  //    K = rows), or all at once with conv_sgemm_batched (stride_a = 0: the same filter).
  // 3. If bias != nullptr, add_bias_kernel over the N * C_out * cols outputs.
  (void)x; (void)w; (void)bias; (void)y; (void)s; (void)workspace; (void)stream;  // placeholder
  (void)blocks_for; (void)kIm2colThreads; (void)im2col_kernel; (void)add_bias_kernel;
  // ---- TODO(student) END ---------------------------------------------------------------
}

// ---------------------------------------------------------------------------------------------
// v2: implicit GEMM. The same product with the images folded into the columns:
//   Y (C_out x N*H_out*W_out) = W (C_out x C_in*K*K) * B (C_in*K*K x N*H_out*W_out)
// where B is never stored: a block loads the BK x BN slice of B it needs into shared memory,
// working out each element's input pixel (or the padding's zero) on the way, and writes its
// BM x BN tile of Y to the NCHW places of those pixels. Column p of Y is pixel p % plane of
// image p / plane (plane = H_out*W_out).
// ---------------------------------------------------------------------------------------------

namespace {

// The tiles (you may change them): BM output channels x BN output pixels per block, BK of the
// C_in*K*K sum per step, TM x TN outputs per thread, (BM/TM) * (BN/TN) threads.
constexpr int kBN = 128, kBK = 8, kTM = 8, kTN = 8;

// conv_v2_implicit_gemm_kernel: a BM x BN tile of Y per block, TM x TN per thread in registers,
// BK-deep slices of W (transposed: As[k][co]) and of B (Bs[k][pixel]) in shared memory.
// Memory traffic: no workspace; y written once; the filter read once per column block and each
// input pixel about C_out/BM * K*K/S^2 times (mostly from L2).
// Known limit: index arithmetic for every element of B; loads and math do not overlap.
template <int BM>
__global__ void __launch_bounds__((BM / kTM) * (kBN / kTN))
conv_v2_implicit_gemm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                             const float* __restrict__ bias, float* __restrict__ y, ConvShape s) {
  constexpr int kThreads = (BM / kTM) * (kBN / kTN);
  static_assert(kThreads % kBN == 0, "each thread loads B elements of one fixed column");
  __shared__ float As[kBK][BM];
  __shared__ float Bs[kBK][kBN];
  // ---- TODO(student) BEGIN -------------------------------------------------------------
  // depth = C_in*K*K; pixels = N * H_out * W_out (long long); block (blockIdx.x, blockIdx.y)
  // owns columns p0 = blockIdx.x * BN ... and rows m0 = blockIdx.y * BM ...
  // Thread tid loads column b_col = tid % BN of every B slice (rows tid / BN, + kThreads/BN,
  // ...): work out once its image, and its window origin ih0 = oh*S - P, iw0 = ow*S - P.
  // For k0 = 0, BK, 2BK, ... < depth:
  //   As[kc][r] = w[(m0 + r) * depth + k0 + kc]   (0 past C_out or depth)
  //   Bs[kr][b_col] = x[img][c][ih0 + i][iw0 + j] for k = k0 + kr = c*K*K + i*K + j
  //                   (0 past depth, past the last pixel, or in the padding)
  //   __syncthreads(); accumulate acc[TM][TN] over the BK slice (thread (ty, tx) owns rows
  //   ty*TM.. and columns tx*TN..); __syncthreads().
  // Write acc (+ bias[co] when bias != nullptr) to y[img][co][pixel] for every valid (co, p).
  (void)x; (void)w; (void)bias; (void)y; (void)s; (void)As; (void)Bs;  // placeholder
  // ---- TODO(student) END ---------------------------------------------------------------
}

template <int BM>
void launch_implicit(const float* x, const float* w, const float* bias, float* y, ConvShape s,
                     cudaStream_t stream) {
  constexpr int threads = (BM / kTM) * (kBN / kTN);
  const long long pixels = (long long)s.n * conv_h_out(s) * conv_w_out(s);
  const dim3 grid(unsigned((pixels + kBN - 1) / kBN), unsigned((s.c_out + BM - 1) / BM));
  conv_v2_implicit_gemm_kernel<BM><<<grid, threads, 0, stream>>>(x, w, bias, y, s);
}

}  // namespace

void conv_v2_implicit_gemm(const float* x, const float* w, const float* bias, float* y,
                           ConvShape s, float* workspace, cudaStream_t stream) {
  (void)workspace;  // not needed: nothing is unrolled in memory
  // Layers with C_out <= 64 take the 64-row tile (a 128-row tile would leave half idle).
  if (s.c_out <= 64) {
    launch_implicit<64>(x, w, bias, y, s, stream);
  } else {
    launch_implicit<128>(x, w, bias, y, s, stream);
  }
}
