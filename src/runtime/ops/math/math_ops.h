// Builders of the math family (registry.cc lists them), one per operator,
// defined in the file that holds the operator (README.md's table).
#pragma once

#include <memory>

#include "runtime/kernel.h"

namespace onnx_prepack::runtime::math {

// arithmetic.cc
Result<std::unique_ptr<Kernel>> build_add_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sub_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_mul_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_div_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_pow_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_equal_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_where_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sqrt_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_erf_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_tanh_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_relu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sigmoid_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_gelu_op(BuildContext& ctx);
// contrib_gelu.cc: com.microsoft Gelu, BiasGelu, FastGelu, QuickGelu
Result<std::unique_ptr<Kernel>> build_ms_gelu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_bias_gelu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_fast_gelu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_quick_gelu_op(BuildContext& ctx);
// unary.cc
Result<std::unique_ptr<Kernel>> build_abs_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_neg_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sign_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_exp_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_log_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reciprocal_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_floor_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_ceil_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_round_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sin_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_cos_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_tan_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_asin_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_acos_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_atan_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sinh_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_cosh_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_asinh_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_acosh_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_atanh_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_is_na_n_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_is_inf_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_not_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_bitwise_not_op(BuildContext& ctx);
// activations.cc
Result<std::unique_ptr<Kernel>> build_clip_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_hard_sigmoid_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_hard_swish_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_leaky_relu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_elu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_selu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_celu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_thresholded_relu_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_shrink_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_softplus_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_softsign_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_mish_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_swish_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_p_relu_op(BuildContext& ctx);
// binary.cc
Result<std::unique_ptr<Kernel>> build_greater_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_less_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_greater_or_equal_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_less_or_equal_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_and_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_or_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_xor_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_bitwise_and_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_bitwise_or_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_bitwise_xor_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_bit_shift_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_mod_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_max_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_min_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_sum_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_mean_op(BuildContext& ctx);
// reduce.cc
Result<std::unique_ptr<Kernel>> build_mean_variance_normalization_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_sum_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_mean_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_max_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_min_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_prod_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_l1_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_l2_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_log_sum_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_log_sum_exp_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_reduce_sum_square_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_arg_max_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_arg_min_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_cum_sum_op(BuildContext& ctx);
// softmax.cc
Result<std::unique_ptr<Kernel>> build_softmax_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_log_softmax_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_hardmax_op(BuildContext& ctx);
// cast.cc
Result<std::unique_ptr<Kernel>> build_cast_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_cast_like_op(BuildContext& ctx);
// loss.cc
Result<std::unique_ptr<Kernel>> build_negative_log_likelihood_loss_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_softmax_cross_entropy_loss_op(BuildContext& ctx);
// misc.cc
Result<std::unique_ptr<Kernel>> build_dropout_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_det_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_hann_window_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_hamming_window_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_blackman_window_op(BuildContext& ctx);
// signal.cc
Result<std::unique_ptr<Kernel>> build_mel_weight_matrix_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_dft_op(BuildContext& ctx);
Result<std::unique_ptr<Kernel>> build_stft_op(BuildContext& ctx);

}  // namespace onnx_prepack::runtime::math
