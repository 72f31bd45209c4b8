// The plan's fusion passes: MatMulInteger or ConvInteger with its Cast / Mul /
// Add / Relu becomes one kernel (kernel.h, IntegerMatMulEpilogue); a run of consecutive
// float elementwise steps over one shape becomes one FusedPointwise kernel
// (pointwise_fusion.h). Values only the
// run reads live in scratch tiles and leave the arena; values read later, or
// graph outputs, are still written.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>

#include "kernels/vec_math/vec_math.h"
#include "runtime/pointwise_fusion.h"
#include "runtime/session.h"
#include "runtime/session_state.h"

namespace onnx_prepack::runtime {
namespace {

// Steps in one fused kernel at most (its program is interpreted per tile).
constexpr size_t kMaxChain = 16;

bool fusion_disabled_by_env() {
  static const bool off = [] {
    const char* f = std::getenv("ONNX_PREPACK_FUSION");
    return f != nullptr && std::strcmp(f, "0") == 0;
  }();
  return off;
}

bool conv_epilogue_disabled_by_env() {
  static const bool off = [] {
    const char* f = std::getenv("ONNX_PREPACK_CONV_EPILOGUE");
    return f != nullptr && std::strcmp(f, "0") == 0;
  }();
  return off;
}

}  // namespace

// Each step's outputs are defined (and, until lifetimes are computed, last
// read) at the step's new position.
void Session::renumber_step_outputs() {
  for (int si = 0; si < int(steps_.size()); ++si) {
    for (int id : steps_[size_t(si)].out) {
      if (id < 0) continue;
      values_[size_t(id)].def = si;
      values_[size_t(id)].last = si;
    }
  }
}

// Drops the steps marked in `drop`, puts each fused step in front of the
// original step whose position it takes, then renumbers every value's defining
// step. Each fusion pass ends with it.
void Session::splice_fused_steps(const std::vector<bool>& drop,
                                 std::vector<std::pair<int, Step>>& placed) {
  if (placed.empty()) return;
  std::vector<Step> steps;
  for (int si = 0; si < int(steps_.size()); ++si) {
    for (auto& [at, st] : placed) {
      if (at == si) steps.push_back(std::move(st));
    }
    if (!drop[size_t(si)]) steps.push_back(std::move(steps_[size_t(si)]));
  }
  steps_ = std::move(steps);
  renumber_step_outputs();
}

bool Session::conv_epilogue_enabled() const {
  return options_.fuse_pointwise && options_.fuse_conv_epilogue && !fusion_disabled_by_env() &&
         !conv_epilogue_disabled_by_env();
}

// MatMulInteger or ConvInteger (a kernel that takes a float epilogue) ->
// Cast(float) -> Mul(scale) [-> Add(bias)] [-> Relu] becomes one step, at the
// position of the chain's last step (the scale may be computed after the
// product, by the Mul of the two scales quantize_dynamic writes). The scale
// and the bias are one float or one per output column (shape [.., 1, N]) of a
// MatMulInteger, per output channel (shape [M, 1, ...] or [1, M, 1, ...]) of a
// ConvInteger; every intermediate
// value must be read by the next step alone, be no graph output and share no
// storage. Bitwise equal to the steps run apart (IntegerMatMulEpilogue).
// A float MatMul on a prepared B -> Add(bias) (one float or one per output column,
// either operand order) becomes one step too: the GEMM adds the bias as it stores
// each tile (Kernel::with_column_bias), so the product is not written and read
// again; bitwise equal (one rounded addition either way).
void Session::fuse_matmul_epilogues() {
  if (!options_.fuse_pointwise || fusion_disabled_by_env() || steps_.size() < 2) return;
  // Readers of each value (by step), counting readers through an alias as readers.
  std::vector<std::vector<int>> readers(values_.size());
  std::vector<bool> aliased(values_.size(), false);
  for (const Value& v : values_) {
    if (v.alias_of >= 0) aliased[size_t(v.alias_of)] = true;
  }
  for (int si = 0; si < int(steps_.size()); ++si) {
    for (int id : steps_[size_t(si)].in) {
      if (id >= 0) readers[size_t(id)].push_back(si);
    }
  }
  std::vector<bool> is_output(values_.size(), false);
  for (const auto& name : output_names_) is_output[size_t(value_index_.at(name))] = true;
  auto op_type = [&](int si) -> const std::string& {
    return graph_->node(steps_[size_t(si)].node).op_type();
  };
  // The one step reading `id`, when `id` is a plain intermediate value; else -1.
  auto sole_reader = [&](int id) {
    const Value& v = values_[size_t(id)];
    if (v.alias_of >= 0 || aliased[size_t(id)] || is_output[size_t(id)] || !v.runtime) return -1;
    const auto& r = readers[size_t(id)];
    if (r.size() != 1) return -1;
    const Step& st = steps_[size_t(r[0])];
    if (st.kernel == nullptr || st.out.size() != 1 || st.out[0] < 0) return -1;
    if (std::count(st.in.begin(), st.in.end(), id) != 1) return -1;
    return r[0];
  };
  auto binary_op = [&](int si) {
    const PointwiseDesc* p = steps_[size_t(si)].kernel->pointwise();
    return p != nullptr && p->kind == PointwiseDesc::kBinary ? p->op : -1;
  };
  // The count of a scale or bias operand: 1, or n for shape [.., 1, n] (rank
  // at most the output's) of a MatMulInteger, for shape [[1,] n, 1, ...] (n
  // broadcast onto the output's channel axis 1) of a ConvInteger; 0 when the
  // epilogue cannot read it.
  auto column_operand = [&](int id, const Shape& out, int64_t n, bool conv) -> int64_t {
    if (id < 0) return 0;
    const ValueDesc& d = values_[size_t(id)].desc;
    if (d.dtype != kFloat || d.shape.size() > out.size()) return 0;
    const int64_t count = shape_numel(d.shape);
    if (count == 1) return 1;
    if (count != n || d.shape.empty()) return 0;
    if (!conv) return d.shape.back() == n ? n : 0;
    // Right-aligned against [N, M, spatial...]: n must sit at the channel axis.
    const size_t lead = out.size() - d.shape.size();
    if (lead > 1 || d.shape[1 - lead] != n) return 0;
    return n;
  };

  std::vector<bool> drop(steps_.size(), false);
  std::vector<std::pair<int, Step>> placed;  // the fused step and the position it takes
  for (int mi = 0; mi < int(steps_.size()); ++mi) {
    Step& mm = steps_[size_t(mi)];
    if (!drop[size_t(mi)] && mm.kernel != nullptr && op_type(mi) == "MatMul" &&
        mm.out.size() == 1 && mm.out[0] >= 0 && values_[size_t(mm.out[0])].desc.dtype == kFloat) {
      const int prod = mm.out[0];
      const Shape shape = values_[size_t(prod)].desc.shape;
      const int ai = shape.empty() ? -1 : sole_reader(prod);
      if (ai < 0 || drop[size_t(ai)] || binary_op(ai) != kernels::vec::kAdd ||
          steps_[size_t(ai)].in.size() != 2 ||
          values_[size_t(steps_[size_t(ai)].out[0])].desc.shape != shape)
        continue;
      const Step& add = steps_[size_t(ai)];
      const int bias = add.in[0] == prod ? add.in[1] : add.in[0];
      const int64_t bn = column_operand(bias, shape, shape.back(), false);
      std::unique_ptr<Kernel> k = bn > 0 ? mm.kernel->with_column_bias(bn) : nullptr;
      if (k == nullptr) continue;
      Step fused;
      fused.node = mm.node;
      fused.label = "FusedMatMulBias";
      fused.kernel = std::move(k);
      fused.in = mm.in;
      fused.in.resize(2, -1);
      fused.in.push_back(bias);
      fused.out = {add.out[0]};
      drop[size_t(mi)] = drop[size_t(ai)] = true;
      values_[size_t(prod)].runtime = false;  // never written
      values_[size_t(prod)].def = -1;
      stats_.fused += 2;
      placed.emplace_back(ai, std::move(fused));
      continue;
    }
    if (drop[size_t(mi)] || mm.kernel == nullptr ||
        (op_type(mi) != "MatMulInteger" && op_type(mi) != "ConvInteger") || mm.out.size() != 1 ||
        mm.out[0] < 0 || values_[size_t(mm.out[0])].desc.dtype != kInt32)
      continue;
    const bool conv = op_type(mi) == "ConvInteger";
    const int prod = mm.out[0];
    const Shape shape = values_[size_t(prod)].desc.shape;
    if (shape.size() < (conv ? 3u : 1u)) continue;
    const int64_t n = conv ? shape[1] : shape.back();  // the epilogue's columns
    const int ci = sole_reader(prod);
    if (ci < 0 || op_type(ci) != "Cast") continue;
    const int cast_out = steps_[size_t(ci)].out[0];
    if (values_[size_t(cast_out)].desc.dtype != kFloat) continue;
    const int ki = sole_reader(cast_out);
    if (ki < 0 || binary_op(ki) != kernels::vec::kMul) continue;
    const Step& mul = steps_[size_t(ki)];
    if (mul.in.size() != 2 || values_[size_t(mul.out[0])].desc.shape != shape) continue;
    const int scale = mul.in[0] == cast_out ? mul.in[1] : mul.in[0];
    IntegerMatMulEpilogue e;
    e.scale_n = column_operand(scale, shape, n, conv);
    if (e.scale_n == 0) continue;
    std::vector<int> chain = {mi, ci, ki};
    int bias = -1, last = mul.out[0];
    if (const int ai = sole_reader(last);
        ai >= 0 && binary_op(ai) == kernels::vec::kAdd &&
        values_[size_t(steps_[size_t(ai)].out[0])].desc.shape == shape) {
      const Step& add = steps_[size_t(ai)];
      const int other = add.in[0] == last ? add.in[1] : add.in[0];
      if (const int64_t bn = column_operand(other, shape, n, conv); bn > 0) {
        bias = other;
        e.bias_n = bn;
        e.bias_first = add.in[0] != last;
        last = add.out[0];
        chain.push_back(ai);
      }
    }
    if (const int ri = sole_reader(last);
        ri >= 0 && op_type(ri) == "Relu" &&
        values_[size_t(steps_[size_t(ri)].out[0])].desc.dtype == kFloat) {
      e.relu = true;
      last = steps_[size_t(ri)].out[0];
      chain.push_back(ri);
    }
    std::unique_ptr<Kernel> k = mm.kernel->with_float_epilogue(e);
    if (k == nullptr) continue;
    Step fused;
    fused.node = mm.node;
    fused.label = conv ? "FusedConvInteger" : "FusedMatMulInteger";
    fused.kernel = std::move(k);
    fused.in = mm.in;
    fused.in.resize(4, -1);
    fused.in.push_back(scale);
    fused.in.push_back(bias);
    fused.out = {last};
    for (size_t c = 0; c < chain.size(); ++c) {
      drop[size_t(chain[c])] = true;
      const int out = steps_[size_t(chain[c])].out[0];
      if (out != last) {
        values_[size_t(out)].runtime = false;  // never written
        values_[size_t(out)].def = -1;
      }
    }
    stats_.fused += chain.size();
    placed.emplace_back(chain.back(), std::move(fused));
  }
  splice_fused_steps(drop, placed);
}

void Session::fuse_pointwise() {
  if (!options_.fuse_pointwise || fusion_disabled_by_env() || steps_.size() < 2) return;
  auto owner = [&](int id) {
    const int a = values_[size_t(id)].alias_of;
    return a >= 0 ? a : id;
  };
  // Last step reading each storage owner, and the owners graph outputs need.
  std::vector<int> last_read(values_.size(), -1);
  for (int si = 0; si < int(steps_.size()); ++si) {
    for (int id : steps_[size_t(si)].in) {
      if (id >= 0 && values_[size_t(id)].runtime) last_read[size_t(owner(id))] = si;
    }
  }
  std::vector<bool> is_output(values_.size(), false);
  for (const auto& name : output_names_) {
    const int id = value_index_.at(name);
    if (values_[size_t(id)].runtime) is_output[size_t(owner(id))] = true;
  }

  // The one float output of a pointwise step, or -1.
  auto single_output = [&](const Step& st) {
    if (st.kernel == nullptr || st.kernel->pointwise() == nullptr || st.out.size() != 1) return -1;
    const int id = st.out[0];
    if (id < 0 || values_[size_t(id)].desc.dtype != kFloat || values_[size_t(id)].alias_of >= 0)
      return -1;
    return id;
  };

  // Values a float Conv writes (its one output), for chains of one.
  const bool epilogue = conv_epilogue_enabled();
  std::vector<bool> conv_out(values_.size(), false);
  for (const Step& st : steps_) {
    if (st.kernel != nullptr && st.node >= 0 && st.out.size() == 1 && st.out[0] >= 0 &&
        graph_->node(st.node).op_type() == "Conv" &&
        values_[size_t(st.out[0])].desc.dtype == kFloat)
      conv_out[size_t(st.out[0])] = true;
  }

  std::vector<Step> fused_steps;
  size_t i = 0;
  while (i < steps_.size()) {
    const int head_out = single_output(steps_[i]);
    if (head_out < 0) {
      fused_steps.push_back(std::move(steps_[i++]));
      continue;
    }
    const Shape shape = values_[size_t(head_out)].desc.shape;
    FusedPointwise chain = fused_layout(shape);
    std::map<int, int> produced;  // value id -> position in the chain
    std::vector<int> ext_in;      // io.in of the fused kernel
    std::vector<FusedInstr> program;
    struct Read {
      int value;
      size_t instr;
      int slot;  // 0: a, 1: b
    };
    std::vector<Read> reads;

    // Adds step j to the chain when every operand is one the kernel can read.
    auto try_add = [&](size_t j) {
      const Step& st = steps_[j];
      const int out = single_output(st);
      if (out < 0 || values_[size_t(out)].desc.shape != shape) return false;
      PointwiseDesc op = *st.kernel->pointwise();
      const size_t operands = op.kind == PointwiseDesc::kBinary ? 2 : 1;
      if (st.in.size() < operands) return false;
      FusedInstr ins;
      ins.op = op;
      std::vector<Read> new_reads;
      std::vector<int> new_ext;
      bool connected = j == i;
      for (size_t k = 0; k < operands; ++k) {
        const int id = st.in[k];
        if (id < 0) return false;
        FusedOperand& o = k == 0 ? ins.a : ins.b;
        if (produced.count(id)) {
          new_reads.push_back({id, program.size(), int(k)});
          connected = true;
          continue;
        }
        const Value& v = values_[size_t(id)];
        if (v.desc.dtype != kFloat || produced.count(owner(id))) return false;
        if (!classify_operand(v.desc.shape, shape, chain, o)) return false;
        // An activation's input has the chain's shape, read with stride 1.
        if (op.kind == PointwiseDesc::kActivation && o.kind != FusedOperand::kFull) return false;
        auto at = std::find(ext_in.begin(), ext_in.end(), id);
        int index = int(at - ext_in.begin());
        if (at == ext_in.end()) {
          auto nat = std::find(new_ext.begin(), new_ext.end(), id);
          index = int(ext_in.size() + size_t(nat - new_ext.begin()));
          if (nat == new_ext.end()) new_ext.push_back(id);
        }
        o.index = index;
      }
      if (!connected) return false;
      if (op.bounds_from_inputs) {  // Clip: bounds known now, or no fusion
        op.p0 = -INFINITY;
        op.p1 = INFINITY;
        for (size_t k = 1; k <= 2; ++k) {
          if (st.in.size() <= k || st.in[k] < 0) continue;
          const Value& v = values_[size_t(st.in[k])];
          if (!v.constant || v.desc.dtype != kFloat || v.constant->numel() != 1) return false;
          (k == 1 ? op.p0 : op.p1) = v.constant->view().as<float>()[0];
        }
        op.bounds_from_inputs = false;
        ins.op = op;
      }
      ext_in.insert(ext_in.end(), new_ext.begin(), new_ext.end());
      reads.insert(reads.end(), new_reads.begin(), new_reads.end());
      produced[out] = int(program.size());
      program.push_back(ins);
      return true;
    };

    size_t j = i;
    while (j < steps_.size() && j - i < kMaxChain && try_add(j)) ++j;
    // A lone step becomes a chain of one when it reads a Conv's output: the
    // Conv epilogue pass then runs it on the Conv's output tiles.
    const bool lone_ok = j - i == 1 && epilogue &&
                         std::any_of(steps_[i].in.begin(), steps_[i].in.end(),
                                     [&](int id) { return id >= 0 && conv_out[size_t(id)]; });
    if (j - i < 2 && !lone_ok) {
      fused_steps.push_back(std::move(steps_[i++]));
      continue;
    }
    // Stored values: read after the chain, or graph outputs. The rest get scratch
    // tiles, reused once their last reader in the chain has run.
    std::vector<int> out_ids;  // in chain order
    std::map<int, int> last_use;
    for (const Read& r : reads) last_use[r.value] = std::max(last_use[r.value], int(r.instr));
    std::map<int, int> slot_of_value;  // temps: value id -> scratch tile
    std::vector<int> free_slots;
    int temps = 0;
    bool too_many = false;
    std::vector<int> chain_values(program.size());
    for (const auto& [id, pos] : produced) chain_values[size_t(pos)] = id;
    for (size_t p = 0; p < program.size(); ++p) {
      // Slots whose value's last reader was the previous instruction are free now;
      // freeing after this instruction's reads keeps in-place writes legal too.
      const int id = chain_values[p];
      for (const Read& r : reads) {
        if (r.instr == p) {
          FusedOperand& o = r.slot == 0 ? program[p].a : program[p].b;
          const int pos = produced[r.value];
          o = program[size_t(pos)].dst;
        }
      }
      for (const auto& [vid, lu] : last_use) {
        auto slot = slot_of_value.find(vid);
        if (lu == int(p) && slot != slot_of_value.end()) {
          free_slots.push_back(slot->second);
          slot_of_value.erase(slot);
        }
      }
      const bool stored = last_read[size_t(id)] >= int(j) || is_output[size_t(id)];
      FusedOperand& dst = program[p].dst;
      if (stored) {
        dst.kind = FusedOperand::kStored;
        dst.index = int(out_ids.size());
        out_ids.push_back(id);
      } else {
        dst.kind = FusedOperand::kTemp;
        if (free_slots.empty()) {
          if (temps == kMaxFusedTemps) {
            too_many = true;
            break;
          }
          free_slots.push_back(temps++);
        }
        dst.index = free_slots.back();
        free_slots.pop_back();
        slot_of_value[id] = dst.index;
      }
    }
    if (too_many || out_ids.empty()) {
      fused_steps.push_back(std::move(steps_[i++]));
      continue;
    }
    chain.temps = temps;
    chain.program = std::move(program);
    Step fused;
    fused.node = steps_[i].node;
    fused.label = "FusedPointwise";
    fused.kernel = make_fused_pointwise_kernel(std::move(chain));
    fused.in = ext_in;
    fused.out = out_ids;
    for (const auto& [id, pos] : produced) {
      if (std::find(out_ids.begin(), out_ids.end(), id) == out_ids.end()) {
        values_[size_t(id)].runtime = false;  // lives in scratch tiles only
        values_[size_t(id)].def = -1;
      }
    }
    if (j - i > 1) stats_.fused += j - i;  // a chain of one counts when a Conv takes it
    fused_steps.push_back(std::move(fused));
    i = j;
  }
  steps_ = std::move(fused_steps);
  renumber_step_outputs();
}

}  // namespace onnx_prepack::runtime

namespace onnx_prepack::runtime {

// Conv -> one FusedPointwise step (a residual Add of a same-shape value, the
// activation, the rest of the chain fuse_pointwise built) becomes one Conv
// step that runs the chain on each finished run of its output while it is in
// cache (kernels::ConvOutputEpilogue): the Conv writes its result straight
// into the chain's last stored value and the chain transforms it in place, so
// the feature map is written once instead of written, read and written again.
// The Conv's value must be read by that step alone (no other reader, no graph
// output, no alias) and only as a full operand; the chain's other operands
// keep the shapes fuse_pointwise accepted (same shape, per channel, scalar),
// so a broadcast residual ends the chain before it gets here. Bitwise equal to
// the steps run apart: the Conv computes the same values, and the chain runs
// the same vector functions on them (elementwise, so independent of where a
// run starts).
void Session::fuse_conv_epilogue() {
  if (!conv_epilogue_enabled() || steps_.size() < 2) return;
  std::vector<std::vector<int>> readers(values_.size());
  std::vector<bool> aliased(values_.size(), false);
  for (const Value& v : values_) {
    if (v.alias_of >= 0) aliased[size_t(v.alias_of)] = true;
  }
  for (int si = 0; si < int(steps_.size()); ++si) {
    for (int id : steps_[size_t(si)].in) {
      if (id >= 0) readers[size_t(id)].push_back(si);
    }
  }
  std::vector<bool> is_output(values_.size(), false);
  for (const auto& name : output_names_) is_output[size_t(value_index_.at(name))] = true;

  std::vector<bool> drop(steps_.size(), false);
  size_t fused = 0;
  for (int ci = 0; ci < int(steps_.size()); ++ci) {
    Step& conv = steps_[size_t(ci)];
    if (conv.kernel == nullptr || conv.node < 0 || conv.label != nullptr ||
        graph_->node(conv.node).op_type() != "Conv" || conv.out.size() != 1 || conv.out[0] < 0 ||
        conv.in.size() > 3)
      continue;
    const int y = conv.out[0];
    const Value& yv = values_[size_t(y)];
    if (yv.desc.dtype != kFloat || !yv.runtime || yv.alias_of >= 0 || aliased[size_t(y)] ||
        is_output[size_t(y)] || readers[size_t(y)].size() != 1)
      continue;
    const int si = readers[size_t(y)][0];
    Step& chain_step = steps_[size_t(si)];
    const FusedPointwise* fp =
        chain_step.kernel != nullptr ? chain_step.kernel->fused_pointwise() : nullptr;
    if (fp == nullptr || chain_step.out.empty() || drop[size_t(si)]) continue;
    if (values_[size_t(chain_step.out[0])].desc.shape != yv.desc.shape) continue;
    const auto at = std::find(chain_step.in.begin(), chain_step.in.end(), y);
    if (at == chain_step.in.end() || std::count(chain_step.in.begin(), chain_step.in.end(), y) != 1)
      continue;
    const int q = int(at - chain_step.in.begin());
    OutputEpilogue e;
    e.chain = *fp;
    // The stored value written last takes the Conv's result; every read of
    // the Conv's value must come no later than that write.
    std::vector<int> written_at(chain_step.out.size(), -1);
    int last_read = -1;
    bool ok = true;
    for (size_t p = 0; p < e.chain.program.size(); ++p) {
      const FusedInstr& ins = e.chain.program[p];
      const size_t operands = ins.op.kind == PointwiseDesc::kBinary ? 2 : 1;
      for (size_t k = 0; k < operands; ++k) {
        const FusedOperand& o = k == 0 ? ins.a : ins.b;
        if (o.kind != FusedOperand::kTemp && o.kind != FusedOperand::kStored && o.index == q) {
          if (o.kind != FusedOperand::kFull) ok = false;
          last_read = int(p);
        }
      }
      if (ins.dst.kind == FusedOperand::kStored) written_at[size_t(ins.dst.index)] = int(p);
    }
    const int raw =
        int(std::max_element(written_at.begin(), written_at.end()) - written_at.begin());
    if (!ok || last_read < 0 || written_at[size_t(raw)] < last_read) continue;
    const size_t conv_inputs = 3;
    for (FusedInstr& ins : e.chain.program) {
      for (FusedOperand* o : {&ins.a, &ins.b}) {
        if (o->kind == FusedOperand::kTemp || o->kind == FusedOperand::kStored) continue;
        if (o->index == q) {
          o->kind = FusedOperand::kStored;
          o->index = raw;
        } else {
          o->index += int(conv_inputs);
        }
      }
    }
    e.raw = raw;
    std::unique_ptr<Kernel> k = conv.kernel->with_output_epilogue(e);
    if (k == nullptr) continue;
    Step st;
    st.node = conv.node;
    st.label = "FusedConv";
    st.kernel = std::move(k);
    st.in = conv.in;
    st.in.resize(conv_inputs, -1);
    for (size_t t = 0; t < chain_step.in.size(); ++t) {
      st.in.push_back(int(t) == q ? -1 : chain_step.in[t]);
    }
    st.out = chain_step.out;
    values_[size_t(y)].runtime = false;  // lives in the chain's output only
    values_[size_t(y)].def = -1;
    drop[size_t(ci)] = true;
    // The Conv, and a chain of one (not counted by fuse_pointwise).
    stats_.fused += e.chain.program.size() == 1 ? 2 : 1;
    chain_step = std::move(st);
    ++fused;
  }
  if (fused == 0) return;
  stats_.conv_epilogues += fused;
  std::vector<Step> steps;
  for (size_t si = 0; si < steps_.size(); ++si) {
    if (!drop[si]) steps.push_back(std::move(steps_[si]));
  }
  steps_ = std::move(steps);
  renumber_step_outputs();
}

}  // namespace onnx_prepack::runtime
