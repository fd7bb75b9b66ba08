//===- FTPipeDialect.cpp - The ftpipe dialect -------------------*- C++ -*-===//
//
// Registers the dialect's attributes and ops and verifies the discardable
// `ftpipe.*` attributes that other passes attach to foreign ops, functions
// and function arguments.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"
#include "FTPipe/Dialect/FTPipe/StageAttrs.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

using namespace mlir;
using namespace mlir::ftpipe;

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.cpp.inc"

void FTPipeDialect::initialize() {
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "FTPipe/Dialect/FTPipe/FTPipeOps.cpp.inc"
      >();
}

void mlir::ftpipe::registerFTPipeDialect(DialectRegistry &registry) {
  registry.insert<FTPipeDialect>();
}

/// Checks that `attr` is a non-negative integer attribute.
static LogicalResult verifyIdAttr(Operation *op, NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto intAttr = dyn_cast<IntegerAttr>(attr.getValue());
  if (!intAttr || !intAttr.getType().isSignlessInteger())
    return op->emitError() << "'" << name << "' must be an integer, got "
                           << attr.getValue();
  if (intAttr.getValue().isNegative())
    return op->emitError() << "'" << name << "' must be non-negative, got "
                           << intAttr.getValue().getSExtValue();
  return success();
}

/// The kinds of the stage-program attributes (StageAttrs.h): checked where
/// they appear, on ops or on function arguments.
static std::optional<LogicalResult>
verifyStageAttr(Operation *op, NamedAttribute attr, bool onArgument) {
  namespace sa = stage_attrs;
  StringRef name = attr.getName().getValue();
  Attribute value = attr.getValue();
  auto expect = [&](bool ok, StringRef what) -> LogicalResult {
    if (ok)
      return success();
    return op->emitError() << "'" << name << "' must be " << what << ", got "
                           << value;
  };
  if (onArgument) {
    if (name == sa::kOwner || name == sa::kFromStage || name == sa::kSaved ||
        name == sa::kWeightSaved || name == sa::kAdjointArgument)
      return expect(isa<IntegerAttr>(value), "an integer");
    if (name == sa::kInput)
      return expect(isa<StringAttr>(value), "a string");
    if (name == sa::kActive || name == sa::kMicrobatch)
      return expect(isa<UnitAttr>(value), "a unit attribute");
    return std::nullopt;
  }
  if (name == sa::kStageOrder)
    return expect(isa<DenseI64ArrayAttr>(value), "an array of stage ids");
  if (name == sa::kRecompute)
    return expect(isa<BoolAttr>(value), "a boolean");
  if (name == sa::kNumSaved)
    return expect(isa<IntegerAttr>(value), "an integer");
  if (name == sa::kEntry)
    return expect(isa<StringAttr>(value), "a string");
  return std::nullopt;
}

LogicalResult FTPipeDialect::verifyOperationAttribute(Operation *op,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kCostAttrName) {
    if (!isa<CostAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a #ftpipe.cost, got "
                             << attr.getValue();
    return success();
  }
  if (name == kBlockAttrName || name == kStageAttrName ||
      name == kDeviceAttrName)
    return verifyIdAttr(op, attr);
  if (name == kHardwareAttrName || name == kPlanAttrName ||
      name == TrainingAttr::kName) {
    if (!isa<ModuleOp>(op))
      return op->emitError()
             << "'" << name << "' belongs on a builtin.module, not on '"
             << op->getName() << "'";
    if (name == kHardwareAttrName && !isa<HardwareAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' must be a #ftpipe.hardware, got "
             << attr.getValue();
    if (name == TrainingAttr::kName && !isa<TrainingAttr>(attr.getValue()))
      return op->emitError()
             << "'" << name << "' must be a #ftpipe.training, got "
             << attr.getValue();
    if (name == kPlanAttrName) {
      auto plan = dyn_cast<PlanAttr>(attr.getValue());
      if (!plan)
        return op->emitError()
               << "'" << name << "' must be a #ftpipe.plan, got "
               << attr.getValue();
      auto hw = op->getAttrOfType<HardwareAttr>(kHardwareAttrName);
      if (hw) {
        int64_t numDevices = hw.getDevices().size();
        for (auto [stage, device] : llvm::enumerate(plan.getStageDevice()))
          if (device >= numDevices)
            return op->emitError()
                   << "plan puts stage " << stage << " on device " << device
                   << " but the hardware has " << numDevices << " devices";
        if (static_cast<int64_t>(plan.getMemoryBytes().size()) != numDevices)
          return op->emitError()
                 << "plan gives memory for " << plan.getMemoryBytes().size()
                 << " devices but the hardware has " << numDevices;
      }
    }
    return success();
  }
  if (name == kReplicateAttrName || name == kForwardAttrName ||
      name == kIndexGuardAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' must be a unit attribute";
    return success();
  }
  if (name == kPaddingRowAttrName) {
    auto row = dyn_cast<IntegerAttr>(attr.getValue());
    if (op->getName().getStringRef() != "tosa.gather" ||
        op->getNumOperands() != 2)
      return op->emitError()
             << "'" << name << "' belongs on a tosa.gather, not on '"
             << op->getName() << "'";
    auto values = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
    if (!row || !values || values.getRank() != 3 ||
        row.getValue().getSExtValue() < 0 ||
        (!values.isDynamicDim(1) &&
         row.getValue().getSExtValue() >= values.getDimSize(1)))
      return op->emitError() << "'" << name
                             << "' must be an integer row of the gathered "
                                "values, got "
                             << attr.getValue();
    return success();
  }
  if (name == kParamAttrName || name == kNameAttrName ||
      name == kFrozenAttrName)
    return op->emitError() << "'" << name
                           << "' belongs on a function argument, not on '"
                           << op->getName() << "'";
  if (std::optional<LogicalResult> result =
          verifyStageAttr(op, attr, /*onArgument=*/false))
    return *result;
  return op->emitError() << "unknown ftpipe attribute '" << name << "'";
}

LogicalResult FTPipeDialect::verifyRegionArgAttribute(Operation *op,
                                                      unsigned regionIndex,
                                                      unsigned argIndex,
                                                      NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  if (name == kParamAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' on argument " << argIndex
                             << " must be a unit attribute";
    // A function declaration has no body: take the type from its signature.
    Type type;
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      type = function.getArgumentTypes()[argIndex];
    else if (!op->getRegion(regionIndex).empty())
      type = op->getRegion(regionIndex).getArgument(argIndex).getType();
    else
      return success();
    auto tensorType = dyn_cast<RankedTensorType>(type);
    if (!tensorType || !isa<FloatType>(tensorType.getElementType()))
      return op->emitError()
             << "parameter argument " << argIndex
             << " must be a ranked tensor of floats, got " << type;
    return success();
  }
  if (name == kNameAttrName) {
    auto str = dyn_cast<StringAttr>(attr.getValue());
    if (!str || str.getValue().empty())
      return op->emitError() << "'" << name << "' on argument " << argIndex
                             << " must be a non-empty string";
    return success();
  }
  if (name == kFrozenAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' on argument " << argIndex
                             << " must be a unit attribute";
    // Only a parameter can be frozen.
    auto function = dyn_cast<FunctionOpInterface>(op);
    if (function && !function.getArgAttr(argIndex, kParamAttrName))
      return op->emitError() << "'" << name << "' on argument " << argIndex
                             << " that is not a 'ftpipe.param'";
    return success();
  }
  if (std::optional<LogicalResult> result =
          verifyStageAttr(op, attr, /*onArgument=*/true))
    return *result;
  return op->emitError() << "unknown ftpipe argument attribute '" << name
                         << "'";
}
