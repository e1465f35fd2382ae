#pragma once

#include <cuda_runtime.h>

void launch_write_at(float* p, long long offset, float value);
void launch_spin(long long cycles, cudaStream_t stream);
void launch_bad_config(cudaStream_t stream);  // 4096 threads per block: always rejected
