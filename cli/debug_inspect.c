/*
 * debug_inspect.c: the commands of `encore debug` that examine the halted processes (bt,
 * print, gdb, output) and the message races at the current state (debug_cmds.c reads the
 * commands).  print hands C expressions to gdb in batch mode on the halted process, and
 * reads var.NAME (a global integer) by its symbol without gdb (rep_read_global).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "debug.h"

void dbg_cmd_bt(struct dbg *g, char *args)
{
	struct rep_proc_info in;
	int i = dbg_proc_arg(g, "bt", dbg_rest(args));

	if (i < 0)
		return;
	rep_proc_info(g->r, (size_t)i, &in);
	if (in.state != REP_P_HALTED) {
		dbg_error(g, "%s is not halted (%s): no backtrace", in.name,
		          in.state == REP_P_EXITED ? "it ended" : "not started");
		return;
	}
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"bt\",\"process\":");
		cli_json_string(stdout, in.name);
		printf(",\"backtrace\":");
		cli_json_string(stdout, in.backtrace ? in.backtrace : "");
		printf("}\n");
	} else {
		printf("%s (pid %ld), state %llu:\n%s%s", in.name, in.pid,
		       (unsigned long long)g->cur[i], in.backtrace ? in.backtrace : "",
		       in.backtrace && *in.backtrace && in.backtrace[strlen(in.backtrace) - 1] != '\n' ?
		       "\n" : "");
	}
	fflush(stdout);
}

/* The whole of file `path`, NULL when unreadable. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *text = NULL;
	size_t cap = 0;

	if (!f)
		return NULL;
	if (getdelim(&text, &cap, '\0', f) < 0) {
		free(text);
		text = ferror(f) ? NULL : strdup("");
	}
	fclose(f);
	return text;
}

void dbg_cmd_output(struct dbg *g, char *args)
{
	char path[PATH_MAX + 512], *text;
	int i = dbg_proc_arg(g, "output", dbg_rest(args));

	if (i < 0)
		return;
	if (rep_output_path(g->r, (size_t)i, path, sizeof(path)) != 0 || !(text = slurp(path))) {
		text = strdup(""); /* not started: no output yet */
		if (!text)
			return;
	}
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"output\",\"process\":");
		cli_json_string(stdout, rep_proc_name(g->r, (size_t)i));
		printf(",\"output\":");
		cli_json_string(stdout, text);
		printf("}\n");
	} else {
		fputs(text, stdout);
		if (*text && text[strlen(text) - 1] != '\n')
			putchar('\n');
	}
	fflush(stdout);
	free(text);
}

/* The program's innermost frame as gdb selects it ("frame function NAME"), from the first
 * line of the halt's backtrace ("#0 ADDR NAME+OFF ..."), which starts below the controller's
 * own frames; "" when unknown. */
static const char *program_frame(const struct rep_proc_info *in, char *buf, size_t cap)
{
	const char *p = in->backtrace, *e;

	buf[0] = '\0';
	if (!p || !(p = strchr(p, ' ')) || !(p = strchr(p + 1, ' ')))
		return buf;
	p++;
	for (e = p; *e && *e != '+' && *e != ' ' && *e != '\n' && *e != '('; e++)
		;
	if (e > p && (size_t)(e - p) + 16 < cap)
		snprintf(buf, cap, "frame function %.*s", (int)(e - p), p);
	return buf;
}

/* gdb on the halted process i: batch, selecting `frame` first when not "", printing expr
 * (output captured into *out); or interactive (out NULL).  The exit status of gdb, 127 when
 * it cannot run. */
static int run_gdb(struct dbg *g, int i, const char *frame, const char *expr, char **out)
{
	struct rep_proc_info in;
	char pid[32], cmd[4096];
	int fds[2] = { -1, -1 }, st = 0;
	pid_t c;

	rep_proc_info(g->r, (size_t)i, &in);
	snprintf(pid, sizeof(pid), "%ld", in.pid);
	if (out && pipe(fds) != 0)
		return 127;
	fflush(NULL);
	if ((c = fork()) == 0) {
		/* gdb in the process's namespaces: its files are the process's (a packed session's
		 * objects too), and without root it may trace it only from inside its user namespace */
		rep_enter_namespaces(g->r, (size_t)i);
		if (out) {
			int nul = open("/dev/null", O_RDONLY);

			dup2(nul, 0);
			dup2(fds[1], 1);
			dup2(fds[1], 2);
			close(fds[0]);
			snprintf(cmd, sizeof(cmd), "print %s", expr);
			execlp("gdb", "gdb", "-q", "-nx", "-batch", "-p", pid, "-ex", "set pagination off",
			       "-ex", frame && *frame ? frame : "echo", "-ex", cmd, (char *)NULL);
		} else {
			execlp("gdb", "gdb", "-q", "-p", pid, (char *)NULL);
		}
		_exit(127);
	}
	if (out) {
		char *text = NULL;
		size_t cap = 0;
		FILE *f;

		close(fds[1]);
		if ((f = fdopen(fds[0], "r"))) {
			if (getdelim(&text, &cap, '\0', f) < 0) {
				free(text);
				text = strdup("");
			}
			fclose(f);
		} else {
			close(fds[0]);
		}
		*out = text;
	}
	while (c > 0 && waitpid(c, &st, 0) < 0 && errno == EINTR &&
	       (!dbg_interrupted || dbg_interrupted == SIGINT))
		dbg_interrupted = 0;
	if (c < 0)
		return 127;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* gdb's answer to `print EXPR`: the "$1 = ..." line, else its last line (an error). */
static const char *gdb_value(char *text)
{
	char *v = strstr(text, "$1 = "), *last = NULL, *l;

	if (v) {
		char *nl = strchr(v, '\n');

		if (nl)
			*nl = '\0';
		return v + 5;
	}
	/* gdb's complaint about the expression, not its attach and detach notes */
	for (l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		if (strstr(l, "No symbol") || strstr(l, "rror") || strstr(l, "annot") ||
		    (!last && l[0] != '[' && strncmp(l, "0x", 2) && strncmp(l, "Detaching", 9)))
			last = l;
	return last ? last : "no value";
}

static int is_identifier(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	while (*++s)
		if (!isalnum((unsigned char)*s) && *s != '_')
			return 0;
	return 1;
}

/* print PROC var.NAME (or NAME without gdb): the global integer, by its symbol. */
static void print_global(struct dbg *g, int i, const char *proc, const char *expr,
                         const char *sym, int asked)
{
	struct trace_diag d;
	int64_t v;

	memset(&d, 0, sizeof(d));
	if (rep_read_global(g->r, (size_t)i, sym, &v, &d) != 0) {
		dbg_error(g, "print %s %s: %s%s", proc, expr, d.msg, asked ? "" :
		          " (and gdb, for other expressions, cannot run here: apt install gdb)");
		return;
	}
	if (g->json) {
		printf("{\"ok\":true,\"command\":\"print\",\"process\":");
		cli_json_string(stdout, proc);
		printf(",\"expr\":");
		cli_json_string(stdout, expr);
		printf(",\"value\":\"%lld\"}\n", (long long)v);
	} else {
		printf("%s: %s = %lld\n", proc, expr, (long long)v);
	}
	fflush(stdout);
}

void dbg_cmd_print(struct dbg *g, char *args)
{
	char *name = dbg_word(&args), *expr = dbg_rest(args), fn[512], *out = NULL;
	struct rep_proc_info in;
	int i = dbg_proc_arg(g, "print", name), rc;
	const char *v;

	if (i < 0)
		return;
	if (!*expr) {
		dbg_error(g, "print %s wants an expression, e.g. print %s errno", name, name);
		return;
	}
	rep_proc_info(g->r, (size_t)i, &in);
	if (in.state != REP_P_HALTED) {
		dbg_error(g, "%s is not halted: print reads a halted process", name);
		return;
	}
	if (strncmp(expr, "var.", 4) == 0) { /* a global by its symbol, as predicates read it */
		print_global(g, i, name, expr, expr + 4, 1);
		return;
	}
	rc = run_gdb(g, i, program_frame(&in, fn, sizeof(fn)), expr, &out);
	if (rc == 127 || !out) {
		free(out);
		if (is_identifier(expr)) /* a global, read without gdb */
			print_global(g, i, name, expr, expr, 0);
		else
			dbg_error(g, "print %s needs gdb, which cannot run here: install it (apt install "
			          "gdb), or print a global integer as var.NAME", expr);
		return;
	}
	v = gdb_value(out);
	if (!strstr(out, "$1 = ")) {
		dbg_error(g, "print %s %s: gdb says: %s", name, expr, v);
	} else if (g->json) {
		printf("{\"ok\":true,\"command\":\"print\",\"process\":");
		cli_json_string(stdout, name);
		printf(",\"expr\":");
		cli_json_string(stdout, expr);
		printf(",\"value\":");
		cli_json_string(stdout, v);
		printf("}\n");
	} else {
		printf("%s: %s = %s\n", name, expr, v);
	}
	fflush(stdout);
	free(out);
}

void dbg_cmd_gdb(struct dbg *g, char *args)
{
	struct rep_proc_info in;
	int i = dbg_proc_arg(g, "gdb", dbg_rest(args)), rc;

	if (i < 0)
		return;
	rep_proc_info(g->r, (size_t)i, &in);
	if (in.state != REP_P_HALTED) {
		dbg_error(g, "%s is not halted: gdb attaches to a halted process", in.name);
		return;
	}
	if (!g->json)
		printf("gdb on %s (pid %ld); detach or quit gdb to come back here.\n", in.name, in.pid);
	rc = run_gdb(g, i, NULL, NULL, NULL);
	if (rc == 127)
		dbg_error(g, "gdb cannot run here: install it (apt install gdb)");
	else if (g->json) {
		printf("{\"ok\":true,\"command\":\"gdb\",\"process\":");
		cli_json_string(stdout, in.name);
		printf(",\"status\":%d}\n", rc);
	}
	fflush(stdout);
}


void dbg_cmd_races(struct dbg *g)
{
	struct ana_session *a = rep_analysis(g->r);
	struct ana_race *races = NULL;
	size_t n = 0, shown = 0;

	if (ana_races(a, &races, &n) != 0) {
		dbg_error(g, "cannot compute the message races");
		return;
	}
	if (g->json)
		printf("{\"ok\":true,\"command\":\"races\",\"races\":[");
	for (size_t k = 0; k < n; k++) {
		struct ana_race *x = &races[k];
		int i = dbg_proc(g, ana_proc_name(a, x->proc));

		/* the receives the current state holds: each could have taken the rival */
		if (i < 0 || x->recv > g->cur[i])
			continue;
		if (g->json) {
			printf("%s{\"process\":", shown ? "," : "");
			cli_json_string(stdout, ana_proc_name(a, x->proc));
			printf(",\"receive\":%llu,\"sender\":", (unsigned long long)x->recv);
			cli_json_string(stdout, ana_proc_name(a, x->src_proc));
			printf(",\"send\":%llu,\"rival\":", (unsigned long long)x->src_send);
			cli_json_string(stdout, ana_proc_name(a, x->rival_proc));
			printf(",\"rival_send\":%llu}", (unsigned long long)x->rival_send);
		} else {
			printf("%s event %llu received %s's send %llu; it could have taken %s's send "
			       "%llu\n", ana_proc_name(a, x->proc), (unsigned long long)x->recv,
			       ana_proc_name(a, x->src_proc), (unsigned long long)x->src_send,
			       ana_proc_name(a, x->rival_proc), (unsigned long long)x->rival_send);
		}
		shown++;
	}
	if (g->json)
		printf("]}\n");
	else if (!shown)
		printf("No message race among the receives of this state.\n");
	fflush(stdout);
	free(races);
}
