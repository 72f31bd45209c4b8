// The recurrent layer kernel. The input projection of all time steps is one
// GEMM (X W^T + biases); each step multiplies the hidden state by R^T (GRU's
// hidden gate by R_h^T separately), then applies the gates. W and R are packed
// into the GEMM kernels' panels once when they are constants.
#include "runtime/ops/control/recurrent_layer.h"

#include <algorithm>
#include <cstring>

#include "device/cpu_features.h"
#include "kernels/f32_gemm/gemm_driver.h"
#include "kernels/vec_math/vec_math.h"
#include "runtime/ops/linalg/gemm.h"

namespace onnx_prepack::runtime {

namespace {

// A T tensor as floats: the data itself when T is float, a widened copy otherwise.
class FloatView {
 public:
  FloatView(int32_t dtype, const void* data, int64_t n) {
    if (dtype == kFloat || data == nullptr) {
      ptr_ = static_cast<const float*>(data);
      return;
    }
    copy_.resize(size_t(n));
    for (int64_t i = 0; i < n; ++i) {
      if (dtype == kFloat16)
        copy_[size_t(i)] = half_to_float(static_cast<const uint16_t*>(data)[i]);
      if (dtype == kBfloat16)
        copy_[size_t(i)] = bfloat16_to_float(static_cast<const uint16_t*>(data)[i]);
      if (dtype == kDouble) copy_[size_t(i)] = float(static_cast<const double*>(data)[i]);
    }
    ptr_ = copy_.data();
  }
  const float* get() const { return ptr_; }

 private:
  const float* ptr_ = nullptr;
  std::vector<float> copy_;
};

void store_as(int32_t dtype, const float* src, int64_t n, void* dst) {
  for (int64_t i = 0; i < n; ++i) {
    if (dtype == kFloat16) static_cast<uint16_t*>(dst)[i] = float_to_half(src[i]);
    if (dtype == kBfloat16) static_cast<uint16_t*>(dst)[i] = float_to_bfloat16(src[i]);
    if (dtype == kDouble) static_cast<double*>(dst)[i] = src[i];
  }
}

// W^T and R^T of every direction in GEMM panels.
struct PackedWeights {
  size_t nr = 0;
  const kernels::F32GemmKernel* kernel = nullptr;  // the host's micro-kernel for `nr`
  std::vector<std::vector<float>> w, r, rh;        // rh: GRU's hidden-gate rows of R
  kernels::PackedBView view(const std::vector<float>& p, int64_t k, int64_t n) const {
    return kernels::PackedBView{p.data(), size_t(k), size_t(n), nr};
  }
};

std::vector<float> pack_nk(const float* src, int64_t n, int64_t k, size_t nr,
                           base::ThreadPool* pool) {
  std::vector<float> dst(std::max<size_t>(1, kernels::packed_b_floats(size_t(k), size_t(n), nr)));
  kernels::F32PackBArgs args{src,
                             kernels::PackSourceLayout::kNK,
                             kernels::PackSourceType::kFloat,
                             size_t(k),
                             size_t(n),
                             nr,
                             dst.data()};
  (void)kernels::f32_pack_b(args, pool);
  return dst;
}

std::shared_ptr<PackedWeights> pack_weights(const LayerSpec& s, const float* w, const float* r,
                                            base::ThreadPool* pool) {
  auto p = std::make_shared<PackedWeights>();
  p->nr = gemm_panel_width();
  p->kernel = kernels::f32_gemm_select(uint32_t(p->nr), device::host_isa_level());
  const int64_t gh = s.gh(), h = s.hidden;
  for (int d = 0; d < s.dirs; ++d) {
    p->w.push_back(pack_nk(w + d * gh * s.input, gh, s.input, p->nr, pool));
    p->r.push_back(pack_nk(r + d * gh * h, s.r_cols(), h, p->nr, pool));
    if (s.cell == CellKind::kGru)
      p->rh.push_back(pack_nk(r + d * gh * h + 2 * h * h, h, h, p->nr, pool));
  }
  return p;
}

// c[m, n] = a[m, k] b + bias (broadcast over rows; null: none).
void gemm(int64_t m, const float* a, int64_t lda, kernels::PackedBView b, float* c,
          const float* bias, base::ThreadPool* pool) {
  if (m == 0 || b.n == 0) return;
  kernels::F32GemmArgs args;
  args.m = size_t(m);
  args.a = a;
  args.lda = size_t(lda);
  args.b = b;
  args.c = c;
  args.ldc = b.n;
  args.bias = bias;
  args.bias_rs = 0;
  args.bias_cs = bias ? 1 : 0;
  kernels::F32GemmOptions options;
  // Small products cost less than waking the pool.
  options.pool = double(m) * double(b.n) * double(b.k) >= double(1 << 20) ? pool : nullptr;
  (void)kernels::f32_gemm(args, options);
}

// The per-step product H R^T for a batch that fits one micro-kernel tile:
// the micro-kernel runs over each panel directly (A packed as [k][row], which
// for one row is the row itself), without the driver's blocking. Every element
// is the same FMA chain as the driver's, so results match it.
void step_gemm(int64_t m, const float* a, int64_t k, const PackedWeights& pw,
               kernels::PackedBView b, float* c, const float* bias, std::vector<float>* a_pack,
               base::ThreadPool* pool) {
  const kernels::F32GemmKernel* uk = pw.kernel;
  if (uk == nullptr || m > int64_t(uk->mr) || k == 0 || m == 0) {
    gemm(m, a, k, b, c, bias, pool);
    return;
  }
  const float* ap = a;
  if (m > 1) {
    a_pack->resize(size_t(m * k));
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < k; ++j) (*a_pack)[size_t(j * m + i)] = a[i * k + j];
    }
    ap = a_pack->data();
  }
  const size_t panels = kernels::packed_b_panels(b.n, b.nr);
  for (size_t p = 0; p < panels; ++p) {
    kernels::F32GemmEpilogue ep;
    uint32_t flags = 0;
    if (bias) {
      flags = kernels::kGemmFinal;
      ep.bias = bias + p * b.nr;
      ep.bias_cs = 1;
    }
    uk->fn(size_t(m), std::min(b.nr, b.n - p * b.nr), size_t(k), ap, b.data + p * b.k * b.nr,
           c + p * b.nr, b.n, flags, &ep);
  }
}

// v = act(clip(v)) over n floats; Tanh and Sigmoid (0.5 tanh(v / 2) + 0.5)
// through the vectorised tanh.
void activate(const RnnActivation& act, bool clip_on, float clip, float* v, size_t n) {
  if (clip_on) {
    for (size_t i = 0; i < n; ++i) v[i] = std::clamp(v[i], -clip, clip);
  }
  if (act.kind == RnnActivation::Kind::kTanh) {
    kernels::vec::host_vec_kernels().tanh(v, v, n);
  } else if (act.kind == RnnActivation::Kind::kSigmoid) {
    for (size_t i = 0; i < n; ++i) v[i] *= 0.5f;
    kernels::vec::host_vec_kernels().tanh(v, v, n);
    for (size_t i = 0; i < n; ++i) v[i] = 0.5f * v[i] + 0.5f;
  } else {
    for (size_t i = 0; i < n; ++i) v[i] = act(v[i]);
  }
}

class RecurrentKernel final : public Kernel {
 public:
  RecurrentKernel(LayerSpec s, std::shared_ptr<PackedWeights> packed)
      : s_(std::move(s)), packed_(std::move(packed)) {}
  void run(const KernelIO& io) const override;
  // What run() allocates for itself: X transposed or widened, the float
  // outputs and their layout copy, the states, and per direction (both at once
  // on a pool) the input projection X W^T and the recurrent product rows.
  uint64_t scratch_bytes() const override {
    const uint64_t seq = uint64_t(s_.seq), batch = uint64_t(s_.batch), in = uint64_t(s_.input),
                   h = uint64_t(s_.hidden), dirs = uint64_t(s_.dirs);
    auto mul = [](std::initializer_list<uint64_t> v) {
      uint64_t r = 1;
      for (uint64_t x : v) r = saturating_mul(r, x);
      return r;
    };
    uint64_t floats = saturating_mul(2, mul({seq, batch, in}));  // X: transposed, widened
    floats = saturating_add(floats, saturating_mul(2, mul({seq, dirs, batch, h})));  // Y, copy
    floats = saturating_add(floats, saturating_mul(4, mul({dirs, batch, h})));       // states
    const uint64_t per_dir =
        saturating_add(mul({seq, batch, uint64_t(s_.gh())}), mul({batch, uint64_t(s_.r_cols())}));
    floats = saturating_add(floats, saturating_mul(dirs, per_dir));
    return saturating_mul(floats, sizeof(float));
  }

 private:
  void run_direction(int d, const float* xs, const float* bias, const int32_t* lens,
                     const float* h0, const float* c0, const float* peep, const PackedWeights& pw,
                     float* y, float* yh, float* yc, base::ThreadPool* pool) const;

  LayerSpec s_;
  std::shared_ptr<PackedWeights> packed_;  // null: W or R known only at run time
};

void RecurrentKernel::run(const KernelIO& io) const {
  const LayerSpec& s = s_;
  const int64_t seq = s.seq, batch = s.batch, in = s.input, h = s.hidden, gh = s.gh();
  // X time-major: [seq, batch, input].
  FloatView x(s.dtype, io.in[0], seq * batch * in);
  std::vector<float> xt;
  const float* xs = x.get();
  if (s.layout == 1) {
    xt.resize(size_t(seq * batch * in));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t t = 0; t < seq; ++t) {
        std::copy_n(xs + (b * seq + t) * in, in, xt.data() + (t * batch + b) * in);
      }
    }
    xs = xt.data();
  }
  std::shared_ptr<PackedWeights> packed = packed_;
  if (!packed) {
    FloatView w(s.dtype, io.in[1], s.dirs * gh * in), r(s.dtype, io.in[2], s.dirs * gh * h);
    packed = pack_weights(s, w.get(), r.get(), io.pool);
  }
  FloatView bias(s.dtype, s.has_b ? io.in[3] : nullptr, s.dirs * 2 * gh);
  const int32_t* lens = s.has_lens ? static_cast<const int32_t*>(io.in[4]) : nullptr;
  // Initial states in [dirs, batch, hidden] order.
  auto states = [&](bool has, int index) {
    std::vector<float> v(size_t(s.dirs * batch * h), 0.0f);
    if (!has) return v;
    FloatView f(s.dtype, io.in[size_t(index)], s.dirs * batch * h);
    for (int d = 0; d < s.dirs; ++d) {
      for (int64_t b = 0; b < batch; ++b) {
        int64_t from = s.layout == 1 ? (b * s.dirs + d) * h : (d * batch + b) * h;
        std::copy_n(f.get() + from, h, v.data() + (d * batch + b) * h);
      }
    }
    return v;
  };
  std::vector<float> h0 = states(s.has_h0, 5), c0 = states(s.has_c0, 6);
  FloatView peep(s.dtype, s.has_p ? io.in[7] : nullptr, s.dirs * 3 * h);
  // Outputs in float, layout 0 ([seq, dirs, batch, h] and [dirs, batch, h]).
  std::vector<float> y(size_t(seq * s.dirs * batch * h), 0.0f);
  std::vector<float> yh(size_t(s.dirs * batch * h)), yc(size_t(s.dirs * batch * h));
  auto direction = [&](size_t d) {
    run_direction(int(d), xs, s.has_b ? bias.get() + int64_t(d) * 2 * gh : nullptr, lens,
                  h0.data() + int64_t(d) * batch * h, c0.data() + int64_t(d) * batch * h,
                  s.has_p ? peep.get() + int64_t(d) * 3 * h : nullptr, *packed, y.data(),
                  yh.data() + int64_t(d) * batch * h, yc.data() + int64_t(d) * batch * h, io.pool);
  };
  if (s.dirs == 2 && io.pool != nullptr && io.pool->size() > 1) {
    // The directions are independent and write disjoint outputs: one per
    // worker (the products inside then run on that worker only).
    io.pool->parallel_for(2, [&](size_t d, size_t) { direction(d); });
  } else {
    for (int d = 0; d < s.dirs; ++d) direction(size_t(d));
  }
  auto emit = [&](const std::vector<float>& v, void* out, bool is_y) {
    if (out == nullptr) return;
    std::vector<float> tmp;
    const float* src = v.data();
    if (s.layout ==
        1) {  // [seq, dirs, batch] -> [batch, seq, dirs]; [dirs, batch] -> [batch, dirs]
      tmp.resize(v.size());
      int64_t steps = is_y ? seq : 1;
      for (int64_t t = 0; t < steps; ++t) {
        for (int d = 0; d < s.dirs; ++d) {
          for (int64_t b = 0; b < batch; ++b) {
            std::copy_n(src + ((t * s.dirs + d) * batch + b) * h, h,
                        tmp.data() + ((b * steps + t) * s.dirs + d) * h);
          }
        }
      }
      src = tmp.data();
    }
    if (s.dtype == kFloat) {
      std::copy_n(src, v.size(), static_cast<float*>(out));
    } else {
      store_as(s.dtype, src, int64_t(v.size()), out);
    }
  };
  emit(y, io.out[0], true);
  if (io.out.size() > 1) emit(yh, io.out[1], false);
  if (io.out.size() > 2) emit(yc, io.out[2], false);
}

void RecurrentKernel::run_direction(int d, const float* xs, const float* bias, const int32_t* lens,
                                    const float* h0, const float* c0, const float* peep,
                                    const PackedWeights& pw, float* y, float* yh, float* yc,
                                    base::ThreadPool* pool) const {
  const LayerSpec& s = s_;
  const int64_t seq = s.seq, batch = s.batch, h = s.hidden, gh = s.gh();
  const bool gru = s.cell == CellKind::kGru, lstm = s.cell == CellKind::kLstm;
  const bool reverse = s.reverse || d == 1;
  const RnnActivation* act = s.acts.data() + d * s.acts_per_dir;
  // Biases: W's and R's summed for the input projection, except GRU's
  // hidden-gate R bias, which belongs to the product with R_h.
  std::vector<float> bx(size_t(gh), 0.0f), brh(size_t(h), 0.0f);
  if (bias) {
    for (int64_t j = 0; j < gh; ++j) {
      bool gru_h = gru && j >= 2 * h;
      bx[size_t(j)] = bias[j] + (gru_h ? 0.0f : bias[gh + j]);
      if (gru_h) brh[size_t(j - 2 * h)] = bias[gh + j];
    }
  }
  std::vector<float> xw(size_t(seq * batch * gh));
  gemm(seq * batch, xs, s.input, pw.view(pw.w[size_t(d)], s.input, gh), xw.data(), bx.data(), pool);
  std::vector<int64_t> len(size_t(batch), seq);
  if (lens) {
    for (int64_t b = 0; b < batch; ++b) len[size_t(b)] = std::clamp<int64_t>(lens[b], 0, seq);
  }
  const int64_t max_len = batch ? *std::max_element(len.begin(), len.end()) : 0;
  std::vector<float> hs(h0, h0 + batch * h), cs(c0, c0 + batch * h);
  std::vector<float> hr(size_t(batch * s.r_cols())), gate(size_t(batch * h)), hh(size_t(batch * h)),
      rin(size_t(batch * h), 0.0f);
  const kernels::PackedBView rv = pw.view(pw.r[size_t(d)], h, s.r_cols());
  auto time_of = [&](int64_t b, int64_t step) {
    return reverse ? len[size_t(b)] - 1 - step : step;
  };
  std::vector<float> a_pack, pre(static_cast<size_t>(4 * h)), tmp(static_cast<size_t>(h));
  const size_t hn = size_t(h);
  for (int64_t step = 0; step < max_len; ++step) {
    step_gemm(batch, hs.data(), h, pw, rv, hr.data(), nullptr, &a_pack, pool);
    if (gru) {
      // z and r first; then the hidden gate's product with R_h.
      for (int64_t b = 0; b < batch; ++b) {
        if (step >= len[size_t(b)]) continue;
        const float* x = xw.data() + (time_of(b, step) * batch + b) * gh;
        const float* r = hr.data() + b * 2 * h;
        for (int64_t j = 0; j < 2 * h; ++j) pre[size_t(j)] = x[j] + r[j];
        activate(act[0], s.clip_on, s.clip, pre.data(), 2 * hn);
        for (int64_t j = 0; j < h; ++j) {
          gate[size_t(b * h + j)] = pre[size_t(j)];
          float rg = pre[size_t(h + j)];
          rin[size_t(b * h + j)] = s.linear_before_reset ? rg : rg * hs[size_t(b * h + j)];
        }
      }
      step_gemm(batch, s.linear_before_reset ? hs.data() : rin.data(), h, pw,
                pw.view(pw.rh[size_t(d)], h, h), hh.data(), brh.data(), &a_pack, pool);
    }
    for (int64_t b = 0; b < batch; ++b) {
      if (step >= len[size_t(b)]) continue;
      const int64_t t = time_of(b, step);
      const float* x = xw.data() + (t * batch + b) * gh;
      const float* r = hr.data() + b * s.r_cols();
      float* hrow = hs.data() + b * h;
      float* crow = cs.data() + b * h;
      if (gru) {
        const float* z = gate.data() + b * h;
        const float* rr = rin.data() + b * h;
        const float* hp = hh.data() + b * h;
        for (int64_t j = 0; j < h; ++j) {
          pre[size_t(j)] = x[2 * h + j] + (s.linear_before_reset ? rr[j] * hp[j] : hp[j]);
        }
        activate(act[1], s.clip_on, s.clip, pre.data(), hn);
        for (int64_t j = 0; j < h; ++j) {
          hrow[j] = (1.0f - z[j]) * pre[size_t(j)] + z[j] * hrow[j];
        }
      } else if (lstm) {
        // Gate order in W and R: i, o, f, c; peepholes: i, o, f.
        float* pi = pre.data();
        float* po = pre.data() + h;
        float* pf = pre.data() + 2 * h;
        float* pc = pre.data() + 3 * h;
        for (int64_t j = 0; j < h; ++j) {
          pi[j] = x[j] + r[j] + (peep ? peep[j] * crow[j] : 0.0f);
          pf[j] = x[2 * h + j] + r[2 * h + j] + (peep ? peep[2 * h + j] * crow[j] : 0.0f);
          pc[j] = x[3 * h + j] + r[3 * h + j];
        }
        activate(act[0], s.clip_on, s.clip, pi, hn);
        if (s.input_forget) {
          for (int64_t j = 0; j < h; ++j) pf[j] = 1.0f - pi[j];
        } else {
          activate(act[0], s.clip_on, s.clip, pf, hn);
        }
        activate(act[1], s.clip_on, s.clip, pc, hn);
        for (int64_t j = 0; j < h; ++j) {
          crow[j] = pf[j] * crow[j] + pi[j] * pc[j];
          po[j] = x[h + j] + r[h + j] + (peep ? peep[h + j] * crow[j] : 0.0f);
          tmp[size_t(j)] = crow[j];
        }
        activate(act[0], s.clip_on, s.clip, po, hn);
        activate(act[2], false, 0.0f, tmp.data(), hn);
        for (int64_t j = 0; j < h; ++j) hrow[j] = po[j] * tmp[size_t(j)];
      } else {
        for (int64_t j = 0; j < h; ++j) pre[size_t(j)] = x[j] + r[j];
        activate(act[0], s.clip_on, s.clip, pre.data(), hn);
        std::copy_n(pre.data(), h, hrow);
      }
      std::copy_n(hrow, h, y + ((t * s.dirs + d) * batch + b) * h);
    }
  }
  std::copy(hs.begin(), hs.end(), yh);
  std::copy(cs.begin(), cs.end(), yc);
}

}  // namespace

std::unique_ptr<Kernel> make_recurrent_kernel(LayerSpec spec, const Tensor* w, const Tensor* r) {
  std::shared_ptr<PackedWeights> packed;
  if (w != nullptr && r != nullptr) {
    FloatView wf(spec.dtype, w->data, w->numel());
    FloatView rf(spec.dtype, r->data, r->numel());
    packed = pack_weights(spec, wf.get(), rf.get(), nullptr);
  }
  return std::make_unique<RecurrentKernel>(std::move(spec), std::move(packed));
}

}  // namespace onnx_prepack::runtime
