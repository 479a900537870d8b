/* Times whole processes the way an agent runs a hook: spawn with the payload on stdin, wait.
 * Usage: spawn_timer RUNS PAYLOAD CMD [ARGS...]
 * Prints: median_ms p90_ms max_rss_kib (peak RSS of the largest run, from wait4). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int main(int argc, char **argv) {
  if (argc < 4) { fprintf(stderr, "usage: spawn_timer RUNS PAYLOAD CMD [ARGS...]\n"); return 2; }
  int runs = atoi(argv[1]);
  double *t = calloc(runs, sizeof *t);
  long max_rss = 0;
  for (int i = -5; i < runs; i++) { /* 5 warm-up runs */
    int in = open(argv[2], O_RDONLY), out = open("/dev/null", O_WRONLY);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, out, 2);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    pid_t pid;
    if (posix_spawnp(&pid, argv[3], &fa, NULL, argv + 3, environ) != 0) { perror("spawn"); return 1; }
    int st; struct rusage ru;
    wait4(pid, &st, 0, &ru);
    clock_gettime(CLOCK_MONOTONIC, &b);
    close(in); close(out);
    posix_spawn_file_actions_destroy(&fa);
    if (i >= 0) {
      t[i] = (b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) / 1e6;
      if (ru.ru_maxrss > max_rss) max_rss = ru.ru_maxrss;
    }
  }
  qsort(t, runs, sizeof *t, cmp);
  printf("%.3f %.3f %ld\n", t[runs / 2], t[runs * 9 / 10], max_rss);
  return 0;
}
