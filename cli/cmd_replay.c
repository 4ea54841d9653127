/*
 * cmd_replay.c: `encore replay DIR [--stop 'P' | --cut FILE] [--json] [--then ...]`
 * re-executes a recorded session under the replayer (replayer/README.md): the global
 * debugger (rep.h) starts every recorded root with libencore-replay.so preloaded, each
 * process's local controller enforces its trace, and the replay runs to the end or halts at
 * a cut.  Thin: parses options, calls rep_*, prints.  Whatever ends the replay (end, halt,
 * divergence, stall, a signal), every replayed process is ended before it returns.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "ana.h"
#include "rep.h"

#define LIB_NAME "libencore-replay.so"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore replay - re-execute a recorded session, halt at a global state\n\n"
	        "SYNOPSIS\n"
	        "    encore replay [OPTIONS] DIR\n"
	        "    encore replay [OPTIONS] --stop 'PREDICATE' DIR\n"
	        "    encore replay [OPTIONS] --cut CUT.json DIR\n\n"
	        "DESCRIPTION\n"
	        "    Starts every recorded root process of the session DIR again (same argv, same\n"
	        "    directory) with the local controller (" LIB_NAME ") preloaded.  Each\n"
	        "    process follows its trace: the k-th receive reads the recorded channel and\n"
	        "    exactly the recorded number of bytes; clocks, random bytes, pids, readiness\n"
	        "    results and bytes from outside the session are given back from the trace;\n"
	        "    forked children take the same logical names.  Its own output is the same as\n"
	        "    in the recorded run.  A process that does something else (another call,\n"
	        "    channel, size, or content than the trace says) stops the replay with a\n"
	        "    report naming the process, the event, and the difference.\n\n"
	        "    A session whose traces are damaged, or whose executables changed (another\n"
	        "    ELF build-id), is refused before anything starts; so is a directory that\n"
	        "    another user owns or that group or others may write (see --trust), one\n"
	        "    still being recorded (a trace whose process runs), one another replay or\n"
	        "    debug session runs, and\n"
	        "    an unpacked session one of whose input files changed since the recording\n"
	        "    (\"FILE changed since the recording (size|content)\": see encore pack and\n"
	        "    --ignore-changed-files).  Files the recording created are hidden from the\n"
	        "    replay (see --no-isolate); one that was there before it, that it changed and\n"
	        "    then read, is read as it is now, and encore replay names it.\n\n"
	        "    A session recorded with encore record --same-layout (address space\n"
	        "    randomisation off) is replayed with it off too, without an option, and\n"
	        "    each root gets an environment of the recorded count and size, so that its\n"
	        "    stack, executable and heap start where they were; where the system refuses\n"
	        "    that, or the replay's environment is larger than the recording's, the\n"
	        "    replay warns and goes on at other addresses.\n\n"
	        "    With --stop or --cut, every process halts before the first event outside\n"
	        "    the cut, blocked inside its controller, and the global state is printed:\n"
	        "    per process its logical name, pid, state index, last and next event, a\n"
	        "    backtrace of the halted process and the values of the predicate's terms\n"
	        "    (read in the halted process).\n\n"
	        "OPTIONS\n"
	        "    --stop P            halt at Inf(P), computed by the analyzer as `encore inf`\n"
	        "                        does (for a disjunctive P: its first minimal cut); a P\n"
	        "                        naming var.SYMBOL (a global of the program, read live)\n"
	        "                        uses the online protocol\n"
	        "    --online            halt with the online protocol even when the analyzer could\n"
	        "                        (Manabe & Imase 3.2: processes P names run until their\n"
	        "                        simple predicate holds, the others only as far as the\n"
	        "                        messages they need; the same cut as --stop).  A\n"
	        "                        disjunctive P halts with halt markers (Miller & Choi 2.2)\n"
	        "                        at a state where one disjunct holds, and says which\n"
	        "    --cut FILE          halt at the first cut of FILE, in the shape `encore inf\n"
	        "                        --json` prints ({\"cuts\":[{\"PROC\":N,...}]}); '-' reads stdin\n"
	        "    --step PROC         single step (Manabe & Imase 5.1): after the halt (at the\n"
	        "                        cut, or at the start without --stop/--cut), advance\n"
	        "                        PROC by one event, pulling in the sends it needs, and\n"
	        "                        print the new global state; repeat the option to step\n"
	        "                        again (the same or another process)\n"
	        "    --json              print the halted state as one JSON line:\n"
	        "                        {\"halted\":true,\"cuts\":[{\"PROC\":N,...}],\"processes\":[...]}\n"
	        "                        on stdout, and nothing else there: the replayed programs'\n"
	        "                        own stdout goes to encore's stderr\n"
	        "    --then WHAT         after the halt: stop (keep the processes halted, print\n"
	        "                        `gdb -p PID` lines, end them when you press Enter),\n"
	        "                        kill (end them), continue (run on to the end), gdb (open\n"
	        "                        gdb on the first halted process, end them after it).\n"
	        "                        Default: stop on a terminal, kill otherwise\n"
	        "    --stall-timeout S   a replay that makes no progress for S seconds stops and\n"
	        "                        says which process waits for what (default 10)\n"
	        "    --setenv NAME=VALUE give every replayed program NAME=VALUE instead of the\n"
	        "                        value it had when recorded (each program gets its\n"
	        "                        recorded environment back otherwise, whoever replays):\n"
	        "                        where the replay then diverges shows where the program\n"
	        "                        depends on it.  Repeatable\n"
	        "    --trust             replay DIR even if another user owns it or others may\n"
	        "                        write into it.  Replay runs the recorded commands with\n"
	        "                        your privileges, so by default such a session is\n"
	        "                        refused (docs/security.md)\n"
	        "    --ignore-changed-files\n"
	        "                        replay an unpacked session even though a file its\n"
	        "                        processes read changed since the recording (the replay\n"
	        "                        reads the file as it is now, and may diverge)\n"
	        "    --no-isolate        let the replayed programs write to this machine's files.\n"
	        "                        By default they run in a mount namespace of their own\n"
	        "                        where every writable file system is covered by an\n"
	        "                        overlay: what they create, write or delete goes to a\n"
	        "                        scratch area, discarded at the end, and what the\n"
	        "                        recording itself created is hidden from them (\"N files\n"
	        "                        the recording created hidden\"); with this option they\n"
	        "                        see those files (a warning says so).  Where the kernel\n"
	        "                        allows no namespace (no unprivileged user namespaces)\n"
	        "                        the replay is refused, saying why, unless this is given\n"
	        "    --keep-scratch DIR  keep the scratch area in DIR (new or empty): for each\n"
	        "                        recorded host, host-ID/fs/NAME/upper holds what the\n"
	        "                        replay wrote under the file system NAME (a deleted file\n"
	        "                        is a character device 0/0 there)\n"
	        "    --no-pack           ignore DIR/pack (encore pack): use this machine's files,\n"
	        "                        which must not have changed since the recording, as for\n"
	        "                        an unpacked session.  By default a packed session's\n"
	        "                        processes see every packed file at its recorded path,\n"
	        "                        read-only, each host its own\n"
	        "    -q, --quiet         no summary line\n"
	        "    -h, --help          this text\n\n"
	        "ENVIRONMENT\n"
	        "    ENCORE_REPLAY_LIB   path of " LIB_NAME " (default: LIBDIR/encore/ of this\n"
	        "                        install, or the build tree's when run from there)\n"
	        "    ENCORE_NO_ISOLATE   1: as --no-isolate.  auto (for test suites and CI\n"
	        "                        machines): isolated where a namespace can be made,\n"
	        "                        otherwise replayed without isolation with a warning\n"
	        "                        (never for a packed session; a --keep-scratch\n"
	        "                        directory then holds no file)\n\n"
	        "FILES\n"
	        "    DIR/.encore-replay/ the control socket and status board (0600) of a running\n"
	        "                        replay, in a directory of mode 0700 created without\n"
	        "                        following symbolic links; removed when it ends; its\n"
	        "                        scratch/ holds what an isolated replay writes\n"
	        "    DIR/pack/manifest   the packed files (schemas/pack.md)\n\n"
	        "EXIT STATUS\n"
	        "    0 replayed to the end, or halted; 1 divergence, refusal, stall or a replay\n"
	        "    that ended early; 2 usage error, a predicate included (a var. term naming\n"
	        "    no global variable of its process); 130 SIGINT (Ctrl-C), 143 SIGTERM, 129\n"
	        "    SIGHUP.  Whatever ends it, every replayed process and everything they\n"
	        "    started (in another process group or session too) is ended first.\n\n"
	        "LIMITS\n"
	        "    Threads replay in their recorded order where they meet through interposed\n"
	        "    calls and pthread locks; atomics, lock-free code, racy loads and stores and\n"
	        "    shared memory between processes are not ordered (a divergence or stall\n"
	        "    report names the thread, never a hang).  Random bytes got before the\n"
	        "    replayer started (a library's constructor) are the recorded ones; asked\n"
	        "    for otherwise than recorded, they are real past those, with a warning.\n"
	        "    Online halting\n"
	        "    takes conjunctive, disjunctive (halt markers) and linked predicates whose\n"
	        "    steps are conjunctive; general ones, and linked ones with a disjunctive\n"
	        "    step, go through --stop without --online.  replayer/README.md says more.\n\n"
	        "EXAMPLES\n"
	        "    encore replay /tmp/ring\n"
	        "    encore replay --stop 'ring: sent >= 3 && ring.1: received >= 2' /tmp/ring\n"
	        "    encore inf --json /tmp/ring 'ring.2: exited' > cut.json &&\n"
	        "        encore replay --cut cut.json --then kill /tmp/ring\n");
	fprintf(out, "\nSee encore-replay(1).\n");
}

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static char *read_all(const char *path)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
	char *buf = NULL;
	size_t n = 0, cap = 0;
	int c;

	if (!f)
		return NULL;
	while ((c = fgetc(f)) != EOF) {
		if (n + 2 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 4096);

			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
		}
		buf[n++] = (char)c;
	}
	if (buf)
		buf[n] = '\0';
	else if (!ferror(f))
		buf = strdup("");
	if (f != stdin)
		fclose(f);
	return buf;
}

static void print_state_text(struct rep *r)
{
	if (rep_fired(r))
		printf("Halted by halt markers: the disjunct of %s holds.\n", rep_fired(r));
	printf("Global state (one line per process; state k = after its event k):\n");
	for (size_t i = 0; i < rep_nprocs(r); i++) {
		struct rep_proc_info in;

		rep_proc_info(r, i, &in);
		printf("  %-16s pid %-7ld state %llu of %llu, %s\n", in.name, in.pid,
		       (unsigned long long)in.index, (unsigned long long)in.nevents,
		       cli_pstate_name(in.state));
		printf("      last: %s\n      next: %s\n", in.last, in.next);
		if (in.terms) {
			const char *p = in.terms;

			printf("      terms:");
			while (*p) {
				const char *nl = strchr(p, '\n');
				int len = nl ? (int)(nl - p) : (int)strlen(p);

				printf(" %.*s%s", len, p, nl && nl[1] ? "," : "");
				p += len + (nl ? 1 : 0);
			}
			printf("\n");
		}
		if (in.backtrace && in.backtrace[0]) {
			const char *p = in.backtrace;

			printf("      backtrace:\n");
			while (*p) {
				const char *nl = strchr(p, '\n');
				int len = nl ? (int)(nl - p) : (int)strlen(p);

				printf("        %.*s\n", len, p);
				p += len + (nl ? 1 : 0);
			}
		}
	}
	fflush(stdout);
}

static void print_state_json(struct rep *r, const char *pred)
{
	printf("{\"halted\":true");
	if (rep_fired(r)) {
		printf(",\"fired\":");
		cli_json_string(stdout, rep_fired(r));
	}
	if (pred) {
		printf(",\"predicate\":");
		cli_json_string(stdout, pred);
	}
	printf(",\"cuts\":[{");
	for (size_t i = 0; i < rep_nprocs(r); i++) {
		struct rep_proc_info in;

		rep_proc_info(r, i, &in);
		printf("%s", i ? "," : "");
		cli_json_string(stdout, in.name);
		printf(":%llu", (unsigned long long)in.index);
	}
	printf("}],\"processes\":[");
	for (size_t i = 0; i < rep_nprocs(r); i++) {
		struct rep_proc_info in;

		rep_proc_info(r, i, &in);
		printf("%s{\"name\":", i ? "," : "");
		cli_json_string(stdout, in.name);
		printf(",\"pid\":%ld,\"state\":%llu,\"events\":%llu,\"status\":\"%s\",\"last\":", in.pid,
		       (unsigned long long)in.index, (unsigned long long)in.nevents,
		       cli_pstate_name(in.state));
		cli_json_string(stdout, in.last);
		printf(",\"next\":");
		cli_json_string(stdout, in.next);
		printf(",\"backtrace\":");
		cli_json_string(stdout, in.backtrace ? in.backtrace : "");
		printf(",\"terms\":{");
		for (const char *p = in.terms ? in.terms : ""; *p;) {
			const char *eq = strstr(p, " = "), *nl = strchr(p, '\n');
			char name[160];

			if (!eq || !nl || eq > nl)
				break;
			snprintf(name, sizeof(name), "%.*s", (int)(eq - p), p);
			printf("%s", p == in.terms ? "" : ",");
			cli_json_string(stdout, name);
			if (eq[3] == '?')
				printf(":null");
			else
				printf(":%.*s", (int)(nl - eq - 3), eq + 3);
			p = nl + 1;
		}
		printf("}}");
	}
	printf("]}\n");
	fflush(stdout);
}

static void run_gdb(struct rep *r)
{
	for (size_t i = 0; i < rep_nprocs(r); i++) {
		struct rep_proc_info in;
		char pid[32];
		pid_t g;

		rep_proc_info(r, i, &in);
		if (in.state != REP_P_HALTED)
			continue;
		snprintf(pid, sizeof(pid), "%ld", in.pid);
		g = fork();
		if (g == 0) {
			rep_enter_namespaces(r, i); /* as for encore debug's print (debug_inspect.c) */
			execlp("gdb", "gdb", "-q", "-p", pid, (char *)NULL);
			fprintf(stderr, "encore replay: cannot run gdb: %s\n", strerror(errno));
			_exit(127);
		}
		/* Ctrl-C belongs to gdb (it interrupts the inferior); SIGTERM or SIGHUP end us */
		while (g > 0 && waitpid(g, NULL, 0) < 0 && errno == EINTR &&
		       (!interrupted || interrupted == SIGINT))
			interrupted = 0;
		return;
	}
}

/* Traces the recorder stopped writing (full disk...): the replay of those processes follows
 * them up to their last event only (schemas/trace-format.md, "Truncation"). */
static void note_truncated(const char *dir)
{
	struct trace_session *s;
	struct trace_diag d;
	size_t i, j;

	if (trace_session_open(dir, &s, &d) != 0)
		return;
	for (i = 0; i < trace_session_count(s); i++) {
		const char *const *paths;
		size_t nf = trace_session_files(s, i, &paths);

		for (j = 0; j < nf; j++) {
			struct trace_reader *tr;
			uint64_t last;
			int e;

			if (trace_reader_open(paths[j], &tr, &d) != 0)
				continue;
			if ((e = trace_reader_stopped(tr, &last)) != 0)
				fprintf(stderr, "encore replay: trace %s was truncated after event %llu (%s): "
				        "process %s is replayed up to there only, then runs free\n", paths[j],
				        (unsigned long long)last, trace_stop_reason(e), trace_session_name(s, i));
			trace_reader_close(tr);
		}
	}
	trace_session_close(s);
}

/* What the command line asked for. */
struct replay_args {
	const char *stop, *cutfile, *then, *dir;
	int json, quiet, online, trust, ignore_changed;
	const char *steps[64];
	size_t nsteps, stepped;
	double stall;
	char setenv[8192]; /* --setenv lines */
	/* isolation and packed files (replayer/README.md) */
	int no_isolate, no_pack;
	const char *keep_scratch;
};

/* --setenv NAME=VALUE: one line of the list the replayed programs' controllers read
 * (replayer/README.md, "Environment").  0, or -1 with the message printed. */
static int add_setenv(struct replay_args *a, const char *spec)
{
	size_t name = strcspn(spec, "="), have = strlen(a->setenv);

	if (name == 0 || !spec[name] || strchr(spec, '\n')) {
		cli_error("replay", "--setenv %s: expected NAME=VALUE, one line, e.g. --setenv "
		          "DEBUG=1", spec);
		return -1;
	}
	if (have + strlen(spec) + 2 > sizeof(a->setenv)) {
		cli_error("replay", "--setenv: at most %zu bytes of variables in all",
		          sizeof(a->setenv) - 1);
		return -1;
	}
	snprintf(a->setenv + have, sizeof(a->setenv) - have, "%s%s", have ? "\n" : "", spec);
	return 0;
}

/* Parse the options into *a: -1 to go on, else the exit status. */
static int parse_args(int argc, char **argv, struct replay_args *a)
{
	static const struct option opts[] = {
		{ "stop", required_argument, NULL, 's' },
		{ "cut", required_argument, NULL, 'c' },
		{ "json", no_argument, NULL, 'j' },
		{ "online", no_argument, NULL, 'o' },
		{ "step", required_argument, NULL, 'S' },
		{ "then", required_argument, NULL, 't' },
		{ "stall-timeout", required_argument, NULL, 'T' },
		{ "trust", no_argument, NULL, 'U' },
		{ "ignore-changed-files", no_argument, NULL, 'I' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		/* isolation and packed files (codes above any letter: no clash with other options) */
		{ "no-isolate", no_argument, NULL, 0x101 },
		{ "keep-scratch", required_argument, NULL, 0x102 },
		{ "no-pack", no_argument, NULL, 0x103 },
		{ "setenv", required_argument, NULL, 0x104 },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->stall = 10;
	optind = 1;
	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 's': a->stop = optarg; break;
		case 'c': a->cutfile = optarg; break;
		case 'j': a->json = 1; break;
		case 'o': a->online = 1; break;
		case 'S':
			if (a->nsteps == sizeof(a->steps) / sizeof(a->steps[0])) {
				cli_error("replay", "at most %zu --step options", a->nsteps);
				return CLI_USAGE;
			}
			a->steps[a->nsteps++] = optarg;
			break;
		case 't': a->then = optarg; break;
		case 'T':
			if (cli_parse_seconds(optarg, &a->stall) != 0) {
				cli_error("replay", "--stall-timeout wants a positive number of seconds");
				return CLI_USAGE;
			}
			break;
		case 'U': a->trust = 1; break;
		case 'I': a->ignore_changed = 1; break;
		case 'q': a->quiet = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		case 0x101: a->no_isolate = 1; break;
		case 0x102: a->keep_scratch = optarg; break;
		case 0x103: a->no_pack = 1; break;
		case 0x104:
			if (add_setenv(a, optarg) != 0)
				return CLI_USAGE;
			break;
		default: return cli_bad_option("replay");
		}
	}
	if (argc - optind != 1) {
		cli_error("replay", "expected one session directory, e.g. encore replay /tmp/ring");
		return CLI_USAGE;
	}
	a->dir = argv[optind];
	if (a->stop && a->cutfile) {
		cli_error("replay", "--stop and --cut both say where to halt: give one");
		return CLI_USAGE;
	}
	if (cli_no_isolate_env("replay", a->keep_scratch != NULL, &a->no_isolate) != 0)
		return CLI_USAGE;
	if (a->no_isolate == 1 && a->keep_scratch) {
		cli_error("replay", "--keep-scratch keeps what an isolated replay wrote: drop "
		          "--no-isolate");
		return CLI_USAGE;
	}
	if (!a->then)
		a->then = isatty(0) && isatty(1) ? "stop" : "kill";
	if (strcmp(a->then, "stop") && strcmp(a->then, "kill") && strcmp(a->then, "continue") &&
	    strcmp(a->then, "gdb")) {
		cli_error("replay", "--then %s: expected stop, kill, continue or gdb", a->then);
		return CLI_USAGE;
	}
	return -1;
}

/* --cut FILE: the cut to halt at.  0, or the exit status. */
static int set_cut_file(struct rep *r, const struct replay_args *a)
{
	struct trace_diag d;
	char *text = read_all(a->cutfile);
	int rc;

	if (!text) {
		cli_error("replay", "cannot read the cut %s: %s", a->cutfile, strerror(errno));
		return CLI_FAIL;
	}
	memset(&d, 0, sizeof(d));
	rc = rep_cut_json(r, text, &d);
	free(text);
	if (rc) {
		cli_error("replay", "%s: %s", a->cutfile, d.msg);
		return CLI_FAIL;
	}
	return 0;
}

/* --stop P: Inf(P) computed offline, or the online protocol (P reads var.SYMBOL, or
 * --online).  0, or the exit status. */
static int set_stop(struct rep *r, struct replay_args *a)
{
	struct trace_pred *pred = NULL;
	struct trace_diag d;
	size_t which, ncuts;
	int rc;

	memset(&d, 0, sizeof(d));
	if (trace_pred_parse(a->stop, &pred, &d) != 0) {
		cli_error("replay", "bad predicate: %s (column %llu)", d.msg,
		          (unsigned long long)d.offset);
		return CLI_USAGE;
	}
	if (trace_pred_uses_var(pred))
		a->online = 1;
	trace_pred_free(pred);
	memset(&d, 0, sizeof(d));
	if (a->online) {
		if (rep_set_online(r, a->stop, &d) != 0) {
			cli_error("replay", "%s", d.msg);
			return CLI_FAIL;
		}
		return 0;
	}
	rc = rep_cut_predicate(r, a->stop, &which, &ncuts, &d);
	if (rc < 0) {
		cli_diag("replay", &d);
		return CLI_FAIL;
	}
	if (rc == 0) {
		cli_error("replay", "the predicate never holds in this recording: nothing to "
		          "halt at (check it with encore inf %s '...')", a->dir);
		return CLI_FAIL;
	}
	rep_set_terms(r, a->stop, &d);
	if (ncuts > 1 && !a->quiet)
		fprintf(stderr, "encore replay: the predicate has %zu minimal cuts; halting at "
		        "the first (encore inf lists them all)\n", ncuts);
	return 0;
}

/* Where to halt, from --cut, --stop and --step.  0, or the exit status. */
static int set_halt(struct rep *r, struct replay_args *a)
{
	int rc;

	if (a->cutfile && (rc = set_cut_file(r, a)) != 0)
		return rc;
	if (a->stop && (rc = set_stop(r, a)) != 0)
		return rc;
	if (a->stop && a->online)
		return 0;
	if (a->nsteps && !a->stop && !a->cutfile) /* step from the start */
		for (size_t i = 0; i < rep_nprocs(r); i++)
			rep_set_target(r, i, 0);
	if (a->nsteps && a->online) {
		cli_error("replay", "--step follows precomputed cuts: drop --online");
		return CLI_USAGE;
	}
	if (a->online && !a->stop) {
		cli_error("replay", "--online needs --stop 'P'");
		return CLI_USAGE;
	}
	return 0;
}

/* Ended by a signal: every replayed process is ended first; 128 + the signal, as a shell
 * reports a command the signal killed (130 for SIGINT, 143 for SIGTERM). */
static int end_interrupted(struct rep *r)
{
	int sig = interrupted;

	rep_kill(r);
	cli_error("replay", "interrupted by %s; every replayed process was ended",
	          sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGINT");
	return 128 + sig;
}

/* --then stop: print where to attach, wait for Enter (or a signal). */
static int wait_for_enter(struct rep *r)
{
	char line[64];

	fprintf(stderr, "The processes are halted inside their controllers; attach with:\n");
	for (size_t i = 0; i < rep_nprocs(r); i++) {
		struct rep_proc_info in;

		rep_proc_info(r, i, &in);
		/* without root an isolated replay runs in a user namespace: gdb from outside it
		 * cannot read the process's files (encore-replay(1), --then) */
		if (in.state == REP_P_HALTED && rep_scratch(r) && geteuid() != 0)
			fprintf(stderr, "    nsenter --preserve-credentials -U -m -t %ld gdb -p %ld    # %s\n",
			        in.pid, in.pid, in.name);
		else if (in.state == REP_P_HALTED)
			fprintf(stderr, "    gdb -p %ld    # %s\n", in.pid, in.name);
	}
	fprintf(stderr, "Press Enter (or Ctrl-C) to end them.\n");
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	return interrupted ? end_interrupted(r) : CLI_OK;
}

/* The next --step after a halt: 1 when it is under way (run again), 0 when none is left, or
 * minus the exit status. */
static int next_step(struct rep *r, struct replay_args *a)
{
	struct trace_diag d;
	const char *name;
	size_t i;

	if (a->stepped == a->nsteps)
		return 0;
	name = a->steps[a->stepped++];
	for (i = 0; i < rep_nprocs(r); i++)
		if (strcmp(rep_proc_name(r, i), name) == 0)
			break;
	if (i == rep_nprocs(r)) {
		cli_error("replay", "--step %s: no such process in this session", name);
		return -CLI_USAGE;
	}
	memset(&d, 0, sizeof(d));
	if (rep_step(r, i, &d) != 0) {
		cli_error("replay", "--step %s: %s", name, d.msg);
		return -CLI_FAIL;
	}
	if (!a->json)
		printf("\nStep %s:\n", name);
	return 1;
}

/* A channel several processes read at once (forked workers on one task pipe): the trace does
 * not say which bytes each reader got, so a replay that reproduces every event may still
 * hand a worker another's task (README.md, Limits).  Say so rather than let "every recorded
 * event reproduced" stand alone. */
static void warn_shared_readers(struct rep *r)
{
	struct ana_session *s = rep_analysis(r);

	for (size_t i = 0; s && i < ana_nwarnings(s); i++)
		if (strstr(ana_warning(s, i), "read by several processes at once"))
			fprintf(stderr, "encore replay: warning: %s\n", ana_warning(s, i));
}

/* The files the recording changed, then read, that were there before it started: the replay
 * reads them as they are now (before it starts, and again after a divergence, a likely
 * cause). */
static void note_changed_inputs(const struct rep *r, const char *what)
{
	size_t n;
	const char *files = rep_changed_inputs(r, &n);

	if (files)
		fprintf(stderr, "encore replay: %s: %zu file%s that %s there before the recording, "
		        "changed by it and then read, %s read as %s now, not as the recording read "
		        "%s: %s\n", what, n, n == 1 ? "" : "s", n == 1 ? "was" : "were",
		        n == 1 ? "is" : "are", n == 1 ? "it is" : "they are", n == 1 ? "it" : "them",
		        files);
}

/* Run to each halt, step, end or failure in turn, as --step and --then say. */
static int run(struct rep *r, struct replay_args *a)
{
	for (;;) {
		int rc = rep_run(r), s;

		switch (rc) {
		case REP_END:
			if (!a->quiet)
				fprintf(stderr, "encore replay: %zu process%s replayed to the end, every "
				        "recorded event reproduced\n", rep_nprocs(r),
				        rep_nprocs(r) == 1 ? "" : "es");
			return CLI_OK;
		case REP_HALTED:
			if (a->json)
				print_state_json(r, a->stop);
			else
				print_state_text(r);
			if ((s = next_step(r, a)) < 0)
				return -s;
			if (s > 0)
				continue;
			if (strcmp(a->then, "continue") == 0) {
				rep_continue(r);
				continue;
			}
			if (strcmp(a->then, "stop") == 0)
				return wait_for_enter(r);
			if (strcmp(a->then, "gdb") == 0)
				run_gdb(r);
			return interrupted ? end_interrupted(r) : CLI_OK;
		case REP_INTERRUPTED:
			return end_interrupted(r);
		default:
			if (rc < 0)
				cli_error("replay", "%s", trace_strerror(rc));
			else
				cli_error("replay", "%s", rep_message(r));
			if (rc == REP_DIVERGED)
				note_changed_inputs(r, "note");
			return rc == REP_BAD_PREDICATE ? CLI_USAGE : CLI_FAIL;
		}
	}
}

int cmd_replay(int argc, char **argv)
{
	struct replay_args a;
	struct rep_options ro;
	struct trace_diag d;
	struct rep *r = NULL;
	char lib[PATH_MAX];
	int ret;

	if ((ret = parse_args(argc, argv, &a)) >= 0)
		return ret;
	/* replay runs the recorded commands with our privileges: only sessions of our own */
	if (cli_session_trusted("replay", a.dir, a.trust))
		return CLI_FAIL;
	/* the replayed processes inherit it; each one's controller applies it (replayer/lc.c) */
	if (a.setenv[0])
		setenv("ENCORE_REPLAY_SETENV", a.setenv, 1);
	else
		unsetenv("ENCORE_REPLAY_SETENV");
#ifndef ENCORE_REPLAY_SO_BUILD
#define ENCORE_REPLAY_SO_BUILD NULL
#endif
	if (cli_find_lib(LIB_NAME, "ENCORE_REPLAY_LIB", ENCORE_REPLAY_SO_BUILD, lib, sizeof(lib))) {
		cli_error("replay", "cannot read the replayer library %s; reinstall encore, or set "
		          "ENCORE_REPLAY_LIB to its path", lib);
		return CLI_FAIL;
	}
	memset(&ro, 0, sizeof(ro));
	ro.lib = lib;
	ro.stall_ms = (unsigned)(a.stall * 1000);
	ro.interrupted = &interrupted;
	ro.ignore_changed_files = a.ignore_changed;
	/* --json: stdout carries the report alone; the programs write to our stderr */
	ro.roots_stdout = a.json ? STDERR_FILENO : 0;
	ro.no_isolate = a.no_isolate;
	ro.keep_scratch = a.keep_scratch;
	ro.no_pack = a.no_pack;
	memset(&d, 0, sizeof(d));
	if (rep_open(a.dir, &ro, &r, &d) != 0) {
		cli_diag("replay", &d);
		cli_error("replay", "refusing to replay %s", a.dir);
		return CLI_FAIL;
	}
	note_truncated(a.dir);
	warn_shared_readers(r);
	if ((ret = set_halt(r, &a)) == 0) {
		cli_catch_signals(on_signal); /* a wait for Enter returns at once */
		memset(&d, 0, sizeof(d));
		if (rep_start(r, &d) != 0) {
			cli_diag("replay", &d);
			ret = interrupted ? end_interrupted(r) : CLI_FAIL;
		} else {
			if (rep_unisolated(r))
				fprintf(stderr, "encore replay: warning: not isolated, the replayed programs "
				        "write to this machine's files (%s; ENCORE_NO_ISOLATE=auto)\n",
				        rep_unisolated(r));
			if (rep_isolation_gaps(r))
				fprintf(stderr, "encore replay: warning: writes there are not isolated, they "
				        "change this machine's files: %s (replayer/README.md, \"Isolation and "
				        "packed files\")\n", rep_isolation_gaps(r));
			if (!a.quiet && (rep_created_hidden(r) || rep_created_restored(r))) {
				size_t h = rep_created_hidden(r), b = rep_created_restored(r);

				fprintf(stderr, "encore replay: ");
				if (h)
					fprintf(stderr, "%zu file%s the recording created hidden from the "
					        "replay%s", h, h == 1 ? "" : "s", b ? "; " : "");
				if (b)
					fprintf(stderr, "%zu file%s the recording made by renaming put back "
					        "under %s old name%s", b, b == 1 ? "" : "s",
					        b == 1 ? "its" : "their", b == 1 ? "" : "s");
				fprintf(stderr, " (it sees the files as the recording's start did)\n");
			}
			if (rep_created_visible(r))
				fprintf(stderr, "encore replay: warning: %zu file%s the recording created "
				        "exist%s now and the replay sees %s (%s): it may diverge there\n",
				        rep_created_visible(r), rep_created_visible(r) == 1 ? "" : "s",
				        rep_created_visible(r) == 1 ? "s" : "", rep_created_visible(r) == 1 ?
				        "it" : "them", rep_scratch(r) ? "the overlays could not hide them: "
				        "replayer/README.md, \"Isolation and packed files\"" :
				        "--no-isolate cannot hide them");
			note_changed_inputs(r, "warning");
			if (!a.quiet && rep_packed_files(r))
				fprintf(stderr, "encore replay: %zu packed file%s mounted at %s recorded "
				        "path%s (--no-pack: this machine's files)\n", rep_packed_files(r),
				        rep_packed_files(r) == 1 ? "" : "s",
				        rep_packed_files(r) == 1 ? "its" : "their",
				        rep_packed_files(r) == 1 ? "" : "s");
			ret = run(r, &a);
			if (rep_warnings(r))
				fprintf(stderr, "encore replay: warning: %s\n", rep_warnings(r));
			if (a.keep_scratch && rep_scratch(r))
				fprintf(stderr, "encore replay: what the replay wrote is kept in %s "
				        "(host-ID/fs/NAME/upper)\n", rep_scratch(r));
		}
	}
	rep_close(r); /* ends whatever still runs, reaps everything */
	return ret;
}
