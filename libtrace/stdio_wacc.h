/*
 * stdio_wacc.h: bytes a program wrote into a FILE with inline putc_unlocked (the macro
 * writes into the buffer, no libc call), shared by the recorder (recorder/stdio.c logs them
 * as one send before the next output call on the FILE, or at exit) and the replayer
 * (replayer/lc_stdio.c finds the same count and consumes that send).  Both must count alike,
 * so the accounting is written once.  The write pointer each accounted call left is kept per
 * FILE; bytes between it and the current write pointer were written inline.  Static: each
 * preloaded library has its own table (64 FILEs; more share slots).
 */
#ifndef ENCORE_STDIO_WACC_H
#define ENCORE_STDIO_WACC_H

#include <stdint.h>
#include <stdio.h>

#define STDIO_WACC_MAX 64

struct stdio_wacc {
	FILE *f;
	char *wptr;
};

static struct stdio_wacc stdio_waccs[STDIO_WACC_MAX];
static unsigned stdio_nwacc;

static struct stdio_wacc *stdio_wacc_find(FILE *f, int add)
{
	unsigned i;

	for (i = 0; i < stdio_nwacc; i++)
		if (stdio_waccs[i].f == f)
			return &stdio_waccs[i];
	if (!add)
		return NULL;
	i = stdio_nwacc < STDIO_WACC_MAX ? stdio_nwacc++
	                                 : (unsigned)((uintptr_t)f >> 4) % STDIO_WACC_MAX;
	stdio_waccs[i].f = f;
	stdio_waccs[i].wptr = NULL;
	return &stdio_waccs[i];
}

/* Bytes in f's buffer written since the last accounted call (glibc's FILE fields). */
static long stdio_inline_pending(FILE *f)
{
	struct stdio_wacc *w = stdio_wacc_find(f, 0);
	char *a = w ? w->wptr : NULL;

	if (!f->_IO_write_base || f->_IO_write_ptr <= f->_IO_write_base)
		return 0;
	if (!a || a < f->_IO_write_base || a > f->_IO_write_ptr)
		a = f->_IO_write_base;
	return (long)(f->_IO_write_ptr - a);
}

#endif
