// Conv kernel benchmark over the Conv layers of PaddleOCR det (1x3x640x640)
// and rec (1x3x48x320) (shapes extracted with python3-onnx, see
// docs/benchmarks.md): one case per distinct layer and a per-model total that
// runs every Conv of the model once, in order of the table, with its
// multiplicity. Filters are prepacked (as a compiled model runs them).
//   conv_bench [--benchmark_filter=Total] [--threads=N]   (Google Benchmark flags)
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/thread_pool.h"
#include "device/cpu_features.h"
#include "kernels/f32_conv/f32_conv.h"

namespace {

using namespace onnx_prepack;

struct Layer {
  int count;
  int64_t c, h, w, m, kh, kw, group, sh, sw, ph, pw;
};

// count, C, H, W, M, kh, kw, group, stride h/w, pad h/w (symmetric).
const std::vector<Layer> kDet = {
    {1, 3, 640, 640, 16, 3, 3, 1, 2, 2, 1, 1},  {1, 16, 320, 320, 16, 3, 3, 16, 1, 1, 1, 1},
    {1, 16, 320, 320, 32, 1, 1, 1, 1, 1, 0, 0}, {1, 32, 320, 320, 32, 3, 3, 32, 2, 2, 1, 1},
    {1, 32, 160, 160, 48, 1, 1, 1, 1, 1, 0, 0}, {1, 48, 160, 160, 48, 3, 3, 48, 1, 1, 1, 1},
    {1, 48, 160, 160, 48, 1, 1, 1, 1, 1, 0, 0}, {1, 48, 160, 160, 48, 3, 3, 48, 2, 2, 1, 1},
    {1, 48, 80, 80, 96, 1, 1, 1, 1, 1, 0, 0},   {1, 96, 80, 80, 96, 3, 3, 96, 1, 1, 1, 1},
    {1, 96, 80, 80, 96, 1, 1, 1, 1, 1, 0, 0},   {1, 96, 80, 80, 96, 3, 3, 96, 2, 2, 1, 1},
    {1, 96, 40, 40, 192, 1, 1, 1, 1, 1, 0, 0},  {4, 192, 40, 40, 192, 5, 5, 192, 1, 1, 2, 2},
    {4, 192, 40, 40, 192, 1, 1, 1, 1, 1, 0, 0}, {1, 192, 40, 40, 192, 5, 5, 192, 2, 2, 2, 2},
    {1, 192, 1, 1, 48, 1, 1, 1, 1, 1, 0, 0},    {1, 48, 1, 1, 192, 1, 1, 1, 1, 1, 0, 0},
    {1, 192, 20, 20, 384, 1, 1, 1, 1, 1, 0, 0}, {3, 384, 20, 20, 384, 5, 5, 384, 1, 1, 2, 2},
    {1, 384, 1, 1, 96, 1, 1, 1, 1, 1, 0, 0},    {1, 96, 1, 1, 384, 1, 1, 1, 1, 1, 0, 0},
    {3, 384, 20, 20, 384, 1, 1, 1, 1, 1, 0, 0}, {1, 48, 160, 160, 12, 1, 1, 1, 1, 1, 0, 0},
    {1, 96, 80, 80, 18, 1, 1, 1, 1, 1, 0, 0},   {1, 192, 40, 40, 42, 1, 1, 1, 1, 1, 0, 0},
    {1, 384, 20, 20, 360, 1, 1, 1, 1, 1, 0, 0}, {1, 360, 20, 20, 96, 1, 1, 1, 1, 1, 0, 0},
    {4, 96, 1, 1, 24, 1, 1, 1, 1, 1, 0, 0},     {4, 24, 1, 1, 96, 1, 1, 1, 1, 1, 0, 0},
    {1, 42, 40, 40, 96, 1, 1, 1, 1, 1, 0, 0},   {1, 18, 80, 80, 96, 1, 1, 1, 1, 1, 0, 0},
    {1, 12, 160, 160, 96, 1, 1, 1, 1, 1, 0, 0}, {1, 96, 20, 20, 24, 3, 3, 1, 1, 1, 1, 1},
    {4, 24, 1, 1, 6, 1, 1, 1, 1, 1, 0, 0},      {4, 6, 1, 1, 24, 1, 1, 1, 1, 1, 0, 0},
    {1, 96, 40, 40, 24, 3, 3, 1, 1, 1, 1, 1},   {1, 96, 80, 80, 24, 3, 3, 1, 1, 1, 1, 1},
    {2, 96, 160, 160, 24, 3, 3, 1, 1, 1, 1, 1},
};

const std::vector<Layer> kRec = {
    {1, 3, 48, 320, 16, 3, 3, 1, 2, 2, 1, 1},    {1, 16, 24, 160, 16, 3, 3, 16, 1, 1, 1, 1},
    {1, 16, 24, 160, 32, 1, 1, 1, 1, 1, 0, 0},   {1, 32, 24, 160, 32, 3, 3, 32, 1, 1, 1, 1},
    {1, 32, 24, 160, 64, 1, 1, 1, 1, 1, 0, 0},   {1, 64, 24, 160, 64, 3, 3, 64, 1, 1, 1, 1},
    {1, 64, 24, 160, 64, 1, 1, 1, 1, 1, 0, 0},   {1, 64, 24, 160, 64, 3, 3, 64, 2, 1, 1, 1},
    {1, 64, 12, 160, 128, 1, 1, 1, 1, 1, 0, 0},  {1, 128, 12, 160, 128, 3, 3, 128, 1, 1, 1, 1},
    {1, 128, 12, 160, 128, 1, 1, 1, 1, 1, 0, 0}, {1, 128, 12, 160, 128, 3, 3, 128, 1, 2, 1, 1},
    {1, 128, 12, 80, 240, 1, 1, 1, 1, 1, 0, 0},  {4, 240, 12, 80, 240, 5, 5, 240, 1, 1, 2, 2},
    {4, 240, 12, 80, 240, 1, 1, 1, 1, 1, 0, 0},  {1, 240, 12, 80, 240, 5, 5, 240, 2, 1, 2, 2},
    {1, 240, 1, 1, 60, 1, 1, 1, 1, 1, 0, 0},     {1, 60, 1, 1, 240, 1, 1, 1, 1, 1, 0, 0},
    {1, 240, 6, 80, 480, 1, 1, 1, 1, 1, 0, 0},   {1, 480, 6, 80, 480, 5, 5, 480, 1, 1, 2, 2},
    {1, 480, 1, 1, 120, 1, 1, 1, 1, 1, 0, 0},    {1, 120, 1, 1, 480, 1, 1, 1, 1, 1, 0, 0},
    {1, 480, 6, 80, 480, 1, 1, 1, 1, 1, 0, 0},   {1, 480, 6, 80, 480, 5, 5, 480, 2, 1, 2, 2},
    {2, 480, 3, 80, 480, 1, 1, 1, 1, 1, 0, 0},   {1, 480, 3, 80, 480, 5, 5, 480, 1, 1, 2, 2},
    {1, 480, 1, 40, 60, 1, 3, 1, 1, 1, 0, 1},    {1, 60, 1, 40, 120, 1, 1, 1, 1, 1, 0, 0},
    {1, 120, 1, 40, 480, 1, 1, 1, 1, 1, 0, 0},   {1, 960, 1, 40, 60, 1, 3, 1, 1, 1, 0, 1},
    {1, 60, 1, 40, 120, 1, 1, 1, 1, 1, 0, 0},
};

int g_threads = 1;

kernels::ConvGeometry geometry(const Layer& l) {
  kernels::ConvGeometry g;
  g.c = l.c;
  g.m = l.m;
  g.group = l.group;
  g.in[1] = l.h;
  g.in[2] = l.w;
  g.kernel[1] = l.kh;
  g.kernel[2] = l.kw;
  g.stride[1] = l.sh;
  g.stride[2] = l.sw;
  g.pad_begin[1] = g.pad_end[1] = l.ph;
  g.pad_begin[2] = g.pad_end[2] = l.pw;
  g.out[1] = (l.h + 2 * l.ph - l.kh) / l.sh + 1;
  g.out[2] = (l.w + 2 * l.pw - l.kw) / l.sw + 1;
  return g;
}

struct Scratch {
  std::vector<std::vector<float>> slots;
  static float* get(void* ctx, size_t worker, size_t floats) {
    auto* s = static_cast<Scratch*>(ctx);
    if (s->slots[worker].size() < floats) s->slots[worker].resize(floats);
    return s->slots[worker].data();
  }
};

// One layer, ready to run: input, packed filter, bias, output.
struct Prepared {
  kernels::ConvGeometry g;
  std::vector<float> x, w, bias, y;
  bool dw = false;
  int count = 1;
};

Prepared prepare(const Layer& l, const kernels::F32GemmKernel& uk) {
  Prepared p;
  p.g = geometry(l);
  p.count = l.count;
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  p.x.resize(size_t(p.g.c * p.g.in_pixels()));
  for (float& v : p.x) v = d(rng);
  std::vector<float> w(size_t(p.g.m * p.g.k()));
  for (float& v : w) v = d(rng);
  p.bias.resize(size_t(p.g.m));
  for (float& v : p.bias) v = d(rng);
  p.y.resize(size_t(p.g.m * p.g.out_pixels()));
  p.dw = p.g.is_depthwise() && p.g.cg() == 1;
  if (p.dw) {
    p.w = w;
  } else {
    p.w.resize(kernels::blocked_filter_floats(p.g));
    kernels::pack_blocked_filter(w.data(), p.g, uk.mr, p.w.data());
  }
  return p;
}

void run(Prepared& p, const kernels::F32GemmKernel& uk, kernels::DwRowFn row,
         base::ThreadPool* pool, Scratch& s) {
  const kernels::ConvScratch cs{&s, &Scratch::get};
  const kernels::ConvIndirectKernel* ind =
      kernels::conv_indirect_applies(p.g)
          ? kernels::conv_indirect_select(uk.mr, device::host_isa_level())
          : nullptr;
  if (p.dw) {
    kernels::conv_depthwise(p.g, row, p.x.data(), p.w.data(), p.bias.data(), p.y.data(), pool, cs);
  } else if (ind != nullptr) {
    kernels::conv_indirect(p.g, *ind, p.x.data(), p.w.data(), p.bias.data(), p.y.data(), pool, cs);
  } else {
    kernels::conv_blocked(p.g, uk, p.x.data(), p.w.data(), p.bias.data(), p.y.data(), pool, cs);
  }
}

void bench_layers(benchmark::State& state, const std::vector<Layer>* layers, int index) {
  const device::IsaLevel level = device::host_isa_level();
  const kernels::F32GemmKernel& uk = *kernels::conv_gemm_kernel(level);
  const kernels::DwRowFn row = kernels::dw_row_select(level);
  base::ThreadPool pool{size_t(g_threads)};
  Scratch s;
  s.slots.resize(pool.size());
  std::vector<Prepared> ps;
  double flops = 0;
  for (int i = 0; i < int(layers->size()); ++i) {
    if (index >= 0 && i != index) continue;
    ps.push_back(prepare((*layers)[size_t(i)], uk));
    const auto& g = ps.back().g;
    flops += 2.0 * double(g.m * g.k() * g.out_pixels()) * (index >= 0 ? 1 : ps.back().count);
  }
  for (auto _ : state) {
    for (Prepared& p : ps) {
      for (int r = 0; r < (index >= 0 ? 1 : p.count); ++r) run(p, uk, row, &pool, s);
    }
    benchmark::ClobberMemory();
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(std::string(uk.name) + ", threads " + std::to_string(g_threads));
}

std::string layer_name(const char* model, int i, const Layer& l) {
  return std::string(model) + "/" + std::to_string(i) + ":c" + std::to_string(l.c) + "_" +
         std::to_string(l.h) + "x" + std::to_string(l.w) + "_m" + std::to_string(l.m) + "_k" +
         std::to_string(l.kh) + "x" + std::to_string(l.kw) + "_g" + std::to_string(l.group) + "_s" +
         std::to_string(l.sh) + "x" + std::to_string(l.sw);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    if (std::strncmp(argv[i], "--threads=", 10) == 0) {
      g_threads = std::atoi(argv[i] + 10);
    } else {
      args.push_back(argv[i]);
    }
  }
  int n = int(args.size());
  benchmark::RegisterBenchmark("det/Total", bench_layers, &kDet, -1)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("rec/Total", bench_layers, &kRec, -1)->Unit(benchmark::kMillisecond);
  for (int i = 0; i < int(kDet.size()); ++i) {
    benchmark::RegisterBenchmark(layer_name("det", i, kDet[size_t(i)]).c_str(), bench_layers, &kDet,
                                 i)
        ->Unit(benchmark::kMillisecond);
  }
  for (int i = 0; i < int(kRec.size()); ++i) {
    benchmark::RegisterBenchmark(layer_name("rec", i, kRec[size_t(i)]).c_str(), bench_layers, &kRec,
                                 i)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&n, args.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
