// Loud, precise CUDA errors: every runtime call goes through CUDA_CHECK, every launch is
// followed by LABKIT_CHECK_LAUNCH. Both throw labkit::CudaError (GoogleTest records a thrown
// exception as a failure of that test); nothing here calls exit(). The CUDA libraries' calls
// go through CUBLAS_CHECK, CUSPARSE_CHECK and CUDNN_CHECK, which throw std::runtime_error.
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

// Builds "<expr> failed at file:line: <status>" and throws std::runtime_error: a CUDA library's
// call (cuBLAS, cuSPARSE, cuDNN) that returned `status`, the library's name for its status.
[[noreturn]] void throw_library_error(const char* status, const char* expr, const char* file,
                                      int line);

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

// A CUDA library's call: `success` is its OK status, `status_name` its function naming a status.
// The library's own header must be included where these are used.
#define LABKIT_LIBRARY_CHECK(expr, text, success, status_name)                        \
  do {                                                                                \
    const auto labkit_status_ = (expr);                                               \
    if (labkit_status_ != (success)) {                                                \
      ::labkit::throw_library_error(status_name(labkit_status_), text, __FILE__, __LINE__); \
    }                                                                                 \
  } while (0)
#define CUBLAS_CHECK(expr) \
  LABKIT_LIBRARY_CHECK((expr), #expr, CUBLAS_STATUS_SUCCESS, cublasGetStatusName)
#define CUSPARSE_CHECK(expr) \
  LABKIT_LIBRARY_CHECK((expr), #expr, CUSPARSE_STATUS_SUCCESS, cusparseGetErrorString)
#define CUDNN_CHECK(expr) \
  LABKIT_LIBRARY_CHECK((expr), #expr, CUDNN_STATUS_SUCCESS, cudnnGetErrorString)
