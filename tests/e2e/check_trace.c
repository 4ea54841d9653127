/*
 * check_trace.c: compares the traces of a recorded session, event by event, with the reports
 * the recorded programs wrote about what they did (the programs in tests/e2e/progs/).
 *
 *   check_trace [--killed NAME] SESSIONDIR REPORTDIR
 *
 * For every REPORTDIR/NAME.report, the process NAME must exist in the session and its
 * events (all segments, in order) must match the report's lines one to one:
 *
 *   KIND CALL FD CHANNEL RESULT ERRNO [a=AUX,..] [f=FLAGS] [n=LEN] [h=HASH] [v=HEX]
 *   [ino=N] [pino=N] [epl=ADDR] [epp=ADDR] [fn=FUNCTION]
 *
 * A HANDLER event (a signal's handler ran) matches a `handler` line, or is skipped where the
 * report has none (a timer's signals land where they land).
 * kind, call, fd, channel, result, errno, aux and flags are always compared (a missing a= or
 * f= means none); h= must be present exactly when the event carries a hash (an input event
 * carries none, whatever its line says); the others are
 * compared when present (fn: the function of the call site's first frame); other tokens
 * (vary=1, for record_check.sh) are ignored; maybe=1 on the killed process's last lines: the
 * kill may have come before the event was logged.  Every site an
 * event names must be defined in the trace before it.  Every process of the session must have a report, and every trace
 * must read back whole and closed -- except the one named by --killed, which must read back
 * (to its last completed event) and must not say it was closed.
 * Exit status 0 when everything matches, 1 otherwise (with one line per difference).
 *
 *   check_trace --dropped FILE
 *
 * instead checks that FILE reads back whole although the disk budget dropped events from it
 * (--max-bytes), and prints how many.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

static int failures;

#define FAIL(...) \
	do { \
		fprintf(stderr, "check_trace: " __VA_ARGS__); \
		fputc('\n', stderr); \
		failures++; \
	} while (0)

static void hex(char *out, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n && i < 2000; i++)
		sprintf(out + 2 * i, "%02x", p[i]);
	out[2 * (n < 2000 ? n : 2000)] = '\0';
}

/* Compare one event with one report line; returns 0 when they agree. */
static int compare(const char *name, uint64_t idx, const struct trace_event *ev, char *orig,
                   const struct trace_stack *st)
{
	char kind[32], call[32], *tok, *save = NULL, buf[4100], aux[256] = "", *p, line[8192];
	long long fd, ch, res, err;
	int n = 0, want_hash = 0, bad = 0;
	unsigned long long flags = 0;
	uint32_t i;

	snprintf(line, sizeof(line), "%s", orig); /* tokenised below; orig is quoted in messages */
	if (sscanf(line, "%31s %31s %lld %lld %lld %lld %n", kind, call, &fd, &ch, &res, &err, &n) <
	    6) {
		FAIL("%s: bad report line '%s'", name, orig);
		return -1;
	}
#define DIFF(what, fmt, want, got) \
	do { \
		FAIL("%s event %" PRIu64 ": %s: report says " fmt ", trace says " fmt " (line: %s)", \
		     name, idx, what, want, got, orig); \
		bad = 1; \
	} while (0)
	if (strcmp(kind, trace_kind_name(ev->kind)))
		DIFF("kind", "%s", kind, trace_kind_name(ev->kind));
	if (strcmp(call, trace_call_name(ev->call)))
		DIFF("call", "%s", call, trace_call_name(ev->call));
	if (fd != ev->fd)
		DIFF("fd", "%lld", fd, (long long)ev->fd);
	if (ch != ev->channel)
		DIFF("channel", "%lld", ch, (long long)ev->channel);
	if (res != ev->result)
		DIFF("result", "%lld", res, (long long)ev->result);
	if (err != ev->err)
		DIFF("errno", "%lld", err, (long long)ev->err);

	/* a pipe end that crossed a fork (schemas/trace-format.md, "Shared pipe ends"): its
	 * shared offset is the event's; the report knows nothing of it */
	uint32_t naux = ev->naux, evflags = ev->flags;

	if ((ev->kind == TRACE_EV_SEND || ev->kind == TRACE_EV_RECV) &&
	    (ev->flags & TRACE_FL_SHARED)) {
		if (ev->naux != 3 || ev->aux[0] != (int64_t)ev->offset)
			DIFF("shared offset", "%llu", (unsigned long long)ev->offset,
			     (unsigned long long)(ev->naux ? ev->aux[0] : -1));
		evflags &= ~TRACE_FL_SHARED;
		naux = 0;
	}
	p = aux;
	for (i = 0; i < naux; i++)
		p += sprintf(p, "%s%lld", i ? "," : "", (long long)ev->aux[i]);

	for (tok = strtok_r(line + n, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *val = strchr(tok, '=');

		if (!val)
			continue;
		*val++ = '\0';
		if (!strcmp(tok, "a")) {
			if (strcmp(val, aux))
				DIFF("aux", "%s", val, aux);
			aux[0] = '\0';
			strcpy(aux, "\x01"); /* seen */
		} else if (!strcmp(tok, "f")) {
			flags = strtoull(val, NULL, 0);
		} else if (!strcmp(tok, "n")) {
			if (strtoull(val, NULL, 0) != ev->len)
				DIFF("len", "%llu", strtoull(val, NULL, 0), (unsigned long long)ev->len);
		} else if (!strcmp(tok, "h") && ev->kind == TRACE_EV_INPUT) {
			/* input's bytes are in the trace and not hashed (schemas/trace-format.md,
			 * "Content check"): the event must carry none */
		} else if (!strcmp(tok, "h")) {
			want_hash = 1;
			if (!ev->has_hash)
				DIFF("hash", "%s", val, "none");
			else if ((uint32_t)strtoul(val, NULL, 16) != ev->hash)
				DIFF("hash", "%08lx", strtoul(val, NULL, 16), (unsigned long)ev->hash);
		} else if (!strcmp(tok, "v")) {
			hex(buf, ev->data, ev->data_len);
			if (strcmp(val, buf))
				DIFF("value", "%s", val, buf);
		} else if (!strcmp(tok, "fn")) {
			const char *fn = st && st->nframes ? st->frames[0].function : "(no site)";

			size_t vl = strlen(val);

			/* GCC clones keep the name with a suffix: exec_stage.isra.0 */
			if (strncmp(val, fn, vl) || (fn[vl] && fn[vl] != '.'))
				DIFF("call site", "%s", val, fn);
		} else if (!strcmp(tok, "ino") || !strcmp(tok, "pino") || !strcmp(tok, "epl") ||
		           !strcmp(tok, "epp")) {
			struct trace_endpoint ep;
			char got[300];

			if (trace_endpoint_decode(ev->data, ev->data_len, &ep) != 0) {
				DIFF("endpoint", "%s", "decodable", "undecodable");
				continue;
			}
			if (!strcmp(tok, "ino") || !strcmp(tok, "pino")) {
				unsigned long long g = tok[0] == 'i' ? ep.inode : ep.peer_inode;

				if (strtoull(val, NULL, 10) != g)
					DIFF(tok, "%llu", strtoull(val, NULL, 10), g);
			} else {
				trace_endpoint_format(&ep, tok[2] == 'p', got, sizeof(got));
				if (strcmp(val, got))
					DIFF(tok, "%s", val, got);
			}
		}
	}
	if (aux[0] && aux[0] != '\x01')
		DIFF("aux", "%s", "none", aux);
	if (flags != evflags)
		DIFF("flags", "%llu", flags, (unsigned long long)evflags);
	if (!want_hash && ev->has_hash)
		DIFF("hash", "%s", "none", "present");
#undef DIFF
	return bad ? -1 : 0;
}

static int check_process(struct trace_session *s, size_t pi, const char *repdir, int killed)
{
	const char *name = trace_session_name(s, pi);
	const char *const *paths;
	size_t nf = trace_session_files(s, pi, &paths), j;
	char path[4096], line[8192];
	uint64_t idx = 0;
	FILE *rep;

	snprintf(path, sizeof(path), "%s/%s.report", repdir, name);
	rep = fopen(path, "r");
	if (!rep) {
		FAIL("process %s is in the session but has no report %s", name, path);
		return -1;
	}
	for (j = 0; j < nf; j++) {
		struct trace_reader *r = NULL;
		struct trace_diag diag;
		struct trace_event ev;
		int rc;

		memset(&diag, 0, sizeof(diag));
		if (trace_reader_open(paths[j], &r, &diag) != 0) {
			FAIL("%s: cannot open: %s", paths[j], diag.msg);
			fclose(rep);
			return -1;
		}
		if (trace_reader_process(r)->first_index != idx)
			FAIL("%s: first_index %" PRIu64 ", expected %" PRIu64, paths[j],
			     trace_reader_process(r)->first_index, idx);
		while ((rc = trace_reader_next(r, &ev)) == 1) {
			long at = ftell(rep);

			idx++;
			if (ev.index != idx)
				FAIL("%s: event index %" PRIu64 ", expected %" PRIu64, name, ev.index, idx);
			/* a handler run the report does not name here is skipped: when a timer's
			 * signal lands is not the program's to report */
			if (ev.kind == TRACE_EV_HANDLER &&
			    (!fgets(line, sizeof(line), rep) || strncmp(line, "handler ", 8) != 0)) {
				fseek(rep, at, SEEK_SET);
				continue;
			}
			fseek(rep, at, SEEK_SET);
			if (!fgets(line, sizeof(line), rep)) {
				FAIL("%s event %" PRIu64 " (%s %s) is not in the report", name, idx,
				     trace_kind_name(ev.kind), trace_call_name(ev.call));
				continue;
			}
			line[strcspn(line, "\n")] = '\0';
			/* Every site an event names is defined before it (the writer's contract). */
			if (ev.site && !trace_reader_stack(r, ev.site))
				FAIL("%s event %" PRIu64 ": site %u is not defined", name, idx, ev.site);
			compare(name, idx, &ev, line, ev.site ? trace_reader_stack(r, ev.site) : NULL);
		}
		if (rc < 0)
			FAIL("%s: read error %d", paths[j], rc);
		if (trace_reader_damage(r, &diag) != 0)
			FAIL("%s: damaged: %s", paths[j], diag.msg);
		if (!killed && !trace_reader_closed(r))
			FAIL("%s: the writer did not close the file", paths[j]);
		if (killed && j + 1 == nf && trace_reader_closed(r))
			FAIL("%s: killed by SIGKILL, yet the file says it was closed", paths[j]);
		trace_reader_close(r);
	}
	while (fgets(line, sizeof(line), rep)) {
		line[strcspn(line, "\n")] = '\0';
		if (killed && strstr(line, " maybe=1"))
			continue; /* the process was killed around this call: logged or not */
		FAIL("%s: reported but not in the trace: %s", name, line);
	}
	fclose(rep);
	printf("check_trace: %s: %" PRIu64 " events checked\n", name, idx);
	return 0;
}

static int check_dropped(const char *path)
{
	struct trace_reader *r = NULL;
	struct trace_diag diag;
	struct trace_event ev;
	uint64_t n = 0, last = 0;
	int rc;

	memset(&diag, 0, sizeof(diag));
	if (trace_reader_open(path, &r, &diag) != 0) {
		fprintf(stderr, "check_trace: %s: %s\n", path, diag.msg);
		return 1;
	}
	while ((rc = trace_reader_next(r, &ev)) == 1) {
		if (last && ev.index != last + 1)
			FAIL("%s: event %" PRIu64 " follows %" PRIu64, path, ev.index, last);
		last = ev.index;
		n++;
	}
	if (rc < 0)
		FAIL("%s: read error %d", path, rc);
	if (trace_reader_damage(r, &diag) != 0)
		FAIL("%s: damaged: %s", path, diag.msg);
	if (trace_reader_dropped(r) == 0)
		FAIL("%s: nothing was dropped", path);
	if (!trace_reader_closed(r))
		FAIL("%s: not closed", path);
	if (last != n + trace_reader_dropped(r))
		FAIL("%s: last index %" PRIu64 " != %" PRIu64 " read + %" PRIu64 " dropped", path,
		     last, n, trace_reader_dropped(r));
	printf("check_trace: %s: %" PRIu64 " events read, %" PRIu64 " dropped by the budget\n",
	       path, n, trace_reader_dropped(r));
	trace_reader_close(r);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	struct trace_session *s = NULL;
	struct trace_diag diag;
	const char *killed = NULL;
	size_t i, found = 0;
	DIR *d;
	struct dirent *de;

	if (argc == 3 && !strcmp(argv[1], "--dropped"))
		return check_dropped(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "--killed")) {
		killed = argv[2];
		argv += 2;
		argc -= 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: check_trace [--killed NAME] SESSIONDIR REPORTDIR\n");
		return 2;
	}
	memset(&diag, 0, sizeof(diag));
	if (trace_session_open(argv[1], &s, &diag) != 0) {
		fprintf(stderr, "check_trace: %s: %s\n", argv[1], diag.msg);
		return 1;
	}
	for (i = 0; i < trace_session_count(s); i++)
		check_process(s, i, argv[2], killed && !strcmp(killed, trace_session_name(s, i)));
	/* Every report must have its process. */
	d = opendir(argv[2]);
	while (d && (de = readdir(d))) {
		size_t n = strlen(de->d_name);
		int have = 0;

		if (n < 8 || strcmp(de->d_name + n - 7, ".report"))
			continue;
		found++;
		for (i = 0; i < trace_session_count(s); i++)
			if (strlen(trace_session_name(s, i)) == n - 7 &&
			    !strncmp(trace_session_name(s, i), de->d_name, n - 7))
				have = 1;
		if (!have)
			FAIL("report %s has no process in the session", de->d_name);
	}
	if (d)
		closedir(d);
	if (!found)
		FAIL("no reports in %s", argv[2]);
	trace_session_close(s);
	if (failures)
		fprintf(stderr, "check_trace: %d difference(s)\n", failures);
	return failures ? 1 : 0;
}
