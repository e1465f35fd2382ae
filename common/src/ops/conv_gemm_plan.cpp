// Lab 07's GEMM helper in the planner (the process of the student's launcher, which has no
// GPU): a call is recorded into the call's plan, and the executor runs cuBLAS's SGEMM
// (common/src/ops/conv_gemm.cu) on the call's stream, for the variants the lab gives it
// (v1_im2col) and no other. The arguments are checked here as the executor's GEMM checks them,
// so that a bad call fails in the launcher, where the student's code made it.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "labkit/ops/conv_worker.hpp"
#include "labkit/plan.hpp"

void conv_sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream);
void conv_sgemm_batched(const float* A, long long stride_a, const float* B, long long stride_b,
                        float* C, long long stride_c, int M, int N, int K, int batch,
                        cudaStream_t stream);

namespace labkit::ops::conv {

void gemm_setup() noexcept {}  // the executor starts cuBLAS

namespace {
void check_dims(const char* fn, int M, int N, int K, int batch) {
  if (M < 0 || N < 0 || K < 0 || batch < 0) {
    throw std::invalid_argument(std::string(fn) + ": M, N, K and batch must be >= 0, got M=" +
                                std::to_string(M) + " N=" + std::to_string(N) +
                                " K=" + std::to_string(K) + " batch=" + std::to_string(batch));
  }
}
int64_t addr(const void* p) { return static_cast<int64_t>(reinterpret_cast<uintptr_t>(p)); }
}  // namespace

}  // namespace labkit::ops::conv

void conv_sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream) {
  namespace cv = labkit::ops::conv;
  cv::check_dims("conv_sgemm", M, N, K, 1);
  const int64_t ints[] = {cv::addr(A), cv::addr(B), cv::addr(C), M, N, K};
  labkit::plan::record_helper(cv::kHelperSgemm, ints, 6, stream);
}

void conv_sgemm_batched(const float* A, long long stride_a, const float* B, long long stride_b,
                        float* C, long long stride_c, int M, int N, int K, int batch,
                        cudaStream_t stream) {
  namespace cv = labkit::ops::conv;
  cv::check_dims("conv_sgemm_batched", M, N, K, batch);
  const int64_t ints[] = {cv::addr(A), stride_a, cv::addr(B), stride_b, cv::addr(C),
                          stride_c, M, N, K, batch};
  labkit::plan::record_helper(cv::kHelperSgemmBatched, ints, 10, stream);
}
