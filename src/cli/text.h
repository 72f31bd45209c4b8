// Helpers for the human-readable output of the subcommands.
#pragma once

#include <cstdint>
#include <string>

namespace onnx_prepack::cli {

// "512 B", "4.00 KiB", "1.50 MiB", "1.00 GiB".
std::string human_bytes(uint64_t bytes);

}  // namespace onnx_prepack::cli
