// The conv op family, benchmark side: cuDNN's forward convolution in FP32 with FMA math (no
// tensor cores, no TF32), its fastest such algorithm (chosen once per shape by timing each
// candidate), on the same fresh inputs as every timed student call; every call's output
// checked against it.
#pragma once

#include <cstddef>
#include <string>

#include "labkit/bench.hpp"
#include "labkit/ops/conv.hpp"

namespace labkit::ops::conv {

// "conv/<variant>/<label>"; `workspace` float elements of garbage, drawn fresh for every call,
// are handed to the launcher (the counter workspace_MB reports their size). No bias: the
// benchmark layers are the convolutions of a ResNet, which a batch norm follows.
bench::Spec benchmark(const std::string& variant, const std::string& label, const Shape& shape,
                      size_t workspace);

}  // namespace labkit::ops::conv
