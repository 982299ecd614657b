/* SPDX-License-Identifier: MIT */
/*
 * Metadata memory for an embedder with no operating system: one static
 * array handed out by a bump pointer, the frame map's "reserve" and
 * "commit" at once (its bytes are zero as the loader left them), small
 * allocations kept on a free list per size for reuse. Shared by the
 * bare-metal kernel (kernel.c) and the no-libc test (tests/nolibc/); the
 * hooks take the struct arena as the platform's ctx.
 */
#ifndef PA_EXAMPLE_ARENA_H
#define PA_EXAMPLE_ARENA_H

#include <stdatomic.h>
#include <stddef.h>

#define ARENA_FREE_SIZES 16

struct arena {
	unsigned char *mem;
	size_t bytes, used;
	atomic_flag lock; /* a spin lock: the hooks may be called from any CPU */
	struct {
		size_t bytes;
		void *head;
	} free_lists[ARENA_FREE_SIZES];
};

/* An arena over a static array. */
#define ARENA_OVER(array)                                                                          \
	{                                                                                          \
		.mem = (array), .bytes = sizeof(array), .lock = ATOMIC_FLAG_INIT                   \
	}

/* struct pa_platform's reserve, commit, release, alloc and free over the arena at ctx. */
void *arena_reserve(void *ctx, size_t bytes);
int arena_commit(void *ctx, void *addr, size_t bytes);
void arena_release(void *ctx, void *addr, size_t bytes);
void *arena_alloc(void *ctx, size_t bytes);
void arena_free(void *ctx, void *p, size_t bytes);

#endif
