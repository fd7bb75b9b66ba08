//===- ActivityTest.cpp - Which values carry a gradient -------------------===//
//
// The activity analysis (Activity in ReverseMode.h) on its own: a value is
// active when it depends on a source, a sink depends on it, and it has a
// float type. Each test parses one function whose ops carry a `name`
// attribute and checks the named results; the sources are the arguments
// marked `src`, the sinks the returned values.
//
//===----------------------------------------------------------------------===//

#include "RuleTestUtil.h"

#include "FTPipe/AutoDiff/ReverseMode.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::ftpipe::autodiff;
using namespace mlir::ftpipe::autodiff::test;

namespace {

/// A parsed function and the activity of its body.
class ActivityTest : public ::testing::Test {
protected:
  void SetUp() override { initRuleContext(context); }

  /// Parses `source` (one func.func) and analyses its block.
  void analyse(StringRef source) {
    module = parseSourceString<ModuleOp>(source, ParserConfig(&context));
    ASSERT_TRUE(module);
    auto func = *module->getOps<func::FuncOp>().begin();
    Block &block = func.getBody().front();
    SmallVector<Value> sources, sinks;
    for (BlockArgument arg : block.getArguments())
      if (func.getArgAttr(arg.getArgNumber(), "test.src"))
        sources.push_back(arg);
    for (Value v : block.getTerminator()->getOperands())
      sinks.push_back(v);
    activity.emplace(block, sources, sinks);
  }

  /// The first result of the op named `name`.
  Value value(StringRef name) {
    Value found;
    module->walk([&](Operation *op) {
      auto attr = op->getAttrOfType<StringAttr>("name");
      if (attr && attr.getValue() == name)
        found = op->getResult(0);
    });
    EXPECT_TRUE(found) << "no op named " << name.str();
    return found;
  }

  bool active(StringRef name) { return activity->isActive(value(name)); }
  bool varied(StringRef name) { return activity->isVaried(value(name)); }
  bool useful(StringRef name) { return activity->isUseful(value(name)); }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  std::optional<Activity> activity;
};

TEST_F(ActivityTest, ChainFromSourceToSinkIsActive) {
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}) -> tensor<4xf32> {
      %e = tosa.exp %w {name = "exp"} : (tensor<4xf32>) -> tensor<4xf32>
      %t = tosa.tanh %e {name = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
      return %t : tensor<4xf32>
    })mlir");
  EXPECT_TRUE(active("exp"));
  EXPECT_TRUE(active("tanh"));
  auto func = *module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(activity->isActive(func.getArgument(0)));
}

TEST_F(ActivityTest, ConstantsAndInputsWithoutGradientAreInactive) {
  // %x is an input that is no source: useful but never varied, so neither it
  // nor the constant nor their product needs a gradient; the sum does.
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}, %x: tensor<4xf32>) -> tensor<4xf32> {
      %c = "tosa.const"() {name = "const", value = dense<2.0> : tensor<4xf32>} : () -> tensor<4xf32>
      %m = tosa.mul %x, %c {name = "scaled", shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %s = tosa.add %w, %m {name = "sum"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })mlir");
  EXPECT_FALSE(active("const"));
  EXPECT_TRUE(useful("const"));
  EXPECT_FALSE(varied("const"));
  EXPECT_FALSE(active("scaled"));
  EXPECT_TRUE(useful("scaled"));
  EXPECT_TRUE(active("sum"));
  auto func = *module->getOps<func::FuncOp>().begin();
  EXPECT_FALSE(activity->isActive(func.getArgument(1)));
}

TEST_F(ActivityTest, IntegerValuesAreNeverActive) {
  // The integers reach the sink through a cast and a source feeds nothing
  // but the float path: the integer ops and the cast of an integer are
  // inactive, the product is active.
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}, %i: tensor<4xi32> {test.src}) -> tensor<4xf32> {
      %j = tosa.bitwise_not %i {name = "not"} : (tensor<4xi32>) -> tensor<4xi32>
      %c = tosa.cast %j {name = "cast"} : (tensor<4xi32>) -> tensor<4xf32>
      %m = tosa.mul %w, %c {name = "product", shift = 0 : i8} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %m : tensor<4xf32>
    })mlir");
  EXPECT_FALSE(active("not"));
  EXPECT_FALSE(varied("not"));
  EXPECT_FALSE(active("cast"));
  EXPECT_FALSE(varied("cast"));
  EXPECT_TRUE(useful("cast"));
  EXPECT_TRUE(active("product"));
  auto func = *module->getOps<func::FuncOp>().begin();
  EXPECT_FALSE(activity->isActive(func.getArgument(1)));
}

TEST_F(ActivityTest, ComparisonsOfActiveValuesAreInactive) {
  // A mask computed from an active value is varied in principle but has no
  // float type, so it is not active; the select it drives is.
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}, %x: tensor<4xf32>) -> tensor<4xf32> {
      %p = tosa.greater %w, %x {name = "mask"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
      %s = tosa.select %p, %w, %x {name = "select"} : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })mlir");
  EXPECT_FALSE(active("mask"));
  EXPECT_FALSE(varied("mask"));
  EXPECT_TRUE(active("select"));
}

TEST_F(ActivityTest, ValuesThatReachNoSinkAreInactive) {
  // %dead depends on the source but nothing returned depends on it.
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}) -> tensor<4xf32> {
      %dead = tosa.exp %w {name = "dead"} : (tensor<4xf32>) -> tensor<4xf32>
      %n = tosa.negate %w {name = "live"} : (tensor<4xf32>) -> tensor<4xf32>
      return %n : tensor<4xf32>
    })mlir");
  EXPECT_TRUE(varied("dead"));
  EXPECT_FALSE(useful("dead"));
  EXPECT_FALSE(active("dead"));
  EXPECT_TRUE(active("live"));
}

TEST_F(ActivityTest, OnlyTheChosenSinksMakeValuesUseful) {
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}) -> (tensor<4xf32>, tensor<4xf32>) {
      %a = tosa.exp %w {name = "a"} : (tensor<4xf32>) -> tensor<4xf32>
      %b = tosa.log %w {name = "b"} : (tensor<4xf32>) -> tensor<4xf32>
      return %a, %b : tensor<4xf32>, tensor<4xf32>
    })mlir");
  EXPECT_TRUE(active("a"));
  EXPECT_TRUE(active("b"));
  // The same block with only the first result as a sink.
  auto func = *module->getOps<func::FuncOp>().begin();
  Block &block = func.getBody().front();
  Activity firstOnly(block, {block.getArgument(0)},
                     {block.getTerminator()->getOperand(0)});
  EXPECT_TRUE(firstOnly.isActive(value("a")));
  EXPECT_FALSE(firstOnly.isActive(value("b")));
  EXPECT_TRUE(firstOnly.isVaried(value("b")));
}

TEST_F(ActivityTest, ValuesReadInsideARegionCountAsOperands) {
  // The body reads %w from outside (not an operand): the generic's result is
  // varied through it, and %w is useful through the generic.
  analyse(R"mlir(
    func.func @f(%w: tensor<4xf32> {test.src}, %x: tensor<4xf32>) -> tensor<4xf32> {
      %e = tensor.empty() {name = "empty"} : tensor<4xf32>
      %y = linalg.generic {name = "gather", indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
      ^bb0(%a: f32, %o: f32):
        %k = linalg.index 0 : index
        %v = tensor.extract %w[%k] : tensor<4xf32>
        %r = arith.mulf %a, %v : f32
        linalg.yield %r : f32
      } -> tensor<4xf32>
      return %y : tensor<4xf32>
    })mlir");
  EXPECT_TRUE(active("gather"));
  EXPECT_FALSE(active("empty"));
  auto func = *module->getOps<func::FuncOp>().begin();
  EXPECT_TRUE(activity->isActive(func.getArgument(0)));
  EXPECT_FALSE(activity->isActive(func.getArgument(1)));
}

TEST_F(ActivityTest, SourcesWithoutAFloatTypeAreIgnored) {
  analyse(R"mlir(
    func.func @f(%i: tensor<4xi32> {test.src}, %x: tensor<4xf32>) -> tensor<4xf32> {
      %c = tosa.cast %i {name = "cast"} : (tensor<4xi32>) -> tensor<4xf32>
      %s = tosa.add %c, %x {name = "sum"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      return %s : tensor<4xf32>
    })mlir");
  EXPECT_FALSE(varied("cast"));
  EXPECT_FALSE(active("sum"));
}

TEST(Differentiable, FloatsAndFloatTensorsOnly) {
  MLIRContext context;
  Builder b(&context);
  EXPECT_TRUE(isDifferentiable(b.getF32Type()));
  EXPECT_TRUE(isDifferentiable(b.getF64Type()));
  EXPECT_TRUE(isDifferentiable(RankedTensorType::get({2}, b.getBF16Type())));
  EXPECT_FALSE(isDifferentiable(b.getI32Type()));
  EXPECT_FALSE(isDifferentiable(b.getIndexType()));
  EXPECT_FALSE(isDifferentiable(RankedTensorType::get({2}, b.getI1Type())));
  EXPECT_FALSE(isDifferentiable(UnrankedTensorType::get(b.getF32Type())));
}

} // namespace
