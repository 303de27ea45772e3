// Random mutations of valid modules must never crash the parser, the verifier or the printer,
// and whatever parses must print to text that parses again. Run under the ASan build too
// (FP8DOT_SANITIZE=ON).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

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

// The parser's error contract (HloParser::Error in src/hlo/hlo_parser.cc): an INVALID_ARGUMENT
// status whose message is
//   "<filename>:<line>:<col>: error: <what>\n<source line>\n<col - 1 spaces>^"
// with line and col (1-based) inside `text`, <what> not empty (it may span lines: it can quote
// the input), the source line echoed with its control bytes (other than tab) shown as '?', and
// the caret under the column.
::testing::AssertionResult IsLocatedParseError(const Status& status, const std::string& text,
                                               const std::string& filename) {
  if (status.code() != StatusCode::kInvalidArgument) {
    return ::testing::AssertionFailure() << "not INVALID_ARGUMENT: " << status.ToString();
  }
  const std::string& message = status.message();
  auto fail = [&](const std::string& why) {
    return ::testing::AssertionFailure() << why << ", message:\n" << message;
  };
  if (message.rfind(filename + ":", 0) != 0) return fail("no '" + filename + ":' prefix");
  size_t pos = filename.size() + 1;
  auto read_number = [&](char terminator, size_t* value) {
    const size_t start = pos;
    *value = 0;
    while (pos < message.size() && message[pos] >= '0' && message[pos] <= '9') {
      *value = *value * 10 + static_cast<size_t>(message[pos] - '0');
      ++pos;
    }
    if (pos == start || pos >= message.size() || message[pos] != terminator) return false;
    ++pos;
    return true;
  };
  size_t line = 0, col = 0;
  if (!read_number(':', &line) || !read_number(':', &col)) return fail("no line:col");
  if (message.compare(pos, 8, " error: ") != 0) return fail("no ' error: ' after line:col");
  pos += 8;
  std::vector<std::string> lines(1);
  for (char c : text) {
    if (c == '\n') {
      lines.emplace_back();
    } else {
      lines.back() += c;
    }
  }
  if (line < 1 || line > lines.size()) return fail("line out of range");
  std::string source = lines[line - 1];
  if (col < 1 || col > source.size() + 1) return fail("column out of range");
  for (char& c : source) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f) c = '?';
  }
  const std::string want_tail = "\n" + source + "\n" + std::string(col - 1, ' ') + "^";
  if (message.size() < pos + 1 + want_tail.size() ||
      message.compare(message.size() - want_tail.size(), want_tail.size(), want_tail) != 0) {
    return fail("no error text followed by source line and caret of line " + std::to_string(line) +
                " col " + std::to_string(col));
  }
  return ::testing::AssertionSuccess();
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
        EXPECT_TRUE(IsLocatedParseError(module.status(), text, "fuzz.hlo"));
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

// Random bytes after a valid start never crash the parser, and every rejection keeps the error
// contract: INVALID_ARGUMENT, located at a line:col inside the input, with that line and a caret.
TEST(HloFuzzTest, RandomBytesNeverCrashAndErrorsAreLocated) {
  std::mt19937_64 rng(7);
  int rejected = 0;
  for (int round = 0; round < 2000; ++round) {
    std::string text = "HloModule m\nENTRY e {\n";
    const size_t n = rng() % 200;
    for (size_t i = 0; i < n; ++i) text += static_cast<char>(rng() % 256);
    StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "bytes.hlo");
    if (module.ok()) {
      EXPECT_NE(*module, nullptr) << "round " << round;
      continue;
    }
    ++rejected;
    EXPECT_TRUE(IsLocatedParseError(module.status(), text, "bytes.hlo")) << "round " << round;
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace fp8dot::hlo
