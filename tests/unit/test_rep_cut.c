/*
 * test_rep_cut.c: the replayer's offline parts (replayer/rep.h): opening a session for replay
 * (damage and changed binaries refused), the cut from JSON in the shape `encore inf --json`
 * prints, the cut from a predicate (equal to ana_inf's), and the ELF build-id reader.
 *
 * Sessions are written with the libtrace writer: a root "a" and its child "a.1" exchanging
 * messages over a socketpair, with marks.  Their executable is this test itself, with its
 * real build-id (so rep_open's binary check passes), or a wrong one.
 */
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>

#include "ana.h"
#include "rep.h"
#include "unit.h"

static uint8_t self_id[64];
static int self_id_len = -1;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end;

		if (ph->p_type != PT_NOTE)
			continue;
		end = p + ph->p_memsz;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *nh = (const void *)p;
			size_t nsz = (nh->n_namesz + 3) & ~3u, dsz = (nh->n_descsz + 3) & ~3u;

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(p + sizeof(*nh), "GNU", 4) == 0) {
				memcpy(self_id, p + sizeof(*nh) + nsz, nh->n_descsz);
				self_id_len = (int)nh->n_descsz;
				return 1;
			}
			p += sizeof(*nh) + nsz + dsz;
		}
	}
	return 1;
}

static const char *self_exe(void)
{
	static char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	return path;
}

/* One trace: events given as (kind, channel, len, mark value) rows. */
struct row {
	uint32_t kind;
	uint32_t channel;
	uint64_t len;
	int64_t mark;
};

static void write_trace(const char *dir, const char *name, const char *parent, uint64_t fidx,
                        const struct row *rows, size_t n, int bad_id)
{
	struct trace_process p;
	struct trace_writer *w = NULL;
	struct trace_diag d;
	char file[256], *argv[] = { (char *)self_exe(), NULL };
	int dfd = open(dir, O_RDONLY | O_DIRECTORY);

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "%s", name);
	snprintf(p.parent, sizeof(p.parent), "%s", parent);
	snprintf(p.session, sizeof(p.session), "unit");
	snprintf(p.exe, sizeof(p.exe), "%s", self_exe());
	snprintf(p.cwd, sizeof(p.cwd), "/");
	p.fork_index = fidx;
	p.argc = 1;
	p.argv = argv;
	if (self_id_len < 0)
		dl_iterate_phdr(phdr_cb, NULL);
	if (self_id_len > 0) {
		memcpy(p.build_id, self_id, (size_t)self_id_len);
		p.build_id_len = (uint32_t)self_id_len;
		if (bad_id)
			p.build_id[0] ^= 0xff;
	}
	ck_assert_int_eq(trace_file_name(name, 0, file, sizeof(file)), 0);
	ck_assert_int_eq(trace_writer_open(dfd, file, &p, NULL, 0, &w, &d), 0);
	if (parent[0]) {
		ck_assert_int_eq(trace_writer_inherit(w, 2, 0, 0), 0);
	}
	for (size_t i = 0; i < n; i++) {
		struct trace_event ev;

		memset(&ev, 0, sizeof(ev));
		ev.kind = rows[i].kind;
		ev.fd = -1;
		ev.channel = rows[i].channel;
		if (ev.kind == TRACE_EV_SEND || ev.kind == TRACE_EV_RECV) {
			ev.result = (int64_t)rows[i].len;
			ev.len = rows[i].len;
		} else if (ev.kind == TRACE_EV_MARK) {
			ev.data = (const uint8_t *)"k";
			ev.data_len = 1;
			ev.naux = 1;
			ev.aux[0] = rows[i].mark;
		} else if (ev.kind == TRACE_EV_PIPE) {
			static uint8_t buf[TRACE_ENDPOINT_MAX];
			struct trace_endpoint ep;
			int m;

			memset(&ep, 0, sizeof(ep));
			ep.type = TRACE_CHAN_SOCKETPAIR;
			ep.inode = 100;
			ep.peer_inode = 101;
			m = trace_endpoint_encode(&ep, buf, sizeof(buf));
			ev.data = buf;
			ev.data_len = (uint32_t)m;
			ev.naux = 2;
			ev.aux[0] = 1;
			ev.aux[1] = 2;
			ev.call = TRACE_CALL_SOCKETPAIR;
		} else if (ev.kind == TRACE_EV_FORK) {
			ev.result = 1234;
			ev.naux = 1;
			ev.aux[0] = 1;
		}
		ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	}
	ck_assert_int_eq(trace_writer_close(w), 0);
	close(dfd);
}

/* a: pipe(1,2) fork send(1,10) mark1 recv(1,5) mark2 exit
 * a.1:          recv(2,10) send(2,5) exit                    */
static void make_session(const char *dir, int bad_id)
{
	static const struct row a[] = {
		{ TRACE_EV_PIPE, 1, 0, 0 }, { TRACE_EV_FORK, 0, 0, 0 }, { TRACE_EV_SEND, 1, 10, 0 },
		{ TRACE_EV_MARK, 0, 0, 1 }, { TRACE_EV_RECV, 1, 5, 0 }, { TRACE_EV_MARK, 0, 0, 2 },
		{ TRACE_EV_EXIT, 0, 0, 0 },
	};
	static const struct row c[] = {
		{ TRACE_EV_RECV, 2, 10, 0 }, { TRACE_EV_SEND, 2, 5, 0 }, { TRACE_EV_EXIT, 0, 0, 0 },
	};

	write_trace(dir, "a", "", 0, a, sizeof(a) / sizeof(a[0]), bad_id);
	write_trace(dir, "a.1", "a", 2, c, sizeof(c) / sizeof(c[0]), 0);
}

static struct rep *open_ok(const char *dir)
{
	struct rep_options o = { .lib = "/nonexistent/libencore-replay.so" };
	struct trace_diag d;
	struct rep *r = NULL;
	int rc = rep_open(dir, &o, &r, &d);

	if (rc)
		fprintf(stderr, "rep_open: %s\n", d.msg);
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(r);
	return r;
}

START_TEST(open_counts)
{
	char dir[4096];
	struct rep *r;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir, 0);
	r = open_ok(dir);
	ck_assert_uint_eq(rep_nprocs(r), 2);
	ck_assert_str_eq(rep_proc_name(r, 0), "a");
	ck_assert_str_eq(rep_proc_name(r, 1), "a.1");
	ck_assert_uint_eq(rep_proc_nevents(r, 0), 7);
	ck_assert_uint_eq(rep_proc_nevents(r, 1), 3);
	ck_assert_ptr_null(rep_proc_name(r, 2));
	rep_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(refuse_changed_binary)
{
	char dir[4096];
	struct rep_options o = { .lib = "/x/libencore-replay.so" };
	struct trace_diag d;
	struct rep *r = NULL;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir, 1);
	if (self_id_len <= 0) {
		unit_rmdir(dir);
		return; /* this toolchain gives no build-id: nothing to compare */
	}
	ck_assert_int_eq(rep_open(dir, &o, &r, &d), TRACE_EINVAL);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(d.msg, "changed since the recording"));
	ck_assert_ptr_nonnull(strstr(d.msg, "process a:"));
	unit_rmdir(dir);
}
END_TEST

START_TEST(refuse_damage)
{
	char dir[4096], path[4200];
	struct rep_options o = { .lib = "/x/libencore-replay.so" };
	struct trace_diag d;
	struct rep *r = NULL;
	struct stat st;
	int fd;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir, 0);
	snprintf(path, sizeof(path), "%s/a.1.trace", dir);
	/* cut the file short inside its events */
	ck_assert_int_eq(stat(path, &st), 0);
	fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	for (off_t off = 256; off + 8 < st.st_size; off += 97)
		ck_assert_int_eq(pwrite(fd, "XXXXXXXX", 8, off), 8);
	close(fd);
	ck_assert_int_lt(rep_open(dir, &o, &r, &d), 0);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(d.msg, "a.1"));
	unit_rmdir(dir);
}
END_TEST

START_TEST(refuse_relative_lib_and_missing_dir)
{
	struct rep_options o = { .lib = "libencore-replay.so" };
	struct trace_diag d;
	struct rep *r = NULL;

	ck_assert_int_eq(rep_open("/nonexistent", &o, &r, &d), TRACE_EINVAL);
	o.lib = "/x/libencore-replay.so";
	ck_assert_int_eq(rep_open("/nonexistent/session", &o, &r, &d), TRACE_ENOENT);
	ck_assert_ptr_nonnull(strstr(d.msg, "no such session"));
}
END_TEST

START_TEST(cut_json_shapes)
{
	char dir[4096];
	struct trace_diag d;
	struct rep *r;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir, 0);
	r = open_ok(dir);
	/* encore inf --json */
	ck_assert_int_eq(rep_cut_json(r, "{\"predicate\":\"a: mark.k >= 1\",\"kind\":\"conjunctive\","
	                                 "\"cuts\":[{\"a\":4,\"a.1\":1},{\"a\":6,\"a.1\":3}]}", &d), 0);
	/* bare object, whitespace, a process left out (state 0) */
	ck_assert_int_eq(rep_cut_json(r, " { \"a.1\" : 2 } ", &d), 0);
	/* errors name the problem */
	ck_assert_int_eq(rep_cut_json(r, "{\"cuts\":[{\"zz\":1}]}", &d), TRACE_ENOENT);
	ck_assert_ptr_nonnull(strstr(d.msg, "zz"));
	ck_assert_int_eq(rep_cut_json(r, "{\"a\":99}", &d), TRACE_EINVAL);
	ck_assert_int_eq(rep_cut_json(r, "{\"a\":}", &d), TRACE_EPARSE);
	ck_assert_int_eq(rep_cut_json(r, "[1,2]", &d), TRACE_EPARSE);
	ck_assert_int_eq(rep_cut_json(r, "{\"a\":1", &d), TRACE_EPARSE);
	ck_assert_int_eq(rep_set_target(r, 0, 8), TRACE_EINVAL);
	ck_assert_int_eq(rep_set_target(r, 5, 0), TRACE_EINVAL);
	ck_assert_int_eq(rep_set_target(r, 0, 7), 0);
	rep_close(r);
	unit_rmdir(dir);
}
END_TEST

/* The cut rep_cut_predicate sets is ana_inf's: checked through rep_cut_json's inverse, the
 * halt report of a replay, in the e2e tests; here through the analyzer directly. */
START_TEST(cut_predicate_matches_ana)
{
	static const char *preds[] = {
		"a: mark.k >= 1", "a: mark.k >= 2", "a.1: sent >= 1", "a: received >= 1 && a.1: events >= 1",
		"a.1: exited", "a: events >= 3 || a.1: received >= 1",
	};
	char dir[4096];
	struct trace_diag d;
	struct rep *r;

	unit_tmpdir(dir, sizeof(dir));
	make_session(dir, 0);
	r = open_ok(dir);
	for (size_t i = 0; i < sizeof(preds) / sizeof(preds[0]); i++) {
		struct trace_pred *p = NULL;
		struct ana_cuts cuts;
		size_t which, ncuts;

		memset(&cuts, 0, sizeof(cuts));
		ck_assert_int_eq(trace_pred_parse(preds[i], &p, &d), 0);
		ck_assert_int_eq(ana_inf(rep_analysis(r), p, &cuts, &d), 0);
		ck_assert_int_eq(rep_cut_predicate(r, preds[i], &which, &ncuts, &d), cuts.ncuts ? 1 : 0);
		ck_assert_uint_eq(ncuts, cuts.ncuts);
		ck_assert_uint_eq(which, 0);
		ana_cuts_free(&cuts);
		trace_pred_free(p);
	}
	/* never holds: nothing set, 0 */
	{
		size_t which, ncuts;

		ck_assert_int_eq(rep_cut_predicate(r, "a: mark.k >= 9", &which, &ncuts, &d), 0);
		ck_assert_uint_eq(ncuts, 0);
		ck_assert_int_eq(rep_cut_predicate(r, "a: ((", &which, &ncuts, &d), TRACE_EPARSE);
		ck_assert_int_lt(rep_cut_predicate(r, "zz: events >= 1", &which, &ncuts, &d), 0);
	}
	rep_close(r);
	unit_rmdir(dir);
}
END_TEST

START_TEST(elf_build_id)
{
	uint8_t id[64];
	int n = rep_elf_build_id(self_exe(), id, sizeof(id));

	if (self_id_len < 0)
		dl_iterate_phdr(phdr_cb, NULL);
	ck_assert_int_eq(n, self_id_len > 0 ? self_id_len : 0);
	if (n > 0)
		ck_assert_int_eq(memcmp(id, self_id, (size_t)n), 0);
	ck_assert_int_eq(rep_elf_build_id("/nonexistent/file", id, sizeof(id)), TRACE_EIO);
	ck_assert_int_eq(rep_elf_build_id("/proc/self/status", id, sizeof(id)), TRACE_EINVAL);
	if (n > 0)
		ck_assert_int_eq(rep_elf_build_id(self_exe(), id, 2), TRACE_EINVAL);
}
END_TEST

static Suite *rep_suite(void)
{
	Suite *s = suite_create("rep_cut");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, open_counts);
	tcase_add_test(tc, refuse_changed_binary);
	tcase_add_test(tc, refuse_damage);
	tcase_add_test(tc, refuse_relative_lib_and_missing_dir);
	tcase_add_test(tc, cut_json_shapes);
	tcase_add_test(tc, cut_predicate_matches_ana);
	tcase_add_test(tc, elf_build_id);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(rep_suite)
