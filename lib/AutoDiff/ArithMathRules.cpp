//===- ArithMathRules.cpp - Tangents of scalar arith and math ops ---------===//
//
// Forward-mode derivatives of the scalar ops found in `linalg` bodies. The
// generic linalg rule (LinalgRules.cpp) differentiates a body by pushing one
// input's tangent through its ops with these rules. A null tangent is zero;
// comparisons and conversions to integers have a zero tangent.
//
//===----------------------------------------------------------------------===//

#include "FTPipe/AutoDiff/AutoDiffInterfaces.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/DialectRegistry.h"

#include <cmath>

using namespace mlir;
using namespace mlir::ftpipe;
using namespace mlir::ftpipe::autodiff;

namespace {
/// Helpers that skip zero (null) tangents.
struct Tangents {
  OpBuilder &b;
  Location loc;
  Type type;

  Value constant(double value) {
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
  }
  Value mul(Value lhs, Value rhs) {
    if (!lhs || !rhs)
      return Value();
    return b.create<arith::MulFOp>(loc, lhs, rhs);
  }
  Value add(Value lhs, Value rhs) {
    if (!lhs)
      return rhs;
    if (!rhs)
      return lhs;
    return b.create<arith::AddFOp>(loc, lhs, rhs);
  }
  Value neg(Value value) {
    return value ? b.create<arith::NegFOp>(loc, value) : Value();
  }
  Value select(Value cond, Value onTrue, Value onFalse) {
    if (!onTrue && !onFalse)
      return Value();
    return b.create<arith::SelectOp>(loc, cond, onTrue ? onTrue : constant(0),
                                     onFalse ? onFalse : constant(0));
  }
};

/// A rule as a function of (op, helpers, operand tangents).
template <typename OpTy>
using TangentFn = Value (*)(OpTy op, Tangents &t, ArrayRef<Value> dx);

template <typename OpTy, TangentFn<OpTy> Fn>
struct TangentRule
    : public ScalarTangentOpInterface::ExternalModel<TangentRule<OpTy, Fn>,
                                                     OpTy> {
  FailureOr<Value> buildTangent(Operation *op, OpBuilder &b,
                                ArrayRef<Value> operandTangents) const {
    if (llvm::all_of(operandTangents, [](Value v) { return !v; }))
      return Value();
    Type type = op->getResult(0).getType();
    Tangents t{b, op->getLoc(), type};
    return Fn(cast<OpTy>(op), t, operandTangents);
  }
};

template <typename OpTy, TangentFn<OpTy> Fn> void attach(MLIRContext *ctx) {
  OpTy::template attachInterface<TangentRule<OpTy, Fn>>(*ctx);
}
} // namespace

static Value addTangent(arith::AddFOp, Tangents &t, ArrayRef<Value> dx) {
  return t.add(dx[0], dx[1]);
}
static Value subTangent(arith::SubFOp, Tangents &t, ArrayRef<Value> dx) {
  return t.add(dx[0], t.neg(dx[1]));
}
static Value mulTangent(arith::MulFOp op, Tangents &t, ArrayRef<Value> dx) {
  return t.add(t.mul(dx[0], op.getRhs()), t.mul(op.getLhs(), dx[1]));
}
/// y = a / b: da / b - db y / b
static Value divTangent(arith::DivFOp op, Tangents &t, ArrayRef<Value> dx) {
  Value quotient = op.getResult();
  Value first = dx[0] ? t.b.create<arith::DivFOp>(t.loc, dx[0], op.getRhs())
                      : Value();
  Value second;
  if (dx[1])
    second = t.neg(t.b.create<arith::DivFOp>(
        t.loc, t.mul(dx[1], quotient), op.getRhs()));
  return t.add(first, second);
}
static Value negTangent(arith::NegFOp, Tangents &t, ArrayRef<Value> dx) {
  return t.neg(dx[0]);
}
/// max/min pass the tangent of the operand they return.
template <typename OpTy, arith::CmpFPredicate predicate>
static Value pickTangent(OpTy op, Tangents &t, ArrayRef<Value> dx) {
  Value firstWins =
      t.b.create<arith::CmpFOp>(t.loc, predicate, op.getLhs(), op.getRhs());
  return t.select(firstWins, dx[0], dx[1]);
}
static Value selectTangent(arith::SelectOp op, Tangents &t,
                           ArrayRef<Value> dx) {
  return t.select(op.getCondition(), dx[1], dx[2]);
}
static Value extTangent(arith::ExtFOp op, Tangents &t, ArrayRef<Value> dx) {
  return t.b.create<arith::ExtFOp>(t.loc, op.getType(), dx[0]);
}
static Value truncTangent(arith::TruncFOp op, Tangents &t,
                          ArrayRef<Value> dx) {
  return t.b.create<arith::TruncFOp>(t.loc, op.getType(), dx[0]);
}
template <typename OpTy>
static Value zeroTangent(OpTy, Tangents &, ArrayRef<Value>) {
  return Value();
}
static Value expTangent(math::ExpOp op, Tangents &t, ArrayRef<Value> dx) {
  return t.mul(dx[0], op.getResult());
}
static Value logTangent(math::LogOp op, Tangents &t, ArrayRef<Value> dx) {
  return t.b.create<arith::DivFOp>(t.loc, dx[0], op.getOperand());
}
static Value tanhTangent(math::TanhOp op, Tangents &t, ArrayRef<Value> dx) {
  Value y = op.getResult();
  Value oneMinus = t.b.create<arith::SubFOp>(t.loc, t.constant(1.0),
                                             t.mul(y, y));
  return t.mul(dx[0], oneMinus);
}
static Value sqrtTangent(math::SqrtOp op, Tangents &t, ArrayRef<Value> dx) {
  Value twiceY = t.mul(t.constant(2.0), op.getResult());
  return t.b.create<arith::DivFOp>(t.loc, dx[0], twiceY);
}
static Value rsqrtTangent(math::RsqrtOp op, Tangents &t, ArrayRef<Value> dx) {
  Value y = op.getResult();
  return t.mul(dx[0], t.mul(t.constant(-0.5), t.mul(y, t.mul(y, y))));
}
static Value erfTangent(math::ErfOp op, Tangents &t, ArrayRef<Value> dx) {
  Value x = op.getOperand();
  Value gauss = t.b.create<math::ExpOp>(t.loc, t.neg(t.mul(x, x)));
  return t.mul(dx[0], t.mul(t.constant(2.0 / std::sqrt(M_PI)), gauss));
}
/// y = x^n (integer n): n x^(n-1)
static Value fpowiTangent(math::FPowIOp op, Tangents &t, ArrayRef<Value> dx) {
  Location loc = t.loc;
  Value n = op.getRhs();
  Value one = t.b.create<arith::ConstantOp>(
      loc, t.b.getIntegerAttr(n.getType(), 1));
  Value power = t.b.create<math::FPowIOp>(
      loc, op.getLhs(), t.b.create<arith::SubIOp>(loc, n, one));
  Value nFloat = t.b.create<arith::SIToFPOp>(loc, t.type, n);
  return t.mul(dx[0], t.mul(nFloat, power));
}
/// y = a^b: da b a^(b-1) + db y log(a)
static Value powfTangent(math::PowFOp op, Tangents &t, ArrayRef<Value> dx) {
  Value a = op.getLhs(), e = op.getRhs();
  Value first;
  if (dx[0]) {
    Value eMinusOne = t.b.create<arith::SubFOp>(t.loc, e, t.constant(1.0));
    Value power = t.b.create<math::PowFOp>(t.loc, a, eMinusOne);
    first = t.mul(dx[0], t.mul(e, power));
  }
  Value second;
  if (dx[1])
    second = t.mul(dx[1], t.mul(op.getResult(),
                                t.b.create<math::LogOp>(t.loc, a)));
  return t.add(first, second);
}
static Value absTangent(math::AbsFOp op, Tangents &t, ArrayRef<Value> dx) {
  Value negative = t.b.create<arith::CmpFOp>(t.loc, arith::CmpFPredicate::OLT,
                                             op.getOperand(), t.constant(0.0));
  return t.select(negative, t.neg(dx[0]), dx[0]);
}
static Value sinTangent(math::SinOp op, Tangents &t, ArrayRef<Value> dx) {
  return t.mul(dx[0], t.b.create<math::CosOp>(t.loc, op.getOperand()));
}
static Value cosTangent(math::CosOp op, Tangents &t, ArrayRef<Value> dx) {
  return t.neg(t.mul(dx[0], t.b.create<math::SinOp>(t.loc, op.getOperand())));
}

void mlir::ftpipe::autodiff::registerArithMathRules(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attach<arith::AddFOp, addTangent>(ctx);
    attach<arith::SubFOp, subTangent>(ctx);
    attach<arith::MulFOp, mulTangent>(ctx);
    attach<arith::DivFOp, divTangent>(ctx);
    attach<arith::NegFOp, negTangent>(ctx);
    attach<arith::MaximumFOp,
           pickTangent<arith::MaximumFOp, arith::CmpFPredicate::OGE>>(ctx);
    attach<arith::MaxNumFOp,
           pickTangent<arith::MaxNumFOp, arith::CmpFPredicate::OGE>>(ctx);
    attach<arith::MinimumFOp,
           pickTangent<arith::MinimumFOp, arith::CmpFPredicate::OLE>>(ctx);
    attach<arith::MinNumFOp,
           pickTangent<arith::MinNumFOp, arith::CmpFPredicate::OLE>>(ctx);
    attach<arith::SelectOp, selectTangent>(ctx);
    attach<arith::ExtFOp, extTangent>(ctx);
    attach<arith::TruncFOp, truncTangent>(ctx);
    attach<arith::CmpFOp, zeroTangent<arith::CmpFOp>>(ctx);
    attach<arith::FPToSIOp, zeroTangent<arith::FPToSIOp>>(ctx);
    attach<arith::FPToUIOp, zeroTangent<arith::FPToUIOp>>(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attach<math::ExpOp, expTangent>(ctx);
    attach<math::LogOp, logTangent>(ctx);
    attach<math::TanhOp, tanhTangent>(ctx);
    attach<math::SqrtOp, sqrtTangent>(ctx);
    attach<math::RsqrtOp, rsqrtTangent>(ctx);
    attach<math::ErfOp, erfTangent>(ctx);
    attach<math::FPowIOp, fpowiTangent>(ctx);
    attach<math::PowFOp, powfTangent>(ctx);
    attach<math::AbsFOp, absTangent>(ctx);
    attach<math::SinOp, sinTangent>(ctx);
    attach<math::CosOp, cosTangent>(ctx);
  });
}
