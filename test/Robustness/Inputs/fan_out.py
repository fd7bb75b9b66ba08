# Prints a function whose first op's result is read by N ops, whose results
# a chain of N adds then reads in order: N values live across every cut of
# the first half, so each step of the Seq-Pipe DP visits thousands of pending
# consumers. Usage: fan_out.py N
import sys
n = int(sys.argv[1])
t = "tensor<64x64xf32>"
L = ["func.func @fan(%%x: %s, %%w: %s {ftpipe.param}) -> %s {" % (t, t, t),
     "  %%a = tosa.mul %%x, %%w {shift = 0 : i8} : (%s, %s) -> %s" % (t, t, t)]
for i in range(n):
    L.append("  %%v%d = tosa.abs %%a : (%s) -> %s" % (i, t, t))
prev = "%a"
for i in range(n):
    L.append("  %%s%d = tosa.add %s, %%v%d : (%s, %s) -> %s" % (i, prev, i, t, t, t))
    prev = "%%s%d" % i
L += ["  return %s : %s" % (prev, t), "}"]
print("\n".join(L))
