#include "fp8dot/hlo/gemm_backend_config.h"

#include <nlohmann/json.hpp>

namespace fp8dot::hlo {
namespace {

using Json = nlohmann::json;

// XLA prints int64 repeated fields as strings: ["1"].
Json DimsToJson(const std::vector<int64_t>& dims) {
  Json out = Json::array();
  for (int64_t d : dims) out.push_back(std::to_string(d));
  return out;
}

StatusOr<std::vector<int64_t>> DimsFromJson(const Json& parent, const char* key) {
  std::vector<int64_t> out;
  if (!parent.contains(key)) return out;  // proto3: absent repeated field = empty
  const Json& value = parent.at(key);
  if (!value.is_array()) return InvalidArgument("gemm_backend_config: %s must be a list", key);
  for (const Json& item : value) {
    if (item.is_number_integer()) {
      out.push_back(item.get<int64_t>());
    } else if (item.is_string()) {
      try {
        size_t used = 0;
        const std::string text = item.get<std::string>();
        out.push_back(std::stoll(text, &used));
        if (used != text.size()) throw std::invalid_argument(text);
      } catch (const std::exception&) {
        return InvalidArgument("gemm_backend_config: %s holds '%s', not an integer", key,
                               item.get<std::string>().c_str());
      }
    } else {
      return InvalidArgument("gemm_backend_config: %s must hold integers", key);
    }
  }
  return out;
}

template <typename T>
StatusOr<T> Field(const Json& parent, const char* key, T fallback) {
  if (!parent.contains(key)) return fallback;
  try {
    return parent.at(key).get<T>();
  } catch (const Json::exception&) {
    return InvalidArgument("gemm_backend_config: field %s has the wrong type (%s)", key,
                           parent.at(key).dump().c_str());
  }
}

StatusOr<int64_t> IntField(const Json& parent, const char* key) {
  if (!parent.contains(key)) return int64_t{0};
  const Json& value = parent.at(key);
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string()) {
    try {
      return static_cast<int64_t>(std::stoll(value.get<std::string>()));
    } catch (const std::exception&) {
    }
  }
  return InvalidArgument("gemm_backend_config: %s must be an integer, got %s", key,
                         value.dump().c_str());
}

}  // namespace

std::string GemmBackendConfig::ToJson() const {
  Json precision = {{"operand_precision", Json::array()},
                    {"algorithm", AlgorithmName(precision_config.algorithm)}};
  for (Precision p : precision_config.operand_precision) {
    precision["operand_precision"].push_back(PrecisionName(p));
  }
  Json gemm = {
      {"alpha_real", alpha_real},
      {"alpha_imag", alpha_imag},
      {"beta", beta},
      {"dot_dimension_numbers",
       {{"lhs_contracting_dimensions",
         DimsToJson(dot_dimension_numbers.lhs_contracting_dimensions)},
        {"rhs_contracting_dimensions",
         DimsToJson(dot_dimension_numbers.rhs_contracting_dimensions)},
        {"lhs_batch_dimensions", DimsToJson(dot_dimension_numbers.lhs_batch_dimensions)},
        {"rhs_batch_dimensions", DimsToJson(dot_dimension_numbers.rhs_batch_dimensions)}}},
      {"precision_config", precision},
      {"epilogue", EpilogueName(epilogue)},
      {"damax_output", damax_output},
      {"lhs_stride", std::to_string(lhs_stride)},
      {"rhs_stride", std::to_string(rhs_stride)},
      {"grad_x", grad_x},
      {"grad_y", grad_y},
  };
  Json config = {{"operation_queue_id", "0"},
                 {"wait_on_operation_queues", Json::array()},
                 {"gemm_backend_config", gemm},
                 {"force_earliest_schedule", false}};
  return config.dump();
}

StatusOr<GemmBackendConfig> ParseGemmBackendConfig(const std::string& text) {
  Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded() || !root.is_object()) {
    return InvalidArgument("backend_config is not a JSON object: %.80s", text.c_str());
  }
  const Json& gemm = root.contains("gemm_backend_config") ? root.at("gemm_backend_config") : root;
  if (!gemm.is_object()) return InvalidArgument("gemm_backend_config is not an object");
  GemmBackendConfig config;
  FP8_ASSIGN_OR_RETURN(config.alpha_real, Field(gemm, "alpha_real", 1.0));
  FP8_ASSIGN_OR_RETURN(config.alpha_imag, Field(gemm, "alpha_imag", 0.0));
  FP8_ASSIGN_OR_RETURN(config.beta, Field(gemm, "beta", 0.0));
  FP8_ASSIGN_OR_RETURN(config.damax_output, Field(gemm, "damax_output", false));
  FP8_ASSIGN_OR_RETURN(config.grad_x, Field(gemm, "grad_x", false));
  FP8_ASSIGN_OR_RETURN(config.grad_y, Field(gemm, "grad_y", false));
  FP8_ASSIGN_OR_RETURN(config.lhs_stride, IntField(gemm, "lhs_stride"));
  FP8_ASSIGN_OR_RETURN(config.rhs_stride, IntField(gemm, "rhs_stride"));
  FP8_ASSIGN_OR_RETURN(std::string epilogue, Field<std::string>(gemm, "epilogue", "DEFAULT"));
  FP8_ASSIGN_OR_RETURN(config.epilogue, ParseEpilogue(epilogue));

  if (!gemm.contains("dot_dimension_numbers") || !gemm.at("dot_dimension_numbers").is_object()) {
    return InvalidArgument("gemm_backend_config: missing dot_dimension_numbers");
  }
  const Json& dnums = gemm.at("dot_dimension_numbers");
  DotDimensionNumbers& d = config.dot_dimension_numbers;
  FP8_ASSIGN_OR_RETURN(d.lhs_contracting_dimensions,
                       DimsFromJson(dnums, "lhs_contracting_dimensions"));
  FP8_ASSIGN_OR_RETURN(d.rhs_contracting_dimensions,
                       DimsFromJson(dnums, "rhs_contracting_dimensions"));
  FP8_ASSIGN_OR_RETURN(d.lhs_batch_dimensions, DimsFromJson(dnums, "lhs_batch_dimensions"));
  FP8_ASSIGN_OR_RETURN(d.rhs_batch_dimensions, DimsFromJson(dnums, "rhs_batch_dimensions"));

  if (gemm.contains("precision_config")) {
    const Json& precision = gemm.at("precision_config");
    if (!precision.is_object())
      return InvalidArgument("gemm_backend_config: precision_config is not an object");
    if (precision.contains("operand_precision")) {
      config.precision_config.operand_precision.clear();
      for (const Json& p : precision.at("operand_precision")) {
        if (!p.is_string()) return InvalidArgument("operand_precision entries must be strings");
        FP8_ASSIGN_OR_RETURN(Precision parsed, ParsePrecision(p.get<std::string>()));
        config.precision_config.operand_precision.push_back(parsed);
      }
    }
    FP8_ASSIGN_OR_RETURN(std::string algorithm,
                         Field<std::string>(precision, "algorithm", "ALG_UNSET"));
    FP8_ASSIGN_OR_RETURN(config.precision_config.algorithm, ParseAlgorithm(algorithm));
  }
  return config;
}

}  // namespace fp8dot::hlo
