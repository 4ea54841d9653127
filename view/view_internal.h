/*
 * view_internal.h: what the writers of view/ share and nobody else needs.
 */
#ifndef ENCORE_VIEW_INTERNAL_H
#define ENCORE_VIEW_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "view.h"

/* One line describing event k ("#3 send 5 bytes on channel 4", "#7 mark x=1"...). */
void view__describe(const struct view_event *e, uint64_t k, char *buf, size_t cap);

#endif
