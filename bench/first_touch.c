// first_touch.c - CPU time of the first touch of a fresh 102 MiB buffer
// (GPT-2 124M's 508 x 50257 floats) against a memset and a memcpy of a
// mapped one (issue 25; not a test, prints measured figures).
//   cc -O2 bench/first_touch.c -o /tmp/first_touch && /tmp/first_touch
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double cpuSeconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(void) {
  size_t n = (size_t)102 << 20;
  char *mapped = malloc(n);
  memset(mapped, 1, n);
  for (int r = 0; r < 3; r++) {
    double t = cpuSeconds();
    char *fresh =
        mmap(0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    memset(fresh, 0, n);
    double first = cpuSeconds() - t;
    t = cpuSeconds();
    memset(mapped, 0, n);
    double set = cpuSeconds() - t;
    t = cpuSeconds();
    memcpy(fresh, mapped, n);
    double copy = cpuSeconds() - t;
    munmap(fresh, n);
    printf("102 MiB: fresh pages + memset %.1f ms (%.2f GB/s), memset of a "
           "mapped buffer %.1f ms, memcpy into a mapped one %.1f ms\n",
           first * 1e3, n / first / 1e9, set * 1e3, copy * 1e3);
  }
  return 0;
}
