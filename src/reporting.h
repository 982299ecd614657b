/* SPDX-License-Identifier: MIT */
/*
 * Free page reporting (reporting.c).
 */
#ifndef PA_REPORTING_H
#define PA_REPORTING_H

#include "pool.h"

int reporting_init(struct pa_pool *pool, char *err, size_t errlen);
void reporting_stop(struct pa_pool *pool);
/* A free of a block of the reporting order or above: schedule a pass (zone lock may be held). */
void reporting_notify(struct pa_pool *pool);

#endif /* PA_REPORTING_H */
