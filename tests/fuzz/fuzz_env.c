/*
 * fuzz_env.c: the interpose/ part's pure functions against arbitrary bytes: the
 * ENCORE_RECORD and ENCORE_REPLAY decoders (a recorded program's environment is not ours to
 * trust), their list reader, and descriptor classification.  The first byte chooses.  Whatever
 * the input, a decoder must accept or refuse without reading out of bounds; what it accepts
 * must hold the documented limits, and encoding it again must give a value that decodes to
 * the same thing (and encodes to the same text).  A broken property aborts.
 *
 * Built as a libFuzzer target with clang (-Dfuzz=enabled); fuzz_env_driver.c runs it on
 * deterministic mutations of valid values in every build (the 'fuzz' test suite).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "interpose.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) \
	do { \
		if (!(c)) \
			abort(); \
	} while (0)

/* An encoder's iterator over a decoded list; stops at the first malformed item (*bad). */
struct slice_it {
	const char *p, *end;
	unsigned neg;
	int nfields, bad;
};

static int slice_next(void *ctx, uint64_t *v)
{
	struct slice_it *it = ctx;
	int r = ip_env_list_next(&it->p, it->end, v, it->nfields, it->neg);

	CHECK(it->p <= it->end);
	if (r < 0)
		it->bad = 1;
	return r > 0;
}

static int slice_ok(struct ip_env_slice s, int nfields, unsigned neg)
{
	struct slice_it it = { s.p, s.p + s.len, neg, nfields, 0 };
	uint64_t v[16];

	while (slice_next(&it, v))
		;
	return !it.bad;
}

static void record(const char *s)
{
	static char a[1 << 16], b[1 << 16];
	struct ip_rec_env e, d;

	if (ip_rec_env_decode(s, &e) != 0)
		return;
	CHECK(e.name[0] && ip_valid_name(e.name, strlen(e.name), TRACE_NAME_MAX));
	CHECK(!e.parent[0] || ip_valid_name(e.parent, strlen(e.parent), TRACE_NAME_MAX));
	CHECK(!e.session[0] || ip_valid_name(e.session, strlen(e.session), IP_SESSION_MAX));
	CHECK(e.dir && e.dir[0] == '/' && strlen(e.dir) < IP_DIR_MAX);
	CHECK(e.hash_every > 0 && e.depth <= 32);
	CHECK(!e.ch.p || (e.ch.p >= s && e.ch.p + e.ch.len <= s + strlen(s)));
	if (!slice_ok(e.ch, IP_REC_CH_FIELDS, 0) || !slice_ok(e.fd, IP_REC_FD_FIELDS, 0) ||
	    !e.session[0] || e.pid < 0)
		return;
	{
		struct slice_it ci = { e.ch.p, e.ch.p + e.ch.len, 0, IP_REC_CH_FIELDS, 0 };
		struct slice_it fi = { e.fd.p, e.fd.p + e.fd.len, 0, IP_REC_FD_FIELDS, 0 };
		struct ip_env_list ch = { slice_next, &ci, IP_REC_CH_FIELDS, 0 };
		struct ip_env_list fd = { slice_next, &fi, IP_REC_FD_FIELDS, 0 };

		if (ip_rec_env_encode(a, sizeof(a), &e, &ch, &fd) != 0)
			return;
	}
	CHECK(ip_rec_env_decode(a, &d) == 0);
	CHECK(!strcmp(d.name, e.name) && !strcmp(d.parent, e.parent) &&
	      !strcmp(d.session, e.session) && !strcmp(d.dir, e.dir));
	CHECK(d.seg == e.seg && d.first == e.first && d.fork_index == e.fork_index &&
	      d.forks == e.forks && d.next_chan == e.next_chan && d.pid == e.pid &&
	      d.hash_every == e.hash_every && d.depth == e.depth && d.max_bytes == e.max_bytes);
	{
		struct slice_it ci = { d.ch.p, d.ch.p + d.ch.len, 0, IP_REC_CH_FIELDS, 0 };
		struct slice_it fi = { d.fd.p, d.fd.p + d.fd.len, 0, IP_REC_FD_FIELDS, 0 };
		struct ip_env_list ch = { slice_next, &ci, IP_REC_CH_FIELDS, 0 };
		struct ip_env_list fd = { slice_next, &fi, IP_REC_FD_FIELDS, 0 };

		CHECK(ip_rec_env_encode(b, sizeof(b), &d, &ch, &fd) == 0);
		CHECK(!ci.bad && !fi.bad);
	}
	CHECK(!strcmp(a, b));
}

static void replay(const char *s)
{
	static char a[1 << 16], b[1 << 16];
	struct ip_rep_env e, d;

	if (ip_rep_env_decode(s, &e) != 0)
		return;
	CHECK(e.name[0] && strlen(e.name) < TRACE_NAME_MAX);
	CHECK(e.dir && e.dir[0] == '/' && strlen(e.dir) < IP_DIR_MAX);
	if (!slice_ok(e.ch, IP_REP_CH_FIELDS, 0) || !slice_ok(e.fd, IP_REP_FD_FIELDS, 2) ||
	    strchr(e.name, ';') || (e.kids.p && memchr(e.kids.p, ';', e.kids.len)))
		return;
	{
		static char kids[1 << 16];
		struct slice_it ci = { e.ch.p, e.ch.p + e.ch.len, 0, IP_REP_CH_FIELDS, 0 };
		struct slice_it fi = { e.fd.p, e.fd.p + e.fd.len, 2, IP_REP_FD_FIELDS, 0 };
		struct ip_env_list ch = { slice_next, &ci, IP_REP_CH_FIELDS, 0 };
		struct ip_env_list fd = { slice_next, &fi, IP_REP_FD_FIELDS, 2 };

		if (e.kids.p && e.kids.len < sizeof(kids)) {
			memcpy(kids, e.kids.p, e.kids.len);
			kids[e.kids.len] = '\0';
			e.kids_text = kids;
		}
		if (ip_rep_env_encode(a, sizeof(a), &e, e.ch.p ? &ch : NULL, e.fd.p ? &fd : NULL))
			return;
	}
	CHECK(ip_rep_env_decode(a, &d) == 0);
	CHECK(!strcmp(d.name, e.name) && !strcmp(d.dir, e.dir) && d.pid == e.pid &&
	      d.seg == e.seg && d.has_first == e.has_first && d.has_cnt == e.has_cnt);
	CHECK(!d.has_first || d.first == e.first);
	CHECK(!d.has_cnt || !memcmp(d.cnt, e.cnt, sizeof(d.cnt)));
	{
		struct slice_it ci = { d.ch.p, d.ch.p + d.ch.len, 0, IP_REP_CH_FIELDS, 0 };
		struct slice_it fi = { d.fd.p, d.fd.p + d.fd.len, 2, IP_REP_FD_FIELDS, 0 };
		struct ip_env_list ch = { slice_next, &ci, IP_REP_CH_FIELDS, 0 };
		struct ip_env_list fd = { slice_next, &fi, IP_REP_FD_FIELDS, 2 };

		d.kids_text = e.kids_text;
		CHECK(ip_rep_env_encode(b, sizeof(b), &d, d.ch.p ? &ch : NULL,
		                        d.fd.p ? &fd : NULL) == 0);
	}
	CHECK(!strcmp(a, b));
}

static void classify(const uint8_t *p, size_t n)
{
	uint32_t mode = 0, ma = 0, mi = 0;
	int k;

	memcpy(&mode, p, n < 4 ? n : 4);
	if (n > 4)
		ma = p[4];
	if (n > 5)
		mi = p[5];
	k = ip_fd_kind((mode_t)mode, makedev(ma, mi));
	CHECK(k >= IP_FD_FILE && k <= IP_FD_NULL);
	CHECK((k == IP_FD_SOCKET) == !!S_ISSOCK(mode));
	CHECK((k == IP_FD_PIPE) == !!S_ISFIFO(mode));
	CHECK(!(k == IP_FD_CHAR || k == IP_FD_RANDOM || k == IP_FD_NULL) || S_ISCHR(mode));
	CHECK(ip_sock_chan_type((int)mode, (int)(ma << 8 | mi)) <= TRACE_CHAN_OTHER);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char s[1 << 16];

	if (size < 1 || size > sizeof(s))
		return 0;
	memcpy(s, data + 1, size - 1);
	s[size - 1] = '\0';
	switch (data[0] % 3) {
	case 0:
		record(s);
		break;
	case 1:
		replay(s);
		break;
	default:
		classify(data + 1, size - 1);
		break;
	}
	return 0;
}
