// labkit_null_worker: the benchmarks' calibration worker. The same runner as every lab's worker
// (same protocol, same confinement), with no variants and no student code: its timed call
// launches one empty kernel. The benchmark judge times it exactly as it times the student's
// worker, and subtracts its median from every student call: the overhead is measured on a
// process whose time no student code can touch.
#include "labkit/worker.hpp"

int main(int argc, char** argv) { return labkit::worker::main(argc, argv, {}); }
