/*
 * objid.h: the per-process names of synchronisation objects (mutexes, condition variables,
 * semaphores...), which the recorder logs in each SYNC event and the replayer checks: a small
 * number given at the object's first use, in order, found again by the object's address in a
 * fixed open-addressing table (no malloc: it runs inside interposers, under the recorder's
 * stream lock).  The ids name objects for people (dump, SQL); replay does not compare them
 * (replayer/lc_sync.c).
 *
 * Limits (recorder/README.md, "Threads"): the table holds IP_OBJ_SLOTS * 3/4 objects; later
 * ones get id 0 (unnamed, not checked).  An address used again by a new object (freed, then
 * allocated again) keeps the id of the first.
 */
#ifndef ENCORE_IP_OBJID_H
#define ENCORE_IP_OBJID_H

#include <stdint.h>

/* 12,288 objects: memcached -t 4 alone has 8,192 item locks (with 4,096 slots the table was
 * full and every lookup of an object past it probed a quarter of the table's length) */
#define IP_OBJ_BITS 14
#define IP_OBJ_SLOTS (1u << IP_OBJ_BITS)

struct ip_objtab {
	uintptr_t key[IP_OBJ_SLOTS]; /* object address; 0 marks a free slot */
	uint32_t id[IP_OBJ_SLOTS];
	uint32_t count;              /* ids given so far: the last id */
};

/* The id of the object at p, given now when it has none; 0 when the table is full (or p is
 * NULL). */
static inline uint32_t ip_obj_id(struct ip_objtab *t, const void *p)
{
	uintptr_t k = (uintptr_t)p;
	uint32_t i = (uint32_t)(((uint64_t)k >> 3) * 0x9e3779b97f4a7c15ull >> (64 - IP_OBJ_BITS)) &
	             (IP_OBJ_SLOTS - 1);

	if (!k)
		return 0;
	for (;;) {
		if (t->key[i] == k)
			return t->id[i];
		if (!t->key[i]) {
			if (t->count >= IP_OBJ_SLOTS / 4 * 3)
				return 0; /* full: probes stay short */
			t->key[i] = k;
			t->id[i] = ++t->count;
			return t->id[i];
		}
		i = (i + 1) & (IP_OBJ_SLOTS - 1);
	}
}

/* Forget every object (a forked child numbers its own from 1). */
static inline void ip_obj_reset(struct ip_objtab *t)
{
	if (!t->count)
		return; /* (never used: its pages stay untouched) */
	for (uint32_t i = 0; i < IP_OBJ_SLOTS; i++)
		t->key[i] = 0;
	t->count = 0;
}

#endif
