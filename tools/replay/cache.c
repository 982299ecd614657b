/* SPDX-License-Identifier: MIT */
/*
 * The parsed form of a trace, kept between replays. Decompressing a
 * recording costs more than everything else a replay does (the 2.6 M-event
 * 7.2 recording: about 1 s of xz against 0.15 s of replay), and a lab run
 * replays the same recording under many policies; so the first replay of a
 * trace file stores its event array, and the next ones read it back in a
 * few milliseconds.
 *
 * One cache file per trace file, named by the trace's path, device and
 * inode, in $PAGEALLOC_CACHE (a folder; "off" for none), else
 * $XDG_CACHE_HOME/pagealloc, else ~/.cache/pagealloc. Its header repeats
 * the trace's size and mtime and the program's (/proc/self/exe) size and
 * mtime: a changed trace or a rebuilt program (whose parser may read the
 * text differently) is parsed again, and the file rewritten. stdin is never
 * cached.
 *
 * struct rp_trace is stored as it is with its pointers cleared, then the
 * events and the marker texts: a field that points to memory of its own
 * needs a line here.
 */
#define _GNU_SOURCE
#include "replay.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CACHE_MAGIC 0x31656361706170ull /* "papace1" */

struct cache_head {
	uint64_t magic;
	uint64_t trace_size, trace_mtime_ns;
	uint64_t exe_size, exe_mtime_ns;
	uint64_t trace_struct, event_struct; /* sizeof: a changed layout is another format */
};

static uint64_t mtime_ns(const struct stat *sb)
{
	return (uint64_t)sb->st_mtim.tv_sec * 1000000000ull + (uint64_t)sb->st_mtim.tv_nsec;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *s = p;
	for (size_t i = 0; i < n; i++)
		h = (h ^ s[i]) * 0x100000001b3ull;
	return h;
}

/* The cache folder, created if need be; false when caching is off or impossible. */
static bool cache_dir(char *dir, size_t len)
{
	const char *env = getenv("PAGEALLOC_CACHE");
	const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
	if (env && (!strcmp(env, "off") || !strcmp(env, "0") || !*env))
		return false;
	if (env)
		snprintf(dir, len, "%s", env);
	else if (xdg && *xdg)
		snprintf(dir, len, "%s/pagealloc", xdg);
	else if (home && *home)
		snprintf(dir, len, "%s/.cache/pagealloc", home);
	else
		return false;
	/* One level of parent (~/.cache) may be missing too. */
	char parent[PATH_MAX];
	snprintf(parent, sizeof parent, "%s", dir);
	char *slash = strrchr(parent, '/');
	if (slash && slash != parent) {
		*slash = 0;
		mkdir(parent, 0755);
	}
	return mkdir(dir, 0755) == 0 || errno == EEXIST;
}

/* The cache file of path and the header it must carry; false if path is not cacheable. */
static bool cache_key(const char *path, char *file, size_t len, struct cache_head *h)
{
	struct stat sb, exe;
	char real[PATH_MAX], dir[PATH_MAX];
	if (!strcmp(path, "-") || stat(path, &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    stat("/proc/self/exe", &exe) != 0 || !realpath(path, real) ||
	    !cache_dir(dir, sizeof dir))
		return false;
	uint64_t k = fnv1a(0xcbf29ce484222325ull, real, strlen(real));
	k = fnv1a(k, &sb.st_dev, sizeof sb.st_dev);
	k = fnv1a(k, &sb.st_ino, sizeof sb.st_ino);
	snprintf(file, len, "%s/trace-%016llx.events", dir, (unsigned long long)k);
	memset(h, 0, sizeof *h);
	h->magic = CACHE_MAGIC;
	h->trace_size = (uint64_t)sb.st_size;
	h->trace_mtime_ns = mtime_ns(&sb);
	h->exe_size = (uint64_t)exe.st_size;
	h->exe_mtime_ns = mtime_ns(&exe);
	h->trace_struct = sizeof(struct rp_trace);
	h->event_struct = sizeof(struct rp_event);
	return true;
}

/*
 * The events stay in the file's pages (mapped, populated at once): no copy,
 * no fresh memory to fault in. The marker texts are copied out.
 */
int rp_cache_load(const char *path, struct rp_trace *t)
{
	char file[PATH_MAX + 64];
	struct cache_head want;
	if (!cache_key(path, file, sizeof file, &want))
		return -1;
	int fd = open(file, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	if (fd < 0)
		return -1;
	const size_t events_at = sizeof want + sizeof(struct rp_trace);
	if (fstat(fd, &sb) != 0 || (uint64_t)sb.st_size < events_at) {
		close(fd);
		return -1;
	}
	size_t len = (size_t)sb.st_size;
	char *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	struct rp_trace c;
	memcpy(&c, map + sizeof want, sizeof c);
	size_t at = events_at;
	bool ok = memcmp(map, &want, sizeof want) == 0 &&
	          c.nr <= (len - at) / sizeof(struct rp_event);
	at += ok ? c.nr * sizeof(struct rp_event) : 0;
	c.marks = ok ? calloc(c.nr_marks ? c.nr_marks : 1, sizeof *c.marks) : NULL;
	ok = ok && c.marks;
	for (unsigned i = 0; ok && i < c.nr_marks; i++) {
		uint32_t n = 0;
		ok = len - at >= sizeof n;
		if (ok)
			memcpy(&n, map + at, sizeof n), at += sizeof n;
		ok = ok && len - at >= n && (c.marks[i] = strndup(map + at, n)) != NULL;
		at += n;
	}
	if (!ok) {
		for (unsigned i = 0; c.marks && i < c.nr_marks; i++)
			free(c.marks[i]);
		free(c.marks);
		munmap(map, len);
		return -1;
	}
	c.ev = (struct rp_event *)(void *)(map + events_at);
	c.cap = c.nr;
	c.map = map;
	c.map_len = len;
	*t = c;
	return 0;
}

void rp_cache_store(const char *path, const struct rp_trace *t)
{
	char file[PATH_MAX + 64], tmp[PATH_MAX + 96];
	struct cache_head h;
	if (!cache_key(path, file, sizeof file, &h))
		return;
	snprintf(tmp, sizeof tmp, "%s.%d.part", file, (int)getpid());
	FILE *f = fopen(tmp, "wbe");
	if (!f)
		return;
	struct rp_trace c = *t;
	c.ev = NULL;
	c.marks = NULL;
	c.map = NULL;
	c.map_len = 0;
	c.named = c.buddy = NULL; /* freed once parsed; cleared all the same */
	c.named_bits = 0;
	bool ok = fwrite(&h, sizeof h, 1, f) == 1 && fwrite(&c, sizeof c, 1, f) == 1 &&
	          fwrite(t->ev, sizeof *t->ev, t->nr, f) == t->nr;
	for (unsigned i = 0; ok && i < t->nr_marks; i++) {
		uint32_t n = (uint32_t)strlen(t->marks[i]);
		ok = fwrite(&n, sizeof n, 1, f) == 1 && fwrite(t->marks[i], 1, n, f) == n;
	}
	if (fclose(f) || !ok || rename(tmp, file))
		unlink(tmp); /* a cache that cannot be written is only a slower next run */
}
