// JSON text the judges write by hand (the results lines, a comparison's where data): string
// literals and numbers. Nothing here parses JSON.
#pragma once

#include <string>

namespace labkit {

// A JSON string literal.
std::string json_quote(const std::string& text);

// A number as JSON: the shortest of 15 or 17 significant digits that reads back to `v`. NaN
// and the infinities, which JSON has no number for, are the strings "NaN", "Infinity" and
// "-Infinity" (Python's float() reads them).
std::string json_number(double v);

}  // namespace labkit
