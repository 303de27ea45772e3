// Helpers shared by the HLO tests: fixture paths, parse-or-fail and filling HLO templates.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "fp8dot/hlo/hlo_parser.h"

namespace fp8dot::hlo {

inline std::string TestdataPath(const std::string& name) {
  return std::string(FP8DOT_SOURCE_DIR) + "/tests/hlo/testdata/" + name;
}

inline std::string ReadTestdata(const std::string& name) {
  std::ifstream file(TestdataPath(name));
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

inline const char* const kFixtures[] = {"jax_fp8_scaled_dot.hlo", "jax_fp8_train_step.hlo",
                                        "ops.hlo"};

// Parses `text`; a parse error fails the test and returns nullptr.
inline std::unique_ptr<HloModule> ParseOrDie(const std::string& text) {
  StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  return std::move(module).value();
}

// `text` with every placeholder "$name" replaced by the value given for `name` (values are
// inserted as they are, not scanned again). A placeholder is '$' followed by [A-Za-z0-9_]+ and
// not preceded by one of those characters, so "__cublas$lt$matmul$f8" is left alone. A
// placeholder without a value, or a value no placeholder uses, fails the test.
inline std::string Substitute(
    std::string_view text, std::initializer_list<std::pair<std::string_view, std::string>> values) {
  auto is_name_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  std::string out;
  std::set<std::string_view> used;
  size_t i = 0;
  while (i < text.size()) {
    const bool placeholder = text[i] == '$' && i + 1 < text.size() && is_name_char(text[i + 1]) &&
                             (i == 0 || !is_name_char(text[i - 1]));
    if (!placeholder) {
      out += text[i++];
      continue;
    }
    size_t end = i + 1;
    while (end < text.size() && is_name_char(text[end])) ++end;
    const std::string_view name = text.substr(i + 1, end - i - 1);
    const std::pair<std::string_view, std::string>* value = nullptr;
    for (const auto& entry : values) {
      if (entry.first == name) value = &entry;
    }
    if (value == nullptr) {
      ADD_FAILURE() << "Substitute: no value for placeholder $" << name << " in:\n" << text;
      out.append(text.substr(i, end - i));
    } else {
      out += value->second;
      used.insert(name);
    }
    i = end;
  }
  for (const auto& entry : values) {
    if (used.count(entry.first) == 0) {
      ADD_FAILURE() << "Substitute: no placeholder $" << entry.first << " in:\n" << text;
    }
  }
  return out;
}

// The status message of parsing `text` ("" if it parsed).
inline std::string ParseError(const std::string& text) {
  StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "bad.hlo");
  return module.ok() ? "" : module.status().message();
}

}  // namespace fp8dot::hlo
