//===- CostModel.cpp - Analytical cost of tensor ops ------------*- C++ -*-===//
//
// Sorts each op into a cost rule (free, contraction, elementwise, reduction,
// data movement, structured, unknown) and derives its kernels, saved
// activations and result bytes from tensor types. docs/CostModel.md gives the
// reasoning behind each rule.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Analysis/CostModel.h"
#include "FTPipe/Dialect/FTPipe/FTPipeDialect.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::ftpipe;

/// Bytes of one element, or nullopt for types of unknown size.
static std::optional<int64_t> getElementBytes(Type type) {
  if (auto complex = dyn_cast<ComplexType>(type)) {
    std::optional<int64_t> part = getElementBytes(complex.getElementType());
    return part ? std::optional<int64_t>(2 * *part) : std::nullopt;
  }
  if (type.isIndex())
    return 8;
  if (type.isIntOrFloat())
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  return std::nullopt;
}

/// Bytes of a tensor of `type`, or nullopt (with the reason in `reason`)
/// when they cannot be counted.
static std::optional<int64_t> getCheckedTensorBytes(TensorType type,
                                                    std::string &reason) {
  auto ranked = dyn_cast<RankedTensorType>(type);
  if (!ranked) {
    reason = "an unranked tensor has no size to count";
    return std::nullopt;
  }
  if (!ranked.hasStaticShape()) {
    reason = "a dynamic dimension ('?') has no size to count";
    return std::nullopt;
  }
  std::optional<int64_t> bytes = getElementBytes(ranked.getElementType());
  if (!bytes) {
    llvm::raw_string_ostream(reason)
        << "element type '" << ranked.getElementType() << "' has no known size";
    return std::nullopt;
  }
  for (int64_t dim : ranked.getShape()) {
    if (dim != 0 && *bytes > kMaxTensorBytes / dim) {
      reason = "the tensor is larger than 16 TiB";
      return std::nullopt;
    }
    *bytes *= dim;
  }
  return bytes;
}

std::string mlir::ftpipe::getUnsizedTypeReason(Type type) {
  std::string reason;
  if (auto tensor = dyn_cast<TensorType>(type))
    (void)getCheckedTensorBytes(tensor, reason);
  return reason;
}

int64_t mlir::ftpipe::getTypeBytes(Type type) {
  auto tensor = dyn_cast<TensorType>(type);
  std::string reason;
  return tensor ? getCheckedTensorBytes(tensor, reason).value_or(0) : 0;
}

/// Number of elements of a tensor type (0 for other types; the types that
/// getUnsizedTypeReason refuses never reach the cost rules).
static int64_t getNumElements(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || getTypeBytes(type) == 0)
    return 0;
  return shaped.getNumElements();
}

static bool isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

double OpCostEstimate::forwardMs(const partition::Device &device) const {
  double ms = 0.0;
  for (const Kernel &kernel : forward)
    ms += device.rooflineMs(kernel.flops, kernel.bytes);
  return ms;
}

double OpCostEstimate::backwardMs(const partition::Device &device) const {
  double ms = 0.0;
  for (const Kernel &kernel : backward)
    ms += device.rooflineMs(kernel.flops, kernel.bytes);
  return ms;
}

double OpCostEstimate::backwardWeightMs(const partition::Device &device) const {
  double ms = 0.0;
  for (const Kernel &kernel : backward)
    ms += kernel.weightShare * device.rooflineMs(kernel.flops, kernel.bytes);
  return ms;
}

//===----------------------------------------------------------------------===//
// Classification
//===----------------------------------------------------------------------===//

/// Views, constants and metadata: no kernel runs.
static const llvm::StringSet<> kFreeOps = {"tosa.reshape",
                                           "tosa.const",
                                           "tosa.identity",
                                           "tensor.empty",
                                           "tensor.collapse_shape",
                                           "tensor.expand_shape",
                                           "tensor.cast",
                                           "tensor.extract",
                                           "tensor.dim",
                                           "tensor.bitcast",
                                           "tensor.reshape",
                                           "tensor.rank",
                                           "tensor.from_elements"};

static const llvm::StringSet<> kContractionOps = {
    "tosa.matmul", "tosa.fully_connected",  "tosa.conv2d",
    "tosa.conv3d", "tosa.depthwise_conv2d", "tosa.transpose_conv2d"};

static const llvm::StringSet<> kReductionOps = {
    "tosa.reduce_sum", "tosa.reduce_max", "tosa.reduce_min", "tosa.reduce_prod",
    "tosa.reduce_all", "tosa.reduce_any", "tosa.argmax"};

/// Reductions whose backward needs the input (where the extreme was, or the
/// other factors).
static const llvm::StringSet<> kReductionsSavingInput = {
    "tosa.reduce_max", "tosa.reduce_min", "tosa.reduce_prod", "tosa.argmax"};

static const llvm::StringSet<> kDataMovementOps = {
    "tosa.transpose",      "tosa.slice",
    "tosa.concat",         "tosa.pad",
    "tosa.tile",           "tosa.reverse",
    "tosa.gather",         "tosa.scatter",
    "tosa.resize",         "tensor.extract_slice",
    "tensor.insert_slice", "tensor.pad",
    "tensor.concat",       "tensor.gather",
    "tensor.scatter",      "tensor.generate",
    "tensor.splat"};

/// Elementwise ops whose gradient needs none of their inputs.
static const llvm::StringSet<> kLinearElementwiseOps = {
    "tosa.add",   "tosa.sub",   "tosa.negate", "tosa.cast",   "arith.addf",
    "arith.subf", "arith.negf", "arith.extf",  "arith.truncf"};

static const llvm::StringSet<> kTosaElementwiseOps = {
    "tosa.add",
    "tosa.sub",
    "tosa.mul",
    "tosa.div",
    "tosa.int_div",
    "tosa.pow",
    "tosa.maximum",
    "tosa.minimum",
    "tosa.abs",
    "tosa.exp",
    "tosa.log",
    "tosa.negate",
    "tosa.reciprocal",
    "tosa.rsqrt",
    "tosa.sigmoid",
    "tosa.tanh",
    "tosa.erf",
    "tosa.cast",
    "tosa.clamp",
    "tosa.select",
    "tosa.equal",
    "tosa.greater",
    "tosa.greater_equal",
    "tosa.logical_and",
    "tosa.logical_or",
    "tosa.logical_xor",
    "tosa.logical_not",
    "tosa.bitwise_and",
    "tosa.bitwise_or",
    "tosa.bitwise_xor",
    "tosa.bitwise_not",
    "tosa.floor",
    "tosa.ceil",
    "tosa.table",
    "tosa.arithmetic_right_shift",
    "tosa.logical_left_shift",
    "tosa.logical_right_shift",
    "tosa.clz",
    "tosa.rescale",
    "tosa.sin",
    "tosa.cos",
    "tosa.apply_scale"};

static CostRule classify(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (op->hasTrait<OpTrait::ConstantLike>() || kFreeOps.contains(name) ||
      llvm::none_of(op->getResultTypes(),
                    [](Type type) { return isa<RankedTensorType>(type); }))
    return CostRule::Free;
  if (kContractionOps.contains(name) ||
      isa<linalg::ContractionOpInterface, linalg::ConvolutionOpInterface>(op))
    return CostRule::Contraction;
  if (kReductionOps.contains(name) || isa<linalg::ReduceOp>(op))
    return CostRule::Reduction;
  if (kDataMovementOps.contains(name) ||
      isa<linalg::TransposeOp, linalg::BroadcastOp, linalg::CopyOp,
          linalg::FillOp>(op))
    return CostRule::DataMovement;
  if (kTosaElementwiseOps.contains(name) ||
      op->hasTrait<OpTrait::Elementwise>() ||
      isa<linalg::ElemwiseUnaryOp, linalg::ElemwiseBinaryOp>(op))
    return CostRule::Elementwise;
  if (isa<linalg::LinalgOp>(op))
    return CostRule::Structured;
  return CostRule::Unknown;
}

//===----------------------------------------------------------------------===//
// Rules
//===----------------------------------------------------------------------===//

namespace {
/// Byte totals of an op's operands and results.
struct Sizes {
  int64_t in = 0;       // all operands
  int64_t out = 0;      // all tensor results
  int64_t gradIn = 0;   // operands that receive a gradient
  int64_t paramGradIn = 0; // of those, parameters
  int64_t savedAll = 0; // float operands that are not parameters
  int64_t intIn = 0;    // integer operands (indices, masks)
};
} // namespace

static Sizes measure(Operation *op, ArrayRef<OperandInfo> operands) {
  Sizes sizes;
  for (auto [value, info] : llvm::zip(op->getOperands(), operands)) {
    int64_t bytes = getTypeBytes(value.getType());
    sizes.in += bytes;
    if (info.needsGrad)
      sizes.gradIn += bytes;
    if (info.needsGrad && info.isParam)
      sizes.paramGradIn += bytes;
    if (isFloatTensor(value.getType())) {
      // Parameters are kept anyway; constants and fresh buffers (linalg
      // `outs` from tensor.empty) hold nothing worth saving.
      Operation *producer = value.getDefiningOp();
      bool holdsData =
          !producer || (!producer->hasTrait<OpTrait::ConstantLike>() &&
                        producer->getName().getStringRef() != "tensor.empty");
      if (!info.isParam && holdsData)
        sizes.savedAll += bytes;
    } else {
      sizes.intIn += bytes;
    }
  }
  for (Type type : op->getResultTypes())
    sizes.out += getTypeBytes(type);
  return sizes;
}

/// FLOPs of a contraction: 2 x multiply-accumulates.
static double contractionFlops(Operation *op) {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    double iterations = 1.0;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      iterations *= ShapedType::isDynamic(range) ? 1.0 : double(range);
    return 2.0 * iterations;
  }
  Type resultType = op->getResult(0).getType();
  double outElements = double(getNumElements(resultType));
  StringRef name = op->getName().getStringRef();
  if (name == "tosa.matmul") {
    // [N, H, C] x [N, C, W]: C multiply-adds per output element.
    auto lhs = cast<RankedTensorType>(op->getOperand(0).getType());
    return 2.0 * outElements * double(lhs.getShape().back());
  }
  // fully_connected and convolutions: each output element takes the weight
  // elements of its output channel. Weights are [OC, ...] except depthwise
  // ones, [KH, KW, C, M] with C x M output channels.
  auto weight = cast<RankedTensorType>(op->getOperand(1).getType());
  int64_t outChannels =
      name == "tosa.depthwise_conv2d"
          ? cast<RankedTensorType>(resultType).getShape().back()
          : weight.getShape().front();
  double perOutput = double(getNumElements(weight)) /
                     double(std::max<int64_t>(1, outChannels));
  return 2.0 * outElements * perOutput;
}

/// Operations per iteration of a structured op's body (yield excluded).
static double bodyOpsPerIteration(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body)
    return 1.0;
  return std::max<double>(1.0, double(body->getOperations().size()) - 1.0);
}

// The CPU and GPU lowerings (docs/Compile.md, step 4) drop the unit
// dimensions, so the transpose becomes the layout in which BLAS reads the
// weight, and the product that makes the weight's gradient writes it
// transposed.
bool mlir::ftpipe::isFoldedWeightTranspose(Operation *op) {
  if (op->getName().getStringRef() != "tosa.transpose" ||
      op->getNumOperands() != 2)
    return false;
  auto arg = dyn_cast<BlockArgument>(op->getOperand(0));
  auto func = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                  : FunctionOpInterface();
  if (!func ||
      !func.getArgAttr(arg.getArgNumber(), FTPipeDialect::kParamAttrName))
    return false;
  auto type = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  DenseIntElementsAttr perm;
  if (!type || type.getRank() != 2 ||
      !matchPattern(op->getOperand(1), m_Constant(&perm)) ||
      perm.getNumElements() != 2 || perm.getValues<APInt>()[0] != 1 ||
      perm.getValues<APInt>()[1] != 0)
    return false;
  // The readers: reshapes to [1, rows, cols] of the transposed matrix (one
  // batch of it), and matrix products of such a reshape, in the same block
  // (fusion works within one).
  auto transposed = cast<RankedTensorType>(op->getResult(0).getType());
  SmallVector<int64_t> batched = {1, transposed.getDimSize(0),
                                  transposed.getDimSize(1)};
  SmallVector<Value> work = {op->getResult(0)};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (value.use_empty())
      return false;
    for (Operation *user : value.getUsers()) {
      if (user->getBlock() != op->getBlock())
        return false;
      StringRef name = user->getName().getStringRef();
      auto shape = cast<ShapedType>(value.getType()).getShape();
      if (name == "tosa.matmul" && llvm::equal(shape, batched))
        continue;
      if (name != "tosa.reshape" ||
          !llvm::equal(
              cast<ShapedType>(user->getResult(0).getType()).getShape(),
              batched))
        return false;
      work.push_back(user->getResult(0));
    }
  }
  return true;
}

OpCostEstimate mlir::ftpipe::estimateOpCost(Operation *op,
                                            ArrayRef<OperandInfo> operands) {
  assert(operands.size() == op->getNumOperands() && "one info per operand");
  OpCostEstimate cost;
  cost.rule = classify(op);
  Sizes sizes = measure(op, operands);
  cost.outBytes = sizes.out;
  for (auto [value, info] : llvm::zip(op->getOperands(), operands))
    if (info.isParam && isa<BlockArgument>(value))
      cost.paramBytes += getTypeBytes(value.getType());

  if (cost.rule == CostRule::Free)
    return cost;
  if (isFoldedWeightTranspose(op)) {
    cost.rule = CostRule::Free;
    return cost;
  }

  bool anyGrad =
      llvm::any_of(operands, [](const OperandInfo &i) { return i.needsGrad; });
  bool floatResult = llvm::any_of(op->getResultTypes(), isFloatTensor);
  bool hasBackward = anyGrad && floatResult;
  double outElements = 0.0;
  for (Type type : op->getResultTypes())
    outElements += double(getNumElements(type));

  switch (cost.rule) {
  case CostRule::Contraction: {
    double flops = contractionFlops(op);
    cost.forward.push_back({flops, double(sizes.in + sizes.out)});
    if (!hasBackward)
      break;
    // One product per operand that needs a gradient, each as large as the
    // forward; each keeps the other operand (unless it is a parameter).
    for (auto [index, info] : llvm::enumerate(operands)) {
      if (!info.needsGrad || index > 1)
        continue;
      cost.backward.push_back(
          {flops, double(sizes.in + sizes.out), info.isParam ? 1.0 : 0.0});
      const OperandInfo &other = operands[1 - index];
      if (!other.isParam)
        cost.actBytes += getTypeBytes(op->getOperand(1 - index).getType());
    }
    break;
  }
  case CostRule::Elementwise:
  case CostRule::Structured: {
    double flops = outElements;
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      double iterations = 1.0;
      for (int64_t range : linalgOp.getStaticLoopRanges())
        iterations *= ShapedType::isDynamic(range) ? 1.0 : double(range);
      flops = iterations * bodyOpsPerIteration(linalgOp);
    }
    cost.forward.push_back({flops, double(sizes.in + sizes.out)});
    if (!hasBackward)
      break;
    bool linear = kLinearElementwiseOps.contains(op->getName().getStringRef());
    cost.actBytes = linear ? 0 : sizes.savedAll;
    // Read the incoming gradient and what was saved, write one gradient per
    // operand that needs it.
    cost.backward.push_back(
        {flops, double(sizes.out + cost.actBytes + sizes.gradIn)});
    break;
  }
  case CostRule::Reduction: {
    double inElements = 0.0;
    for (Value operand : op->getOperands())
      inElements += double(getNumElements(operand.getType()));
    cost.forward.push_back({inElements, double(sizes.in + sizes.out)});
    if (!hasBackward)
      break;
    if (kReductionsSavingInput.contains(op->getName().getStringRef()))
      cost.actBytes = sizes.savedAll + sizes.out;
    // Broadcast the gradient back to the input shape.
    cost.backward.push_back(
        {inElements, double(sizes.out + sizes.gradIn + cost.actBytes)});
    break;
  }
  case CostRule::DataMovement: {
    // Every output element is written once and read once from an input.
    double moved = double(sizes.out + std::min(sizes.in, sizes.out));
    cost.forward.push_back({0.0, moved});
    if (!hasBackward)
      break;
    // The inverse movement; a gather's backward also zero-fills the gradient
    // of its table before scattering into it, and keeps the indices.
    double backwardBytes = moved;
    StringRef name = op->getName().getStringRef();
    if (name == "tosa.gather" || name == "tensor.gather") {
      if (operands[0].needsGrad)
        backwardBytes += double(getTypeBytes(op->getOperand(0).getType()));
      cost.actBytes = sizes.intIn;
    }
    cost.backward.push_back({0.0, backwardBytes});
    break;
  }
  case CostRule::Unknown: {
    // Memory-bound guess: read the operands, write the results; backward
    // twice that, keeping the operands.
    cost.forward.push_back({0.0, double(sizes.in + sizes.out)});
    if (!hasBackward)
      break;
    cost.actBytes = sizes.savedAll;
    cost.backward.push_back({0.0, 2.0 * double(sizes.in + sizes.out)});
    break;
  }
  case CostRule::Free:
    break;
  }
  // Every other rule runs one backward kernel for all operands' gradients:
  // the parameters' share is that of the gradient bytes it writes.
  if (cost.rule != CostRule::Contraction && sizes.gradIn > 0)
    for (Kernel &kernel : cost.backward)
      kernel.weightShare = double(sizes.paramGradIn) / double(sizes.gradIn);
  return cost;
}
