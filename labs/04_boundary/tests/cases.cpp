// Lab 04's tests are data (tests/cases.toml, and hidden/cases.toml where the hidden tests are in
// the build); this binds them to matmul.h: its versions (no size promise: this lab drops it).
#include "labkit/ops/matmul_cases.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace {

const bool registered =
    labkit::ops::matmul::register_cases({MATMUL_VARIANTS(LABKIT_VARIANT_NAME)});

}  // namespace
