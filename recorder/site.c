/*
 * site.c: call-site ids.  The return address of an intercepted call is unwound once with
 * libunwind (`depth` frames) and interned: the per-trace stack table gets a definition
 * (trace_writer_stack) the first time a site is used in a trace, and every later event from
 * the same return address costs one hash lookup.
 *
 * Resolving runs inside an interposer, wherever the program happens to be: in the middle of
 * its allocator (jemalloc reads the clock inside its thread-cache work), in a signal handler,
 * while other threads unmap libraries.  So it does nothing that may allocate or take a lock
 * the program may hold: no symbol lookup in process (unw_get_proc_name maps and mallocs,
 * dladdr takes the loader lock held across dlopen's mallocs), every memory read of the walk
 * goes through process_vm_readv (a frame it cannot read ends the walk instead of faulting),
 * and errno is kept.  A frame is stored as its object's path and its address in that object
 * as the object's ELF symbol table counts them; libtrace's reader names the function offline
 * from that symbol table (schemas/trace-format.md, "Call-site stacks").
 *
 * Lock order (recorder/README.md, "Locks"): a site is resolved under the writer lock, and a
 * program thread may hold the loader's list lock (inside a dl_iterate_phdr callback:
 * libbacktrace, libunwind, exception unwinding) and wait for the writer lock in an
 * interposed call.  So the loader's lock is never waited for here while such a thread may
 * exist: frames are described with _dl_find_object (lock-free), and libunwind's walk, which
 * finds unwind tables through dl_iterate_phdr, runs only when no other thread is inside
 * dl_iterate_phdr (counted by our dl_iterate_phdr, below); otherwise the site gets its return
 * address alone.
 *
 * A site is keyed by its return address only: the deeper frames are those seen the first
 * time (documented in recorder/README.md).  Storage is fixed (no malloc): a table of
 * addresses and an mmap'd arena for frames and object paths, filled at most once per site.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "rec.h"
#include "unwind.h"

#define SITE_SLOTS 8192 /* power of two */
#define SITE_MAX (SITE_SLOTS / 2)
#define NAME_ARENA (2u << 20)
#define OBJ_MAX 512     /* distinct object paths interned */

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
static const char *objs[OBJ_MAX];
static uint32_t nobjs;
static long self_pid;

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

/* Object paths repeat across sites: each is stored once. */
static const char *intern_obj(const char *s)
{
	uint32_t i;

	for (i = 0; i < nobjs; i++)
		if (strncmp(objs[i], s, 255) == 0)
			return objs[i];
	s = arena_str(s);
	if (nobjs < OBJ_MAX && *s)
		objs[nobjs++] = s;
	return s;
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

/* --- checked memory reads for libunwind ---------------------------------------------------
 * libunwind reads the stack and the unwind tables through the address space's access_mem;
 * the local one dereferences (after an msync probe that another thread's munmap can
 * overtake).  process_vm_readv on ourselves fails with EFAULT instead of faulting. */

static int checked_access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *val, int write,
                              void *arg)
{
	struct iovec local = { val, sizeof(*val) }, remote = { (void *)addr, sizeof(*val) };

	(void)as;
	(void)arg;
	if (write)
		return -UNW_EINVAL; /* local unwinding for names never writes */
	if (syscall(SYS_process_vm_readv, self_pid, &local, 1UL, &remote, 1UL, 0UL) !=
	    (long)sizeof(*val))
		return -UNW_EINVAL;
	return 0;
}

/* 1 when every read of the walk is checked; 0 when it cannot be (no process_vm_readv: a
 * seccomp filter, an old kernel), and then only the return address itself is logged. */
static int checked_reads(void)
{
	static int state; /* 0 unknown, 1 usable, -1 not */
	unw_accessors_t *acc;
	unw_word_t probe = 0, v = 0;

	self_pid = syscall(SYS_getpid); /* per call: a forked child has another pid */
	if (rec.fd_low)
		return 0; /* libunwind's first walk makes a pipe, among the program's numbers (core.c) */
	if (!ip_unw.ok)
		return 0; /* libunwind could not be opened (interpose/unwind.h) */
	if (state == 0) {
		state = -1;
		if (checked_access_mem(*ip_unw.local_addr_space, (unw_word_t)&probe, &v, 0, NULL) == 0 &&
		    (acc = ip_unw.get_accessors(*ip_unw.local_addr_space)) != NULL) {
			acc->access_mem = checked_access_mem;
			/* No cache: libunwind's global one is guarded by a mutex that a fork in
			 * another thread could leave held in the child.  Walks are once per site. */
			ip_unw.set_caching_policy(*ip_unw.local_addr_space, UNW_CACHE_NONE);
			state = 1;
		}
	}
	return state == 1;
}

/* --- the loader's lock: taken in the program's order only ---------------------------------
 * Our dl_iterate_phdr (the program's calls, libunwind's, the recorder's own: the loader
 * exports it, the preload comes first) counts the threads inside it (phdr_inside).  A
 * resolver under the writer lock announces itself (phdr_resolver) and then looks at the
 * count; a thread entering dl_iterate_phdr counts itself and then looks at the
 * announcement (both sequentially consistent: at least one sees the other).  The resolver
 * walks only when it saw no other thread inside; an entering thread that sees a resolver
 * steps back and waits, holding neither lock, until the resolver is done.  So no thread
 * holds the loader's lock and waits for the writer's while a resolver holds the writer's and
 * waits for the loader's. */

typedef int (*phdr_cb)(struct dl_phdr_info *, size_t, void *);
static int (*real_dl_iterate_phdr)(phdr_cb, void *);
static int phdr_inside;   /* threads inside dl_iterate_phdr */
static int phdr_resolver; /* a thread resolves a site with libunwind (under the writer lock) */
static __thread int phdr_mine __attribute__((tls_model("initial-exec"))); /* this thread's */
static __thread int resolver_self __attribute__((tls_model("initial-exec")));

static int phdr_real(phdr_cb cb, void *arg)
{
	if (!real_dl_iterate_phdr) {
		/* the constructor's job; here only when a library's constructor unwinds first */
		ip_guard(1);
		*(void **)&real_dl_iterate_phdr = dlsym(RTLD_NEXT, "dl_iterate_phdr");
		ip_guard(-1);
		if (!real_dl_iterate_phdr)
			return 0;
	}
	return real_dl_iterate_phdr(cb, arg);
}

__attribute__((constructor)) static void site_init(void)
{
	ip_guard(1);
	*(void **)&real_dl_iterate_phdr = dlsym(RTLD_NEXT, "dl_iterate_phdr");
	ip_guard(-1);
}

REC_EXPORT int dl_iterate_phdr(phdr_cb cb, void *arg)
{
	int r;

	if (resolver_self)
		return phdr_real(cb, arg); /* libunwind's walk: the resolver saw nobody inside */
	for (;;) {
		__atomic_fetch_add(&phdr_inside, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&phdr_resolver, __ATOMIC_SEQ_CST) || phdr_mine)
			break; /* (already inside: the resolver saw us and does not walk) */
		__atomic_fetch_sub(&phdr_inside, 1, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&phdr_resolver, __ATOMIC_ACQUIRE))
			syscall(SYS_sched_yield);
	}
	phdr_mine++;
	r = phdr_real(cb, arg);
	phdr_mine--;
	__atomic_fetch_sub(&phdr_inside, 1, __ATOMIC_RELEASE);
	return r;
}

/* Under the writer lock: 1 when this thread may take the loader's lock (no other thread is
 * inside dl_iterate_phdr, and none enters until rec_loader_end); 0 when it must not. */
int rec_loader_begin(void)
{
	resolver_self = 1;
	__atomic_store_n(&phdr_resolver, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&phdr_inside, __ATOMIC_SEQ_CST) == phdr_mine)
		return 1;
	__atomic_store_n(&phdr_resolver, 0, __ATOMIC_RELEASE);
	resolver_self = 0;
	return 0;
}

void rec_loader_end(void)
{
	if (resolver_self) {
		__atomic_store_n(&phdr_resolver, 0, __ATOMIC_RELEASE);
		resolver_self = 0;
	}
}

/* The executable's path: the loader names it "".  Read once per image (an exec loads us
 * afresh); paths are stored up to 255 bytes, as the trace format keeps them. */
static const char *exe_path(void)
{
	static char exe[256];

	if (!exe[0]) {
		long n = syscall(SYS_readlink, "/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
	}
	return exe;
}

static void describe(struct trace_frame *f, uintptr_t ip)
{
	struct dl_find_object fo;
	const char *name;

	f->pc = ip;
	f->offset = 0;
	f->function = "";
	f->object = "";
	/* lock-free (glibc 2.35): never the loader's lock, whoever holds it */
	if (_dl_find_object((void *)ip, &fo) != 0 || !fo.dlfo_link_map)
		return; /* JIT code, or an object unmapped since: the absolute address */
	f->pc = ip - fo.dlfo_link_map->l_addr;
	name = fo.dlfo_link_map->l_name;
	f->object = intern_obj(name && name[0] ? name : exe_path());
}

/* Unwind from here to the frame whose instruction pointer is ra (the caller of the
 * interposer), then describe up to depth frames.  A frame libunwind cannot read ends the
 * walk; when reads cannot be checked, only ra is described. */
static uint32_t resolve(uintptr_t ra, struct trace_frame *frames, uint32_t depth)
{
	unw_context_t ctx;
	unw_cursor_t cur;
	unw_word_t ip = 0;
	uint32_t n = 0;
	int steps = 0, found = 0;

	if (depth > 1 && checked_reads() && rec_loader_begin() && ip_unw.getcontext(&ctx) == 0 &&
	    ip_unw.init_local(&cur, &ctx) == 0) {
		while (steps++ < 16) {
			if (ip_unw.get_reg(&cur, UNW_REG_IP, &ip) == 0 && ip == ra) {
				found = 1;
				break;
			}
			if (ip_unw.step(&cur) <= 0)
				break;
		}
	}
	if (!found) {
		rec_loader_end();
		describe(&frames[0], ra);
		return 1;
	}
	while (n < depth) {
		describe(&frames[n++], (uintptr_t)ip);
		if (ip_unw.step(&cur) <= 0 || ip_unw.get_reg(&cur, UNW_REG_IP, &ip) != 0 || ip == 0)
			break;
	}
	rec_loader_end();
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
		int saved = errno;

		/* Unwinding reads unwind tables and is not async-signal-safe: signals wait until
		 * it is done (raw sigprocmask: pthread_sigmask is libc's, and may be interposed by
		 * the program).  A handler then runs while we still hold the guard, so its calls
		 * are counted as unlogged (and libunwind's own calls to libc, inside the internal
		 * section, are not). */
		if (__builtin_expect(rec_sandbox & REC_SB_NOWALK, 0)) {
			/* a seccomp filter forbids the walk's calls: the return address alone */
			describe(&tmp[0], ra);
			n = 1;
		} else {
			sigfillset(&all);
			syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, &old, (size_t)_NSIG / 8);
			rec_internal_begin();
			n = resolve(ra, tmp, rec.depth ? rec.depth : 1);
			rec_internal_end();
			syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, (size_t)_NSIG / 8);
		}
		errno = saved;
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

void rec_site_prepare(void)
{
	exe_path();
}

void rec_site_new_trace(void)
{
	uint32_t i;

	/* a forked child: the threads counted inside dl_iterate_phdr were the parent's */
	__atomic_store_n(&phdr_inside, phdr_mine, __ATOMIC_RELAXED);
	__atomic_store_n(&phdr_resolver, 0, __ATOMIC_RELAXED);

	for (i = 0; i < SITE_SLOTS; i++)
		sites[i].defined = 0;
}
