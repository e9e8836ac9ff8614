/*
 * clock-shim.c: an LD_PRELOAD library that moves a process's wall clock (CLOCK_REALTIME,
 * gettimeofday, time) by an offset a test can change while the process runs, and leaves the
 * monotonic clock alone: what an NTP step or an operator's `date -s` does to a redis-server.
 *
 * The offset (signed 64-bit milliseconds, little-endian) is read from the first 8 bytes of the file
 * named by CLOCK_SHIM_FILE, mapped shared, so a write by the test is seen at the next call. No
 * dlsym and no malloc (libfaketime deadlocks at redis-server start here): the real clock is read
 * with the clock_gettime system call itself.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static volatile int64_t *offset_ms = 0;

__attribute__((constructor)) static void shim_init(void) {
  const char *path = getenv("CLOCK_SHIM_FILE");
  if (!path) return;
  int fd = open(path, O_RDONLY);
  if (fd < 0) return;
  void *p = mmap(0, 8, PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (p != MAP_FAILED) offset_ms = (volatile int64_t *)p;
}

static int real_clock(clockid_t clk, struct timespec *ts) { return (int)syscall(SYS_clock_gettime, clk, ts); }

static void shift(struct timespec *ts) {
  if (!offset_ms) return;
  int64_t ns = (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec + *offset_ms * 1000000LL;
  ts->tv_sec = ns / 1000000000LL;
  ts->tv_nsec = ns % 1000000000LL;
}

int clock_gettime(clockid_t clk, struct timespec *ts) {
  int rc = real_clock(clk, ts);
  if (rc == 0 && (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE)) shift(ts);
  return rc;
}

int gettimeofday(struct timeval *tv, void *tz) {
  (void)tz;
  struct timespec ts;
  int rc = real_clock(CLOCK_REALTIME, &ts);
  if (rc != 0) return rc;
  shift(&ts);
  if (tv) {
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
  }
  return 0;
}

time_t time(time_t *out) {
  struct timespec ts;
  real_clock(CLOCK_REALTIME, &ts);
  shift(&ts);
  if (out) *out = ts.tv_sec;
  return ts.tv_sec;
}
