/* SPDX-License-Identifier: MIT */
/*
 * The validator (validate.c).
 */
#ifndef PA_VALIDATE_H
#define PA_VALIDATE_H

#include "pool.h"

/* Same as pa_validate with every zone lock already held by the caller. */
int validate_locked(struct pa_pool *pool, char *err, size_t errlen);

#endif /* PA_VALIDATE_H */
