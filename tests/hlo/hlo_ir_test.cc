// IR mutation API: what the FP8 rewriter does (build a custom call, replace uses, remove dead
// code), names, users and post order.
#include "fp8dot/hlo/hlo_ir.h"

#include <gtest/gtest.h>

#include "fp8dot/hlo/hlo_verifier.h"
#include "hlo/hlo_test_util.h"
#include "status_matchers.h"

namespace fp8dot::hlo {
namespace {

TEST(HloIrTest, ReplaceDotWithCustomCallAndRemoveDeadCode) {
  std::unique_ptr<HloModule> module = ParseOrDie(ReadTestdata("jax_fp8_scaled_dot.hlo"));
  ASSERT_NE(module, nullptr);
  HloComputation* entry = module->entry_computation();
  HloInstruction* dot = entry->GetInstructionWithName("dot.11");
  ASSERT_NE(dot, nullptr);
  HloInstruction* a = entry->parameter_instruction(0);
  HloInstruction* b = entry->parameter_instruction(1);
  HloInstruction* sa = entry->parameter_instruction(2);
  HloInstruction* sb = entry->parameter_instruction(3);

  HloInstruction* gemm = entry->AddInstruction(HloInstruction::CreateCustomCall(
      Shape::MakeTuple({dot->shape(), Shape::MakeArray(PrimitiveType::kS8, {0})}), {a, b, sa, sb},
      "__cublas$lt$matmul$f8", R"({"gemm_backend_config":{"alpha_real":1,"epilogue":"DEFAULT"}})"));
  HloInstruction* result = entry->AddInstruction(HloInstruction::CreateGetTupleElement(gemm, 0));
  EXPECT_EQ(gemm->name(), "custom-call");
  EXPECT_EQ(result->name(), "get-tuple-element");
  EXPECT_EQ(result->shape().ToString(), "f32[16,64]{1,0}");
  ASSERT_TRUE(dot->ReplaceAllUsesWith(result).ok());
  EXPECT_EQ(dot->user_count(), 0);
  EXPECT_EQ(entry->root_instruction()->operand(0), result);
  // dot, both multiplies, converts and broadcasts are now dead.
  EXPECT_EQ(entry->RemoveDeadCode(), 7);
  EXPECT_EQ(entry->GetInstructionWithName("dot.11"), nullptr);
  EXPECT_EQ(a->users(), std::vector<HloInstruction*>{gemm});
  ASSERT_TRUE(VerifyHloModule(*module).ok()) << VerifyHloModule(*module).ToString();

  const std::string printed = module->ToString();
  EXPECT_NE(printed.find("  %custom-call = (f32[16,64]{1,0}, s8[0]{0}) custom-call(%Arg_0.1, "
                         "%Arg_1.2, %Arg_2.3, %Arg_3.4), custom_call_target=\"__cublas$lt$matmul"
                         "$f8\", backend_config={\"gemm_backend_config\":{\"alpha_real\":1,"
                         "\"epilogue\":\"DEFAULT\"}}\n"
                         "  %get-tuple-element = f32[16,64]{1,0} get-tuple-element("
                         "%custom-call), index=0\n"
                         "  ROOT %convert.12 = bf16[16,64]{1,0} convert(%get-tuple-element)"),
            std::string::npos)
      << printed;
  std::unique_ptr<HloModule> reparsed = ParseOrDie(printed);
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(reparsed->ToString(), printed);
}

TEST(HloIrTest, UniqueNamesAndUsers) {
  HloModule module("m");
  HloComputation* c = module.AddComputation("e");
  HloInstruction* p = c->AddInstruction(
      HloInstruction::CreateParameter(0, Shape::MakeArray(PrimitiveType::kF32, {4}), "p"));
  HloInstruction* m1 =
      c->AddInstruction(HloInstruction::CreateBinary(p->shape(), HloOpcode::kMultiply, p, p));
  auto named = HloInstruction::CreateUnary(p->shape(), HloOpcode::kNegate, m1);
  named->set_name("multiply");  // taken: becomes multiply.1
  HloInstruction* n = c->AddInstruction(std::move(named));
  c->set_root_instruction(n);
  EXPECT_EQ(m1->name(), "multiply");
  EXPECT_EQ(n->name(), "multiply.1");
  EXPECT_EQ(p->users(), std::vector<HloInstruction*>{m1});  // once, though used twice
  EXPECT_EQ(m1->operand_count(), 2);

  // Replacing the root moves it; removal refuses instructions still in use.
  HloInstruction* e =
      c->AddInstruction(HloInstruction::CreateUnary(p->shape(), HloOpcode::kExp, p));
  EXPECT_FALSE(c->RemoveInstruction(m1).ok());
  ASSERT_TRUE(n->ReplaceAllUsesWith(e).ok());
  EXPECT_EQ(c->root_instruction(), e);
  EXPECT_EQ(c->RemoveDeadCode(), 2);
  EXPECT_EQ(p->users(), std::vector<HloInstruction*>{e});
  EXPECT_FALSE(e->ReplaceAllUsesWith(c->AddInstruction(HloInstruction::CreateConstant(
                                         Literal::Scalar(PrimitiveType::kF32, 1))))
                   .ok());  // shape mismatch
}

TEST(HloIrTest, InstructionLookupByNameFollowsAddRemoveAndRename) {
  // GetInstructionWithName is a hash lookup (#13): the index must follow every mutation.
  HloModule module("m");
  HloComputation* c = module.AddComputation("e");
  HloInstruction* p = c->AddInstruction(
      HloInstruction::CreateParameter(0, Shape::MakeArray(PrimitiveType::kF32, {4}), "p"));
  HloInstruction* dead =
      c->AddInstruction(HloInstruction::CreateUnary(p->shape(), HloOpcode::kNegate, p));
  HloInstruction* removed =
      c->AddInstruction(HloInstruction::CreateUnary(p->shape(), HloOpcode::kExp, p));
  HloInstruction* root =
      c->AddInstruction(HloInstruction::CreateUnary(p->shape(), HloOpcode::kAbs, p));
  c->set_root_instruction(root);
  EXPECT_EQ(c->GetInstructionWithName("p"), p);
  EXPECT_EQ(c->GetInstructionWithName("negate"), dead);
  FP8_ASSERT_OK(c->RemoveInstruction(removed));
  EXPECT_EQ(c->GetInstructionWithName("exponential"), nullptr);
  EXPECT_EQ(c->RemoveDeadCode(), 1);
  EXPECT_EQ(c->GetInstructionWithName("negate"), nullptr);
  root->set_name("renamed");
  EXPECT_EQ(c->GetInstructionWithName("abs"), nullptr);
  EXPECT_EQ(c->GetInstructionWithName("renamed"), root);
  EXPECT_EQ(c->GetInstructionWithName("missing"), nullptr);
}

TEST(HloIrTest, PostOrderPutsAppendedOperandsFirst) {
  HloModule module("m");
  HloComputation* c = module.AddComputation("e");
  Shape s = Shape::MakeScalar(PrimitiveType::kF32);
  HloInstruction* p = c->AddInstruction(HloInstruction::CreateParameter(0, s, "p"));
  HloInstruction* neg = c->AddInstruction(HloInstruction::CreateUnary(s, HloOpcode::kNegate, p));
  c->set_root_instruction(neg);
  HloInstruction* abs = c->AddInstruction(HloInstruction::CreateUnary(s, HloOpcode::kAbs, p));
  neg->ReplaceOperandWith(0, abs);  // abs was appended after its user
  std::vector<HloInstruction*> order = c->MakeInstructionPostOrder();
  EXPECT_EQ(order, (std::vector<HloInstruction*>{p, abs, neg}));
  EXPECT_TRUE(p->users() == std::vector<HloInstruction*>{abs});
  module.set_entry_computation(c);
  std::unique_ptr<HloModule> reparsed = ParseOrDie(module.ToString());
  ASSERT_NE(reparsed, nullptr);
  EXPECT_EQ(reparsed->ToString(), module.ToString());
}

TEST(HloIrTest, DTypeMapping) {
  EXPECT_EQ(ToDType(PrimitiveType::kF8E4M3FN), DType::kF8E4M3FN);
  EXPECT_EQ(ToDType(PrimitiveType::kBF16), DType::kBF16);
  EXPECT_FALSE(ToDType(PrimitiveType::kS32).has_value());
  for (DType t : kAllDTypes) EXPECT_EQ(ToDType(FromDType(t)), t);
  EXPECT_EQ(PrimitiveTypeName(PrimitiveType::kF8E5M2), std::string("f8e5m2"));
  EXPECT_EQ(HloOpcodeString(HloOpcode::kGetTupleElement), std::string("get-tuple-element"));
  FP8_EXPECT_OK_AND_EQ(StringToHloOpcode("is-finite"), HloOpcode::kIsFinite);
}

}  // namespace
}  // namespace fp8dot::hlo
