/* SPDX-License-Identifier: MIT */
/*
 * Progress of a long command on stderr, for a person watching a terminal.
 * A ticker thread redraws one line twice a second once the command has run
 * for 2 s; when stderr is not a terminal nothing is started or printed, so
 * logs and pipes see only the command's own output.
 */
#define _GNU_SOURCE
#include "bench.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#define PROGRESS_AFTER_NS 2000000000ull /* quiet for the first 2 s */
#define PROGRESS_EVERY_NS 500000000ull
#define PROGRESS_SLEEP_NS 50000000l

static struct {
	pthread_t ticker;
	bool running;
	uint64_t start_ns;
	_Atomic(const char *) what;
	atomic_uint permille;
	atomic_bool stop;
} progress;

static void progress_draw(bool *shown)
{
	uint64_t elapsed = bench_now_ns() - progress.start_ns;
	if (elapsed < PROGRESS_AFTER_NS)
		return;
	unsigned pm = atomic_load(&progress.permille);
	fprintf(stderr, "\r\033[K%s  %u.%u%%  %.0f s elapsed", atomic_load(&progress.what), pm / 10,
	        pm % 10, (double)elapsed / 1e9);
	fflush(stderr);
	*shown = true;
}

static void *progress_tick(void *arg)
{
	(void)arg;
	bool shown = false;
	uint64_t next = 0;
	const struct timespec nap = { 0, PROGRESS_SLEEP_NS };
	while (!atomic_load(&progress.stop)) {
		uint64_t now = bench_now_ns();
		if (now >= next) {
			progress_draw(&shown);
			next = now + PROGRESS_EVERY_NS;
		}
		nanosleep(&nap, NULL);
	}
	if (shown)
		fputs("\r\033[K", stderr); /* leave the terminal as it was */
	return NULL;
}

void bench_progress_start(const char *what)
{
	if (progress.running || !isatty(STDERR_FILENO))
		return;
	progress.start_ns = bench_now_ns();
	atomic_store(&progress.what, what);
	atomic_store(&progress.permille, 0);
	atomic_store(&progress.stop, false);
	progress.running = pthread_create(&progress.ticker, NULL, progress_tick, NULL) == 0;
}

void bench_progress(const char *what, double fraction)
{
	if (what)
		atomic_store(&progress.what, what);
	if (fraction < 0)
		fraction = 0;
	if (fraction > 1)
		fraction = 1;
	atomic_store(&progress.permille, (unsigned)(fraction * 1000));
}

void bench_progress_stop(void)
{
	if (!progress.running)
		return;
	atomic_store(&progress.stop, true);
	pthread_join(progress.ticker, NULL);
	progress.running = false;
}

void bench_progress_step(unsigned done, unsigned total)
{
	bench_progress(NULL, total ? (double)done / total : 0);
}
