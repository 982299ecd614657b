/* SPDX-License-Identifier: MIT */
/*
 * max_order changed at run time (max_order.c).
 */
#ifndef PA_MAX_ORDER_H
#define PA_MAX_ORDER_H

#include "pool.h"

/* max_order changed at run time (ctl max_order), up to max_order_boot; pool_max_order() reads it. */
int max_order_set(struct pa_pool *pool, unsigned max_order);

#endif /* PA_MAX_ORDER_H */
