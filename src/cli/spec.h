// The one declaration of every command and its options: the parser (which
// flags exist, which take a value) and the help text are both made from it, so
// help cannot omit a flag the parser accepts (docs/cli.md, "Help").
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace onnx_prepack::cli {

struct OptionSpec {
  std::string_view name;          // "threads": the option is --threads
  std::string_view value;         // "N" for `--threads N`; empty for a flag without a value
  std::string_view default_text;  // shown as "default: ..."
  std::string_view description;   // one line
  char short_name = 0;            // 'o' for `-o`, 0 for none
  bool repeatable = false;
};

struct CommandSpec {
  std::string_view name;
  std::string_view summary;   // one line, for `onnx-prepack --help`
  std::string_view operands;  // "MODEL -o OUT"
  std::vector<OptionSpec> options;
  std::vector<std::string_view> examples;
  std::string_view exit_codes;  // one line
};

// Every command, in the order `onnx-prepack --help` lists them.
const std::vector<CommandSpec>& command_specs();
const CommandSpec* find_command(std::string_view name);

// Options every command takes, stripped by main before the command parses.
const std::vector<OptionSpec>& global_options();

// "usage: onnx-prepack NAME OPERANDS [--opt V]..." wrapped to 100 columns.
std::string synopsis(const CommandSpec& c);
// The synopsis, the summary, one line per option with its default, examples.
std::string help_text(const CommandSpec& c);
// The top-level help: commands and their summaries.
std::string main_help();

// Levenshtein distance (insertions, deletions, substitutions, transpositions
// of adjacent characters count 1).
size_t edit_distance(std::string_view a, std::string_view b);
// The candidate closest to `word` when it is close enough to be a typo
// (distance at most 2, and less than half of the word), else nullopt.
std::optional<std::string> closest(std::string_view word,
                                   const std::vector<std::string>& candidates);

}  // namespace onnx_prepack::cli
