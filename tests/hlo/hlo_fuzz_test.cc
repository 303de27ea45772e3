// Random mutations of valid modules must never crash the parser, the verifier or the printer,
// and whatever parses must print to text that parses again. Run under the ASan build too
// (FP8DOT_SANITIZE=ON).
#include <gtest/gtest.h>

#include <random>

#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/hlo_test_util.h"

namespace fp8dot::hlo {
namespace {

// One random edit: delete, insert, replace or duplicate a span, or truncate.
std::string Mutate(const std::string& text, std::mt19937_64& rng) {
  static const std::string kAlphabet = "{}[]()<>,:=%\"\\/*-_.x0123456789 \nfsuTROOTENTRYabcdeinf";
  if (text.empty()) return std::string(1, kAlphabet[rng() % kAlphabet.size()]);
  std::string out = text;
  const size_t pos = rng() % out.size();
  const size_t len = 1 + rng() % std::min<size_t>(16, out.size() - pos);
  switch (rng() % 6) {
    case 0:
      out.erase(pos, len);
      break;
    case 1:
      out.insert(pos, 1, kAlphabet[rng() % kAlphabet.size()]);
      break;
    case 2:
      out[pos] = kAlphabet[rng() % kAlphabet.size()];
      break;
    case 3:
      out.insert(rng() % out.size(), out.substr(pos, len));
      break;
    case 4:
      out.resize(pos);
      break;
    default:
      out[pos] = static_cast<char>(rng() % 256);
      break;
  }
  return out;
}

TEST(HloFuzzTest, MutatedModulesNeverCrash) {
  std::mt19937_64 rng(20240607);
  int parsed = 0, total = 0;
  for (const char* fixture : kFixtures) {
    const std::string original = ReadTestdata(fixture);
    ASSERT_FALSE(original.empty()) << fixture;
    for (int round = 0; round < 1500; ++round) {
      std::string text = original;
      const int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) text = Mutate(text, rng);
      ++total;
      StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "fuzz.hlo");
      if (!module.ok()) {
        EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
        EXPECT_EQ(module.status().message().rfind("fuzz.hlo:", 0), 0u) << module.status().message();
        continue;
      }
      ++parsed;
      (void)VerifyHloModule(**module);
      const std::string printed = (*module)->ToString();
      StatusOr<std::unique_ptr<HloModule>> reparsed = ParseHloModule(printed, "printed.hlo");
      ASSERT_TRUE(reparsed.ok()) << reparsed.status().message() << "\n--- input:\n"
                                 << text << "\n--- printed:\n"
                                 << printed;
      EXPECT_EQ((*reparsed)->ToString(), printed);
    }
  }
  // Some mutations (inside metadata strings, comments) still parse: both paths are exercised.
  EXPECT_GT(parsed, 0);
  EXPECT_LT(parsed, total);
}

TEST(HloFuzzTest, RandomBytesNeverCrash) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::string text = "HloModule m\nENTRY e {\n";
    const size_t n = rng() % 200;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>(rng() % 256);
    (void)ParseHloModule(text, "bytes.hlo");
  }
}

}  // namespace
}  // namespace fp8dot::hlo
