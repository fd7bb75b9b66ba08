// RUN: %python %S/Inputs/fan_out.py 2000 | ftpipe-opt --ftpipe-annotate-costs > %t.mlir
// RUN: not ftpipe-opt %t.mlir --ftpipe-seq-pipe=devices=4 2>&1 | FileCheck %s
// RUN: ftpipe-opt %t.mlir --ftpipe-seq-pipe="devices=4 method=greedy" -o /dev/null

// 4,001 ops where 2,000 values each live across 2,000 cuts: the DP's step
// budget now counts the consumers and pending nodes each step visits, so it
// gives up within a second (it used to run for minutes and take gigabytes),
// and the greedy method still plans the graph.

// CHECK: error: seq-dp: seq-pipe dp: gave up after 64000000 steps on 4001 nodes; use the greedy method or coarsen the graph first
