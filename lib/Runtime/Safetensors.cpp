//===- Safetensors.cpp - The safetensors format, checked ------------------===//

#include "FTPipe/Runtime/Safetensors.h"
#include "FTPipe/Support/BoundedInput.h"
#include "FTPipe/Support/OutputFiles.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>

using namespace ftpipe::runtime;
namespace support = ftpipe::support;

static llvm::Error fail(llvm::StringRef file, const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 file + ": " + message);
}

llvm::Expected<SafetensorsFile>
ftpipe::runtime::parseSafetensors(llvm::StringRef bytes, llvm::StringRef name) {
  if (bytes.size() < 8)
    return fail(name, "not a safetensors file (" + llvm::Twine(bytes.size()) +
                          " bytes, shorter than the header length)");
  uint64_t headerBytes = 0;
  for (int i = 7; i >= 0; --i)
    headerBytes = headerBytes << 8 | static_cast<uint8_t>(bytes[i]);
  if (headerBytes > kMaxSafetensorsHeaderBytes)
    return fail(name, "the header claims " + llvm::Twine(headerBytes) +
                          " bytes, more than the limit of " +
                          llvm::Twine(kMaxSafetensorsHeaderBytes));
  if (headerBytes > bytes.size() - 8)
    return fail(name, "the header claims " + llvm::Twine(headerBytes) +
                          " bytes, the file has " +
                          llvm::Twine(bytes.size() - 8) + " after its length");
  llvm::Expected<llvm::json::Value> header =
      support::parseBoundedJSON(bytes.substr(8, headerBytes));
  if (!header)
    return fail(name, "the header is not JSON: " +
                          llvm::toString(header.takeError()));
  const llvm::json::Object *entries = header->getAsObject();
  if (!entries)
    return fail(name, "the header is not a JSON object");
  llvm::StringRef data = bytes.substr(8 + headerBytes);

  SafetensorsFile file;
  std::vector<std::tuple<uint64_t, uint64_t, std::string>> spans;
  for (const auto &[key, value] : *entries) {
    std::string tensorName = key.str();
    if (tensorName == "__metadata__") {
      const llvm::json::Object *metadata = value.getAsObject();
      if (!metadata)
        return fail(name, "__metadata__ is not an object");
      for (const auto &[metaKey, metaValue] : *metadata) {
        std::optional<llvm::StringRef> text = metaValue.getAsString();
        if (!text)
          return fail(name,
                      "__metadata__ '" + metaKey.str() + "' is not a string");
        file.metadata[metaKey.str()] = text->str();
      }
      continue;
    }
    auto bad = [&](const llvm::Twine &what) {
      return fail(name, "tensor '" + tensorName + "': " + what);
    };
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return bad("not an object");
    std::optional<llvm::StringRef> dtypeText = entry->getString("dtype");
    std::optional<DType> type =
        dtypeText ? parseDType(*dtypeText) : std::nullopt;
    if (!type)
      return bad("unknown dtype " +
                 (dtypeText ? "'" + dtypeText->str() + "'" : "(none)"));
    const llvm::json::Array *shapeArray = entry->getArray("shape");
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!shapeArray || !offsets || offsets->size() != 2)
      return bad("needs \"shape\" and two \"data_offsets\"");
    std::vector<int64_t> shape;
    uint64_t elements = 1;
    for (const llvm::json::Value &size : *shapeArray) {
      std::optional<int64_t> dim = size.getAsInteger();
      if (!dim || *dim < 0 || (*dim && elements > (UINT64_MAX >> 8) / *dim))
        return bad("bad shape");
      shape.push_back(*dim);
      elements *= static_cast<uint64_t>(*dim);
    }
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin ||
        static_cast<uint64_t>(*end) > data.size())
      return bad("data_offsets outside the " + llvm::Twine(data.size()) +
                 " data bytes");
    uint64_t expected = elements * dtypeBytes(*type);
    if (static_cast<uint64_t>(*end - *begin) != expected)
      return bad("data_offsets span " + llvm::Twine(*end - *begin) +
                 " bytes, " + dtypeName(*type) + " " + shapeString(shape) +
                 " needs " + llvm::Twine(expected));
    spans.emplace_back(*begin, *end, tensorName);
    Tensor tensor(*type, shape);
    std::memcpy(tensor.bytes.data(), data.data() + *begin, expected);
    file.tensors[tensorName] = std::move(tensor);
  }
  std::sort(spans.begin(), spans.end());
  uint64_t at = 0;
  for (const auto &[begin, end, tensorName] : spans) {
    if (begin != at)
      return fail(name, "tensor '" + tensorName + "' starts at byte " +
                            llvm::Twine(begin) + ", expected " +
                            llvm::Twine(at) + " (overlap or gap)");
    at = end;
  }
  if (at != data.size())
    return fail(name,
                llvm::Twine(data.size() - at) + " bytes after the last tensor");
  return file;
}

llvm::Expected<SafetensorsFile>
ftpipe::runtime::readSafetensors(llvm::StringRef path) {
  llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> buffer =
      support::readBoundedFile(path, "safetensors file",
                               kMaxSafetensorsFileBytes);
  if (!buffer)
    return buffer.takeError();
  return parseSafetensors((*buffer)->getBuffer(), path);
}

std::string ftpipe::runtime::serializeSafetensors(
    const TensorMap &tensors,
    const std::map<std::string, std::string> &metadata) {
  llvm::json::Object header;
  uint64_t offset = 0;
  for (const auto &[name, tensor] : tensors) {
    llvm::json::Array shape;
    for (int64_t size : tensor.shape)
      shape.push_back(size);
    uint64_t end = offset + tensor.bytes.size();
    header[name] =
        llvm::json::Object{{"dtype", dtypeName(tensor.type)},
                           {"shape", std::move(shape)},
                           {"data_offsets", llvm::json::Array{offset, end}}};
    offset = end;
  }
  if (!metadata.empty()) {
    llvm::json::Object meta;
    for (const auto &[key, value] : metadata)
      meta[key] = value;
    header["__metadata__"] = std::move(meta);
  }
  std::string text;
  llvm::raw_string_ostream(text) << llvm::json::Value(std::move(header));
  // Pad the header so the data starts 8-byte aligned.
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  uint64_t length = text.size();
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<char>(length >> (8 * i) & 0xff);
  out += text;
  for (const auto &[name, tensor] : tensors)
    out.append(tensor.bytes.data(), tensor.bytes.size());
  return out;
}

llvm::Error ftpipe::runtime::writeSafetensors(
    llvm::StringRef path, const TensorMap &tensors,
    const std::map<std::string, std::string> &metadata) {
  return support::writeFileAtomically(path,
                                      serializeSafetensors(tensors, metadata));
}
