// Loud, precise CUDA errors: every runtime call goes through CUDA_CHECK, every launch is
// followed by LABKIT_CHECK_LAUNCH. Both throw labkit::CudaError (GoogleTest records a thrown
// exception as a failure of that test); nothing here calls exit().
#pragma once

#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace labkit {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Builds "<expr> failed at file:line: cudaErrorX (description)" and throws.
[[noreturn]] void throw_cuda_error(cudaError_t code, const char* expr, const char* file,
                                   int line);

// One line naming a CUDA error: "cudaErrorIllegalAddress (an illegal memory access ...)".
std::string describe(cudaError_t code);

}  // namespace labkit

#define CUDA_CHECK(expr)                                                   \
  do {                                                                     \
    const cudaError_t labkit_err_ = (expr);                                \
    if (labkit_err_ != cudaSuccess) {                                      \
      ::labkit::throw_cuda_error(labkit_err_, #expr, __FILE__, __LINE__);  \
    }                                                                      \
  } while (0)

// After a kernel launch: reports launch-configuration errors (bad grid/block shape).
#define LABKIT_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
