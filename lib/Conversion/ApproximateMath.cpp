//===- ApproximateMath.cpp - f32 math functions as polynomials ------------===//
//
// ftpipe-approximate-math: f32 exp and tanh become upstream's polynomial
// approximations and f32 erf FTPipe's own rational approximation, before
// math-to-libm would make them scalar library calls that keep loops from
// vectorising (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "FTPipe/Conversion/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir {
namespace ftpipe {
#define GEN_PASS_DEF_APPROXIMATEMATHPASS
#include "FTPipe/Conversion/Passes.h.inc"
} // namespace ftpipe
} // namespace mlir

using namespace mlir;

namespace {

// The coefficients, as scripts/fit-erf.py derives them (printed there to 9
// digits; these are the same floats). erf(x) / x on [0, 1] as a polynomial
// in x^2 (least squares in relative error against mpmath's erf, 4e-9 in
// f64).
constexpr float kSmall[] = {1.12837917f,    -0.376126287f,  0.112836219f,
                            -0.0268555014f, 0.00519181602f, -0.000804320024f,
                            7.97039909e-05f};
// erfc(a) * exp(a^2) on [1, 4] as P(a) / Q(a), Q(0) = 1 (iterated linear
// least squares in relative error, 2.4e-10 in f64).
constexpr float kLargeP[] = {0.999894421f, 0.995615238f, 0.461960433f,
                             0.0945915705f, 2.84736295e-06f};
constexpr float kLargeQ[] = {1.0f, 2.12323818f, 1.8603524f, 0.817191486f,
                             0.167792619f};

/// f32 erf in arithmetic that vectorises: for |x| < 1, x * S(x^2); above,
/// 1 - exp(-x^2) * P(|x|) / Q(|x|) with the sign of x, x^2 split into two
/// floats so that its rounding does not reach the exponential. Checked
/// against mpmath on [-6, 6] with an exact exponential (scripts/fit-erf.py):
/// at most 2.14 ulp on its 28,572 points (2.3 on a denser sample), 0.25 ulp
/// on average; the C library rounds to within 0.5 ulp. Upstream's
/// own erf approximation was less accurate than training checks against
/// PyTorch tolerate (docs/Compile.md).
struct ErfRational : OpRewritePattern<math::ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(math::ErfOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!type.isF32())
      return failure();
    Location loc = op.getLoc();
    ImplicitLocOpBuilder b(loc, rewriter);
    auto constant = [&](float value) -> Value {
      return b.create<arith::ConstantOp>(b.getF32FloatAttr(value));
    };
    auto horner = [&](ArrayRef<float> coefficients, Value at) {
      Value sum = constant(coefficients.back());
      for (float c : llvm::reverse(coefficients.drop_back()))
        sum = b.create<math::FmaOp>(sum, at, constant(c));
      return sum;
    };
    Value x = op.getOperand();
    Value a = b.create<math::AbsFOp>(x);
    Value small = b.create<arith::MulFOp>(
        x, horner(kSmall, b.create<arith::MulFOp>(x, x)));
    // Beyond 10, exp(-a^2) is 0 in f32: clamping keeps inf out of P / Q.
    Value clamped = b.create<arith::MinimumFOp>(a, constant(10.0f));
    Value high = b.create<arith::MulFOp>(clamped, clamped);
    Value low =
        b.create<math::FmaOp>(clamped, clamped, b.create<arith::NegFOp>(high));
    Value decay = b.create<arith::MulFOp>(
        b.create<math::ExpOp>(b.create<arith::NegFOp>(high)),
        b.create<arith::SubFOp>(constant(1.0f), low));
    Value ratio = b.create<arith::DivFOp>(horner(kLargeP, clamped),
                                          horner(kLargeQ, clamped));
    Value large = b.create<math::CopySignOp>(
        b.create<arith::SubFOp>(constant(1.0f),
                                b.create<arith::MulFOp>(decay, ratio)),
        x);
    Value isSmall =
        b.create<arith::CmpFOp>(arith::CmpFPredicate::ULT, a, constant(1.0f));
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, isSmall, small, large);
    return success();
  }
};

struct ApproximateMathPass
    : ftpipe::impl::ApproximateMathPassBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // Before upstream's own erf pattern, which matches too.
    patterns.add<ErfRational>(&getContext(), /*benefit=*/2);
    populateMathPolynomialApproximationPatterns(patterns);
    // Only these ops; the others keep the C library until their effect on
    // the checks against PyTorch is measured.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<math::ExpOp, math::TanhOp, math::ErfOp>(op))
        ops.push_back(op);
    });
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(ops, std::move(patterns), config);
  }
};

} // namespace
