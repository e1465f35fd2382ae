#include "labkit/ops/spmv_bench.hpp"

#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <stdexcept>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/cuda_check.hpp"
#include "labkit/device_buffer.hpp"
#include "labkit/device_compare.hpp"
#include "labkit/device_fill.hpp"
#include "labkit/ops/device_reference.hpp"
#include "labkit/ops/spmv.hpp"
#include "labkit/ops/spmv_dist.hpp"

namespace labkit::ops::spmv {
namespace {

// The linked cuSPARSE's version (no handle, no GPU needed).
std::string cusparse_version() {
  int v[3] = {0, 0, 0};
  const libraryPropertyType parts[3] = {MAJOR_VERSION, MINOR_VERSION, PATCH_LEVEL};
  for (int i = 0; i < 3; ++i) {
    if (cusparseGetProperty(parts[i], &v[i]) != CUSPARSE_STATUS_SUCCESS) return "?";
  }
  return bench::version_text(v[0], v[1], v[2]);
}

// cusparseSpMV (CSR, FP32, 32-bit indices, the default algorithm) on the benchmark's matrix.
class CusparseSpmv : public bench::Baseline {
 public:
  explicit CusparseSpmv(std::shared_ptr<const Csr> m)
      : m_(std::move(m)),
        nnz_(static_cast<size_t>(m_->nnz())),
        row_ptr_(m_->row_ptr.size()),
        col_idx_(std::max<size_t>(nnz_, 1)),
        values_(std::max<size_t>(nnz_, 1)),
        x_(static_cast<size_t>(m_->cols)),
        y_(static_cast<size_t>(m_->rows)),
        ref_(std::max<size_t>(static_cast<size_t>(m_->rows), 1)),
        abs_ref_(std::max<size_t>(static_cast<size_t>(m_->rows), 1)) {
    CUDA_CHECK(cudaMemcpy(row_ptr_.get(), m_->row_ptr.data(), row_ptr_.bytes(), cudaMemcpyHostToDevice));
    if (nnz_ > 0) {
      CUDA_CHECK(cudaMemcpy(col_idx_.get(), m_->col_idx.data(), nnz_ * 4, cudaMemcpyHostToDevice));
    }
    CUSPARSE_CHECK(cusparseCreate(&handle_));
    CUSPARSE_CHECK(cusparseCreateCsr(&a_, m_->rows, m_->cols, static_cast<int64_t>(nnz_),
                                     row_ptr_.get(), col_idx_.get(), values_.get(),
                                     CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                     CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F));
    CUSPARSE_CHECK(cusparseCreateDnVec(&x_vec_, m_->cols, x_.get(), CUDA_R_32F));
    CUSPARSE_CHECK(cusparseCreateDnVec(&y_vec_, m_->rows, y_.get(), CUDA_R_32F));
    size_t bytes = 0;
    CUSPARSE_CHECK(cusparseSpMV_bufferSize(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, a_,
                                           x_vec_, &zero_, y_vec_, CUDA_R_32F,
                                           CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
    buffer_ = DeviceBuffer<char>(std::max<size_t>(bytes, 1));
  }

  ~CusparseSpmv() override {
    cusparseDestroyDnVec(y_vec_);
    cusparseDestroyDnVec(x_vec_);
    cusparseDestroySpMat(a_);
    cusparseDestroy(handle_);
  }

  void prepare(uint64_t seed, cudaStream_t s) override {
    if (nnz_ > 0) {
      fill_uniform_f32(values_.get(), nnz_, protocol::buffer_seed(seed, Sig::kValues), kValueLo,
                       kValueHi, s);
    }
    fill_source(x_.get(), kSourceX, x_.size(), protocol::buffer_seed(seed, Sig::kX), kXLo, kXHi, s);
  }

  void run(cudaStream_t s) override { multiply(a_, x_vec_, y_vec_, s); }

  bool right_on_device(const std::vector<const void*>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kY || outputs[Sig::kY] == nullptr) return false;
    reference(s);
    return count_beyond_row_bound(static_cast<const float*>(outputs[Sig::kY]), ref_.get(),
                                  abs_ref_.get(),
                                  row_ptr_.get(), static_cast<size_t>(m_->rows), kSpmvBoundC,
                                  kSpmvWalkC, s) == 0;
  }

  // The student's y against this call's values and x multiplied in double, with the tests'
  // bound (not cuSPARSE's float y: its own rounding would have to be allowed for too).
  std::string verify(const std::vector<Bytes>& outputs, cudaStream_t s) override {
    if (outputs.size() <= Sig::kY || outputs[Sig::kY].size() != y_.bytes()) {
      return "y has the wrong size";
    }
    const size_t rows = static_cast<size_t>(m_->rows);
    reference(s);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> ref = ref_.download(), abs_ref = abs_ref_.download();
    ref.resize(rows);
    abs_ref.resize(rows);
    std::vector<double> bound(rows);
    for (size_t r = 0; r < rows; ++r) {
      bound[r] = row_bound(m_->row_length(static_cast<int32_t>(r)), abs_ref[r]);
    }
    VectorLayout layout;
    layout.n = rows;
    layout.name = "y";
    const auto m = m_;
    layout.group = [m](size_t r) { return length_class(m->row_length(static_cast<int32_t>(r))); };
    const CompareResult r =
        compare_vector(observe(outputs[Sig::kY], DType::kF32), ref, bound, layout);
    return r.ok() ? "" : "y differs from A x (computed in double): " + r.report();
  }

 private:
  // A x in double on the GPU, and |A| |x| per row (for the bound).
  void reference(cudaStream_t s) {
    if (m_->rows > 0) {
      spmv_reference_f64(row_ptr_.get(), col_idx_.get(), values_.get(), x_.get(), m_->rows,
                         ref_.get(), abs_ref_.get(), s);
    }
  }

  void multiply(cusparseSpMatDescr_t a, cusparseDnVecDescr_t x, cusparseDnVecDescr_t y, cudaStream_t s) {
    CUSPARSE_CHECK(cusparseSetStream(handle_, s));
    CUSPARSE_CHECK(cusparseSpMV(handle_, CUSPARSE_OPERATION_NON_TRANSPOSE, &one_, a, x, &zero_, y,
                                CUDA_R_32F, CUSPARSE_SPMV_ALG_DEFAULT, buffer_.get()));
  }

  std::shared_ptr<const Csr> m_;
  size_t nnz_;
  DeviceBuffer<int> row_ptr_, col_idx_;
  DeviceBuffer<float> values_, x_, y_;
  DeviceBuffer<double> ref_, abs_ref_;
  DeviceBuffer<char> buffer_;
  cusparseHandle_t handle_ = nullptr;
  cusparseSpMatDescr_t a_ = nullptr;
  cusparseDnVecDescr_t x_vec_ = nullptr, y_vec_ = nullptr;
  const float one_ = 1.0f, zero_ = 0.0f;
};

template <typename T>
Bytes to_bytes(const std::vector<T>& v) {
  Bytes b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

}  // namespace

double min_bytes(const Csr& m) {
  const double nnz = static_cast<double>(m.nnz());
  return 4.0 * nnz + 4.0 * nnz + 4.0 * (m.rows + 1.0) + 4.0 * m.cols + 4.0 * m.rows;
}

bench::Spec benchmark(const std::string& variant, const std::string& matrix_name,
                      std::shared_ptr<const Csr> matrix, size_t workspace_bytes) {
  const std::string problem = validate(*matrix);
  if (!problem.empty()) throw std::invalid_argument("spmv benchmark " + matrix_name + ": " + problem);
  bench::Spec s;
  s.name = "spmv/" + variant + "/" + matrix_name;
  s.call.variant = variant;
  const size_t rows = static_cast<size_t>(matrix->rows), cols = static_cast<size_t>(matrix->cols),
               nnz = static_cast<size_t>(matrix->nnz());
  s.call.params = Sig::params(matrix->rows, matrix->cols, static_cast<int64_t>(nnz));
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{rows, cols, nnz, workspace_bytes});
  BufferSpec& values = s.call.buffers[Sig::kValues];
  values.source = protocol::Source::kUniformF32;
  values.lo = kValueLo;
  values.hi = kValueHi;
  BufferSpec& x = s.call.buffers[Sig::kX];
  x.source = spmv::kSourceX;
  x.lo = kXLo;
  x.hi = kXHi;
  const size_t ws_words = s.call.buffers[Sig::kWorkspace].count;
  s.make_inputs = [matrix, ws_words] {
    // Garbage in the workspace, once: the launcher may not rely on its contents anyway.
    std::vector<float> garbage(ws_words);
    for (size_t i = 0; i < ws_words; ++i) garbage[i] = 100.0f + static_cast<float>(i % 997);
    std::vector<std::vector<Bytes>> inputs(1, std::vector<Bytes>(Sig::kCount));
    inputs[0][Sig::kRowPtr] = to_bytes(matrix->row_ptr);
    inputs[0][Sig::kColIdx] = to_bytes(matrix->col_idx);
    inputs[0][Sig::kWorkspace] = to_bytes(garbage);
    return inputs;
  };
  s.flop = 2.0 * static_cast<double>(nnz);
  s.bytes = min_bytes(*matrix);
  s.baseline_name = "cuSPARSE SpMV (CSR, FP32, cuSPARSE " + cusparse_version() + ")";
  s.baseline = [matrix] { return std::make_unique<CusparseSpmv>(matrix); };
  return s;
}

}  // namespace labkit::ops::spmv
