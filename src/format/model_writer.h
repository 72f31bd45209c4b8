// Writes a model with large tensors and struct payloads in one external data
// file, each at an offset aligned to `alignment`, both files published
// atomically.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "format/model.h"

namespace onnx_prepack::format {

struct WriteOptions {
  // Raw tensors of at least this many bytes move to the data file.
  uint64_t external_threshold = 1024;
  // Struct payloads (compiled tensors) of at least this many bytes move too.
  uint64_t payload_threshold = 0;
  // Location relative to the model's folder; empty = "<model file name>.data".
  std::string data_file;
  uint64_t alignment = 4096;
  // Tensors that are already external in `source`: keep pointing at their
  // file when it lies in the output folder (no duplicate of large weights),
  // otherwise copy their bytes into the new data file.
  bool reference_existing_external = true;
  // Payloads produced while writing, so that only one is in memory at a time:
  // compiled_tensors[i] (which must hold no raw_data and no external_data)
  // gets `size` bytes that `fill` writes into a zeroed buffer. Payloads are
  // written before the initializers, whose inline bytes `fill` may still read.
  struct LazyPayload {
    uint64_t size = 0;
    std::function<Status(std::span<uint8_t>)> fill;
  };
  std::map<int, LazyPayload> lazy_payloads;
  // Called with every compiled tensor's payload (produced, copied or moved out
  // of raw_data) before it is written: `compile` records or checks
  // payload_digest here (format.md §4.6). Returning false drops the entry (a copied
  // payload that fails its digest). Not called for payloads left inline.
  std::function<bool(int index, std::span<const uint8_t> payload)> on_payload;
  // Existing compiled tensors whose external payload cannot be read (missing
  // file, range past the end) are dropped instead of failing the write; the
  // count is in WriteReport::payloads_dropped.
  bool drop_unreadable_payloads = false;
  // format.md §4.6 publication: the data file gets a name derived from its bytes
  // ("<model>.<16 hex>.data": the same input writes the same files),
  // the model is renamed into place last, and then the data files the replaced
  // model referenced under our naming ("<model>.data", "<model>.<hex>.data") are
  // removed unless the new model still references them. Temporary files of
  // killed writers beside the output are removed first.
  bool fresh_data_file = false;
  // Told each phase after the payloads, for progress reports: "writing tensors"
  // (initializers to the data file), "syncing" (the data file flushed and
  // published), "writing model" (the model serialised, synced, renamed into
  // place). Null = not told.
  std::function<void(const std::string& phase)> on_phase;
};

struct WriteReport {
  std::string data_file;  // empty when nothing went external
  uint64_t data_bytes = 0;
  uint64_t tensors_external = 0;
  uint64_t payloads_external = 0;
  uint64_t tensors_referenced = 0;
  uint64_t payloads_dropped = 0;
  std::vector<std::string> removed_data_files;  // previous data files removed (fresh_data_file)
};

// `proto` is modified: moved tensors get external_data keys and lose raw_data.
// `source` (may be null) resolves tensors that were already external.
Result<WriteReport> write_model(onnx::ModelProto& proto, const std::string& path,
                                const WriteOptions& options, const Model* source);

// Serialises a model with everything inline (fails past 2 GiB).
Status write_model_inline(const onnx::ModelProto& proto, const std::string& path);

}  // namespace onnx_prepack::format
