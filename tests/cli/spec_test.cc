// The option tables of src/cli/spec.cc drive both the parser and the help:
// every option a command's parser accepts is in its help, with its default.
#include "cli/spec.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/args.h"

namespace onnx_prepack::cli {
namespace {

Result<Args> parse(const CommandSpec& spec, std::vector<std::string> words) {
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return Args::parse(int(argv.size()), argv.data(), spec);
}

TEST(CliSpec, EveryOptionIsInTheHelpWithItsDefaultAndIsAccepted) {
  ASSERT_EQ(command_specs().size(), 9u);
  for (const CommandSpec& c : command_specs()) {
    const std::string help = help_text(c);
    EXPECT_EQ(help.rfind("usage: onnx-prepack " + std::string(c.name), 0), 0u) << help;
    EXPECT_NE(help.find("examples:\n  onnx-prepack " + std::string(c.name)), std::string::npos)
        << help;
    for (const OptionSpec& o : c.options) {
      SCOPED_TRACE(std::string(c.name) + " --" + std::string(o.name));
      EXPECT_FALSE(o.description.empty());
      EXPECT_FALSE(o.default_text.empty());
      const std::string flag = "--" + std::string(o.name);
      const size_t at = help.find("  " + std::string(o.short_name ? "-" : "") +
                                  (o.short_name ? std::string(1, o.short_name) + ", " : "") + flag);
      ASSERT_NE(at, std::string::npos) << help;
      const std::string rest = help.substr(at, help.find(")\n", at) - at + 1);
      EXPECT_NE(rest.find("(default: " + std::string(o.default_text) + ")"), std::string::npos)
          << rest;
      // The parser accepts it, with a value when it takes one.
      std::vector<std::string> words = {"m.onnx", flag};
      if (!o.value.empty()) words.push_back("1");
      auto a = parse(c, words);
      ASSERT_TRUE(a.ok()) << a.status().message();
      EXPECT_TRUE(a->has(std::string(o.name)));
      if (o.short_name != 0) {
        auto s = parse(c, {"m.onnx", std::string("-") + o.short_name, "v"});
        ASSERT_TRUE(s.ok()) << s.status().message();
        EXPECT_EQ(s->get(std::string(o.name)).value_or(""), "v");
      }
    }
    // And nothing else: a flag outside the table is refused.
    auto bad = parse(c, {"m.onnx", "--no-such-option"});
    EXPECT_FALSE(bad.ok());
    EXPECT_TRUE(parse(c, {"--help"}).ok());
    EXPECT_TRUE(parse(c, {"-h"})->has("help"));
  }
}

TEST(CliSpec, UnknownOptionNamesTheClosest) {
  const CommandSpec& c = *find_command("compile");
  auto a = parse(c, {"m.onnx", "--thread", "2"});
  ASSERT_FALSE(a.ok());
  EXPECT_NE(a.status().message().find("did you mean '--threads'?"), std::string::npos)
      << a.status().message();
  auto b = parse(c, {"m.onnx", "--trget=host"});
  ASSERT_FALSE(b.ok());
  EXPECT_NE(b.status().message().find("did you mean '--target'?"), std::string::npos)
      << b.status().message();
  auto far = parse(c, {"m.onnx", "--zzzzzzzzzz"});
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().message().find("did you mean"), std::string::npos);
}

TEST(CliSpec, EditDistance) {
  EXPECT_EQ(edit_distance("compile", "compile"), 0u);
  EXPECT_EQ(edit_distance("complie", "compile"), 1u);  // a transposition
  EXPECT_EQ(edit_distance("", "run"), 3u);
  EXPECT_EQ(edit_distance("chek", "check"), 1u);
  EXPECT_EQ(closest("complie", {"inspect", "compile", "check"}).value_or(""), "compile");
  EXPECT_EQ(closest("rnu", {"run", "check"}).value_or(""), "run");
  EXPECT_FALSE(closest("xyz", {"run", "check"}).has_value());
}

}  // namespace
}  // namespace onnx_prepack::cli
