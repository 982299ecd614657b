/* SPDX-License-Identifier: MIT */
/*
 * The parts of the `pagealloc` program that live in files of their own:
 * the ctl command (ctl.c) and the memory map (map.c).
 */
#ifndef PA_CLI_H
#define PA_CLI_H

#include <stdbool.h>
#include <stdio.h>

#include "pagealloc.h"

/* Every ctl path with its current value ("PATH MODE VALUE"), or as one JSON object. */
int cli_ctl_list(struct pa_pool *pool, bool json, FILE *out);

/*
 * A path's value, as its text or as {"path": ..., "value": ...}; after a
 * write, a write-only path prints nothing. 0, or -1 with the error printed.
 */
int cli_ctl_show(struct pa_pool *pool, const char *path, bool written, bool json, FILE *out);

/* The pool one cell per pageblock: SVG written to svg_path, or text to out. 0 or -1. */
int cli_map(struct pa_pool *pool, const char *svg_path, FILE *out);

#endif /* PA_CLI_H */
