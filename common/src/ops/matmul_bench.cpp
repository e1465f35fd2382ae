#include "labkit/ops/matmul_bench.hpp"

#include <cublas_v2.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/matmul_reference.hpp"
#include "labkit/ops/matmul_signature.hpp"

namespace labkit::ops::matmul {
namespace {

// The linked cuBLAS's version (no handle, no GPU needed).
std::string cublas_version() {
  int v[3] = {0, 0, 0};
  const libraryPropertyType parts[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i) {
    if (cublasGetProperty(parts[i], &v[i]) != CUBLAS_STATUS_SUCCESS) return "?";
  }
  return bench::version_text(v[0], v[1], v[2]);
}

// cuBLAS is the baseline that is timed: SGEMM (true FP32) for float32 inputs, GemmEx with
// float32 accumulation (CUBLAS_COMPUTE_32F, tensor cores) for 16-bit ones. The reference a timed
// call is checked against is the product of the same inputs in double (DGEMM), with the tests'
// bound (matmul_walk_bounds: sum_k (a b)^2 from a DGEMM of the squares): not cuBLAS's float
// product, whose own rounding would have to be allowed for too.
class CublasMatmul : public bench::Baseline {
 public:
  CublasMatmul(int M, int N, int K, DType in)
      : M_(M), N_(N), K_(K), in_(in), A_(in == DType::kF32 ? size_t(M) * K : 0),
        B_(in == DType::kF32 ? size_t(K) * N : 0), A16_(in == DType::kF32 ? 0 : size_t(M) * K),
        B16_(in == DType::kF32 ? 0 : size_t(K) * N), C_(size_t(M) * N), Ad_(size_t(M) * K),
        Bd_(size_t(K) * N), ref_(size_t(M) * N), sq_(size_t(M) * N) {
    CUBLAS_CHECK(cublasCreate(&handle_));
    CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));  // true FP32, no TF32
  }
  ~CublasMatmul() override { cublasDestroy(handle_); }

  void prepare(uint64_t seed, cudaStream_t s) override {
    const uint64_t a = protocol::buffer_seed(seed, Sig::kA), b = protocol::buffer_seed(seed, Sig::kB);
    if (in_ == DType::kF32) {
      fill_uniform_f32(A_.get(), A_.size(), a, -1.0f, 1.0f, s);
      fill_uniform_f32(B_.get(), B_.size(), b, -1.0f, 1.0f, s);
    } else {
      fill_uniform_16(A16_.get(), bf16(), A16_.size(), a, -1.0f, 1.0f, s);
      fill_uniform_16(B16_.get(), bf16(), B16_.size(), b, -1.0f, 1.0f, s);
    }
  }

  void run(cudaStream_t s) override { gemm(C_.get(), s); }

  bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kC || outputs[Sig::kC] == nullptr) return false;
    reference(s);
    return count_beyond_walk_bound(static_cast<const float*>(outputs[Sig::kC]), ref_.get(),
                                   sq_.get(), size_t(M_) * N_, matmul_bound_scale(K_, in_),
                                   s) == 0;
  }

  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t s) override {
    std::vector<float> got(size_t(M_) * N_);
    if (outputs.size() <= Sig::kC || outputs[Sig::kC].size() != got.size() * sizeof(float)) {
      return "the output C has the wrong size";
    }
    std::memcpy(got.data(), outputs[Sig::kC].data(), outputs[Sig::kC].size());
    reference(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    const std::vector<double> ref = ref_.download(), sq = sq_.download();
    const std::vector<double> bound = matmul_scaled_bounds(ref, sq, matmul_bound_scale(K_, in_));
    // Every timed call is checked: the common case (all right) is a parallel pass, the full
    // report only when it is not.
    if (all_within(got, ref, bound)) return "";
    const CompareResult r = compare_matrix(got, ref, bound, M_, N_);
    return r.ok() ? "" : r.report();
  }

 private:
  bool bf16() const { return in_ == DType::kBF16; }

  // A and B in double (or their squares).
  void widen(bool square, cudaStream_t s) {
    if (in_ == DType::kF32) {
      to_f64(A_.get(), Ad_.get(), A_.size(), square, s);
      to_f64(B_.get(), Bd_.get(), B_.size(), square, s);
    } else {
      to_f64_16(A16_.get(), bf16(), Ad_.get(), A16_.size(), square, s);
      to_f64_16(B16_.get(), bf16(), Bd_.get(), B16_.size(), square, s);
    }
  }

  // The product of this call's inputs in double, and of their squares (for the bound).
  void reference(cudaStream_t s) {
    widen(false, s);
    dgemm(Ad_.get(), Bd_.get(), ref_.get(), s);
    widen(true, s);
    dgemm(Ad_.get(), Bd_.get(), sq_.get(), s);
  }

  // Row-major C = A * B through column-major cuBLAS: C^T = B^T * A^T.
  void gemm(float* C, cudaStream_t s) {
    const float one = 1.0f, zero = 0.0f;
    CUBLAS_CHECK(cublasSetStream(handle_, s));
    if (in_ == DType::kF32) {
      CUBLAS_CHECK(cublasSgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N_, M_, K_, &one, B_.get(), N_,
                               A_.get(), K_, &zero, C, N_));
      return;
    }
    const cudaDataType_t type = bf16() ? CUDA_R_16BF : CUDA_R_16F;
    CUBLAS_CHECK(cublasGemmEx(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N_, M_, K_, &one, B16_.get(),
                              type, N_, A16_.get(), type, K_, &zero, C, CUDA_R_32F, N_,
                              CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  }
  void dgemm(const double* A, const double* B, double* C, cudaStream_t s) {
    const double one = 1.0, zero = 0.0;
    CUBLAS_CHECK(cublasSetStream(handle_, s));
    CUBLAS_CHECK(cublasDgemm(handle_, CUBLAS_OP_N, CUBLAS_OP_N, N_, M_, K_, &one, B, N_, A, K_,
                             &zero, C, N_));
  }

  int M_, N_, K_;
  DType in_;
  cublasHandle_t handle_ = nullptr;
  DeviceBuffer<float> A_, B_;
  DeviceBuffer<uint16_t> A16_, B16_;
  DeviceBuffer<float> C_;
  DeviceBuffer<double> Ad_, Bd_, ref_, sq_;
};

}  // namespace

bench::Spec benchmark(const std::string& variant, int M, int N, int K, DType in) {
  bench::Spec s;
  const std::string size =
      M == N && N == K ? std::to_string(M)
                       : std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  s.name = "matmul/" + variant + "/" +
           (in == DType::kF32 ? size : std::string(dtype_name(in)) + "/" + size);
  const uint64_t m = M, n = N, k = K;
  s.call.variant = variant;
  s.call.params = Sig::params(M, N, K, in);
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{m, n, k, in});
  for (const int b : {Sig::kA, Sig::kB}) {
    s.call.buffers[b].source = in == DType::kF32    ? protocol::Source::kUniformF32
                               : in == DType::kF16 ? protocol::Source::kUniformF16
                                                    : protocol::Source::kUniformBF16;
    s.call.buffers[b].lo = -1.0;
    s.call.buffers[b].hi = 1.0;
  }
  s.flop = 2.0 * m * n * k;
  s.bytes = elem_size(in) * double(m * k + k * n) + 4.0 * m * n;
  s.baseline_name = in == DType::kF32
                        ? "cuBLAS SGEMM (FP32, cuBLAS " + cublas_version() + ")"
                        : std::string("cuBLAS GemmEx (") + (in == DType::kF16 ? "FP16" : "BF16") +
                              " inputs, FP32 accumulation, tensor cores, cuBLAS " +
                              cublas_version() + ")";
  s.baseline = [M, N, K, in] { return std::make_unique<CublasMatmul>(M, N, K, in); };
  return s;
}

}  // namespace labkit::ops::matmul
