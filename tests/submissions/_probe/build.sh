#!/bin/bash
# Temporary: build the real lab-01 test + bench binaries for every corpus case (device side).
cd "$(dirname "$0")/../../.."
B=${B:-/tmp/corpus_build}; mkdir -p $B
INC="-I common/include -I labs/01_naive_matmul -I /usr/local/cuda/include"
ls /usr/include/gtest/gtest.h >/dev/null || { echo "NO GTEST"; exit 2; }
pids=()
for f in cuda_check random gpu compare bench matmul gtest_main; do
  g++ -std=c++17 -O2 $INC -c common/src/$f.cpp -o $B/$f.o & done
g++ -std=c++17 -O2 $INC -c labs/01_naive_matmul/tests/public_test.cpp -o $B/pub.o &
g++ -std=c++17 -O2 $INC -c labs/01_naive_matmul/hidden/hidden_test.cpp -o $B/hid.o &
g++ -std=c++17 -O2 $INC -c labs/01_naive_matmul/bench/bench.cpp -o $B/benchmain.o &
wait
LK="$B/cuda_check.o $B/random.o $B/gpu.o $B/compare.o $B/bench.o"
one() {
  c=$1
  if ! nvcc -std=c++17 -O3 -arch=sm_90 -lineinfo -I labs/01_naive_matmul -c tests/submissions/$c/01_naive_matmul/matmul.cu -o $B/$c.o > $B/$c.build.log 2>&1; then echo "$c BUILD=compile-fail"; return; fi
  if ! g++ $B/pub.o $B/hid.o $B/matmul.o $B/gtest_main.o $LK $B/$c.o -lgtest -lpthread -L/usr/local/cuda/lib64 -lcudart -o $B/$c.test >> $B/$c.build.log 2>&1; then echo "$c BUILD=link-fail $(grep -o 'undefined reference to[^)]*)' $B/$c.build.log | head -1)"; return; fi
  g++ $B/benchmain.o $LK $B/$c.o -lbenchmark -lpthread -L/usr/local/cuda/lib64 -lcublas -lcudart -o $B/$c.bench >> $B/$c.build.log 2>&1 || echo "$c bench-link-fail"
  echo "$c BUILD=ok"
}
export -f one; export B LK
ls tests/submissions | grep -v '^_' | grep -v '\.' | xargs -P 16 -I{} bash -c 'one {}' | sort
