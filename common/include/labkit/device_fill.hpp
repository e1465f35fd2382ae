// Device-side fills used by the worker and the benchmark judge: counter-based random inputs
// (the same numbers labkit::uniform_f32 gives on the CPU), every generated source through its
// table entry (labkit/source.hpp), and 32-bit patterns (poison, canaries). Compiled by nvcc
// once; callable from plain C++. None of their kernels computes what a lab asks (docs/release.md,
// "Judge-side kernels").
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "labkit/protocol.hpp"

namespace labkit {

void fill_uniform_f32(float* out, size_t count, uint64_t seed, float lo, float hi,
                      cudaStream_t stream);
// uniform_f32 rounded to IEEE half (bf16 = false) or bfloat16 (labkit/half.hpp: uniform_16),
// as 16-bit words; and how many elements differ from it (synchronises).
void fill_uniform_16(void* out, bool bf16, size_t count, uint64_t seed, float lo, float hi,
                     cudaStream_t stream);
uint64_t count_not_uniform_16(const void* a, bool bf16, size_t count, uint64_t seed, float lo,
                              float hi, cudaStream_t stream);
void fill_uniform_i32(int32_t* out, size_t count, uint64_t seed, int32_t lo, int32_t hi,
                      cudaStream_t stream);
// Writes `pattern` to every aligned 32-bit word of [out, out + bytes); bytes % 4 == 0.
void fill_pattern32(void* out, size_t bytes, uint32_t pattern, cudaStream_t stream);
// A generated source (labkit/source.hpp: the core's or a family's, not kArena) into `out`:
// `count` elements drawn from `seed` (and lo, hi where the source has a range); and how many
// elements of `a` differ from what it draws (synchronises). Throws std::invalid_argument for
// kArena or an identifier no family registered. `plane`: the source's segment length
// (SourceKind::plane of the buffer's dims; 0 where it has none).
void fill_source(void* out, protocol::Source source, size_t count, uint64_t seed, double lo,
                 double hi, cudaStream_t stream, size_t plane = 0);
uint64_t count_not_source(const void* a, protocol::Source source, size_t count, uint64_t seed,
                          double lo, double hi, cudaStream_t stream, size_t plane = 0);
// out[i] = in[i] (or in[i]^2 when `square`) in double: the inputs of a double reference product.
void to_f64(const float* in, double* out, size_t count, bool square, cudaStream_t stream);
// The same from 16-bit floats (IEEE half, or bfloat16 when bf16).
void to_f64_16(const void* in, bool bf16, double* out, size_t count, bool square,
               cudaStream_t stream);
// fabs of every element, in place (the benchmark's |A|, |B| for the error bound).
void abs_f32(float* data, size_t count, cudaStream_t stream);
// Reads [data, data + bytes) once (16-byte aligned, bytes a multiple of 16) and keeps none of
// it: the benchmark's L2 flush (L2Flusher), which leaves the cache full of clean lines of its
// own. A flush that wrote instead left as many dirty lines, whose write-back the next kernel to
// evict them paid in its window: a kernel that read its input with an evict_first hint evicted
// none and left the debt to the vendor's kernel timed after it (a 36 MiB read on an H200: 19.6
// us after a writing flush, 18.1 us with evict_first; 16.3 and 16.5 after this one; red team
// round 37).
void read_through(const void* data, size_t bytes, cudaStream_t stream);
// Every line L2 keeps as persisting (loads or stores with an evict_last policy, an access
// policy window) back to normal, so that the next flush evicts it: without it a call's kernels
// kept up to the device's persisting set-aside (11.25 MiB of an H200's 60) of their data in L2
// through the flush, for their own next call, and away from the vendor's kernel timed after
// them (red team round 37; 36 MiB read evict_last, flushed, read again: 18.5 us, 20.5 after a
// reset, 20.8 cold). A reset from any context demotes every context's lines (measured: one
// from another process did). Where the device has no persisting lines to reset, nothing.
void reset_persisting_l2();
// One block of an empty kernel: the calibration worker's stand-in for a launcher (the launch
// and the wait for it are part of every timed call's overhead).
void launch_empty_kernel(cudaStream_t stream);
// The mangled names of the kernels scrub_local_memory and scrub_shared_memory launch (every
// instantiation): racecheck leaves exactly these out of its tracking (judge.cpp,
// sanitizer_argv). No submission can define a kernel of these names: the policy refuses device
// functions in namespace labkit:: and every C-linkage definition.
std::vector<std::string> scrub_kernel_names();
// Clears the local memory (the threads' stacks: spills, local arrays) that any kernel of this
// context can address: a grid that fills every warp slot of every SM twice over stores zeros
// over a frame of at least `frame` bytes (the largest frame of the loaded kernels) and the
// per-thread stack (cudaLimitStackSize, which the driver raises to the largest frame a launched
// kernel needed and never lowers). The executor runs it before every call, off the clock
// (Executor::prepare), so that no call finds what an earlier one left there, and neither the
// race check's replay, a fresh process, nor a benchmark's timed call can be told from any other
// call. False when it could not launch (a frame past 64 KiB, or the device cannot be asked).
bool scrub_local_memory(size_t frame, cudaStream_t stream);
// The same for shared memory: in every split between L1 and shared memory the SM can take
// (where a block's shared memory lies depends on it), blocks of a quarter of the shared part,
// four to an SM, store fresh garbage over their dynamic window (no kernel finds zeros it did not
// write: a shared histogram or tree never zeroed is wrong, as on any GPU) and zeros over their
// reserved part. False when it could not launch.
bool scrub_shared_memory(cudaStream_t stream);
// How many elements differ from what fill_uniform_* wrote with these arguments, or between two
// buffers (32-bit words of `bytes`, bytes % 4 == 0); synchronises `stream`.
uint64_t count_not_uniform_f32(const float* a, size_t count, uint64_t seed, float lo, float hi,
                               cudaStream_t stream);
uint64_t count_not_uniform_i32(const int32_t* a, size_t count, uint64_t seed, int32_t lo,
                               int32_t hi, cudaStream_t stream);
uint64_t count_differences(const void* a, const void* b, size_t bytes, cudaStream_t stream);

}  // namespace labkit
