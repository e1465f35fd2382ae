// Element types, as the harness names them: an op family's buffers (signature.hpp), the
// comparisons' decoding of raw output bytes (compare.hpp), the reduce family's dtype, the
// histogram family's bytes, the 16-bit floats of lab 10's inputs (IEEE half and bfloat16).
#pragma once

#include <cstddef>
#include <ostream>

namespace labkit {

enum class DType { kF32, kF64, kI32, kI64, kU8, kF16, kBF16 };

constexpr size_t elem_size(DType d) {
  return d == DType::kF64 || d == DType::kI64   ? 8
         : d == DType::kU8                         ? 1
         : d == DType::kF16 || d == DType::kBF16 ? 2
                                                   : 4;
}

// "f32", "f64", "i32", "i64", "u8", "f16", "bf16" (test names: lab 05's "v3_sequential_i32_n1025")
constexpr const char* dtype_name(DType d) {
  switch (d) {
    case DType::kF32: return "f32";
    case DType::kF64: return "f64";
    case DType::kI32: return "i32";
    case DType::kI64: return "i64";
    case DType::kU8: return "u8";
    case DType::kF16: return "f16";
    case DType::kBF16: return "bf16";
  }
  return "?";
}

// How GoogleTest prints a DType test parameter.
inline void PrintTo(DType d, std::ostream* os) { *os << dtype_name(d); }

}  // namespace labkit
