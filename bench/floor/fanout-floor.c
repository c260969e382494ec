/*
 * The fanout floor of this machine: what the kernel alone costs for "one message to N SSE streams"
 * over loopback, with no server code at all (bench/floor.ts runs it; docs/benchmarks.md, "floor").
 *
 *   fanout-floor <connections> <rate msgs/s> <warmup s> <seconds> <frame bytes> <sender cpu> <receiver cpu>
 *
 * The process forks: the parent is the sender (pinned to <sender cpu>), holding <connections>
 * accepted TCP sockets (TCP_NODELAY, non-blocking, as uWS sets them); the child is the receiver
 * (pinned to <receiver cpu>), holding the other ends and reading them with epoll. Each message,
 * sent at t0 + i/rate whatever came before (open loop, like the fanout bench's sender), is one
 * send() of <frame bytes> per socket, back to back: the least any user-space server on the
 * kernel's TCP stack does to hand one event to N streams. The frame carries the message's send
 * time (CLOCK_MONOTONIC, the same clock in both processes); the receiver records
 * receive time - send time for every (socket, message) in a 10 us histogram, exactly like the
 * fanout bench's client records receive time - send time.
 *
 * Prints one JSON line: latency p50/p99/max over every event of the measured seconds, the
 * sender's loop time per message (mean, max), its CPU per event, and events lost.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BUCKET_US 10
#define BUCKETS 500000 /* 5 s */

struct shared {
  volatile int phase; /* 0 warm-up, 1 measuring, 2 done */
  volatile long events;
  volatile long measured_msgs; /* messages sent while measuring */
  uint32_t hist[BUCKETS];
  volatile double max_us;
};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu, &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0) perror("sched_setaffinity");
}

static double cpu_seconds_self(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

static void die(const char *what) {
  fprintf(stderr, "fanout-floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* Frame: "F<phase><seq 8 digits>.<send time us, 16 digits>~" then padding to the frame size. */
static void receiver(struct shared *sh, int n, int port, int frame) {
  int *fds = malloc(sizeof(int) * n);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(0x7f000001)};
  int ep = epoll_create1(0);
  for (int i = 0; i < n; i++) {
    fds[i] = socket(AF_INET, SOCK_STREAM, 0);
    if (fds[i] < 0) die("socket");
    if (connect(fds[i], (void *)&a, sizeof a) != 0) die("connect");
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = (uint32_t)i};
    epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &e);
  }
  /* A frame may arrive split or joined with the next: scan a per-socket carry for whole frames. */
  char *carry = calloc((size_t)n, (size_t)frame);
  int *have = calloc((size_t)n, sizeof(int));
  char buf[65536];
  struct epoll_event ev[1024];
  for (;;) {
    int k = epoll_wait(ep, ev, 1024, 200);
    if (k < 0 && errno != EINTR) die("epoll_wait");
    if (sh->phase == 2) break;
    for (int j = 0; j < k; j++) {
      int i = (int)ev[j].data.u32;
      ssize_t r = read(fds[i], buf, sizeof buf);
      if (r <= 0) continue;
      double t = now_us();
      for (ssize_t p = 0; p < r;) {
        int take = frame - have[i];
        if (take > r - p) take = (int)(r - p);
        memcpy(carry + (size_t)i * frame + have[i], buf + p, (size_t)take);
        have[i] += take;
        p += take;
        if (have[i] < frame) break;
        have[i] = 0;
        const char *f = carry + (size_t)i * frame;
        if (f[0] != 'F' || f[1] != '1') continue; /* a warm-up message */
        double sent = strtod(f + 11, NULL);
        double lat = t - sent;
        if (lat < 0) lat = 0;
        long b = (long)(lat / BUCKET_US);
        if (b >= BUCKETS) b = BUCKETS - 1;
        __atomic_add_fetch(&sh->hist[b], 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&sh->events, 1, __ATOMIC_RELAXED);
        if (lat > sh->max_us) sh->max_us = lat;
      }
    }
  }
  exit(0);
}

static double percentile(struct shared *sh, double p) {
  long total = sh->events, rank = (long)(p / 100.0 * total + 0.999999), seen = 0;
  if (total == 0) return 0;
  for (long b = 0; b < BUCKETS; b++) {
    seen += sh->hist[b];
    if (seen >= rank) return (b + 1) * BUCKET_US / 1000.0;
  }
  return sh->max_us / 1000.0;
}

int main(int argc, char **argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: fanout-floor <connections> <rate> <warmup s> <seconds> <frame bytes> <sender cpu> <receiver cpu>\n");
    return 2;
  }
  int n = atoi(argv[1]), rate = atoi(argv[2]), warm = atoi(argv[3]), secs = atoi(argv[4]), frame = atoi(argv[5]);
  int scpu = atoi(argv[6]), rcpu = atoi(argv[7]);
  if (n < 1 || rate < 1 || secs < 1 || frame < 40) return 2;
  struct rlimit rl;
  getrlimit(RLIMIT_NOFILE, &rl);
  rl.rlim_cur = rl.rlim_max;
  setrlimit(RLIMIT_NOFILE, &rl);
  if ((long)rl.rlim_cur < n + 64) {
    fprintf(stderr, "fanout-floor: %d connections need %d descriptors per process; the limit is %ld\n", n, n + 64, (long)rl.rlim_cur);
    return 1;
  }
  signal(SIGPIPE, SIG_IGN);
  struct shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (sh == MAP_FAILED) die("mmap");
  int L = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(L, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0, .sin_addr.s_addr = htonl(0x7f000001)};
  if (bind(L, (void *)&a, sizeof a) != 0) die("bind");
  socklen_t al = sizeof a;
  getsockname(L, (void *)&a, &al);
  if (listen(L, 4096) != 0) die("listen");
  pid_t child = fork();
  if (child == 0) {
    pin(rcpu);
    close(L);
    receiver(sh, n, ntohs(a.sin_port), frame);
  }
  pin(scpu);
  int *fds = malloc(sizeof(int) * n);
  for (int i = 0; i < n; i++) {
    fds[i] = accept(L, NULL, NULL);
    if (fds[i] < 0) die("accept");
    setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fds[i], F_SETFL, O_NONBLOCK);
  }
  char *msg = malloc((size_t)frame);
  memset(msg, ' ', (size_t)frame);
  long total = (long)(warm + secs) * rate, failed = 0;
  double loop_sum = 0, loop_max = 0, cpu0 = 0, t0 = now_us() + 200000;
  for (long m = 0; m < total; m++) {
    int measuring = m >= (long)warm * rate;
    if (measuring && sh->phase == 0) {
      sh->phase = 1;
      cpu0 = cpu_seconds_self();
    }
    double due = t0 + m * 1e6 / rate;
    for (double t = now_us(); t < due; t = now_us()) usleep((useconds_t)(due - t > 2000 ? 1000 : 50));
    double start = now_us();
    char head[40];
    int h = snprintf(head, sizeof head, "F%d%08ld.%016.0f~", measuring, m, start);
    memcpy(msg, head, (size_t)h);
    for (int i = 0; i < n; i++)
      if (send(fds[i], msg, (size_t)frame, 0) != frame) failed++;
    double took = now_us() - start;
    if (measuring) {
      loop_sum += took;
      if (took > loop_max) loop_max = took;
      sh->measured_msgs++;
    }
  }
  double cpu = cpu_seconds_self() - cpu0;
  long expected = sh->measured_msgs * n;
  for (double until = now_us() + 3e6; sh->events < expected && now_us() < until;) usleep(10000);
  sh->phase = 2;
  waitpid(child, NULL, 0);
  printf("{\"connections\":%d,\"rate\":%d,\"frame_bytes\":%d,\"messages\":%ld,\"events\":%ld,\"lost\":%ld,\"send_failures\":%ld,"
         "\"p50_ms\":%.2f,\"p99_ms\":%.2f,\"max_ms\":%.2f,\"loop_ms_mean\":%.2f,\"loop_ms_max\":%.2f,\"sender_cpu_us_per_event\":%.2f}\n",
         n, rate, frame, sh->measured_msgs, sh->events, expected - sh->events, failed, percentile(sh, 50), percentile(sh, 99),
         sh->max_us / 1000.0, loop_sum / 1000.0 / (sh->measured_msgs ? sh->measured_msgs : 1), loop_max / 1000.0,
         expected ? cpu * 1e6 / expected : 0);
  return 0;
}
