//===- FTPipeOps.cpp - ftpipe operations ------------------------*- C++ -*-===//
//
// Custom assembly and verifiers of `ftpipe.stage`, `ftpipe.yield`,
// `ftpipe.send` and `ftpipe.recv`.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
using namespace mlir::ftpipe;

#define GET_OP_CLASSES
#include "FTPipe/Dialect/FTPipe/FTPipeOps.cpp.inc"

//===----------------------------------------------------------------------===//
// StageOp
//===----------------------------------------------------------------------===//

// Custom form:
//   %r = ftpipe.stage ID on DEVICE (%arg = %operand : type, ...) -> (types)
//        attributes {...} { body }
ParseResult StageOp::parse(OpAsmParser &parser, OperationState &result) {
  int64_t id, device;
  Builder &builder = parser.getBuilder();
  if (parser.parseInteger(id) || parser.parseKeyword("on") ||
      parser.parseInteger(device))
    return failure();
  result.addAttribute(getIdAttrName(result.name),
                      builder.getI64IntegerAttr(id));
  result.addAttribute(getDeviceAttrName(result.name),
                      builder.getI64IntegerAttr(device));

  SmallVector<OpAsmParser::Argument> arguments;
  SmallVector<OpAsmParser::UnresolvedOperand> operands;
  SmallVector<Type> operandTypes;
  auto parseBinding = [&]() -> ParseResult {
    OpAsmParser::Argument argument;
    OpAsmParser::UnresolvedOperand operand;
    if (parser.parseArgument(argument) || parser.parseEqual() ||
        parser.parseOperand(operand) || parser.parseColonType(argument.type))
      return failure();
    arguments.push_back(argument);
    operands.push_back(operand);
    operandTypes.push_back(argument.type);
    return success();
  };
  if (parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren,
                                     parseBinding) ||
      parser.resolveOperands(operands, operandTypes,
                             parser.getCurrentLocation(), result.operands))
    return failure();

  auto parseResultType = [&]() -> ParseResult {
    Type type;
    if (parser.parseType(type))
      return failure();
    result.types.push_back(type);
    return success();
  };
  if (parser.parseArrow() ||
      parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Paren,
                                     parseResultType) ||
      parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  return parser.parseRegion(*result.addRegion(), arguments);
}

void StageOp::print(OpAsmPrinter &p) {
  p << ' ' << getId() << " on " << getDevice() << " (";
  llvm::interleaveComma(
      llvm::zip(getBody().getArguments(), getInputs()), p, [&](auto binding) {
        auto [argument, operand] = binding;
        p << argument << " = " << operand << " : " << operand.getType();
      });
  p << ") -> (";
  llvm::interleaveComma(getResultTypes(), p);
  p << ")";
  p.printOptionalAttrDictWithKeyword((*this)->getAttrs(),
                                     {getIdAttrName(), getDeviceAttrName()});
  p << ' ';
  p.printRegion(getBody(), /*printEntryBlockArgs=*/false);
}

YieldOp StageOp::getYield() {
  return cast<YieldOp>(getBody().front().getTerminator());
}

LogicalResult StageOp::verify() {
  // Ids are unique among the stages of one block; report the later one.
  for (Operation *other = (*this)->getPrevNode(); other;
       other = other->getPrevNode())
    if (auto stage = dyn_cast<StageOp>(other);
        stage && stage.getId() == getId())
      return emitOpError() << "id " << getId()
                           << " is already used by an earlier stage";
  return success();
}

LogicalResult StageOp::verifyRegions() {
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError() << "has " << getInputs().size()
                         << " operands but its body takes "
                         << body.getNumArguments() << " arguments";
  for (auto [index, argument, operand] :
       llvm::enumerate(body.getArguments(), getInputs()))
    if (argument.getType() != operand.getType())
      return emitOpError() << "body argument " << index << " has type "
                           << argument.getType() << " but operand " << index
                           << " has type " << operand.getType();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "body must end with 'ftpipe.yield'";
  if (yield.getValues().size() != getNumResults())
    return yield.emitOpError()
           << "yields " << yield.getValues().size() << " values but the stage "
           << "has " << getNumResults() << " results";
  for (auto [index, value, result] :
       llvm::enumerate(yield.getValues(), getResults()))
    if (value.getType() != result.getType())
      return yield.emitOpError() << "value " << index << " has type "
                                 << value.getType() << " but stage result "
                                 << index << " has type " << result.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// SendOp / RecvOp
//===----------------------------------------------------------------------===//

/// Rejects a transfer whose peer is not a device of the module's plan. A
/// peer equal to the device the op runs on is a local hand-off between two
/// stages of one device (docs/StagePrograms.md).
static LogicalResult verifyPeer(Operation *op, int64_t peer) {
  auto module = op->getParentOfType<ModuleOp>();
  if (!module)
    return success();
  auto plan = module->getAttrOfType<PlanAttr>(FTPipeDialect::kPlanAttrName);
  if (!plan)
    return success();
  int64_t numDevices = plan.getMemoryBytes().size();
  if (peer >= numDevices)
    return op->emitOpError() << "peer " << peer
                             << " is not a device of the plan, which has "
                             << numDevices << " devices";
  return success();
}

LogicalResult SendOp::verify() { return verifyPeer(*this, getPeer()); }

LogicalResult RecvOp::verify() { return verifyPeer(*this, getPeer()); }
