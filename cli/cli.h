/*
 * cli.h: what the `encore` subcommands share.  Only cli/ prints to the user or exits; the
 * parts below report through return codes and struct trace_diag.
 */
#ifndef ENCORE_CLI_H
#define ENCORE_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "trace.h"

struct cli_command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
};

/* Exit codes shared by every subcommand. */
enum {
	CLI_OK = 0,
	CLI_FAIL = 1,    /* the command ran and failed (bad trace, divergence...) */
	CLI_USAGE = 2,   /* bad options or arguments */
};

/* "encore NAME: MESSAGE\n" on stderr. */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An option getopt refused (it said which, as "encore CMD: ..."): where the options are
 * listed, and the usage error's status. */
int cli_bad_option(const char *cmd);
struct ana_session;
/* The analyzer's warnings on stderr ("encore CMD: warning: ..."); 1 when one says a trace is
 * damaged (the command then exits 1 after its answer: README.md, "Commands"), else 0. */
int cli_warnings(const char *cmd, const struct ana_session *s);
/* A count as the user wrote it: decimal digits only (no sign, space or suffix), within
 * uint64_t.  0, or -1. */
int cli_parse_count(const char *s, uint64_t *out);
/* A number of seconds: finite and above 0, with nothing after it.  0, or -1. */
int cli_parse_seconds(const char *s, double *out);
/* One line for a trace_diag: "encore NAME: FILE: offset N: MESSAGE". */
void cli_diag(const char *cmd, const struct trace_diag *d);
/* 1 if arg is -h or --help. */
int cli_is_help(const char *arg);

/* 1 if an analyzer warning (ana_warning, or a row of the SQL table warning) says a trace
 * file is damaged: commands that load a damaged session print the line on stderr and exit
 * 1, as dump and check do.  The text is the one analyzer/load.c writes. */
int cli_is_damage(const char *warning);

/* Directory holding the encore executable (for finding the preload libraries). */
const char *cli_self_dir(void);

/* The path of the preload library `name` (libencore-record.so...) in *out: the environment
 * variable `env` when set (ENCORE_RECORD_LIB...); else `build_path`, the library in the build
 * tree, when this encore runs from the build tree; else NAME in libdir/encore of this
 * encore's install (README.md, "Install").  Never another tree's library.  `out` holds
 * PATH_MAX bytes.  0, or -1 with the path that was tried in *out, for the error message. */
int cli_find_lib(const char *name, const char *env, const char *build_path, char *out,
                 size_t cap);

/* The processes of session DIR whose trace could not be created (a full disk at the start...):
 * the recorder leaves DIR/.encore-registry/notrace.ERRNO.FILE (recorder/core.c).  Calls
 * fn(FILE, ERRNO, arg) for each; returns how many it called fn for (fn returns 1 to count
 * the entry, 0 to skip it). */
int cli_for_each_notrace(const char *dir, int (*fn)(const char *file, int err, void *arg),
                         void *arg);

/* A fork or exec of session DIR whose child or new image has no trace (cmd_check.c). */
struct cli_unrecorded {
	const char *path;              /* the trace of the process that forked or executed */
	const char *parent;            /* its logical name */
	uint64_t index;                /* the FORK or EXEC event */
	int exec;                      /* 1 exec (child is the next image of parent), 0 fork */
	char child[TRACE_NAME_MAX];    /* the child's name (fork) */
	uint32_t segment;              /* the new image (exec) */
	int why;                       /* the recorder's reason (trace_stop_reason), 0 none */
};
/* Calls fn for each such fork or exec, except those a notrace note already reports
 * (cli_for_each_notrace); returns how many it called fn for, or -1 when the session cannot
 * be read (said by the session loader's own diagnostics elsewhere). */
int cli_for_each_unrecorded(const char *dir, void (*fn)(const struct cli_unrecorded *u, void *arg),
                            void *arg);
/* The text after "... was not recorded: " for u. */
const char *cli_unrecorded_reason(const struct cli_unrecorded *u);

/* Whether the session directory `dir` is the user's own: owned by the effective user, not
 * writable by group or others (docs/security.md).  1 with the reason in `why` ("DIR is
 * owned by uid 1001, not you", "DIR is writable by others (mode 0777)") when it is not;
 * 0 when it is, or when there is no directory to judge (missing, a file: the command says
 * so itself).  A symbolic link given on the command line is followed, as the user typed it. */
int cli_session_why(const char *dir, char *why, size_t cap);
/* For the commands that execute a session or write into it: 0 when the session is the
 * user's own or `trust` (--trust) says the user vouches for it; otherwise prints "encore
 * CMD: WHY; pass --trust to VERB it anyway" and returns -1. */
int cli_session_trusted(const char *cmd, const char *dir, int trust);

/* ENCORE_NO_ISOLATE for replay and debug (encore-replay(1), ENVIRONMENT): unset, empty or
 * "0" leaves *no_isolate as the options set it; "1" is --no-isolate unless --keep-scratch
 * (`keep`) asks for isolation; "auto" (for test harnesses and CI machines without
 * namespaces) isolates where the machine can, replays unisolated where it cannot
 * (rep_options.no_isolate REP_ISOLATE_IF_ABLE; a --keep-scratch directory then holds no file),
 * unless --no-isolate was given.  0, or -1 after saying what is wrong with the value. */
int cli_no_isolate_env(const char *cmd, int keep, int *no_isolate);

/* The signals that end a replay (SIGINT, SIGTERM, SIGHUP) call fn, without SA_RESTART: a
 * blocking read or wait returns at once with EINTR. */
void cli_catch_signals(void (*fn)(int));
/* A replayed process's state (enum rep_pstate) in the reports: "running", "halted"... */
const char *cli_pstate_name(int state);

/* JSON string output with escaping. */
void cli_json_string(FILE *out, const char *s);

#endif
