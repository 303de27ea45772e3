// Parser tests: what JAX/XLA text parses into, and the exact error (with location) for malformed
// input.
#include "fp8dot/hlo/hlo_parser.h"
#include "fp8dot/hlo/hlo_verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "hlo/hlo_test_util.h"
#include "status_matchers.h"

namespace fp8dot::hlo {
namespace {

TEST(HloParserTest, ParsesJaxScaledFp8DotWithOldPrinterSyntax) {
  std::unique_ptr<HloModule> module = ParseOrDie(ReadTestdata("jax_fp8_scaled_dot.hlo"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "jit_scaled_fp8_dot");
  ASSERT_EQ(module->header_attributes().size(), 3u);
  EXPECT_EQ(module->header_attributes()[0].name, "entry_computation_layout");
  EXPECT_EQ(module->header_attributes()[0].value,
            "{(f8e4m3fn[16,32]{1,0}, f8e4m3fn[32,64]{1,0}, f32[], f32[])->bf16[16,64]{1,0}}");
  HloComputation* entry = module->entry_computation();
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->name(), "main.14");
  EXPECT_EQ(entry->num_parameters(), 4);
  EXPECT_EQ(entry->parameter_instruction(2)->name(), "Arg_2.3");
  HloInstruction* root = entry->root_instruction();
  EXPECT_EQ(root->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(root->shape().ToString(), "bf16[16,64]{1,0}");
  const HloInstruction* dot = root->operand(0);
  ASSERT_EQ(dot->opcode(), HloOpcode::kDot);
  EXPECT_EQ(dot->source_line(), 17);
  EXPECT_EQ(dot->dot_dimension_numbers().lhs_contracting_dimensions, std::vector<int64_t>{1});
  EXPECT_EQ(dot->dot_dimension_numbers().rhs_contracting_dimensions, std::vector<int64_t>{0});
  EXPECT_TRUE(dot->dot_dimension_numbers().lhs_batch_dimensions.empty());
  EXPECT_EQ(dot->precision_config().operand_precision,
            (std::vector<Precision>{Precision::kDefault, Precision::kDefault}));
  EXPECT_EQ(dot->precision_config().algorithm, Algorithm::kUnset);
  EXPECT_EQ(dot->metadata_op_name(),
            "jit(scaled_fp8_dot)/jit(main)/dot_general[dimension_numbers=(([1], [0]), ([], [])) "
            "precision=None preferred_element_type=float32]");
  // dequantise chain: multiply(convert(f8 param), broadcast(f32[] param))
  const HloInstruction* lhs = dot->operand(0);
  EXPECT_EQ(lhs->opcode(), HloOpcode::kMultiply);
  EXPECT_EQ(lhs->operand(0)->opcode(), HloOpcode::kConvert);
  EXPECT_EQ(lhs->operand(0)->operand(0)->shape().element_type(), PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(lhs->operand(1)->opcode(), HloOpcode::kBroadcast);
  EXPECT_TRUE(lhs->operand(1)->has_dimensions());
  EXPECT_TRUE(lhs->operand(1)->dimensions().empty());
  EXPECT_EQ(lhs->user_count(), 1);
  EXPECT_EQ(lhs->users()[0], dot);
  const std::string* sharding = entry->parameter_instruction(0)->FindRawAttribute("sharding");
  ASSERT_NE(sharding, nullptr);
  EXPECT_EQ(*sharding, "{replicated}");
}

TEST(HloParserTest, ParsesNewerJaxSyntaxWithPrecisionAndAlgorithm) {
  std::unique_ptr<HloModule> module = ParseOrDie(ReadTestdata("jax_fp8_train_step.hlo"));
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->computations().size(), 4u);
  HloComputation* entry = module->entry_computation();
  EXPECT_EQ(entry->name(), "main.100");
  EXPECT_EQ(entry->root_instruction()->opcode(), HloOpcode::kTuple);
  EXPECT_EQ(entry->root_instruction()->shape().tuple_shapes_size(), 4);

  HloInstruction* y = entry->GetInstructionWithName("y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->precision_config().operand_precision,
            (std::vector<Precision>{Precision::kDefault, Precision::kDefault}));
  EXPECT_EQ(y->users().size(), 2u);  // abs and divide

  HloInstruction* dx = entry->GetInstructionWithName("dx");
  ASSERT_NE(dx, nullptr);
  EXPECT_EQ(dx->precision_config().operand_precision,
            (std::vector<Precision>{Precision::kHighest, Precision::kHighest}));
  HloInstruction* dw = entry->GetInstructionWithName("dw.t");
  EXPECT_EQ(dw->precision_config().algorithm, Algorithm::kAnyF8AnyF8F32);
  EXPECT_EQ(dw->dot_dimension_numbers().lhs_contracting_dimensions, (std::vector<int64_t>{0, 1}));

  HloInstruction* amax = entry->GetInstructionWithName("amax");
  ASSERT_NE(amax->to_apply(), nullptr);
  EXPECT_EQ(amax->to_apply()->name(), "region_0.20");
  EXPECT_EQ(amax->dimensions(), (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(std::isinf(entry->GetInstructionWithName("neg_inf")->literal().values[0]));
  EXPECT_EQ(entry->GetInstructionWithName("y.clamped")->to_apply()->name(), "clip.40");
  EXPECT_EQ(entry->GetInstructionWithName("dw")->shape().minor_to_major(),
            (std::vector<int64_t>{0, 1}));
}

TEST(HloParserTest, ParsesEveryTypedAttribute) {
  std::unique_ptr<HloModule> module = ParseOrDie(ReadTestdata("ops.hlo"));
  ASSERT_NE(module, nullptr);
  HloComputation* entry = module->entry_computation();
  auto get = [&](const char* name) {
    HloInstruction* instruction = entry->GetInstructionWithName(name);
    EXPECT_NE(instruction, nullptr) << name;
    return instruction;
  };
  const Literal& arr = get("c_arr")->literal();
  ASSERT_EQ(arr.values.size(), 6u);
  EXPECT_EQ(arr.values[1], 2.5);
  EXPECT_EQ(arr.values[2], -3);
  EXPECT_TRUE(std::isinf(arr.values[3]) && arr.values[3] > 0);
  EXPECT_TRUE(std::isinf(arr.values[4]) && arr.values[4] < 0);
  EXPECT_TRUE(std::isnan(arr.values[5]));
  EXPECT_EQ(get("c_pred")->literal().integers, (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(get("c_int")->literal().integers, (std::vector<int64_t>{-7}));
  EXPECT_EQ(get("iota")->iota_dimension(), 1);
  EXPECT_EQ(get("cmp")->comparison_direction(), ComparisonDirection::kLt);
  ASSERT_NE(get("cmp")->FindRawAttribute("type"), nullptr);
  EXPECT_EQ(*get("cmp")->FindRawAttribute("type"), "TOTALORDER");
  EXPECT_EQ(get("tr")->dimensions(), (std::vector<int64_t>{1, 0}));
  const auto& slice = get("sl")->slice();
  ASSERT_EQ(slice.size(), 2u);
  EXPECT_EQ(slice[0].start, 0);
  EXPECT_EQ(slice[0].limit, 6);
  EXPECT_EQ(slice[0].stride, 2);
  EXPECT_EQ(slice[1].start, 1);
  EXPECT_EQ(slice[1].limit, 3);
  EXPECT_EQ(slice[1].stride, 1);
  EXPECT_EQ(get("ds")->dynamic_slice_sizes(), (std::vector<int64_t>{2, 6}));
  EXPECT_EQ(get("cat")->dimensions(), (std::vector<int64_t>{0}));
  const auto& padding = get("pd")->padding();
  ASSERT_EQ(padding.size(), 2u);
  EXPECT_EQ(padding[0].low, 1);
  EXPECT_EQ(padding[0].high, 1);
  EXPECT_EQ(padding[0].interior, 0);
  EXPECT_EQ(padding[1].high, 1);
  EXPECT_EQ(padding[1].interior, 1);
  const HloInstruction* sc = get("sc");
  EXPECT_EQ(sc->scatter_dimension_numbers().inserted_window_dims, std::vector<int64_t>{0});
  EXPECT_EQ(sc->scatter_dimension_numbers().scatter_dims_to_operand_dims, std::vector<int64_t>{0});
  EXPECT_EQ(sc->scatter_dimension_numbers().index_vector_dim, 0);
  EXPECT_TRUE(sc->indices_are_sorted());
  EXPECT_TRUE(sc->unique_indices());
  EXPECT_EQ(sc->to_apply()->name(), "scatter_set");
  EXPECT_EQ(get("rp")->exponent_bits(), 5);
  EXPECT_EQ(get("rp")->mantissa_bits(), 10);
  const HloInstruction* cc = get("cc");
  EXPECT_EQ(cc->custom_call_target(), "__cublas$lt$matmul$f8");
  EXPECT_EQ(cc->backend_config(),
            R"({"operation_queue_id":"0","gemm_backend_config":{"alpha_real":1,"beta":0,)"
            R"("epilogue":"DEFAULT"}})");
  EXPECT_EQ(cc->shape().ToString(), "(f32[4,6]{1,0}, s8[1024]{0})");
  EXPECT_EQ(get("gte")->tuple_index(), 0);
  EXPECT_EQ(get("cc2")->backend_config(), "opaque \"quoted\" text");
  ASSERT_NE(get("cc2")->FindRawAttribute("api_version"), nullptr);
  EXPECT_EQ(*get("cc2")->FindRawAttribute("api_version"), "API_VERSION_STATUS_RETURNING");
}

TEST(HloParserTest, AcceptsLayoutTilingCommentsAndMissingRoot) {
  const char* text = R"(HloModule m
// a comment
ENTRY e {
  /* block comment */ p = f32[8,128]{1,0:T(8,128)} parameter(0)
  q = bf16[] parameter(1)
  t = (f32[8,128]{1,0:T(8,128)}, /*index=1*/bf16[]) tuple(p, q)
})";
  std::unique_ptr<HloModule> module = ParseOrDie(text);
  ASSERT_NE(module, nullptr);
  const HloInstruction* root = module->entry_computation()->root_instruction();
  EXPECT_EQ(root->name(), "t");  // no ROOT: the last instruction
  EXPECT_EQ(root->operand(0)->shape().layout_suffix(), "T(8,128)");
  EXPECT_EQ(root->operand(0)->shape().ToString(), "f32[8,128]{1,0:T(8,128)}");
}

TEST(HloParserTest, DefaultLayoutIsRowMajor) {
  std::unique_ptr<HloModule> module =
      ParseOrDie("HloModule m\nENTRY e {\n  ROOT p = f32[2,3,4] parameter(0)\n}\n");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry_computation()->root_instruction()->shape().minor_to_major(),
            (std::vector<int64_t>{2, 1, 0}));
}

TEST(HloParserTest, ParseShape) {
  StatusOr<Shape> shape = ParseShape("(f8e5m2[2,3]{0,1}, (s32[], pred[4]))");
  ASSERT_TRUE(shape.ok()) << shape.status().ToString();
  EXPECT_EQ(shape->ToString(), "(f8e5m2[2,3]{0,1}, (s32[], pred[4]{0}))");
  EXPECT_EQ(ParseShape("f32[2]{1}").status().message(),
            "<shape>:1:7: error: layout must be a permutation of 0..0\nf32[2]{1}\n      ^");
}

// ---- Errors: exact text, with file:line:col, the source line and a caret --------------------

TEST(HloParserErrorTest, MissingHeader) {
  EXPECT_EQ(ParseError("ENTRY e {\n}\n"),
            "bad.hlo:1:1: error: expected 'HloModule' at the start of the module, got 'ENTRY'\n"
            "ENTRY e {\n"
            "^");
}

TEST(HloParserErrorTest, UnknownOpcode) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT q = f32[2] frobnicate(p)\n}\n"),
            "bad.hlo:4:19: error: unknown opcode 'frobnicate'\n"
            "  ROOT q = f32[2] frobnicate(p)\n"
            "                  ^");
}

TEST(HloParserErrorTest, UnknownOperand) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT q = f32[2] add(p, %r)\n}\n"),
            "bad.hlo:4:26: error: unknown operand 'r' (not defined earlier in computation 'e')\n"
            "  ROOT q = f32[2] add(p, %r)\n"
            "                         ^");
}

TEST(HloParserErrorTest, UnknownElementType) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f31[2] parameter(0)\n}\n"),
            "bad.hlo:3:7: error: unknown element type 'f31'\n"
            "  p = f31[2] parameter(0)\n"
            "      ^");
}

TEST(HloParserErrorTest, MissingCloseParen) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  ROOT q = f32[2] negate(p\n}\n"),
            "bad.hlo:5:1: error: expected ')' to end the operand list, got '}'\n"
            "}\n"
            "^");
}

TEST(HloParserErrorTest, LiteralWithWrongElementCount) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({1, 2})\n}\n"),
            "bad.hlo:3:28: error: expected 3 elements in dimension 0 of the literal, got 2\n"
            "  ROOT c = f32[3] constant({1, 2})\n"
            "                           ^");
}

TEST(HloParserErrorTest, UnknownPrecision) {
  EXPECT_EQ(
      ParseError("HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n"
                 "  ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, "
                 "rhs_contracting_dims={0}, operand_precision={default,huge}\n}\n"),
      "bad.hlo:4:111: error: unknown precision 'huge' (expected default, high or highest)\n"
      "  ROOT d = f32[2,2] dot(a, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
      "operand_precision={default,huge}\n"
      "                                                                                         "
      "                     ^");
}

TEST(HloParserErrorTest, DuplicateRootAndNames) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n"
                       "  ROOT q = f32[] negate(p)\n}\n"),
            "bad.hlo:4:3: error: computation 'e' already has a ROOT ('p')\n"
            "  ROOT q = f32[] negate(p)\n"
            "  ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n"
                       "  p = f32[] negate(p)\n}\n"),
            "bad.hlo:4:3: error: instruction name 'p' is already used\n"
            "  p = f32[] negate(p)\n"
            "  ^");
}

TEST(HloParserErrorTest, UnknownCalledComputation) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  z = f32[] constant(0)\n"
                       "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=%sum\n}\n"),
            "bad.hlo:5:57: error: unknown computation 'sum' (computations must be defined "
            "before they are called)\n"
            "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=%sum\n"
            "                                                        ^");
}

TEST(HloParserErrorTest, UnterminatedAttributeAndEndOfInput) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0), "
                       "metadata={op_name=\"x\"\n"),
            "bad.hlo:3:41: error: unterminated value of attribute 'metadata' (missing '}')\n"
            "  ROOT p = f32[] parameter(0), metadata={op_name=\"x\"\n"
            "                                        ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n"),
            "bad.hlo:4:1: error: expected '}' to end computation 'e'\n"
            "\n"
            "^");
}

TEST(HloParserErrorTest, BadPaddingAndSlice) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n"
                       "  z = f32[] constant(0)\n"
                       "  ROOT q = f32[4] pad(p, z), padding=1_1_1_1\n}\n"),
            "bad.hlo:5:38: error: expected padding as low_high[_interior] per dimension, joined "
            "by 'x' (e.g. 0_0x1_2), got '1_1_1_1'\n"
            "  ROOT q = f32[4] pad(p, z), padding=1_1_1_1\n"
            "                                     ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                       "  ROOT q = f32[2] slice(p), slice={[0;2]}\n}\n"),
            "bad.hlo:4:38: error: expected ':' after the slice start, got ';'\n"
            "  ROOT q = f32[2] slice(p), slice={[0;2]}\n"
            "                                     ^");
}

TEST(HloParserErrorTest, DeepNestingIsAnErrorNotACrash) {
  std::string shape;
  for (int i = 0; i < 10000; ++i) shape += "(";
  const std::string text = Substitute(R"(HloModule m
ENTRY e {
  p = $shape parameter(0)
}
)",
                                      {{"shape", shape}});
  const std::string error = ParseError(text);
  EXPECT_NE(error.find("bad.hlo:3:71: error: nesting deeper than 64 levels"), std::string::npos)
      << error.substr(0, 200);
}

// Found by hlo_parser_fuzzer: a NUL byte after the header ended the computation loop early and
// the parser then took the entry of a module without computations.
TEST(HloParserErrorTest, NulByteAfterHeader) {
  const std::string text("HloModule m\n\0\0\nENTRY e {\n}\n", 25);
  EXPECT_EQ(ParseError(text),
            "bad.hlo:2:1: error: expected a computation name (or ENTRY), got byte 0x00\n"
            "??\n"
            "^");
}

TEST(HloParserErrorTest, IntegerOverflowAndNegativeDims) {
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[99999999999999999999] parameter(0)\n}\n"),
            "bad.hlo:3:11: error: integer out of range: 99999999999999999999\n"
            "  p = f32[99999999999999999999] parameter(0)\n"
            "          ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  p = f32[-1] parameter(0)\n}\n"),
            "bad.hlo:3:11: error: dimension size must not be negative\n"
            "  p = f32[-1] parameter(0)\n"
            "          ^");
}

// ---- Hostile and extreme input (issue #13) ------------------------------------------------------

TEST(HloParserErrorTest, IntegerLiteralsOutOfTheirTypesRangeAreErrors) {
  // XLA rejects these; fp8dot used to wrap them through a double (s8 300 -> 44).
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT c = s8[] constant(300)\n}\n"),
            "bad.hlo:3:26: error: s8 literal 300 is out of range [-128, 127]\n"
            "  ROOT c = s8[] constant(300)\n"
            "                         ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT c = s32[] constant(1e23)\n}\n"),
            "bad.hlo:3:27: error: s32 literal 1e+23 is out of range [-2147483648, 2147483647]\n"
            "  ROOT c = s32[] constant(1e23)\n"
            "                          ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT c = u8[2] constant({1, -1})\n}\n"),
            "bad.hlo:3:31: error: u8 literal -1 is out of range [0, 255]\n"
            "  ROOT c = u8[2] constant({1, -1})\n"
            "                              ^");
  EXPECT_EQ(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = u64[] constant(18446744073709551616)\n}\n"),
      "bad.hlo:3:27: error: u64 literal 18446744073709551616 is out of range [0, "
      "18446744073709551615]\n"
      "  ROOT c = u64[] constant(18446744073709551616)\n"
      "                          ^");
  // The extremes of each type parse.
  FP8_ASSERT_OK(
      ParseHloModule("HloModule m\nENTRY e {\n  a = s8[2] constant({-128, 127})\n"
                     "  b = u32[2] constant({0, 4294967295})\n  ROOT c = s64[] "
                     "constant(-9223372036854775808)\n}\n",
                     "ok.hlo"));
}

TEST(HloParserTest, S64AndU64LiteralsAreReadExactly) {
  // Integer digits are read exactly over s64's and u64's whole range (2^53 + 1 used to be an
  // error: literals were doubles). u64 is held as its bit pattern.
  FP8_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<HloModule> module,
      ParseHloModule("HloModule m\nENTRY e {\n"
                     "  a = s64[3] constant({9007199254740993, -9223372036854775808, "
                     "9223372036854775807})\n"
                     "  ROOT b = u64[2] constant({18446744073709551615, 9223372036854775809})\n}\n",
                     "ok.hlo"));
  const HloComputation* entry = module->entry_computation();
  EXPECT_EQ(entry->GetInstructionWithName("a")->literal().integers,
            (std::vector<int64_t>{9007199254740993, std::numeric_limits<int64_t>::min(),
                                  std::numeric_limits<int64_t>::max()}));
  EXPECT_EQ(entry->GetInstructionWithName("b")->literal().integers,
            (std::vector<int64_t>{-1, std::numeric_limits<int64_t>::min() + 1}));
  EXPECT_TRUE(entry->GetInstructionWithName("a")->literal().values.empty());
  // Written with '.' or an exponent (which XLA does not accept), an integer is read exactly too,
  // not through a double.
  FP8_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<HloModule> decimal,
      ParseHloModule(
          "HloModule m\nENTRY e {\n  a = s64[2] constant({1e18, -9.007199254740993e15})\n"
          "  ROOT b = u64[] constant(1.8446744073709551615e19)\n}\n",
          "ok.hlo"));
  EXPECT_EQ(decimal->entry_computation()->GetInstructionWithName("a")->literal().integers,
            (std::vector<int64_t>{1000000000000000000, -9007199254740993}));
  EXPECT_EQ(decimal->entry_computation()->GetInstructionWithName("b")->literal().integers,
            (std::vector<int64_t>{-1}));
  // A double would round these to integers in range: 2^63 - 1 + 0.5 to 2^63, 9.3e18 - 0.1
  // to 9.3e18.
  EXPECT_EQ(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = s64[] constant(9223372036854775807.5)\n}\n"),
      "bad.hlo:3:27: error: s64 literal must be an integer\n"
      "  ROOT c = s64[] constant(9223372036854775807.5)\n"
      "                          ^");
  EXPECT_EQ(
      ParseError("HloModule m\nENTRY e {\n  ROOT c = u64[] constant(18446744073709551615.1)\n}\n"),
      "bad.hlo:3:27: error: u64 literal must be an integer\n"
      "  ROOT c = u64[] constant(18446744073709551615.1)\n"
      "                          ^");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  ROOT c = s64[] constant(9.3e18)\n}\n"),
            "bad.hlo:3:27: error: s64 literal 9.3e+18 is out of range [-9223372036854775808, "
            "9223372036854775807]\n"
            "  ROOT c = s64[] constant(9.3e18)\n"
            "                          ^");
}

TEST(HloParserTest, ParsesXlaDumpsWithStackFrameTables) {
  // The shape of XLA's optimized dumps (examples/jax/h200/*.optimized.hlo): source-location
  // tables after the header, stack_frame_id= inside metadata.
  FP8_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<HloModule> module,
      ParseHloModule(R"(HloModule jit_f, entry_computation_layout={(f32[2]{0})->f32[2]{0}}

FileNames
1 "/work/examples/jax/export_modules.py"

FunctionNames
1 "<module>"
2 "f"

FileLocations
1 {file_name_id=1 function_name_id=1 line=98 end_line=98 column=0 end_column=0}
2 {file_name_id=1 function_name_id=2 line=45 end_line=45 column=18 end_column=42}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}

ENTRY %main (p: f32[2]) -> f32[2] {
  %p = f32[2]{0} parameter(0), metadata={op_name="x" stack_frame_id=1}
  ROOT %n = f32[2]{0} negate(%p), metadata={op_name="jit(f)/neg" stack_frame_id=2}
}
)",
                     "dump.hlo"));
  EXPECT_EQ(module->entry_computation()->name(), "main");
  EXPECT_EQ(module->entry_computation()->instruction_count(), 2);
  // Every dump JAX exported on the H200 parses and verifies, flax_fp8_mlp_grad's asynchronous
  // fusion-start/fusion-done included.
  for (const char* name :
       {"direct_fp8_dot_general", "flax_fp8_mlp_grad", "dot_algorithm_any_f8_any_f8_f32",
        "dot_algorithm_any_f8_any_f8_f32_fast_accum", "flax_fp8_mlp_forward", "fp8_dot_forward",
        "fp8_dot_grad", "scaled_dot_bf16_default", "scaled_dot_f32_default",
        "scaled_dot_f32_highest", "scaled_dot_fp8_output"}) {
    StatusOr<std::unique_ptr<HloModule>> module = ParseHloModuleFile(
        std::string(FP8DOT_SOURCE_DIR) + "/examples/jax/h200/" + name + ".optimized.hlo");
    FP8_ASSERT_OK(module);
    FP8_EXPECT_OK(VerifyHloModule(**module)) << name;
  }
}

TEST(HloParserErrorTest, MalformedStackFrameTableIsAnError) {
  EXPECT_EQ(ParseError("HloModule m\nStackFrames\n1 file_location_id=1\nENTRY e {\n}\n"),
            "bad.hlo:3:3: error: expected a string or {...} after id 1 in the StackFrames table\n"
            "1 file_location_id=1\n"
            "  ^");
}

// Text of a module with `computations` one-parameter computations and an entry calling the last.
std::string ManyComputations(int computations) {
  std::string text = "HloModule m\n";
  for (int i = 0; i < computations; ++i) {
    const std::string n = std::to_string(i);
    text += "c" + n + " {\n  ROOT p" + n + " = f32[] parameter(0)\n}\n";
  }
  text += "ENTRY e {\n  x = f32[] parameter(0)\n  ROOT y = f32[] call(x), to_apply=c" +
          std::to_string(computations - 1) + "\n}\n";
  return text;
}

// The fastest of `repeats` parses of `text`, in seconds: the least disturbed by other work.
double FastestParseSeconds(const std::string& text, int repeats) {
  double fastest = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const auto start = std::chrono::steady_clock::now();
    StatusOr<std::unique_ptr<HloModule>> module = ParseHloModule(text, "big.hlo");
    fastest = std::min(
        fastest, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    EXPECT_TRUE(module.ok()) << module.status().message();
  }
  return fastest;
}

TEST(HloParserTest, HundredThousandComputationsParseInLinearTime) {
  // Computation lookup by name used to be a linear scan: 10^5 computations took minutes. Ten
  // times the computations take about ten times as long when parsing is linear and a hundred
  // times when quadratic; the ratio, unlike a time limit, holds on a loaded or sanitized build.
  constexpr int kComputations = 100000;
  const std::string text = ManyComputations(kComputations);
  FP8_ASSERT_OK_AND_ASSIGN(std::unique_ptr<HloModule> module, ParseHloModule(text, "big.hlo"));
  EXPECT_EQ(module->computations().size(), size_t{kComputations + 1});
  EXPECT_NE(module->GetComputationWithName("c54321"), nullptr);
  const double small = FastestParseSeconds(ManyComputations(kComputations / 10), 3);
  const double large = FastestParseSeconds(text, 2);
  EXPECT_LT(large / small, 30.0) << "10^4 computations: " << small << " s, 10^5: " << large << " s";
}

}  // namespace
}  // namespace fp8dot::hlo
