// TfIdfVectorizer over integer tokens (string pools are refused like every
// string tensor): counts the pool's n-grams (lengths min_gram_length to
// max_gram_length, items max_skip_count apart at most) in each row of X and
// writes them at their ngram_indexes positions, as counts (TF), 0/1 (IDF)
// or counts times weights (TFIDF; IDF uses the weights too).
#include <algorithm>
#include <map>

#include "runtime/ops/extra/common.h"

namespace onnx_prepack::runtime::extra {
namespace {

enum class TfMode { kTf, kIdf, kTfIdf };

struct TfIdfPlan {
  int64_t rows = 1, cols = 0, out_len = 0;
  int64_t min_n = 1, max_n = 1, max_skip = 0;
  TfMode mode = TfMode::kTf;
  // pool[n] maps an n-gram's items to its output position.
  std::map<int64_t, std::map<std::vector<int64_t>, int64_t>> pool;
  std::vector<float> weights;  // by output position; empty: all 1
};

template <typename I>
void vectorize(const TfIdfPlan& p, const I* x, float* y) {
  std::vector<int64_t> gram;
  for (int64_t r = 0; r < p.rows; ++r) {
    const I* row = x + r * p.cols;
    float* out = y + r * p.out_len;
    std::fill(out, out + p.out_len, 0.0f);
    for (const auto& [n, grams] : p.pool) {
      if (n < p.min_n || n > p.max_n) continue;
      // A 1-gram has no gaps: counted once, not once per skip.
      int64_t skips = n == 1 ? 0 : p.max_skip;
      for (int64_t skip = 0; skip <= skips; ++skip) {
        int64_t step = skip + 1;
        for (int64_t start = 0; start + (n - 1) * step < p.cols; ++start) {
          gram.clear();
          for (int64_t k = 0; k < n; ++k) gram.push_back(int64_t(row[start + k * step]));
          auto it = grams.find(gram);
          if (it != grams.end()) out[it->second] += 1;
        }
      }
    }
    for (int64_t i = 0; i < p.out_len; ++i) {
      float w = p.weights.empty() ? 1.0f : p.weights[size_t(i)];
      if (p.mode == TfMode::kIdf)
        out[i] = out[i] > 0 ? w : 0.0f;
      else if (p.mode == TfMode::kTfIdf)
        out[i] *= w;
    }
  }
}

Result<std::unique_ptr<Kernel>> build_tfidf(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  if (x->dtype != kInt32 && x->dtype != kInt64)
    return ctx.error("only int32 and int64 tokens are supported (string tensors are refused)");
  if (x->shape.empty() || x->shape.size() > 2) return ctx.error("X must be [C] or [N, C]");
  TfIdfPlan p;
  p.rows = x->shape.size() == 2 ? x->shape[0] : 1;
  p.cols = x->shape.back();
  p.min_n = ctx.attr_int("min_gram_length", 1);
  p.max_n = ctx.attr_int("max_gram_length", 1);
  p.max_skip = ctx.attr_int("max_skip_count", 0);
  if (p.min_n < 1 || p.max_n < p.min_n || p.max_skip < 0)
    return ctx.error("need 1 <= min_gram_length <= max_gram_length and max_skip_count >= 0");
  std::string mode = ctx.attr_string("mode", "TF");
  if (mode == "TF")
    p.mode = TfMode::kTf;
  else if (mode == "IDF")
    p.mode = TfMode::kIdf;
  else if (mode == "TFIDF")
    p.mode = TfMode::kTfIdf;
  else
    return ctx.error("mode '" + mode + "' is not TF, IDF or TFIDF");
  if (ctx.attr("pool_strings") != nullptr) return ctx.error("string pools are not supported");
  std::vector<int64_t> pool = ctx.attr_ints("pool_int64s").value_or(std::vector<int64_t>{});
  std::vector<int64_t> counts = ctx.attr_ints("ngram_counts").value_or(std::vector<int64_t>{});
  std::vector<int64_t> indexes = ctx.attr_ints("ngram_indexes").value_or(std::vector<int64_t>{});
  // counts[k] is where the (k+1)-grams start in the pool.
  size_t ordinal = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    int64_t n = int64_t(k) + 1;
    int64_t begin = counts[k];
    int64_t end = k + 1 < counts.size() ? counts[k + 1] : int64_t(pool.size());
    if (begin < 0 || end < begin || end > int64_t(pool.size()) || (end - begin) % n != 0)
      return ctx.error("ngram_counts does not split pool_int64s into whole n-grams");
    for (int64_t s = begin; s < end; s += n, ++ordinal) {
      if (ordinal >= indexes.size()) return ctx.error("ngram_indexes is shorter than the pool");
      int64_t pos = indexes[ordinal];
      if (pos < 0 || pos > (int64_t(1) << 32)) return ctx.error("ngram_indexes out of range");
      p.out_len = std::max(p.out_len, pos + 1);
      p.pool[n][std::vector<int64_t>(pool.begin() + s, pool.begin() + s + n)] = pos;
    }
  }
  // weights[i] belongs to the pool's i-th n-gram; kept by its output position.
  if (const auto* w = ctx.attr("weights")) {
    if (size_t(w->floats_size()) != ordinal)
      return ctx.error("weights must have one value per n-gram of the pool");
    p.weights.assign(size_t(p.out_len), 1.0f);
    for (size_t i = 0; i < ordinal; ++i) p.weights[size_t(indexes[i])] = w->floats(int(i));
  }
  Shape out = x->shape.size() == 2 ? Shape{p.rows, p.out_len} : Shape{p.out_len};
  OP_ASSIGN_OR_RETURN(int64_t n, checked_elements(ctx, out));
  (void)n;
  ctx.set_output(0, kFloat, out);
  bool i64 = x->dtype == kInt64;
  auto plan = std::make_shared<const TfIdfPlan>(std::move(p));
  return make_kernel([plan, i64](const KernelIO& io) {
    float* y = static_cast<float*>(io.out[0]);
    if (i64)
      vectorize(*plan, static_cast<const int64_t*>(io.in[0]), y);
    else
      vectorize(*plan, static_cast<const int32_t*>(io.in[0]), y);
  });
}

constexpr OpEntry kOps[] = {
    {"TfIdfVectorizer", build_tfidf},
};

}  // namespace

std::span<const OpEntry> tfidf_ops() { return kOps; }

}  // namespace onnx_prepack::runtime::extra
