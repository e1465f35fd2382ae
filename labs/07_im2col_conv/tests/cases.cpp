// Lab 07's tests are data (tests/cases.toml, and hidden/cases.toml where the hidden tests are in
// the build); this binds them to conv.h: its versions, and the workspace each call is given.
#include "conv.h"
#include "labkit/ops/conv_cases.hpp"
#include "labkit/worker.hpp"

namespace {

size_t workspace(const labkit::ops::conv::Shape& s) {
  return conv_workspace_size(ConvShape{int(s.n), int(s.c_in), int(s.h), int(s.w), int(s.c_out),
                                       int(s.k), int(s.stride), int(s.pad)});
}

const bool registered =
    labkit::ops::conv::register_cases({CONV_VARIANTS(LABKIT_VARIANT_NAME)}, workspace);

}  // namespace
