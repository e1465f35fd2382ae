#include "labkit/ops/matmul.hpp"

#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/half.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::matmul {

CheckSpec spec(const std::string& variant, const Case& c) {
  CheckSpec s;
  std::ostringstream what;
  what << variant << (c.dtype == DType::kF32 ? "" : std::string(" ") + dtype_name(c.dtype))
       << " on M=" << c.M << " N=" << c.N << " K=" << c.K << " [seed " << c.seed << "]";
  s.what = what.str();
  const uint64_t M = c.M, N = c.N, K = c.K;
  s.call.variant = variant;
  s.call.params = Sig::params(c.M, c.N, c.K, c.dtype);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{M, N, K, c.dtype});
  const bool narrow = c.dtype != DType::kF32, bf16 = c.dtype == DType::kBF16;
  // The inputs stay here, in the judge, for the reference: the worker gets copies.
  auto inputs = std::make_shared<std::vector<std::pair<std::vector<float>, std::vector<float>>>>();
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    inputs->emplace_back(random_floats(M * K, mix_seed(seed, 1)),
                         random_floats(K * N, mix_seed(seed, 2)));
    // 16-bit inputs: each float rounded to the type (the reference multiplies the rounded
    // values, widened back exactly).
    auto as_bytes = [narrow, bf16](std::vector<float>& v) {
      if (!narrow) {
        Bytes b(v.size() * sizeof(float));
        if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
        return b;
      }
      Bytes b(v.size() * 2);
      for (size_t i = 0; i < v.size(); ++i) {
        const uint16_t h = to_16_bits(v[i], bf16);
        v[i] = from_16_bits(h, bf16);
        std::memcpy(b.data() + 2 * i, &h, 2);
      }
      return b;
    };
    std::vector<Bytes>& in = s.call.inputs.emplace_back(Sig::kCount);
    in[Sig::kA] = as_bytes(inputs->back().first);
    in[Sig::kB] = as_bytes(inputs->back().second);
  }
  s.verify = [inputs, c](int call, const std::vector<Bytes>& outputs) {
    const auto& [A, B] = (*inputs)[call];
    std::vector<double> sq_product;
    const std::vector<double> ref = matmul_reference(A, B, c.M, c.N, c.K, nullptr, &sq_product);
    const Bytes& C = outputs[Sig::kC];
    std::vector<float> raw(C.size() / sizeof(float));
    std::memcpy(raw.data(), C.data(), raw.size() * sizeof(float));
    return verdict(compare_matrix(raw, ref,
                                  matmul_scaled_bounds(ref, sq_product, matmul_bound_scale(c.K, c.dtype)), c.M,
                                  c.N));
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of A, B or C (bounds guard, "
      "row/col mix-up, K loop bounds)";
  return s;
}

}  // namespace labkit::ops::matmul
