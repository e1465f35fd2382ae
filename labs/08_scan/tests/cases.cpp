// Lab 08's tests are data (tests/cases.toml, and hidden/cases.toml where the hidden tests are in
// the build); this binds them to scan.h: its versions, and the workspace each call is given.
#include "labkit/ops/scan.hpp"
#include "labkit/worker.hpp"
#include "scan.h"

namespace {

size_t workspace(size_t n) { return scan_workspace_size(n); }

const bool registered = labkit::ops::register_vector_cases(
    {SCAN_VARIANTS(LABKIT_VARIANT_NAME)}, {"scan", labkit::ops::scan::spec, workspace});

}  // namespace
