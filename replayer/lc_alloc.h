/*
 * lc_alloc.h: the local controller's memory stays off the replayed program's heap.
 *
 * Included first in every source of libencore-replay.so (replayer/meson.build: -include),
 * it sends the controller's malloc, calloc, realloc, free, strdup and strndup, and the
 * zstd decompression contexts, to lc_alloc.c's arena, mapped apart from the program's
 * mappings.  The recorder takes almost nothing from the heap while the LC loads and reads a
 * whole trace: with the LC's blocks on the program's heap, the program's own blocks were at
 * other addresses in replay than when recorded, and a program whose bytes depend on
 * addresses (encore record --same-layout, schemas/trace-format.md "Address layout")
 * diverged.  Memory libc allocated (open_memstream, scandir...) is still freed by libc's free;
 * a file that makes memory for the program to free (lc_ifaddrs.c, lc_stdio.c's getline)
 * #undefs the names to use libc's.
 */
#ifndef LC_ALLOC_H
#define LC_ALLOC_H

#include <stddef.h> /* the compiler's: no other header here, the sources set their macros
                       (_FILE_OFFSET_BITS...) before theirs */

void *lc_malloc(size_t n);
void *lc_calloc(size_t n, size_t size);
void *lc_realloc(void *p, size_t n);
void lc_free(void *p);
char *lc_strdup(const char *s);
char *lc_strndup(const char *s, size_t n);
struct ZSTD_DCtx_s *lc_zstd_dctx(void);

#define malloc(n) lc_malloc(n)
#define calloc(n, s) lc_calloc(n, s)
#define realloc(p, n) lc_realloc(p, n)
#define free(p) lc_free(p)
#define strdup(s) lc_strdup(s)
#define strndup(s, n) lc_strndup(s, n)
#define ZSTD_createDCtx lc_zstd_dctx

#endif
