#include "fp8dot/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>

#include "fp8dot/file_writer.h"

namespace fp8dot {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// The descr fp8dot writes for each type.
std::string DescrFor(DType type) {
  switch (type) {
    case DType::kF8E4M3FN:
      return "[('float8_e4m3fn', '|u1')]";
    case DType::kF8E5M2:
      return "[('float8_e5m2', '|u1')]";
    case DType::kBF16:
      return "[('bfloat16', '<u2')]";
    case DType::kF16:
      return "'<f2'";
    case DType::kF32:
      return "'<f4'";
    case DType::kF64:
      return "'<f8'";
  }
  return "''";
}

// ---- A small parser for the header, a Python dict literal such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }
// value ::= string | True | False | tuple-of-ints | list of (string, string) tuples

class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  Status Parse(std::string* descr, bool* fortran_order, Dims* shape) {
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Error("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      const size_t key_start = pos_;
      if (!ParseString(&key)) return Error("expected a quoted key");
      SkipSpace();
      if (!Consume(':')) return Error("expected ':' after key");
      SkipSpace();
      if (key == "descr") {
        if (!ParseDescr(descr)) return Error("expected a descr string or [('name', 'type')]");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (ConsumeWord("True"))
          *fortran_order = true;
        else if (ConsumeWord("False"))
          *fortran_order = false;
        else
          return Error("expected True or False for fortran_order");
        have_order = true;
      } else if (key == "shape") {
        if (!ParseShape(shape)) return Error("expected a tuple of non-negative ints for shape");
        have_shape = true;
      } else {
        pos_ = key_start;
        return Error("unexpected key '" + key + "' (expected descr, fortran_order, shape)");
      }
      SkipSpace();
      if (Consume(',')) continue;
      SkipSpace();
      if (Consume('}')) break;
      return Error("expected ',' or '}'");
    }
    if (!have_descr || !have_order || !have_shape) {
      return Error("header must have the keys 'descr', 'fortran_order' and 'shape'");
    }
    return OkStatus();
  }

 private:
  Status Error(const std::string& what) {
    return InvalidArgument("header offset %zu: %s", pos_, what.c_str());
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool ConsumeWord(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }
  bool ParseString(std::string* out) {
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return false;
    const char quote = text_[pos_++];
    size_t end = text_.find(quote, pos_);
    if (end == std::string_view::npos) return false;
    *out = std::string(text_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return true;
  }
  // '<f4'  or  [('float8_e4m3fn', '|u1')]  (kept as "name:type")
  bool ParseDescr(std::string* out) {
    if (!Consume('[')) return ParseString(out);
    SkipSpace();
    std::string name, type;
    if (!Consume('(')) return false;
    SkipSpace();
    if (!ParseString(&name)) return false;
    SkipSpace();
    if (!Consume(',')) return false;
    SkipSpace();
    if (!ParseString(&type)) return false;
    SkipSpace();
    if (!Consume(')')) return false;
    SkipSpace();
    Consume(',');
    SkipSpace();
    if (!Consume(']')) return false;
    *out = name + ":" + type;
    return true;
  }
  bool ParseShape(Dims* shape) {
    if (!Consume('(')) return false;
    shape->clear();
    while (true) {
      SkipSpace();
      if (Consume(')')) return true;
      if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_])))
        return false;
      int64_t value = 0;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        if (value > (int64_t{1} << 50)) return false;
        value = value * 10 + (text_[pos_++] - '0');
      }
      shape->push_back(value);
      if (shape->size() > 32) return false;
      SkipSpace();
      if (Consume(')')) return true;
      if (!Consume(',')) return false;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

StatusOr<DType> TypeFromDescr(const std::string& descr, std::optional<DType> hint,
                              const std::string& source) {
  struct Known {
    const char* descr;
    DType type;
  };
  static constexpr Known kKnown[] = {
      {"<f8", DType::kF64},
      {"<f4", DType::kF32},
      {"<f2", DType::kF16},
      {"float8_e4m3fn:|u1", DType::kF8E4M3FN},
      {"float8_e5m2:|u1", DType::kF8E5M2},
      {"bfloat16:<u2", DType::kBF16},
  };
  for (const Known& known : kKnown) {
    if (descr == known.descr) {
      if (hint && *hint != known.type) {
        return InvalidArgument("%s: holds %s but %s was requested", source.c_str(),
                               DTypeName(known.type), DTypeName(*hint));
      }
      return known.type;
    }
  }
  // Untyped bytes (np.save of ml_dtypes arrays, raw bits): the caller must name the type.
  static constexpr const char* kOneByte[] = {"<V1", "|V1", "<f1", "|u1", "<u1"};
  static constexpr const char* kTwoBytes[] = {"<V2", "|V2", "<u2"};
  int size = 0;
  for (const char* d : kOneByte) size = descr == d ? 1 : size;
  for (const char* d : kTwoBytes) size = descr == d ? 2 : size;
  if (size != 0) {
    if (!hint) {
      return InvalidArgument(
          "%s: descr '%s' does not say which %d-byte float it holds; name the type "
          "(e.g. --lhs-type f8e4m3fn)",
          source.c_str(), descr.c_str(), size);
    }
    if (DTypeSizeInBytes(*hint) != size) {
      return InvalidArgument("%s: descr '%s' holds %d-byte elements but %s has %d bytes",
                             source.c_str(), descr.c_str(), size, DTypeName(*hint),
                             DTypeSizeInBytes(*hint));
    }
    return *hint;
  }
  return InvalidArgument(
      "%s: unsupported descr '%s' (expected little-endian '<f8', '<f4', '<f2', or fp8dot's "
      "[('float8_e4m3fn', '|u1')], [('float8_e5m2', '|u1')], [('bfloat16', '<u2')])",
      source.c_str(), descr.c_str());
}

}  // namespace

std::string SerializeNpyRaw(std::string_view descr, const Dims& dims, std::string_view data) {
  // numpy writes "()", "(3,)" and "(3, 4)".
  std::string shape = "(";
  for (size_t i = 0; i < dims.size(); ++i) {
    shape += (i > 0 ? ", " : "") + std::to_string(dims[i]);
  }
  shape += dims.size() == 1 ? ",)" : ")";
  std::string header =
      "{'descr': " + std::string(descr) + ", 'fortran_order': False, 'shape': " + shape + ", }";
  // Magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64.
  const size_t unpadded = kMagicSize + 2 + 2 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header += '\n';
  std::string out(kMagic, kMagicSize);
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>((header.size() >> 8) & 0xff);
  out += header;
  out.append(data);
  return out;
}

std::string SerializeNpy(const HostTensor& tensor) {
  const HostTensor row_major = tensor.ToRowMajor();
  return SerializeNpyRaw(DescrFor(row_major.dtype()), row_major.dims(),
                         std::string_view(static_cast<const char*>(row_major.data()),
                                          static_cast<size_t>(row_major.size_in_bytes())));
}

Status WriteNpyBytes(const std::string& path, std::string_view bytes) {
  return WriteFileAtomically(path, bytes);
}

Status WriteNpy(const std::string& path, const HostTensor& tensor) {
  return WriteNpyBytes(path, SerializeNpy(tensor));
}

namespace {

// What a .npy header says: the element type, the shape and layout, and where the data starts.
struct NpyHeader {
  DType type = DType::kF32;
  Dims shape;
  std::vector<int64_t> layout;
  size_t data_start = 0;
  int64_t data_bytes = 0;  // what the shape and type need
};

// The header's length field: `prefix` holds at least the first 12 bytes of the file (or all of
// it when shorter). Returns where the header text starts and how long it is.
Status ParsePreamble(std::string_view prefix, const std::string& source, size_t* header_start,
                     size_t* header_length) {
  if (prefix.size() < kMagicSize + 4 ||
      prefix.substr(0, kMagicSize) != std::string_view(kMagic, kMagicSize)) {
    return InvalidArgument("%s: not a .npy file (missing the \\x93NUMPY magic)", source.c_str());
  }
  const auto major = static_cast<unsigned char>(prefix[6]);
  *header_length = 0;
  if (major == 1) {
    *header_length = static_cast<unsigned char>(prefix[8]) |
                     (static_cast<size_t>(static_cast<unsigned char>(prefix[9])) << 8);
    *header_start = 10;
  } else if (major == 2 || major == 3) {
    if (prefix.size() < 12) return InvalidArgument("%s: truncated header", source.c_str());
    for (int i = 0; i < 4; ++i) {
      *header_length |= static_cast<size_t>(static_cast<unsigned char>(prefix[8 + i])) << (8 * i);
    }
    *header_start = 12;
  } else {
    return InvalidArgument("%s: unsupported .npy version %u (expected 1, 2 or 3)", source.c_str(),
                           major);
  }
  return OkStatus();
}

// Parses the header text and checks that the file's `file_size` bytes hold exactly the data the
// shape and type need, before any of it is read or allocated.
StatusOr<NpyHeader> ParseHeader(std::string_view text, size_t header_start, size_t file_size,
                                std::optional<DType> type_hint, const std::string& source) {
  NpyHeader header;
  std::string descr;
  bool fortran_order = false;
  HeaderParser parser(text);
  Status parsed = parser.Parse(&descr, &fortran_order, &header.shape);
  if (!parsed.ok()) return InvalidArgument("%s: %s", source.c_str(), parsed.message().c_str());
  FP8_ASSIGN_OR_RETURN(header.type, TypeFromDescr(descr, type_hint, source));
  header.layout = RowMajorLayout(static_cast<int64_t>(header.shape.size()));
  if (fortran_order) std::reverse(header.layout.begin(), header.layout.end());
  header.data_start = header_start + text.size();
  const size_t data_size = file_size - header.data_start;
  bool overflow = false;
  header.data_bytes = DTypeSizeInBytes(header.type);
  for (int64_t d : header.shape) {
    overflow = overflow || __builtin_mul_overflow(header.data_bytes, d, &header.data_bytes);
  }
  if (overflow || static_cast<uint64_t>(header.data_bytes) != data_size) {
    return InvalidArgument(
        "%s: shape %s of %s needs %s data bytes, the file has %zu", source.c_str(),
        DimsToString(header.shape).c_str(), DTypeName(header.type),
        overflow ? "more than 2^63" : std::to_string(header.data_bytes).c_str(), data_size);
  }
  return header;
}

}  // namespace

StatusOr<HostTensor> ParseNpy(std::string_view bytes, std::optional<DType> type_hint,
                              const std::string& source) {
  size_t header_start = 0, header_length = 0;
  FP8_RETURN_IF_ERROR(ParsePreamble(bytes, source, &header_start, &header_length));
  if (header_length > bytes.size() - header_start) {
    return InvalidArgument("%s: header length %zu runs past the end of the file (%zu bytes)",
                           source.c_str(), header_length, bytes.size());
  }
  FP8_ASSIGN_OR_RETURN(NpyHeader header,
                       ParseHeader(bytes.substr(header_start, header_length), header_start,
                                   bytes.size(), type_hint, source));
  FP8_ASSIGN_OR_RETURN(HostTensor tensor,
                       HostTensor::Create(header.type, header.shape, header.layout));
  if (header.data_bytes > 0) {  // an empty tensor has no buffer to copy into
    std::memcpy(tensor.data(), bytes.data() + header.data_start,
                static_cast<size_t>(header.data_bytes));
  }
  return tensor;
}

// Reads the header first, checks the shape against the file size, then reads the data straight
// into the tensor: the peak is the tensor itself, whatever the header claims.
StatusOr<HostTensor> ReadNpy(const std::string& path, std::optional<DType> type_hint) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) return NotFound("cannot open '%s'", path.c_str());
  const std::streamoff end = file.tellg();
  if (end < 0) return Internal("cannot read the size of '%s'", path.c_str());
  const auto file_size = static_cast<size_t>(end);
  file.seekg(0);
  std::string prefix(std::min<size_t>(file_size, 12), '\0');
  if (!file.read(prefix.data(), static_cast<std::streamsize>(prefix.size()))) {
    return Internal("reading '%s' failed", path.c_str());
  }
  size_t header_start = 0, header_length = 0;
  FP8_RETURN_IF_ERROR(ParsePreamble(prefix, path, &header_start, &header_length));
  if (header_length > file_size - header_start) {
    return InvalidArgument("%s: header length %zu runs past the end of the file (%zu bytes)",
                           path.c_str(), header_length, file_size);
  }
  std::string text(header_length, '\0');
  file.seekg(static_cast<std::streamoff>(header_start));
  if (!file.read(text.data(), static_cast<std::streamsize>(header_length))) {
    return Internal("reading the header of '%s' failed", path.c_str());
  }
  FP8_ASSIGN_OR_RETURN(NpyHeader header,
                       ParseHeader(text, header_start, file_size, type_hint, path));
  FP8_ASSIGN_OR_RETURN(HostTensor tensor,
                       HostTensor::Create(header.type, header.shape, header.layout));
  if (!file.read(static_cast<char*>(tensor.data()),
                 static_cast<std::streamsize>(header.data_bytes))) {
    return Internal("reading the data of '%s' failed", path.c_str());
  }
  return tensor;
}

}  // namespace fp8dot
