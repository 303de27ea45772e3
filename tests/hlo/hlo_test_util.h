// Helpers shared by the HLO tests: fixture paths and parse-or-fail.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

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

// The status message of parsing `text` ("" if it parsed).
inline std::string ParseError(const std::string& text) {
  StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "bad.hlo");
  return module.ok() ? "" : module.status().message();
}

}  // namespace fp8dot::hlo
