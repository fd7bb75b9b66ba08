//===- AttributesTest.cpp - ftpipe attribute unit tests ---------*- C++ -*-===//
//
// Builds ftpipe attributes from C++, prints them and parses them back, and
// checks that the checked builders reject bad fields with a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

#include <random>
#include <string>

using namespace mlir;
using namespace mlir::ftpipe;

namespace {

class AttributesTest : public ::testing::Test {
protected:
  AttributesTest() { context.getOrLoadDialect<FTPipeDialect>(); }

  /// Prints `attr` and parses the text back.
  Attribute roundTrip(Attribute attr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    attr.print(os);
    return parseAttribute(os.str(), &context);
  }

  MLIRContext context;
};

TEST_F(AttributesTest, CostRoundTripsEveryField) {
  auto cost =
      CostAttr::get(&context, 0.125, 1.0 / 3.0, 4194304, 65536, 512, 0.25);
  auto parsed = dyn_cast_or_null<CostAttr>(roundTrip(cost));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed, cost);
  EXPECT_EQ(parsed.getBwdMs(), 1.0 / 3.0);
  EXPECT_EQ(parsed.getParamBytes(), 4194304);
  EXPECT_EQ(parsed.getBwdWeightMs(), 0.25);
}

TEST_F(AttributesTest, TimesRoundTripExactly) {
  // Property: any finite non-negative double survives print + parse bit for
  // bit, whatever its magnitude.
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> mantissa(0.0, 10.0);
  std::uniform_int_distribution<int> exponent(-300, 300);
  for (int i = 0; i < 2000; ++i) {
    double value = std::ldexp(mantissa(rng), exponent(rng));
    auto cost = CostAttr::get(&context, value, 0.0, 0, 0, 0, 0.0);
    auto parsed = dyn_cast_or_null<CostAttr>(roundTrip(cost));
    ASSERT_TRUE(parsed) << "value " << value;
    EXPECT_EQ(parsed.getFwdMs(), value);
  }
}

TEST_F(AttributesTest, IntegralTimesPrintAsFloats) {
  std::string text;
  llvm::raw_string_ostream os(text);
  Attribute(CostAttr::get(&context, 3.0, 1e20, 0, 0, 0, 0.0)).print(os);
  // A weight part of 0 is left out.
  EXPECT_EQ(os.str(), "#ftpipe.cost<fwd_ms = 3.0, bwd_ms = 1.0e+20, "
                      "param_bytes = 0, act_bytes = 0, out_bytes = 0>");
}

TEST_F(AttributesTest, HardwareRoundTripsDevicesAndLinks) {
  auto gpu =
      DeviceSpecAttr::get(&context, "gpu", 11000000000, 13.4, 616.0, 5.0, 0);
  auto link = LinkAttr::get(&context, 0, 1, 12.0, 10.0);
  auto hw = HardwareAttr::get(&context, "pair", {gpu, gpu}, {link}, {});
  auto parsed = dyn_cast_or_null<HardwareAttr>(roundTrip(hw));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed, hw);
  ASSERT_EQ(parsed.getDevices().size(), 2u);
  EXPECT_EQ(parsed.getLinks()[0].getGbps(), 12.0);
  EXPECT_TRUE(parsed.getNodeCores().empty());
  // Two processes sharing one core.
  auto shared = HardwareAttr::get(&context, "pair", {gpu, gpu}, {link}, {1});
  auto back = dyn_cast_or_null<HardwareAttr>(roundTrip(shared));
  ASSERT_TRUE(back);
  EXPECT_EQ(back.getNodeCores(), ArrayRef<int64_t>{1});
}

TEST_F(AttributesTest, CheckedBuildersReportBadFields) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  auto loc = UnknownLoc::get(&context);
  auto emit = [&] { return emitError(loc); };
  // Typed arguments: with untyped literals the base class's variadic
  // getChecked would be a better match than the generated one.
  const F64 zeroMs = 0.0;
  const int64_t zeroBytes = 0;

  EXPECT_FALSE(CostAttr::getChecked(emit, &context, F64(-1.0), zeroMs,
                                    zeroBytes, zeroBytes, zeroBytes, zeroMs));
  EXPECT_EQ(message, "'fwd_ms' must be finite and non-negative, got -1.0");
  EXPECT_FALSE(CostAttr::getChecked(emit, &context, zeroMs, F64(1.0), zeroBytes,
                                    zeroBytes, zeroBytes, F64(2.0)));
  EXPECT_EQ(message, "'bwd_weight_ms' (2.0) must not exceed 'bwd_ms' (1.0)");

  EXPECT_FALSE(LinkAttr::getChecked(emit, &context, int64_t(2), int64_t(2),
                                    F64(1.0), zeroMs));
  EXPECT_EQ(message, "link joins device 2 to itself");

  auto gpu = DeviceSpecAttr::get(&context, "gpu", 1, 1.0, 1.0, 0.0, 0);
  auto far = LinkAttr::get(&context, 0, 5, 1.0, 0.0);
  EXPECT_FALSE(HardwareAttr::getChecked(
      emit, &context, StringRef("hw"), ArrayRef<DeviceSpecAttr>{gpu},
      ArrayRef<LinkAttr>{far}, ArrayRef<int64_t>{}));
  EXPECT_EQ(message, "link 0 <-> 5 names a device outside 0..0");
  EXPECT_FALSE(HardwareAttr::getChecked(
      emit, &context, StringRef("hw"), ArrayRef<DeviceSpecAttr>{gpu},
      ArrayRef<LinkAttr>{}, ArrayRef<int64_t>{-1}));
  EXPECT_EQ(message, "hardware 'hw': node_cores must be in [0, 1], got -1");
}

} // namespace

TEST_F(AttributesTest, PlanSaysWhichStagesRecompute) {
  SmallVector<int64_t> stageDevice = {0, 1, 0};
  SmallVector<int64_t> memory = {10, 20};
  auto perStage = PlanAttr::get(&context, "auto", stageDevice, 1.5, memory,
                                0.25, ArrayRef<bool>{true, false, false},
                                /*replicas=*/ArrayRef<int64_t>{});
  auto parsed = dyn_cast_or_null<PlanAttr>(roundTrip(perStage));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed, perStage);
  EXPECT_TRUE(parsed.recomputes(0));
  EXPECT_FALSE(parsed.recomputes(1));
  EXPECT_FALSE(parsed.recomputes(2));
  // Without a list, every stage recomputes (FTPipe's setup).
  auto all = PlanAttr::get(&context, "seq-dp", stageDevice, 1.5, memory, 0.0,
                           ArrayRef<bool>{}, /*replicas=*/ArrayRef<int64_t>{});
  auto parsedAll = dyn_cast_or_null<PlanAttr>(roundTrip(all));
  ASSERT_TRUE(parsedAll);
  EXPECT_TRUE(parsedAll.getRecompute().empty());
  for (int64_t stage = 0; stage < 3; ++stage)
    EXPECT_TRUE(parsedAll.recomputes(stage));
}
