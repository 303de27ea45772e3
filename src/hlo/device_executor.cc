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
    auto host = [&](int64_t i) -> const Value* {
      auto it = executor->host_values_.find(instruction->operand(i));
      return it == executor->host_values_.end() ? nullptr : &it->second;
    };
    switch (instruction->opcode()) {
      case HloOpcode::kParameter:
        executor->host_values_[instruction] =
            arguments[static_cast<size_t>(instruction->parameter_number())];
        continue;
      case HloOpcode::kConstant:
        executor->host_values_[instruction] =
            Value::Array(instruction->literal().shape, instruction->literal().values);
        continue;
      case HloOpcode::kConvert:
      case HloOpcode::kReshape:
      case HloOpcode::kBitcast:
      case HloOpcode::kMultiply:
      case HloOpcode::kDivide: {
        // Scale arithmetic the rewriter leaves (1/s, bf16 -> f32, f32[1] -> f32[]): on the host.
        bool scalar = IsOneElement(instruction);
        for (int64_t i = 0; i < instruction->operand_count(); ++i) scalar &= host(i) != nullptr;
        if (!scalar) return NotSupported(*instruction, "only one-element values are computed");
        StatusOr<Value> value = instruction->opcode() == HloOpcode::kConvert
                                    ? internal::EvalConvert(*instruction, *host(0))
                                : instruction->opcode() == HloOpcode::kReshape
                                    ? internal::EvalReshape(*instruction, *host(0))
                                : instruction->opcode() == HloOpcode::kBitcast
                                    ? internal::EvalBitcast(*instruction, *host(0))
                                    : internal::EvalBinary(*instruction, *host(0), *host(1));
        if (!value.ok()) return value.status();
        executor->host_values_[instruction] = std::move(value).value();
        continue;
      }
      case HloOpcode::kGetTupleElement: {
        auto it =
            std::find_if(executor->gemms_.begin(), executor->gemms_.end(),
                         [&](const auto& g) { return g->instruction == instruction->operand(0); });
        if (it == executor->gemms_.end())
          return NotSupported(*instruction, "not an element of a GEMM");
        const int64_t index = instruction->tuple_index();
        if (index == 0) {
          executor->gemm_outputs_[instruction] = &(*it)->d;
        } else if (index == 1 && (*it)->call.spec.compute_amax) {
          executor->gemm_outputs_[instruction] = &(*it)->amax;
        } else {
          executor->gemm_outputs_[instruction] = nullptr;  // the workspace: never read
        }
        continue;
      }
      case HloOpcode::kTuple:
        if (instruction != entry.root_instruction())
          return NotSupported(*instruction, "a tuple that is not the root");
        continue;
      case HloOpcode::kCustomCall:
        if (IsGemmCustomCall(*instruction)) break;
        [[fallthrough]];
      default:
        return NotSupported(*instruction,
                            std::string("opcode ") + HloOpcodeString(instruction->opcode()));
    }
    // A GEMM custom call.
    auto gemm = std::make_unique<Gemm>();
    gemm->instruction = instruction;
    FP8_ASSIGN_OR_RETURN(gemm->call, DescribeGemmCustomCall(*instruction));
    FP8_ASSIGN_OR_RETURN(gemm->plan, GetCachedCudaDotPlan(gemm->call.spec));
    auto operand = [&](int index) -> StatusOr<const void*> {
      const HloInstruction* source = instruction->operand(index);
      auto output = executor->gemm_outputs_.find(source);
      if (output != executor->gemm_outputs_.end()) {
        if (output->second == nullptr) return NotSupported(*instruction, "reads a GEMM workspace");
        return static_cast<const void*>(output->second->buffer.data());
      }
      FP8_ASSIGN_OR_RETURN(const DeviceArray* array, executor->Upload(source));
      return static_cast<const void*>(array->buffer.data());
    };
    CudaDotBuffers& buffers = gemm->buffers;
    FP8_ASSIGN_OR_RETURN(buffers.lhs, operand(0));
    FP8_ASSIGN_OR_RETURN(buffers.rhs, operand(1));
    const GemmCall& call = gemm->call;
    if (call.c >= 0) {
      FP8_ASSIGN_OR_RETURN(buffers.c, operand(call.c));
    }
    if (call.bias >= 0) {
      FP8_ASSIGN_OR_RETURN(buffers.bias, operand(call.bias));
    }
    auto scale = [&](int index) -> StatusOr<const float*> {
      FP8_ASSIGN_OR_RETURN(const void* pointer, operand(index));
      return static_cast<const float*>(pointer);
    };
    if (call.a_scale >= 0) {
      FP8_ASSIGN_OR_RETURN(buffers.lhs_scale, scale(call.a_scale));
    }
    if (call.b_scale >= 0) {
      FP8_ASSIGN_OR_RETURN(buffers.rhs_scale, scale(call.b_scale));
    }
    if (call.scale_d >= 0) {
      FP8_ASSIGN_OR_RETURN(buffers.output_scale, scale(call.scale_d));
    }
    const DType d_type = call.spec.output_type;
    gemm->d.shape = call.d_shape;
    FP8_ASSIGN_OR_RETURN(gemm->d.buffer,
                         DeviceBuffer::Allocate(static_cast<size_t>(call.d_shape.ElementCount() *
                                                                    DTypeSizeInBytes(d_type)),
                                                "GEMM output"));
    buffers.output = gemm->d.buffer.data();
    if (call.spec.compute_amax) {
      gemm->amax.shape = Shape::MakeScalar(PrimitiveType::kF32);
      FP8_ASSIGN_OR_RETURN(gemm->amax.buffer, DeviceBuffer::Allocate(sizeof(float), "GEMM amax"));
      buffers.amax = gemm->amax.buffer.as<float>();
    }
    executor->gemms_.push_back(std::move(gemm));
  }
  return executor;
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
