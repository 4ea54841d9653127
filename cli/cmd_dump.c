/*
 * cmd_dump.c: `encore dump DIR|FILE [--json]`: every process of a session (or one trace
 * file) and its events, as text for people or as one JSON document for programs.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "commands.h"

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore dump - print the processes and events of a recorded session\n\n"
	        "SYNOPSIS\n"
	        "    encore dump [--json] [--limit N] DIR|FILE\n\n"
	        "DESCRIPTION\n"
	        "    Reads every trace file of the session directory DIR (or the single trace\n"
	        "    FILE) and prints, per process, its metadata and its events in order:\n"
	        "    index, kind, the libc call, descriptor, channel, byte offset and length,\n"
	        "    result, errno, call site and any recorded value.  A damaged file is read up\n"
	        "    to its last whole event and the damage is reported on stderr.\n\n"
	        "OPTIONS\n"
	        "    --json      one JSON document: {\"processes\":[{\"name\":...,\"pid\":...,\n"
	        "                \"host\":...,\"events\":[{\"index\":1,\"kind\":\"send\",...}]}]}\n"
	        "    --limit N   at most N events per process (text and JSON)\n"
	        "    -h, --help  this text\n\n"
	        "EXIT STATUS\n"
	        "    0 all files read whole; 1 a file is missing, unreadable or damaged;\n"
	        "    2 usage error.\n");
	fprintf(out, "\nSee encore-dump(1).\n");
}

static void hex(FILE *out, const uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(out, "%02x", p[i]);
}

static int has_endpoint(uint32_t kind)
{
	return kind == TRACE_EV_SOCKET || kind == TRACE_EV_BIND || kind == TRACE_EV_CONNECT ||
	       kind == TRACE_EV_LISTEN ||
	       kind == TRACE_EV_ACCEPT || kind == TRACE_EV_PIPE;
}

static const char *chan_type_name(uint32_t t)
{
	static const char *const names[] = { "unknown", "tcp", "unix", "socketpair", "pipe", "udp",
	                                     "other" };

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "unknown";
}

static const char *top_function(struct trace_reader *r, uint32_t site)
{
	const struct trace_stack *st = site ? trace_reader_stack(r, site) : NULL;

	return st && st->nframes ? st->frames[0].function : "";
}

static void event_text(FILE *out, struct trace_reader *r, const struct trace_event *ev)
{
	struct trace_endpoint ep;
	const char *fn;

	fprintf(out, "  %6" PRIu64 "  %-8s", ev->index, trace_kind_name(ev->kind));
	if (ev->call)
		fprintf(out, " %s", trace_call_name(ev->call));
	if (ev->thread)
		fprintf(out, " thread=%u", ev->thread);
	if (ev->elided)
		fprintf(out, " owned=%u", ev->elided);
	if (ev->fd >= 0)
		fprintf(out, " fd=%d", ev->fd);
	if (ev->channel)
		fprintf(out, " ch=%u", ev->channel);
	if (ev->kind == TRACE_EV_SEND || ev->kind == TRACE_EV_RECV)
		fprintf(out, " [%" PRIu64 ",+%" PRId64 ") asked=%" PRIu64, ev->offset,
		        ev->result > 0 ? ev->result : 0, ev->len);
	fprintf(out, " = %" PRId64, ev->result);
	if (ev->err)
		fprintf(out, " errno=%d (%s)", ev->err, strerror(ev->err));
	if (ev->flags)
		fprintf(out, " flags=%#x", ev->flags);
	if (ev->has_hash)
		fprintf(out, " hash=%08x", ev->hash);
	if (ev->naux) {
		uint32_t i;

		fprintf(out, " aux=");
		for (i = 0; i < ev->naux; i++)
			fprintf(out, "%s%" PRId64, i ? "," : "", ev->aux[i]);
	}
	if (has_endpoint(ev->kind) && ev->data_len &&
	    trace_endpoint_decode(ev->data, ev->data_len, &ep) == 0) {
		char l[160], p[160];

		trace_endpoint_format(&ep, 0, l, sizeof(l));
		trace_endpoint_format(&ep, 1, p, sizeof(p));
		fprintf(out, " %s %s -> %s", chan_type_name(ep.type), l, p);
	} else if (ev->kind == TRACE_EV_MARK || ev->kind == TRACE_EV_EXEC) {
		fprintf(out, " %.*s", (int)ev->data_len, (const char *)ev->data);
	} else if (ev->data_len) {
		fprintf(out, " data=");
		hex(out, ev->data, ev->data_len < 32 ? ev->data_len : 32);
		if (ev->data_len > 32)
			fprintf(out, "... (%u bytes)", ev->data_len);
	}
	fn = top_function(r, ev->site);
	if (fn[0])
		fprintf(out, " in %s", fn);
	fputc('\n', out);
}

static void event_json(FILE *out, struct trace_reader *r, const struct trace_event *ev)
{
	struct trace_endpoint ep;
	uint32_t i;

	fprintf(out, "{\"index\":%" PRIu64 ",\"kind\":\"%s\",\"call\":\"%s\",\"fd\":%d,"
	             "\"channel\":%u,\"offset\":%" PRIu64 ",\"len\":%" PRIu64 ",\"result\":%" PRId64
	             ",\"errno\":%d,\"flags\":%u,\"site\":%u,\"thread\":%u,\"function\":",
	        ev->index, trace_kind_name(ev->kind), trace_call_name(ev->call), ev->fd, ev->channel,
	        ev->offset, ev->len, ev->result, ev->err, ev->flags, ev->site, ev->thread);
	cli_json_string(out, top_function(r, ev->site));
	fprintf(out, ",\"time_ns\":%" PRIu64, ev->time_ns);
	fprintf(out, ",\"owned\":%u", ev->elided);
	if (ev->has_hash)
		fprintf(out, ",\"hash\":%u", ev->hash);
	fprintf(out, ",\"aux\":[");
	for (i = 0; i < ev->naux; i++)
		fprintf(out, "%s%" PRId64, i ? "," : "", ev->aux[i]);
	fputc(']', out);
	if (has_endpoint(ev->kind) && ev->data_len &&
	    trace_endpoint_decode(ev->data, ev->data_len, &ep) == 0) {
		char l[160], p[160];

		trace_endpoint_format(&ep, 0, l, sizeof(l));
		trace_endpoint_format(&ep, 1, p, sizeof(p));
		fprintf(out, ",\"endpoint\":{\"type\":\"%s\",\"dir\":%u,\"inode\":%" PRIu64
		             ",\"peer_inode\":%" PRIu64 ",\"peer_pid\":%" PRId64 ",\"local\":",
		        chan_type_name(ep.type), ep.dir, ep.inode, ep.peer_inode, ep.peer_pid);
		cli_json_string(out, l);
		fprintf(out, ",\"peer\":");
		cli_json_string(out, p);
		fputc('}', out);
	} else if (ev->kind == TRACE_EV_MARK) {
		char key[256];

		snprintf(key, sizeof(key), "%.*s", (int)ev->data_len, (const char *)ev->data);
		fprintf(out, ",\"key\":");
		cli_json_string(out, key);
	}
	if (ev->data_len) {
		fprintf(out, ",\"data\":\"");
		hex(out, ev->data, ev->data_len);
		fputc('"', out);
	}
	fputc('}', out);
}

static void process_header(FILE *out, const struct trace_process *p, int json, int first_seg)
{
	uint32_t i;

	if (json) {
		fprintf(out, "\"name\":");
		cli_json_string(out, p->name);
		fprintf(out, ",\"pid\":%" PRId64 ",\"ppid\":%" PRId64 ",\"host\":", p->pid, p->ppid);
		cli_json_string(out, p->host);
		fprintf(out, ",\"parent\":");
		cli_json_string(out, p->parent);
		fprintf(out, ",\"fork_index\":%" PRIu64 ",\"session\":", p->fork_index);
		cli_json_string(out, p->session);
		fprintf(out, ",\"start_realtime_ns\":%" PRIu64 ",\"exe\":", p->start_realtime_ns);
		cli_json_string(out, p->exe);
		fprintf(out, ",\"cwd\":");
		cli_json_string(out, p->cwd);
		fprintf(out, ",\"build_id\":\"");
		hex(out, p->build_id, p->build_id_len);
		fprintf(out, "\",\"argv\":[");
		for (i = 0; i < p->argc; i++) {
			if (i)
				fputc(',', out);
			cli_json_string(out, p->argv[i]);
		}
		fputc(']', out);
		return;
	}
	if (first_seg)
		fprintf(out, "process %s  pid %" PRId64 "  host %s  parent %s\n", p->name, p->pid,
		        p->host[0] ? p->host : "?", p->parent[0] ? p->parent : "-");
	fprintf(out, "  image %u: %s", p->segment, p->exe);
	for (i = 0; i < p->argc; i++)
		fprintf(out, " %s", p->argv[i]);
	fputc('\n', out);
}

/* Dump one process (all its segment files).  Returns 0, or 1 if a file was damaged. */
static int dump_process(FILE *out, const char *const *paths, size_t npaths, int json,
                        uint64_t limit, int *first_proc)
{
	size_t f;
	int bad = 0, first_event = 1;
	uint64_t shown = 0;

	for (f = 0; f < npaths; f++) {
		struct trace_reader *r;
		struct trace_diag d;
		struct trace_event ev;
		int rc;

		if (trace_reader_open(paths[f], &r, &d) != 0) {
			cli_diag("dump", &d);
			bad = 1;
			continue;
		}
		if (json) {
			if (f == 0) {
				fprintf(out, "%s{", *first_proc ? "" : ",");
				*first_proc = 0;
				process_header(out, trace_reader_process(r), 1, 1);
				fprintf(out, ",\"events\":[");
			}
		} else {
			process_header(out, trace_reader_process(r), 0, f == 0);
		}
		while ((rc = trace_reader_next(r, &ev)) > 0) {
			if (limit && shown >= limit)
				continue;
			shown++;
			if (json) {
				if (!first_event)
					fputc(',', out);
				first_event = 0;
				event_json(out, r, &ev);
			} else {
				event_text(out, r, &ev);
			}
		}
		if (rc < 0) {
			cli_error("dump", "%s: read error: %s", paths[f], trace_strerror(rc));
			bad = 1;
		} else if (trace_reader_damage(r, &d)) {
			cli_diag("dump", &d);
			bad = 1;
		}
		if (!json && !trace_reader_closed(r))
			fprintf(out, "  (writer did not close %s: %" PRIu64
			             " events read from its unflushed tail)\n",
			        paths[f], trace_reader_tail_events(r));
		trace_reader_close(r);
	}
	if (json && !*first_proc)
		fprintf(out, "]}");
	return bad;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "limit", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int json = 0, c, bad = 0, first_proc = 1;
	uint64_t limit = 0;
	struct stat st;
	const char *target;

	optind = 1;
	while ((c = getopt_long(argc, argv, "hjn:", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'n': {
			char *end;

			(void)end;
			if (cli_parse_count(optarg, &limit) != 0) {
				cli_error("dump", "--limit wants a number of events, not '%s'", optarg);
				return CLI_USAGE;
			}
			break;
		}
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("dump");
		}
	}
	if (optind != argc - 1) {
		cli_error("dump", "expected one session directory or trace file; see 'encore dump --help'");
		return CLI_USAGE;
	}
	target = argv[optind];
	if (stat(target, &st) != 0) {
		cli_error("dump", "%s: %s", target, strerror(errno));
		return CLI_FAIL;
	}
	if (json)
		printf("{\"processes\":[");
	if (S_ISDIR(st.st_mode)) {
		struct trace_session *s;
		struct trace_diag d;
		size_t i;

		if (trace_session_open(target, &s, &d) != 0) {
			cli_diag("dump", &d);
			return CLI_FAIL;
		}
		for (i = 0; i < trace_session_count(s); i++) {
			const char *const *paths;
			size_t n = trace_session_files(s, i, &paths);

			bad |= dump_process(stdout, paths, n, json, limit, &first_proc);
		}
		trace_session_close(s);
	} else {
		const char *paths[1] = { target };

		bad |= dump_process(stdout, paths, 1, json, limit, &first_proc);
	}
	if (json)
		printf("]}\n");
	return bad ? CLI_FAIL : CLI_OK;
}
