// The 16-bit families' launchers (lab 10's GEMM, lab 11's attention): a launcher template
// instantiated for IEEE half and bfloat16, and the call of the one a request's element type
// names.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "labkit/worker.hpp"

namespace labkit::ops {

// One variant: both instantiations of its launcher template.
template <template <typename> class Launcher>
struct HalfPair {
  Launcher<__half> f16;
  Launcher<__nv_bfloat16> bf16;
};

// Calls `call_one` with the instantiation the call's dtype parameter names, as the family's
// signature `Sig` numbers them (Sig::Param::kDType; Sig::kF16Param, Sig::kBF16Param); any other
// value is refused, naming `family`.
template <typename Sig, template <typename> class Launcher, typename CallOne>
void invoke_half_pair(const HalfPair<Launcher>& fn, const worker::Call& call, CallOne&& call_one,
                      const char* family) {
  const int64_t type = call.param(Sig::Param::kDType);
  if (type == Sig::kF16Param) {
    call_one(fn.f16);
  } else if (type == Sig::kBF16Param) {
    call_one(fn.bf16);
  } else {
    throw std::invalid_argument(std::string(family) + ": the element type is f16 or bf16");
  }
}

}  // namespace labkit::ops
