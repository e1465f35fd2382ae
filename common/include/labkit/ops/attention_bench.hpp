// The attention op family, benchmark side (lab 11): cuDNN's fused attention (scaled dot-product
// attention through the cuDNN frontend's graph API) on the same fresh inputs as every timed
// student call (Q, K, V uniform in [-1, 1]), and the check of every call's O against the
// family's reference in double, computed on the GPU (attention_reference.cu), with the tests'
// bound (attention.hpp).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/dtype.hpp"

namespace labkit::ops::attention {

// "attention/<variant>/<f16|bf16>/<full|causal>/h<heads>_s<seq>_d<dim>".
bench::Spec benchmark(const std::string& variant, DType dtype, int heads, int seq, int dim,
                      bool causal);

// The reference on the GPU, in double, heads a chunk at a time (scores of seq x seq per head):
// how many elements of `o` (16-bit, device) are beyond the bound for `q`, `k`, `v` (device);
// with `ref` and `bound` non-null it also brings the reference and the bound to the host.
size_t count_beyond_bound(const void* q, const void* k, const void* v, const void* o, int heads,
                          int seq, int dim, bool causal, bool bf16, cudaStream_t stream,
                          std::vector<double>* ref = nullptr,
                          std::vector<double>* bound = nullptr);

}  // namespace labkit::ops::attention
