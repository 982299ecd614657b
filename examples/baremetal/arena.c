/* SPDX-License-Identifier: MIT */
/* Metadata memory over one static array (arena.h). */
#include "arena.h"

static void arena_lock(struct arena *a)
{
	while (atomic_flag_test_and_set_explicit(&a->lock, memory_order_acquire))
		__builtin_ia32_pause();
}

static void arena_unlock(struct arena *a)
{
	atomic_flag_clear_explicit(&a->lock, memory_order_release);
}

/* Bytes aligned to align, or NULL when the array is used up. */
static void *arena_take(struct arena *a, size_t bytes, size_t align)
{
	arena_lock(a);
	size_t at = (a->used + align - 1) & ~(align - 1);
	void *p = NULL;
	if (at <= a->bytes && bytes <= a->bytes - at) {
		p = a->mem + at;
		a->used = at + bytes;
	}
	arena_unlock(a);
	return p;
}

void *arena_reserve(void *ctx, size_t bytes)
{
	return arena_take(ctx, bytes, 4096);
}

/* Reserved bytes are there already, and nothing is ever given back to a loader. */
int arena_commit(void *ctx, void *addr, size_t bytes)
{
	(void)ctx;
	(void)addr;
	(void)bytes;
	return 0;
}

void arena_release(void *ctx, void *addr, size_t bytes)
{
	(void)ctx;
	(void)addr;
	(void)bytes;
}

void *arena_alloc(void *ctx, size_t bytes)
{
	struct arena *a = ctx;
	arena_lock(a);
	for (unsigned i = 0; i < ARENA_FREE_SIZES; i++)
		if (a->free_lists[i].bytes == bytes && a->free_lists[i].head) {
			void *p = a->free_lists[i].head;
			a->free_lists[i].head = *(void **)p;
			arena_unlock(a);
			return p;
		}
	arena_unlock(a);
	return arena_take(a, bytes, 16);
}

/* A free goes on the list of its size (the few sizes the library asks for again). */
void arena_free(void *ctx, void *p, size_t bytes)
{
	struct arena *a = ctx;
	arena_lock(a);
	for (unsigned i = 0; i < ARENA_FREE_SIZES; i++)
		if (a->free_lists[i].bytes == bytes || a->free_lists[i].bytes == 0) {
			a->free_lists[i].bytes = bytes;
			*(void **)p = a->free_lists[i].head;
			a->free_lists[i].head = p;
			break;
		}
	arena_unlock(a);
}
