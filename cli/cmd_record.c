/*
 * cmd_record.c: `encore record` runs a program with libencore-record.so preloaded, so that
 * it and every process it forks or execs is recorded into the session directory, then
 * reports what the recorder could not guarantee (threads, processes left unrecorded).
 *
 * The recorder gets its whole configuration in one environment variable, ENCORE_RECORD
 * (recorder/README.md); this command only prepares the directory, checks the program can
 * be recorded at all (static binaries cannot be: LD_PRELOAD needs the dynamic loader), and
 * waits.
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/random.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "interpose.h"
#include "commands.h"

#define SESSION_ID_FILE ".encore-session"
#define LIB_NAME "libencore-record.so"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore record - run a program and record every process it starts\n\n"
	        "SYNOPSIS\n"
	        "    encore record [-o DIR] [--name NAME] [--session DIR] [OPTIONS] -- CMD [ARGS...]\n\n"
	        "DESCRIPTION\n"
	        "    Runs CMD with the recorder (" LIB_NAME ") preloaded.  CMD and every\n"
	        "    process it forks or execs are recorded, each image into its own trace file\n"
	        "    in the session directory: NAME.trace for the root, P.k.trace for the k-th\n"
	        "    child a process P forks, P@s.trace for its image after its s-th exec.\n"
	        "    Recorded: channel creation and use (sockets, socketpairs, pipes), the order\n"
	        "    and size of bytes exchanged between recorded processes with a running\n"
	        "    content hash, the bytes themselves when they come from outside the session\n"
	        "    (stdin, an unrecorded peer), readiness results, clocks, random values, pids,\n"
	        "    fork, exec, exit and fatal signals, and a call site per event.  See\n"
	        "    recorder/README.md for how the recorder decides who is recorded.\n\n"
	        "    The exit status is CMD's (128+N when it was killed by signal N).  After the\n"
	        "    run, a warning names each recorded process in which a thread the recorder\n"
	        "    did not see start (one a library made inside libc) made calls: their order\n"
	        "    is not recorded; a line names each trace the recorder stopped while its\n"
	        "    process ran on (\"trace T truncated after event N: REASON\": a full disk, a\n"
	        "    seccomp filter the program installed...), and a warning each process that\n"
	        "    went unrecorded (forked after a privilege drop, a set-user-ID program\n"
	        "    executed...), with the event that started it.  Static binaries are refused\n"
	        "    before running.\n\n"
	        "    encore's options come before CMD: the first argument that is not one of\n"
	        "    them, or every argument after --, is CMD, and the options after it are\n"
	        "    CMD's own.\n\n"
	        "OPTIONS\n"
	        "    -o, --output DIR    session directory, created with mode 0700 if missing\n"
	        "                        (an existing one must be yours and closed to others;\n"
	        "                        one that holds a session is joined, with a note);\n"
	        "                        default ./encore-NAME-YYYYmmdd-HHMMSS (-2, -3... when\n"
	        "                        that exists)\n"
	        "    --session DIR       join an existing session (another root recorded into the\n"
	        "                        same directory, e.g. a server and its clients started from\n"
	        "                        different shells); created if it does not exist\n"
	        "    --name NAME         logical name of the root process (letters, digits, '.',\n"
	        "                        '_', '-'); default: CMD's base name\n"
	        "    --hash-every K      a content hash every K events of a channel direction\n"
	        "                        (default 64)\n"
	        "    --depth N           call-site frames resolved per site (default 4, 0 = none)\n"
	        "    --max-bytes N       disk budget per trace file; the oldest chunks are dropped\n"
	        "                        beyond it, and the trace says so (default unbounded).\n"
	        "                        The file holds its header and its tail (the events not\n"
	        "                        yet compressed, 64 KiB) besides: about 72 KiB more.\n"
	        "                        What is kept can be analyzed: every chunk begins with\n"
	        "                        the live channels and their byte counts, so the kept\n"
	        "                        messages are matched (receives whose send was dropped\n"
	        "                        are counted apart). It cannot be replayed: replay starts\n"
	        "                        each process at its first event, and refuses a session\n"
	        "                        whose traces dropped any, naming the range\n"
	        "    --compress WHEN     inline (default): each process compresses its own\n"
	        "                        chunks as it goes (zstd level 1), so a long recording\n"
	        "                        takes little disk.  after: the recorded processes write\n"
	        "                        their chunks uncompressed and this command compresses\n"
	        "                        each trace once CMD has ended, out of the program's time\n"
	        "                        (less CPU in the program on input-heavy servers); while\n"
	        "                        CMD runs its traces take 3-30 times the disk (a trace\n"
	        "                        still open at the end, its process having outlived CMD,\n"
	        "                        stays so, readable as it is).  Always inline with\n"
	        "                        --max-bytes\n"
	        "    --same-layout       run CMD and its descendants with address space layout\n"
	        "                        randomisation off (personality ADDR_NO_RANDOMIZE, as\n"
	        "                        setarch -R and rr do), and say so in the traces: encore\n"
	        "                        replay then runs them with it off too, at the same\n"
	        "                        addresses.  For programs whose bytes depend on\n"
	        "                        addresses (OpenSSL's random generator mixes pointers\n"
	        "                        into its nonces; uninitialised bytes holding pointers\n"
	        "                        sent out), which otherwise diverge in replay.  Off by\n"
	        "                        default: it weakens the recorded program's defences\n"
	        "                        against memory corruption exploits, keep it to testing\n"
	        "                        and debugging.  Refused where the system forbids\n"
	        "                        personality(2) (a container's seccomp policy)\n"
	        "    --owned-mutexes     a mutex's release, and its acquisitions by the thread\n"
	        "                        that acquired it last, are no events (a count in the\n"
	        "                        thread's next event): cheaper for threaded servers\n"
	        "                        (memcached -t 4: 0.89 of bare throughput, 0.82\n"
	        "                        without), but replay places a thread's code between\n"
	        "                        events more coarsely, and programs whose threads also\n"
	        "                        meet outside their locks replay less often (memcached's\n"
	        "                        LRU maintainer, BIND's dig).  Off by default\n"
	        "    -q, --quiet         no summary line (warnings are still printed)\n"
	        "    -h, --help          this text\n\n"
	        "ENVIRONMENT\n"
	        "    ENCORE_RECORD_LIB   path of " LIB_NAME " (default: LIBDIR/encore/ of this\n"
	        "                        install, or the build tree's when run from there)\n"
	        "    ENCORE_RECORD       set by this command for the recorder; not for users\n\n"
	        "SIGNALS\n"
	        "    The terminal's interrupt and quit keys reach CMD (its process group) and\n"
	        "    encore stays to report; SIGTERM and SIGHUP sent to encore itself (timeout(1),\n"
	        "    a service manager) are passed on to CMD, and encore waits for it as usual.\n\n"
	        "EXIT STATUS\n"
	        "    CMD's status; 2 for a usage error; 1 when CMD could not be recorded or run.\n\n"
	        "EXAMPLES\n"
	        "    encore record -o /tmp/ring -- ./ring 4\n"
	        "    encore record --session /tmp/kv --name server -- ./kvserver &\n"
	        "    encore record --session /tmp/kv --name client -- ./kvclient\n");
	fprintf(out, "\nSee encore-record(1).\n");
}

/* --- the program: found on PATH, and dynamically linked ------------------------------------ */

/* An executable regular file: access(X_OK) alone also accepts directories (a PATH entry
 * such as /usr/lib/x86_64-linux-gnu holds a directory called perl), as execvp skips them. */
static int executable_file(const char *path)
{
	struct stat st;

	return access(path, X_OK) == 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int find_program(const char *cmd, char *out, size_t cap)
{
	const char *path, *p;

	if (strchr(cmd, '/')) {
		if ((size_t)snprintf(out, cap, "%s", cmd) >= cap)
			return -1;
		return executable_file(out) ? 0 : -1;
	}
	path = getenv("PATH");
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (p = path; *p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		if ((size_t)snprintf(out, cap, "%.*s/%s", (int)n, n ? p : ".", cmd) < cap &&
		    executable_file(out))
			return 0;
		p += n;
		if (*p == ':')
			p++;
	}
	return -1;
}

/* 1: dynamically linked ELF (has PT_INTERP); 0: static ELF; -1: not ELF or unreadable. */
static int elf_dynamic(const char *path)
{
	unsigned char id[EI_NIDENT];
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	uint64_t phoff, i;
	uint16_t phnum, phentsize;

	if (fd < 0)
		return -1;
	if (pread(fd, id, sizeof(id), 0) != (ssize_t)sizeof(id) || memcmp(id, ELFMAG, SELFMAG))
		goto out;
	if (id[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			goto out;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
	} else if (id[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh))
			goto out;
		phoff = eh.e_phoff;
		phnum = eh.e_phnum;
		phentsize = eh.e_phentsize;
	} else {
		goto out;
	}
	rc = 0;
	for (i = 0; i < phnum; i++) {
		uint32_t type;

		if (pread(fd, &type, sizeof(type), (off_t)(phoff + i * phentsize)) !=
		    (ssize_t)sizeof(type)) {
			rc = -1;
			break;
		}
		if (type == PT_INTERP) {
			rc = 1;
			break;
		}
	}
out:
	close(fd);
	return rc;
}

/* Whether path (a 64-bit ELF file) is a Go program: a PT_NOTE segment holding the "Go" build
 * id note (type 4) the Go linker writes.  Its runtime makes its system calls itself, past
 * libc and so past the recorder. */
static int elf_is_go(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), go = 0;
	Elf64_Ehdr eh;

	if (fd < 0)
		return 0;
	if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
	    eh.e_phentsize == sizeof(Elf64_Phdr)) {
		for (uint16_t i = 0; i < eh.e_phnum && !go; i++) {
			Elf64_Phdr ph;
			unsigned char buf[4096];
			ssize_t n;

			if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
			        (ssize_t)sizeof(ph) ||
			    ph.p_type != PT_NOTE)
				continue;
			n = pread(fd, buf, ph.p_filesz < sizeof(buf) ? ph.p_filesz : sizeof(buf),
			          (off_t)ph.p_offset);
			for (ssize_t at = 0; n > 0 && at + 12 <= n;) {
				uint32_t nsz, dsz, type;

				memcpy(&nsz, buf + at, 4);
				memcpy(&dsz, buf + at + 4, 4);
				memcpy(&type, buf + at + 8, 4);
				if ((nsz == 3 || nsz == 4) && type == 4 && at + 15 <= n &&
				    !memcmp(buf + at + 12, "Go", 3))
					go = 1;
				at += 12 + ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
			}
		}
	}
	close(fd);
	return go;
}

/* Scripts: the interpreter named on the #! line must be dynamic. */
static int check_recordable(const char *path, char *why, size_t cap)
{
	char line[256], interp[PATH_MAX];
	int fd, kind;
	ssize_t n;
	char *p, *end;

	kind = elf_dynamic(path);
	if (kind == 1)
		return 0;
	if (kind == 0) {
		snprintf(why, cap,
		         "%s is statically linked: the recorder is a preloaded library and needs the "
		         "dynamic loader; rebuild it without -static",
		         path);
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(why, cap, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 0; /* not ELF, not a script: let exec say what it is */
	line[n] = '\0';
	for (p = line + 2; *p == ' ' || *p == '\t'; p++)
		;
	for (end = p; *end && *end != ' ' && *end != '\t' && *end != '\n'; end++)
		;
	snprintf(interp, sizeof(interp), "%.*s", (int)(end - p), p);
	if (elf_dynamic(interp) == 0) {
		snprintf(why, cap, "%s runs under %s, which is statically linked", path, interp);
		return -1;
	}
	return 0;
}

/* --- the session directory ------------------------------------------------------------------- */

static int name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

/* Logical names become file names and go into ENCORE_RECORD: keep them plain. */
static int valid_name(const char *s)
{
	size_t i, n = strlen(s);

	if (n == 0 || n >= TRACE_NAME_MAX - 16 || s[0] == '.')
		return 0;
	for (i = 0; i < n; i++)
		if (!name_char(s[i]))
			return 0;
	return 1;
}

/* A directory we own that nobody else can write into; created 0700 when missing. */
static int prepare_dir(const char *dir, int join, char *why, size_t cap)
{
	struct stat st;

	if (mkdir(dir, 0700) == 0)
		return 0;
	if (errno != EEXIST) {
		snprintf(why, cap, "cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	if (lstat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, cap, "%s exists and is not a directory (symbolic links are refused)",
		         dir);
		return -1;
	}
	if (cli_session_why(dir, why, cap))
		return -1; /* the recorder writes only where nobody else can plant a file */
	(void)join;
	return 0;
}

/* The session id, read from DIR/.encore-session or made there.  A new file is written under
 * a temporary name and linked into place whole, so that a full disk never leaves an empty
 * one behind; why (file and the system's reason) is filled on failure. */
static int session_id(const char *dir, int join, char *id, size_t cap, char *why, size_t whycap)
{
	char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
	unsigned char rnd[8];
	int fd, e = 0;
	ssize_t n;
	size_t i;

	snprintf(path, sizeof(path), "%s/" SESSION_ID_FILE, dir);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, id, cap - 1);
		close(fd);
		if (n > 0) {
			id[n] = '\0';
			id[strcspn(id, "\n")] = '\0';
		}
		if (n <= 0 || !valid_name(id)) {
			snprintf(why, whycap, "%s is empty or damaged: remove it, or record into another "
			         "directory", path);
			return -1;
		}
		return 0;
	}
	(void)join;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd)) {
		snprintf(why, whycap, "getrandom: %s", strerror(errno));
		return -1;
	}
	for (i = 0; i < sizeof(rnd) && 2 * i + 2 < cap; i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	snprintf(tmp, sizeof(tmp), "%s/" SESSION_ID_FILE ".%ld.tmp", dir, (long)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(why, whycap, "cannot create %s: %s", tmp, strerror(errno));
		return -1;
	}
	n = write(fd, id, strlen(id));
	if (n != (ssize_t)strlen(id) || write(fd, "\n", 1) != 1)
		e = n < 0 || errno ? errno : ENOSPC;
	if (close(fd) != 0 && !e)
		e = errno;
	if (!e && link(tmp, path) != 0) {
		e = errno;
		if (e == EEXIST) {
			/* another `encore record` made it first: use theirs */
			unlink(tmp);
			return session_id(dir, join, id, cap, why, whycap);
		}
	}
	unlink(tmp);
	if (e) {
		snprintf(why, whycap, "cannot write %s: %s", path, strerror(e));
		return -1;
	}
	return 0;
}

/* --- after the run: what to warn about ------------------------------------------------------- */

static int is_ours(const char *proc, const char *root)
{
	size_t n = strlen(root);

	return strncmp(proc, root, n) == 0 && (proc[n] == '\0' || proc[n] == '.');
}

/* Threads: the recorder leaves DIR/.encore-registry/threads.PID holding the logical name
 * of each process in which a thread it did not see start made calls (threads made through
 * pthread_create are recorded and replayed in order), so this needs no pass over the traces. */
static void warn_threads(const char *dir, const char *root)
{
	char path[PATH_MAX + 300], name[TRACE_NAME_MAX];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "%s/.encore-registry", dir);
	if (!(d = opendir(path)))
		return;
	while ((de = readdir(d))) {
		ssize_t n;
		int fd;

		if (strncmp(de->d_name, "threads.", 8) != 0)
			continue;
		snprintf(path, sizeof(path), "%s/.encore-registry/%s", dir, de->d_name);
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		n = read(fd, name, sizeof(name) - 1);
		close(fd);
		if (n <= 0)
			continue;
		name[n] = '\0';
		if (is_ours(name, root))
			fprintf(stderr,
			        "encore record: warning: process %s (pid %s) ran a thread encore did not "
			        "see start (made inside a library): the order of its calls is not "
			        "recorded, replay may diverge\n",
			        name, de->d_name + 8);
	}
	closedir(d);
}

/* A trace the recorder stopped writing (full disk, quota, I/O error) while the program ran on. */
static void warn_stopped(const char *path)
{
	struct trace_reader *r;
	struct trace_diag d;
	uint64_t last;
	int e;

	if (trace_reader_open(path, &r, &d) != 0)
		return;
	if ((e = trace_reader_stopped(r, &last)) != 0)
		fprintf(stderr, "encore record: trace %s truncated after event %llu: %s; process %s "
		        "ran on unrecorded\n", path, (unsigned long long)last, trace_stop_reason(e),
		        trace_reader_process(r)->name);
	trace_reader_close(r);
}

/* A process of this recording whose trace could not be created (cli_for_each_notrace). */
struct notrace_arg {
	const char *dir, *root;
};

static int warn_notrace(const char *file, int err, void *arg)
{
	const struct notrace_arg *a = arg;
	char name[TRACE_NAME_MAX];
	size_t n;

	snprintf(name, sizeof(name), "%.*s", (int)strcspn(file, "@"), file);
	n = strlen(name);
	if (n > 6 && strcmp(name + n - 6, ".trace") == 0)
		name[n - 6] = '\0';
	if (!is_ours(name, a->root))
		return 0;
	fprintf(stderr, "encore record: trace %s/%s truncated after event 0: %s (it could "
	        "not be created; the process ran unrecorded)\n", a->dir, file,
	        trace_stop_reason(err));
	return 1;
}

/* A fork or exec whose child or new image has no trace (privileges dropped, a set-user-ID
 * program...), found in the traces of this recording's processes. */
static void warn_unrecorded(const struct cli_unrecorded *u, void *arg)
{
	const struct notrace_arg *a = arg;

	if (!is_ours(u->parent, a->root))
		return;
	if (u->exec)
		fprintf(stderr, "encore record: warning: image %u of process %s (exec at event %llu) "
		        "was not recorded: %s\n", u->segment, u->parent,
		        (unsigned long long)u->index, cli_unrecorded_reason(u));
	else
		fprintf(stderr, "encore record: warning: process %s (forked at event %llu of %s) "
		        "was not recorded: %s\n", u->child, (unsigned long long)u->index, u->parent,
		        cli_unrecorded_reason(u));
}

/* Compress the traces the recorded processes stored (--compress after): each of ours that
 * no process still writes (libtrace/compact.c), at zstd level 3, out of the program's time. */
static void compress_traces(const char *dir, const char *root, int quiet,
                            unsigned long long stored[2])
{
	struct trace_session *s = NULL;
	struct trace_diag diag;
	size_t i, j, busy = 0;
	int dirfd;

	memset(&diag, 0, sizeof(diag));
	if (trace_session_open(dir, &s, &diag) != 0)
		return; /* report() says why */
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	for (i = 0; dirfd >= 0 && i < trace_session_count(s); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		if (!is_ours(trace_session_name(s, i), root))
			continue;
		for (j = 0; j < nf; j++) {
			const char *base = strrchr(paths[j], '/');
			struct trace_compact_stats st;

			memset(&diag, 0, sizeof(diag));
			if (trace_compact_file(dirfd, base ? base + 1 : paths[j], 3, &st, &diag) < 0)
				fprintf(stderr, "encore record: warning: %s: %s; the trace stays "
				        "uncompressed, readable as it is\n", paths[j], diag.msg);
			busy += st.busy;
			if (st.after) {
				stored[0] += st.before;
				stored[1] += st.after;
			}
		}
	}
	if (busy && !quiet)
		fprintf(stderr, "encore record: %zu trace%s still written by a process that "
		        "outlived %s stay%s uncompressed\n", busy, busy == 1 ? "" : "s", root,
		        busy == 1 ? "s" : "");
	if (dirfd >= 0)
		close(dirfd);
	trace_session_close(s);
}

static void report(const char *dir, const char *root, int quiet,
                   const unsigned long long stored[2])
{
	struct trace_session *s = NULL;
	struct trace_diag diag;
	unsigned long long bytes = 0;
	size_t i, j, nproc = 0, nfiles = 0, running = 0;
	struct notrace_arg na = { dir, root };
	int found_root = 0, notrace;

	memset(&diag, 0, sizeof(diag));
	warn_threads(dir, root);
	notrace = cli_for_each_notrace(dir, warn_notrace, &na);
	if (trace_session_open(dir, &s, &diag) != 0) {
		if (!notrace) /* else said already: no trace could be created */
			cli_diag("record", &diag);
		return;
	}
	for (i = 0; i < trace_session_count(s); i++) {
		const char *name = trace_session_name(s, i);
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		if (!is_ours(name, root))
			continue;
		nproc++;
		if (strcmp(name, root) == 0)
			found_root = 1;
		for (j = 0; j < nf; j++) {
			struct stat st;
			int fd;

			nfiles++;
			if (stat(paths[j], &st) == 0)
				bytes += (unsigned long long)st.st_blocks * 512;
			warn_stopped(paths[j]);
			/* its writer's lock (libtrace/writer.c): a process that outlived CMD */
			fd = open(paths[j], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK)
				running++;
			if (fd >= 0)
				close(fd);
		}
	}
	trace_session_close(s);
	if (running)
		fprintf(stderr, "encore record: warning: %zu process%s that %s started still run%s, "
		        "recorded (%s trace%s open): the session is whole once they end, and replay "
		        "refuses it until then\n", running, running == 1 ? "" : "es", root,
		        running == 1 ? "s" : "", running == 1 ? "its" : "their",
		        running == 1 ? " is" : "s are");
	cli_for_each_unrecorded(dir, warn_unrecorded, &na);
	if (!found_root)
		fprintf(stderr,
		        "encore record: warning: %s was not recorded (the recorder could not start "
		        "in it: setuid program, static interpreter, or an unwritable %s)\n",
		        root, dir);
	if (!quiet) {
		char was[96] = "";

		if (stored[0])
			snprintf(was, sizeof(was), "; compressed after the run from %llu KiB to %llu",
			         (stored[0] + 1023) / 1024, (stored[1] + 1023) / 1024);
		fprintf(stderr,
		        "encore record: %zu process%s (%zu trace file%s, %llu KiB%s) recorded in %s; "
		        "'encore check %s' verifies them\n",
		        nproc, nproc == 1 ? "" : "es", nfiles, nfiles == 1 ? "" : "s",
		        (bytes + 1023) / 1024, was, dir, dir);
	}
}

/* --- the command ----------------------------------------------------------------------------- */

/* What the command line asked for. */
struct record_args {
	const char *out_dir, *join_dir, *name;
	unsigned long hash_every, depth;
	unsigned long long max_bytes;
	int quiet;
	int inline_zstd;     /* --compress inline */
	int same_layout;     /* --same-layout: ASLR off (personality ADDR_NO_RANDOMIZE) */
	int owned_mutexes;   /* --owned-mutexes: ENCORE_OWNED_MUTEXES=1 (recorder/sync.c) */
	char namebuf[TRACE_NAME_MAX];
};

/* Parse the options into *a, leaving optind at the command: -1 to go on, else the exit
 * status. */
static int parse_args(int argc, char **argv, struct record_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "session", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "hash-every", required_argument, NULL, 'k' },
		{ "depth", required_argument, NULL, 'd' },
		{ "max-bytes", required_argument, NULL, 'm' },
		{ "compress", required_argument, NULL, 'z' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "same-layout", no_argument, NULL, 'L' },
		{ "owned-mutexes", no_argument, NULL, 'M' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	a->hash_every = 64;
	a->depth = 4;
	a->inline_zstd = 1; /* production recordings run for days: disk first (bench/README.md) */
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o': a->out_dir = optarg; break;
		case 's': a->join_dir = optarg; break;
		case 'n': a->name = optarg; break;
		case 'q': a->quiet = 1; break;
		case 'L': a->same_layout = 1; break;
		case 'M': a->owned_mutexes = 1; break;
		case 'z':
			if (strcmp(optarg, "after") != 0 && strcmp(optarg, "inline") != 0) {
				cli_error("record", "bad value for --compress: '%s' (after or inline)",
				          optarg);
				return CLI_USAGE;
			}
			a->inline_zstd = strcmp(optarg, "inline") == 0;
			break;
		case 'k':
		case 'd':
		case 'm': {
			uint64_t v;

			if (cli_parse_count(optarg, &v) != 0 || (c == 'k' && (v == 0 || v > UINT32_MAX)) ||
			    (c == 'd' && v > 32)) {
				cli_error("record", "bad value for --%s: '%s'",
				          c == 'k' ? "hash-every" : c == 'd' ? "depth" : "max-bytes", optarg);
				return CLI_USAGE;
			}
			if (c == 'k')
				a->hash_every = (unsigned long)v;
			else if (c == 'd')
				a->depth = (unsigned long)v;
			else
				a->max_bytes = v;
			break;
		}
		case 'h':
			usage(stdout);
			return CLI_OK;
		default:
			fprintf(stderr, "run 'encore record --help' for usage\n");
			return CLI_USAGE;
		}
	}
	if (optind >= argc) {
		cli_error("record", "no command to record; usage: encore record [-o DIR] -- CMD ARGS...");
		return CLI_USAGE;
	}
	if (a->out_dir && a->join_dir) {
		cli_error("record", "-o and --session are exclusive: -o starts a session, --session "
		                    "joins one");
		return CLI_USAGE;
	}
	if (!a->name) {
		const char *base = strrchr(argv[optind], '/');
		size_t i;

		snprintf(a->namebuf, sizeof(a->namebuf) - 16, "%s", base ? base + 1 : argv[optind]);
		for (i = 0; a->namebuf[i]; i++)
			if (!name_char(a->namebuf[i]))
				a->namebuf[i] = '_';
		if (a->namebuf[0] == '.' || !a->namebuf[0])
			a->namebuf[0] = '_';
		a->name = a->namebuf;
	}
	if (!valid_name(a->name)) {
		cli_error("record", "bad --name '%s': letters, digits, '.', '_' and '-' only, not "
		                    "starting with '.'",
		          a->name);
		return CLI_USAGE;
	}
	return -1;
}

/* The session directory, made or joined, as an absolute path in absdir (PATH_MAX), with
 * its session id in sess: 0, or the exit status. */
static int open_session(const struct record_args *a, char *absdir, char *sess, size_t scap)
{
	char defdir[PATH_MAX], why[3 * PATH_MAX], tracefile[TRACE_NAME_MAX + 32];
	const char *dir = a->join_dir ? a->join_dir : a->out_dir;

	if (!dir) {
		time_t now = time(NULL);
		struct tm tm;

		localtime_r(&now, &tm);
		snprintf(defdir, sizeof(defdir), "encore-%s-%04d%02d%02d-%02d%02d%02d", a->name,
		         tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		         tm.tm_sec);
		/* a second recording within the same second gets a name of its own */
		for (int k = 2; k < 1000 && access(defdir, F_OK) == 0; k++) {
			size_t n = strlen(defdir);
			char *dash = k > 2 ? strrchr(defdir, '-') : NULL;

			if (dash)
				n = (size_t)(dash - defdir);
			snprintf(defdir + n, sizeof(defdir) - n, "-%d", k);
		}
		dir = defdir;
	}
	if (prepare_dir(dir, a->join_dir != NULL, why, sizeof(why)) != 0) {
		cli_error("record", "%s", why);
		return CLI_FAIL;
	}
	if (!realpath(dir, absdir)) {
		cli_error("record", "%s: %s", dir, strerror(errno));
		return CLI_FAIL;
	}
	{
		/* encore replay's control socket, DIR/.encore-replay/ctl, must fit a sockaddr_un */
		size_t room = sizeof(((struct sockaddr_un *)0)->sun_path) - sizeof("/.encore-replay/ctl");

		if (strlen(absdir) > room)
			fprintf(stderr, "encore record: warning: %s is %zu bytes long; encore replay needs "
			        "a session path of %zu bytes at most: replay it from a copy at a shorter "
			        "path\n", absdir, strlen(absdir), room);
	}
	if (!a->join_dir && !a->quiet) {
		char idpath[PATH_MAX + 32];

		snprintf(idpath, sizeof(idpath), "%s/" SESSION_ID_FILE, absdir);
		if (access(idpath, F_OK) == 0)
			fprintf(stderr, "encore record: %s holds a session already: these processes "
			        "join it (as --session does); record into another directory to keep "
			        "them apart\n", absdir);
	}
	if (session_id(absdir, a->join_dir != NULL, sess, scap, why, sizeof(why)) != 0) {
		cli_error("record", "%s", why);
		return CLI_FAIL;
	}
	if (trace_file_name(a->name, 0, tracefile, sizeof(tracefile)) == 0) {
		char p[PATH_MAX + TRACE_NAME_MAX + 40];
		struct stat st;

		snprintf(p, sizeof(p), "%s/%s", absdir, tracefile);
		if (lstat(p, &st) == 0) {
			cli_error("record", "%s already holds a process named '%s'; choose another "
			                    "--name or directory",
			          absdir, a->name);
			return CLI_FAIL;
		}
	}
	return 0;
}

/* --same-layout: address space randomisation off for this process, so for the program it
 * forks and everything that descends from it (the flag survives fork and exec; the
 * recorder notes it in each trace, schemas/trace-format.md "Address layout").  0, or -1
 * with errno when the system refuses it. */
static int layout_fixed(void)
{
	int old = personality(0xffffffff);

	if (old == -1)
		return -1;
	if (old & ADDR_NO_RANDOMIZE)
		return 0;
	if (personality((unsigned long)old | ADDR_NO_RANDOMIZE) == -1)
		return -1;
	old = personality(0xffffffff);
	if (old == -1 || !(old & ADDR_NO_RANDOMIZE)) {
		errno = EPERM; /* accepted and ignored: as refused */
		return -1;
	}
	return 0;
}

/* The recorded program, for pass_on. */
static volatile pid_t recorded_pid;

/* SIGTERM or SIGHUP sent to us (timeout(1), a service manager, a closed terminal) goes on to
 * the program, and we stay to report: ended alone, we would leave it running recorded. */
static void pass_on(int sig)
{
	int e = errno;

	if (recorded_pid > 0)
		kill(recorded_pid, sig);
	errno = e;
}

/* Run prog recorded (ENCORE_RECORD env, the recorder first in LD_PRELOAD) and wait for it:
 * its wait status in *status, 0; or the exit status. */
static int run_recorded(const char *prog, char **argv, const char *env, const char *lib,
                        int *status)
{
	const char *old_preload = getenv("LD_PRELOAD");
	struct sigaction ign, old_int, old_quit, fwd, old_term, old_hup;
	char *preload;
	pid_t pid;

	if (asprintf(&preload, "%s%s%s", lib, old_preload && *old_preload ? ":" : "",
	             old_preload ? old_preload : "") < 0)
		return CLI_FAIL;
	/* Like time(1) and strace: the terminal's ^C and ^\ go to the recorded program, and we
	 * stay to report. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = pass_on;
	fwd.sa_flags = SA_RESTART;
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		cli_error("record", "fork: %s", strerror(errno));
		free(preload);
		return CLI_FAIL;
	}
	if (pid == 0) {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGQUIT, &old_quit, NULL);
		sigaction(SIGTERM, &old_term, NULL);
		sigaction(SIGHUP, &old_hup, NULL);
		setenv("ENCORE_RECORD", env, 1);
		setenv("LD_PRELOAD", preload, 1);
		execv(prog, argv);
		if (errno == ENOEXEC) {
			/* a script without #!: run by /bin/sh, as a shell or execvp would */
			int e = errno;
			size_t n = 0;
			char **sh;

			while (argv[n])
				n++;
			sh = calloc(n + 2, sizeof(*sh));
			if (sh) {
				sh[0] = "sh";
				sh[1] = (char *)prog;
				for (size_t i = 1; i < n; i++)
					sh[i + 1] = argv[i];
				execv("/bin/sh", sh);
			}
			errno = e;
		}
		fprintf(stderr, "encore record: %s: %s\n", prog, strerror(errno));
		_exit(127);
	}
	free(preload);
	recorded_pid = pid;
	while (waitpid(pid, status, 0) < 0)
		if (errno != EINTR) {
			cli_error("record", "waitpid: %s", strerror(errno));
			return CLI_FAIL;
		}
	recorded_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	return 0;
}

int cmd_record(int argc, char **argv)
{
	struct record_args a = { 0 };
	struct ip_rec_env e = { 0 };
	char prog[PATH_MAX], lib[PATH_MAX], absdir[PATH_MAX], why[3 * PATH_MAX];
	char sess[64], env[IP_DIR_MAX + 1024];
	unsigned long long stored[2] = { 0, 0 };
	int ret, status;

	if ((ret = parse_args(argc, argv, &a)) >= 0)
		return ret;
	if (find_program(argv[optind], prog, sizeof(prog)) != 0) {
		cli_error("record", "%s: command not found or not executable", argv[optind]);
		return CLI_FAIL;
	}
	if (check_recordable(prog, why, sizeof(why)) != 0) {
		cli_error("record", "cannot record: %s", why);
		return CLI_FAIL;
	}
	if (elf_is_go(prog))
		fprintf(stderr, "encore record: warning: %s is a Go program: the Go runtime makes its "
		        "system calls itself, not through libc, so its network and file I/O goes "
		        "unrecorded and a replay cannot follow it (README.md, Limits)\n", prog);
#ifndef ENCORE_RECORD_SO_BUILD
#define ENCORE_RECORD_SO_BUILD NULL
#endif
	if (cli_find_lib(LIB_NAME, "ENCORE_RECORD_LIB", ENCORE_RECORD_SO_BUILD, lib, sizeof(lib))) {
		cli_error("record", "cannot read the recorder library %s; reinstall encore, or set "
		          "ENCORE_RECORD_LIB to its path", lib);
		return CLI_FAIL;
	}
	if (a.same_layout && layout_fixed() != 0) {
		cli_error("record", "--same-layout: the system refuses to turn address space "
		          "randomisation off (personality: %s; a container's seccomp policy?): "
		          "record without --same-layout, or allow personality(2)", strerror(errno));
		return CLI_FAIL;
	}
	if ((ret = open_session(&a, absdir, sess, sizeof(sess))) != 0)
		return ret;
	/* (an environment variable, so that every descendant of CMD takes it: recorder/sync.c) */
	if (a.owned_mutexes)
		setenv("ENCORE_OWNED_MUTEXES", "1", 1);
	/* the recorder's configuration: interpose/env.c is the one codec both sides use */
	snprintf(e.name, sizeof(e.name), "%s", a.name);
	snprintf(e.session, sizeof(e.session), "%s", sess);
	e.hash_every = (uint32_t)a.hash_every;
	e.depth = (uint32_t)a.depth;
	e.max_bytes = a.max_bytes;
	e.zlevel = a.inline_zstd ? 1 : 0;
	e.dir = absdir;
	if (strlen(absdir) >= IP_DIR_MAX ||
	    ip_rec_env_encode(env, sizeof(env), &e, NULL, NULL) != 0) {
		cli_error("record", "%s: the session's path is too long for the recorder (at most "
		          "%d bytes)", absdir, IP_DIR_MAX - 1);
		return CLI_FAIL;
	}
	if ((ret = run_recorded(prog, argv + optind, env, lib, &status)) != 0)
		return ret;
	if (!a.inline_zstd)
		compress_traces(absdir, a.name, a.quiet, stored);
	report(absdir, a.name, a.quiet, stored);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
