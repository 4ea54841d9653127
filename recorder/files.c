/*
 * files.c: file inputs.  The recorder notes every regular file a process opens for reading
 * (open, openat, their 64 and _FORTIFY_SOURCE forms, fopen) and every executable and shared
 * object it maps, in a file input record of its trace (schemas/trace-format.md, "File
 * inputs"): the path as given and resolved, st_dev/st_ino, size, mtime, and for files read a
 * CRC-32C of their first bytes (up to TRACE_FILE_HASH_MAX) taken when opened.  `encore pack`
 * copies what was noted; `encore replay` of an unpacked session refuses to start when a file
 * changed since (replayer/gd_files.c).  Files of the kernel's live state (/proc, /sys) are
 * not noted but made external input (note_kernel_file; README.md, "Kernel-state files").
 *
 * Cost: nothing on the read path (regular files stay unlogged there); per file opened, an
 * fstat (the program's own when it makes one: the note waits for it, see "notes deferred"
 * below; else one shared with the descriptor's classification at its first use), a readlink of /proc/self/fd/N for a relative path, the reads of the hashed prefix (the page cache the
 * program then reads from; once per image for a file opened again unchanged) and one record,
 * which a file opened again by the same names, unchanged, does not get again in the same
 * trace (a static web server's file per request; see note_again).  The objects mapped are listed at the start of
 * each image, again whenever the loader's count of objects loaded grew (dlopen: checked after
 * each file noted) and at exit.  bench/file_bench.c measures it.
 *
 * Paths created (README.md, "Paths created"): every name a process makes where none was (an
 * open or fopen with O_CREAT that made the file, creat, mkdir, a rename's or link's new name
 * where none was, symlink) and every name it removes (unlink, rmdir, remove, a rename's old
 * name) gets a path record with its absolute path, so that an isolated replay can hide what
 * the recording itself created.  Whether an open with O_CREAT but not O_EXCL made the file
 * is asked before the call (one fstatat, on those opens only); a rename's new name likewise
 * (an lstat).  The calls that fail when the name exists need no question.  The answer is
 * never the program's: the call it makes is the one it asked for, its result and errno
 * untouched.
 */
/* open, openat and fopen must keep their own names (the build's _FILE_OFFSET_BITS=64 renames
 * them to their 64 forms, which are rows of their own). */
#undef _FILE_OFFSET_BITS
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "rec.h"

/* Objects already noted in this image, by device and inode: a fixed table (no malloc); past
 * its size, objects are noted again at each scan, which costs records, not correctness. */
#define OBJ_MAX 1024
static struct {
	uint64_t dev, ino;
} objs[OBJ_MAX];
static unsigned nobjs;
static unsigned long long obj_adds; /* dlpi_adds at the last scan: objects ever loaded */
static const char *self_so = "";    /* this library (found before the loader's lock is held) */

/* Scratch for the hashed prefix, used under the writer lock (rec_enter) only. */
static uint8_t hashbuf[64 * 1024];

/* The prefixes hashed in this image, by inode (direct-mapped, under the writer lock): a
 * server opens the same files again and again (a static web server, a configuration read per
 * request), and reading 64 KiB at each open would cost more than the open itself.  A file
 * whose size, mtime and ctime are those it had when hashed gets the same crc without a read;
 * a write in place within one tick of the file system's clock with the size kept is not
 * seen, which the replay's check of size and mtime misses as well. */
#define HASHED_MAX 256
struct hashed_file {
	uint64_t dev, ino, size, hashed;
	int64_t mtime_ns, ctime_ns;
	uint32_t crc;
	int used;
};
static struct hashed_file hashed_files[HASHED_MAX];

/* The files noted in this trace, by inode (direct-mapped, under the writer lock): a file
 * opened again by the same path (and resolved path), with the same dev, inode, mode, size,
 * mtime and ctime, gets no second record: the one already in the trace says all a reader
 * takes from it (`encore pack` and replay's check of the files read, which list each file
 * once).  Not under a disk budget, whose dropped chunks may hold the first record.  A new
 * trace (a forked child's) starts empty (gen).  Names longer than the slot are noted each
 * time. */
#define NOTED_MAX 64
#define NOTED_NAMES 240
struct noted_file {
	uint64_t dev, ino, size;
	int64_t mtime_ns, ctime_ns;
	uint32_t mode, gen, names_len;
	char names[NOTED_NAMES]; /* path, '\0', resolved path, '\0' */
};
static struct noted_file noted_files[NOTED_MAX];
static uint32_t noted_gen = 1; /* 0: a slot never used */

static int64_t mtime_ns(const struct stat *st)
{
	return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

/* Not inputs a replay elsewhere could take along: kernel views and devices. */
static int pseudo_path(const char *p)
{
	/* the second letter first: a server's files per request pay no string compare */
	if (p[0] != '/' || (p[1] != 'p' && p[1] != 's' && p[1] != 'd'))
		return 0;
	return strncmp(p, "/proc/", 6) == 0 || strncmp(p, "/sys/", 5) == 0 ||
	       strncmp(p, "/dev/", 5) == 0;
}

/* A file of the session directory (a trace, the registry): the recorder's, not an input. */
static int in_session(const char *p)
{
	size_t n = rec.dir_len;

	return n && strncmp(p, rec.dir, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

/* The same for a path of known length pl (a memcmp, no scan for the end). */
static int in_session_len(const char *p, size_t pl)
{
	size_t n = rec.dir_len;

	return n && pl >= n && memcmp(p, rec.dir, n) == 0 && (p[n] == '/' || p[n] == '\0');
}

static int obj_seen(uint64_t dev, uint64_t ino)
{
	unsigned i;

	for (i = 0; i < nobjs; i++)
		if (objs[i].dev == dev && objs[i].ino == ino)
			return 1;
	if (nobjs < OBJ_MAX) {
		objs[nobjs].dev = dev;
		objs[nobjs].ino = ino;
		nobjs++;
	}
	return 0;
}

static void fill_stat(struct trace_file_input *f, const struct stat *st)
{
	f->mode = st->st_mode;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = (uint64_t)st->st_size;
	f->mtime_ns = mtime_ns(st);
}

/* (rec.h) The notes are read in place: the loader mapped them with the object. */
int rec_build_id(const struct dl_phdr_info *info, uint8_t *out, size_t cap)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		int n;

		if (ph->p_type == PT_NOTE &&
		    (n = trace_elf_build_id((const void *)(info->dlpi_addr + ph->p_vaddr),
		                            ph->p_memsz, out, cap)) > 0)
			return n;
	}
	return 0;
}

struct scan {
	int first; /* the next object is the main program */
	int lock;  /* take the writer's lock for each record */
};

static int scan_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct trace_file_input f;
	char exe[4096], res[4096];
	const char *path = info->dlpi_name;
	struct stat st;
	struct scan *sc = arg;
	ssize_t n;

	(void)size;
	memset(&f, 0, sizeof(f));
	f.kind = TRACE_FILE_LIB;
	if (sc->first) {
		/* the main program: dlpi_name is "" */
		sc->first = 0;
		obj_adds = info->dlpi_adds;
		if (!path || !path[0]) {
			n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
			if (n <= 0)
				return 0;
			exe[n] = '\0';
			path = exe;
			f.kind = TRACE_FILE_EXE;
		}
	}
	if (!path || path[0] != '/' || stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0; /* the vDSO, or an object gone from the file system */
	if (sc->lock && !rec_enter()) {
		obj_adds = 0; /* not noted now (a fork holds the lock): the next file noted scans */
		return 0;
	}
	/* unless noted already, or the recorder itself (replay has its own) */
	if (!obj_seen(st.st_dev, st.st_ino) && strcmp(path, self_so) != 0) {
		fill_stat(&f, &st);
		n = rec_build_id(info, f.build_id, sizeof(f.build_id));
		f.build_id_len = n > 0 ? (uint32_t)n : 0;
		f.path = path;
		f.resolved = realpath(path, res) ? res : "";
		trace_writer_file(rec.w, &f);
	}
	if (sc->lock)
		rec_leave();
	return 0;
}

/* Note the objects mapped now that were not noted yet.  lock 0: under rec_enter already (the
 * start and the end of an image); lock 1: not, and each record is written under it, taken
 * inside the loader's lock, the order of a program that opens files from dl_iterate_phdr's
 * callback (objs and obj_adds are the loader's lock's then). */
static void scan_objects(int lock)
{
	struct scan sc = { .first = 1, .lock = lock };

	self_so = rec_self_so();
	rec_internal_begin();
	dl_iterate_phdr(scan_cb, &sc);
	rec_internal_end();
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

/* The loader's count of objects ever loaded (compared with obj_adds: a dlopen since). */
static unsigned long long loader_adds(void)
{
	unsigned long long adds = obj_adds;

	rec_internal_begin();
	dl_iterate_phdr(adds_cb, &adds);
	rec_internal_end();
	return adds;
}

/* Scan again if the loader loaded something since the last scan (dlopen). */
static void rescan_if_loaded(void)
{
	if (loader_adds() != obj_adds)
		scan_objects(0);
}

void rec_files_new_trace(void)
{
	noted_gen++;
}

void rec_files_start(void)
{
	if (rec.w)
		scan_objects(0);
}

void rec_files_exit(void)
{
	/* Under the writer lock: the loader's is taken only when no other thread is inside
	 * dl_iterate_phdr (it may wait for the writer's there: recorder/README.md, "Locks");
	 * else the objects loaded since the last file opened are not noted. */
	if (rec.w && !(rec_sandbox & REC_SB_NOFILES) && rec_loader_begin()) {
		rescan_if_loaded();
		rec_loader_end();
	}
}

/* "/proc/self/fd/N" without stdio. */
static void proc_fd_path(char out[64], int fd)
{
	char digits[16];
	int n = 0, i = 0;
	unsigned v = (unsigned)fd;

	memcpy(out, "/proc/self/fd/", 14);
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	while (n > 0)
		out[14 + i++] = digits[--n];
	out[14 + i] = '\0';
}

/* Whether this trace noted the file already as it is now, by the same names (see noted_files);
 * if not, the slot remembers it as noted from now (the caller writes the record). */
static int note_again(const struct stat *st, int64_t ctime_ns, const char *path, size_t pl,
                      const char *res)
{
	struct noted_file *nf;
	size_t rl;

	if (rec.max_bytes || pl >= NOTED_NAMES)
		return 0;
	nf = &noted_files[(st->st_ino ^ (st->st_dev * 31)) % NOTED_MAX];
	rl = res[0] ? strnlen(res, NOTED_NAMES) : 0; /* (an absolute path: none) */
	if (pl + rl + 2 > NOTED_NAMES)
		return 0;
	if (nf->gen == noted_gen && nf->dev == (uint64_t)st->st_dev &&
	    nf->ino == (uint64_t)st->st_ino && nf->size == (uint64_t)st->st_size &&
	    nf->mtime_ns == mtime_ns(st) && nf->ctime_ns == ctime_ns &&
	    nf->mode == (uint32_t)st->st_mode && nf->names_len == pl + rl + 2 &&
	    memcmp(nf->names, path, pl + 1) == 0 &&
	    (rl == 0 ? nf->names[pl + 1] == '\0' : memcmp(nf->names + pl + 1, res, rl + 1) == 0))
		return 1;
	nf->gen = noted_gen;
	nf->dev = (uint64_t)st->st_dev;
	nf->ino = (uint64_t)st->st_ino;
	nf->size = (uint64_t)st->st_size;
	nf->mtime_ns = mtime_ns(st);
	nf->ctime_ns = ctime_ns;
	nf->mode = (uint32_t)st->st_mode;
	nf->names_len = (uint32_t)(pl + rl + 2);
	memcpy(nf->names, path, pl + 1);
	memcpy(nf->names + pl + 1, res, rl + 1);
	return 0;
}

/* Under the writer lock: note fd (opened on path, as the program gave it, with flags) if it
 * is a regular file.  st: what an fstat of it says now, or NULL to make one.  path_len: the
 * path's length when the caller knows it and has found it no pseudo path (a deferred note,
 * note_open tested it), else (size_t)-1.  Returns 1 when a record was written. */
static int note_locked(int fd, const char *path, size_t path_len, int flags,
                       const struct stat *given)
{
	struct trace_file_input f;
	struct stat st;
	char proc[64], res[4096];
	uint64_t want, off = 0;
	uint32_t crc = 0;
	struct hashed_file *hf;
	int64_t ctime_ns;
	ssize_t n;

	(void)flags;
	if (given)
		st = *given;
	else if (fstat(fd, &st) != 0)
		return 0;
	if (!S_ISREG(st.st_mode))
		return 0;
	rec_fd_regular(fd); /* (its first read need not fstat it again) */
	res[0] = '\0';
	if (!path || path[0] != '/') {
		/* relative (to the working directory or a directory descriptor): where it was is
		 * known only now; an absolute path is resolved offline (a system call less) */
		proc_fd_path(proc, fd);
		n = readlink(proc, res, sizeof(res) - 1);
		if (n <= 0)
			return 0;
		res[n] = '\0';
	}
	if (res[0]) {
		if (pseudo_path(res) || in_session(res))
			return 0;
	} else {
		/* absolute: tested by the caller when it knows the length (a server's file per
		 * request pays no second scan of its path) */
		if (path_len == (size_t)-1) {
			if (pseudo_path(path))
				return 0;
			path_len = strlen(path);
		}
		if (in_session_len(path, path_len))
			return 0;
	}
	ctime_ns = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	if (!path)
		path_len = 0;
	else if (path_len == (size_t)-1)
		path_len = strlen(path);
	if (note_again(&st, ctime_ns, path ? path : "", path_len, res))
		return 0;
	memset(&f, 0, sizeof(f));
	f.kind = TRACE_FILE_READ;
	fill_stat(&f, &st);
	want = f.size < TRACE_FILE_HASH_MAX ? f.size : TRACE_FILE_HASH_MAX;
	hf = &hashed_files[(f.ino ^ (f.dev * 31)) % HASHED_MAX];
	if (want && hf->used && hf->dev == f.dev && hf->ino == f.ino && hf->size == f.size &&
	    hf->mtime_ns == f.mtime_ns && hf->ctime_ns == ctime_ns && hf->hashed == want) {
		off = want; /* hashed whole already, unchanged since */
		crc = hf->crc;
	}
	while (off < want) {
		size_t k = want - off < sizeof(hashbuf) ? (size_t)(want - off) : sizeof(hashbuf);

		n = pread(fd, hashbuf, k, (off_t)off);
		if (n <= 0)
			break; /* shorter than it said (it shrank): the hash covers what was there */
		crc = trace_crc32c(crc, hashbuf, (size_t)n);
		off += (uint64_t)n;
	}
	f.hashed = off;
	f.crc = crc;
	if (want) {
		hf->used = 1;
		hf->dev = f.dev;
		hf->ino = f.ino;
		hf->size = f.size;
		hf->mtime_ns = f.mtime_ns;
		hf->ctime_ns = ctime_ns;
		hf->hashed = off;
		hf->crc = crc;
	}
	f.path = path ? path : "";
	f.resolved = res;
	trace_writer_file(rec.w, &f);
	return 1;
}

/* Once the writer lock is left, after a file noted (not one noted already: a server's file
 * per request would pay the loader's lock each time), the objects a dlopen loaded since.
 * The loader's lock is never waited for under the writer's (here: once it is left), as a
 * thread opening a file from inside dl_iterate_phdr (libbacktrace does) holds the loader's
 * and waits for the writer's.  obj_adds is read unlocked: a stale value costs a scan that
 * finds every object noted, or one postponed to the next file noted or the exit. */
static void after_note(int noted)
{
	if (noted && loader_adds() != obj_adds)
		scan_objects(1);
}

/* --- notes deferred to the program's own fstat ----------------------------------------------
 * The note needs what fstat says of the file, and a program that serves files makes that
 * fstat itself right after its open (nginx: open, fstat, pread, close per request).  So an
 * open's note waits, its path copied here, for the first of: the program's fstat of the
 * descriptor (its result is the note's: no system call of ours), the descriptor's first use
 * through an interposed call (which classifies it with one fstat, shared with the note),
 * its close (noted just before), a dup2 or close_range that may close it, an exec, the
 * process's end.  A process killed by SIGKILL loses the notes still waiting (at most
 * DEFER_MAX).  Under the writer lock; rec_files_ndeferred is read unlocked as a hint. */
#define DEFER_MAX 4
static struct {
	int fd, flags;
	size_t len; /* strlen(path) */
	char path[PATH_MAX];
} deferred[DEFER_MAX];
int rec_files_ndeferred;

/* Under the writer lock: keep the note of fd for later; 0 when it must be made now. */
static int defer_note(int fd, const char *path, int flags)
{
	size_t n;
	int i, k = rec_files_ndeferred;

	if (!path || fd >= REC_FD_MAX || (n = strnlen(path, PATH_MAX)) >= PATH_MAX)
		return 0;
	for (i = 0; i < k; i++)
		if (deferred[i].fd == fd)
			break; /* (its close went unseen: the old note is lost, the number reused) */
	if (i == k) {
		if (k == DEFER_MAX)
			return 0;
		rec_files_ndeferred = k + 1;
	}
	deferred[i].fd = fd;
	deferred[i].flags = flags;
	deferred[i].len = n;
	memcpy(deferred[i].path, path, n + 1);
	return 1;
}

static void drop_deferred(int i)
{
	int last = --rec_files_ndeferred;

	if (i != last)
		deferred[i] = deferred[last];
}

/* Under the writer lock: make the deferred note of slot i (st as for note_locked).  The slot
 * is marked taken first: the note maps the number anew (rec_fd_regular), which must not
 * drop it as stale (rec_files_fresh). */
static int note_deferred(int i, const struct stat *st)
{
	int fd = deferred[i].fd, noted;

	deferred[i].fd = -1;
	/* (note_open found it no pseudo path before deferring it) */
	noted = note_locked(fd, deferred[i].path, deferred[i].len, deferred[i].flags, st);
	drop_deferred(i);
	return noted;
}

static int deferred_slot(int fd)
{
	for (int i = 0; i < rec_files_ndeferred; i++)
		if (deferred[i].fd == fd)
			return i;
	return -1;
}

/* Under the writer lock: fd was taken anew (an open, socket, pipe, accept or dup the
 * recorder saw).  A note still waiting for that number is of a file whose close went unseen
 * (closedir after fdopendir closes inside libc): it is dropped, not made later on whatever
 * the number is now (the program's fstat of the new file gave a directory's note its size,
 * and replay refused the directory as changed). */
void rec_files_fresh(int fd)
{
	int i = deferred_slot(fd);

	if (i >= 0)
		drop_deferred(i);
}

/* The same, outside the writer lock: an open of the program's that makes no deferred note. */
static void fresh_number(int fd)
{
	if (fd < 0 || __builtin_expect(rec_files_ndeferred == 0, 1) || rec_busy() ||
	    !rec_enter())
		return;
	rec_files_fresh(fd);
	rec_leave();
}

/* The notes' own system calls (fstat, readlink, the hash's reads) leave errno as the
 * program's call before them set it: these run before or after one of its calls. */
void rec_files_use(int fd, const struct stat *st)
{
	int i = deferred_slot(fd), e = errno;

	if (i >= 0)
		note_deferred(i, st);
	errno = e;
}

void rec_files_flush(void)
{
	int e = errno;

	while (rec_files_ndeferred > 0)
		note_deferred(rec_files_ndeferred - 1, NULL);
	errno = e;
}

void rec_files_closing(int fd)
{
	int noted = 0, i, e = errno;

	/* (a close of the recorder's own, rec_busy, is no call of the program's left unlogged) */
	if (rec_busy() || !rec_enter()) {
		errno = e; /* (the lock's wait may have set it) */
		return;
	}
	if (fd < 0) {
		noted = rec_files_ndeferred > 0;
		rec_files_flush();
	} else if ((i = deferred_slot(fd)) >= 0) {
		noted = note_deferred(i, NULL);
	}
	rec_leave();
	after_note(noted);
	errno = e;
}

/* fstat and fstat64 (one function on 64-bit glibc, two symbols): the real call; then, if an
 * open's note waits for this descriptor, it is made with what the program got. */
static int note_fstat(int r, int fd, const struct stat *st)
{
	int e = errno, noted = 0, i;

	/* (the recorder's own fstat, rec_busy, is no program's: entering would count it as a
	 * call left unlogged) */
	if (r == 0 && __builtin_expect(rec_files_ndeferred != 0, 0) && !rec_busy() &&
	    rec_enter()) {
		if ((i = deferred_slot(fd)) >= 0)
			noted = note_deferred(i, st);
		rec_leave();
		after_note(noted);
	}
	errno = e;
	return r;
}

REC_EXPORT int fstat(int fd, struct stat *st)
{
	return note_fstat(IP_REAL(fstat)(fd, st), fd, st);
}

REC_EXPORT int fstat64(int fd, struct stat64 *st)
{
	int r = IP_REAL(fstat64)(fd, st);

	_Static_assert(sizeof(struct stat) == sizeof(struct stat64), "one layout on 64-bit");
	return note_fstat(r, fd, (const struct stat *)st);
}

/* fdopendir: closedir will close fd inside libc, where the recorder does not see it; an open's
 * note waiting for fd is made now (a directory's is none: the slot goes). */
REC_EXPORT DIR *fdopendir(int fd)
{
	if (fd >= 0 && __builtin_expect(rec_files_ndeferred != 0, 0))
		rec_files_closing(fd); /* (errno kept) */
	return IP_REAL(fdopendir)(fd);
}

/* fd was opened (path as the program gave it) with `flags`: note it if it is a regular file
 * opened for reading, now or (defer: an open, not fopen, whose reads are inside libc) at the
 * program's fstat of it or its first use.  errno is the caller's to keep. */
static void note_open(int fd, const char *path, int flags, int defer)
{
	int noted;

	if (fd < 0)
		return;
	/* (no note: a note still waiting for the number is dropped, rec_files_fresh) */
	if ((rec_sandbox & REC_SB_NOFILES) || /* a seccomp filter forbids the recorder's calls */
	    (flags & O_ACCMODE) == O_WRONLY || (flags & O_PATH) || rec_busy() || !rec.w ||
	    (path && pseudo_path(path))) { /* (pseudo: never noted, no fstat for it) */
		fresh_number(fd);
		return;
	}
	if (!rec_enter())
		return;
	if (defer && defer_note(fd, path, flags)) {
		rec_leave();
		return;
	}
	rec_files_fresh(fd);
	noted = note_locked(fd, path, (size_t)-1, flags, NULL);
	rec_leave();
	after_note(noted);
}

/* Kernel-state files (/proc, /sys: README.md, "Kernel-state files"): fd, opened read-only on
 * an absolute path under /proc/ or /sys/, is external input when it is a regular file of
 * procfs or sysfs (not /proc/self/exe, /proc/self/fd/N, /proc/self/cwd/...: those reach
 * other file systems).  Its reads are then logged with their bytes and replayed from the
 * trace.  The recorder's own opens (the loader's, libunwind's) are made with the guard held
 * and stay real.  Other paths cost the prefix compare only.  errno is the caller's to keep. */
static void note_kernel_file(int fd, const char *path, int flags)
{
	struct statfs sf;
	struct stat st;

	if (rec_sandbox & REC_SB_NOFILES)
		return; /* a seccomp filter forbids the recorder's calls here (guard.c) */
	if (fd < 0 || !path || path[0] != '/' || (path[1] != 'p' && path[1] != 's') ||
	    (strncmp(path, "/proc/", 6) != 0 && strncmp(path, "/sys/", 5) != 0))
		return;
	if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_PATH | O_DIRECTORY)) || rec_busy() ||
	    !rec.w)
		return;
	if (!rec_enter())
		return;
	if (fstatfs(fd, &sf) == 0 && fstat(fd, &st) == 0 &&
	    ip_kernel_state_file((long)sf.f_type, st.st_mode))
		rec_chan_kernel_file(fd, (uint64_t)st.st_ino, NULL);
	rec_leave();
}

static int open_has_mode(int flags)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
}

/* --- paths created and removed ------------------------------------------------------ */

/* An absolute path for `path` relative to dirfd (AT_FDCWD: the working directory) in out:
 * the directory's path, '/', the name without leading "./".  0, or -1 when it does not fit
 * or the directory has no path.  Under the writer lock (out is its scratch). */
static int abs_path(int dirfd, const char *path, char *out, size_t cap)
{
	size_t bl, pl;
	char proc[64];
	ssize_t n;

	if (path[0] != '/') {
		if (dirfd == AT_FDCWD) {
			if (!getcwd(out, cap))
				return -1;
		} else {
			proc_fd_path(proc, dirfd);
			if ((n = readlink(proc, out, cap - 1)) <= 0)
				return -1;
			out[n] = '\0';
		}
		if (out[0] != '/')
			return -1; /* "(unreachable)", a descriptor of no directory */
		while (path[0] == '.' && path[1] == '/')
			for (path += 2; path[0] == '/'; path++)
				;
		bl = strlen(out);
		if (bl > 1 && path[0])
			out[bl++] = '/';
	} else {
		bl = 0;
	}
	pl = strlen(path);
	if (bl + pl + 1 > cap)
		return -1;
	memcpy(out + bl, path, pl + 1);
	return 0;
}

/* Scratch for path records' names, under the writer lock. */
static char pathbuf[TRACE_FILE_PATH_MAX + 1], frombuf[TRACE_FILE_PATH_MAX + 1];

/* Note that the process made (op: enum trace_path_op) or removed the name `path` relative to
 * dirfd; fd >= 0: a descriptor of the file it created, whose path the kernel knows; old (not
 * NULL): the name a rename took it from, relative to olddirfd.  errno is the caller's to
 * keep. */
static void note_path_from(uint32_t op, int fd, int dirfd, const char *path, int olddirfd,
                           const char *old)
{
	struct timespec ts = { 0, 0 };
	ssize_t n = -1;
	char proc[64];
	int e = errno;

	if ((rec_sandbox & REC_SB_NOFILES) || !path || !path[0] || rec_busy() || !rec.w)
		return;
	if (!rec_enter())
		return;
	if (fd >= 0) {
		proc_fd_path(proc, fd);
		if ((n = readlink(proc, pathbuf, sizeof(pathbuf) - 1)) > 0 && pathbuf[0] == '/')
			pathbuf[n] = '\0';
		else
			n = -1;
	}
	if ((n > 0 || abs_path(dirfd, path, pathbuf, sizeof(pathbuf)) == 0) &&
	    !pseudo_path(pathbuf) && !in_session(pathbuf)) {
		if (real_clock_gettime)
			real_clock_gettime(CLOCK_REALTIME, &ts);
		if (!old || abs_path(olddirfd, old, frombuf, sizeof(frombuf)) != 0 ||
		    pseudo_path(frombuf) || in_session(frombuf))
			frombuf[0] = '\0';
		trace_writer_path(rec.w, op, (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec, pathbuf,
		                  frombuf[0] ? frombuf : NULL);
	}
	rec_leave();
	errno = e;
}

static void note_path(uint32_t op, int fd, int dirfd, const char *path)
{
	note_path_from(op, fd, dirfd, path, AT_FDCWD, NULL);
}

/* Before a call that creates `path` (relative to dirfd) only if it is not there: 1 when
 * nothing is there now (follow: a final symbolic link followed, as open does), 0 when
 * something is, or when nothing will be noted anyway.  errno is the caller's to keep. */
static int path_absent(int dirfd, const char *path, int follow)
{
	struct stat st;
	int e = errno, absent;

	/* (the path not read here: a bad pointer is the kernel's to refuse, EFAULT) */
	if ((rec_sandbox & REC_SB_NOFILES) || !path || rec_busy() || !rec.w)
		return 0;
	absent = fstatat(dirfd, path, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) != 0 &&
	         errno == ENOENT;
	errno = e;
	return absent;
}

/* Whether an open with these flags may create its file, and whether it tells us when it
 * did (O_EXCL: it fails otherwise); O_TMPFILE makes no name. */
static int open_creates(int flags)
{
	return (flags & O_CREAT) && (flags & O_TMPFILE) != O_TMPFILE;
}

/* Before an open (dirfd, path, flags): 1 when, should it succeed, it created the file. */
static int open_will_create(int dirfd, const char *path, int flags)
{
	if (__builtin_expect(!open_creates(flags), 1))
		return 0;
	return (flags & O_EXCL) ? 1 : path_absent(dirfd, path, 1);
}

/* The real call's result and errno, the open noted in between. */
#define OPEN_BODY(call, dirfd)                                            \
	do {                                                              \
		int r_, e_, c_ = open_will_create(dirfd, path, flags);   \
		r_ = call;                                                \
		e_ = errno;                                               \
		REC_FD_ORDER; /* after the call, which may block (a FIFO) */ \
		if (__builtin_expect(rec.threads, 0) && r_ >= 0 && !rec_busy()) \
			rec_fdnum(TRACE_CALL_OPEN, r_, r_, 1,             \
			          __builtin_return_address(0));           \
		/* not held across the notes: they may take the loader's \
		 * lock (dl_iterate_phdr), which a thread opening a file \
		 * from a dl_iterate_phdr callback holds */               \
		rec_fd_order_end(&rec_fd_held_);                          \
		rec_fd_held_ = 0;                                         \
		if (__builtin_expect(c_, 0) && r_ >= 0)                   \
			note_path(TRACE_PATH_FILE, r_, dirfd, path);      \
		note_open(r_, path, flags, 1);                            \
		note_kernel_file(r_, path, flags);                        \
		errno = e_;                                               \
		return r_;                                                \
	} while (0)

/* open, openat and their 64 forms: the mode argument is there only when the flags say so. */
#define OPEN_VARIADIC(fn, params, args, dirfd)            \
	REC_EXPORT int fn params                          \
	{                                                 \
		mode_t mode = 0;                          \
                                                          \
		if (open_has_mode(flags)) {               \
			va_list ap;                       \
                                                          \
			va_start(ap, flags);              \
			mode = va_arg(ap, mode_t);        \
			va_end(ap);                       \
		}                                         \
		OPEN_BODY(IP_REAL(fn) args, dirfd);       \
	}

OPEN_VARIADIC(open, (const char *path, int flags, ...), (path, flags, mode), AT_FDCWD)
OPEN_VARIADIC(open64, (const char *path, int flags, ...), (path, flags, mode), AT_FDCWD)
OPEN_VARIADIC(openat, (int dirfd, const char *path, int flags, ...), (dirfd, path, flags, mode),
              dirfd)
OPEN_VARIADIC(openat64, (int dirfd, const char *path, int flags, ...),
              (dirfd, path, flags, mode), dirfd)

/* The _FORTIFY_SOURCE forms, which take no mode (nor O_CREAT, which needs one). */
#define OPEN_FORTIFIED(fn, params, args, dirfd)           \
	REC_EXPORT int fn params                          \
	{                                                 \
		OPEN_BODY(IP_REAL(fn) args, dirfd);       \
	}

OPEN_FORTIFIED(__open_2, (const char *path, int flags), (path, flags), AT_FDCWD)
OPEN_FORTIFIED(__open64_2, (const char *path, int flags), (path, flags), AT_FDCWD)
OPEN_FORTIFIED(__openat_2, (int dirfd, const char *path, int flags), (dirfd, path, flags), dirfd)
OPEN_FORTIFIED(__openat64_2, (int dirfd, const char *path, int flags), (dirfd, path, flags),
               dirfd)

/* creat: open(path, O_CREAT | O_WRONLY | O_TRUNC, mode), made inside glibc past open's
 * interposer. */
#define CREAT(fn)                                                                  \
	REC_EXPORT int fn(const char *path, mode_t mode)                           \
	{                                                                          \
		int flags = O_CREAT | O_WRONLY | O_TRUNC;                          \
                                                                                   \
		OPEN_BODY(IP_REAL(fn)(path, mode), AT_FDCWD);                      \
	}

CREAT(creat)
CREAT(creat64)

/* Whether fopen's mode creates the file ('w', 'a'), and tells when it did ('x'). */
static int fopen_will_create(const char *path, const char *mode)
{
	if (!mode || (mode[0] != 'w' && mode[0] != 'a'))
		return 0;
	return strchr(mode, 'x') ? 1 : path_absent(AT_FDCWD, path, 1);
}

/* fopen's mode reads when it starts with 'r' or has a '+'. */
static FILE *note_fopen(FILE *f, const char *path, const char *mode, int created)
{
	int e = errno;

	if (f && created)
		note_path(TRACE_PATH_FILE, fileno(f), AT_FDCWD, path);
	if (f && mode && (mode[0] == 'r' || strchr(mode, '+')))
		note_open(fileno(f), path, O_RDONLY, 0);
	else if (f)
		fresh_number(fileno(f));
	if (f && mode && mode[0] == 'r' && !strchr(mode, '+'))
		note_kernel_file(fileno(f), path, O_RDONLY);
	errno = e;
	return f;
}

/* With threads, the number fopen's open took (chan.c, rec_fdnum), under the fd-order lock
 * (*held), which is let go here: the note after may take the loader's lock (OPEN_BODY). */
static FILE *fdnum_fopen(FILE *f, void *ra, int *held)
{
	int e = errno;

	if (__builtin_expect(rec.threads, 0) && f && !rec_busy())
		rec_fdnum(TRACE_CALL_OPEN, fileno(f), fileno(f), 1, ra);
	rec_fd_order_end(held);
	*held = 0;
	errno = e;
	return f;
}

REC_EXPORT FILE *fopen(const char *path, const char *mode)
{
	int created = fopen_will_create(path, mode);
	FILE *f = IP_REAL(fopen)(path, mode);
	REC_FD_ORDER; /* after the call, which may block (a FIFO) */

	return note_fopen(fdnum_fopen(f, __builtin_return_address(0), &rec_fd_held_), path,
	                  mode, created);
}

REC_EXPORT FILE *fopen64(const char *path, const char *mode)
{
	int created = fopen_will_create(path, mode);
	FILE *f = IP_REAL(fopen64)(path, mode);
	REC_FD_ORDER; /* after the call, which may block (a FIFO) */

	return note_fopen(fdnum_fopen(f, __builtin_return_address(0), &rec_fd_held_), path,
	                  mode, created);
}

/* The calls that fail when the name exists (mkdir, link, symlink) made it when they
 * succeed; unlink, rmdir and remove removed it.  errno is the real call's. */
static int made(int rc, uint32_t op, int dirfd, const char *path)
{
	if (rc == 0)
		note_path(op, -1, dirfd, path);
	return rc;
}

REC_EXPORT int mkdir(const char *path, mode_t mode)
{
	return made(IP_REAL(mkdir)(path, mode), TRACE_PATH_DIR, AT_FDCWD, path);
}

REC_EXPORT int mkdirat(int dirfd, const char *path, mode_t mode)
{
	return made(IP_REAL(mkdirat)(dirfd, path, mode), TRACE_PATH_DIR, dirfd, path);
}

REC_EXPORT int link(const char *old, const char *path)
{
	return made(IP_REAL(link)(old, path), TRACE_PATH_LINK, AT_FDCWD, path);
}

REC_EXPORT int linkat(int olddirfd, const char *old, int dirfd, const char *path, int flags)
{
	return made(IP_REAL(linkat)(olddirfd, old, dirfd, path, flags), TRACE_PATH_LINK, dirfd,
	            path);
}

REC_EXPORT int symlink(const char *old, const char *path)
{
	return made(IP_REAL(symlink)(old, path), TRACE_PATH_LINK, AT_FDCWD, path);
}

REC_EXPORT int symlinkat(const char *old, int dirfd, const char *path)
{
	return made(IP_REAL(symlinkat)(old, dirfd, path), TRACE_PATH_LINK, dirfd, path);
}

REC_EXPORT int unlink(const char *path)
{
	return made(IP_REAL(unlink)(path), TRACE_PATH_REMOVED, AT_FDCWD, path);
}

REC_EXPORT int unlinkat(int dirfd, const char *path, int flags)
{
	return made(IP_REAL(unlinkat)(dirfd, path, flags), TRACE_PATH_REMOVED, dirfd, path);
}

REC_EXPORT int rmdir(const char *path)
{
	return made(IP_REAL(rmdir)(path), TRACE_PATH_REMOVED, AT_FDCWD, path);
}

REC_EXPORT int remove(const char *path)
{
	return made(IP_REAL(remove)(path), TRACE_PATH_REMOVED, AT_FDCWD, path);
}

/* A rename that succeeded: its new name is made when nothing was there before (absent, or
 * RENAME_NOREPLACE), with the old name it came from, and its old name removed when it is
 * gone now (a rename between two links of one file leaves both; RENAME_EXCHANGE swaps two
 * names that both stay).  errno is the real call's. */
static int renamed(int rc, int olddirfd, const char *old, int dirfd, const char *path,
                   int absent, unsigned flags)
{
	int gone;

	if (rc != 0 || (flags & RENAME_EXCHANGE))
		return rc;
	gone = path_absent(olddirfd, old, 0);
	if (absent || (flags & RENAME_NOREPLACE))
		note_path_from(TRACE_PATH_LINK, -1, dirfd, path, olddirfd, gone ? old : NULL);
	if (gone)
		note_path(TRACE_PATH_REMOVED, -1, olddirfd, old);
	return rc;
}

REC_EXPORT int rename(const char *old, const char *path)
{
	int absent = path_absent(AT_FDCWD, path, 0);

	return renamed(IP_REAL(rename)(old, path), AT_FDCWD, old, AT_FDCWD, path, absent, 0);
}

REC_EXPORT int renameat(int olddirfd, const char *old, int dirfd, const char *path)
{
	int absent = path_absent(dirfd, path, 0);

	return renamed(IP_REAL(renameat)(olddirfd, old, dirfd, path), olddirfd, old, dirfd, path,
	               absent, 0);
}

REC_EXPORT int renameat2(int olddirfd, const char *old, int dirfd, const char *path,
                         unsigned int flags)
{
	int absent = flags & (RENAME_NOREPLACE | RENAME_EXCHANGE) ? 0 :
	             path_absent(dirfd, path, 0);

	return renamed(IP_REAL(renameat2)(olddirfd, old, dirfd, path, flags), olddirfd, old,
	               dirfd, path, absent, flags);
}
