// Lab 07 benchmark: both versions of conv.h against cuDNN's forward convolution (FP32, FMA
// math: no tensor cores) on the same GPU, in the same run, fresh inputs every call, every
// call's output checked (labkit/bench.hpp). GFLOPS counts 2 * N*C_out*H_out*W_out * C_in*K*K
// (the effective work); workspace_MB is conv_workspace_size() in megabytes. The grader reads
// the `ratio` counters named in grading.toml.
//
//   ./07_im2col_conv_bench [--smoke] [--benchmark_filter=REGEX]
// Exit status: 0 all ran and were right, 1 an error, 77 no GPU (skipped).
#include <string>
#include <vector>

#include "conv.h"
#include "labkit/bench.hpp"
#include "labkit/ops/conv_bench.hpp"
#include "labkit/worker.hpp"

namespace {

namespace cv = labkit::ops::conv;

struct Layer {
  std::string label;  // "56x56_64-64_k3s1p1_n64"
  cv::Shape shape;
};

Layer layer(int64_t n, int64_t c_in, int64_t h, int64_t w, int64_t c_out, int64_t k,
            int64_t stride, int64_t pad) {
  cv::Shape s;
  s.n = n; s.c_in = c_in; s.h = h; s.w = w; s.c_out = c_out; s.k = k; s.stride = stride; s.pad = pad;
  const std::string label = std::to_string(h) + "x" + std::to_string(w) + "_" +
                            std::to_string(c_in) + "-" + std::to_string(c_out) + "_k" +
                            std::to_string(k) + "s" + std::to_string(stride) + "p" +
                            std::to_string(pad) + "_n" + std::to_string(n);
  return {label, s};
}

}  // namespace

int main(int argc, char** argv) {
  return labkit::bench::main(argc, argv, [](bool smoke) {
    // ResNet-style layers: the two 3x3 layers with padding 1, the 7x7 stride-2 stem, a 1x1
    // layer, and the two 3x3 layers without padding (the first measurements).
    const std::vector<Layer> layers =
        smoke ? std::vector<Layer>{layer(2, 16, 14, 14, 32, 3, 1, 1)}
              : std::vector<Layer>{layer(64, 64, 56, 56, 64, 3, 1, 1),
                                   layer(32, 128, 28, 28, 128, 3, 1, 1),
                                   layer(64, 3, 224, 224, 64, 7, 2, 3),
                                   layer(64, 64, 56, 56, 256, 1, 1, 0),
                                   layer(64, 64, 56, 56, 64, 3, 1, 0),
                                   layer(32, 128, 28, 28, 128, 3, 1, 0)};
    std::vector<labkit::bench::Spec> specs;
    for (const char* variant : {CONV_VARIANTS(LABKIT_VARIANT_NAME)}) {
      for (const Layer& l : layers) {
        const ConvShape s{int(l.shape.n), int(l.shape.c_in), int(l.shape.h), int(l.shape.w),
                          int(l.shape.c_out), int(l.shape.k), int(l.shape.stride), int(l.shape.pad)};
        specs.push_back(cv::benchmark(variant, l.label, l.shape, conv_workspace_size(s)));
      }
    }
    return specs;
  });
}
