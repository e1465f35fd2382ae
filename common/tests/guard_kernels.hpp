#pragma once

#include <cuda_runtime.h>

enum class HarnessFault { kNone, kNoGuard, kSkipLastColumn, kDropLastK };

void launch_write_at(float* p, long long offset, float value);
void launch_spin(long long cycles, cudaStream_t stream);
void launch_harness_matmul(const float* A, const float* B, float* C, int M, int N, int K,
                           cudaStream_t stream, HarnessFault fault);
void launch_bad_config(cudaStream_t stream);  // 4096 threads per block: always rejected
