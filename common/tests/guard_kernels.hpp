#pragma once

#include <cuda_runtime.h>

void launch_write_at(float* p, long long offset, float value);
void launch_spin(long long cycles, cudaStream_t stream);
void launch_bad_config(cudaStream_t stream);  // 4096 threads per block: always rejected
// 4096 blocks of 256 threads: each thread reads a slot of its shared (local) memory, counts into
// `found` a mark another tag left there, and leaves this tag's. carveout < 0: the driver's choice.
void launch_shared_mark(unsigned tag, int carveout, unsigned long long* found);
void launch_local_mark(unsigned tag, unsigned long long* found);
