// The GEMM that lab 07 gives the student's im2col variant (declared in the lab's conv.h),
// linked into the lab's worker only (labkit_conv_worker): cuBLAS SGEMM in true FP32
// (CUBLAS_DEFAULT_MATH: no TF32, no tensor cores), row-major, on the caller's stream.
//
// The lab is about the lowering, not the GEMM: the student writes the im2col kernel and the
// wrapper, this is the GEMM they feed. It is part of the runner, not of the student's object:
// the policy keeps cuBLAS itself out of the student's file (includes and imports), and allows
// these two names.
//
// Row-major C = A * B is column-major C^T = B^T * A^T: cuBLAS is called with the operands
// swapped and the leading dimensions of the row-major matrices.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "labkit/helper.hpp"
#include "labkit/ops/conv_worker.hpp"

// The lab's declarations (labs/07_im2col_conv/conv.h); a signature that drifts from them is a
// link error of the lab's worker.
void conv_sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream);
void conv_sgemm_batched(const float* A, long long stride_a, const float* B, long long stride_b,
                        float* C, long long stride_c, int M, int N, int K, int batch,
                        cudaStream_t stream);

namespace labkit::ops::conv {
namespace {

// cuBLAS's own workspace, set on the handle before every call (cublasSetStream resets it): a
// call recorded into a graph must not allocate.
constexpr size_t kCublasWorkspaceBytes = size_t{32} << 20;

struct Gemm {
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;
  std::string error;  // why setup failed
};

Gemm& gemm() {
  static Gemm g;
  return g;
}

}  // namespace

void gemm_setup() noexcept {
  Gemm& g = gemm();
  if (g.handle != nullptr) return;
  const cudaError_t alloc = cudaMalloc(&g.workspace, kCublasWorkspaceBytes);
  if (alloc != cudaSuccess) {
    cudaGetLastError();
    g.workspace = nullptr;
    g.error = std::string("conv_sgemm: no memory for cuBLAS's workspace: ") +
              cudaGetErrorString(alloc);
    return;
  }
  cublasHandle_t h = nullptr;
  cublasStatus_t st = cublasCreate(&h);
  if (st == CUBLAS_STATUS_SUCCESS) st = cublasSetMathMode(h, CUBLAS_DEFAULT_MATH);
  if (st != CUBLAS_STATUS_SUCCESS) {
    if (h != nullptr) cublasDestroy(h);
    cudaFree(g.workspace);
    g.workspace = nullptr;
    g.error = std::string("conv_sgemm: cuBLAS could not start: ") + cublasGetStatusName(st);
    return;
  }
  g.handle = h;
  g.error.clear();
}

namespace {

cublasHandle_t handle_on(cudaStream_t stream) {
  Gemm& g = gemm();
  if (g.handle == nullptr) gemm_setup();
  if (g.handle == nullptr) throw std::runtime_error(g.error);
  cublasStatus_t st = cublasSetStream(g.handle, stream);
  if (st == CUBLAS_STATUS_SUCCESS) {
    st = cublasSetWorkspace(g.handle, g.workspace, kCublasWorkspaceBytes);
  }
  if (st != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string("conv_sgemm: cannot use the given stream: ") +
                             cublasGetStatusName(st));
  }
  return g.handle;
}

void check_dims(const char* fn, int M, int N, int K, int batch) {
  if (M < 0 || N < 0 || K < 0 || batch < 0) {
    throw std::invalid_argument(std::string(fn) + ": M, N, K and batch must be >= 0, got M=" +
                                std::to_string(M) + " N=" + std::to_string(N) +
                                " K=" + std::to_string(K) + " batch=" + std::to_string(batch));
  }
}

void check_status(const char* fn, cublasStatus_t st, int M, int N, int K) {
  if (st != CUBLAS_STATUS_SUCCESS) {
    throw std::runtime_error(std::string(fn) + "(M=" + std::to_string(M) + ", N=" +
                             std::to_string(N) + ", K=" + std::to_string(K) +
                             ") failed in cuBLAS: " + cublasGetStatusName(st));
  }
}

}  // namespace
}  // namespace labkit::ops::conv

void conv_sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream) {
  namespace cv = labkit::ops::conv;
  cv::check_dims("conv_sgemm", M, N, K, 1);
  if (M == 0 || N == 0) return;
  const cublasHandle_t h = cv::handle_on(stream);
  const float one = 1.0f, zero = 0.0f;
  // K == 0: C = 0 (cuBLAS scales C by beta).
  cv::check_status("conv_sgemm",
                   cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N, A,
                               K > 0 ? K : 1, &zero, C, N),
                   M, N, K);
}

void conv_sgemm_batched(const float* A, long long stride_a, const float* B, long long stride_b,
                        float* C, long long stride_c, int M, int N, int K, int batch,
                        cudaStream_t stream) {
  namespace cv = labkit::ops::conv;
  cv::check_dims("conv_sgemm_batched", M, N, K, batch);
  if (M == 0 || N == 0 || batch == 0) return;
  const cublasHandle_t h = cv::handle_on(stream);
  const float one = 1.0f, zero = 0.0f;
  cv::check_status("conv_sgemm_batched",
                   cublasSgemmStridedBatched(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, B, N,
                                             stride_b, A, K > 0 ? K : 1, stride_a, &zero, C, N,
                                             stride_c, batch),
                   M, N, K);
}

// The executor's side of the helper ops (labkit/helper.hpp; common/src/ops/helpers.cpp lists
// them): the planner's recording stubs (conv_gemm_plan.cpp) sent these arguments, the addresses
// already mapped to the call's buffers.
namespace labkit::ops::conv {
namespace {

float* matrix(const int64_t* ints, int i) {
  return reinterpret_cast<float*>(static_cast<uintptr_t>(ints[i]));
}
int dim(const int64_t* ints, int i) { return static_cast<int>(ints[i]); }

}  // namespace

extern const plan::HelperKind kSgemmHelper{
    kHelperSgemm, 6, kHelperRefusal, gemm_setup,
    [](const int64_t* v, const plan::InsideCheck& inside, cudaStream_t s) {
      // A (M x K), B (K x N), C (M x N)
      inside(0, 1, 0, v[3], v[5]);
      inside(1, 1, 0, v[5], v[4]);
      inside(2, 1, 0, v[3], v[4]);
      conv_sgemm(matrix(v, 0), matrix(v, 1), matrix(v, 2), dim(v, 3), dim(v, 4), dim(v, 5), s);
    }};

extern const plan::HelperKind kSgemmBatchedHelper{
    kHelperSgemmBatched, 10, kHelperRefusal, gemm_setup,
    [](const int64_t* v, const plan::InsideCheck& inside, cudaStream_t s) {
      // A, stride_a, B, stride_b, C, stride_c, M, N, K, batch
      inside(0, v[9], v[1], v[6], v[8]);
      inside(2, v[9], v[3], v[8], v[7]);
      inside(4, v[9], v[5], v[6], v[7]);
      conv_sgemm_batched(matrix(v, 0), v[1], matrix(v, 2), v[3], matrix(v, 4), v[5], dim(v, 6),
                         dim(v, 7), dim(v, 8), dim(v, 9), s);
    }};

}  // namespace labkit::ops::conv
