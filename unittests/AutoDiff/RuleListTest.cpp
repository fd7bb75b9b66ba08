//===- RuleListTest.cpp - A lit case for every registered rule ------------===//
//
// test/AutoDiff holds one lit case per differentiation rule, each naming
// its op on a `// Rule: <op>` line. This test reads those lines and compares
// them with the ops that have a rule registered (read from the interfaces,
// so a rule added without a lit case, or a case left after its rule went,
// fails here).
//
//===----------------------------------------------------------------------===//

#include "RuleTestUtil.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "gtest/gtest.h"

#include <map>

using namespace mlir;
using namespace mlir::ftpipe::autodiff::test;

namespace {

/// Op name -> number of `// Rule:` cases in the .mlir files of `dir`.
std::map<std::string, int> litRuleCases(const std::string &dir) {
  std::map<std::string, int> cases;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    if (llvm::sys::path::extension(it->path()) != ".mlir")
      continue;
    auto buffer = llvm::MemoryBuffer::getFile(it->path());
    if (!buffer) {
      ADD_FAILURE() << "cannot read " << it->path();
      continue;
    }
    llvm::SmallVector<llvm::StringRef> lines;
    (*buffer)->getBuffer().split(lines, '\n');
    for (llvm::StringRef line : lines)
      if (line.consume_front("// Rule: "))
        ++cases[line.trim().str()];
  }
  EXPECT_FALSE(ec) << dir << ": " << ec.message();
  return cases;
}

TEST(RuleList, EveryRuleHasOneLitCase) {
  MLIRContext context;
  initRuleContext(context);
  std::set<std::string> rules = opsWithRules(context);
  std::map<std::string, int> cases =
      litRuleCases(std::string(FTPIPE_SOURCE_DIR) + "/test/AutoDiff");
  EXPECT_GT(rules.size(), 80u);
  for (const std::string &op : rules)
    EXPECT_EQ(cases[op], 1)
        << "lit cases in test/AutoDiff for the rule of " << op;
  for (const auto &[op, count] : cases)
    EXPECT_TRUE(rules.count(op)) << op << " has a lit case but no rule";
}

} // namespace
