// Lab 06's tests are data (tests/cases.toml, and hidden/cases.toml where the hidden tests are in
// the build); this binds them to spmv.h: its versions and its workspace size, and the lab's
// folder, where the hidden tests' Matrix Market files are (LAB06_DIR, set by CMake).
#include "labkit/ops/spmv_cases.hpp"
#include "labkit/worker.hpp"
#include "spmv.h"

namespace {

const bool registered = labkit::ops::spmv::register_cases(
    {SPMV_VARIANTS(LABKIT_VARIANT_NAME)}, {LAB06_DIR, &spmv_workspace_bytes});

}  // namespace
