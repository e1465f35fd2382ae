#include "labkit/gpu.hpp"

#include <cuda_runtime.h>

#include <sstream>

#include "labkit/cuda_check.hpp"

namespace labkit {
namespace {

GpuStatus probe() {
  GpuStatus s;
  cudaDriverGetVersion(&s.driver_version);
  cudaRuntimeGetVersion(&s.runtime_version);
  const cudaError_t err = cudaGetDeviceCount(&s.device_count);
  if (err != cudaSuccess) {
    s.reason = s.driver_version == 0 ? "no NVIDIA driver found (" + describe(err) + ")"
                                     : describe(err);
    s.device_count = 0;
    return s;
  }
  if (s.device_count == 0) {
    s.reason = "the CUDA runtime found no device";
    return s;
  }
  cudaDeviceProp prop{};
  const cudaError_t perr = cudaGetDeviceProperties(&prop, 0);
  if (perr != cudaSuccess) {
    s.reason = describe(perr);
    return s;
  }
  // Touch the device once: a device that is listed but unusable fails here, not mid-test.
  const cudaError_t ferr = cudaFree(nullptr);
  if (ferr != cudaSuccess) {
    s.reason = describe(ferr);
    return s;
  }
  s.available = true;
  s.name = prop.name;
  {
    static const char* const hex = "0123456789abcdef";
    std::string u = "GPU-";
    for (int i = 0; i < 16; ++i) {
      const auto b = static_cast<unsigned char>(prop.uuid.bytes[i]);
      u += hex[b >> 4];
      u += hex[b & 15];
      if (i == 3 || i == 5 || i == 7 || i == 9) u += '-';
    }
    s.uuid = u;
  }
  s.major = prop.major;
  s.minor = prop.minor;
  s.sm_count = prop.multiProcessorCount;
  s.l2_bytes = static_cast<size_t>(prop.l2CacheSize);
  s.global_mem_bytes = prop.totalGlobalMem;
  return s;
}

std::string json_escape(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

const GpuStatus& gpu_status() {
  static const GpuStatus status = probe();
  return status;
}

std::string gpu_summary() {
  const GpuStatus& s = gpu_status();
  std::ostringstream os;
  if (!s.available) {
    os << "no CUDA GPU: " << s.reason;
  } else {
    os << s.name << " (sm_" << s.major << s.minor << ", " << s.sm_count << " SMs, "
       << (s.l2_bytes >> 20) << " MiB L2)";
  }
  return os.str();
}

std::string gpu_status_json() {
  const GpuStatus& s = gpu_status();
  std::ostringstream os;
  os << "{\"available\": " << (s.available ? "true" : "false") << ", \"reason\": \""
     << json_escape(s.reason) << "\", \"name\": \"" << json_escape(s.name) << "\", \"uuid\": \""
     << json_escape(s.uuid)
     << "\", \"compute_capability\": \"" << s.major << "." << s.minor
     << "\", \"sm_count\": " << s.sm_count << ", \"l2_bytes\": " << s.l2_bytes
     << ", \"global_mem_bytes\": " << s.global_mem_bytes << ", \"device_count\": "
     << s.device_count << ", \"driver_version\": " << s.driver_version
     << ", \"runtime_version\": " << s.runtime_version << "}";
  return os.str();
}

}  // namespace labkit
