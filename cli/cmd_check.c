/*
 * cmd_check.c: `encore check DIR|FILE...`: reads every trace file with the real reader and
 * says, per file, whether it is whole: events, unflushed tail, dropped chunks, damage with
 * its offset.  The offline checker reuses the parser, as redis-check-rdb does.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore check - verify trace files: headers, checksums, damage\n\n"
	        "SYNOPSIS\n"
	        "    encore check DIR|FILE...\n\n"
	        "DESCRIPTION\n"
	        "    Reads every event of every trace file (the *.trace files of a session\n"
	        "    directory, or the files named) and prints one line per file: its process,\n"
	        "    the number of events, whether the recorder closed it, events recovered\n"
	        "    from an unflushed tail, events dropped by the disk budget, any damage\n"
	        "    (torn or corrupt chunk) with its byte offset, and a trace the recorder\n"
	        "    stopped writing while the program ran on (\"TRUNCATED after event N:\n"
	        "    No space left on device\"; a seccomp filter, a descriptor taken).  Then\n"
	        "    every fork and exec whose child or new image has no trace: \"event N\n"
	        "    (fork): process P.k was NOT RECORDED: REASON\" (privileges dropped, a\n"
	        "    set-user-ID program...).  A directory where two files claim the same\n"
	        "    image of the same process (copies of two recordings mixed) is refused, as\n"
	        "    every other command refuses it.\n\n"
	        "OPTIONS\n"
	        "    -h, --help  this text\n\n"
	        "EXIT STATUS\n"
	        "    0 every file is readable to its end; 1 some file is damaged, truncated\n"
	        "    or unreadable, a process forked or executed went unrecorded, or two\n"
	        "    files of a directory claim the same process image;\n"
	        "    2 usage error.\n");
	fprintf(out, "\nSee encore-check(1).\n");
}

/* The process image a file claims (its header), to find two files claiming the same. */
struct claim {
	char name[TRACE_NAME_MAX];
	uint32_t segment;
	char path[4096];
};

static int check_file(const char *path, struct claim *claim)
{
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	uint64_t n = 0;
	int rc;

	if (trace_reader_open(path, &r, &d) != 0) {
		cli_diag("check", &d);
		return 1;
	}
	if (claim) {
		snprintf(claim->name, sizeof(claim->name), "%s", trace_reader_process(r)->name);
		claim->segment = trace_reader_process(r)->segment;
		snprintf(claim->path, sizeof(claim->path), "%s", path);
	}
	while ((rc = trace_reader_next(r, &ev)) > 0)
		n++;
	printf("%s: process %s image %u: %" PRIu64 " events, %s", path,
	       trace_reader_process(r)->name, trace_reader_process(r)->segment, n,
	       trace_reader_closed(r) ? "closed" : "not closed");
	if (!trace_reader_closed(r))
		/* (the tail is written in place as events come, with no checksum: read as found) */
		printf(" (%" PRIu64 " events from the unflushed tail, which has no checksum)",
		       trace_reader_tail_events(r));
	if (trace_reader_dropped(r))
		printf(", %" PRIu64 " events dropped by the disk budget", trace_reader_dropped(r));
	if (rc < 0) {
		printf(", read error: %s\n", trace_strerror(rc));
		trace_reader_close(r);
		return 1;
	}
	if (trace_reader_damage(r, &d)) {
		printf(", DAMAGED at offset %" PRIu64 ": %s; events after it are lost\n", d.offset,
		       d.msg);
		trace_reader_close(r);
		return 1;
	}
	{
		/* The recorder stopped writing (full disk...) while the program ran on: never "ok". */
		uint64_t last;
		int e = trace_reader_stopped(r, &last);

		if (e) {
			printf(", TRUNCATED after event %" PRIu64 ": %s; the process ran on unrecorded\n",
			       last, trace_stop_reason(e));
			trace_reader_close(r);
			return 1;
		}
	}
	printf(", ok\n");
	trace_reader_close(r);
	return 0;
}

/* --- forks and execs with no trace ------------------------------------------------------- */

/* 1 if DIR/FILE exists, or a notrace note names FILE (reported through that note). */
static int has_file_or_note(const char *dir, const char *file)
{
	char path[PATH_MAX];
	struct dirent *de;
	struct stat st;
	DIR *d;
	int found = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, file) < sizeof(path) &&
	    stat(path, &st) == 0)
		return 1;
	if ((size_t)snprintf(path, sizeof(path), "%s/.encore-registry", dir) >= sizeof(path) ||
	    !(d = opendir(path)))
		return 0;
	while (!found && (de = readdir(d))) {
		const char *dot;

		if (strncmp(de->d_name, "notrace.", 8) == 0 && (dot = strchr(de->d_name + 8, '.')) &&
		    strcmp(dot + 1, file) == 0)
			found = 1;
	}
	closedir(d);
	return found;
}

/* One trace file: its FORK events (aux[0] = the child's number k, aux[1] = why the recorder
 * knew the child would go unrecorded) and a final EXEC (aux[0] = why), each checked against
 * the files of the session (recorder/README.md, "Limits"). */
static int scan_file(const char *dir, const char *path, const char *name,
                     void (*fn)(const struct cli_unrecorded *u, void *arg), void *arg)
{
	struct cli_unrecorded u;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev, last;
	char file[TRACE_NAME_MAX + 32];
	uint32_t segment;
	int n = 0, any = 0;

	if (trace_reader_open(path, &r, &d) != 0)
		return 0;
	segment = trace_reader_process(r)->segment;
	memset(&last, 0, sizeof(last));
	while (trace_reader_next(r, &ev) > 0) {
		any = 1;
		last = ev;
		if (ev.kind != TRACE_EV_FORK || ev.err || ev.result < 0 || ev.naux < 1)
			continue;
		memset(&u, 0, sizeof(u));
		if ((size_t)snprintf(u.child, sizeof(u.child), "%s.%llu", name,
		                     (unsigned long long)ev.aux[0]) >= sizeof(u.child) ||
		    trace_file_name(u.child, 0, file, sizeof(file)) < 0 || has_file_or_note(dir, file))
			continue;
		u.path = path;
		u.parent = name;
		u.index = ev.index;
		u.why = ev.naux >= 2 ? (int)ev.aux[1] : 0;
		fn(&u, arg);
		n++;
	}
	/* An image ends at a successful exec: its file is closed and the EXEC is its last event
	 * (a failed one is followed by the failure's EXEC). */
	if (any && last.kind == TRACE_EV_EXEC && last.result == 0 && trace_reader_closed(r) &&
	    trace_file_name(name, segment + 1, file, sizeof(file)) >= 0 &&
	    !has_file_or_note(dir, file)) {
		memset(&u, 0, sizeof(u));
		u.path = path;
		u.parent = name;
		u.index = last.index;
		u.exec = 1;
		u.segment = segment + 1;
		u.why = last.naux >= 1 ? (int)last.aux[0] : 0;
		fn(&u, arg);
		n++;
	}
	trace_reader_close(r);
	return n;
}

int cli_for_each_unrecorded(const char *dir, void (*fn)(const struct cli_unrecorded *u, void *arg),
                            void *arg)
{
	struct trace_session *s;
	struct trace_diag d;
	size_t i, j;
	int n = 0;

	if (trace_session_open(dir, &s, &d) != 0)
		return -1;
	for (i = 0; i < trace_session_count(s); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		for (j = 0; j < nf; j++)
			n += scan_file(dir, paths[j], trace_session_name(s, i), fn, arg);
	}
	trace_session_close(s);
	return n;
}

const char *cli_unrecorded_reason(const struct cli_unrecorded *u)
{
	if (u->why)
		return trace_stop_reason(u->why);
	return "no trace and no note (the recorder could not start in it: a static or "
	       "set-user-ID program, or it was killed before it started)";
}

static void print_unrecorded(const struct cli_unrecorded *u, void *arg)
{
	(void)arg;
	if (u->exec)
		printf("%s: event %llu (exec): image %u of process %s was NOT RECORDED: %s\n",
		       u->path, (unsigned long long)u->index, u->segment, u->parent,
		       cli_unrecorded_reason(u));
	else
		printf("%s: event %llu (fork): process %s was NOT RECORDED: %s\n", u->path,
		       (unsigned long long)u->index, u->child, cli_unrecorded_reason(u));
}

/* A process whose trace could not be created (full disk...): reported as truncated. */
static int print_notrace(const char *file, int err, void *dir)
{
	printf("%s/%s: TRUNCATED after event 0: %s (the trace could not be created; the "
	       "process ran unrecorded)\n", (const char *)dir, file, trace_stop_reason(err));
	return 1;
}

/* Every *.trace file of a directory, each on its own: one damaged file must not hide the
 * state of the others (trace_session_open stops at the first).  Then the check the session
 * loader makes (libtrace/session.c): one file per process image. */
static int check_dir(const char *dir)
{
	struct dirent **names;
	struct claim *claims;
	int n, i, bad = 0, seen = 0;

	n = scandir(dir, &names, NULL, alphasort);
	if (n < 0) {
		cli_error("check", "%s: cannot read directory: %s", dir, strerror(errno));
		return 1;
	}
	claims = calloc((size_t)n + 1, sizeof(*claims));
	if (!claims) {
		cli_error("check", "out of memory");
		bad = 1;
	}
	for (i = 0; i < n; i++) {
		const char *nm = names[i]->d_name;
		size_t len = strlen(nm);

		/* the files trace_session_open reads: NAME.trace, not hidden */
		if (claims && len > 6 && strcmp(nm + len - 6, ".trace") == 0 && nm[0] != '.') {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", dir, nm);
			claims[seen].name[0] = '\0';
			bad |= check_file(path, &claims[seen]);
			for (int j = 0; j < seen && claims[seen].name[0]; j++)
				if (strcmp(claims[j].name, claims[seen].name) == 0 &&
				    claims[j].segment == claims[seen].segment) {
					cli_error("check", "%s: process %s image %u is also in %s: one session "
					          "directory per recording; move one of them elsewhere",
					          path, claims[j].name, claims[j].segment, claims[j].path);
					bad = 1;
					break;
				}
			seen++;
		}
		free(names[i]);
	}
	free(names);
	free(claims);
	if (cli_for_each_notrace(dir, print_notrace, (void *)dir))
		bad = 1;
	/* A child or image with no trace: the session is not whole (never "ok"). */
	if (seen && cli_for_each_unrecorded(dir, print_unrecorded, NULL) > 0)
		bad = 1;
	if (!seen && !bad) {
		cli_error("check", "%s: no trace files (*.trace) in this directory", dir);
		return 1;
	}
	return bad;
}

int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int i, c, bad = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("check");
		}
	}
	if (optind >= argc) {
		cli_error("check", "expected a session directory or trace files; see 'encore check --help'");
		return CLI_USAGE;
	}
	for (i = optind; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) != 0) {
			cli_error("check", "%s: %s", argv[i], strerror(errno));
			bad = 1;
		} else if (S_ISDIR(st.st_mode)) {
			bad |= check_dir(argv[i]);
		} else {
			bad |= check_file(argv[i], NULL);
		}
	}
	return bad ? CLI_FAIL : CLI_OK;
}
