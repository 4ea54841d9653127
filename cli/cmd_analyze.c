/*
 * cmd_analyze.c: `encore analyze DIR`: what the analyzer made of a session: processes,
 * events, channels (matched and external), messages, warnings (threads, damage, channels it
 * could not link) and message races, the places where another run could differ.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "ana.h"
#include "cli.h"
#include "commands.h"

#define SHOW_RACES 20

static void usage(FILE *out)
{
	fprintf(out,
	        "NAME\n"
	        "    encore analyze - summarise a session: channels, messages, races\n\n"
	        "SYNOPSIS\n"
	        "    encore analyze [--races N] [--json] DIR\n\n"
	        "DESCRIPTION\n"
	        "    Loads every trace of DIR, matches the two ends of each channel from what both\n"
	        "    ends logged (addresses, inodes, peer credentials, fork inheritance; never\n"
	        "    timestamps) and links every receive to the send of its last byte.  Prints the\n"
	        "    processes with their event counts, the channels (matched, or external when the\n"
	        "    peer was not recorded), the messages, warnings (threads, damaged traces,\n"
	        "    channels written by several processes at once) and the message races: a\n"
	        "    receive, and a message waiting on another channel of the same process that it\n"
	        "    could have received instead because the receive did not happen before it was\n"
	        "    sent.\n\n"
	        "OPTIONS\n"
	        "    --races N   list at most N races (default %d; 0 lists none, counts stay)\n"
	        "    --json      the same as one JSON object: session, counts (processes, events,\n"
	        "                sends, recvs, channels, channels_matched, channels_external,\n"
	        "                messages, external_recvs, unmatched_recvs, races), processes\n"
	        "                [{name, events, threads}], races [{recv, src, rival}] as\n"
	        "                \"PROC:INDEX\" with the thread of each (recv_thread...),\n"
	        "                warnings [text]\n"
	        "    -h, --help  this text\n\n"
	        "EXIT STATUS\n"
	        "    0 analysed; 1 the session cannot be loaded, or a trace is damaged (what\n"
	        "    could be read is analysed and printed, the damage is named on stderr);\n"
	        "    2 usage error.\n", SHOW_RACES);
	fprintf(out, "\nSee encore-analyze(1).\n");
}

static void print_ref(const struct ana_session *s, size_t p, uint64_t k)
{
	char buf[320];

	snprintf(buf, sizeof(buf), "%s:%llu", ana_proc_name(s, p), (unsigned long long)k);
	cli_json_string(stdout, buf);
}

/* The thread of event (p, k): its index in the process, 0 the main thread. */
static uint32_t event_thread(const struct ana_session *s, size_t p, uint64_t k)
{
	struct ana_event ev;

	return ana_event_get(s, p, k, &ev) == 0 ? ev.thread : 0;
}

/* 1 + the highest thread of process p's events. */
static uint32_t proc_threads(const struct ana_session *s, size_t p)
{
	uint32_t n = 1;

	for (uint64_t k = 1; k <= ana_nevents(s, p); k++) {
		uint32_t t = event_thread(s, p, k);

		if (t >= n && t < UINT32_MAX)
			n = t + 1;
	}
	return n;
}

static void print_json(const struct ana_session *s, const struct ana_stats *st, const char *dir,
                       const struct ana_race *races, size_t nraces, size_t show)
{
	printf("{\"session\":");
	cli_json_string(stdout, dir);
	printf(",\"counts\":{\"processes\":%zu,\"events\":%llu,\"sends\":%llu,\"recvs\":%llu,"
	       "\"channels\":%zu,\"channels_matched\":%zu,\"channels_external\":%zu,"
	       "\"messages\":%llu,\"external_recvs\":%llu,\"unmatched_recvs\":%llu,"
	       "\"races\":%zu}", st->procs, (unsigned long long)st->events,
	       (unsigned long long)st->sends, (unsigned long long)st->recvs, st->channels,
	       st->channels_matched, st->channels_external, (unsigned long long)st->messages,
	       (unsigned long long)st->external_recvs, (unsigned long long)st->unmatched_recvs,
	       nraces);
	printf(",\"processes\":[");
	for (size_t p = 0; p < ana_nprocs(s); p++) {
		printf("%s{\"name\":", p ? "," : "");
		cli_json_string(stdout, ana_proc_name(s, p));
		printf(",\"events\":%llu,\"threads\":%u}", (unsigned long long)ana_nevents(s, p),
		       proc_threads(s, p));
	}
	printf("],\"races\":[");
	for (size_t i = 0; i < nraces && i < show; i++) {
		printf("%s{\"recv\":", i ? "," : "");
		print_ref(s, races[i].proc, races[i].recv);
		printf(",\"src\":");
		print_ref(s, races[i].src_proc, races[i].src_send);
		printf(",\"rival\":");
		print_ref(s, races[i].rival_proc, races[i].rival_send);
		printf(",\"recv_thread\":%u,\"src_thread\":%u,\"rival_thread\":%u}",
		       event_thread(s, races[i].proc, races[i].recv),
		       event_thread(s, races[i].src_proc, races[i].src_send),
		       event_thread(s, races[i].rival_proc, races[i].rival_send));
	}
	printf("],\"warnings\":[");
	for (size_t i = 0; i < ana_nwarnings(s); i++) {
		printf("%s", i ? "," : "");
		cli_json_string(stdout, ana_warning(s, i));
	}
	printf("]}\n");
}

/* Damaged traces: on stderr, and exit 1 (the summary still says what could be read). */
static int damage(const struct ana_session *s)
{
	int bad = 0;

	fflush(stdout);
	for (size_t i = 0; i < ana_nwarnings(s); i++)
		if (cli_is_damage(ana_warning(s, i))) {
			cli_error("analyze", "%s", ana_warning(s, i));
			bad = 1;
		}
	return bad ? CLI_FAIL : CLI_OK;
}

int cmd_analyze(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "races", required_argument, NULL, 'r' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct ana_session *s = NULL;
	struct ana_stats st;
	struct ana_race *races = NULL;
	struct trace_diag d;
	size_t nraces = 0, show = SHOW_RACES;
	int c, rc, json = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': {
			char *end;

			uint64_t v;

			(void)end;
			if (cli_parse_count(optarg, &v) != 0 || v > SIZE_MAX) {
				cli_error("analyze", "--races takes a number, not '%s'", optarg);
				return CLI_USAGE;
			}
			show = (size_t)v;
			break;
		}
		case 'j': json = 1; break;
		case 'h': usage(stdout); return CLI_OK;
		default: return cli_bad_option("analyze");
		}
	}
	if (argc - optind != 1) {
		cli_error("analyze", "expected one session directory: encore analyze DIR");
		return CLI_USAGE;
	}
	memset(&d, 0, sizeof(d));
	if ((rc = ana_load(argv[optind], &s, &d))) {
		cli_diag("analyze", &d);
		return CLI_FAIL;
	}
	if (ana_stats(s, &st) || ana_races(s, &races, &nraces)) {
		cli_error("analyze", "out of memory analysing %s", argv[optind]);
		ana_free(s);
		return CLI_FAIL;
	}
	if (json) {
		print_json(s, &st, argv[optind], races, nraces, show);
		free(races);
		rc = damage(s);
		ana_free(s);
		return rc;
	}
	printf("session %s\n", argv[optind]);
	printf("  processes  %zu%s\n", st.procs,
	       st.thread_procs ? " (some created threads: see warnings)" : "");
	printf("  events     %llu (%llu sends, %llu receives that moved bytes)\n",
	       (unsigned long long)st.events, (unsigned long long)st.sends,
	       (unsigned long long)st.recvs);
	printf("  channels   %zu (%zu matched, %zu external)\n", st.channels, st.channels_matched,
	       st.channels_external);
	printf("  messages   %llu linked; %llu external receives; %llu unmatched\n",
	       (unsigned long long)st.messages, (unsigned long long)st.external_recvs,
	       (unsigned long long)st.unmatched_recvs);
	printf("  races      %zu\n\n", nraces);
	printf("    %-24s %10s\n", "PROCESS", "EVENTS");
	for (size_t p = 0; p < ana_nprocs(s); p++)
		printf("    %-24s %10llu\n", ana_proc_name(s, p),
		       (unsigned long long)ana_nevents(s, p));
	if (nraces && show) {
		printf("\nmessage races (receive <- its send; could have received instead):\n");
		for (size_t i = 0; i < nraces && i < show; i++) {
			const struct ana_race *r = &races[i];

			printf("    %s:%llu <- %s:%llu; rival %s:%llu\n", ana_proc_name(s, r->proc),
			       (unsigned long long)r->recv, ana_proc_name(s, r->src_proc),
			       (unsigned long long)r->src_send, ana_proc_name(s, r->rival_proc),
			       (unsigned long long)r->rival_send);
		}
		if (nraces > show)
			printf("    ... and %zu more (--races N lists more)\n", nraces - show);
	}
	if (ana_nwarnings(s)) {
		printf("\nwarnings:\n");
		for (size_t i = 0; i < ana_nwarnings(s); i++)
			printf("    %s\n", ana_warning(s, i));
	}
	free(races);
	rc = damage(s);
	ana_free(s);
	return rc;
}
