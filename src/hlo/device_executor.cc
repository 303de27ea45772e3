#include "fp8dot/hlo/device_executor.h"

#include "fp8dot/cuda_backend.h"
#include "hlo/gemm_call.h"
#include "hlo/interpreter_ops.h"

namespace fp8dot::hlo {

struct DeviceGemmExecutor::Gemm {
  const HloInstruction* instruction = nullptr;
  GemmCall call;
  CudaDotPlan* plan = nullptr;
  CudaDotBuffers buffers;
  DeviceArray d;
  DeviceArray amax;

  // Allocates D (and the amax when the call computes one) and points the buffers at them.
  Status AllocateOutputs();
};

namespace {

bool IsOneElement(const HloInstruction* instruction) {
  return instruction->shape().IsArray() && instruction->shape().ElementCount() == 1;
}

Status NotSupported(const HloInstruction& instruction, const std::string& why) {
  return Unimplemented(
      "%s: %s; the device executor runs modules made of GEMMs over their inputs (run without "
      "--device-resident to use the host interpreter)",
      instruction.NameForErrors().c_str(), why.c_str());
}

// Checks every instruction before anything touches the GPU, so an unsupported module is reported
// as such (with the instruction) whether or not a GPU is present.
Status CheckSupported(const HloComputation& entry) {
  for (const HloInstruction* instruction : entry.instructions()) {
    switch (instruction->opcode()) {
      case HloOpcode::kParameter:
      case HloOpcode::kConstant:
      case HloOpcode::kGetTupleElement:
        break;
      case HloOpcode::kTuple:
        if (instruction != entry.root_instruction()) {
          return NotSupported(*instruction, "a tuple that is not the root");
        }
        break;
      case HloOpcode::kConvert:
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
      case HloOpcode::kMultiply:
      case HloOpcode::kDivide:
        if (!IsOneElement(instruction)) {
          return NotSupported(*instruction, "only one-element values (scales) are computed");
        }
        break;
      case HloOpcode::kCustomCall:
        if (IsGemmCustomCall(*instruction)) {
          FP8_RETURN_IF_ERROR(DescribeGemmCustomCall(*instruction).status());
          break;
        }
        [[fallthrough]];
      default:
        return NotSupported(*instruction,
                            std::string("opcode ") + HloOpcodeString(instruction->opcode()));
    }
  }
  return OkStatus();
}

// One scale op (convert, reshape, bitcast, multiply or divide) on host values.
StatusOr<Value> EvalScaleOp(const HloInstruction& instruction,
                            const std::vector<const Value*>& operands) {
  switch (instruction.opcode()) {
    case HloOpcode::kConvert:
      return internal::EvalConvert(instruction, *operands[0]);
    case HloOpcode::kReshape:
      return internal::EvalReshape(instruction, *operands[0]);
    case HloOpcode::kBitcast:
      return internal::EvalBitcast(instruction, *operands[0]);
    default:
      return internal::EvalBinary(instruction, *operands[0], *operands[1]);
  }
}

}  // namespace

DeviceGemmExecutor::~DeviceGemmExecutor() = default;

StatusOr<std::unique_ptr<DeviceGemmExecutor>> DeviceGemmExecutor::Prepare(
    const HloModule& module, const std::vector<Value>& arguments) {
  std::unique_ptr<DeviceGemmExecutor> executor(new DeviceGemmExecutor());
  executor->entry_ = module.entry_computation();
  const HloComputation& entry = *executor->entry_;
  if (static_cast<int64_t>(arguments.size()) != entry.num_parameters()) {
    return InvalidArgument("%s takes %lld parameters, got %zu", entry.name().c_str(),
                           static_cast<long long>(entry.num_parameters()), arguments.size());
  }
  FP8_RETURN_IF_ERROR(CheckSupported(entry));
  for (const HloInstruction* instruction : entry.MakeInstructionPostOrder()) {
    FP8_RETURN_IF_ERROR(executor->PrepareInstruction(*instruction, arguments));
  }
  return executor;
}

Status DeviceGemmExecutor::PrepareInstruction(const HloInstruction& instruction,
                                              const std::vector<Value>& arguments) {
  switch (instruction.opcode()) {
    case HloOpcode::kParameter:
      host_values_[&instruction] = arguments[static_cast<size_t>(instruction.parameter_number())];
      return OkStatus();
    case HloOpcode::kConstant:
      host_values_[&instruction] = ValueFromLiteral(instruction.literal());
      return OkStatus();
    case HloOpcode::kConvert:
    case HloOpcode::kReshape:
    case HloOpcode::kBitcast:
    case HloOpcode::kMultiply:
    case HloOpcode::kDivide:
      return ComputeScaleOnHost(instruction);
    case HloOpcode::kGetTupleElement:
      return BindGemmOutput(instruction);
    case HloOpcode::kTuple:
      if (&instruction != entry_->root_instruction()) {
        return NotSupported(instruction, "a tuple that is not the root");
      }
      return OkStatus();
    case HloOpcode::kCustomCall:
      if (IsGemmCustomCall(instruction)) return AddGemm(instruction);
      [[fallthrough]];
    default:
      return NotSupported(instruction,
                          std::string("opcode ") + HloOpcodeString(instruction.opcode()));
  }
}

// Scale arithmetic the rewriter leaves (1/s, bf16 -> f32, f32[1] -> f32[]): on the host, from
// operands that are host values already.
Status DeviceGemmExecutor::ComputeScaleOnHost(const HloInstruction& instruction) {
  std::vector<const Value*> operands;
  bool scalar = IsOneElement(&instruction);
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    auto it = host_values_.find(instruction.operand(i));
    operands.push_back(it == host_values_.end() ? nullptr : &it->second);
    scalar &= operands.back() != nullptr;
  }
  if (!scalar) return NotSupported(instruction, "only one-element values are computed");
  FP8_ASSIGN_OR_RETURN(host_values_[&instruction], EvalScaleOp(instruction, operands));
  return OkStatus();
}

// get-tuple-element(gemm, i): element 0 is the GEMM's D, element 1 its amax when it computes one;
// any other element is the workspace, which nothing may read.
Status DeviceGemmExecutor::BindGemmOutput(const HloInstruction& instruction) {
  auto it = std::find_if(gemms_.begin(), gemms_.end(),
                         [&](const auto& g) { return g->instruction == instruction.operand(0); });
  if (it == gemms_.end()) return NotSupported(instruction, "not an element of a GEMM");
  const int64_t index = instruction.tuple_index();
  if (index == 0) {
    gemm_outputs_[&instruction] = &(*it)->d;
  } else if (index == 1 && (*it)->call.spec.compute_amax) {
    gemm_outputs_[&instruction] = &(*it)->amax;
  } else {
    gemm_outputs_[&instruction] = nullptr;  // the workspace: never read
  }
  return OkStatus();
}

// A GEMM custom call: its cached plan, its inputs on the device, its outputs allocated.
Status DeviceGemmExecutor::AddGemm(const HloInstruction& instruction) {
  auto gemm = std::make_unique<Gemm>();
  gemm->instruction = &instruction;
  FP8_ASSIGN_OR_RETURN(gemm->call, DescribeGemmCustomCall(instruction));
  FP8_ASSIGN_OR_RETURN(gemm->plan, GetCachedCudaDotPlan(gemm->call.spec));
  FP8_RETURN_IF_ERROR(BindGemmInputs(*gemm));
  FP8_RETURN_IF_ERROR(gemm->AllocateOutputs());
  gemms_.push_back(std::move(gemm));
  return OkStatus();
}

// Points the GEMM's input buffers at device memory; inputs the call lacks stay null.
Status DeviceGemmExecutor::BindGemmInputs(Gemm& gemm) {
  const HloInstruction& instruction = *gemm.instruction;
  const GemmCall& call = gemm.call;
  CudaDotBuffers& buffers = gemm.buffers;
  auto scale = [&](int index) -> StatusOr<const float*> {
    FP8_ASSIGN_OR_RETURN(const void* pointer, GemmInput(instruction, index));
    return static_cast<const float*>(pointer);
  };
  FP8_ASSIGN_OR_RETURN(buffers.lhs, GemmInput(instruction, 0));
  FP8_ASSIGN_OR_RETURN(buffers.rhs, GemmInput(instruction, 1));
  if (call.c >= 0) {
    FP8_ASSIGN_OR_RETURN(buffers.c, GemmInput(instruction, call.c));
  }
  if (call.bias >= 0) {
    FP8_ASSIGN_OR_RETURN(buffers.bias, GemmInput(instruction, call.bias));
  }
  if (call.a_scale >= 0) {
    FP8_ASSIGN_OR_RETURN(buffers.lhs_scale, scale(call.a_scale));
  }
  if (call.b_scale >= 0) {
    FP8_ASSIGN_OR_RETURN(buffers.rhs_scale, scale(call.b_scale));
  }
  if (call.scale_d >= 0) {
    FP8_ASSIGN_OR_RETURN(buffers.output_scale, scale(call.scale_d));
  }
  return OkStatus();
}

// The device memory operand `index` of `gemm` reads: an earlier GEMM's output, or its host value,
// uploaded on first use.
StatusOr<const void*> DeviceGemmExecutor::GemmInput(const HloInstruction& gemm, int index) {
  const HloInstruction* source = gemm.operand(index);
  auto output = gemm_outputs_.find(source);
  if (output != gemm_outputs_.end()) {
    if (output->second == nullptr) return NotSupported(gemm, "reads a GEMM workspace");
    return static_cast<const void*>(output->second->buffer.data());
  }
  FP8_ASSIGN_OR_RETURN(const DeviceArray* array, Upload(source));
  return static_cast<const void*>(array->buffer.data());
}

Status DeviceGemmExecutor::Gemm::AllocateOutputs() {
  const DType d_type = call.spec.output_type;
  d.shape = call.d_shape;
  int64_t bytes = 0;
  if (__builtin_mul_overflow(call.d_shape.ElementCount(), DTypeSizeInBytes(d_type), &bytes)) {
    return ResourceExhausted("GEMM output %s does not fit in memory",
                             call.d_shape.ToString().c_str());
  }
  FP8_ASSIGN_OR_RETURN(d.buffer, DeviceBuffer::Allocate(static_cast<size_t>(bytes), "GEMM output"));
  buffers.output = d.buffer.data();
  if (call.spec.compute_amax) {
    amax.shape = Shape::MakeScalar(PrimitiveType::kF32);
    FP8_ASSIGN_OR_RETURN(amax.buffer, DeviceBuffer::Allocate(sizeof(float), "GEMM amax"));
    buffers.amax = amax.buffer.as<float>();
  }
  return OkStatus();
}

StatusOr<const DeviceGemmExecutor::DeviceArray*> DeviceGemmExecutor::Upload(
    const HloInstruction* instruction) {
  auto uploaded = arrays_.find(instruction);
  if (uploaded != arrays_.end()) return &uploaded->second;
  auto host = host_values_.find(instruction);
  if (host == host_values_.end()) {
    return NotSupported(*instruction, "a GEMM operand that is neither an input nor a GEMM output");
  }
  FP8_ASSIGN_OR_RETURN(HostTensor tensor,
                       ValueToHostTensor(host->second, instruction->NameForErrors()));
  DeviceArray array;
  array.shape = instruction->shape();
  FP8_ASSIGN_OR_RETURN(
      array.buffer,
      DeviceBuffer::Allocate(static_cast<size_t>(tensor.size_in_bytes()), "GEMM input"));
  FP8_RETURN_IF_ERROR(CopyToDevice(array.buffer.data(), tensor.data(),
                                   static_cast<size_t>(tensor.size_in_bytes()), "GEMM input"));
  return &(arrays_[instruction] = std::move(array));
}

StatusOr<double> DeviceGemmExecutor::Run() {
  return TimeOnDevice(nullptr, [&]() -> Status {
    for (const auto& gemm : gemms_) FP8_RETURN_IF_ERROR(gemm->plan->Run(gemm->buffers, nullptr));
    return OkStatus();
  });
}

StatusOr<Value> DeviceGemmExecutor::Download(const HloInstruction* instruction) const {
  auto host = host_values_.find(instruction);
  if (host != host_values_.end()) return host->second;
  auto output = gemm_outputs_.find(instruction);
  if (output == gemm_outputs_.end() || output->second == nullptr) {
    return NotSupported(*instruction, "not an output the device executor can return");
  }
  const DeviceArray& array = *output->second;
  const std::optional<DType> dtype = ToDType(array.shape.element_type());
  FP8_ASSIGN_OR_RETURN(HostTensor tensor, HostTensor::Create(*dtype, array.shape.dimensions()));
  FP8_RETURN_IF_ERROR(CopyToHost(tensor.data(), array.buffer.data(),
                                 static_cast<size_t>(tensor.size_in_bytes()), "GEMM output"));
  return ValueFromHostTensor(tensor, instruction->shape(), instruction->NameForErrors());
}

StatusOr<Value> DeviceGemmExecutor::Result() const {
  const HloInstruction* root = entry_->root_instruction();
  if (root->opcode() != HloOpcode::kTuple) return Download(root);
  std::vector<Value> elements;
  for (const HloInstruction* element : root->operands()) {
    FP8_ASSIGN_OR_RETURN(Value value, Download(element));
    elements.push_back(std::move(value));
  }
  Value result = Value::Tuple(std::move(elements));
  result.shape = root->shape();
  return result;
}

}  // namespace fp8dot::hlo
