// head_gemm_shapes.c - OpenBLAS alone on GPT-2 124M's head products, one
// thread (issue 25; not a test, prints measured figures): the logits
// (512 x 768 by the tied 50257 x 768 weight transposed), the input's
// gradient and the weight's gradient, the latter in three layouts, with
// their CPU time and GFLOP/s.
//   cc -O2 bench/head_gemm_shapes.c -o /tmp/head_gemm -lopenblas &&
//   OPENBLAS_NUM_THREADS=1 /tmp/head_gemm
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpuSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static float *filled(long n) {
  float *p = malloc(n * sizeof(float));
  for (long i = 0; i < n; i++)
    p[i] = (i % 13) * 0.01f;
  return p;
}

int main(void) {
  const int V = 50257, D = 768, T = 512;
  float *w = filled((long)V * D), *x = filled((long)T * D);
  float *logits = filled((long)T * V), *dw = filled((long)V * D);
  float *dx = filled((long)T * D);
  struct {
    const char *name;
    CBLAS_ORDER order;
    CBLAS_TRANSPOSE ta, tb;
    int m, n, k, lda, ldb, ldc;
    const float *a, *b;
    float *c;
  } g[] = {
      {"logits = x w^T (row-major, N, T)", CblasRowMajor, CblasNoTrans,
       CblasTrans, T, V, D, D, D, V, x, w, logits},
      {"dx = dlogits w (row-major, N, N)", CblasRowMajor, CblasNoTrans,
       CblasNoTrans, T, D, V, V, D, D, logits, w, dx},
      {"dw = dlogits^T x (row-major, T, N)", CblasRowMajor, CblasTrans,
       CblasNoTrans, V, D, T, V, D, D, logits, x, dw},
      {"dw as column-major x dlogits^T (N, T)", CblasColMajor, CblasNoTrans,
       CblasTrans, D, V, T, D, V, D, x, logits, dw},
      {"dw^T = x^T dlogits (row-major, T, N)", CblasRowMajor, CblasTrans,
       CblasNoTrans, D, V, T, D, V, V, x, logits, dw},
  };
  for (int r = 0; r < 2; r++)
    for (int i = 0; i < 5; i++) {
      double t = cpuSeconds();
      cblas_sgemm(g[i].order, g[i].ta, g[i].tb, g[i].m, g[i].n, g[i].k, 1.0f,
                  g[i].a, g[i].lda, g[i].b, g[i].ldb, 0.0f, g[i].c, g[i].ldc);
      double s = cpuSeconds() - t;
      printf("%-40s %7.1f ms %6.1f GFLOP/s\n", g[i].name, s * 1e3,
             2.0 * g[i].m * g[i].n * g[i].k / s / 1e9);
    }
  return 0;
}
