/*
 * cmd_pack.c: `encore pack DIR`: adds to a session the files a replay elsewhere needs: every
 * executable and shared object the recorded processes mapped and every regular file they
 * read, as the recorder noted them (schemas/trace-format.md, "File inputs"), stored once by
 * content under DIR/pack/objects and listed in DIR/pack/manifest (schemas/pack.md).
 *
 * A file is copied as it is now, and packed only if it is still what the recording saw
 * (size and mtime, else the hash of what was read; build-id for objects): a file changed
 * since is named and left out, because a replay fed other bytes than the recording's would
 * differ without saying so.  Everything is created relative to directory descriptors that
 * were checked, without following links, objects 0400 through a temporary name and a rename
 * (docs/security.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "rep.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore pack - add to a session the files a replay on another machine needs\n\n"
	        "SYNOPSIS\n"
	        "    encore pack [--dry-run] [--trust] [-q] DIR\n"
	        "    encore pack --merge SRC [--dry-run] [--trust] [-q] DIR\n\n"
	        "DESCRIPTION\n"
	        "    Copies into DIR/pack every executable and shared library the recorded\n"
	        "    processes mapped (the dynamic loader and interpreters included) and every\n"
	        "    regular file they opened for reading (configuration, data, scripts), each\n"
	        "    content stored once (DIR/pack/objects/SHA256), and lists them with their\n"
	        "    host, path, mode and size in DIR/pack/manifest (schemas/pack.md).  Run it\n"
	        "    on the machine that recorded, soon after the recording.\n\n"
	        "    A file is packed only if it is still the one the recording saw (same size\n"
	        "    and modification time, else the same content for the bytes hashed when it\n"
	        "    was opened; same build-id for executables and libraries).  One that changed\n"
	        "    is named (\"FILE changed since the recording (content); not packed\") and\n"
	        "    left out, and pack exits 1 after packing the rest.  Files the recorded\n"
	        "    processes wrote before reading them (modified after the recording began)\n"
	        "    are outputs of the run, not inputs: they are not packed.  Processes\n"
	        "    recorded on another host (another machine id) are skipped with a message:\n"
	        "    pack each host's traces there, then merge: copy the other hosts' *.trace\n"
	        "    files into one directory and add their packs with --merge.\n\n"
	        "    Packing again adds only what is missing (\"nothing to add\" otherwise).\n"
	        "    A damaged session (a trace that does not read to its end) is refused, as\n"
	        "    replay refuses it, and so is a session another user owns or others may\n"
	        "    write (see --trust).\n\n"
	        "OPTIONS\n"
	        "    --merge SRC    add the pack of session SRC (packed on another host) to DIR's:\n"
	        "                   its manifest lines, and the objects DIR lacks (each checked\n"
	        "                   against its SHA-256 name); DIR's traces are not read\n"
	        "    -n, --dry-run  list what would be added; write nothing\n"
	        "    --trust        pack DIR (merge SRC) even if another user owns it or others\n"
	        "                   may write it (docs/security.md)\n"
	        "    -q, --quiet    only the summary line and problems\n"
	        "    -h, --help     this text\n\n"
	        "OUTPUT\n"
	        "    One line per file added: \"added KIND PATH (SIZE)\", KIND exe, lib or file;\n"
	        "    then \"packed N files (M new objects, SIZE) into DIR/pack; it holds SIZE\".\n\n"
	        "EXIT STATUS\n"
	        "    0 everything packed (or already there); 1 a file changed since the\n"
	        "    recording and was not packed, the session is damaged or not the user's,\n"
	        "    or a file cannot be written; 2 usage error.\n\n"
	        "EXAMPLE\n"
	        "    encore record -o /tmp/s -- ./server --config app.conf\n"
	        "    encore pack /tmp/s && tar czf s.tgz -C /tmp s\n"
	        "    cp hostb/*.trace all/ && encore pack --merge hostb all\n");
	fprintf(out, "\nSee encore-pack(1).\n");
}

/* One file to pack: a file input record of some trace, with the host it was used on. */
struct item {
	struct trace_file_input f;   /* path and resolved point into the strings below */
	char host_id[64];
	char *path, *resolved;
	char proc[TRACE_NAME_MAX];
};

struct packer {
	const char *dir;
	int dry, quiet;
	int dirfd, packfd, objfd;
	char host_id[64];            /* this machine's */
	struct item *items;
	size_t nitems, cap;
	int64_t start_ns;            /* the earliest start of a recorded image */
	struct trace_pack *man;
	uint64_t added_files, new_objects, new_bytes;
	int changed, failed, other_hosts;
	unsigned tmpseq;
};

static void human(uint64_t n, char *out, size_t cap)
{
	if (n < 1024)
		snprintf(out, cap, "%" PRIu64 " B", n);
	else if (n < 1024 * 1024)
		snprintf(out, cap, "%.1f KiB", (double)n / 1024);
	else if (n < 1024ull * 1024 * 1024)
		snprintf(out, cap, "%.1f MiB", (double)n / (1024 * 1024));
	else
		snprintf(out, cap, "%.2f GiB", (double)n / (1024.0 * 1024 * 1024));
}

static void read_machine_id(char *out, size_t cap)
{
	FILE *f = fopen("/etc/machine-id", "re");
	char *nl;

	out[0] = '\0';
	if (!f)
		return;
	if (!fgets(out, (int)cap, f))
		out[0] = '\0';
	fclose(f);
	if ((nl = strchr(out, '\n')))
		*nl = '\0';
}

static int same_item(const struct item *a, const struct trace_file_input *f, const char *host)
{
	return a->f.kind == f->kind && a->f.size == f->size && a->f.mtime_ns == f->mtime_ns &&
	       a->f.dev == f->dev && a->f.ino == f->ino && strcmp(a->host_id, host) == 0 &&
	       strcmp(a->path, f->path) == 0 && strcmp(a->resolved, f->resolved) == 0;
}

static int add_item(struct packer *pk, const struct trace_file_input *f, const char *host,
                    const char *proc)
{
	struct item *it;
	size_t i;

	for (i = 0; i < pk->nitems; i++)
		if (same_item(&pk->items[i], f, host))
			return 0;
	if (pk->nitems == pk->cap) {
		size_t cap = pk->cap ? pk->cap * 2 : 64;
		struct item *n = realloc(pk->items, cap * sizeof(*n));

		if (!n)
			return -1;
		pk->items = n;
		pk->cap = cap;
	}
	it = &pk->items[pk->nitems];
	memset(it, 0, sizeof(*it));
	it->f = *f;
	snprintf(it->host_id, sizeof(it->host_id), "%s", host);
	snprintf(it->proc, sizeof(it->proc), "%s", proc);
	it->path = strdup(f->path);
	it->resolved = strdup(f->resolved);
	if (!it->path || !it->resolved) {
		free(it->path);
		free(it->resolved);
		return -1;
	}
	it->f.path = it->path;
	it->f.resolved = it->resolved;
	pk->nitems++;
	return 0;
}

/* Read every trace through (refusing damage, as replay does) and collect its file inputs. */
static int collect(struct packer *pk)
{
	struct trace_session *s;
	struct trace_diag d;
	size_t i, j, k;
	int skipped_host = 0;

	memset(&d, 0, sizeof(d));
	if (trace_session_open(pk->dir, &s, &d) != 0) {
		cli_diag("pack", &d);
		return -1;
	}
	pk->start_ns = INT64_MAX;
	for (i = 0; i < trace_session_count(s); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		for (j = 0; j < nf; j++) {
			struct trace_reader *r;
			struct trace_event ev;
			const struct trace_process *h;
			const struct trace_file_input *fl;
			size_t n;
			int rc;

			memset(&d, 0, sizeof(d));
			if (trace_reader_open(paths[j], &r, &d) != 0) {
				cli_diag("pack", &d);
				trace_session_close(s);
				return -1;
			}
			while ((rc = trace_reader_next(r, &ev)) == 1)
				;
			if (rc < 0 || trace_reader_damage(r, &d) != 0) {
				if (rc < 0)
					cli_error("pack", "%s: cannot read the trace: %s", paths[j],
					          trace_strerror(rc));
				else
					cli_error("pack", "%s: trace of process %s is damaged (%s): replay "
					          "needs every event, so there is nothing worth packing; "
					          "record again", paths[j], trace_session_name(s, i), d.msg);
				trace_reader_close(r);
				trace_session_close(s);
				return -1;
			}
			h = trace_reader_process(r);
			if (h->start_realtime_ns && (int64_t)h->start_realtime_ns < pk->start_ns)
				pk->start_ns = (int64_t)h->start_realtime_ns;
			if (pk->host_id[0] && h->host_id[0] && strcmp(h->host_id, pk->host_id) != 0) {
				if (!skipped_host++)
					cli_error("pack", "process %s was recorded on host %s (machine id %s), "
					          "not this one: pack its traces on that host, then merge the "
					          "session directories by copying", h->name, h->host,
					          h->host_id);
				pk->other_hosts++;
				trace_reader_close(r);
				continue;
			}
			n = trace_reader_files(r, &fl);
			for (k = 0; k < n; k++)
				if (add_item(pk, &fl[k], h->host_id, h->name) < 0) {
					cli_error("pack", "out of memory");
					trace_reader_close(r);
					trace_session_close(s);
					return -1;
				}
			trace_reader_close(r);
		}
	}
	trace_session_close(s);
	return 0;
}

/* DIR/NAME as a private directory of the user's: made 0700 if missing, opened without
 * following a link, checked to be the user's (mode set to 0700). */
static int private_dir(int parent, const char *name, const char *shown)
{
	struct stat st;
	int fd;

	if (mkdirat(parent, name, 0700) != 0 && errno != EEXIST) {
		cli_error("pack", "cannot create %s: %s", shown, strerror(errno));
		return -1;
	}
	fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		cli_error("pack", "%s: %s; remove it (a link or file there is not ours) and pack "
		          "again", shown, errno == ELOOP || errno == ENOTDIR ?
		          "not a directory of ours" : strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid()) {
		cli_error("pack", "%s is not yours: remove it and pack again", shown);
		close(fd);
		return -1;
	}
	if ((st.st_mode & 07777) != 0700)
		fchmod(fd, 0700);
	return fd;
}

static int open_dirs(struct packer *pk)
{
	char shown[PATH_MAX + 32];

	pk->dirfd = open(pk->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pk->dirfd < 0) {
		cli_error("pack", "%s: %s", pk->dir, strerror(errno));
		return -1;
	}
	snprintf(shown, sizeof(shown), "%s/" TRACE_PACK_DIRNAME, pk->dir);
	if ((pk->packfd = private_dir(pk->dirfd, TRACE_PACK_DIRNAME, shown)) < 0)
		return -1;
	snprintf(shown, sizeof(shown), "%s/" TRACE_PACK_DIRNAME "/" TRACE_PACK_OBJECTS, pk->dir);
	if ((pk->objfd = private_dir(pk->packfd, TRACE_PACK_OBJECTS, shown)) < 0)
		return -1;
	return 0;
}

/* Copy the file open at `in` into a temporary object (unless dry), hashing it: SHA-256 of
 * everything, CRC-32C of the first `hashed` bytes.  0, or -1 with errno. */
static int copy_hash(struct packer *pk, int in, uint64_t hashed, char tmp[64], char hex[65],
                     uint32_t *crc, uint64_t *total)
{
	static uint8_t buf[256 * 1024];
	struct trace_sha256 sha;
	uint64_t off = 0;
	int out = -1;

	trace_sha256_init(&sha);
	*crc = 0;
	tmp[0] = '\0';
	if (!pk->dry) {
		snprintf(tmp, 64, ".tmp.%ld.%u", (long)getpid(), pk->tmpseq++);
		unlinkat(pk->objfd, tmp, 0);
		out = openat(pk->objfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		             0600);
		if (out < 0)
			return -1;
	}
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf)), w = 0;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			goto fail;
		if (n == 0)
			break;
		trace_sha256_update(&sha, buf, (size_t)n);
		if (off < hashed)
			*crc = trace_crc32c(*crc, buf,
			                    hashed - off < (uint64_t)n ? (size_t)(hashed - off) : (size_t)n);
		while (out >= 0 && w < n) {
			ssize_t k = write(out, buf + w, (size_t)(n - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				if (k == 0)
					errno = ENOSPC;
				goto fail;
			}
			w += k;
		}
		off += (uint64_t)n;
	}
	if (out >= 0 && (fchmod(out, 0400) != 0 || fsync(out) != 0 || close(out) != 0)) {
		out = -1;
		goto fail;
	}
	trace_sha256_hex(&sha, hex);
	*total = off;
	return 0;
fail:
	{
		int e = errno;

		if (out >= 0)
			close(out);
		if (tmp[0])
			unlinkat(pk->objfd, tmp, 0);
		errno = e;
	}
	return -1;
}

static uint32_t pack_kind(uint32_t file_kind)
{
	return file_kind == TRACE_FILE_EXE ? TRACE_PACK_EXE :
	       file_kind == TRACE_FILE_LIB ? TRACE_PACK_LIB : TRACE_PACK_FILE;
}

/* Add the manifest line for `path`; print it when new. */
static int add_line(struct packer *pk, const struct item *it, const char *path,
                    const char *hex, uint32_t mode, uint64_t size)
{
	struct trace_pack_entry e;
	char sz[32];
	int rc;

	memset(&e, 0, sizeof(e));
	snprintf(e.host_id, sizeof(e.host_id), "%s", it->host_id);
	e.kind = pack_kind(it->f.kind);
	snprintf(e.sha256, sizeof(e.sha256), "%s", hex);
	e.mode = mode & 07777;
	e.size = size;
	e.path = (char *)path;
	rc = trace_pack_add(pk->man, &e);
	if (rc < 0) {
		cli_error("pack", "%s: cannot list it in the manifest (%s)", path, trace_strerror(rc));
		pk->failed = 1;
		return -1;
	}
	if (rc == 1) {
		pk->added_files++;
		if (!pk->quiet) {
			human(size, sz, sizeof(sz));
			printf("%s %s %s (%s)\n", pk->dry ? "would add" : "added",
			       trace_pack_kind_name(e.kind), path, sz);
		}
	}
	return 0;
}

/* Whether the object named hex is in the store already, whole: one of another size was cut
 * or overwritten (a partial copy of the session), and packing again replaces it. */
static int have_object(struct packer *pk, const char *hex, uint64_t size)
{
	struct stat st;

	return pk->objfd >= 0 && fstatat(pk->objfd, hex, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISREG(st.st_mode) && (uint64_t)st.st_size == size;
}

static void pack_item(struct packer *pk, struct item *it)
{
	const char *src = it->resolved[0] ? it->resolved : it->path;
	char tmp[64] = "", hex[65] = "", what[32] = "", real[PATH_MAX];
	struct stat st;
	uint64_t total = 0;
	uint32_t crc = 0;
	int fd, changed = 0;

	if (src[0] != '/')
		return; /* a record without an absolute path: nothing to find it by */
	/* an absolute path is noted as given (recorder/files.c): its links are resolved here */
	if (!it->resolved[0] && realpath(src, real))
		src = real;
	/* Written during the recording before it was read: an output of the run, not an input
	 * (replay makes it again). */
	if (it->f.kind == TRACE_FILE_READ && it->f.mtime_ns >= pk->start_ns)
		return;
	fd = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st) != 0) {
		if (errno == ENOENT) {
			cli_error("pack", "%s is gone since the recording (used by process %s); not "
			          "packed", src, it->proc);
			pk->changed = 1;
		} else {
			cli_error("pack", "%s: cannot read it (%s); not packed", src, strerror(errno));
			pk->failed = 1;
		}
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	if ((uint64_t)st.st_size != it->f.size) {
		changed = 1;
		snprintf(what, sizeof(what), "size");
	}
	if (!changed && copy_hash(pk, fd, it->f.hashed, tmp, hex, &crc, &total) != 0) {
		cli_error("pack", "%s: cannot copy it into %s/pack: %s", src, pk->dir, strerror(errno));
		pk->failed = 1;
		close(fd);
		return;
	}
	close(fd);
	if (!changed && total != it->f.size) {
		changed = 1;
		snprintf(what, sizeof(what), "size");
	}
	if (!changed && (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec !=
	    it->f.mtime_ns) {
		if (it->f.kind == TRACE_FILE_READ) {
			if (crc != it->f.crc) {
				changed = 1;
				snprintf(what, sizeof(what), "content");
			}
		} else {
			uint8_t bid[64];
			int n = it->f.build_id_len ? rep_elf_build_id(src, bid, sizeof(bid)) : -1;

			if (n != (int)it->f.build_id_len || memcmp(bid, it->f.build_id, (size_t)n) != 0) {
				changed = 1;
				snprintf(what, sizeof(what), it->f.build_id_len ? "build-id" : "mtime");
			}
		}
	}
	if (changed) {
		if (tmp[0] && !pk->dry)
			unlinkat(pk->objfd, tmp, 0);
		cli_error("pack", "%s changed since the recording (%s); not packed: a replay "
		          "elsewhere would read other bytes than process %s did", src, what, it->proc);
		pk->changed = 1;
		return;
	}
	if (!pk->dry) {
		if (have_object(pk, hex, total)) {
			unlinkat(pk->objfd, tmp, 0);
		} else if (renameat(pk->objfd, tmp, pk->objfd, hex) != 0) {
			cli_error("pack", "%s: cannot store it: %s", src, strerror(errno));
			unlinkat(pk->objfd, tmp, 0);
			pk->failed = 1;
			return;
		} else {
			pk->new_objects++;
			pk->new_bytes += total;
		}
	} else if (!have_object(pk, hex, total)) {
		pk->new_objects++;
		pk->new_bytes += total;
	}
	if (add_line(pk, it, src, hex, st.st_mode, total) < 0)
		return;
	/* the path the process used, when it reached the file through a link */
	if (it->path[0] == '/' && strcmp(it->path, src) != 0)
		add_line(pk, it, it->path, hex, st.st_mode, total);
}

/* The bytes the store holds. */
static uint64_t store_bytes(struct packer *pk)
{
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < trace_pack_count(pk->man); i++) {
		const struct trace_pack_entry *e = trace_pack_entry(pk->man, i);
		size_t j;
		int dup = 0;

		for (j = 0; j < i && !dup; j++)
			dup = strcmp(trace_pack_entry(pk->man, j)->sha256, e->sha256) == 0;
		if (!dup)
			total += e->size;
	}
	return total;
}

/* --merge SRC: SRC's manifest lines and the objects DIR lacks.  0 or -1. */
static int merge(struct packer *pk, const char *src)
{
	struct trace_pack *other = NULL;
	struct trace_diag d;
	char path[PATH_MAX + 32], sz[32];
	int srcobj, rc;
	size_t i;

	memset(&d, 0, sizeof(d));
	rc = trace_pack_open(src, &other, &d);
	if (rc == TRACE_ENOENT) {
		cli_error("pack", "%s is not packed: run encore pack %s on the host that recorded it "
		          "first", src, src);
		return -1;
	}
	if (rc != 0) {
		cli_diag("pack", &d);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/" TRACE_PACK_DIRNAME "/" TRACE_PACK_OBJECTS, src);
	srcobj = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (srcobj < 0) {
		cli_error("pack", "%s: %s", path, strerror(errno));
		trace_pack_free(other);
		return -1;
	}
	for (i = 0; i < trace_pack_count(other) && !pk->failed; i++) {
		const struct trace_pack_entry *e = trace_pack_entry(other, i);
		char tmp[64] = "", hex[65];
		uint64_t total = 0;
		uint32_t crc;
		int fd;

		if (!have_object(pk, e->sha256, e->size)) {
			fd = openat(srcobj, e->sha256, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0 || copy_hash(pk, fd, 0, tmp, hex, &crc, &total) != 0) {
				cli_error("pack", "%s/%s: %s", path, e->sha256, strerror(errno));
				pk->failed = 1;
				if (fd >= 0)
					close(fd);
				break;
			}
			close(fd);
			if (strcmp(hex, e->sha256) != 0 || total != e->size) {
				cli_error("pack", "%s/%s is damaged (its content does not have its name): "
				          "pack %s again where it was recorded", path, e->sha256, src);
				if (tmp[0])
					unlinkat(pk->objfd, tmp, 0);
				pk->failed = 1;
				break;
			}
			if (!pk->dry && renameat(pk->objfd, tmp, pk->objfd, hex) != 0) {
				cli_error("pack", "%s: cannot store it: %s", hex, strerror(errno));
				unlinkat(pk->objfd, tmp, 0);
				pk->failed = 1;
				break;
			}
			pk->new_objects++;
			pk->new_bytes += total;
		}
		rc = trace_pack_add(pk->man, e);
		if (rc < 0) {
			pk->failed = 1;
			break;
		}
		if (rc == 1) {
			pk->added_files++;
			if (!pk->quiet) {
				human(e->size, sz, sizeof(sz));
				printf("%s %s %s (%s, host %s)\n", pk->dry ? "would add" : "added",
				       trace_pack_kind_name(e->kind), e->path, sz, e->host_id);
			}
		}
	}
	close(srcobj);
	trace_pack_free(other);
	return pk->failed ? -1 : 0;
}

int cmd_pack(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "dry-run", no_argument, NULL, 'n' },
		{ "merge", required_argument, NULL, 'm' },
		{ "trust", no_argument, NULL, 'U' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct packer pk;
	struct trace_diag d;
	char a[32], b[32];
	const char *merge_src = NULL;
	int c, trust = 0, rc, ret = CLI_FAIL;
	size_t i;

	memset(&pk, 0, sizeof(pk));
	pk.dirfd = pk.packfd = pk.objfd = -1;
	optind = 1;
	while ((c = getopt_long(argc, argv, "nqh", opts, NULL)) != -1) {
		switch (c) {
		case 'n': pk.dry = 1; break;
		case 'm': merge_src = optarg; break;
		case 'U': trust = 1; break;
		case 'q': pk.quiet = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("pack");
		}
	}
	if (optind != argc - 1) {
		cli_error("pack", "expected one session directory; see encore pack --help");
		return CLI_USAGE;
	}
	pk.dir = argv[optind];
	/* pack writes into the session: only a session of the user's own (docs/security.md) */
	if (cli_session_trusted("pack", pk.dir, trust))
		return CLI_FAIL;
	/* what --merge copies in is mounted and run by replay: SRC must be as much the user's */
	if (merge_src && cli_session_trusted("pack", merge_src, trust))
		return CLI_FAIL;
	read_machine_id(pk.host_id, sizeof(pk.host_id));
	if (!merge_src && collect(&pk) != 0)
		goto out;
	memset(&d, 0, sizeof(d));
	rc = trace_pack_open(pk.dir, &pk.man, &d);
	if (rc == TRACE_ENOENT) {
		pk.man = trace_pack_new();
		if (!pk.man) {
			cli_error("pack", "out of memory");
			goto out;
		}
	} else if (rc != 0) {
		cli_diag("pack", &d);
		cli_error("pack", "the manifest of %s is damaged: remove %s/pack and pack again",
		          pk.dir, pk.dir);
		goto out;
	}
	if (!pk.dry && open_dirs(&pk) != 0)
		goto out;
	if (pk.dry) {
		char objs[PATH_MAX + 32];

		snprintf(objs, sizeof(objs), "%s/" TRACE_PACK_DIRNAME "/" TRACE_PACK_OBJECTS, pk.dir);
		pk.objfd = open(objs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (merge_src && merge(&pk, merge_src) != 0)
		goto out;
	for (i = 0; i < pk.nitems; i++)
		pack_item(&pk, &pk.items[i]);
	if (!pk.dry && pk.added_files) {
		memset(&d, 0, sizeof(d));
		if (trace_pack_write(pk.packfd, pk.man, &d) != 0) {
			cli_error("pack", "%s/pack/%s: %s", pk.dir, d.file, d.msg);
			goto out;
		}
	}
	human(pk.new_bytes, a, sizeof(a));
	human(store_bytes(&pk), b, sizeof(b));
	if (!pk.added_files)
		printf("nothing to add: %s/pack is up to date (%zu files, %s)\n", pk.dir,
		       trace_pack_count(pk.man), b);
	else
		printf("%s %" PRIu64 " files (%" PRIu64 " new objects, %s) into %s/pack; it holds %s\n",
		       pk.dry ? "would pack" : "packed", pk.added_files, pk.new_objects, a, pk.dir, b);
	ret = pk.changed || pk.failed ? CLI_FAIL : CLI_OK;
out:
	for (i = 0; i < pk.nitems; i++) {
		free(pk.items[i].path);
		free(pk.items[i].resolved);
	}
	free(pk.items);
	trace_pack_free(pk.man);
	if (pk.objfd >= 0)
		close(pk.objfd);
	if (pk.packfd >= 0)
		close(pk.packfd);
	if (pk.dirfd >= 0)
		close(pk.dirfd);
	return ret;
}
