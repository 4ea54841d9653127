/*
 * site.c: call-site ids.  The return address of an intercepted call is resolved once with
 * libunwind (function name + offset, for `depth` frames) and interned: the per-trace stack
 * table gets a definition (trace_writer_stack) the first time a site is used in a trace,
 * and every later event from the same return address costs one hash lookup.
 *
 * A site is keyed by its return address only: the deeper frames are those seen the first
 * time (documented in README.md).  Storage is fixed (no malloc): a table of addresses and
 * an mmap'd arena for frames and names, filled at most once per site.
 */
#define UNW_LOCAL_ONLY
#include <dlfcn.h>
#include <libunwind.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>

#include "rec.h"

#define SITE_SLOTS 8192 /* power of two */
#define SITE_MAX (SITE_SLOTS / 2)
#define NAME_ARENA (2u << 20)

struct site {
	uintptr_t ra;
	uint32_t id;
	uint32_t nframes;
	uint32_t defined; /* defined in the current trace */
	struct trace_frame *frames;
};

static struct site sites[SITE_SLOTS];
static uint32_t nsites;
static char *arena;
static size_t arena_used;

static int arena_init(void)
{
	void *m;

	if (arena)
		return 0;
	m = mmap(NULL, NAME_ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return -1;
	arena = m;
	return 0;
}

static const char *arena_str(const char *s)
{
	size_t n = strnlen(s, 255);
	char *p;

	if (arena_init() != 0 || arena_used + n + 1 > NAME_ARENA)
		return "";
	p = arena + arena_used;
	memcpy(p, s, n);
	p[n] = '\0';
	arena_used += n + 1;
	return p;
}

static struct trace_frame *arena_frames(uint32_t n)
{
	size_t align = _Alignof(struct trace_frame), need = n * sizeof(struct trace_frame);
	struct trace_frame *f;

	if (arena_init() != 0)
		return NULL;
	arena_used = (arena_used + align - 1) & ~(align - 1);
	if (arena_used + need > NAME_ARENA)
		return NULL;
	f = (struct trace_frame *)(void *)(arena + arena_used);
	arena_used += need;
	return f;
}

static void describe(struct trace_frame *f, uintptr_t ip, unw_cursor_t *cur)
{
	char name[256];
	unw_word_t off = 0;
	Dl_info info;
	const char *obj = "";

	f->pc = ip;
	f->offset = 0;
	f->function = "";
	if (cur && unw_get_proc_name(cur, name, sizeof(name), &off) == 0) {
		f->function = arena_str(name);
		f->offset = off;
	}
	if (dladdr((void *)ip, &info) && info.dli_fname) {
		const char *slash = strrchr(info.dli_fname, '/');

		obj = slash ? slash + 1 : info.dli_fname;
		f->pc = ip - (uintptr_t)info.dli_fbase;
		if (!f->function[0] && info.dli_sname && info.dli_saddr) {
			f->function = arena_str(info.dli_sname);
			f->offset = ip - (uintptr_t)info.dli_saddr;
		}
	}
	f->object = arena_str(obj);
}

/* Unwind from here to the frame whose instruction pointer is ra (the caller of the
 * interposer), then describe up to depth frames. */
static uint32_t resolve(uintptr_t ra, struct trace_frame *frames, uint32_t depth)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	unw_word_t ip = 0;
	uint32_t n = 0;
	int steps = 0, found = 0;

	if (unw_getcontext(&ctx) == 0 && unw_init_local(&cur, &ctx) == 0) {
		while (steps++ < 16) {
			if (unw_get_reg(&cur, UNW_REG_IP, &ip) == 0 && ip == ra) {
				found = 1;
				break;
			}
			if (unw_step(&cur) <= 0)
				break;
		}
	}
	if (!found) {
		describe(&frames[0], ra, NULL);
		return 1;
	}
	while (n < depth) {
		describe(&frames[n++], (uintptr_t)ip, &cur);
		if (unw_step(&cur) <= 0 || unw_get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
	}
	return n;
}

static uint32_t site_slow(uintptr_t ra, uint32_t h);

uint32_t rec_site(void *ra_ptr)
{
	uintptr_t ra = (uintptr_t)ra_ptr;
	uint32_t h = (uint32_t)((ra * 0x9E3779B97F4A7C15ull) >> 40) & (SITE_SLOTS - 1);
	struct site *s = &sites[h];

	/* Every event but a site's first in a trace: the site sits in its home slot. */
	if (__builtin_expect(s->ra == ra && s->defined, 1))
		return s->id;
	return site_slow(ra, h);
}

/* Out of line, so that the common case above saves no registers. */
static __attribute__((noinline)) uint32_t site_slow(uintptr_t ra, uint32_t h)
{
	struct site *s;

	for (;;) {
		s = &sites[h];
		if (s->ra == ra || s->ra == 0)
			break;
		h = (h + 1) & (SITE_SLOTS - 1);
	}
	if (s->ra == 0) {
		struct trace_frame tmp[32];
		uint32_t n;

		if (nsites >= SITE_MAX)
			return 0;
		sigset_t all, old;

		/* Resolving takes long (libunwind reads symbol tables) and is not async-signal-
		 * safe: signals wait until it is done.  A handler then runs while we still hold
		 * the guard, so its calls are counted as unlogged (and libunwind's own calls to
		 * libc, inside the internal section, are not). */
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		rec_internal_begin();
		n = resolve(ra, tmp, rec.depth ? rec.depth : 1);
		rec_internal_end();
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		s->frames = arena_frames(n);
		if (!s->frames)
			return 0;
		memcpy(s->frames, tmp, n * sizeof(tmp[0]));
		s->nframes = n;
		s->id = ++nsites;
		s->ra = ra;
	}
	if (!s->defined) {
		if (trace_writer_stack(rec.w, s->id, s->frames, s->nframes) != 0)
			return 0;
		s->defined = 1;
	}
	return s->id;
}

void rec_site_new_trace(void)
{
	uint32_t i;

	for (i = 0; i < SITE_SLOTS; i++)
		sites[i].defined = 0;
}
