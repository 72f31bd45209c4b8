// TfIdfVectorizer (integer tokens): counts the pool's n-grams (lengths
// min_gram_length..max_gram_length, consecutive tokens max_skip_count apart at
// most) in each row, then TF (counts), IDF (weight when present) or TFIDF
// (count * weight). Strings are refused with the other string tensors.
#include <algorithm>
#include <map>
#include <memory>

#include "runtime/memory_account.h"
#include "runtime/ops/tensor/tensor_ops.h"

namespace onnx_prepack::runtime::tensor_family {

BuildResult build_tfidf_vectorizer(BuildContext& ctx) {
  OP_ASSIGN_OR_RETURN(const ValueDesc* x, ctx.require_input(0));
  OP_RETURN_IF_ERROR(require_index_type(ctx, x->dtype, "input"));
  if (x->shape.empty() || x->shape.size() > 2) return ctx.error("input must be [N] or [B, N]");
  if (ctx.attr("pool_strings")) return ctx.error("string pools are not supported");
  int64_t min_n = ctx.attr_int("min_gram_length", 1), max_n = ctx.attr_int("max_gram_length", 1);
  int64_t max_skip = ctx.attr_int("max_skip_count", 0);
  std::string mode = ctx.attr_string("mode", "TF");
  auto counts = ctx.attr_ints("ngram_counts").value_or(std::vector<int64_t>());
  auto indexes = ctx.attr_ints("ngram_indexes").value_or(std::vector<int64_t>());
  auto pool = ctx.attr_ints("pool_int64s").value_or(std::vector<int64_t>());
  std::vector<float> weights;
  if (const auto* a = ctx.typed_attr("weights", onnx::AttributeProto::FLOATS))
    weights.assign(a->floats().begin(), a->floats().end());
  if (min_n < 1 || max_n < min_n || max_skip < 0 || counts.empty())
    return ctx.error("gram lengths, max_skip_count or ngram_counts are invalid");
  if (mode != "TF" && mode != "IDF" && mode != "TFIDF")
    return ctx.error("mode '" + mode + "' is not TF, IDF or TFIDF");
  // n-gram (as a token vector) -> output index; ngram_counts[k] is where grams
  // of length k + 1 start in the pool.
  std::map<std::vector<int64_t>, int64_t> grams;
  int64_t gram_no = 0, out_dim = 0;
  for (size_t k = 0; k < counts.size(); ++k) {
    int64_t len = int64_t(k) + 1;
    int64_t begin = counts[k];
    int64_t end = k + 1 < counts.size() ? counts[k + 1] : int64_t(pool.size());
    if (begin < 0 || end < begin || end > int64_t(pool.size()) || (end - begin) % len != 0)
      return ctx.error("ngram_counts do not split the pool");
    for (int64_t p = begin; p < end; p += len, ++gram_no) {
      if (gram_no >= int64_t(indexes.size())) return ctx.error("ngram_indexes is too short");
      int64_t oi = indexes[size_t(gram_no)];
      // The output has max(ngram_indexes) + 1 columns: an index that large
      // cannot be an output coordinate (checked_numel's bound).
      if (oi < 0 || oi >= (int64_t(1) << 62))
        return ctx.error("ngram_indexes[" + std::to_string(gram_no) + "] = " + std::to_string(oi) +
                         " is out of range of the output");
      out_dim = std::max(out_dim, oi + 1);
      grams[std::vector<int64_t>(pool.begin() + p, pool.begin() + p + len)] = oi;
    }
  }
  if (!weights.empty() && weights.size() != indexes.size())
    return ctx.error("weights must have one entry per n-gram");
  bool batched = x->shape.size() == 2;
  int64_t rows = batched ? x->shape[0] : 1, len = x->shape.back();
  Shape out = batched ? Shape{rows, out_dim} : Shape{out_dim};
  if (auto b = checked_tensor_bytes(kFloat, out, "output"); !b.ok())
    return ctx.error("ngram_indexes up to " + std::to_string(out_dim - 1) +
                     " make the output too large: " + b.status().message());
  for (size_t g = 0; g < weights.size(); ++g) {
    if (indexes[g] < 0 || indexes[g] >= out_dim)
      return ctx.error("ngram_indexes[" + std::to_string(g) + "] = " + std::to_string(indexes[g]) +
                       " is out of range of the output (" + std::to_string(out_dim) + ")");
  }
  // The weight of each output column, as large as a row of the output: held
  // against the memory budget before it is allocated, and only when a mode
  // reads weights (none given: every weight is 1).
  std::vector<float> weight_of;
  std::shared_ptr<MemoryReservation> table;
  if (!weights.empty() && mode != "TF") {
    const uint64_t bytes = uint64_t(out_dim) * sizeof(float);
    OP_ASSIGN_OR_RETURN(MemoryReservation r,
                        reserve_memory(bytes, ctx.where() + ": the weight table of " +
                                                  std::to_string(out_dim) + " output columns"));
    table = std::make_shared<MemoryReservation>(std::move(r));
    weight_of.assign(size_t(out_dim), 1.0f);
    for (size_t g = 0; g < weights.size(); ++g) weight_of[size_t(indexes[g])] = weights[g];
  }
  // Only grams the pool holds can count (lengths up to ngram_counts.size())
  // and only those that fit in a row: the loops are bounded by the input, not
  // by max_gram_length / max_skip_count (2^62 must not hang).
  max_n = std::min<int64_t>(max_n, int64_t(counts.size()));
  max_skip = std::min<int64_t>(max_skip, len);
  ctx.set_output(0, kFloat, out);
  bool is64 = x->dtype == kInt64;
  return std::unique_ptr<Kernel>(new FnKernel(
      [=, weight_of = std::move(weight_of), table = std::move(table)](const KernelIO& io) {
        float* o = static_cast<float*>(io.out[0]);
        std::fill(o, o + rows * out_dim, 0.0f);
        std::vector<int64_t> gram;
        for (int64_t r = 0; r < rows; ++r) {
          float* row = o + r * out_dim;
          for (int64_t n = min_n; n <= max_n; ++n) {
            for (int64_t skip = 0; skip <= (n == 1 ? 0 : max_skip); ++skip) {
              int64_t span = (n - 1) * (skip + 1);
              if (span >= len) break;  // larger skips do not fit either
              for (int64_t i = 0; i + span < len; ++i) {
                gram.clear();
                for (int64_t t = 0; t < n; ++t)
                  gram.push_back(index_at(io.in[0], is64, r * len + i + t * (skip + 1)));
                auto it = grams.find(gram);
                if (it != grams.end()) row[it->second] += 1;
              }
            }
          }
          for (int64_t j = 0; j < out_dim; ++j) {
            const float w = weight_of.empty() ? 1.0f : weight_of[size_t(j)];
            if (mode == "IDF")
              row[j] = row[j] > 0 ? w : 0;
            else if (mode == "TFIDF")
              row[j] *= w;
          }
        }
      }));
}

}  // namespace onnx_prepack::runtime::tensor_family
