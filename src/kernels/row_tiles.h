// Row tiling of a microkernel whose row count is a template parameter: full
// tiles of kMax rows, then one tile of the 1..kMax-1 rows left, each with its
// count known at compile time (so the kernel keeps its accumulators in
// registers). `tile` is a lambda `[&]<int R>(size_t first_row) {...}`.
#pragma once

#include <cstddef>

namespace onnx_prepack::kernels {

template <int R, class Tile>
inline void row_tile_remainder(size_t left, size_t first_row, Tile& tile) {
  if constexpr (R > 0) {
    if (left == size_t(R)) {
      tile.template operator()<R>(first_row);
    } else {
      row_tile_remainder<R - 1>(left, first_row, tile);
    }
  }
}

template <int kMax, class Tile>
inline void for_each_row_tile(size_t rows, Tile&& tile) {
  size_t r = 0;
  for (; r + kMax <= rows; r += kMax) tile.template operator()<kMax>(r);
  row_tile_remainder<kMax - 1>(rows - r, r, tile);
}

}  // namespace onnx_prepack::kernels
