/*
 * encore.h: what a recorded program may call.  Public, installed, self-contained.
 *
 *     #include <encore.h>
 *     encore_mark("term", term);   // publish local state: a MARK event in the trace
 *
 * Linking needs no encore library: encore_mark is a weak reference, resolved at run time
 * only when libencore-record.so is preloaded (`encore record`).  Without encore it is a
 * null pointer and the macro below skips the call, so the program runs as usual.
 * Predicates can then name the mark's key (schemas/predicates.md).
 */
#ifndef ENCORE_H
#define ENCORE_H

#ifdef __cplusplus
extern "C" {
#endif

/* Record a MARK event: `key` (at most 255 bytes are kept) and `value`.  Async-signal-safe;
 * never changes errno. */
extern void encore_mark(const char *key, long value) __attribute__((weak));

#ifndef ENCORE_NO_MARK_MACRO
/* Call encore_mark only when it is there.  (The macro does not expand recursively, so the
 * inner encore_mark names the function.) */
#define encore_mark(key, value) \
	((encore_mark) ? (encore_mark)((key), (value)) : (void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif
