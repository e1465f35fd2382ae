// Each op family's signature (labkit/ops/<family>_signature.hpp) against what it must agree
// with, written out here independently of it: the launcher's arguments in their order, and each
// buffer's name, role, element size and dims for a few shapes. Three checks per family:
//   - the table itself: one row per buffer, in the launcher's order, names unique;
//   - the judge's spec() and the benchmark's Spec: the same buffers, sized as the shape says;
//   - the worker's invoke, called on a fake call whose buffer b points at tag b: each launcher
//     argument gets the buffer the judge names so, and the parameters the case says.
// A table row moved (with its enum value or without), a size written wrong, or a worker that
// passes a buffer by another index fails here, without a GPU.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "labkit/bench.hpp"
#include "labkit/judge.hpp"
#include "labkit/ops/conv.hpp"
#include "labkit/ops/conv_worker.hpp"
#include "labkit/ops/attention.hpp"
#include "labkit/ops/attention_worker.hpp"
#include "labkit/ops/histogram.hpp"
#include "labkit/ops/histogram_bench.hpp"
#include "labkit/ops/histogram_worker.hpp"
#include "labkit/ops/matmul.hpp"
#include "labkit/ops/matmul_bench.hpp"
#include "labkit/ops/matmul_worker.hpp"
#include "labkit/ops/reduce.hpp"
#include "labkit/ops/reduce_bench.hpp"
#include "labkit/ops/scan.hpp"
#include "labkit/ops/scan_bench.hpp"
#include "labkit/ops/typed_worker.hpp"
#include "labkit/ops/spmv.hpp"
#include "labkit/ops/spmv_bench.hpp"
#include "labkit/ops/spmv_worker.hpp"
#if LABKIT_HAVE_CONV_BENCH
#include "labkit/ops/conv_bench.hpp"
#endif
#if LABKIT_HAVE_ATTENTION_BENCH
#include "labkit/ops/attention_bench.hpp"
#endif

namespace labkit {
namespace {

using protocol::Role;

// What a buffer must be, written out by hand from the launcher's declaration.
struct Expected {
  std::string name;
  Role role;
  uint32_t elem_size;
  Dims dims;
};

uint64_t product(const Dims& dims) {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;
  return n;
}

// The table: its rows are `want`'s buffers in order, each with the size `want` gives it for
// `sizes`, and no two names alike.
template <typename Sizes, size_t N>
void expect_table(const BufDecl<Sizes> (&table)[N], const Sizes& sizes,
                  const std::vector<Expected>& want) {
  ASSERT_EQ(N, want.size()) << "rows in the table";
  std::set<std::string> names;
  for (size_t b = 0; b < N; ++b) {
    const BufDecl<Sizes>& row = table[b];
    EXPECT_EQ(row.index, static_cast<int>(b));
    EXPECT_EQ(row.name, want[b].name) << "row " << b;
    EXPECT_EQ(row.role, want[b].role) << want[b].name;
    EXPECT_EQ(elem_size(row.type(sizes)), want[b].elem_size) << want[b].name;
    EXPECT_EQ(row.dims(sizes), want[b].dims) << want[b].name;
    EXPECT_EQ(row.count(sizes), product(want[b].dims)) << want[b].name;
    EXPECT_TRUE(names.insert(row.name).second) << "two buffers named " << row.name;
  }
  EXPECT_TRUE(signature_ok(table, static_cast<int>(N)));
}

// The buffers of a judge's call (a test's spec or a benchmark's Spec) are `want`'s.
void expect_buffers(const OpCall& call, const std::vector<Expected>& want,
                    const std::string& what) {
  ASSERT_EQ(call.buffers.size(), want.size()) << what;
  for (size_t b = 0; b < want.size(); ++b) {
    const BufferSpec& got = call.buffers[b];
    EXPECT_EQ(got.name, want[b].name) << what << ", buffer " << b;
    EXPECT_EQ(got.role, want[b].role) << what << ", " << want[b].name;
    EXPECT_EQ(got.elem_size, want[b].elem_size) << what << ", " << want[b].name;
    EXPECT_EQ(got.dims, want[b].dims) << what << ", " << want[b].name;
    EXPECT_EQ(got.count, product(want[b].dims)) << what << ", " << want[b].name;
  }
  for (size_t c = 0; c < call.inputs.size(); ++c) {
    ASSERT_EQ(call.inputs[c].size(), want.size()) << what << ", call " << c << "'s inputs";
    for (size_t b = 0; b < want.size(); ++b) {
      const size_t bytes = call.inputs[c][b].size();
      if (want[b].role == Role::kOutput) {
        EXPECT_EQ(bytes, 0u) << what << ": an input for the output " << want[b].name;
      } else if (bytes != 0) {  // empty: drawn on the device, or garbage the judge writes
        EXPECT_EQ(bytes, product(want[b].dims) * want[b].elem_size) << what << ", " << want[b].name;
      }
    }
  }
}

// A benchmark's call, with its constant inputs made (bench::Spec::make_inputs) where it makes
// them only when it runs.
OpCall bench_call(const bench::Spec& spec) {
  OpCall call = spec.call;
  if (spec.make_inputs) call.inputs = spec.make_inputs();
  return call;
}

// ---------------------------------------------------------- the worker's side, faked

// A call as the worker would make it: buffer b at &tags[b], the judge's parameters.
struct FakeCall {
  std::vector<char> tags;
  std::vector<void*> pointers;
  std::vector<int64_t> params;
  explicit FakeCall(const OpCall& op) : tags(op.buffers.size()), params(op.params) {
    for (char& t : tags) pointers.push_back(&t);
  }
  worker::Call call() const {
    worker::Call c;
    c.params = params.data();
    c.n_params = static_cast<int>(params.size());
    c.buffers = pointers.data();
    c.n_buffers = static_cast<int>(pointers.size());
    return c;
  }
  // The name the judge gives the buffer a launcher argument points at ("" for none).
  std::string name_of(const void* p, const OpCall& op) const {
    for (size_t b = 0; b < tags.size(); ++b) {
      if (p == &tags[b]) return op.buffers[b].name;
    }
    return p == nullptr ? "nullptr" : "?";
  }
};

// What the fake launchers were called with: their arguments, by the launcher's names.
std::vector<std::pair<std::string, const void*>> g_pointers;
std::vector<int64_t> g_ints;
std::string g_instantiation;

void clear() {
  g_pointers.clear();
  g_ints.clear();
  g_instantiation.clear();
}

// The worker's invoke on a fake call of `op`: each launcher argument points at the buffer of its
// name, but `null_arg`, which must be nullptr.
template <typename Fn>
void expect_invoke(void (*invoke)(Fn, const worker::Call&), Fn fn, const OpCall& op,
                   const std::string& what, const std::string& null_arg = "") {
  clear();
  const FakeCall fake(op);
  invoke(fn, fake.call());
  ASSERT_FALSE(g_pointers.empty()) << what << ": the launcher was not called";
  for (const auto& [arg, p] : g_pointers) {
    const std::string want = arg == null_arg ? "nullptr" : arg;
    EXPECT_EQ(fake.name_of(p, op), want) << what << ": the launcher's argument " << arg;
  }
}

// ---------------------------------------------------------------------------------- matmul

std::vector<Expected> matmul_buffers(uint64_t M, uint64_t N, uint64_t K) {
  return {{"A", Role::kInput, 4, {M, K}}, {"B", Role::kInput, 4, {K, N}},
          {"C", Role::kOutput, 4, {M, N}}};
}

void matmul_fake(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t) {
  g_pointers = {{"A", A}, {"B", B}, {"C", C}};
  g_ints = {M, N, K};
}

TEST(Signature, MatmulBuffersAndLauncher) {
  namespace mm = ops::matmul;
  for (auto [M, N, K] : {std::tuple{1, 1, 1}, {127, 129, 33}, {64, 32, 200}}) {
    const std::string what = "matmul " + std::to_string(M) + "x" + std::to_string(N) + "x" +
                             std::to_string(K);
    const std::vector<Expected> want = matmul_buffers(M, N, K);
    expect_table(mm::Sig::kBufs, mm::Sig::Sizes{uint64_t(M), uint64_t(N), uint64_t(K)}, want);
    mm::Case c;
    c.M = M;
    c.N = N;
    c.K = K;
    c.calls = 2;
    const CheckSpec s = mm::spec("v", c);
    expect_buffers(s.call, want, what + " spec");
    expect_buffers(bench_call(mm::benchmark("v", M, N, K)), want, what + " benchmark");
    expect_invoke(&mm::invoke, &matmul_fake, s.call, what);
    EXPECT_EQ(g_ints, (std::vector<int64_t>{M, N, K})) << what << ": M, N, K";
  }
}

// Lab 10: A and B in a 16-bit float, C in float32; one launcher instantiation per type.
template <typename T>
void matmul16_fake(const T* A, const T* B, float* C, int M, int N, int K, cudaStream_t) {
  g_pointers = {{"A", A}, {"B", B}, {"C", C}};
  g_ints = {M, N, K};
  g_instantiation = std::is_same_v<T, __half>          ? "f16"
                    : std::is_same_v<T, __nv_bfloat16> ? "bf16"
                                                       : "?";
}

TEST(Signature, Matmul16BuffersAndLauncher) {
  namespace mm = ops::matmul;
  for (auto [M, N, K] : {std::tuple{128, 128, 32}, {256, 384, 96}}) {
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      const std::string what = std::string("matmul ") + dtype_name(dtype) + " " +
                               std::to_string(M) + "x" + std::to_string(N) + "x" +
                               std::to_string(K);
      const std::vector<Expected> want = {{"A", Role::kInput, 2, {uint64_t(M), uint64_t(K)}},
                                          {"B", Role::kInput, 2, {uint64_t(K), uint64_t(N)}},
                                          {"C", Role::kOutput, 4, {uint64_t(M), uint64_t(N)}}};
      expect_table(mm::Sig::kBufs, mm::Sig::Sizes{uint64_t(M), uint64_t(N), uint64_t(K), dtype},
                   want);
      mm::Case c;
      c.M = M;
      c.N = N;
      c.K = K;
      c.calls = 2;
      c.dtype = dtype;
      const CheckSpec s = mm::spec("v", c);
      expect_buffers(s.call, want, what + " spec");
      ASSERT_EQ(s.call.inputs.size(), 2u) << what;
      EXPECT_EQ(s.call.inputs[1][mm::Sig::kA].size(), size_t(M) * K * 2) << what << ": A's bytes";
      const bench::Spec b = mm::benchmark("v", M, N, K, dtype);
      expect_buffers(bench_call(b), want, what + " benchmark");
      EXPECT_EQ(b.call.buffers[mm::Sig::kA].source, dtype == DType::kF16
                                                        ? protocol::Source::kUniformF16
                                                        : protocol::Source::kUniformBF16)
          << what;
      EXPECT_EQ(b.name.rfind("matmul/v/" + std::string(dtype_name(dtype)) + "/", 0), 0u) << b.name;
      expect_invoke(&mm::invoke16, mm::Pair16{&matmul16_fake<__half>, &matmul16_fake<__nv_bfloat16>},
                    s.call, what);
      EXPECT_EQ(g_ints, (std::vector<int64_t>{M, N, K})) << what << ": M, N, K";
      EXPECT_EQ(g_instantiation, dtype_name(dtype)) << what;
      // The float32 launchers of labs 01-04 refuse 16-bit inputs, and the 16-bit ones float32.
      EXPECT_THROW(expect_invoke(&mm::invoke, &matmul_fake, s.call, what), std::invalid_argument);
    }
  }
  mm::Case c;
  EXPECT_THROW(expect_invoke(&mm::invoke16,
                             mm::Pair16{&matmul16_fake<__half>, &matmul16_fake<__nv_bfloat16>},
                             mm::spec("v", c).call, "float32"),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------- reduce

std::vector<Expected> reduce_buffers(uint64_t n, uint64_t workspace) {
  return {{"in", Role::kInput, 4, {n}}, {"out", Role::kOutput, 4, {1}},
          {"workspace", Role::kInOut, 4, {workspace}}};
}

template <typename T>
void reduce_fake(const T* in, T* out, size_t n, T* workspace, cudaStream_t) {
  g_pointers = {{"in", in}, {"out", out}, {"workspace", workspace}};
  g_ints = {static_cast<int64_t>(n)};
  g_instantiation = std::is_same_v<T, float> ? "f32" : std::is_same_v<T, int> ? "i32" : "?";
}

TEST(Signature, ReduceBuffersAndLauncher) {
  namespace rd = ops::reduce;
  namespace typed = ops::typed;
  for (size_t n : {size_t{1}, size_t{1025}, size_t{100003}}) {
    const size_t workspace = n / 32 + 1024;
    const std::vector<Expected> want = reduce_buffers(n, workspace);
    for (DType dtype : {DType::kF32, DType::kI32}) {
      const std::string what =
          std::string("reduce ") + dtype_name(dtype) + " n=" + std::to_string(n);
      expect_table(rd::Sig::kBufs, rd::Sig::Sizes{n, workspace, dtype}, want);
      for (const auto& row : rd::Sig::kBufs) {
        EXPECT_EQ(row.type(rd::Sig::Sizes{n, workspace, dtype}), dtype) << what << ", " << row.name;
      }
      rd::Case c;
      c.n = n;
      c.dtype = dtype;
      c.workspace = workspace;
      c.calls = 2;
      c.in_offset = 3;
      const CheckSpec s = rd::spec("v", c);
      expect_buffers(s.call, want, what + " spec");
      EXPECT_EQ(s.call.buffers[rd::Sig::kIn].offset, 12u) << what << ": `in` 3 elements past";
      expect_invoke(&typed::invoke<rd::Sig>, typed::Pair{&reduce_fake<float>, &reduce_fake<int>}, s.call,
                    what);
      EXPECT_EQ(g_ints, (std::vector<int64_t>{static_cast<int64_t>(n)})) << what << ": n";
      EXPECT_EQ(g_instantiation, dtype_name(dtype)) << what;
    }
    expect_buffers(bench_call(rd::benchmark("v", n, workspace)), want,
                   "reduce benchmark n=" + std::to_string(n));
  }
  // Only f32 and i32 have a launcher.
  rd::Case c;
  c.dtype = DType::kF64;
  EXPECT_THROW(rd::spec("v", c), std::invalid_argument);
}

// ------------------------------------------------------------------------------------ scan

std::vector<Expected> scan_buffers(uint64_t n, uint64_t workspace) {
  return {{"in", Role::kInput, 4, {n}}, {"out", Role::kOutput, 4, {n}},
          {"workspace", Role::kInOut, 4, {workspace}}};
}

template <typename T>
void scan_fake(const T* in, T* out, size_t n, T* workspace, cudaStream_t) {
  g_pointers = {{"in", in}, {"out", out}, {"workspace", workspace}};
  g_ints = {static_cast<int64_t>(n)};
  g_instantiation = std::is_same_v<T, float> ? "f32" : std::is_same_v<T, int> ? "i32" : "?";
}

TEST(Signature, ScanBuffersAndLauncher) {
  namespace sc = ops::scan;
  namespace typed = ops::typed;
  for (size_t n : {size_t{1}, size_t{1025}, size_t{100003}}) {
    const size_t workspace = n / 128 + 1024;
    const std::vector<Expected> want = scan_buffers(n, workspace);
    for (DType dtype : {DType::kF32, DType::kI32}) {
      const std::string what = std::string("scan ") + dtype_name(dtype) + " n=" + std::to_string(n);
      expect_table(sc::Sig::kBufs, sc::Sig::Sizes{n, workspace, dtype}, want);
      for (const auto& row : sc::Sig::kBufs) {
        EXPECT_EQ(row.type(sc::Sig::Sizes{n, workspace, dtype}), dtype) << what << ", " << row.name;
      }
      for (bool device_inputs : {false, true}) {
        sc::Case c;
        c.n = n;
        c.dtype = dtype;
        c.workspace = workspace;
        c.calls = 2;
        c.in_offset = 3;
        c.device_inputs = device_inputs;
        const CheckSpec s = sc::spec("v", c);
        expect_buffers(s.call, want, what + " spec");
        EXPECT_EQ(s.call.buffers[sc::Sig::kIn].offset, 12u) << what << ": `in` 3 elements past";
        const protocol::Source drawn = device_inputs ? (dtype == DType::kF32
                                                            ? ops::reduce::kSourceF32
                                                            : protocol::Source::kUniformI32)
                                                     : protocol::Source::kArena;
        EXPECT_EQ(s.call.buffers[sc::Sig::kIn].source, drawn) << what;
        expect_invoke(&typed::invoke<sc::Sig>, typed::Pair{&scan_fake<float>, &scan_fake<int>}, s.call,
                      what);
        EXPECT_EQ(g_ints, (std::vector<int64_t>{static_cast<int64_t>(n)})) << what << ": n";
        EXPECT_EQ(g_instantiation, dtype_name(dtype)) << what;
      }
      const bench::Spec b = sc::benchmark("v", dtype, n, workspace);
      expect_buffers(bench_call(b), want, what + " benchmark");
      EXPECT_EQ(b.name, "scan/v/" + std::string(dtype_name(dtype)) + "/" + std::to_string(n));
      EXPECT_EQ(b.call.params, sc::Sig::params(n, dtype)) << what << " benchmark";
    }
  }
  // Only f32 and i32 have a launcher.
  sc::Case c;
  c.dtype = DType::kF64;
  EXPECT_THROW(sc::spec("v", c), std::invalid_argument);
}

// ------------------------------------------------------------------------------- histogram

std::vector<Expected> histogram_buffers(uint64_t n, uint32_t elem, uint64_t bins) {
  return {{"in", Role::kInput, elem, {n}}, {"bins", Role::kOutput, 4, {bins}}};
}

template <typename T>
void histogram_fake(const T* in, unsigned int* bins, size_t n, int num_bins, cudaStream_t) {
  g_pointers = {{"in", in}, {"bins", bins}};
  g_ints = {static_cast<int64_t>(n), num_bins};
  g_instantiation = std::is_same_v<T, unsigned char> ? "u8" : std::is_same_v<T, int> ? "i32" : "?";
}

TEST(Signature, HistogramBuffersAndLauncher) {
  namespace h = ops::histogram;
  for (size_t n : {size_t{1}, size_t{1025}, size_t{100003}}) {
    for (DType dtype : {DType::kU8, DType::kI32}) {
      const uint32_t bins = dtype == DType::kU8 ? 256 : 12289;
      const uint32_t elem = dtype == DType::kU8 ? 1 : 4;
      const std::string what =
          std::string("histogram ") + dtype_name(dtype) + " n=" + std::to_string(n);
      const std::vector<Expected> want = histogram_buffers(n, elem, bins);
      expect_table(h::Sig::kBufs, h::Sig::Sizes{n, bins, dtype}, want);
      h::Case c;
      c.n = n;
      c.dtype = dtype;
      c.bins = bins;
      c.dist = h::kHot;
      c.calls = 2;
      c.in_offset = 12;
      const CheckSpec s = h::spec("v", c);
      expect_buffers(s.call, want, what + " spec");
      EXPECT_EQ(s.call.buffers[h::Sig::kIn].offset, 12u) << what << ": `in` 12 bytes past";
      EXPECT_EQ(s.call.buffers[h::Sig::kIn].source, dtype == DType::kU8
                                                        ? ops::histogram::kSourceU8
                                                        : ops::histogram::kSourceI32)
          << what;
      EXPECT_EQ(s.call.buffers[h::Sig::kIn].lo, h::kHot) << what << ": the distribution";
      EXPECT_EQ(s.call.buffers[h::Sig::kIn].hi, bins) << what << ": the bin count";
      expect_invoke(&h::invoke, h::Pair{&histogram_fake<unsigned char>, &histogram_fake<int>},
                    s.call, what);
      EXPECT_EQ(g_ints, (std::vector<int64_t>{static_cast<int64_t>(n), bins})) << what;
      EXPECT_EQ(g_instantiation, dtype_name(dtype)) << what;
      const bench::Spec b = h::benchmark("v", dtype, bins, n);
      expect_buffers(bench_call(b), want, what + " benchmark");
      EXPECT_EQ(b.name, "histogram/v/" + std::string(dtype_name(dtype)) + "/" +
                            std::to_string(bins) + "/" + std::to_string(n));
      EXPECT_EQ(b.call.params, h::Sig::params(n, dtype, bins)) << what << " benchmark";
    }
  }
  // Bytes have 256 bins; only u8 and i32 have a launcher.
  h::Case c;
  c.bins = 255;
  EXPECT_THROW(h::spec("v", c), std::invalid_argument);
  c.dtype = DType::kF32;
  c.bins = 256;
  EXPECT_THROW(h::spec("v", c), std::invalid_argument);
}

// ------------------------------------------------------------------------------- attention

std::vector<Expected> attention_buffers(uint64_t heads, uint64_t seq, uint64_t dim) {
  return {{"Q", Role::kInput, 2, {heads, seq, dim}}, {"K", Role::kInput, 2, {heads, seq, dim}},
          {"V", Role::kInput, 2, {heads, seq, dim}}, {"O", Role::kOutput, 2, {heads, seq, dim}}};
}

template <typename T>
void attention_fake(const T* q, const T* k, const T* v, T* o, int heads, int seq, int dim,
                    bool causal, cudaStream_t) {
  g_pointers = {{"Q", q}, {"K", k}, {"V", v}, {"O", o}};
  g_ints = {heads, seq, dim, causal ? 1 : 0};
  g_instantiation = std::is_same_v<T, __half>          ? "f16"
                    : std::is_same_v<T, __nv_bfloat16> ? "bf16"
                                                       : "?";
}

TEST(Signature, AttentionBuffersAndLauncher) {
  namespace at = ops::attention;
  for (auto [heads, seq, dim] : {std::tuple{1, 1, 64}, {3, 65, 128}}) {
    for (DType dtype : {DType::kF16, DType::kBF16}) {
      for (bool causal : {false, true}) {
        const std::string what = std::string("attention ") + dtype_name(dtype) + " h" +
                                 std::to_string(heads) + " s" + std::to_string(seq) + " d" +
                                 std::to_string(dim) + (causal ? " causal" : "");
        const std::vector<Expected> want =
            attention_buffers(uint64_t(heads), uint64_t(seq), uint64_t(dim));
        expect_table(at::Sig::kBufs,
                     at::Sig::Sizes{uint64_t(heads), uint64_t(seq), uint64_t(dim), dtype}, want);
        at::Case c;
        c.heads = heads;
        c.seq = seq;
        c.dim = dim;
        c.causal = causal;
        c.dtype = dtype;
        c.calls = 2;
        const CheckSpec s = at::spec("v", c);
        expect_buffers(s.call, want, what + " spec");
        ASSERT_EQ(s.call.inputs.size(), 2u) << what;
        expect_invoke(&at::invoke, at::Pair{&attention_fake<__half>, &attention_fake<__nv_bfloat16>},
                      s.call, what);
        EXPECT_EQ(g_ints, (std::vector<int64_t>{heads, seq, dim, causal ? 1 : 0}))
            << what << ": heads, seq, head_dim, causal";
        EXPECT_EQ(g_instantiation, dtype_name(dtype)) << what;
#if LABKIT_HAVE_ATTENTION_BENCH
        const bench::Spec b = at::benchmark("v", dtype, heads, seq, dim, causal);
        expect_buffers(bench_call(b), want, what + " benchmark");
        EXPECT_EQ(b.call.params, s.call.params) << what << " benchmark";
        EXPECT_EQ(b.call.buffers[at::Sig::kQ].source, dtype == DType::kF16
                                                          ? protocol::Source::kUniformF16
                                                          : protocol::Source::kUniformBF16)
            << what;
#endif
      }
    }
  }
  // Head dimensions 64 and 128, 16-bit types only.
  EXPECT_THROW(at::Sig::params(1, 1, 96, false, DType::kF16), std::invalid_argument);
  EXPECT_THROW(at::Sig::params(1, 1, 64, false, DType::kF32), std::invalid_argument);
}

// ------------------------------------------------------------------------------------ spmv

std::vector<Expected> spmv_buffers(uint64_t rows, uint64_t cols, uint64_t nnz, uint64_t ws_bytes) {
  return {{"row_ptr", Role::kInput, 4, {rows + 1}},
          {"col_idx", Role::kInput, 4, {nnz}},
          {"values", Role::kInput, 4, {nnz}},
          {"x", Role::kInput, 4, {cols}},
          {"y", Role::kOutput, 4, {rows}},
          {"workspace", Role::kInOut, 4, {(ws_bytes + 3) / 4}}};
}

void spmv_fake(int rows, int cols, int nnz, const int* row_ptr, const int* col_idx,
               const float* values, const float* x, float* y, void* workspace, cudaStream_t) {
  g_pointers = {{"row_ptr", row_ptr}, {"col_idx", col_idx}, {"values", values},
                {"x", x},             {"y", y},             {"workspace", workspace}};
  g_ints = {rows, cols, nnz};
}

TEST(Signature, SpmvBuffersAndLauncher) {
  namespace sp = ops::spmv;
  const std::pair<const char*, sp::Csr> matrices[] = {
      {"uniform", sp::uniform_random(300, 200, 1, 30, 5)},
      {"empty", sp::no_entries(17, 5)},
      {"wide", sp::uniform_random(3, 1000, 100, 400, 6)}};
  for (const auto& [name, csr] : matrices) {
    for (size_t ws_bytes : {size_t{0}, size_t{1022}, size_t{4096}}) {
      const auto m = std::make_shared<const sp::Csr>(csr);
      const uint64_t rows = m->rows, cols = m->cols, nnz = m->nnz();
      const std::string what =
          std::string("spmv ") + name + " workspace " + std::to_string(ws_bytes);
      const std::vector<Expected> want = spmv_buffers(rows, cols, nnz, ws_bytes);
      expect_table(sp::Sig::kBufs, sp::Sig::Sizes{rows, cols, nnz, ws_bytes}, want);
      sp::Case c;
      c.matrix = m;
      c.name = name;
      c.workspace_bytes = ws_bytes;
      c.calls = 2;
      const CheckSpec s = sp::spec("v", c);
      expect_buffers(s.call, want, what + " spec");
      expect_buffers(bench_call(sp::benchmark("v", name, m, ws_bytes)), want, what + " benchmark");
      expect_invoke(&sp::invoke, &spmv_fake, s.call, what);
      EXPECT_EQ(g_ints, (std::vector<int64_t>{m->rows, m->cols, m->nnz()}))
          << what << ": rows, cols, nnz";
    }
  }
}

// ------------------------------------------------------------------------------------ conv

// A lab's shape struct (conv.h's ConvShape): int members.
struct LabShape {
  int n, c_in, h, w, c_out, k, stride, pad;
};

std::vector<Expected> conv_buffers(const ops::conv::Shape& s, uint64_t workspace) {
  const uint64_t n = s.n, ci = s.c_in, h = s.h, w = s.w, co = s.c_out, k = s.k;
  const uint64_t ho = (h + 2 * s.pad - k) / s.stride + 1, wo = (w + 2 * s.pad - k) / s.stride + 1;
  return {{"x", Role::kInput, 4, {n, ci, h, w}},
          {"w", Role::kInput, 4, {co, ci, k, k}},
          {"bias", Role::kInput, 4, {co}},
          {"y", Role::kOutput, 4, {n, co, ho, wo}},
          {"workspace", Role::kInOut, 4, {workspace}}};
}

void conv_fake(const float* x, const float* w, const float* bias, float* y, LabShape s,
               float* workspace, cudaStream_t) {
  g_pointers = {{"x", x}, {"w", w}, {"bias", bias}, {"y", y}, {"workspace", workspace}};
  g_ints = {s.n, s.c_in, s.h, s.w, s.c_out, s.k, s.stride, s.pad};
}

ops::conv::Shape conv_shape(int n, int c_in, int h, int w, int c_out, int k, int stride, int pad) {
  ops::conv::Shape s;
  s.n = n;
  s.c_in = c_in;
  s.h = h;
  s.w = w;
  s.c_out = c_out;
  s.k = k;
  s.stride = stride;
  s.pad = pad;
  return s;
}

TEST(Signature, ConvBuffersAndLauncher) {
  namespace cv = ops::conv;
  for (const cv::Shape& shape : {conv_shape(2, 3, 9, 11, 5, 3, 2, 1),
                                 conv_shape(1, 1, 1, 1, 1, 1, 1, 0),
                                 conv_shape(1, 4, 7, 5, 6, 5, 1, 2)}) {
    for (bool bias : {false, true}) {
      const uint64_t workspace = 777;
      const std::string what = "conv " + shape.describe() + (bias ? " with bias" : "");
      const std::vector<Expected> want = conv_buffers(shape, workspace);
      expect_table(cv::Sig::kBufs, cv::Sig::Sizes{shape, workspace}, want);
      cv::Case c;
      c.shape = shape;
      c.bias = bias;
      c.workspace = workspace;
      c.calls = 2;
      const CheckSpec s = cv::spec("v", c);
      expect_buffers(s.call, want, what + " spec");
#if LABKIT_HAVE_CONV_BENCH
      expect_buffers(bench_call(cv::benchmark("v", "layer", shape, workspace)), want,
                     what + " benchmark");
#endif
      // No bias: the launcher gets nullptr, whatever the buffer holds.
      expect_invoke(&cv::invoke<LabShape>, &conv_fake, s.call, what, bias ? "" : "bias");
      EXPECT_EQ(g_ints, (std::vector<int64_t>{shape.n, shape.c_in, shape.h, shape.w, shape.c_out,
                                              shape.k, shape.stride, shape.pad}))
          << what << ": the shape";
    }
  }
}

}  // namespace
}  // namespace labkit
