/*
 * test_trace.c: libtrace's trace format.  Every event kind round-trips; random streams
 * round-trip bit-exactly (records spanning chunks included); a writer that dies after any
 * event leaves a file that reads back exactly to that event; a chunk torn mid-write is
 * recovered from the tail; truncation at every byte offset and flipped bytes are detected
 * and never yield a wrong event; the disk budget drops the oldest chunks and says so.
 */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "trace.h"
#include "unit.h"

void trace_crc_force_soft(int soft); /* test hook in crc.c */

#define CHUNK 4096

/* --- helpers --------------------------------------------------------------------------- */

struct stored {
	struct trace_event ev;
	uint8_t *data;
};

static void fill_process(struct trace_process *p, const char *name)
{
	static char *argv[] = { "prog", "--flag", "argument with spaces" };

	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->parent, sizeof(p->parent), "root");
	snprintf(p->host, sizeof(p->host), "hostA");
	snprintf(p->host_id, sizeof(p->host_id), "0123456789abcdef");
	snprintf(p->session, sizeof(p->session), "sess-1");
	p->pid = 4242;
	p->ppid = 1;
	p->fork_index = 7;
	p->start_realtime_ns = 1700000000123456789ull;
	snprintf(p->exe, sizeof(p->exe), "/usr/bin/prog");
	snprintf(p->cwd, sizeof(p->cwd), "/tmp");
	memcpy(p->build_id, "\x01\x02\x03\x04\x05", 5);
	p->build_id_len = 5;
	p->argc = 3;
	p->argv = argv;
}

/* Two tails (trace_writer_options.drain_due; schemas/trace-format.md, "Two tails"), for the
 * writers open_writer makes: 0 one tail; 1 each full tail drained as soon as it is left, as
 * the recorder does once out of its lock; 2 never drained by the caller (the next switch, or
 * the close, drains it in its own call); 3 drained or not at random.  Loop tests set it
 * from their iteration. */
static int tails_mode;
static int drain_due;
static uint64_t drain_coin = 88172645463325252ull;

/* After each writer call, what the recorder's rec_leave does. */
static void after_write(struct trace_writer *w)
{
	if (!drain_due)
		return;
	drain_due = 0;
	if (tails_mode == 2)
		return;
	if (tails_mode == 3) {
		drain_coin ^= drain_coin << 13;
		drain_coin ^= drain_coin >> 7;
		drain_coin ^= drain_coin << 17;
		if (drain_coin & 1)
			return;
	}
	if (trace_writer_claim(w))
		trace_writer_drain(w);
}

static struct trace_writer *open_writer(const char *path, const char *name, uint32_t chunk,
                                        uint64_t max_bytes)
{
	struct trace_process p;
	struct trace_writer_options o = { chunk, 0, max_bytes, 0,
	                                  tails_mode ? &drain_due : NULL, 0 };
	struct trace_writer *w = NULL;
	struct trace_diag d;
	int rc;

	fill_process(&p, name);
	rc = trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d);
	ck_assert_msg(rc == 0, "writer open %s: %s", path, d.msg);
	return w;
}

/* A random event; data (if any) is written to buf. */
static void random_event(struct unit_rng *g, struct trace_event *ev, uint8_t *buf, size_t cap)
{
	uint32_t i;

	memset(ev, 0, sizeof(*ev));
	ev->kind = 1 + (uint32_t)unit_rng_below(g, TRACE_EV_KIND_MAX);
	ev->call = (uint32_t)unit_rng_below(g, TRACE_CALL_MAX);
	ev->flags = unit_rng_below(g, 4) == 0 ? (uint32_t)unit_rng_below(g, 8) : 0;
	ev->fd = unit_rng_below(g, 5) == 0 ? -1 : (int32_t)unit_rng_below(g, 1100);
	ev->channel = (uint32_t)unit_rng_below(g, 40);
	ev->site = (uint32_t)unit_rng_below(g, 30);
	switch (unit_rng_below(g, 4)) {
	case 0: ev->result = -1; ev->err = (int32_t)(1 + unit_rng_below(g, 130)); break;
	case 1: ev->result = 0; break;
	case 2: ev->result = (int64_t)unit_rng_below(g, 70000); break;
	default: ev->result = (int64_t)(unit_rng_next(g) >> 1) * (unit_rng_below(g, 2) ? 1 : -1);
	}
	ev->len = unit_rng_below(g, 3) == 0 ? unit_rng_next(g) : (ev->result > 0 ? (uint64_t)ev->result : 0);
	ev->time_ns = unit_rng_below(g, 3) ? 1000000000ull + unit_rng_below(g, 1ull << 40) : 0;
	if (unit_rng_below(g, 4) == 0) {
		ev->has_hash = 1;
		ev->hash = (uint32_t)unit_rng_next(g);
	}
	ev->naux = (uint32_t)unit_rng_below(g, TRACE_AUX_MAX + 1);
	for (i = 0; i < ev->naux; i++)
		ev->aux[i] = (int64_t)unit_rng_next(g);
	if (unit_rng_below(g, 3) == 0) {
		/* mostly small values, sometimes larger than a chunk so records span chunks */
		size_t n = unit_rng_below(g, 8) == 0 ? unit_rng_below(g, cap) : unit_rng_below(g, 64);

		for (i = 0; i < n; i++)
			buf[i] = (uint8_t)unit_rng_next(g);
		ev->data = buf;
		ev->data_len = (uint32_t)n;
	}
}

/* The reader reconstructs time absolutely, len by default and offsets by derivation:
 * compare what the writer was given with what the reader returned.  Plain comparisons and
 * one failure call: every passing ck_assert costs Check a message through a pipe, and these
 * loops compare millions of fields. */
static const char *differs(const struct trace_event *w, const struct trace_event *r)
{
	uint32_t i;

	if (r->kind != w->kind) return "kind";
	if (r->call != w->call) return "call";
	if (r->flags != w->flags) return "flags";
	if (r->fd != w->fd) return "fd";
	if (r->channel != w->channel) return "channel";
	if (r->site != w->site) return "site";
	if (r->result != w->result) return "result";
	if (r->err != w->err) return "err";
	if (r->len != w->len) return "len";
	if (r->time_ns != w->time_ns) return "time_ns";
	if (r->has_hash != w->has_hash || (w->has_hash && r->hash != w->hash)) return "hash";
	if (r->naux != w->naux) return "naux";
	for (i = 0; i < w->naux; i++)
		if (r->aux[i] != w->aux[i])
			return "aux";
	if (r->data_len != w->data_len) return "data_len";
	if (w->data_len && memcmp(r->data, w->data, w->data_len) != 0) return "data";
	return NULL;
}

static void assert_same(const struct trace_event *w, const struct trace_event *r, uint64_t index)
{
	const char *field = r->index != index ? "index" : differs(w, r);

	if (field)
		ck_abort_msg("event %llu: %s differs", (unsigned long long)index, field);
}

static size_t max_data = 3 * CHUNK;

static struct stored *write_random(const char *path, uint64_t seed, size_t n, uint32_t chunk,
                                   int close_it)
{
	struct unit_rng g;
	struct stored *s = calloc(n, sizeof(*s));
	static uint8_t buf[3 * CHUNK];
	struct trace_writer *w = open_writer(path, "rnd", chunk, 0);
	size_t i;

	unit_rng_seed(&g, seed);
	for (i = 0; i < n; i++) {
		if (unit_rng_below(&g, 10) == 0) {
			struct trace_frame f[2] = { { 0x400000 + i, 12, "main", "prog" },
			                            { 0x500000, 3, "__libc_start_main", "libc.so.6" } };

			ck_assert_int_eq(trace_writer_stack(w, (uint32_t)unit_rng_below(&g, 30), f, 2), 0);
			after_write(w);
		}
		random_event(&g, &s[i].ev, buf, max_data);
		if (s[i].ev.data_len) {
			s[i].data = malloc(s[i].ev.data_len);
			memcpy(s[i].data, s[i].ev.data, s[i].ev.data_len);
			s[i].ev.data = s[i].data;
		}
		ck_assert_int_eq(trace_writer_event(w, &s[i].ev), 0);
		after_write(w);
		ck_assert_uint_eq(trace_writer_count(w), i + 1);
	}
	if (close_it)
		ck_assert_int_eq(trace_writer_close(w), 0);
	else
		trace_writer_abandon(w);
	return s;
}

static void free_stored(struct stored *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(s[i].data);
	free(s);
}

/* Read path; check every event against s (by index).  Returns the number read. */
static size_t read_check(const char *path, const struct stored *s, size_t n, int *damage)
{
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	size_t got = 0;
	int rc;

	rc = trace_reader_open(path, &r, &d);
	if (rc != 0) {
		*damage = rc;
		return 0;
	}
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		if (ev.index < 1 || ev.index > n)
			ck_abort_msg("index %llu out of range", (unsigned long long)ev.index);
		assert_same(&s[ev.index - 1].ev, &ev, ev.index);
		got++;
	}
	if (rc != 0)
		ck_abort_msg("read error %d", rc);
	*damage = trace_reader_damage(r, &d);
	if (*damage && (!d.msg[0] || !strstr(d.file, path)))
		ck_abort_msg("damage without a message or file");
	trace_reader_close(r);
	return got;
}

static size_t file_size(const char *path)
{
	struct stat st;

	ck_assert_int_eq(stat(path, &st), 0);
	return (size_t)st.st_size;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	uint8_t *b;

	ck_assert_ptr_nonnull(f);
	*n = file_size(path);
	b = malloc(*n ? *n : 1);
	ck_assert_uint_eq(fread(b, 1, *n, f), *n);
	fclose(f);
	return b;
}

static void spit(const char *path, const uint8_t *b, size_t n)
{
	FILE *f;

	unlink(path);
	f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(b, 1, n, f), n);
	fclose(f);
}

static void poke(const char *path, size_t at, uint8_t v)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || pwrite(fd, &v, 1, (off_t)at) != 1)
		ck_abort_msg("poke %s: %s", path, strerror(errno));
	close(fd);
}

/* --- tests ----------------------------------------------------------------------------- */

START_TEST(crc_known_values)
{
	ck_assert_uint_eq(trace_crc32c(0, "123456789", 9), 0xE3069283u);
	trace_crc_force_soft(1);
	ck_assert_uint_eq(trace_crc32c(0, "123456789", 9), 0xE3069283u);
	trace_crc_force_soft(0);
}
END_TEST

START_TEST(hash_composes_over_splits)
{
	struct unit_rng g;
	uint8_t buf[5000];
	size_t i;

	unit_rng_seed(&g, unit_seed());
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)unit_rng_next(&g);
	for (i = 0; i < 200; i++) {
		size_t a = unit_rng_below(&g, sizeof(buf)), b = unit_rng_below(&g, sizeof(buf) - a);
		uint32_t whole = trace_hash(0, buf, a + b);
		uint32_t split = trace_hash(trace_hash(0, buf, a), buf + a, b);

		ck_assert_uint_eq(whole, split);
		trace_crc_force_soft(1);
		ck_assert_uint_eq(trace_hash(0, buf, a + b), whole);
		trace_crc_force_soft(0);
	}
	ck_assert_uint_ne(trace_hash(0, "a", 1), trace_hash(0, "b", 1));
}
END_TEST

START_TEST(kind_names_round_trip)
{
	uint32_t k;

	for (k = 1; k <= TRACE_EV_KIND_MAX; k++)
		if (strcmp(trace_kind_name(k), "unknown") != 0) /* numbers of other branches */
			ck_assert_uint_eq(trace_kind_from_name(trace_kind_name(k)), k);
	ck_assert_str_eq(trace_kind_name(TRACE_EV_PASS), "pass");
	ck_assert_str_eq(trace_kind_name(TRACE_EV_ACCEPT), "accept");
	ck_assert_str_eq(trace_kind_name(999), "unknown");
	ck_assert_uint_eq(trace_kind_from_name("nonsense"), TRACE_EV_NONE);
	ck_assert_str_eq(trace_call_name(TRACE_CALL_RECVMSG), "recvmsg");
}
END_TEST

START_TEST(endpoint_round_trip)
{
	struct trace_endpoint a, b;
	uint8_t buf[TRACE_ENDPOINT_MAX];
	char s[200];
	int n;

	memset(&a, 0, sizeof(a));
	a.type = TRACE_CHAN_TCP;
	a.inode = 991;
	a.peer_pid = -5;
	a.local_len = 16;
	a.local[0] = 2; /* AF_INET, little-endian sa_family */
	a.local[2] = 0x0f;
	a.local[3] = 0xa0; /* port 4000 */
	a.local[4] = 127;
	a.local[7] = 1;
	a.peer_len = 3;
	memcpy(a.peer, "xyz", 3);
	n = trace_endpoint_encode(&a, buf, sizeof(buf));
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(trace_endpoint_decode(buf, (size_t)n, &b), 0);
	ck_assert(memcmp(&a, &b, sizeof(a)) == 0);
	trace_endpoint_format(&b, 0, s, sizeof(s));
	ck_assert_str_eq(s, "127.0.0.1:4000");
	ck_assert_int_eq(trace_endpoint_encode(&a, buf, 5), TRACE_EINVAL);
	ck_assert_int_eq(trace_endpoint_decode(buf, (size_t)n - 1, &b), TRACE_ECORRUPT);
}
END_TEST

START_TEST(every_kind_round_trips)
{
	char dir[4096], path[4200];
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_event in[TRACE_EV_KIND_MAX + 1], out;
	struct trace_diag d;
	const struct trace_process *p;
	const struct trace_stack *st;
	const struct trace_inherit *inh;
	struct trace_frame f[3] = { { 0x1234, 0x10, "send_request", "client" },
	                            { 0x2000, 0x20, "main", "client" },
	                            { 0x3000, 0, "", "" } };
	uint32_t k;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	w = open_writer(path, "p", CHUNK, 0);
	ck_assert_int_eq(trace_writer_inherit(w, 3, 100, 50), 0);
	ck_assert_int_eq(trace_writer_stack(w, 1, f, 3), 0);
	for (k = 1; k <= TRACE_EV_KIND_MAX; k++) {
		struct trace_event *e = &in[k];

		memset(e, 0, sizeof(*e));
		e->kind = k;
		e->call = k % TRACE_CALL_MAX;
		e->fd = (int32_t)k;
		e->channel = 3;
		e->site = 1;
		e->result = (int64_t)k * 10;
		e->len = (uint64_t)k * 10 + (k % 2);
		e->time_ns = 1000 + k;
		e->naux = 2;
		e->aux[0] = -(int64_t)k;
		e->aux[1] = INT64_MAX;
		e->data = (const uint8_t *)"value";
		e->data_len = 5;
		e->has_hash = 1;
		e->hash = 0xdeadbeef ^ k;
		ck_assert_int_eq(trace_writer_event(w, e), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	p = trace_reader_process(r);
	ck_assert_str_eq(p->name, "p");
	ck_assert_str_eq(p->parent, "root");
	ck_assert_int_eq(p->pid, 4242);
	ck_assert_uint_eq(p->fork_index, 7);
	ck_assert_uint_eq(p->argc, 3);
	ck_assert_str_eq(p->argv[2], "argument with spaces");
	ck_assert_uint_eq(p->build_id_len, 5);
	ck_assert_str_eq(p->exe, "/usr/bin/prog");
	for (k = 1; k <= TRACE_EV_KIND_MAX; k++) {
		ck_assert_int_eq(trace_reader_next(r, &out), 1);
		assert_same(&in[k], &out, k);
		/* offsets continue from the inherited byte counts, per direction */
		if (k == TRACE_EV_SEND)
			ck_assert_uint_eq(out.offset, 100);
		if (k == TRACE_EV_RECV)
			ck_assert_uint_eq(out.offset, 50);
	}
	ck_assert_int_eq(trace_reader_next(r, &out), 0);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_int_eq(trace_reader_closed(r), 1);
	ck_assert_uint_eq(trace_reader_inherited(r, &inh), 1);
	ck_assert_uint_eq(inh[0].channel, 3);
	ck_assert_uint_eq(inh[0].sent, 100);
	st = trace_reader_stack(r, 1);
	ck_assert_ptr_nonnull(st);
	ck_assert_uint_eq(st->nframes, 3);
	ck_assert_str_eq(st->frames[0].function, "send_request");
	ck_assert_str_eq(st->frames[1].object, "client");
	ck_assert_uint_eq(st->frames[1].offset, 0x20);
	ck_assert_ptr_null(trace_reader_stack(r, 2));
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(offsets_are_derived_per_direction)
{
	char dir[4096], path[4200];
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_event e, out;
	struct trace_diag d;
	/* kind, channel, result, flags -> expected offset */
	static const int64_t plan[][5] = {
		{ TRACE_EV_SEND, 1, 10, 0, 0 },  { TRACE_EV_SEND, 1, 5, 0, 10 },
		{ TRACE_EV_RECV, 1, 7, 0, 0 },   { TRACE_EV_RECV, 1, 3, TRACE_FL_PEEK, 7 },
		{ TRACE_EV_RECV, 1, 3, 0, 7 },   { TRACE_EV_RECV, 1, -1, 0, 10 },
		{ TRACE_EV_SEND, 2, 4, 0, 0 },   { TRACE_EV_SEND, 1, 0, 0, 15 },
		{ TRACE_EV_SEND, 1, 1, 0, 15 },
	};
	size_t i;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/o.trace", dir);
	w = open_writer(path, "o", CHUNK, 0);
	for (i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		memset(&e, 0, sizeof(e));
		e.kind = (uint32_t)plan[i][0];
		e.channel = (uint32_t)plan[i][1];
		e.result = plan[i][2];
		e.err = e.result < 0 ? EAGAIN : 0;
		e.flags = (uint32_t)plan[i][3];
		e.len = e.result > 0 ? (uint64_t)e.result : 0;
		e.fd = -1;
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	for (i = 0; i < sizeof(plan) / sizeof(plan[0]); i++) {
		ck_assert_int_eq(trace_reader_next(r, &out), 1);
		ck_assert_msg(out.offset == (uint64_t)plan[i][4], "event %zu: offset %llu, want %lld", i + 1,
		              (unsigned long long)out.offset, (long long)plan[i][4]);
	}
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(random_streams_round_trip)
{
	char dir[4096], path[4200];
	int round, damage;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	for (round = 0; round < 20; round++) {
		size_t n = 50 + (size_t)round * 37;
		struct stored *s;

		snprintf(path, sizeof(path), "%s/r%d.trace", dir, round);
		s = write_random(path, unit_seed() + (uint64_t)round, n, CHUNK, 1);
		ck_assert_uint_eq(read_check(path, s, n, &damage), n);
		ck_assert_int_eq(damage, 0);
		free_stored(s, n);
	}
	unit_rmdir(dir);
}
END_TEST

/* The writer dies (never closes) after k events, for every k: all k events read back. */
START_TEST(writer_death_after_any_event)
{
	char dir[4096], path[4200];
	const size_t n = 160;
	size_t k;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	for (k = 0; k <= n; k++) {
		struct stored *s;
		int damage;

		snprintf(path, sizeof(path), "%s/k%zu.trace", dir, k);
		s = write_random(path, unit_seed() ^ k, k, CHUNK, 0);
		ck_assert_uint_eq(read_check(path, s, k, &damage), k);
		ck_assert_int_eq(damage, 0);
		free_stored(s, k);
		unlink(path);
	}
	unit_rmdir(dir);
}
END_TEST

/* Death in the middle of writing a chunk: the file holds a torn chunk, the tail still
 * holds the same bytes.  Every cut of that chunk recovers every event. */
START_TEST(torn_chunk_recovered_from_tail)
{
	char dir[4096], path[4200], cut[4300];
	struct trace_writer *w;
	struct trace_event e;
	uint8_t *before, *after, *mix;
	size_t nb, na, i, n = 0, chunk_start, tail_off = 0;
	int damage;
	struct stored *s = calloc(64, sizeof(*s));

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	snprintf(cut, sizeof(cut), "%s/cut.trace", dir);
	w = open_writer(path, "t", CHUNK, 0);
	for (i = 0; i < 40; i++) {
		memset(&e, 0, sizeof(e));
		e.kind = TRACE_EV_SEND;
		e.channel = 1;
		e.result = (int64_t)i;
		e.len = i;
		e.fd = 5;
		s[n].ev = e;
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
		n++;
	}
	before = slurp(path, &nb);        /* tail holds the 40 events, no chunk yet */
	chunk_start = nb;
	ck_assert_int_eq(trace_writer_flush(w), 0);
	after = slurp(path, &na);         /* chunk 0 written, tail reset */
	trace_writer_abandon(w);
	ck_assert_uint_gt(na, nb);
	/* the tail region is the page-aligned stretch that differs before/after, ending at
	 * chunk_start: find its start from the header (offset 24, little-endian u64) */
	for (i = 0; i < 8; i++)
		tail_off |= (size_t)before[24 + i] << (8 * i);
	mix = malloc(na);
	for (i = chunk_start; i < na; i++) {
		memcpy(mix, after, na);
		memcpy(mix + tail_off, before + tail_off, chunk_start - tail_off);
		spit(cut, mix, i);
		ck_assert_uint_eq(read_check(cut, s, n, &damage), n);
		ck_assert_int_eq(damage, 0);
	}
	free(mix);
	free(before);
	free(after);
	free(s);
	unit_rmdir(dir);
}
END_TEST

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

/* A random event with data of up to max bytes, kept in *st, written. */
static void write_stored(struct trace_writer *w, struct unit_rng *g, struct stored *st,
                         uint8_t *buf, size_t max)
{
	random_event(g, &st->ev, buf, max);
	if (st->ev.data_len) {
		st->data = malloc(st->ev.data_len);
		memcpy(st->data, st->ev.data, st->ev.data_len);
		st->ev.data = st->data;
	}
	ck_assert_int_eq(trace_writer_event(w, &st->ev), 0);
}

/* Two tails: death while a full tail is being drained, at every byte of its chunk's write:
 * the full tail still holds the chunk's bytes, and every event reads back. */
START_TEST(torn_drain_recovered_from_tails)
{
	char dir[4096], path[4200], cut[4300];
	struct trace_writer *w;
	struct unit_rng g;
	uint8_t *after, buf[700];
	size_t nb, na, i, n = 0;
	int damage, switches = 0;
	struct stored *s = calloc(400, sizeof(*s));

	tails_mode = 2; /* this test drains by hand */
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	snprintf(cut, sizeof(cut), "%s/cut.trace", dir);
	w = open_writer(path, "t", CHUNK, 0);
	unit_rng_seed(&g, unit_seed());
	while (n < 400 && switches < 2) {
		write_stored(w, &g, &s[n], buf, 600);
		n++;
		if (!drain_due)
			continue;
		/* a tail was left full: a few more events into the other one, then the drain */
		drain_due = 0;
		switches++;
		for (i = 0; i < 3; i++, n++) {
			write_stored(w, &g, &s[n], buf, 40);
		}
		ck_assert_int_eq(drain_due, 0);
		nb = file_size(path); /* the full tail not drained: no chunk for it yet */
		ck_assert_uint_eq(read_check(path, s, n, &damage), n);
		ck_assert_int_eq(damage, 0);
		ck_assert_int_eq(trace_writer_claim(w), 1);
		ck_assert_int_eq(trace_writer_claim(w), 0); /* claimed once */
		trace_writer_drain(w);
		after = slurp(path, &na);
		ck_assert_uint_gt(na, nb);
		for (i = nb; i <= na; i++) {
			spit(cut, after, i);
			ck_assert_msg(read_check(cut, s, n, &damage) == n, "cut at %zu of %zu-%zu", i,
			              nb, na);
			ck_assert_int_eq(damage, 0);
		}
		free(after);
	}
	ck_assert_int_eq(switches, 2); /* the second switch went back to the first tail */
	trace_writer_abandon(w);
	ck_assert_uint_eq(read_check(path, s, n, &damage), n);
	ck_assert_int_eq(damage, 0);
	free_stored(s, 400);
	unit_rmdir(dir);
}
END_TEST

/* Two tails: the second one takes no disk until the first is full (most processes of a
 * session never fill one); it is reserved at the first switch. */
START_TEST(second_tail_reserved_at_first_switch)
{
	char dir[4096], path[4200];
	struct trace_writer *w;
	struct trace_event e;
	struct stat st;
	uint8_t *b;
	size_t nb, chunks_off, tail_size, n = 0;

	tails_mode = 1;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/h.trace", dir);
	w = open_writer(path, "h", CHUNK, 0);
	memset(&e, 0, sizeof(e));
	e.kind = TRACE_EV_SEND;
	e.channel = 1;
	e.fd = 5;
	e.result = 10;
	e.len = 10;
	ck_assert_int_eq(trace_writer_event(w, &e), 0);
	b = slurp(path, &nb);
	tail_size = (size_t)get_le(b + 20, 4);
	chunks_off = (size_t)get_le(b + 32, 8);
	ck_assert_uint_eq(nb, chunks_off);
	free(b);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_msg((size_t)st.st_blocks * 512 <= chunks_off - tail_size,
	              "%zu bytes allocated, the second tail's %zu included",
	              (size_t)st.st_blocks * 512, tail_size);
	while (!drain_due) {
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
		ck_assert_uint_lt(++n, 100000);
	}
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_ge((size_t)st.st_blocks * 512, chunks_off);
	after_write(w);
	ck_assert_int_eq(trace_writer_close(w), 0);
	unit_rmdir(dir);
}
END_TEST

/* Two tails: a drain whose write fails (the file size limit, as a full disk would) stops the
 * writer at its next switch, with the system's reason; every event the writer took is in
 * the file (the full tail the drain could not write, then the other), and the trace says
 * where and why it stopped. */
START_TEST(drain_failure_stops_with_tails_kept)
{
	char dir[4096], path[4200];
	int fds[2], status;
	pid_t pid;
	uint64_t accepted = 0, last = 0;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	size_t got = 0;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f.trace", dir);
	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct trace_writer *w;
		struct trace_event e;
		struct rlimit rl;
		struct unit_rng g;
		uint8_t buf[600];
		uint64_t n = 0;

		tails_mode = 1;
		w = open_writer(path, "f", CHUNK, 0);
		/* room for the header, both tails and about one chunk of incompressible bytes */
		rl.rlim_cur = rl.rlim_max = (rlim_t)file_size(path) + CHUNK + 2048;
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(2);
		unit_rng_seed(&g, 5);
		memset(&e, 0, sizeof(e));
		e.kind = TRACE_EV_INPUT;
		e.fd = 5;
		e.channel = 1;
		e.data = buf;
		e.data_len = sizeof(buf);
		e.result = sizeof(buf);
		e.len = sizeof(buf);
		for (int i = 0; i < 200; i++) {
			for (size_t k = 0; k < sizeof(buf); k++)
				buf[k] = (uint8_t)unit_rng_next(&g);
			if (trace_writer_event(w, &e) != 0)
				break;
			n++;
			after_write(w);
		}
		if (write(fds[1], &n, sizeof(n)) != (ssize_t)sizeof(n))
			_exit(3);
		_exit(0); /* dead: the writer neither closed nor abandoned */
	}
	close(fds[1]);
	ck_assert_int_eq(read(fds[0], &accepted, sizeof(accepted)), (ssize_t)sizeof(accepted));
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	ck_assert_uint_lt(accepted, 200); /* it did stop */
	ck_assert_uint_gt(accepted, (uint64_t)(2 * CHUNK / 600)); /* after a switch or two */
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &ev) > 0)
		got++;
	ck_assert_uint_eq(got, accepted);
	ck_assert_int_eq(trace_reader_stopped(r, &last), EFBIG);
	ck_assert_uint_eq(last, accepted);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

/* Two tails: a drain that a wait gives up on (its thread stopped: here, a claim never
 * drained, the bound 50 ms) stops the trace with ETIMEDOUT; the writer abandoned meanwhile is
 * freed by the drain when it ends, never under it; the file reads back to the stop. */
START_TEST(stuck_drain_abandoned_then_freed)
{
	char dir[4096], path[4200];
	struct trace_process p;
	struct trace_writer_options o = { CHUNK, 0, 0, 0, &drain_due, 50 };
	struct trace_writer *w = NULL;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event e, ev;
	uint64_t n = 0, last = 0;
	size_t got = 0;
	int rc = 0;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/s.trace", dir);
	fill_process(&p, "s");
	drain_due = 0;
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d), 0);
	memset(&e, 0, sizeof(e));
	e.kind = TRACE_EV_SEND;
	e.fd = 5;
	e.channel = 1;
	e.result = 10;
	e.len = 10;
	while (!drain_due) {
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
		n++;
	}
	drain_due = 0;
	ck_assert_int_eq(trace_writer_claim(w), 1); /* claimed: the drain "runs" from here on */
	for (int i = 0; i < 100000 && rc == 0; i++)
		if ((rc = trace_writer_event(w, &e)) == 0)
			n++;
	ck_assert_int_ne(rc, 0); /* the second tail full: the wait gave up */
	trace_writer_abandon(w); /* as the recorder does after a failed event */
	trace_writer_drain(w);   /* the drain ends, and frees the writer */
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &ev) > 0)
		got++;
	ck_assert_uint_eq(got, n);
	ck_assert_int_eq(trace_reader_stopped(r, &last), ETIMEDOUT);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

/* Two tails: death between the stores of a switch (the full tail's `committed` raised to its
 * end, the other tail's header reset: committed, events, then seq).  Each state a death can
 * leave, made from the files before and after the switch, reads back every event but, at
 * most, the one being written, and no damage. */
START_TEST(tails_switch_and_death_at_every_step)
{
	char dir[4096], path[4200], mixp[4300];
	struct trace_writer *w;
	struct unit_rng g;
	uint8_t *prev = NULL, *cur, buf[700];
	size_t np = 0, nc, n = 0, tail_off, tail_size;
	int damage, switches = 0;
	struct stored *s = calloc(2000, sizeof(*s));

	tails_mode = 1;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/t.trace", dir);
	snprintf(mixp, sizeof(mixp), "%s/mix.trace", dir);
	w = open_writer(path, "t", CHUNK, 0);
	unit_rng_seed(&g, unit_seed() + 7);
	while (n < 2000 && switches < 4) {
		prev = slurp(path, &np);
		write_stored(w, &g, &s[n], buf, 600);
		n++;
		if (drain_due) {
			size_t fresh, full;
			uint8_t *m;

			switches++;
			cur = slurp(path, &nc); /* the switch made, no drain yet: no new chunk */
			ck_assert_uint_eq(nc, np);
			ck_assert_uint_eq(get_le(cur + 12, 4) & 1, 1); /* flags: two tails */
			ck_assert_uint_eq(get_le(cur + 8, 2), 3);     /* version 3 */
			tail_size = (size_t)get_le(cur + 20, 4);
			tail_off = (size_t)get_le(cur + 24, 8);
			/* the fresh tail has the highest seq now */
			fresh = get_le(cur + tail_off + 8, 8) > get_le(cur + tail_off + tail_size + 8, 8) &&
			                get_le(cur + tail_off + 8, 8) != UINT64_MAX ?
			        tail_off : tail_off + tail_size;
			full = fresh == tail_off ? tail_off + tail_size : tail_off;
			m = malloc(nc);
			for (int step = 0; step < 4; step++) {
				memcpy(m, cur, nc);
				if (step <= 2) /* the fresh tail's seq not stored yet */
					memcpy(m + fresh + 8, prev + fresh + 8, 8);
				if (step <= 1) /* nor its events */
					memcpy(m + fresh + 16, prev + fresh + 16, 8);
				if (step == 0) { /* nothing stored yet: the full tail's committed as before */
					memcpy(m + fresh + 24, prev + fresh + 24, 4);
					memcpy(m + full + 24, prev + full + 24, 4);
				}
				if (step == 1 || step == 2) /* committed reset first */
					put_le(m + fresh + 24, 0, 4);
				spit(mixp, m, nc);
				size_t got = read_check(mixp, s, n, &damage);

				ck_assert_msg(got == n || got == n - 1, "switch %d, step %d: %zu of %zu events",
				              switches, step, got, n);
				if (step == 3)
					ck_assert_uint_eq(got, n);
				ck_assert_int_eq(damage, 0);
			}
			free(m);
			free(cur);
			after_write(w);
		}
		free(prev);
	}
	ck_assert_int_eq(switches, 4);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_uint_eq(read_check(path, s, n, &damage), n);
	ck_assert_int_eq(damage, 0);
	free_stored(s, 2000);
	unit_rmdir(dir);
}
END_TEST

/* Sealing before an exec: a successful exec leaves a whole, closed file; a failed one goes
 * on writing into the same file, which is open again until it is closed or sealed. */
START_TEST(seal_then_exec_or_not)
{
	char dir[4096], path[4200];
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event e, out;
	int round;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	for (round = 0; round < 3; round++) {
		uint64_t n = 0;

		snprintf(path, sizeof(path), "%s/s%d.trace", dir, round);
		w = open_writer(path, "s", CHUNK, 0);
		memset(&e, 0, sizeof(e));
		e.kind = TRACE_EV_EXEC;
		e.fd = -1;
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
		ck_assert_int_eq(trace_writer_seal(w), 0);
		if (round == 0) {
			trace_writer_abandon(w); /* the exec succeeded: the image is gone */
		} else {
			e.result = -1;
			e.err = ENOENT;
			ck_assert_int_eq(trace_writer_event(w, &e), 0);
			if (round == 1)
				ck_assert_int_eq(trace_writer_close(w), 0);
			else
				trace_writer_abandon(w); /* died after the failed exec, unsealed */
		}
		ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
		while (trace_reader_next(r, &out) > 0)
			n++;
		ck_assert_uint_eq(n, round == 0 ? 1 : 2);
		ck_assert_int_eq(trace_reader_closed(r), round != 2);
		ck_assert_uint_eq(trace_reader_tail_events(r), round == 2 ? 1 : 0);
		ck_assert_int_eq(trace_reader_damage(r, &d), 0);
		trace_reader_close(r);
	}
	unit_rmdir(dir);
}
END_TEST

/* A closed file cut at every byte offset: never a wrong event, never a crash; a cut inside
 * the chunks reports damage and keeps the whole chunks before it. */
START_TEST(truncation_at_every_offset)
{
	char dir[4096], path[4200], cut[4300];
	const size_t n = 120;
	struct stored *s;
	uint8_t *b;
	size_t nb, i, best = 0;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f.trace", dir);
	snprintf(cut, sizeof(cut), "%s/cut.trace", dir);
	max_data = 600; /* a small file: a few chunks, some records spanning them */
	s = write_random(path, unit_seed(), n, CHUNK, 1);
	max_data = 3 * CHUNK;
	b = slurp(path, &nb);
	spit(cut, b, nb);
	best = n;
	/* from the longest cut down, shrinking one file in place */
	for (i = nb; i-- > 0;) {
		int damage;
		size_t got;

		if (truncate(cut, (off_t)i) != 0)
			ck_abort_msg("truncate: %s", strerror(errno));
		got = read_check(cut, s, n, &damage);
		if (damage == 0)
			ck_abort_msg("cut at %zu of %zu not reported", i, nb);
		if (got > best) /* a shorter prefix never reads more events */
			ck_abort_msg("cut at %zu reads %zu events, longer cut read %zu", i, got, best);
		best = got;
	}
	free(b);
	free_stored(s, n);
	unit_rmdir(dir);
}
END_TEST

START_TEST(flipped_bytes_detected)
{
	char dir[4096], path[4200], bad[4300];
	const size_t n = 200;
	struct stored *s;
	uint8_t *b;
	size_t nb, i, chunks_off = 0, header_end;
	struct unit_rng g;

	tails_mode = _i;
	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/f.trace", dir);
	snprintf(bad, sizeof(bad), "%s/bad.trace", dir);
	s = write_random(path, unit_seed() + 99, n, CHUNK, 1);
	b = slurp(path, &nb);
	for (i = 0; i < 8; i++)
		chunks_off |= (size_t)b[32 + i] << (8 * i);
	header_end = 64 + (b[16] | b[17] << 8);
	spit(bad, b, nb);
	unit_rng_seed(&g, unit_seed());
	for (i = 0; i < nb; i += 1 + unit_rng_below(&g, 7)) {
		int damage;
		size_t got;
		uint8_t keep = b[i];

		if (i >= header_end && i < chunks_off)
			continue; /* padding and the mutable tail region: no checksum by design */
		b[i] ^= (uint8_t)(1u << unit_rng_below(&g, 8));
		poke(bad, i, b[i]);
		got = read_check(bad, s, n, &damage); /* every event returned is right */
		if (damage == 0)
			ck_abort_msg("flip at %zu (%zu events read) not detected", i, got);
		b[i] = keep;
		poke(bad, i, keep);
	}
	free(b);
	free_stored(s, n);
	unit_rmdir(dir);
}
END_TEST

START_TEST(garbage_is_not_a_trace)
{
	char dir[4096], path[4200];
	struct trace_reader *r;
	struct trace_diag d;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/g.trace", dir);
	spit(path, (const uint8_t *)"hello, world, this is not a trace file at all....................."
	                            "..............", 80);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), TRACE_EMAGIC);
	ck_assert_ptr_nonnull(strstr(d.file, "g.trace"));
	ck_assert_int_eq(trace_reader_open("/nonexistent/x.trace", &r, &d), TRACE_ENOENT);
	unit_rmdir(dir);
}
END_TEST

START_TEST(disk_budget_drops_oldest)
{
	char dir[4096], path[4200];
	const size_t n = 20000;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event e, out;
	struct stat st;
	struct unit_rng g;
	size_t i, got = 0;
	uint64_t first = 0, last = 0;
	static uint8_t noise[64];

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/b.trace", dir);
	w = open_writer(path, "b", CHUNK, 64 * 1024);
	unit_rng_seed(&g, unit_seed());
	for (i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < sizeof(noise); j++)
			noise[j] = (uint8_t)unit_rng_next(&g); /* incompressible: many chunks */
		memset(&e, 0, sizeof(e));
		e.kind = TRACE_EV_INPUT;
		e.fd = 0;
		e.result = (int64_t)i;
		e.len = i;
		e.data = noise;
		e.data_len = sizeof(noise);
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_msg((uint64_t)st.st_blocks * 512 < 64 * 1024 + 3 * 65536,
	              "budget not kept: %lld bytes allocated", (long long)st.st_blocks * 512);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &out) > 0) {
		if (!got)
			first = out.index;
		ck_assert_uint_eq(out.index, last ? last + 1 : out.index);
		ck_assert_int_eq(out.result, (int64_t)out.index - 1); /* the right events */
		last = out.index;
		got++;
	}
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_eq(last, n);
	ck_assert_uint_gt(first, 1);
	ck_assert_uint_eq(trace_reader_dropped(r), first - 1);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(session_groups_segments)
{
	char dir[4096], path[4400], name[256];
	const char *names[] = { "b", "a", "a.1", "a" };
	uint32_t segs[] = { 0, 1, 0, 0 };
	struct trace_session *s;
	struct trace_diag d;
	const char *const *paths;
	size_t i;

	unit_tmpdir(dir, sizeof(dir));
	for (i = 0; i < 4; i++) {
		struct trace_process p;
		struct trace_writer *w;

		fill_process(&p, names[i]);
		p.segment = segs[i];
		ck_assert_int_eq(trace_file_name(names[i], segs[i], name, sizeof(name)), 0);
		snprintf(path, sizeof(path), "%s/%s", dir, name);
		ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), 0);
		ck_assert_int_eq(trace_writer_close(w), 0);
	}
	ck_assert_int_eq(trace_session_open(dir, &s, &d), 0);
	ck_assert_uint_eq(trace_session_count(s), 3);
	ck_assert_str_eq(trace_session_name(s, 0), "a");
	ck_assert_str_eq(trace_session_name(s, 1), "a.1");
	ck_assert_str_eq(trace_session_name(s, 2), "b");
	ck_assert_uint_eq(trace_session_files(s, 0, &paths), 2);
	ck_assert_ptr_nonnull(strstr(paths[0], "/a.trace"));
	ck_assert_ptr_nonnull(strstr(paths[1], "/a@1.trace"));
	trace_session_close(s);
	ck_assert_int_eq(trace_file_name("x/y", 0, name, sizeof(name)), TRACE_EINVAL);
	/* writers refuse to overwrite */
	{
		struct trace_process p;
		struct trace_writer *w;

		fill_process(&p, "b");
		snprintf(path, sizeof(path), "%s/b.trace", dir);
		ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d), TRACE_EIO);
		ck_assert_int_eq(d.sys_errno, EEXIST);
	}
	unit_rmdir(dir);
	unit_tmpdir(dir, sizeof(dir));
	ck_assert_int_eq(trace_session_open(dir, &s, &d), TRACE_ENOENT);
	unit_rmdir(dir);
}
END_TEST

/* --- enum trace_call: numbers stored on disk ------------------------------------------- */

#ifndef TRACE_FORMAT_MD
#error "TRACE_FORMAT_MD (the path of schemas/trace-format.md) must be defined by the build"
#endif

/* Every member by name, so that a row of the schema's table can be checked against the
 * value the compiler gives the member it names. */
#define CALL(x) { x, #x }
static const struct {
	uint32_t value;
	const char *member;
} call_members[] = {
	CALL(TRACE_CALL_NONE),
	CALL(TRACE_CALL_SEND),
	CALL(TRACE_CALL_SENDTO),
	CALL(TRACE_CALL_SENDMSG),
	CALL(TRACE_CALL_WRITE),
	CALL(TRACE_CALL_WRITEV),
	CALL(TRACE_CALL_RECV),
	CALL(TRACE_CALL_RECVFROM),
	CALL(TRACE_CALL_RECVMSG),
	CALL(TRACE_CALL_READ),
	CALL(TRACE_CALL_READV),
	CALL(TRACE_CALL_SOCKET),
	CALL(TRACE_CALL_SOCKETPAIR),
	CALL(TRACE_CALL_PIPE),
	CALL(TRACE_CALL_PIPE2),
	CALL(TRACE_CALL_BIND),
	CALL(TRACE_CALL_LISTEN),
	CALL(TRACE_CALL_CONNECT),
	CALL(TRACE_CALL_ACCEPT),
	CALL(TRACE_CALL_ACCEPT4),
	CALL(TRACE_CALL_SHUTDOWN),
	CALL(TRACE_CALL_CLOSE),
	CALL(TRACE_CALL_DUP),
	CALL(TRACE_CALL_DUP2),
	CALL(TRACE_CALL_DUP3),
	CALL(TRACE_CALL_FCNTL),
	CALL(TRACE_CALL_FORK),
	CALL(TRACE_CALL_EXECVE),
	CALL(TRACE_CALL_EXIT),
	CALL(TRACE_CALL_POLL),
	CALL(TRACE_CALL_PPOLL),
	CALL(TRACE_CALL_SELECT),
	CALL(TRACE_CALL_PSELECT),
	CALL(TRACE_CALL_EPOLL_WAIT),
	CALL(TRACE_CALL_EPOLL_PWAIT),
	CALL(TRACE_CALL_CLOCK_GETTIME),
	CALL(TRACE_CALL_GETTIMEOFDAY),
	CALL(TRACE_CALL_TIME),
	CALL(TRACE_CALL_GETRANDOM),
	CALL(TRACE_CALL_GETPID),
	CALL(TRACE_CALL_GETPPID),
	CALL(TRACE_CALL_PTHREAD_CREATE),
	CALL(TRACE_CALL_MARK),
	CALL(TRACE_CALL_SIGNAL),
	CALL(TRACE_CALL_SYSCALL),
	CALL(TRACE_CALL_SENDFILE),
	CALL(TRACE_CALL_SPLICE),
	CALL(TRACE_CALL_COPY_FILE_RANGE),
	CALL(TRACE_CALL_TEE),
	CALL(TRACE_CALL_VMSPLICE),
	CALL(TRACE_CALL_STDIO),
	CALL(TRACE_CALL_GETENTROPY),
	CALL(TRACE_CALL_WAITPID),
	CALL(TRACE_CALL_WAIT),
	CALL(TRACE_CALL_WAIT3),
	CALL(TRACE_CALL_WAIT4),
	CALL(TRACE_CALL_WAITID),
	CALL(TRACE_CALL_MUTEX_LOCK),
	CALL(TRACE_CALL_MUTEX_TRYLOCK),
	CALL(TRACE_CALL_MUTEX_TIMEDLOCK),
	CALL(TRACE_CALL_MUTEX_UNLOCK),
	CALL(TRACE_CALL_RWLOCK_RDLOCK),
	CALL(TRACE_CALL_RWLOCK_TRYRDLOCK),
	CALL(TRACE_CALL_RWLOCK_TIMEDRDLOCK),
	CALL(TRACE_CALL_RWLOCK_WRLOCK),
	CALL(TRACE_CALL_RWLOCK_TRYWRLOCK),
	CALL(TRACE_CALL_RWLOCK_TIMEDWRLOCK),
	CALL(TRACE_CALL_RWLOCK_UNLOCK),
	CALL(TRACE_CALL_COND_WAIT),
	CALL(TRACE_CALL_COND_TIMEDWAIT),
	CALL(TRACE_CALL_COND_WAKE),
	CALL(TRACE_CALL_COND_SIGNAL),
	CALL(TRACE_CALL_COND_BROADCAST),
	CALL(TRACE_CALL_SEM_WAIT),
	CALL(TRACE_CALL_SEM_TRYWAIT),
	CALL(TRACE_CALL_SEM_TIMEDWAIT),
	CALL(TRACE_CALL_SEM_POST),
	CALL(TRACE_CALL_BARRIER_ARRIVE),
	CALL(TRACE_CALL_BARRIER_LEAVE),
	CALL(TRACE_CALL_SPIN_LOCK),
	CALL(TRACE_CALL_SPIN_TRYLOCK),
	CALL(TRACE_CALL_SPIN_UNLOCK),
	CALL(TRACE_CALL_THREAD_EXIT),
	CALL(TRACE_CALL_PTHREAD_JOIN),
	CALL(TRACE_CALL_GETTID),
	CALL(TRACE_CALL_PTHREAD_ONCE),
	CALL(TRACE_CALL_FUTEX_WAIT),
	CALL(TRACE_CALL_FUTEX_WAKE),
	CALL(TRACE_CALL_KILL),
	CALL(TRACE_CALL_TGKILL),
	CALL(TRACE_CALL_SIGQUEUE),
	CALL(TRACE_CALL_ALARM),
	CALL(TRACE_CALL_SETITIMER),
	CALL(TRACE_CALL_HANDLER),
	CALL(TRACE_CALL_SIGWAIT),
	CALL(TRACE_CALL_SIGWAITINFO),
	CALL(TRACE_CALL_SIGTIMEDWAIT),
	CALL(TRACE_CALL_TIMERFD_CREATE),
	CALL(TRACE_CALL_TIMERFD_SETTIME),
	CALL(TRACE_CALL_TIMERFD_GETTIME),
	CALL(TRACE_CALL_SIGNALFD),
	CALL(TRACE_CALL_TIMER_CREATE),
	CALL(TRACE_CALL_TIMER_SETTIME),
	CALL(TRACE_CALL_TIMER_GETTIME),
	CALL(TRACE_CALL_TIMER_GETOVERRUN),
	CALL(TRACE_CALL_TIMER_DELETE),
	CALL(TRACE_CALL_CLONE),
	CALL(TRACE_CALL_CLONE3),
	CALL(TRACE_CALL_GETLOADAVG),
	CALL(TRACE_CALL_SYSINFO),
	CALL(TRACE_CALL_GETRUSAGE),
	CALL(TRACE_CALL_TIMES),
	CALL(TRACE_CALL_CLOCK),
	CALL(TRACE_CALL_UNAME),
	CALL(TRACE_CALL_GETHOSTNAME),
	CALL(TRACE_CALL_SYSCONF),
	CALL(TRACE_CALL_GETITIMER),
	CALL(TRACE_CALL_SCHED_GETAFFINITY),
	CALL(TRACE_CALL_PRCTL),
	CALL(TRACE_CALL_SECCOMP),
	CALL(TRACE_CALL_OPEN),
	CALL(TRACE_CALL_EARLY_RANDOM),
	CALL(TRACE_CALL_GETSOCKOPT),
	CALL(TRACE_CALL_GETIFADDRS),
	CALL(TRACE_CALL_IF_NAMEINDEX),
	CALL(TRACE_CALL_IF_NAMETOINDEX),
	CALL(TRACE_CALL_IF_INDEXTONAME),
	CALL(TRACE_CALL_STATFS),
	CALL(TRACE_CALL_STATVFS),
	CALL(TRACE_CALL_ARC4RANDOM),
	CALL(TRACE_CALL_ARC4RANDOM_BUF),
	CALL(TRACE_CALL_EPOLL_CREATE),
};
#undef CALL
#define NMEMBERS (sizeof(call_members) / sizeof(call_members[0]))

/* Values already in files on disk: changing one would misread every recorded trace. */
START_TEST(call_numbers_are_pinned)
{
	ck_assert_int_eq(TRACE_CALL_NONE, 0);
	ck_assert_int_eq(TRACE_CALL_SEND, 1);
	ck_assert_int_eq(TRACE_CALL_RECV, 6);
	ck_assert_int_eq(TRACE_CALL_READ, 9);
	ck_assert_int_eq(TRACE_CALL_ACCEPT, 18);
	ck_assert_int_eq(TRACE_CALL_CLOSE, 21);
	ck_assert_int_eq(TRACE_CALL_FORK, 26);
	ck_assert_int_eq(TRACE_CALL_POLL, 29);
	ck_assert_int_eq(TRACE_CALL_EPOLL_WAIT, 33);
	ck_assert_int_eq(TRACE_CALL_CLOCK_GETTIME, 35);
	ck_assert_int_eq(TRACE_CALL_MARK, 42);
	ck_assert_int_eq(TRACE_CALL_STDIO, 50);
	ck_assert_int_eq(TRACE_CALL_GETENTROPY, 51);
	ck_assert_int_eq(TRACE_CALL_WAITPID, 52);
	ck_assert_int_eq(TRACE_CALL_WAITID, 56);
	ck_assert_int_eq(TRACE_EV_WAIT, 23);
	ck_assert_str_eq(trace_call_name(TRACE_CALL_MARK), "encore_mark");
	ck_assert_int_eq(TRACE_CALL_GETSOCKOPT, 135);
	ck_assert_int_eq(TRACE_CALL_GETIFADDRS, 136);
	ck_assert_int_eq(TRACE_CALL_IF_INDEXTONAME, 139);
	ck_assert_int_eq(TRACE_CALL_STATFS, 140);
	ck_assert_int_eq(TRACE_CALL_STATVFS, 141);
	ck_assert_int_eq(TRACE_CALL_ARC4RANDOM, 142);
	ck_assert_int_eq(TRACE_CALL_ARC4RANDOM_BUF, 143);
	ck_assert_int_eq(TRACE_CALL_EPOLL_CREATE, 144);
	ck_assert_int_eq(TRACE_CALL_GETLOADAVG, 110);
	ck_assert_int_eq(TRACE_CALL_SCHED_GETAFFINITY, 119);
	ck_assert_str_eq(trace_call_name(TRACE_CALL_MAX), "unknown");
	ck_assert_int_eq(TRACE_CALL_KILL, 90);
	ck_assert_int_eq(TRACE_EV_HANDLER, 28);
	/* the list above names every member once, in order; a number between two members (a
	 * range another part took) has no name */
	ck_assert_uint_eq(call_members[NMEMBERS - 1].value, TRACE_CALL_MAX - 1);
	for (uint32_t i = 0, m = 0; i < TRACE_CALL_MAX; i++) {
		if (call_members[m].value == i) {
			ck_assert_str_ne(trace_call_name(i), "unknown");
			m++;
		} else {
			ck_assert_uint_gt(call_members[m].value, i);
			ck_assert_str_eq(trace_call_name(i), "unknown");
		}
	}
}
END_TEST

/* The next '|'-separated cell of a markdown table row, trimmed of blanks and backquotes;
 * *p moves past it. */
static char *md_cell(char **p)
{
	char *start = *p, *end;

	if (*start == '|')
		start++;
	end = start;
	while (*end && *end != '|' && *end != '\n')
		end++;
	*p = *end ? end + 1 : end;
	while (start < end && (*start == ' ' || *start == '`'))
		start++;
	while (end > start && (end[-1] == ' ' || end[-1] == '`'))
		end--;
	*end = '\0';
	return start;
}

/* The table of section "Calls" in schemas/trace-format.md: one row per value, in order, each
 * naming the member with that value and the name trace_call_name gives it. */
START_TEST(call_table_matches_schema)
{
	FILE *f = fopen(TRACE_FORMAT_MD, "r");
	char line[1024];
	int in_section = 0;
	uint32_t rows = 0;

	ck_assert_msg(f != NULL, "cannot open %s", TRACE_FORMAT_MD);
	while (fgets(line, sizeof(line), f)) {
		char *p = line, *value, *name, *member, *end;
		unsigned long v;

		if (!strncmp(line, "## ", 3)) {
			if (in_section)
				break;
			in_section = !strncmp(line, "## Calls", 8);
			continue;
		}
		if (!in_section || line[0] != '|')
			continue;
		value = md_cell(&p);
		name = md_cell(&p);
		member = md_cell(&p);
		v = strtoul(value, &end, 10);
		if (end == value || *end)
			continue; /* the header and separator rows */
		ck_assert_msg(rows < NMEMBERS && v == call_members[rows].value,
		              "trace-format.md, Calls: row %u has value %lu", rows, v);
		ck_assert_msg(v < TRACE_CALL_MAX, "trace-format.md lists value %lu, enum ends at %d",
		              v, TRACE_CALL_MAX);
		ck_assert_str_eq(member, call_members[rows].member);
		ck_assert_str_eq(name, trace_call_name((uint32_t)v));
		rows++;
	}
	fclose(f);
	ck_assert_msg(in_section, "trace-format.md has no section \"## Calls\"");
	ck_assert_msg(rows == NMEMBERS, "trace-format.md lists %u calls, the enum %zu", rows,
	              NMEMBERS);
}
END_TEST

/* An event defining channel `id` with endpoint ep (kind SOCKET, CONNECT, PIPE...). */
static void define_event(struct trace_writer *w, uint32_t kind, uint32_t id,
                         const struct trace_endpoint *ep, int64_t a0, int64_t a1)
{
	static uint8_t buf[TRACE_ENDPOINT_MAX];
	struct trace_event e;
	int n = trace_endpoint_encode(ep, buf, sizeof(buf));

	ck_assert_int_gt(n, 0);
	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.fd = 5;
	e.channel = kind == TRACE_EV_PIPE ? 0 : id;
	e.data = buf;
	e.data_len = (uint32_t)n;
	if (kind == TRACE_EV_PIPE) {
		e.naux = 2;
		e.aux[0] = a0;
		e.aux[1] = a1;
	}
	ck_assert_int_eq(trace_writer_event(w, &e), 0);
}

static const struct trace_chan_def *kept(const struct trace_chan_def *v, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].channel == id)
			return &v[i];
	return NULL;
}

/* A read of SO_ERROR is told from a connect by its call (getsockopt), or in traces of older
 * recorders, which logged it with call connect, by aux[0] = SO_ERROR; nothing else is one. */
START_TEST(so_error_read_both_forms)
{
	static const int64_t so_error[2] = { 4, 111 }, other[2] = { 3, 111 };
	static const struct {
		uint32_t kind, call, naux;
		const int64_t *aux;
		int want;
	} cases[] = {
		{ TRACE_EV_CONNECT, TRACE_CALL_GETSOCKOPT, 2, so_error, 1 },
		{ TRACE_EV_CONNECT, TRACE_CALL_CONNECT, 2, so_error, 1 },   /* older recorders */
		{ TRACE_EV_CONNECT, TRACE_CALL_CONNECT, 0, so_error, 0 },   /* a connect */
		{ TRACE_EV_CONNECT, TRACE_CALL_CONNECT, 1, so_error, 0 },
		{ TRACE_EV_CONNECT, TRACE_CALL_GETSOCKOPT, 2, other, 0 },   /* another option */
		{ TRACE_EV_SOCKET, TRACE_CALL_SOCKET, 2, so_error, 0 },
		{ TRACE_EV_CONNECT, TRACE_CALL_ACCEPT, 2, so_error, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(trace_is_so_error_read(cases[i].kind, cases[i].call, cases[i].naux,
		                                     cases[i].aux) == cases[i].want, "case %zu", i);
	ck_assert_str_eq(trace_call_name(TRACE_CALL_GETSOCKOPT), "getsockopt");
}
END_TEST


/* After the budget dropped the chunks that defined the channels and moved their first bytes,
 * the checkpoint gives the kept events their true offsets and the dropped definitions:
 * inherited counts, a socketpair's two ends, a TCP socket's merged addresses; a channel
 * closed before the drop is not described. */
START_TEST(disk_budget_keeps_channels)
{
	char dir[4096], path[4200];
	enum { N = 20000 };
	static uint64_t want[N + 64]; /* expected offset by event index */
	static uint8_t noise[64];
	uint64_t off[8][2] = { { 0 } };
	struct trace_endpoint sp, tcp, tcp2;
	struct sockaddr_in a = { .sin_family = AF_INET };
	const struct trace_chan_def *defs, *c;
	const struct trace_inherit *inh;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event e, out;
	struct unit_rng g;
	uint64_t idx = 0, checked = 0;
	size_t nd, ni, i;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/k.trace", dir);
	w = open_writer(path, "k", CHUNK, 64 * 1024);
	unit_rng_seed(&g, unit_seed());
	/* channel 7 inherited with bytes already moved */
	ck_assert_int_eq(trace_writer_inherit(w, 7, 100, 50), 0);
	off[7][0] = 100;
	off[7][1] = 50;
	/* a socketpair: ends 1 and 2 */
	memset(&sp, 0, sizeof(sp));
	sp.type = TRACE_CHAN_SOCKETPAIR;
	sp.inode = 11;
	sp.peer_inode = 12;
	define_event(w, TRACE_EV_PIPE, 0, &sp, 1, 2);
	idx++;
	/* a TCP socket: SOCKET, then CONNECT knows both addresses */
	memset(&tcp, 0, sizeof(tcp));
	tcp.type = TRACE_CHAN_TCP;
	tcp.inode = 33;
	define_event(w, TRACE_EV_SOCKET, 3, &tcp, 0, 0);
	idx++;
	tcp2 = tcp;
	tcp2.inode = 0;
	a.sin_port = htons(4000);
	memcpy(tcp2.local, &a, sizeof(a));
	tcp2.local_len = sizeof(a);
	a.sin_port = htons(5000);
	memcpy(tcp2.peer, &a, sizeof(a));
	tcp2.peer_len = sizeof(a);
	define_event(w, TRACE_EV_CONNECT, 3, &tcp2, 0, 0);
	idx++;
	/* channel 4: made and closed before anything is dropped */
	define_event(w, TRACE_EV_SOCKET, 4, &tcp, 0, 0);
	idx++;
	memset(&e, 0, sizeof(e));
	e.kind = TRACE_EV_CLOSE;
	e.channel = 4;
	ck_assert_int_eq(trace_writer_event(w, &e), 0);
	idx++;
	for (i = 0; i < N; i++) {
		static const uint32_t chans[] = { 1, 2, 3, 7 };
		size_t j;

		memset(&e, 0, sizeof(e));
		if (i % 3) {
			for (j = 0; j < sizeof(noise); j++)
				noise[j] = (uint8_t)unit_rng_next(&g); /* incompressible: many chunks */
			e.kind = TRACE_EV_INPUT;
			e.result = 64;
			e.data = noise;
			e.data_len = sizeof(noise);
		} else {
			uint32_t ch = chans[unit_rng_below(&g, 4)];
			int in = (int)unit_rng_below(&g, 2);

			e.kind = in ? TRACE_EV_RECV : TRACE_EV_SEND;
			e.channel = ch;
			e.result = unit_rng_below(&g, 5) == 0 ? -1 : (int64_t)unit_rng_below(&g, 3000);
			e.flags = unit_rng_below(&g, 7) == 0 ? TRACE_FL_PEEK : 0;
			want[idx + 1] = off[ch][in];
			if (e.result > 0 && !(e.flags & TRACE_FL_PEEK))
				off[ch][in] += (uint64_t)e.result;
		}
		ck_assert_int_eq(trace_writer_event(w, &e), 0);
		idx++;
	}
	ck_assert_int_eq(trace_writer_close(w), 0);

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &out) > 0) {
		ck_assert_uint_le(out.index, idx);
		if (out.kind == TRACE_EV_SEND || out.kind == TRACE_EV_RECV) {
			if (out.offset != want[out.index])
				ck_abort_msg("event %llu (channel %u): offset %llu, recorded at %llu",
				             (unsigned long long)out.index, out.channel,
				             (unsigned long long)out.offset,
				             (unsigned long long)want[out.index]);
			checked++;
		}
	}
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_gt(trace_reader_dropped(r), 5); /* the definitions went */
	ck_assert_uint_gt(checked, 100);
	nd = trace_reader_kept_channels(r, &defs);
	ck_assert_uint_eq(nd, 4);
	ck_assert_ptr_null(kept(defs, nd, 4));
	c = kept(defs, nd, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->has_ep, 1);
	ck_assert_uint_eq(c->pipe_other, 2);
	ck_assert_uint_eq(c->ep.type, TRACE_CHAN_SOCKETPAIR);
	ck_assert_uint_eq(c->ep.inode, 11);
	c = kept(defs, nd, 2);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->pipe_other, 1);
	ck_assert_uint_eq(c->ep.inode, 12);
	ck_assert_uint_eq(c->ep.peer_inode, 11);
	c = kept(defs, nd, 3);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->ep.inode, 33);
	ck_assert_uint_eq(c->ep.local_len, sizeof(a));
	ck_assert_uint_eq(c->ep.peer_len, sizeof(a));
	ck_assert_int_eq(memcmp(c->ep.peer, &a, sizeof(a)), 0);
	c = kept(defs, nd, 7);
	ck_assert_ptr_nonnull(c);
	ck_assert_int_eq(c->inherited, 1);
	ni = trace_reader_inherited(r, &inh);
	ck_assert_uint_eq(ni, 1);
	ck_assert_uint_eq(inh[0].channel, 7);
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

/* --- compact clock values (schemas/trace-format.md, "Clock values") ---------------------- */

/* A clock read's 16 bytes: seconds, then the fraction, as the host lays out the struct. */
static void clock_data(uint8_t *d, int64_t sec, int64_t frac)
{
	memcpy(d, &sec, 8);
	memcpy(d + 8, &frac, 8);
}

/* n events: clock reads of every form (gettimeofday, clock_gettime of several clocks, ids
 * without a compact form, values without one, time()) between sends and incompressible
 * inputs that fill chunks.  Stored in s (data copied), written to w. */
static void write_clocks(struct trace_writer *w, struct unit_rng *g, struct stored *s, size_t n)
{
	static const int64_t clk[] = { 0, 1, 7, 15, 16, -2 };
	int64_t usec = 1700000000000000ll, nsec[6] = { 0 };
	uint8_t d[64];
	size_t i, j;

	for (j = 0; j < 6; j++)
		nsec[j] = (int64_t)unit_rng_below(g, 1ull << 50);
	for (i = 0; i < n; i++) {
		struct trace_event *ev = &s[i].ev;
		uint64_t pick = unit_rng_below(g, 16);

		memset(ev, 0, sizeof(*ev));
		ev->fd = -1;
		ev->kind = TRACE_EV_CLOCK;
		ev->site = 1 + (uint32_t)unit_rng_below(g, 3);
		ev->time_ns = unit_rng_below(g, 16) ? 0 : 5000000000ull + i;
		ev->data = d;
		ev->data_len = 16;
		if (pick < 6) {
			ev->call = TRACE_CALL_GETTIMEOFDAY;
			usec += (int64_t)unit_rng_below(g, 5000);
			clock_data(d, usec / 1000000, usec % 1000000);
		} else if (pick < 12) {
			j = (size_t)unit_rng_below(g, 6);
			ev->call = TRACE_CALL_CLOCK_GETTIME;
			ev->naux = 1;
			ev->aux[0] = clk[j];
			/* mostly forward, sometimes backward (another thread's older reading) */
			nsec[j] += (int64_t)unit_rng_below(g, 100000) - (unit_rng_below(g, 8) ? 0 : 200000);
			if (nsec[j] < 0)
				nsec[j] = 0;
			clock_data(d, nsec[j] / 1000000000, nsec[j] % 1000000000);
		} else if (pick == 12) {
			/* values with no compact form: a fraction out of range, a negative second
			 * count, a short value, a failed call */
			ev->call = unit_rng_below(g, 2) ? TRACE_CALL_GETTIMEOFDAY : TRACE_CALL_CLOCK_GETTIME;
			ev->naux = ev->call == TRACE_CALL_CLOCK_GETTIME;
			switch (unit_rng_below(g, 4)) {
			case 0: clock_data(d, 12, 2000000000); break;
			case 1: clock_data(d, -1, 5); break;
			case 2: ev->data_len = 8; memset(d, 0x5a, 8); break;
			default: ev->result = -1; ev->err = 22; ev->data = NULL; ev->data_len = 0;
			}
		} else if (pick == 13) {
			ev->call = TRACE_CALL_TIME;
			ev->result = usec / 1000000;
			ev->data = NULL;
			ev->data_len = 0;
		} else {
			ev->kind = pick == 14 ? TRACE_EV_SEND : TRACE_EV_INPUT;
			ev->call = TRACE_CALL_SEND;
			ev->fd = 3;
			ev->channel = 1;
			ev->data_len = pick == 14 ? 0 : sizeof(d);
			if (!ev->data_len)
				ev->data = NULL;
			for (j = 0; j < sizeof(d); j++)
				d[j] = (uint8_t)unit_rng_next(g); /* incompressible: many chunks */
			ev->result = ev->len = sizeof(d);
		}
		if (ev->data_len) {
			s[i].data = malloc(ev->data_len);
			memcpy(s[i].data, ev->data, ev->data_len);
			ev->data = s[i].data;
		}
		ck_assert_int_eq(trace_writer_event(w, ev), 0);
	}
}

static uint16_t header_u16(const char *path, long at)
{
	uint8_t b[2] = { 0, 0 };
	FILE *f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, at, SEEK_SET), 0);
	ck_assert_uint_eq(fread(b, 1, 2, f), 2);
	fclose(f);
	return (uint16_t)(b[0] | b[1] << 8);
}

/* Clock values written as deltas (the default) and as plain data (plain_clocks: the version-1
 * format, what older recorders wrote) read back byte for byte, over many chunks; the compact
 * file is a version-2 file and smaller, the plain one a version-1 file. */
START_TEST(clock_values_round_trip)
{
	char dir[4096], path[2][4200];
	const size_t n = 30000;
	struct stat st[2];
	int plain, damage;

	unit_tmpdir(dir, sizeof(dir));
	for (plain = 0; plain < 2; plain++) {
		struct trace_process p;
		struct trace_writer_options o = { CHUNK, 0, 0, plain, NULL, 0 };
		struct trace_writer *w = NULL;
		struct trace_diag d;
		struct stored *s = calloc(n, sizeof(*s));
		struct unit_rng g;

		snprintf(path[plain], sizeof(path[plain]), "%s/c%d.trace", dir, plain);
		fill_process(&p, "clk");
		ck_assert_int_eq(trace_writer_open(AT_FDCWD, path[plain], &p, &o, 0, &w, &d), 0);
		unit_rng_seed(&g, unit_seed());
		write_clocks(w, &g, s, n);
		ck_assert_int_eq(trace_writer_close(w), 0);
		ck_assert_uint_eq(read_check(path[plain], s, n, &damage), n);
		ck_assert_int_eq(damage, 0);
		free_stored(s, n);
		ck_assert_int_eq(stat(path[plain], &st[plain]), 0);
		/* version, min_version */
		ck_assert_uint_eq(header_u16(path[plain], 8), plain ? 1 : 2);
		ck_assert_uint_eq(header_u16(path[plain], 10), plain ? 1 : 2);
	}
	ck_assert_msg(st[0].st_size < st[1].st_size, "compact %lld bytes, plain %lld",
	              (long long)st[0].st_size, (long long)st[1].st_size);
	unit_rmdir(dir);
}
END_TEST

/* A reader that starts past dropped chunks (disk budget) still decodes every clock value it
 * reads: each chunk's first value of a clock is whole. */
START_TEST(clock_deltas_after_dropped_chunks)
{
	char dir[4096], path[4200];
	const size_t n = 40000;
	struct trace_writer *w;
	struct stored *s = calloc(n, sizeof(*s));
	struct unit_rng g;
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	size_t got = 0;

	unit_tmpdir(dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/b.trace", dir);
	w = open_writer(path, "b", CHUNK, 64 * 1024);
	unit_rng_seed(&g, unit_seed());
	write_clocks(w, &g, s, n);
	ck_assert_int_eq(trace_writer_close(w), 0);
	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	while (trace_reader_next(r, &ev) > 0) {
		struct trace_event want;

		ck_assert_uint_le(ev.index, n);
		/* display timestamps are deltas too, and have no base after a drop (documented) */
		want = s[ev.index - 1].ev;
		want.time_ns = ev.time_ns;
		assert_same(&want, &ev, ev.index);
		got++;
	}
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_gt(trace_reader_dropped(r), 0);
	ck_assert_uint_eq(got + trace_reader_dropped(r), n);
	trace_reader_close(r);
	free_stored(s, n);
	unit_rmdir(dir);
}
END_TEST

static Suite *trace_suite(void)
{
	Suite *s = suite_create("trace");
	TCase *basics = tcase_create("basics"), *recovery = tcase_create("recovery");
	TCase *damage = tcase_create("damage"), *budget = tcase_create("budget");

	tcase_add_test(basics, crc_known_values);
	tcase_add_test(basics, hash_composes_over_splits);
	tcase_add_test(basics, kind_names_round_trip);
	tcase_add_test(basics, endpoint_round_trip);
	tcase_add_test(basics, every_kind_round_trips);
	tcase_add_test(basics, offsets_are_derived_per_direction);
	tcase_add_loop_test(basics, random_streams_round_trip, 0, 4);
	tcase_add_test(basics, session_groups_segments);
	tcase_add_loop_test(recovery, writer_death_after_any_event, 0, 4);
	tcase_add_test(recovery, torn_drain_recovered_from_tails);
	tcase_add_test(recovery, second_tail_reserved_at_first_switch);
	tcase_add_test(recovery, drain_failure_stops_with_tails_kept);
	tcase_add_test(recovery, stuck_drain_abandoned_then_freed);
	tcase_add_test(recovery, tails_switch_and_death_at_every_step);
	tcase_add_test(recovery, torn_chunk_recovered_from_tail);
	tcase_add_loop_test(recovery, seal_then_exec_or_not, 0, 2);
	tcase_add_loop_test(damage, truncation_at_every_offset, 0, 2);
	tcase_add_loop_test(damage, flipped_bytes_detected, 0, 2);
	tcase_add_test(damage, garbage_is_not_a_trace);
	tcase_add_test(budget, disk_budget_drops_oldest);
	tcase_add_test(budget, disk_budget_keeps_channels);
	tcase_add_test(basics, call_numbers_are_pinned);
	tcase_add_test(basics, call_table_matches_schema);
	tcase_add_test(basics, so_error_read_both_forms);
	tcase_add_test(basics, clock_values_round_trip);
	tcase_add_test(budget, clock_deltas_after_dropped_chunks);
	tcase_set_timeout(damage, 240);
	suite_add_tcase(s, basics);
	suite_add_tcase(s, recovery);
	suite_add_tcase(s, damage);
	suite_add_tcase(s, budget);
	return s;
}

UNIT_MAIN(trace_suite)
