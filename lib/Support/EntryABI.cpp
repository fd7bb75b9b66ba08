//===- EntryABI.cpp - Printing and parsing ABI descriptions ---------------===//
//
// The text format of EntryABI.h. The parser is strict (a header, then one
// well-formed value per line, no negative or overflowing size): the text
// comes from an artifact, which the runtime reads before trusting it.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Support/EntryABI.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

using namespace ftpipe::support;

static llvm::Error fail(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

static constexpr llvm::StringLiteral kHeader = "ftpipe-abi 1";

std::string ABIValue::str() const {
  std::string out = (tensor ? "tensor " : "scalar ") + element;
  if (!tensor)
    return out;
  out += " [";
  for (size_t d = 0; d < shape.size(); ++d)
    out += (d ? ", " : "") + std::to_string(shape[d]);
  return out + "]";
}

std::string ftpipe::support::printEntryABI(const EntryABI &abi) {
  std::string out = kHeader.str() + "\n";
  auto print = [&](llvm::StringRef role, const ABIValue &value) {
    out +=
        role.str() + (value.tensor ? " tensor " : " scalar ") + value.element;
    for (int64_t size : value.shape)
      out += " " + std::to_string(size);
    out += "\n";
  };
  for (const ABIValue &value : abi.arguments)
    print("argument", value);
  for (const ABIValue &value : abi.results)
    print("result", value);
  return out;
}

llvm::Expected<EntryABI> ftpipe::support::parseEntryABI(llvm::StringRef text) {
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  if (lines.empty() || lines.front() != kHeader)
    return fail(
        "not an ABI description of version 1 (it starts '" +
        (lines.empty() ? llvm::StringRef() : lines.front().take_front(40)) +
        "')");
  EntryABI abi;
  for (size_t l = 1; l < lines.size(); ++l) {
    auto bad = [&](const llvm::Twine &why) {
      return fail("line " + llvm::Twine(l + 1) + ": " + why);
    };
    llvm::SmallVector<llvm::StringRef> words;
    lines[l].split(words, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    if (words.size() < 3)
      return bad("expected a role, 'scalar' or 'tensor', and an element type");
    ABIValue value;
    if (words[1] != "scalar" && words[1] != "tensor")
      return bad("expected 'scalar' or 'tensor', found '" + words[1] + "'");
    value.tensor = words[1] == "tensor";
    value.element = words[2].str();
    if (!value.tensor && words.size() > 3)
      return bad("a scalar has no dimensions");
    for (llvm::StringRef word : llvm::ArrayRef(words).drop_front(3)) {
      int64_t size;
      if (word.getAsInteger(10, size) || size < 0)
        return bad("'" + word + "' is not a size");
      value.shape.push_back(size);
    }
    if (words[0] == "argument") {
      if (!abi.results.empty())
        return bad("an argument after the results");
      abi.arguments.push_back(std::move(value));
    } else if (words[0] == "result") {
      abi.results.push_back(std::move(value));
    } else {
      return bad("expected 'argument' or 'result', found '" + words[0] + "'");
    }
  }
  return abi;
}
