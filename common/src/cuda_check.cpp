#include "labkit/cuda_check.hpp"

#include <sstream>
#include <stdexcept>

namespace labkit {

std::string describe(cudaError_t code) {
  std::ostringstream os;
  os << cudaGetErrorName(code) << " (" << cudaGetErrorString(code) << ")";
  return os.str();
}

void throw_cuda_error(cudaError_t code, const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << expr << " failed at " << file << ":" << line << ": " << describe(code);
  throw CudaError(code, os.str());
}

void throw_library_error(const char* status, const char* expr, const char* file, int line) {
  std::ostringstream os;
  os << expr << " failed at " << file << ":" << line << ": " << status;
  throw std::runtime_error(os.str());
}

}  // namespace labkit
