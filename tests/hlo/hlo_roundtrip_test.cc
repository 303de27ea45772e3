// Printer round trips: print(parse(print(parse(x)))) == print(parse(x)) for every fixture, and the
// printed text of small modules is exactly what XLA would print.
#include <gtest/gtest.h>

#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/hlo_test_util.h"

namespace fp8dot::hlo {
namespace {

class HloRoundTripTest : public ::testing::TestWithParam<const char*> {};

TEST_P(HloRoundTripTest, PrintParsePrintIsStable) {
  std::unique_ptr<HloModule> first = ParseOrDie(ReadTestdata(GetParam()));
  ASSERT_NE(first, nullptr);
  const std::string printed = first->ToString();
  std::unique_ptr<HloModule> second = ParseOrDie(printed);
  ASSERT_NE(second, nullptr) << printed;
  EXPECT_EQ(second->ToString(), printed);
  EXPECT_TRUE(VerifyHloModule(*second).ok()) << VerifyHloModule(*second).ToString();
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HloRoundTripTest, ::testing::ValuesIn(kFixtures));

TEST(HloPrinterTest, PrintsXlaStyle) {
  const char* text =
      R"(HloModule m, entry_computation_layout={(f8e4m3fn[16,32]{1,0}, f8e4m3fn[64,32]{1,0})->f32[16,64]{1,0}}

ENTRY %main (a: f8e4m3fn[16,32], b: f8e4m3fn[64,32]) -> f32[16,64] {
  %a = f8e4m3fn[16,32]{1,0} parameter(0)
  %b = f8e4m3fn[64,32]{1,0} parameter(1)
  ROOT %d = f32[16,64]{1,0} dot(f8e4m3fn[16,32]{1,0} %a, f8e4m3fn[64,32]{1,0} %b), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={highest,default}, algorithm=dot_any_f8_any_f8_f32_fast_accum, metadata={op_name="d" source_line=3}
}
)";
  std::unique_ptr<HloModule> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->ToString(),
            "HloModule m, entry_computation_layout={(f8e4m3fn[16,32]{1,0}, "
            "f8e4m3fn[64,32]{1,0})->f32[16,64]{1,0}}\n"
            "\n"
            "ENTRY %main (a: f8e4m3fn[16,32], b: f8e4m3fn[64,32]) -> f32[16,64] {\n"
            "  %a = f8e4m3fn[16,32]{1,0} parameter(0)\n"
            "  %b = f8e4m3fn[64,32]{1,0} parameter(1)\n"
            "  ROOT %d = f32[16,64]{1,0} dot(%a, %b), lhs_contracting_dims={1}, "
            "rhs_contracting_dims={1}, operand_precision={highest,default}, "
            "algorithm=dot_any_f8_any_f8_f32_fast_accum, metadata={op_name=\"d\" source_line=3}\n"
            "}\n");
  EXPECT_EQ(module->entry_computation()->root_instruction()->precision_config().algorithm,
            Algorithm::kAnyF8AnyF8F32FastAccum);
}

TEST(HloPrinterTest, PrintsLiteralsSoTheyParseBack) {
  const char* text = R"(HloModule m
ENTRY e {
  a = f32[2,2]{1,0} constant({ {0.1, -2e-45}, {3.4028234663852886e+38, -nan} })
  b = pred[] constant(true)
  c = s64[2]{0} constant({-9007199254740992, 42})
  d = bf16[0]{0} constant({})
  ROOT t = (f32[2,2]{1,0}, pred[], s64[2]{0}, bf16[0]{0}) tuple(a, b, c, d)
})";
  std::unique_ptr<HloModule> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::string printed = module->ToString();
  EXPECT_NE(printed.find("constant({ {0.1, -2e-45}, {3.4028234663852886e+38, nan} })"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("pred[] constant(true)"), std::string::npos);
  EXPECT_NE(printed.find("constant({-9007199254740992, 42})"), std::string::npos);
  EXPECT_NE(printed.find("bf16[0]{0} constant({})"), std::string::npos);
  std::unique_ptr<HloModule> again = ParseOrDie(printed);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->ToString(), printed);
}

TEST(HloPrinterTest, PrintsS64AndU64LiteralsExactly) {
  // Each extreme and 2^53 + 1 print digit for digit (literals used to be doubles: printed
  // through one, they would come back as other numbers).
  const char* text = R"(HloModule m
ENTRY e {
  a = s64[3]{0} constant({-9223372036854775808, 9223372036854775807, 9007199254740993})
  b = u64[2]{0} constant({18446744073709551615, 9223372036854775808})
  ROOT t = (s64[3]{0}, u64[2]{0}) tuple(a, b)
})";
  std::unique_ptr<HloModule> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const std::string printed = module->ToString();
  EXPECT_NE(printed.find("constant({-9223372036854775808, 9223372036854775807, 9007199254740993})"),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("constant({18446744073709551615, 9223372036854775808})"),
            std::string::npos)
      << printed;
  std::unique_ptr<HloModule> again = ParseOrDie(printed);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->ToString(), printed);
  EXPECT_EQ(again->entry_computation()->GetInstructionWithName("b")->literal().integers,
            module->entry_computation()->GetInstructionWithName("b")->literal().integers);
}

}  // namespace
}  // namespace fp8dot::hlo
