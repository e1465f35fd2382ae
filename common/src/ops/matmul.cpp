#include "labkit/ops/matmul.hpp"

#include <cstring>
#include <memory>
#include <sstream>
#include <vector>

#include "labkit/compare.hpp"
#include "labkit/random.hpp"

namespace labkit::ops::matmul {

CheckSpec spec(const std::string& variant, const Case& c) {
  CheckSpec s;
  std::ostringstream what;
  what << variant << " on M=" << c.M << " N=" << c.N << " K=" << c.K << " [seed " << c.seed << "]";
  s.what = what.str();
  const uint64_t M = c.M, N = c.N, K = c.K;
  s.call.variant = variant;
  s.call.params = Sig::params(c.M, c.N, c.K);
  s.call.capture = c.capture;
  s.call.buffers = buffer_specs(Sig::kBufs, Sig::Sizes{M, N, K});
  // The inputs stay here, in the judge, for the reference: the worker gets copies.
  auto inputs = std::make_shared<std::vector<std::pair<std::vector<float>, std::vector<float>>>>();
  for (int call = 0; call < c.calls; ++call) {
    const uint64_t seed = mix_seed(c.seed, static_cast<uint64_t>(call));
    inputs->emplace_back(random_floats(M * K, mix_seed(seed, 1)),
                         random_floats(K * N, mix_seed(seed, 2)));
    auto as_bytes = [](const std::vector<float>& v) {
      Bytes b(v.size() * sizeof(float));
      if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
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
    return verdict(compare_matrix(raw, ref, matmul_walk_bounds(ref, sq_product, c.K), c.M, c.N));
  };
  s.fault_hint =
      "an illegal address usually means an index past the end of A, B or C (bounds guard, "
      "row/col mix-up, K loop bounds)";
  return s;
}

}  // namespace labkit::ops::matmul
