// The histogram op family, worker side (lab 09): how a launcher pair is called.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "labkit/ops/histogram_signature.hpp"
#include "labkit/worker.hpp"

namespace labkit::ops::histogram {

template <typename T>
using Launcher = void (*)(const T* in, unsigned int* bins, size_t n, int num_bins,
                          cudaStream_t stream);

// One variant: its byte and its int instantiation.
struct Pair {
  Launcher<unsigned char> u8;
  Launcher<int> i32;
};

// Buffers and parameters as the family's signature declares them (histogram_signature.hpp).
inline void invoke(Pair fn, const worker::Call& call) {
  const size_t n = static_cast<size_t>(call.param(Sig::Param::kN));
  const int bins = static_cast<int>(call.param(Sig::Param::kBins));
  unsigned int* out = call.buffer<unsigned int>(Sig::kBins);
  if (call.param(Sig::Param::kDType) == Sig::kU8Param) {
    fn.u8(call.buffer<const unsigned char>(Sig::kIn), out, n, bins, call.stream);
  } else {
    fn.i32(call.buffer<const int>(Sig::kIn), out, n, bins, call.stream);
  }
}

inline std::vector<worker::Variant> bind(std::initializer_list<std::pair<const char*, Pair>> t) {
  return worker::bind<Pair>(t, &invoke);
}

}  // namespace labkit::ops::histogram

// One row of lab 09's X-macro table (HISTOGRAM_VARIANTS): both instantiations of the launcher
// template.
#define LABKIT_HISTOGRAM_ENTRY(name, fn) \
  {#name, ::labkit::ops::histogram::Pair{&fn<unsigned char>, &fn<int>}},
