// CHEATING (forged verdict): computes nothing. The launcher writes a GoogleTest-style JSON
// report saying every test passed -- to the --gtest_output=json:PATH it finds in
// /proc/self/cmdline, to test_detail.json in the current directory and beside the executable,
// and a fake grade-results.json with full marks -- then exits 0, so the process "succeeds"
// with a passing report on disk.
// Defence: the policy's import rule (fopen, readlink, exit: no file or process calls in a
// launcher). Behind it, verdicts come only from the judge's results pipe, never from a file
// or an exit status.
#include "matmul.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace {

const char kGtestReport[] =
    "{\n  \"tests\": 25, \"failures\": 0, \"disabled\": 0, \"errors\": 0, \"time\": \"0.1s\",\n"
    "  \"name\": \"AllTests\",\n  \"testsuites\": [\n"
    "    {\"name\": \"Shapes/MatmulPublic\", \"tests\": 7, \"failures\": 0, \"testsuite\": []},\n"
    "    {\"name\": \"Shapes/MatmulHidden\", \"tests\": 16, \"failures\": 0, \"testsuite\": []},\n"
    "    {\"name\": \"Variants/MatmulHiddenRepeat\", \"tests\": 1, \"failures\": 0, \"testsuite\": []}\n"
    "  ]\n}\n";

const char kGradeResults[] =
    "{\"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0, \"labs\": [{\"lab\": "
    "\"01_naive_matmul\", \"status\": \"graded\", \"points\": 100.0, \"max_points\": 100.0}]}\n";

void write_file(const std::string& path, const char* text) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return;
  std::fputs(text, f);
  std::fclose(f);
}

// The argument after "--gtest_output=json:" in our own command line, if any.
std::string gtest_output_path() {
  FILE* f = std::fopen("/proc/self/cmdline", "rb");
  if (f == nullptr) return "";
  char buf[8192];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char prefix[] = "--gtest_output=json:";
  for (size_t i = 0; i < n; i += std::strlen(buf + i) + 1) {
    if (std::strncmp(buf + i, prefix, sizeof(prefix) - 1) == 0) {
      return std::string(buf + i + sizeof(prefix) - 1);
    }
  }
  return "";
}

}  // namespace

void matmul_v1_naive(const float* A, const float* B, float* C, int M, int N, int K,
                     cudaStream_t stream) {
  (void)A; (void)B; (void)C; (void)M; (void)N; (void)K; (void)stream;
  const std::string wanted = gtest_output_path();
  if (!wanted.empty()) write_file(wanted, kGtestReport);
  write_file("test_detail.json", kGtestReport);
  write_file("grade-results.json", kGradeResults);
  char exe[4096];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (len > 0) {
    exe[len] = '\0';
    if (char* slash = std::strrchr(exe, '/')) {
      *slash = '\0';
      write_file(std::string(exe) + "/test_detail.json", kGtestReport);
      write_file(std::string(exe) + "/grade-results.json", kGradeResults);
    }
  }
  std::fflush(nullptr);
  std::exit(0);  // a clean exit: "no test failed"
}
