/*
 * util.c: small helpers shared by the subcommands: error lines, JSON strings, where the
 * encore executable lives and which preload libraries it uses, damage among the analyzer's
 * warnings, and whether a session directory is the user's own.
 */
#include <errno.h>
#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "rep.h"
#include "view.h"

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "encore %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_diag(const char *cmd, const struct trace_diag *d)
{
	/* an offset says where a file's content is wrong; a missing file has none */
	int content = d->offset > 0 || d->code == TRACE_ECORRUPT || d->code == TRACE_ETRUNCATED ||
	              d->code == TRACE_EMAGIC || d->code == TRACE_EVERSION;

	if (d->file[0] && content)
		fprintf(stderr, "encore %s: %s: offset %llu: %s\n", cmd, d->file,
		        (unsigned long long)d->offset, d->msg[0] ? d->msg : trace_strerror(d->code));
	else if (d->file[0])
		fprintf(stderr, "encore %s: %s: %s\n", cmd, d->file,
		        d->msg[0] ? d->msg : trace_strerror(d->code));
	else
		fprintf(stderr, "encore %s: %s\n", cmd, d->msg[0] ? d->msg : trace_strerror(d->code));
}

int cli_is_damage(const char *warning)
{
	return strstr(warning, ": damaged at offset ") != NULL;
}

int cli_warnings(const char *cmd, const struct ana_session *s)
{
	int damaged = 0;

	for (size_t i = 0; i < ana_nwarnings(s); i++) {
		fprintf(stderr, "encore %s: warning: %s\n", cmd, ana_warning(s, i));
		damaged |= cli_is_damage(ana_warning(s, i));
	}
	return damaged;
}

int cli_is_help(const char *arg)
{
	return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

const char *cli_self_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	return dir;
}

/* 1 when the encore executable is the one in the build tree (ENCORE_BUILD_DIR, set by
 * cli/meson.build): only then are the build tree's libraries the right ones. */
static int in_build_tree(void)
{
	char build[PATH_MAX];

	return realpath(ENCORE_BUILD_DIR, build) && strcmp(build, cli_self_dir()) == 0;
}

int cli_find_lib(const char *name, const char *env, const char *build_path, char *out,
                 size_t cap)
{
	const char *val = getenv(env);
	char dir[PATH_MAX], path[2 * PATH_MAX];

	if (val && *val) {
		snprintf(path, sizeof(path), "%s", val);
	} else if (build_path && in_build_tree()) {
		snprintf(path, sizeof(path), "%s", build_path);
	} else {
		if (ENCORE_PKGLIBDIR[0] == '/')
			snprintf(path, sizeof(path), "%s", ENCORE_PKGLIBDIR);
		else
			snprintf(path, sizeof(path), "%s/%s", cli_self_dir(), ENCORE_PKGLIBDIR);
		/* without the "bin/.." in the message when the library is missing */
		if (realpath(path, dir))
			snprintf(path, sizeof(path), "%s/%s", dir, name);
		else
			snprintf(path + strlen(path), sizeof(path) - strlen(path), "/%s", name);
	}
	if (access(path, R_OK) == 0 && realpath(path, out))
		return 0;
	snprintf(out, cap, "%s", path);
	return -1;
}

int cli_session_why(const char *dir, char *why, size_t cap)
{
	struct stat st;

	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (st.st_uid != geteuid()) {
		snprintf(why, cap, "%s is owned by uid %lu, not you", dir, (unsigned long)st.st_uid);
		return 1;
	}
	if (st.st_mode & 022) {
		snprintf(why, cap, "%s is writable by %s (mode %04o)", dir,
		         st.st_mode & 002 ? "others" : "its group", (unsigned)(st.st_mode & 07777));
		return 1;
	}
	return 0;
}

int cli_session_trusted(const char *cmd, const char *dir, int trust)
{
	/* what the command would do with the session, for the message */
	static const char *const verbs[][2] = {
		{ "replay", "replay" }, { "debug", "replay" }, { "sql", "query" }, { "db", "load" },
		{ "pack", "pack" },
	};
	const char *verb = "use";
	char why[PATH_MAX + 128];

	if (trust || !cli_session_why(dir, why, sizeof(why)))
		return 0;
	for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strcmp(cmd, verbs[i][0]) == 0)
			verb = verbs[i][1];
	cli_error(cmd, "%s; pass --trust to %s it anyway", why, verb);
	return -1;
}

void cli_json_string(FILE *out, const char *s)
{
	view_json_string(out, s);
}

int cli_for_each_notrace(const char *dir, int (*fn)(const char *file, int err, void *arg),
                         void *arg)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d;
	int n = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/.encore-registry", dir) >= sizeof(path) ||
	    !(d = opendir(path)))
		return 0;
	while ((de = readdir(d))) {
		char *file;
		long e;

		if (strncmp(de->d_name, "notrace.", 8) != 0)
			continue;
		e = strtol(de->d_name + 8, &file, 10);
		if (*file != '.')
			continue;
		n += fn(file + 1, (int)e, arg);
	}
	closedir(d);
	return n;
}

int cli_no_isolate_env(const char *cmd, int keep, int *no_isolate)
{
	const char *v = getenv("ENCORE_NO_ISOLATE");

	if (!v || !*v || strcmp(v, "0") == 0)
		return 0;
	if (strcmp(v, "1") == 0) {
		if (!keep)
			*no_isolate = 1;
		return 0;
	}
	if (strcmp(v, "auto") == 0) {
		if (!*no_isolate)
			*no_isolate = REP_ISOLATE_IF_ABLE;
		return 0;
	}
	cli_error(cmd, "ENCORE_NO_ISOLATE=%.40s: expected 1 (as --no-isolate), auto (isolate "
	          "where the machine can) or 0", v);
	return -1;
}

void cli_catch_signals(void (*fn)(int))
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

const char *cli_pstate_name(int state)
{
	switch (state) {
	case REP_P_RUNNING: return "running";
	case REP_P_HALTED: return "halted";
	case REP_P_EXITED: return "exited";
	default: return "not started";
	}
}

int cli_bad_option(const char *cmd)
{
	fprintf(stderr, "Try 'encore %s --help' for the options.\n", cmd);
	return CLI_USAGE;
}

int cli_parse_count(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || *s < '0' || *s > '9') /* (strtoull takes "-1" and " 5" and wraps) */
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !(v > 0) || v > 1e9) /* (NaN fails v > 0) */
		return -1;
	*out = v;
	return 0;
}
