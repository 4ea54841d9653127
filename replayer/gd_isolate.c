/*
 * gd_isolate.c: a replay that touches nothing outside the session, and a replay from a pack
 * (replayer/README.md, "Isolation and packed files"; docs/security.md).
 *
 * The GD starts the replayed roots inside a mount namespace of its own making, one per
 * recorded host (the traces' META_HOST_ID): a new user + mount namespace where unprivileged
 * user namespaces are allowed, a mount namespace alone as root.  In it every writable file
 * system (every top-level directory of / and every other mount that is not a pseudo file
 * system nor read-only) is covered by an overlay whose upper directory is in the scratch
 * area (DIR/.encore-replay/scratch, or the directory of --keep-scratch), so that what the
 * replayed processes create, write or delete goes there; the session's own control directory
 * (DIR/.encore-replay: the GD's socket and status board) is mounted back as it is.  When the
 * session is packed (DIR/pack/manifest, the layout of schemas/pack.md), each packed object of
 * that host is mounted read-only at its recorded path, so that a machine without the
 * program's files replays it.  Before that, what the recording itself created and is still
 * there is removed under the overlays (hide_created; the paths from gd_created.c), so that
 * the replayed processes find the file system as the recording's start did.
 *
 * A short-lived helper process makes each namespace (the GD itself must stay outside); the
 * GD keeps its namespace descriptors, each root enters them with setns(2) before its exec,
 * and everything the replay mounted disappears with the last process and descriptor.  The
 * manifest is read with libtrace's reader (trace_pack_open).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "gd_internal.h"

#define ISO_HOSTS_MAX 64
#define ISO_MOUNTS_MAX 2048

struct iso_host {
	char id[64];
	int userns, mntns;       /* descriptors of its namespaces, -1 when none */
};

struct gd_iso {
	struct trace_pack *pack; /* DIR/pack/manifest (libtrace/pack.c), or NULL */
	size_t npack;            /* its lines that name a file (not the reserved `dir`) */
	int objects_fd;          /* DIR/pack/objects, or -1 */
	struct iso_host hosts[ISO_HOSTS_MAX];
	size_t nhosts;
	int scratch_fd;          /* the scratch root, or -1 */
	char scratch[4200];
	int keep;                /* --keep-scratch: left in place */
	int made;                /* the scratch root is ours to remove */
	int userns;              /* the namespaces include a user namespace */
	char gaps[1024];         /* rep_isolation_gaps */
	char unisolated[1024];   /* rep_unisolated */
};

/* What the helper tells the GD once its namespace is ready (or not). */
enum { ISO_OK = 0, ISO_NONS = 1, ISO_FAILED = 2 };
struct iso_reply {
	int status;
	int userns;
	char msg[1024];
	char gaps[1024];         /* directories whose own entries are not covered (split) */
	int pack_bad;            /* the packed files could not be mounted (not a namespace's fault) */
	size_t hidden;           /* paths the recording created, removed under the overlays */
	size_t restored;         /* ... renamed back to the name they had at its start */
	size_t not_hidden;       /* ... there, but under no overlay or not removable */
};

static struct gd_iso *iso_get(struct rep *r)
{
	if (!r->iso && (r->iso = calloc(1, sizeof(*r->iso))) != NULL) {
		r->iso->objects_fd = -1;
		r->iso->scratch_fd = -1;
	}
	return r->iso;
}

/* --- the manifest (schemas/pack.md) --- */

int rep__pack_load(struct rep *r, struct trace_diag *d)
{
	char path[4096 + 64];
	struct trace_pack *pack = NULL;
	struct trace_diag pd;
	struct gd_iso *iso;
	struct stat st;
	int dfd, rc;

	if (r->opt.no_pack)
		return 0;
	snprintf(path, sizeof(path), "%s/pack/manifest", r->dir);
	memset(&pd, 0, sizeof(pd));
	rc = trace_pack_open(r->dir, &pack, &pd);
	if (rc == TRACE_ENOENT || (rc == TRACE_EIO && pd.sys_errno == ENOTDIR))
		return 0; /* not packed */
	if (rc == TRACE_EIO) {
		rep__diag_set(d, TRACE_EIO, path, "cannot read the pack's manifest: %s",
		              pd.sys_errno ? strerror(pd.sys_errno) : pd.msg);
		return TRACE_EIO;
	}
	if (rc != 0) {
		rep__diag_set(d, rc, path, "%s: pack the session again (encore pack)", pd.msg);
		return rc;
	}
	if (!(iso = iso_get(r))) {
		trace_pack_free(pack);
		return TRACE_ENOMEM;
	}
	iso->pack = pack;
	for (size_t i = 0; i < trace_pack_count(pack); i++)
		iso->npack += trace_pack_entry(pack, i)->kind != TRACE_PACK_DIR;
	/* the objects are mounted where the program runs them: only a pack of our own, closed
	 * to others (as the session directory itself, docs/security.md) */
	if ((dfd = open(r->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		iso->objects_fd = openat(dfd, "pack/objects",
		                         O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(dfd);
	}
	if (iso->objects_fd < 0 || fstat(iso->objects_fd, &st) != 0 || st.st_uid != geteuid() ||
	    (st.st_mode & 022)) {
		rep__diag_set(d, TRACE_EINVAL, path, "the pack's objects directory is missing, not "
		              "yours or writable by others: pack the session again (encore pack)");
		return TRACE_EINVAL;
	}
	return 0;
}

int rep__pack_object(const struct rep *r, const char *host, const char *path, char *out,
                     size_t cap)
{
	const struct trace_pack *pack = r->iso ? r->iso->pack : NULL;

	/* the last line of a path wins, as its mount is the last made (mount_pack) */
	for (size_t i = trace_pack_count(pack); i-- > 0;) {
		const struct trace_pack_entry *e = trace_pack_entry(pack, i);

		if (e->kind != TRACE_PACK_DIR && strcmp(e->host_id, host) == 0 &&
		    strcmp(e->path, path) == 0)
			return trace_pack_object_path(r->dir, e->sha256, out, cap) == 0;
	}
	return 0;
}

size_t rep_packed_files(const struct rep *r)
{
	return r->iso ? r->iso->npack : 0;
}

/* --- in the helper: the mounts of one host's namespace --- */

struct mnt {
	char path[4096];
	int fd;                  /* O_PATH of the original, before anything was mounted */
	int unit;                /* 1 overlay (directory), 2 copy (a file mounted alone), 0 keep */
	int depth;
};

struct ctx {
	struct rep *r;
	const char *host;
	int hostfd;              /* the host's scratch directory */
	int isolate;
	int userns;
	char *msg;               /* the reply's message */
	char *gaps;              /* the reply's gaps */
	struct mnt *m;
	size_t nm;
	char **cov;              /* the directories an overlay covers */
	size_t ncov;
	int *pack_bad;           /* the reply's: the packed files could not be mounted */
	size_t *hidden, *not_hidden, *restored; /* the reply's: hide_created's counts */
};

static int under(const char *path, const char *dir);
static void rm_tree(int dfd, const char *name, int depth);

static void covered(struct ctx *c, const char *path)
{
	char **n = realloc(c->cov, (c->ncov + 1) * sizeof(*c->cov));

	if (n && (n[c->ncov] = strdup(path)) != NULL)
		c->ncov++;
	if (n)
		c->cov = n;
}

/* Is path below a covered directory (so that what is made there goes to the scratch area)?
 * Asked of its nearest existing directory with the links in its path resolved (/lib64 may
 * be a link to /usr/lib64). */
static int in_overlay(const struct ctx *c, const char *path)
{
	char dir[4096], real[4096], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	do {
		if (!(slash = strrchr(dir, '/')))
			return 0;
		*slash = '\0';
	} while (!realpath(dir[0] ? dir : "/", real));
	/* the deepest overlay over it, unless a mount left as it is lies deeper still */
	size_t cov = 0, kept = 0;

	for (size_t i = 0; i < c->ncov; i++)
		if (under(real, c->cov[i]) && strlen(c->cov[i]) + 1 > cov)
			cov = strlen(c->cov[i]) + 1;
	for (size_t i = 0; i < c->nm; i++)
		if (c->m[i].unit == 0 && under(real, c->m[i].path) && strlen(c->m[i].path) + 1 > kept)
			kept = strlen(c->m[i].path) + 1;
	return cov > kept;
}

/* A mount that went away while the namespace was made (another program unmounted it and
 * removed its directory): nothing left there to cover. */
static int gone(int e)
{
	return e == ENOENT || e == ESTALE;
}

/* A place whose writes are not covered, for rep_isolation_gaps: "PATH (WHY)". */
static void gap(struct ctx *c, const char *path, const char *why)
{
	size_t gl = strlen(c->gaps), cap = sizeof(((struct iso_reply *)0)->gaps);

	if (gl + strlen(path) + strlen(why) + 6 < cap)
		snprintf(c->gaps + gl, cap - gl, "%s%s (%s)", gl ? ", " : "", path, why);
}

static void say(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(c->msg, sizeof(((struct iso_reply *)0)->msg), fmt, ap);
	va_end(ap);
}

/* File systems that hold no files of the program's (or whose writes an overlay cannot
 * take): left as they are. */
static int pseudo_fs(const char *t)
{
	static const char *const names[] = {
		"proc", "sysfs", "devtmpfs", "devpts", "cgroup", "cgroup2", "securityfs", "debugfs",
		"tracefs", "pstore", "bpf", "mqueue", "hugetlbfs", "fusectl", "configfs",
		"binfmt_misc", "autofs", "efivarfs", "nsfs", "rpc_pipefs", "selinuxfs", "overlay_ro",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(t, names[i]) == 0)
			return 1;
	return 0;
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (strcmp(dir, "/") == 0)
		return 1;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

/* mountinfo's octal escapes (\040 for a space), in place */
static void unoctal(char *s)
{
	char *o = s;

	for (; *s; s++)
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	*o = '\0';
}

static int has_opt(const char *opts, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = opts; p && *p;) {
		if (strncmp(p, name, n) == 0 && (p[n] == ',' || p[n] == '\0'))
			return 1;
		p = strchr(p, ',');
		p = p ? p + 1 : NULL;
	}
	return 0;
}

static int add_mnt(struct ctx *c, const char *path, int unit)
{
	struct mnt *m;
	int depth = 0;

	if (c->nm == ISO_MOUNTS_MAX)
		return -1;
	m = &c->m[c->nm];
	snprintf(m->path, sizeof(m->path), "%s", path);
	m->fd = open(path, O_PATH | O_CLOEXEC);
	if (m->fd < 0)
		return 0; /* not reachable from here: nothing to cover */
	if (unit == 1) {
		struct stat st;

		if (fstat(m->fd, &st) != 0) {
			close(m->fd);
			return 0;
		}
		unit = S_ISDIR(st.st_mode) ? 1 : S_ISREG(st.st_mode) ? 2 : 0;
	}
	m->unit = unit;
	for (const char *p = path; *p; p++)
		depth += *p == '/';
	m->depth = strcmp(path, "/") == 0 ? 0 : depth;
	c->nm++;
	return 0;
}

static int by_depth(const void *a, const void *b)
{
	const struct mnt *x = a, *y = b;

	return x->depth != y->depth ? x->depth - y->depth : (x < y ? -1 : x > y);
}

/* Every mount and top-level directory, the original of each opened before anything is
 * mounted; c->m sorted parents first. */
static int list_mounts(struct ctx *c)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	struct { char *mp, *type; int rw; } *pts = NULL;
	size_t cap = 0, n = 0;
	int root_rw = 0;
	DIR *d;
	struct dirent *e;

	if (!f) {
		say(c, "cannot read /proc/self/mountinfo: %s", strerror(errno));
		return -1;
	}
	/* mount point, fstype, ro?: the later of two mounts on one point is the one seen */
	while (getline(&line, &cap, f) > 0) {
		char *fld[12], *save = NULL, *dash, *tok;
		size_t k = 0;
		int ro;

		if (!(dash = strstr(line, " - ")))
			continue;
		*dash = '\0';
		for (tok = strtok_r(line, " ", &save); tok && k < 6; tok = strtok_r(NULL, " ", &save))
			fld[k++] = tok;
		if (k < 6)
			continue;
		save = NULL;
		fld[6] = strtok_r(dash + 3, " \n", &save);  /* fstype */
		fld[7] = strtok_r(NULL, " \n", &save);      /* source */
		fld[8] = strtok_r(NULL, " \n", &save);      /* super options */
		if (!fld[6])
			continue;
		unoctal(fld[4]);
		ro = has_opt(fld[5], "ro") || (fld[8] && has_opt(fld[8], "ro"));
		if (n % 64 == 0) {
			void *nn = realloc(pts, (n + 64) * sizeof(*pts));

			if (!nn)
				break;
			pts = nn;
		}
		pts[n].mp = strdup(fld[4]);
		pts[n].type = strdup(fld[6]);
		pts[n].rw = !ro;
		n++;
	}
	free(line);
	fclose(f);
	for (size_t i = 0; i < n; i++) {
		const char *mp = pts[i].mp, *type = pts[i].type;
		int hidden = 0, unit;

		if (!mp || !type)
			continue;
		for (size_t j = i + 1; j < n && !hidden; j++)
			hidden = pts[j].mp && strcmp(pts[j].mp, mp) == 0;
		if (hidden)
			continue;
		if (strcmp(mp, "/") == 0) {
			root_rw = pts[i].rw;
			continue;
		}
		if (under(mp, "/proc") || under(mp, "/sys"))
			continue;
		unit = c->isolate && !pseudo_fs(type) && pts[i].rw &&
		       strncmp(type, "fuse", 4) != 0;
		/* FUSE (sshfs, gvfs...): an overlay over it may be refused or block; left as it
		 * is, and named */
		if (c->isolate && pts[i].rw && strncmp(type, "fuse", 4) == 0)
			gap(c, mp, "FUSE");
		if (add_mnt(c, mp, unit) != 0)
			break;
	}
	/* the top-level directories of a writable root file system that are not mounts */
	if (c->isolate && root_rw && (d = opendir("/")) != NULL) {
		while ((e = readdir(d)) != NULL) {
			char p[512];
			struct stat st;
			int mounted = 0;

			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    !strcmp(e->d_name, "proc") || !strcmp(e->d_name, "sys") ||
			    !strcmp(e->d_name, "dev"))
				continue;
			snprintf(p, sizeof(p), "/%s", e->d_name);
			if (lstat(p, &st) != 0 || !S_ISDIR(st.st_mode))
				continue;
			for (size_t i = 0; i < n && !mounted; i++)
				mounted = pts[i].mp && strcmp(pts[i].mp, p) == 0;
			if (!mounted && add_mnt(c, p, 1) != 0)
				break;
		}
		closedir(d);
	}
	/* in a user namespace overlayfs cannot copy up a directory of another user's (root's
	 * /var): writable directories of theirs that programs commonly write in are covered as
	 * units of their own, so that nothing needs copying up above them */
	if (c->isolate && c->userns) {
		static const char *const shared[] = { "/var/tmp", "/var/lock" };

		for (size_t k = 0; k < sizeof(shared) / sizeof(shared[0]); k++) {
			struct stat st;
			int mounted = 0;

			for (size_t i = 0; i < n && !mounted; i++)
				mounted = pts[i].mp && strcmp(pts[i].mp, shared[k]) == 0;
			if (!mounted && lstat(shared[k], &st) == 0 && S_ISDIR(st.st_mode) &&
			    add_mnt(c, shared[k], 1) != 0)
				break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		free(pts[i].mp);
		free(pts[i].type);
	}
	free(pts);
	qsort(c->m, c->nm, sizeof(*c->m), by_depth);
	return 0;
}

/* A unit's name in the scratch area: its path without the leading '/', every byte but
 * [A-Za-z0-9._-] as %XX ("/run/netns" -> "run%2Fnetns"). */
static void unit_name(const char *path, char *out, size_t cap)
{
	size_t o = 0;

	for (const char *p = path + (path[0] == '/'); *p && o + 4 < cap; p++) {
		unsigned char ch = (unsigned char)*p;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    ch == '.' || ch == '_' || ch == '-')
			out[o++] = (char)ch;
		else
			o += (size_t)snprintf(out + o, cap - o, "%%%02X", ch);
	}
	out[o] = '\0';
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (ssize_t o = 0; o < n;) {
			ssize_t w = write(out, buf + o, (size_t)(n - o));

			if (w < 0 && errno != EINTR)
				return -1;
			o += w > 0 ? w : 0;
		}
	}
	return 0;
}

/* A file mounted on its own (a container's /etc/hosts): a copy in the scratch area is
 * mounted in its place, so that its writes go there. */
static int cover_file(struct ctx *c, struct mnt *m, const char *name)
{
	char src[64], dst[4200];
	struct stat st;
	int in, out, rc;

	snprintf(src, sizeof(src), "/proc/self/fd/%d", m->fd);
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		return 0; /* unreadable: unwritable too */
	mkdirat(c->hostfd, "files", 0700);
	snprintf(dst, sizeof(dst), "files/%s", name);
	if (fstat(in, &st) != 0 ||
	    (out = openat(c->hostfd, dst, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
	                  st.st_mode & 07777)) < 0) {
		close(in);
		say(c, "cannot copy %s into the scratch area: %s", m->path, strerror(errno));
		return -1;
	}
	rc = copy_fd(in, out);
	close(in);
	close(out);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d/files/%s", c->hostfd, name);
	if (rc != 0 || (mount(dst, m->path, NULL, MS_BIND, NULL) != 0 && !gone(errno))) {
		say(c, "cannot cover the file %s: %s", m->path, strerror(errno));
		return -1;
	}
	return 0;
}

/* An overlay on m->path: lower m's original, upper and work SCRATCH/host-ID/fs/NAME/.  -1
 * with errno when overlayfs refuses (its directories removed again). */
static int overlay(struct ctx *c, struct mnt *m, const char *name)
{
	char opts[2600], sub[1100];
	struct stat st;

	if (mkdirat(c->hostfd, "fs", 0700) != 0 && errno != EEXIST)
		return -1;
	snprintf(sub, sizeof(sub), "fs/%s", name);
	if (mkdirat(c->hostfd, sub, 0700) != 0 && errno != EEXIST)
		return -1;
	snprintf(sub, sizeof(sub), "fs/%s/upper", name);
	if (mkdirat(c->hostfd, sub, 0755) != 0 && errno != EEXIST)
		return -1;
	/* The overlay's root takes the upper directory's mode and owner: those of the mount it
	 * covers, so that a world-writable one stays so (/dev/shm, 1777: squid, running as its
	 * own user, creates its segments there).  Inside fs/NAME, 0700: reached only through
	 * the mount, in the replay's own namespace.  (In a user namespace the owner may not be
	 * mapped: it stays ours.) */
	if (fstat(m->fd, &st) == 0) {
		if (fchownat(c->hostfd, sub, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) != 0) {
			/* not mapped in this user namespace: it stays ours */
		}
		fchmodat(c->hostfd, sub, st.st_mode & 07777, 0);
	}
	snprintf(sub, sizeof(sub), "fs/%s/work", name);
	if (mkdirat(c->hostfd, sub, 0700) != 0 && errno != EEXIST)
		return -1;
	snprintf(opts, sizeof(opts),
	         "lowerdir=/proc/self/fd/%d,upperdir=/proc/self/fd/%d/fs/%s/upper,"
	         "workdir=/proc/self/fd/%d/fs/%s/work%s", m->fd, c->hostfd, name, c->hostfd, name,
	         c->userns ? ",userxattr" : "");
	if (mount("overlay", m->path, "overlay", 0, opts) != 0) {
		int e = errno;

		snprintf(sub, sizeof(sub), "fs/%s", name);
		rm_tree(c->hostfd, sub, 0);
		errno = e;
		return -1;
	}
	covered(c, m->path);
	return 0;
}

/* The scratch area on a tmpfs of this namespace, for a file system overlayfs will not take as
 * an upper layer (an overlay itself, no xattrs): the writes are then in memory. */
static int scratch_on_tmpfs(struct ctx *c)
{
	char link[64], path[4096];
	ssize_t n;
	int fd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", c->hostfd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0)
		return -1;
	path[n] = '\0';
	if (mount("encore-scratch", link, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700") != 0)
		return -1;
	/* the old descriptor names the directory under the new mount: open it again by path
	 * (nothing is mounted over the path's directories yet) */
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -1;
	close(c->hostfd);
	c->hostfd = fd;
	return 0;
}

/* The packed objects of this host at their recorded paths, read-only.  An object whose
 * recorded mode lets it be executed is copied with that mode first (the store's are 0400,
 * and execve wants the x bit). */
static int mount_pack(struct ctx *c)
{
	struct gd_iso *iso = c->r->iso;

	for (size_t i = 0; iso && i < trace_pack_count(iso->pack); i++) {
		const struct trace_pack_entry *e = trace_pack_entry(iso->pack, i);
		char src[4200], dir[4096];
		struct stat st;
		int have;

		if (e->kind == TRACE_PACK_DIR || strcmp(e->host_id, c->host) != 0)
			continue;
		/* the kernel's files are this machine's: a pack has no business there */
		if (under(e->path, "/proc") || under(e->path, "/sys") || under(e->path, "/dev"))
			continue;
		/* a cut or overwritten object (a partial copy of the session) would feed the program
		 * other bytes than it read when recorded: its size is the manifest's, or no replay */
		have = fstatat(iso->objects_fd, e->sha256, &st, AT_SYMLINK_NOFOLLOW) == 0;
		if (!have || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != e->size) {
			say(c, "the packed copy of %s is %s: run encore pack again where the session was "
			    "recorded", e->path, !have && errno == ENOENT ? "missing" : "damaged");
			return -1;
		}
		snprintf(src, sizeof(src), "/proc/self/fd/%d/%s", iso->objects_fd, e->sha256);
		if (e->mode & 0111) {
			char name[96];
			int in, out;

			mkdirat(c->hostfd, "pack", 0700);
			snprintf(name, sizeof(name), "pack/%s.%o", e->sha256, e->mode);
			out = openat(c->hostfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			             e->mode & 0755);
			if (out >= 0) {
				if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0 || copy_fd(in, out) != 0) {
					say(c, "cannot read the packed object %s (%s): %s", e->sha256, e->path,
					    strerror(errno));
					if (in >= 0)
						close(in);
					close(out);
					return -1;
				}
				close(in);
				fchmod(out, e->mode & 0755);
				close(out);
			} else if (errno != EEXIST) {
				say(c, "cannot copy the packed %s into the scratch area: %s", e->path,
				    strerror(errno));
				return -1;
			}
			snprintf(src, sizeof(src), "/proc/self/fd/%d/%s", c->hostfd, name);
		}
		/* the mount point: the file there, or one made in the overlay (a link there is
		 * replaced: the manifest has a line for each link the process went through) */
		have = lstat(e->path, &st) == 0;
		if (have && S_ISDIR(st.st_mode)) {
			say(c, "the packed file %s is a directory on this machine", e->path);
			return -1;
		}
		/* a link here that cannot be replaced (without root, in a directory of root's): the
		 * mount goes through it, onto the regular file it leads to */
		if (have && S_ISLNK(st.st_mode) && (!in_overlay(c, e->path) || unlink(e->path) != 0)) {
			struct stat t;

			if (stat(e->path, &t) != 0 || !S_ISREG(t.st_mode)) {
				say(c, "the packed %s is a symbolic link here that cannot be replaced (%s) "
				    "and leads to no file", e->path, strerror(errno));
				return -1;
			}
			have = 2;
		}
		if (!have || (have == 1 && S_ISLNK(st.st_mode))) {
			int fd;

			/* made only where it goes to the scratch area, never on the real file system */
			if (!in_overlay(c, e->path)) {
				say(c, "the packed %s %s here and no overlay covers its directory%s",
				    e->path, have ? "is a symbolic link" : "does not exist",
				    c->isolate ? "" : " (without --no-isolate the replay makes it in its "
				    "scratch area)");
				return -1;
			}
			snprintf(dir, sizeof(dir), "%s", e->path);
			for (char *s = strchr(dir + 1, '/'); s; s = strchr(s + 1, '/')) {
				*s = '\0';
				if (mkdir(dir, 0755) != 0 && errno != EEXIST)
					break;
				*s = '/';
			}
			fd = open(e->path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (fd < 0) {
				say(c, "cannot make a mount point for the packed %s: %s", e->path,
				    strerror(errno));
				return -1;
			}
			close(fd);
		}
		if (mount(src, e->path, NULL, MS_BIND, NULL) != 0 ||
		    mount(NULL, e->path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0) {
			say(c, "cannot mount the packed %s: %s", e->path, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A session recorded with randomisation off (encore record --same-layout, schemas/
 * trace-format.md "Address layout"): the kernel puts a file mapping of 2 MiB or more on a
 * 2 MiB boundary when the file's own file system asks for it (ext4, xfs), which overlayfs
 * does not; through the overlay the replay controller and the program's large libraries
 * would land elsewhere than when recorded, and every mapping after them.  So the objects the
 * recorded images mapped, and the controller, are opened before the overlays (layout_open)
 * and bind-mounted read-only over their paths after them (layout_bind): the real files
 * again, never writable.  Not for a packed session, whose objects are mounted from the
 * pack.  The descriptors in an array of nlayout_objs + 1 (-1 for none), or NULL. */
static int *layout_open(struct ctx *c)
{
	struct rep *r = c->r;
	int *fds;

	if (!r->same_layout || (r->iso && r->iso->pack))
		return NULL;
	if (!(fds = malloc((r->nlayout_objs + 1) * sizeof(*fds))))
		return NULL;
	for (size_t i = 0; i <= r->nlayout_objs; i++) {
		const char *path = i < r->nlayout_objs ? r->layout_objs[i].path : r->lib;

		fds[i] = -1;
		if (i < r->nlayout_objs && strcmp(r->layout_objs[i].host, c->host) != 0)
			continue;
		fds[i] = open(path, O_PATH | O_CLOEXEC);
	}
	return fds;
}

static void layout_bind(struct ctx *c, int *fds)
{
	struct rep *r = c->r;

	for (size_t i = 0; fds && i <= r->nlayout_objs; i++) {
		const char *path = i < r->nlayout_objs ? r->layout_objs[i].path : r->lib;
		struct stat st;
		char src[64];

		if (fds[i] < 0)
			continue;
		if (in_overlay(c, path) && fstat(fds[i], &st) == 0 && S_ISREG(st.st_mode)) {
			snprintf(src, sizeof(src), "/proc/self/fd/%d", fds[i]);
			if (mount(src, path, NULL, MS_BIND, NULL) == 0 &&
			    mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL) != 0)
				umount2(path, MNT_DETACH); /* never a writable window on the real file */
		}
		close(fds[i]);
	}
	free(fds);
}

/* Can the scratch area hold an overlay's upper layer?  A trial overlay inside it. */
static int probe(struct ctx *c)
{
	static const char *const sub[] = { "probe", "probe/l", "probe/u", "probe/w", "probe/m" };
	char opts[512], target[128];
	int rc, e;

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++)
		if (mkdirat(c->hostfd, sub[i], 0700) != 0 && errno != EEXIST)
			return -1;
	snprintf(opts, sizeof(opts), "lowerdir=/proc/self/fd/%d/probe/l,upperdir=/proc/self/fd/%d/"
	         "probe/u,workdir=/proc/self/fd/%d/probe/w%s", c->hostfd, c->hostfd, c->hostfd,
	         c->userns ? ",userxattr" : "");
	snprintf(target, sizeof(target), "/proc/self/fd/%d/probe/m", c->hostfd);
	rc = mount("overlay", target, "overlay", 0, opts);
	e = errno;
	if (rc == 0)
		umount2(target, MNT_DETACH);
	rm_tree(c->hostfd, "probe", 0);
	errno = e;
	return rc;
}

static int is_mount_point(const struct ctx *c, const char *path)
{
	for (size_t i = 0; i < c->nm; i++)
		if (strcmp(c->m[i].path, path) == 0)
			return 1;
	return 0;
}

/* In a user namespace, overlayfs refuses a lower directory with mounts below it (they are
 * locked: an overlay would show what they hide).  Its subdirectories are covered one by one
 * instead, down to the mounts; the files directly in the directories split so are not
 * (rep_isolation_gaps). */
static int split(struct ctx *c, const char *path, int fd, int depth)
{
	DIR *d;
	struct dirent *e;
	int dfd = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (dfd < 0 || !(d = fdopendir(dfd))) {
		if (dfd >= 0)
			close(dfd);
		return 0; /* unreadable: nothing the program could write there either */
	}
	gap(c, path, "its own entries");
	while (rc == 0 && (e = readdir(d)) != NULL) {
		struct mnt sub;
		struct stat st;
		char name[1024];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(st.st_mode))
			continue;
		memset(&sub, 0, sizeof(sub));
		snprintf(sub.path, sizeof(sub.path), "%s/%s", strcmp(path, "/") ? path : "",
		         e->d_name);
		if (is_mount_point(c, sub.path))
			continue;
		if ((sub.fd = openat(dirfd(d), e->d_name, O_PATH | O_DIRECTORY | O_NOFOLLOW |
		                     O_CLOEXEC)) < 0)
			continue;
		unit_name(sub.path, name, sizeof(name));
		if (overlay(c, &sub, name) != 0 && !gone(errno)) {
			if (errno == EINVAL && depth < 32) {
				rc = split(c, sub.path, sub.fd, depth + 1);
			} else {
				say(c, "overlayfs refused to cover %s (%s)", sub.path, strerror(errno));
				rc = -1;
			}
		}
		close(sub.fd);
	}
	closedir(d);
	return rc;
}

/* Is anything mounted at or below the directory `path`?  Its removal would go down into that
 * mount: one left as it is (a FUSE mount, a read-only file system) would lose its files for
 * real. */
static int mounts_below(const struct ctx *c, const char *path)
{
	char real[4096];

	if (!realpath(path, real))
		return 1;
	for (size_t i = 0; i < c->nm; i++)
		if (under(c->m[i].path, real))
			return 1;
	return 0;
}

/* What the recording created and is there now (gd_created.c): removed, parents first, where
 * an overlay covers it, which whites it out in the upper layer and leaves the real file
 * system as it is.  Under no overlay (a FUSE mount, a read-only or pseudo file system), a
 * directory with a mount below it, or
 * where overlayfs cannot remove it (in a user namespace, below a directory of another user's,
 * which it cannot copy up: EOVERFLOW), it stays, counted.  One a rename made from a file
 * there at the start is renamed back to that name instead, when it can be. */
static void hide_created(struct ctx *c)
{
	size_t n = rep__created_paths(c->r, c->host, NULL, NULL, 0);
	const char **paths = n ? calloc(2 * n, sizeof(*paths)) : NULL, **to = paths + n;
	struct stat st;

	if (!paths) {
		*c->not_hidden += n;
		return;
	}
	rep__created_paths(c->r, c->host, paths, to, n);
	for (size_t i = 0; i < n; i++) {
		if (lstat(paths[i], &st) != 0) {
			(*c->hidden)++; /* there when planned: gone with a directory hidden before it */
			continue;
		}
		if (!in_overlay(c, paths[i]) || (S_ISDIR(st.st_mode) && mounts_below(c, paths[i]))) {
			(*c->not_hidden)++;
			continue;
		}
		/* a file renamed from one there at the start: back under its old name (never over
		 * a name taken since: NOREPLACE), else hidden */
		if (to[i] && in_overlay(c, to[i]) &&
		    renameat2(AT_FDCWD, paths[i], AT_FDCWD, to[i], RENAME_NOREPLACE) == 0) {
			(*c->restored)++;
			continue;
		}
		rm_tree(AT_FDCWD, paths[i], 0);
		if (lstat(paths[i], &st) != 0 && errno == ENOENT)
			(*c->hidden)++;
		else
			(*c->not_hidden)++;
	}
	free(paths);
}

static int host_mounts(struct ctx *c)
{
	char ctl[4200];

	if (list_mounts(c) != 0)
		return -1;
	/* the upper layers go to the scratch area, or, where overlayfs will not have them there
	 * (an overlay, a file system without the xattrs it needs), to a tmpfs (in memory) */
	if (c->isolate && probe(c) != 0) {
		int e = errno;

		if (c->r->iso->keep) {
			say(c, "overlayfs refuses the --keep-scratch directory as an upper layer (%s): "
			    "name one on ext4, xfs, btrfs or tmpfs", strerror(e));
			return -1;
		}
		if (scratch_on_tmpfs(c) != 0 || probe(c) != 0) {
			say(c, "overlayfs refused a trial mount (%s)", strerror(errno));
			return -1;
		}
	}
	for (size_t i = 0; i < c->nm; i++) {
		struct mnt *m = &c->m[i];
		char name[1024], src[64];
		int parent = 0;

		unit_name(m->path, name, sizeof(name));
		if (m->unit == 1) {
			if (overlay(c, m, name) == 0 || gone(errno))
				continue;
			if (errno == EINVAL && c->userns) {
				if (split(c, m->path, m->fd, 0) != 0)
					return -1;
				continue;
			}
			say(c, "overlayfs refused to cover %s (%s)", m->path, strerror(errno));
			return -1;
		}
		if (m->unit == 2) {
			if (cover_file(c, m, name) != 0)
				return -1;
			continue;
		}
		/* a mount left as it is, under a covered directory: mounted again on the overlay */
		for (size_t j = 0; j < i && !parent; j++)
			parent = c->m[j].unit == 1 && under(m->path, c->m[j].path);
		if (!parent)
			continue;
		snprintf(src, sizeof(src), "/proc/self/fd/%d", m->fd);
		if (mount(src, m->path, NULL, MS_BIND | MS_REC, NULL) != 0 && !gone(errno)) {
			say(c, "cannot keep the mount %s visible over the overlay: %s", m->path,
			    strerror(errno));
			return -1;
		}
	}
	if (c->isolate)
		hide_created(c);
	if (mount_pack(c) != 0) {
		*c->pack_bad = 1; /* --no-isolate would not help: the pack is mounted all the same */
		return -1;
	}
	/* the GD's control directory (socket, status board, outputs), the real one, on top */
	snprintf(ctl, sizeof(ctl), "%s/" REP_SUBDIR, c->r->dir);
	{
		char src[64];

		snprintf(src, sizeof(src), "/proc/self/fd/%d", c->r->cdir);
		if (mount(src, ctl, NULL, MS_BIND | MS_REC, NULL) != 0) {
			say(c, "cannot mount the replay's control directory %s: %s", ctl, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A descriptor opened before unshare names a mount of the old namespace, which overlayfs and
 * bind mounts refuse: the same directory again, through its path in the new one (checked to
 * be the same inode).  -1 when it is not. */
static int reopen_here(int fd, int flags)
{
	char link[64], path[4096];
	struct stat a, b;
	ssize_t n;
	int nfd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	if ((n = readlink(link, path, sizeof(path) - 1)) <= 0 || fstat(fd, &a) != 0)
		return -1;
	path[n] = '\0';
	if ((nfd = open(path, flags | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return -1;
	if (fstat(nfd, &b) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino) {
		close(nfd);
		return -1;
	}
	close(fd);
	return nfd;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
	close(fd);
	return rc;
}

/* The helper: make the namespaces, mount, say so, and wait for the GD to have opened them. */
static void __attribute__((noreturn)) helper(struct rep *r, const char *host, int hostfd,
                                             int rep_fd, int go_fd)
{
	struct iso_reply rp;
	struct ctx c;
	uid_t uid = geteuid();
	gid_t gid = getegid();
	char buf[64];

	memset(&rp, 0, sizeof(rp));
	memset(&c, 0, sizeof(c));
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	c.r = r;
	c.host = host;
	c.hostfd = hostfd;
	c.isolate = r->opt.no_isolate != 1;
	c.msg = rp.msg;
	c.gaps = rp.gaps;
	c.pack_bad = &rp.pack_bad;
	c.hidden = &rp.hidden;
	c.not_hidden = &rp.not_hidden;
	c.restored = &rp.restored;
	c.m = calloc(ISO_MOUNTS_MAX, sizeof(*c.m));
	/* as root a mount namespace is enough (a user namespace would take root's powers over
	 * the machine away from the replayed programs); otherwise a user namespace too */
	if (uid != 0 || unshare(CLONE_NEWNS) != 0) {
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) {
			int e = errno;

			rp.status = ISO_NONS;
			snprintf(rp.msg, sizeof(rp.msg), "no user namespace: %s%s", strerror(e),
			         e == EPERM || e == ENOSPC ? "; see sysctl user.max_user_namespaces, "
			         "kernel.unprivileged_userns_clone" : "");
			goto reply;
		}
		c.userns = rp.userns = 1;
		snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
		if (write_file("/proc/self/setgroups", "deny") != 0 && errno != ENOENT) {
			rp.status = ISO_NONS;
			snprintf(rp.msg, sizeof(rp.msg), "cannot write /proc/self/setgroups: %s",
			         strerror(errno));
			goto reply;
		}
		if (write_file("/proc/self/uid_map", buf) != 0 ||
		    (snprintf(buf, sizeof(buf), "%u %u 1\n", (unsigned)gid, (unsigned)gid),
		     write_file("/proc/self/gid_map", buf) != 0)) {
			rp.status = ISO_NONS;
			snprintf(rp.msg, sizeof(rp.msg), "cannot map uid %u in a user namespace: %s",
			         (unsigned)uid, strerror(errno));
			goto reply;
		}
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
		rp.status = ISO_NONS;
		snprintf(rp.msg, sizeof(rp.msg), "cannot make the replay's mounts private: %s",
		         strerror(errno));
		goto reply;
	}
	if ((c.hostfd = reopen_here(c.hostfd, O_RDONLY)) < 0 ||
	    (r->cdir = reopen_here(r->cdir, O_RDONLY)) < 0 ||
	    (r->iso->objects_fd >= 0 &&
	     (r->iso->objects_fd = reopen_here(r->iso->objects_fd, O_PATH)) < 0)) {
		rp.status = ISO_FAILED;
		snprintf(rp.msg, sizeof(rp.msg), "the session or scratch directory moved while the "
		         "replay started");
		goto reply;
	}
	{
		int *fds = c.m ? layout_open(&c) : NULL;

		if (!c.m || host_mounts(&c) != 0)
			rp.status = ISO_FAILED;
		else
			layout_bind(&c, fds);
	}
reply:
	if (write(rep_fd, &rp, sizeof(rp)) < 0)
		_exit(1);
	/* until the GD has our namespaces (it closes its end) */
	while (read(go_fd, buf, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

/* A private directory for one host's scratch (and keep its descriptor). */
static int host_dir(struct gd_iso *iso, const char *host, struct trace_diag *d)
{
	char name[80];
	int fd;

	snprintf(name, sizeof(name), "host-");
	unit_name(host[0] ? host : "unknown", name + 5, sizeof(name) - 5);
	if (mkdirat(iso->scratch_fd, name, 0700) != 0 && errno != EEXIST) {
		rep__diag_set(d, TRACE_EIO, iso->scratch, "cannot make the scratch area: %s",
		              strerror(errno));
		return -1;
	}
	fd = openat(iso->scratch_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		rep__diag_set(d, TRACE_EIO, iso->scratch, "cannot open the scratch area: %s",
		              strerror(errno));
	return fd;
}

/* The scratch root: DIR/.encore-replay/scratch, or --keep-scratch's (new or empty, ours). */
static int scratch_root(struct rep *r, struct gd_iso *iso, struct trace_diag *d)
{
	struct stat st;

	if (r->opt.keep_scratch) {
		const char *k = r->opt.keep_scratch;
		DIR *dir;
		struct dirent *e;
		int empty = 1;

		iso->keep = 1;
		if (mkdir(k, 0700) != 0 && errno != EEXIST) {
			rep__diag_set(d, TRACE_EIO, k, "--keep-scratch: cannot make the directory: %s",
			              strerror(errno));
			return -1;
		}
		iso->scratch_fd = open(k, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (iso->scratch_fd < 0 || fstat(iso->scratch_fd, &st) != 0 ||
		    st.st_uid != geteuid()) {
			rep__diag_set(d, TRACE_EIO, k, "--keep-scratch: not a directory of yours");
			return -1;
		}
		if ((dir = fdopendir(dup(iso->scratch_fd))) != NULL) {
			while ((e = readdir(dir)) != NULL)
				empty &= !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
			closedir(dir);
		}
		if (!empty) {
			rep__diag_set(d, TRACE_EINVAL, k, "--keep-scratch: the directory is not empty: "
			              "name a new one");
			return -1;
		}
		if (!realpath(k, iso->scratch))
			snprintf(iso->scratch, sizeof(iso->scratch), "%s", k);
		fchmod(iso->scratch_fd, 0700);
		return 0;
	}
	snprintf(iso->scratch, sizeof(iso->scratch), "%s/" REP_SUBDIR "/scratch", r->dir);
	/* one left by a replay that was killed would show its writes in this one */
	rm_tree(r->cdir, "scratch", 0);
	if (mkdirat(r->cdir, "scratch", 0700) != 0) {
		rep__diag_set(d, TRACE_EIO, iso->scratch, "cannot make the scratch area: %s",
		              strerror(errno));
		return -1;
	}
	iso->made = 1;
	iso->scratch_fd = openat(r->cdir, "scratch", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (iso->scratch_fd < 0 || fstat(iso->scratch_fd, &st) != 0 || st.st_uid != geteuid()) {
		rep__diag_set(d, TRACE_EIO, iso->scratch, "is not a directory of yours: remove it and "
		              "replay again");
		return -1;
	}
	return 0;
}

/* One host's namespaces, through the helper. */
static int make_host(struct rep *r, struct iso_host *h, struct trace_diag *d)
{
	struct gd_iso *iso = r->iso;
	struct iso_reply rp;
	int rpipe[2], go[2], hostfd, st;
	ssize_t n;
	pid_t pid;

	if ((hostfd = host_dir(iso, h->id, d)) < 0)
		return TRACE_EIO;
	if (pipe2(rpipe, O_CLOEXEC) != 0 || pipe2(go, O_CLOEXEC) != 0) {
		rep__diag_set(d, TRACE_EIO, NULL, "pipe: %s", strerror(errno));
		close(hostfd);
		return TRACE_EIO;
	}
	fflush(NULL);
	if ((pid = fork()) < 0) {
		rep__diag_set(d, TRACE_EIO, NULL, "fork: %s", strerror(errno));
		close(hostfd);
		return TRACE_EIO;
	}
	if (pid == 0) {
		close(rpipe[0]);
		close(go[1]);
		helper(r, h->id, hostfd, rpipe[1], go[0]);
	}
	close(hostfd);
	close(rpipe[1]);
	close(go[0]);
	memset(&rp, 0, sizeof(rp));
	do
		n = read(rpipe[0], &rp, sizeof(rp));
	while (n < 0 && errno == EINTR);
	close(rpipe[0]);
	if (n != (ssize_t)sizeof(rp)) {
		rp.status = ISO_FAILED;
		snprintf(rp.msg, sizeof(rp.msg), "the helper making the namespace ended early");
	}
	if (rp.status == ISO_OK) {
		char path[64];

		iso->userns = rp.userns;
		rep__created_count(r, rp.hidden, rp.not_hidden, rp.restored);
		if (rp.gaps[0] && !iso->gaps[0])
			snprintf(iso->gaps, sizeof(iso->gaps), "%s", rp.gaps);
		if (rp.userns) {
			snprintf(path, sizeof(path), "/proc/%ld/ns/user", (long)pid);
			h->userns = open(path, O_RDONLY | O_CLOEXEC);
		}
		snprintf(path, sizeof(path), "/proc/%ld/ns/mnt", (long)pid);
		h->mntns = open(path, O_RDONLY | O_CLOEXEC);
		if (h->mntns < 0 || (rp.userns && h->userns < 0)) {
			rp.status = ISO_FAILED;
			snprintf(rp.msg, sizeof(rp.msg), "cannot open the namespaces of the helper: %s",
			         strerror(errno));
		}
	}
	close(go[1]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	/* isolated if able (ENCORE_NO_ISOLATE=auto): a machine that cannot make the namespace
	 * or its overlays (for the first host: the others' are made as it was) replays as with
	 * --no-isolate, unless the packed files need them */
	if (rp.status != ISO_OK && !rp.pack_bad && r->opt.no_isolate == REP_ISOLATE_IF_ABLE &&
	    !rep_packed_files(r) && iso->nhosts == 1) {
		snprintf(iso->unisolated, sizeof(iso->unisolated), "%s", rp.msg);
		r->opt.no_isolate = 1;
		return 0;
	}
	if (rp.status == ISO_NONS && !r->opt.no_isolate) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "replay is not isolated: files the replayed "
		              "programs write would be written for real (%.130s); pass --no-isolate "
		              "to accept that", rp.msg);
		return TRACE_EINVAL;
	}
	if (rp.status == ISO_NONS) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "this session is packed, and its packed files "
		              "need a mount namespace (%.100s): replay where one is allowed, or pass "
		              "--no-pack to replay with this machine's files", rp.msg);
		return TRACE_EINVAL;
	}
	if (rp.status != ISO_OK) {
		rep__diag_set(d, TRACE_EIO, NULL, "host %.32s: %.160s%s", h->id[0] ? h->id : "?", rp.msg,
		              rp.pack_bad ? "; --no-pack replays with this machine's files" :
		              r->opt.no_isolate == 1 ? "" : "; --no-isolate replays without isolation");
		return TRACE_EIO;
	}
	return 0;
}

int rep__iso_setup(struct rep *r, struct trace_diag *d)
{
	struct gd_iso *iso;
	int rc;

	/* what the recording created, to hide (or count, without a namespace) */
	if ((rc = rep__created_plan(r)) != 0) {
		rep__diag_set(d, rc, NULL, "out of memory");
		return rc;
	}
	if (r->opt.no_isolate == 1 && !rep_packed_files(r))
		return 0;
	if (!(iso = iso_get(r)))
		return TRACE_ENOMEM;
	if (scratch_root(r, iso, d) != 0)
		return TRACE_EIO;
	/* one namespace per recorded host, for the roots (children stay in their parent's) */
	for (size_t i = 0; i < r->nprocs; i++) {
		struct gd_proc *p = &r->procs[i];
		size_t k;

		if (p->parent[0])
			continue;
		for (k = 0; k < iso->nhosts; k++)
			if (strcmp(iso->hosts[k].id, p->host_id) == 0)
				break;
		if (k == iso->nhosts) {
			if (k == ISO_HOSTS_MAX) {
				rep__diag_set(d, TRACE_EINVAL, NULL, "more than %d hosts in one session",
				              ISO_HOSTS_MAX);
				return TRACE_EINVAL;
			}
			snprintf(iso->hosts[k].id, sizeof(iso->hosts[k].id), "%s", p->host_id);
			iso->hosts[k].userns = iso->hosts[k].mntns = -1;
			iso->nhosts++;
			if ((rc = make_host(r, &iso->hosts[k], d)) != 0)
				return rc;
			if (iso->unisolated[0])
				return 0; /* no namespace for any host then */
		}
	}
	return 0;
}

int rep__iso_enter(const struct rep *r, const struct gd_proc *p)
{
	const struct gd_iso *iso = r->iso;

	for (size_t k = 0; iso && k < iso->nhosts; k++) {
		const struct iso_host *h = &iso->hosts[k];

		if (strcmp(h->id, p->host_id) != 0 || h->mntns < 0)
			continue;
		if (h->userns >= 0 && setns(h->userns, CLONE_NEWUSER) != 0)
			return -errno;
		if (setns(h->mntns, CLONE_NEWNS) != 0)
			return -errno;
		return 0;
	}
	return 0;
}

int rep_enter_namespaces(const struct rep *r, size_t i)
{
	return i < r->nprocs ? rep__iso_enter(r, &r->procs[i]) : -EINVAL;
}

const char *rep_isolation_gaps(const struct rep *r)
{
	return r->iso && r->iso->gaps[0] && r->opt.no_isolate != 1 ? r->iso->gaps : NULL;
}

const char *rep_unisolated(const struct rep *r)
{
	return r->iso && r->iso->unisolated[0] ? r->iso->unisolated : NULL;
}

const char *rep_scratch(const struct rep *r)
{
	return r->iso && r->iso->nhosts && r->iso->hosts[0].mntns >= 0 && r->opt.no_isolate != 1 ?
	       r->iso->scratch : NULL;
}

/* Remove a tree we made, never following a link; directories we cannot enter (overlayfs's
 * work directory is mode 0) are opened up first. */
static void rm_tree(int dfd, const char *name, int depth)
{
	DIR *d;
	struct dirent *e;
	int fd;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return;
	if (depth > 256)
		return;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == EACCES && fchmodat(dfd, name, 0700, 0) == 0)
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rm_tree(dirfd(d), e->d_name, depth + 1);
	closedir(d);
	unlinkat(dfd, name, AT_REMOVEDIR);
}

/* A kept scratch area keeps only what the replay wrote: overlayfs's work directories (mode 0,
 * in the way of a plain rm -r) go. */
static void drop_workdirs(int root)
{
	DIR *hosts = fdopendir(dup(root));
	struct dirent *h;

	if (hosts)
		rewinddir(hosts); /* the offset is shared with root's, read through before */
	while (hosts && (h = readdir(hosts)) != NULL) {
		char fs[600];
		DIR *units;
		struct dirent *u;
		int fd;

		if (strncmp(h->d_name, "host-", 5) != 0)
			continue;
		snprintf(fs, sizeof(fs), "%s/fs", h->d_name);
		if ((fd = openat(root, fs, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (!(units = fdopendir(fd))) {
			close(fd);
			continue;
		}
		while ((u = readdir(units)) != NULL) {
			int ufd;

			if (u->d_name[0] == '.')
				continue;
			ufd = openat(dirfd(units), u->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
			             O_CLOEXEC);
			if (ufd >= 0) {
				rm_tree(ufd, "work", 0);
				close(ufd);
			}
		}
		closedir(units);
	}
	if (hosts)
		closedir(hosts);
}

void rep__iso_free(struct rep *r)
{
	struct gd_iso *iso = r->iso;

	if (!iso)
		return;
	for (size_t k = 0; k < iso->nhosts; k++) {
		if (iso->hosts[k].userns >= 0)
			close(iso->hosts[k].userns);
		if (iso->hosts[k].mntns >= 0)
			close(iso->hosts[k].mntns);
	}
	if (iso->scratch_fd >= 0) {
		if (iso->keep)
			drop_workdirs(iso->scratch_fd);
		close(iso->scratch_fd);
	}
	/* the namespaces died with their last process and descriptor, their overlays with them */
	if (iso->made && !iso->keep && r->cdir >= 0)
		rm_tree(r->cdir, "scratch", 0);
	if (iso->objects_fd >= 0)
		close(iso->objects_fd);
	trace_pack_free(iso->pack);
	free(iso);
	r->iso = NULL;
}
