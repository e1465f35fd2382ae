// labkit_executor: the trusted runner of every lab's planned calls (executor.cpp).
#include "labkit/worker.hpp"

int main(int argc, char** argv) { return labkit::worker::executor_main(argc, argv); }
