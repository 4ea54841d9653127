/*
 * test_interpose.c: the interpose/ part (interpose/README.md): calls.def and its shapes, the
 * libraries generated from it (both export exactly the rows, and every shaped row), the
 * descriptor classification both sides share, and the ENCORE_RECORD / ENCORE_REPLAY codec
 * (round trips, the exact text each side writes, and what must be refused).
 */
#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "interpose.h"
#include "unit.h"

struct row {
	const char *name;
	const char *params;
	uint32_t kind;
	int shape;
};

static const struct row rows[] = {
#define ENCORE_CALL(name, ret, params, args, kind, call, flags, shape) \
	{ #name, #params, kind, IP_SHAPE_##shape },
#include "calls.def"
};

#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* --- calls.def and the libraries ------------------------------------------------------- */

START_TEST(every_shape_is_named_and_used)
{
	int used[IP_SHAPE_COUNT] = { 0 };
	size_t i;
	int s;

	for (i = 0; i < NROWS; i++) {
		ck_assert_msg(ip_shape_name(rows[i].shape) != NULL, "%s: bad shape", rows[i].name);
		/* variadic: IRREGULAR, FCNTL (always variadic) or SCANF (either) */
		ck_assert_msg(rows[i].shape == IP_SHAPE_IRREGULAR || rows[i].shape == IP_SHAPE_SCANF ||
		                  (rows[i].shape == IP_SHAPE_FCNTL) == !!strstr(rows[i].params, "..."),
		              "%s: variadic calls are IRREGULAR, FCNTL or SCANF", rows[i].name);
		used[rows[i].shape]++;
	}
	for (s = 0; s < IP_SHAPE_COUNT; s++)
		ck_assert_msg(used[s] > 0, "shape %s has no row", ip_shape_name(s));
	ck_assert_ptr_null(ip_shape_name(IP_SHAPE_COUNT));
	ck_assert_ptr_null(ip_shape_name(-1));
	ck_assert_str_eq(ip_shape_name(IP_SHAPE_BYTES_OUT), "BYTES_OUT");
}
END_TEST

/* A shape is one behaviour: its rows produce the event kind it implies. */
START_TEST(shapes_agree_with_the_event_kind)
{
	static const struct {
		int shape;
		uint32_t kind;
	} want[] = {
		{ IP_SHAPE_BYTES_OUT, TRACE_EV_SEND },   { IP_SHAPE_BYTES_OUT_TO, TRACE_EV_SEND },
		{ IP_SHAPE_MSG_OUT, TRACE_EV_SEND },     { IP_SHAPE_IOV_OUT, TRACE_EV_SEND },
		{ IP_SHAPE_BYTES_IN, TRACE_EV_RECV },    { IP_SHAPE_BYTES_IN_FROM, TRACE_EV_RECV },
		{ IP_SHAPE_MSG_IN, TRACE_EV_RECV },      { IP_SHAPE_IOV_IN, TRACE_EV_RECV },
		{ IP_SHAPE_FREAD, TRACE_EV_RECV },       { IP_SHAPE_FGETS, TRACE_EV_RECV },
		{ IP_SHAPE_GETDELIM, TRACE_EV_RECV },    { IP_SHAPE_GETC, TRACE_EV_RECV },
		{ IP_SHAPE_FWRITE, TRACE_EV_SEND },      { IP_SHAPE_FPUTS, TRACE_EV_SEND },
		{ IP_SHAPE_PUTC, TRACE_EV_SEND },        { IP_SHAPE_VPRINTF, TRACE_EV_SEND },
		{ IP_SHAPE_KMOVE, TRACE_EV_SEND },       { IP_SHAPE_SIGNAL_WAIT, TRACE_EV_NONE },
		{ IP_SHAPE_WAIT, TRACE_EV_WAIT },        { IP_SHAPE_EXIT, TRACE_EV_EXIT },
		{ IP_SHAPE_VALUE_PID, TRACE_EV_PID },    { IP_SHAPE_READY_POLL, TRACE_EV_READY },
		{ IP_SHAPE_READY_SELECT, TRACE_EV_READY }, { IP_SHAPE_READY_EPOLL, TRACE_EV_READY },
		{ IP_SHAPE_DUP, TRACE_EV_DUP },          { IP_SHAPE_FCNTL, TRACE_EV_DUP },
		{ IP_SHAPE_VALUE_CLOCK, TRACE_EV_CLOCK }, { IP_SHAPE_SCANF, TRACE_EV_MARK },
	};
	size_t i, k;

	ck_assert_uint_eq(sizeof(want) / sizeof(want[0]), IP_SHAPE_COUNT - 1);
	for (i = 0; i < NROWS; i++) {
		if (rows[i].shape == IP_SHAPE_IRREGULAR)
			continue;
		for (k = 0; want[k].shape != rows[i].shape; k++)
			;
		ck_assert_msg(rows[i].kind == want[k].kind, "%s: shape %s, but kind %u", rows[i].name,
		              ip_shape_name(rows[i].shape), rows[i].kind);
	}
}
END_TEST

/* The names a shared library exports (defined, default visibility), from its .dynsym. */
static int exported(const char *path, const char ***out)
{
	static const char *names[1024];
	int fd = open(path, O_RDONLY), n = 0;
	struct stat st;
	const uint8_t *m;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;

	ck_assert_msg(fd >= 0, "open %s", path);
	ck_assert_int_eq(fstat(fd, &st), 0);
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	ck_assert(m != MAP_FAILED);
	close(fd);
	eh = (const Elf64_Ehdr *)m;
	ck_assert(memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0 && eh->e_ident[EI_CLASS] == ELFCLASS64);
	sh = (const Elf64_Shdr *)(m + eh->e_shoff);
	for (int i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym;
		const char *str;
		size_t k, nsym;

		if (sh[i].sh_type != SHT_DYNSYM)
			continue;
		sym = (const Elf64_Sym *)(m + sh[i].sh_offset);
		str = (const char *)(m + sh[sh[i].sh_link].sh_offset);
		nsym = sh[i].sh_size / sizeof(*sym);
		for (k = 1; k < nsym; k++) {
			int bind = ELF64_ST_BIND(sym[k].st_info);

			if (sym[k].st_shndx == SHN_UNDEF || (bind != STB_GLOBAL && bind != STB_WEAK) ||
			    ELF64_ST_VISIBILITY(sym[k].st_other) != STV_DEFAULT)
				continue;
			ck_assert_int_lt(n, 1024);
			names[n++] = str + sym[k].st_name;
		}
	}
	*out = names;
	return n;
}

/* Each library exports exactly the rows of calls.def and encore_mark (and `extra`, a symbol
 * of its own that is no libc call it logs or replays): so every shaped row has its generated
 * wrapper on both sides (a shape without a handler also fails the link, see
 * interpose/gen_wrappers.py). */
static void exports_exactly_the_rows(const char *so, const char *skip, const char *extra)
{
	const char **names;
	int n = exported(so, &names), found;
	size_t i;

	for (i = 0; i < NROWS; i++) {
		found = 0;
		for (int k = 0; k < n; k++)
			found |= !strcmp(names[k], rows[i].name);
		if (skip && !strcmp(rows[i].name, skip))
			ck_assert_msg(!found, "%s: %s is exported", so, skip);
		else
			ck_assert_msg(found, "%s does not export %s (shape %s)", so, rows[i].name,
			              ip_shape_name(rows[i].shape));
	}
	for (int k = 0; k < n; k++) {
		found = !strcmp(names[k], "encore_mark") || (extra && !strcmp(names[k], extra));
		for (i = 0; i < NROWS && !found; i++)
			found = !strcmp(names[k], rows[i].name);
		ck_assert_msg(found, "%s exports %s, which is not a row of calls.def", so, names[k]);
	}
}

/* The table gen_wrappers.py wrote for a library (rec_shapes.c, lc_shapes.c): one entry per
 * shaped row of calls.def, with the row's shape, and nothing else. */
static void generated_table_is_the_shaped_rows(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512], name[128], shape[64];
	size_t shaped = 0, listed = 0, i;

	ck_assert_msg(f != NULL, "open %s", path);
	for (i = 0; i < NROWS; i++)
		shaped += rows[i].shape != IP_SHAPE_IRREGULAR;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, " { \"%127[^\"]\", IP_SHAPE_%63[A-Z_],", name, shape) != 2)
			continue;
		for (i = 0; i < NROWS && strcmp(rows[i].name, name); i++)
			;
		ck_assert_msg(i < NROWS, "%s: %s is not a row", path, name);
		ck_assert_msg(rows[i].shape != IP_SHAPE_IRREGULAR &&
		                  !strcmp(ip_shape_name(rows[i].shape), shape),
		              "%s: %s generated as %s", path, name, shape);
		listed++;
	}
	fclose(f);
	ck_assert_uint_eq(listed, shaped);
}

START_TEST(both_libraries_generate_every_shaped_row)
{
	generated_table_is_the_shaped_rows(REC_SHAPES);
	generated_table_is_the_shaped_rows(LC_SHAPES);
}
END_TEST

START_TEST(recorder_exports_exactly_the_rows)
{
	/* exit() is observed through on_exit in the recorder; the row is the replayer's. */
	/* dl_iterate_phdr: counted, not logged (the lock order, recorder/README.md, "Locks") */
	exports_exactly_the_rows(REC_SO, "exit", "dl_iterate_phdr");
}
END_TEST

START_TEST(replayer_exports_exactly_the_rows)
{
	exports_exactly_the_rows(REP_SO, NULL, NULL);
}
END_TEST

/* --- descriptors ------------------------------------------------------------------------- */

START_TEST(fd_kind_from_mode_and_device)
{
	ck_assert_int_eq(ip_fd_kind(S_IFSOCK | 0777, 0), IP_FD_SOCKET);
	ck_assert_int_eq(ip_fd_kind(S_IFIFO | 0600, 0), IP_FD_PIPE);
	ck_assert_int_eq(ip_fd_kind(S_IFREG | 0644, 0), IP_FD_FILE);
	ck_assert_int_eq(ip_fd_kind(S_IFDIR | 0755, 0), IP_FD_FILE);
	ck_assert_int_eq(ip_fd_kind(S_IFBLK | 0660, makedev(1, 9)), IP_FD_FILE);
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(1, 8)), IP_FD_RANDOM);
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(1, 9)), IP_FD_RANDOM);
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(1, 3)), IP_FD_NULL);
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(1, 5)), IP_FD_NULL);
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(1, 7)), IP_FD_NULL);
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(1, 1)), IP_FD_CHAR);  /* /dev/mem */
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0620, makedev(136, 0)), IP_FD_CHAR); /* a pty */
	ck_assert_int_eq(ip_fd_kind(S_IFCHR | 0666, makedev(5, 9)), IP_FD_CHAR);
	ck_assert(ip_fd_kind_is_channel(IP_FD_SOCKET) && ip_fd_kind_is_channel(IP_FD_PIPE) &&
	          ip_fd_kind_is_channel(IP_FD_CHAR));
	ck_assert(!ip_fd_kind_is_channel(IP_FD_FILE) && !ip_fd_kind_is_channel(IP_FD_RANDOM) &&
	          !ip_fd_kind_is_channel(IP_FD_NULL));
}
END_TEST

static int kind_of(int fd)
{
	struct stat st;

	ck_assert_int_eq(fstat(fd, &st), 0);
	return ip_fd_kind(st.st_mode, st.st_rdev);
}

START_TEST(fd_kind_of_real_descriptors)
{
	int p[2], sv[2], fd;

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(kind_of(p[0]), IP_FD_PIPE);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	ck_assert_int_eq(kind_of(sv[0]), IP_FD_SOCKET);
	close(sv[0]);
	close(sv[1]);
	fd = open("/dev/null", O_RDONLY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(kind_of(fd), IP_FD_NULL);
	close(fd);
	fd = open("/dev/urandom", O_RDONLY);
	if (fd >= 0) {
		ck_assert_int_eq(kind_of(fd), IP_FD_RANDOM);
		close(fd);
	}
	fd = open("/", O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(kind_of(fd), IP_FD_FILE);
	close(fd);
}
END_TEST

START_TEST(socket_channel_types)
{
	ck_assert_uint_eq(ip_sock_chan_type(AF_INET, SOCK_STREAM), TRACE_CHAN_TCP);
	ck_assert_uint_eq(ip_sock_chan_type(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK), TRACE_CHAN_TCP);
	ck_assert_uint_eq(ip_sock_chan_type(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC), TRACE_CHAN_UDP);
	ck_assert_uint_eq(ip_sock_chan_type(AF_INET, SOCK_RAW), TRACE_CHAN_OTHER);
	ck_assert_uint_eq(ip_sock_chan_type(AF_UNIX, SOCK_STREAM), TRACE_CHAN_UNIX);
	ck_assert_uint_eq(ip_sock_chan_type(AF_UNIX, SOCK_DGRAM), TRACE_CHAN_OTHER);
	ck_assert_uint_eq(ip_sock_chan_type(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC),
	                  TRACE_CHAN_UNIX);
	ck_assert_uint_eq(ip_sock_chan_type(AF_NETLINK, SOCK_RAW), TRACE_CHAN_OTHER);
}
END_TEST

/* --- the environment codec --------------------------------------------------------------- */

/* An iterator over a fixed array of items. */
struct items {
	const uint64_t *v;
	int n, at, nfields;
};

static int next_item(void *ctx, uint64_t *v)
{
	struct items *it = ctx;

	if (it->at >= it->n)
		return 0;
	memcpy(v, it->v + (size_t)it->at * (size_t)it->nfields, sizeof(*v) * (size_t)it->nfields);
	it->at++;
	return 1;
}

static const char rec_text[] =
    "v=1;name=srv.1;parent=srv;sess=s-42;seg=2;first=17;fidx=9;forks=3;nch=12;pid=4242;k=16;"
    "depth=6;max=1048576;ch=5:1:0:0:10:20:305419896:4:1:2,7:4:1:2:0:18446744073709551615:0:0:"
    "0:0;fd=3:5,9:7;dir=/tmp/sess;with;semicolons";

START_TEST(record_env_round_trip)
{
	static const uint64_t ch[] = { 5, 1, 0, 0, 10, 20, 305419896, 4, 1, 2,
		                       7, 4, 1, 2, 0, UINT64_MAX, 0, 0, 0, 0 };
	static const uint64_t fds[] = { 3, 5, 9, 7 };
	struct items ci = { ch, 2, 0, IP_REC_CH_FIELDS }, fi = { fds, 2, 0, IP_REC_FD_FIELDS };
	struct ip_env_list chl = { next_item, &ci, IP_REC_CH_FIELDS, 0 };
	struct ip_env_list fdl = { next_item, &fi, IP_REC_FD_FIELDS, 0 };
	struct ip_rec_env e, d;
	char buf[1024];
	const char *p, *end;
	uint64_t v[IP_REC_CH_FIELDS];

	memset(&e, 0, sizeof(e));
	strcpy(e.name, "srv.1");
	strcpy(e.parent, "srv");
	strcpy(e.session, "s-42");
	e.seg = 2;
	e.first = 17;
	e.fork_index = 9;
	e.forks = 3;
	e.next_chan = 12;
	e.pid = 4242;
	e.hash_every = 16;
	e.depth = 6;
	e.max_bytes = 1048576;
	e.dir = "/tmp/sess;with;semicolons";
	ck_assert_int_eq(ip_rec_env_encode(buf, sizeof(buf), &e, &chl, &fdl), 0);
	ck_assert_str_eq(buf, rec_text);
	/* too small: refused, never cut */
	ci.at = fi.at = 0;
	ck_assert_int_eq(ip_rec_env_encode(buf, sizeof(rec_text) - 1, &e, &chl, &fdl), -1);

	ck_assert_int_eq(ip_rec_env_decode(rec_text, &d), 0);
	ck_assert_str_eq(d.name, "srv.1");
	ck_assert_str_eq(d.parent, "srv");
	ck_assert_str_eq(d.session, "s-42");
	ck_assert_uint_eq(d.seg, 2);
	ck_assert_uint_eq(d.first, 17);
	ck_assert_uint_eq(d.fork_index, 9);
	ck_assert_uint_eq(d.forks, 3);
	ck_assert_uint_eq(d.next_chan, 12);
	ck_assert_int_eq(d.pid, 4242);
	ck_assert_uint_eq(d.hash_every, 16);
	ck_assert_uint_eq(d.depth, 6);
	ck_assert_uint_eq(d.max_bytes, 1048576);
	ck_assert_str_eq(d.dir, "/tmp/sess;with;semicolons");
	p = d.ch.p;
	end = d.ch.p + d.ch.len;
	ck_assert_int_eq(ip_env_list_next(&p, end, v, IP_REC_CH_FIELDS, 0), 1);
	ck_assert(memcmp(v, ch, sizeof(v)) == 0);
	ck_assert_int_eq(ip_env_list_next(&p, end, v, IP_REC_CH_FIELDS, 0), 1);
	ck_assert(memcmp(v, ch + IP_REC_CH_FIELDS, sizeof(v)) == 0);
	ck_assert_int_eq(ip_env_list_next(&p, end, v, IP_REC_CH_FIELDS, 0), 0);
	p = d.fd.p;
	end = d.fd.p + d.fd.len;
	ck_assert_int_eq(ip_env_list_next(&p, end, v, 2, 0), 1);
	ck_assert(v[0] == 3 && v[1] == 5);
	ck_assert_int_eq(ip_env_list_next(&p, end, v, 2, 0), 1);
	ck_assert(v[0] == 9 && v[1] == 7);
	ck_assert_int_eq(ip_env_list_next(&p, end, v, 2, 0), 0);
}
END_TEST

START_TEST(record_env_defaults_and_refusals)
{
	static const char *const bad[] = {
		"",                                     /* no dir */
		"v=1;name=a;seg=1",                     /* cut short */
		"v=1;name=a;dir=relative/path",         /* dir not absolute */
		"v=1;dir=/tmp",                         /* no name */
		"v=1;name=.hidden;dir=/tmp",            /* name starting with '.' */
		"v=1;name=a/b;dir=/tmp",                /* name with a '/' */
		"v=1;name=a;sess=;dir=/tmp",            /* empty session */
		"v=1;name=a;seg=-1;dir=/tmp",           /* a sign */
		"v=1;name=a;seg=1x;dir=/tmp",           /* trailing garbage */
		"v=1;name=a;first=123456789012345678901;dir=/tmp", /* 21 digits */
		"v=1;name=a;first=18446744073709551616;dir=/tmp",  /* 2^64 */
		"v=1;name=a;unknown=word;dir=/tmp",     /* unknown keys must still be numbers */
		"v=1;name=a;noequals;dir=/tmp",
	};
	struct ip_rec_env e;
	char longdir[IP_DIR_MAX + 32];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(ip_rec_env_decode(bad[i], &e) == -1, "accepted: %s", bad[i]);
	ck_assert_int_eq(ip_rec_env_decode("name=a;unknown=7;k=0;depth=99;dir=/", &e), 0);
	ck_assert_uint_eq(e.hash_every, 64); /* k=0: the default */
	ck_assert_uint_eq(e.depth, 32);      /* capped */
	ck_assert_ptr_null(e.ch.p);
	ck_assert_int_eq(ip_rec_env_decode("name=a;dir=/x", &e), 0);
	ck_assert_uint_eq(e.hash_every, 64);
	ck_assert_uint_eq(e.depth, 4);
	ck_assert_str_eq(e.parent, "");
	strcpy(longdir, "name=a;dir=/");
	memset(longdir + strlen(longdir), 'd', IP_DIR_MAX);
	longdir[sizeof(longdir) - 1] = '\0';
	ck_assert_int_eq(ip_rec_env_decode(longdir, &e), -1);
}
END_TEST

START_TEST(env_lists_refuse_malformed_items)
{
	static const struct {
		const char *text;
		int want;
		unsigned neg;
		int first; /* what the first call returns */
	} cases[] = {
		{ "1:2", 2, 0, 1 },     { ",,1:2,", 2, 0, 1 }, { "", 2, 0, 0 },
		{ ",,,", 2, 0, 0 },     { "1", 2, 0, -1 },     { "1:2:3", 2, 0, -1 },
		{ "1:", 2, 0, -1 },     { ":2", 2, 0, -1 },    { "1:-2", 2, 0, -1 },
		{ "1:-2", 2, 2, 1 },    { "-1:2", 2, 2, -1 },  { "1:x", 2, 0, -1 },
		{ "1: 2", 2, 0, -1 },   { "1:+2", 2, 0, -1 },  { "1:-", 2, 2, -1 },
		{ "1:-9223372036854775808", 2, 2, 1 }, { "1:-9223372036854775809", 2, 2, -1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *p = cases[i].text, *end = p + strlen(p);
		uint64_t v[4];

		ck_assert_msg(ip_env_list_next(&p, end, v, cases[i].want, cases[i].neg) ==
		                  cases[i].first,
		              "list \"%s\"", cases[i].text);
	}
	{
		const char *p = "4:-2", *end = p + 4;
		uint64_t v[2];

		ck_assert_int_eq(ip_env_list_next(&p, end, v, 2, 2), 1);
		ck_assert_int_eq((int64_t)v[1], -2);
	}
}
END_TEST

START_TEST(replay_env_the_gd_and_the_lc_write)
{
	static const uint64_t ch[] = { 3, 100, 200, 11, 22, 1 };
	static const uint64_t fds[] = { 0, 3, 7, (uint64_t)-2 };
	struct items ci = { ch, 1, 0, IP_REP_CH_FIELDS }, fi = { fds, 2, 0, IP_REP_FD_FIELDS };
	struct ip_env_list chl = { next_item, &ci, IP_REP_CH_FIELDS, 0 };
	struct ip_env_list fdl = { next_item, &fi, IP_REP_FD_FIELDS, 2 };
	struct ip_rep_env e = { .dir = "/s" }, d;
	struct items none = { NULL, 0, 0, 2 };
	struct ip_env_list nl = { next_item, &none, 2, 0 };
	char buf[512];
	const char *p;
	uint64_t v[IP_REP_CH_FIELDS];

	/* the GD's: no state */
	strcpy(e.name, "ring.2");
	ck_assert_int_eq(ip_rep_env_encode(buf, sizeof(buf), &e, NULL, NULL), 0);
	ck_assert_str_eq(buf, "v=1;name=ring.2;pid=0;seg=0;dir=/s");
	ck_assert_int_eq(ip_rep_env_decode(buf, &d), 0);
	ck_assert(!d.has_first && !d.has_cnt && !d.ch.p && !d.fd.p && !d.kids.p);
	ck_assert_str_eq(d.name, "ring.2");
	/* a spawned child's: empty lists */
	e.has_first = 1;
	ck_assert_int_eq(ip_rep_env_encode(buf, sizeof(buf), &e, &nl, &nl), 0);
	ck_assert_str_eq(buf, "v=1;name=ring.2;pid=0;seg=0;first=0;ch=;fd=;dir=/s");
	/* an exec's: the whole state */
	e.seg = 1;
	e.first = 40;
	e.has_cnt = 1;
	e.cnt[0] = 1;
	e.cnt[1] = -2;
	e.cnt[2] = 30;
	e.cnt[3] = 0;
	e.kids_text = "100:2001,101:2002";
	ck_assert_int_eq(ip_rep_env_encode(buf, sizeof(buf), &e, &chl, &fdl), 0);
	ck_assert_str_eq(buf, "v=1;name=ring.2;pid=0;seg=1;first=40;ch=3:100:200:11:22:1;"
	                      "fd=0:3,7:-2;cnt=1:-2:30:0;kids=100:2001,101:2002;dir=/s");
	ck_assert_int_eq(ip_rep_env_decode(buf, &d), 0);
	ck_assert(d.has_first && d.first == 40 && d.seg == 1 && d.pid == 0);
	ck_assert(d.has_cnt && d.cnt[1] == -2 && d.cnt[2] == 30);
	ck_assert_int_eq((int)d.kids.len, (int)strlen("100:2001,101:2002"));
	p = d.ch.p;
	ck_assert_int_eq(ip_env_list_next(&p, d.ch.p + d.ch.len, v, IP_REP_CH_FIELDS, 0), 1);
	ck_assert(memcmp(v, ch, sizeof(ch)) == 0);
	p = d.fd.p;
	ck_assert_int_eq(ip_env_list_next(&p, d.fd.p + d.fd.len, v, 2, 2), 1);
	ck_assert_int_eq(ip_env_list_next(&p, d.fd.p + d.fd.len, v, 2, 2), 1);
	ck_assert(v[0] == 7 && (int64_t)v[1] == -2);
	/* what the LC stamps with its pid */
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;pid=77;seg=3;dir=/d", &d), 0);
	ck_assert(d.pid == 77 && d.seg == 3);
	/* refusals; a malformed cnt= is ignored, as an unknown key */
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=;dir=/d", &d), -1);
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;dir=d", &d), -1);
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;seg=x;dir=/d", &d), -1);
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;seg=1", &d), -1);
	ck_assert_int_eq(ip_rep_env_decode("v=1;name=a;cnt=1:2;what=ever;dir=/d", &d), 0);
	ck_assert(!d.has_cnt);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("interpose");
	TCase *calls = tcase_create("calls"), *fds = tcase_create("fds"), *env = tcase_create("env");

	tcase_add_test(calls, every_shape_is_named_and_used);
	tcase_add_test(calls, shapes_agree_with_the_event_kind);
	tcase_add_test(calls, both_libraries_generate_every_shaped_row);
	tcase_add_test(calls, recorder_exports_exactly_the_rows);
	tcase_add_test(calls, replayer_exports_exactly_the_rows);
	tcase_add_test(fds, fd_kind_from_mode_and_device);
	tcase_add_test(fds, fd_kind_of_real_descriptors);
	tcase_add_test(fds, socket_channel_types);
	tcase_add_test(env, record_env_round_trip);
	tcase_add_test(env, record_env_defaults_and_refusals);
	tcase_add_test(env, env_lists_refuse_malformed_items);
	tcase_add_test(env, replay_env_the_gd_and_the_lc_write);
	suite_add_tcase(s, calls);
	suite_add_tcase(s, fds);
	suite_add_tcase(s, env);
	return s;
}

UNIT_MAIN(suite)
