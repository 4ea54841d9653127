/*
 * stdio_glibc.h: what the recorder (recorder/stdio.c) and the replayer (replayer/lc_stdio.c)
 * both need to interpose glibc's stdio: the entry points glibc's headers redirect to (and
 * macros to undo), its FILE flags, and the accounting of inline writes below.
 *
 * Bytes a program wrote into a FILE with inline putc_unlocked (the macro
 * writes into the buffer, no libc call), shared by the recorder (recorder/stdio.c logs them
 * as one send before the next output call on the FILE, or at exit) and the replayer
 * (replayer/lc_stdio.c finds the same count and consumes that send).  Both must count alike,
 * so the accounting is written once.  The write pointer each accounted call left is kept per
 * FILE; bytes between it and the current write pointer were written inline.  Static: each
 * preloaded library has its own tables (64 FILEs each; more share entries).
 */
#ifndef ENCORE_STDIO_GLIBC_H
#define ENCORE_STDIO_GLIBC_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

/* <bits/stdio.h> (optimised builds) makes some of these names macros: the interposers
 * below must define the functions. */
#undef fread_unlocked
#undef fwrite_unlocked
#undef getc
#undef putc
#undef getc_unlocked
#undef putc_unlocked
#undef getchar_unlocked
#undef putchar_unlocked
#undef fgetc_unlocked
#undef fputc_unlocked

int __isoc99_scanf(const char *fmt, ...);
int __isoc99_fscanf(FILE *f, const char *fmt, ...);
int __isoc99_vscanf(const char *fmt, va_list ap);
int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap);
size_t __fread_chk(void *p, size_t plen, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *p, size_t plen, size_t size, size_t n, FILE *f);
char *__fgets_chk(char *s, size_t slen, int n, FILE *f);
char *__fgets_unlocked_chk(char *s, size_t slen, int n, FILE *f);
ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *f);
int _IO_getc(FILE *f);
int _IO_putc(int c, FILE *f);
int __uflow(FILE *f);
int __overflow(FILE *f, int c);
int __printf_chk(int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __vprintf_chk(int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __dprintf_chk(int fd, int flag, const char *fmt, ...);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);

/* glibc's FILE flags (libio.h): the end of the stream or an error was seen. */
#define STDIO_IO_EOF_SEEN 0x10
#define STDIO_IO_ERR_SEEN 0x20

static inline int file_fd(FILE *f)
{
	return f ? f->_fileno : -1;
}

/* Per-FILE state (the accounting below, each side's refill bookkeeping): a small table of
 * entries of one struct type, each starting with its FILE (member f) and holding a pointer
 * whose NULL says nothing is kept for that FILE (the entry may then serve another).  Found
 * by a linear scan: a program has few FILEs on channels.  When full, a new FILE takes the
 * entry its address picks (what the FILE there kept is lost: counted as not kept). */
struct stdio_files {
	void *slot;    /* max entries of `size` bytes, each starting with FILE *f */
	size_t size;
	size_t kept;   /* offset of the pointer that is NULL when the entry keeps nothing */
	unsigned max;
	unsigned n;    /* entries used so far */
};

#define STDIO_FILES_INIT(array, member) \
	{ (array), sizeof((array)[0]), offsetof(__typeof__((array)[0]), member), \
	  sizeof(array) / sizeof((array)[0]), 0 }

/* f's entry (f not NULL); with add, when f has none, a new one (its f set, its kept pointer
 * NULL, the rest as the entry's previous FILE left it), else NULL. */
static void *stdio_files_find(struct stdio_files *t, FILE *f, int add)
{
	char *e = t->slot;
	unsigned i;

	for (i = 0; i < t->n; i++, e += t->size)
		if (*(FILE **)e == f)
			return e;
	if (!add)
		return NULL;
	for (i = 0, e = t->slot; i < t->n; i++, e += t->size)
		if (!*(void **)(e + t->kept))
			break;
	if (i == t->n)
		i = t->n < t->max ? t->n++ : (unsigned)((uintptr_t)f >> 4) % t->max;
	e = (char *)t->slot + (size_t)i * t->size;
	*(FILE **)e = f;
	*(void **)(e + t->kept) = NULL;
	return e;
}

/* Forget entry e (a FILE closed): free for another FILE. */
static inline void stdio_files_drop(struct stdio_files *t, void *e)
{
	*(FILE **)e = NULL;
	*(void **)((char *)e + t->kept) = NULL;
}

/* The write pointer each accounted call left, per FILE (NULL: the start of the buffer). */
struct stdio_wacc {
	FILE *f;
	char *wptr;
};

static struct stdio_wacc stdio_wacc_slots[64];
static struct stdio_files stdio_waccs = STDIO_FILES_INIT(stdio_wacc_slots, wptr);

static int stdio_wacc_atexit;

/* Bytes in f's buffer written since the last accounted call (glibc's FILE fields).  The
 * first call registers at_exit, the side's accounting of every FILE at exit (bytes written
 * inline and never followed by an output call go out when libc flushes the buffers after
 * the exit handlers). */
static long stdio_inline_pending(FILE *f, void (*at_exit)(void))
{
	struct stdio_wacc *w = stdio_files_find(&stdio_waccs, f, 0);
	char *a = w ? w->wptr : NULL;

	if (!stdio_wacc_atexit) {
		stdio_wacc_atexit = 1;
		atexit(at_exit);
	}

	if (!f->_IO_write_base || f->_IO_write_ptr <= f->_IO_write_base)
		return 0;
	if (!a || a < f->_IO_write_base || a > f->_IO_write_ptr)
		a = f->_IO_write_base;
	return (long)(f->_IO_write_ptr - a);
}

#endif
