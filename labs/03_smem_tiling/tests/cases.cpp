// Lab 03's tests are data (tests/cases.toml, and hidden/cases.toml where the hidden tests are in
// the build); this binds them to matmul.h: its versions and its size promise (M, N multiples of
// kMatmulMultipleMN, K of kMatmulMultipleK), which every shape must keep (the driver refuses
// one outside it, naming the file and line).
#include "labkit/ops/matmul_cases.hpp"
#include "labkit/worker.hpp"
#include "matmul.h"

namespace {

const bool registered = labkit::ops::matmul::register_cases(
    {MATMUL_VARIANTS(LABKIT_VARIANT_NAME)}, {kMatmulMultipleMN, kMatmulMultipleK});

}  // namespace
