// Lab 07's GEMM helper as the variants that are not given it see it: the worker that runs them
// (<lab>_worker, add_cuda_lab's WORKER_STUB_LIBS) links this instead of conv_gemm.cu, so it has
// no cuBLAS at all, neither linked nor loaded: a run-time lookup of cublasSgemm_v2 from one of
// those variants finds nothing (the sandbox forbids loading it), and a call of conv_sgemm fails
// the call with this message. Only v1_im2col's worker (<lab>_helper_worker) has the real one.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#include "labkit/ops/conv_worker.hpp"

void conv_sgemm(const float* A, const float* B, float* C, int M, int N, int K,
                cudaStream_t stream);
void conv_sgemm_batched(const float* A, long long stride_a, const float* B, long long stride_b,
                        float* C, long long stride_c, int M, int N, int K, int batch,
                        cudaStream_t stream);

namespace labkit::ops::conv {

void gemm_setup() noexcept {}  // nothing to start: there is no cuBLAS here

namespace {

[[noreturn]] void not_given(const char* fn) {
  throw std::runtime_error(std::string(fn) + ": " + kHelperRefusal);
}

}  // namespace
}  // namespace labkit::ops::conv

void conv_sgemm(const float*, const float*, float*, int, int, int, cudaStream_t) {
  labkit::ops::conv::not_given("conv_sgemm");
}

void conv_sgemm_batched(const float*, long long, const float*, long long, float*, long long, int,
                        int, int, int, cudaStream_t) {
  labkit::ops::conv::not_given("conv_sgemm_batched");
}
