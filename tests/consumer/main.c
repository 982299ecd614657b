/* SPDX-License-Identifier: MIT */
/* Boot a small pool, take one page and give it back: proof that an installed
 * pagealloc links and runs. */
#include <pagealloc.h>

#include <stdio.h>

int main(void)
{
	char err[256] = "";
	struct pa_pool *pool = NULL;

	if (pa_boot("mem=64M", NULL, &pool, err, sizeof err) != 0) {
		fprintf(stderr, "consumer: pa_boot: %s\n", err);
		return 1;
	}
	struct pa_page *page = pa_alloc_pages(pool, PA_GFP_KERNEL, 0);
	if (!page) {
		fprintf(stderr, "consumer: pa_alloc_pages failed\n");
		pa_shutdown(pool);
		return 1;
	}
	pa_free_pages(pool, page, 0);
	pa_shutdown(pool);
	puts("consumer: ok");
	return 0;
}
