/*
 * test_pack.c: the pack manifest (libtrace/pack.c, schemas/pack.md): SHA-256 against the
 * FIPS 180-4 examples, path escapes round trip for every byte, a manifest written to disk and
 * read back is the same list, an identical line is not added twice, damaged manifests are
 * refused; and file input records written by the trace writer come back from the reader.
 */
#include <fcntl.h>
#include <sys/stat.h>

#include "trace.h"
#include "unit.h"

static void sha_of(const void *p, size_t n, char hex[65])
{
	struct trace_sha256 c;

	trace_sha256_init(&c);
	trace_sha256_update(&c, p, n);
	trace_sha256_hex(&c, hex);
}

START_TEST(test_sha256_vectors)
{
	char hex[65];
	static char million[1000000];
	struct trace_sha256 c;
	size_t i;

	sha_of("", 0, hex);
	ck_assert_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
	sha_of("abc", 3, hex);
	ck_assert_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	sha_of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56, hex);
	ck_assert_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
	memset(million, 'a', sizeof(million));
	/* in uneven pieces: the buffering between updates must not matter */
	trace_sha256_init(&c);
	for (i = 0; i < sizeof(million);) {
		size_t k = (i * 7 + 13) % 131 + 1;

		if (k > sizeof(million) - i)
			k = sizeof(million) - i;
		trace_sha256_update(&c, million + i, k);
		i += k;
	}
	trace_sha256_hex(&c, hex);
	ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}
END_TEST

START_TEST(test_escape_round_trip)
{
	char path[300], esc[900], back[300];
	int i, n, m;

	/* every byte 1..255 in one path */
	path[0] = '/';
	for (i = 1; i < 256; i++)
		path[i] = (char)i;
	path[256] = '\0';
	n = trace_pack_escape(path, esc, sizeof(esc));
	ck_assert_int_gt(n, 256);
	ck_assert_ptr_null(memchr(esc, '\t', (size_t)n));
	ck_assert_ptr_null(memchr(esc, '\n', (size_t)n));
	ck_assert_ptr_nonnull(strstr(esc, "%25")); /* '%' itself */
	ck_assert_ptr_nonnull(strstr(esc, "%09")); /* TAB */
	ck_assert_ptr_nonnull(strstr(esc, "%0A")); /* newline */
	m = trace_pack_unescape(esc, (size_t)n, back, sizeof(back));
	ck_assert_int_eq(m, 256);
	ck_assert_mem_eq(back, path, 257);
	/* too small an output is an error, not a cut path */
	ck_assert_int_eq(trace_pack_escape(path, esc, 10), TRACE_EINVAL);
	/* bad escapes */
	ck_assert_int_eq(trace_pack_unescape("/a%", 3, back, sizeof(back)), TRACE_ECORRUPT);
	ck_assert_int_eq(trace_pack_unescape("/a%4", 4, back, sizeof(back)), TRACE_ECORRUPT);
	ck_assert_int_eq(trace_pack_unescape("/a%zz", 5, back, sizeof(back)), TRACE_ECORRUPT);
	ck_assert_int_eq(trace_pack_unescape("/a%00", 5, back, sizeof(back)), TRACE_ECORRUPT);
	ck_assert_int_eq(trace_pack_unescape("/a\tb", 4, back, sizeof(back)), TRACE_ECORRUPT);
	ck_assert_int_eq(trace_pack_unescape("/a%41", 5, back, sizeof(back)), 3);
	ck_assert_str_eq(back, "/aA");
}
END_TEST

static struct trace_pack_entry entry(const char *host, uint32_t kind, char c, uint32_t mode,
                                     uint64_t size, char *path)
{
	struct trace_pack_entry e;

	memset(&e, 0, sizeof(e));
	snprintf(e.host_id, sizeof(e.host_id), "%s", host);
	e.kind = kind;
	memset(e.sha256, c, 64);
	e.sha256[64] = '\0';
	e.mode = mode;
	e.size = size;
	e.path = path;
	return e;
}

START_TEST(test_manifest_write_read)
{
	char dir[4096], packdir[4200], obj[4400];
	char p1[] = "/usr/bin/prog", p2[] = "/etc/with\ttab\nand%percent", p3[] = "/lib/x.so";
	struct trace_pack *p = trace_pack_new(), *q = NULL;
	struct trace_pack_entry e1 = entry("host1", TRACE_PACK_EXE, 'a', 0755, 12345, p1);
	struct trace_pack_entry e2 = entry("host1", TRACE_PACK_FILE, 'b', 0600, 0, p2);
	struct trace_pack_entry e3 = entry("host2", TRACE_PACK_LIB, 'c', 0444, 1, p3);
	struct trace_diag d;
	int fd;
	size_t i;

	unit_tmpdir(dir, sizeof(dir));
	ck_assert_ptr_nonnull(p);
	ck_assert_int_eq(trace_pack_add(p, &e1), 1);
	ck_assert_int_eq(trace_pack_add(p, &e2), 1);
	ck_assert_int_eq(trace_pack_add(p, &e3), 1);
	ck_assert_int_eq(trace_pack_add(p, &e1), 0); /* identical line: not twice */
	e1.mode = 0700;
	ck_assert_int_eq(trace_pack_add(p, &e1), 1); /* differs: added */
	ck_assert_uint_eq(trace_pack_count(p), 4);

	/* not packed yet: ENOENT */
	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(trace_pack_open(dir, &q, &d), TRACE_ENOENT);
	ck_assert_ptr_null(q);

	snprintf(packdir, sizeof(packdir), "%s/pack", dir);
	ck_assert_int_eq(mkdir(packdir, 0700), 0);
	fd = open(packdir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(trace_pack_write(fd, p, &d), 0);
	close(fd);
	ck_assert_int_eq(trace_pack_open(dir, &q, &d), 0);
	ck_assert_uint_eq(trace_pack_count(q), trace_pack_count(p));
	for (i = 0; i < trace_pack_count(p); i++) {
		const struct trace_pack_entry *a = trace_pack_entry(p, i), *b = trace_pack_entry(q, i);

		ck_assert_str_eq(a->host_id, b->host_id);
		ck_assert_uint_eq(a->kind, b->kind);
		ck_assert_str_eq(a->sha256, b->sha256);
		ck_assert_uint_eq(a->mode, b->mode);
		ck_assert_uint_eq(a->size, b->size);
		ck_assert_str_eq(a->path, b->path);
	}
	ck_assert_ptr_null(trace_pack_entry(q, 4));
	ck_assert_ptr_nonnull(trace_pack_find(q, "host1", p2));
	ck_assert_ptr_null(trace_pack_find(q, "host2", p2));
	ck_assert_str_eq(trace_pack_find(q, NULL, p3)->host_id, "host2");
	ck_assert_int_eq(trace_pack_object_path(dir, e2.sha256, obj, sizeof(obj)), 0);
	ck_assert_ptr_nonnull(strstr(obj, "/pack/objects/bbbb"));
	ck_assert_int_eq(trace_pack_object_path(dir, "../../etc/passwd", obj, sizeof(obj)),
	                 TRACE_EINVAL);
	trace_pack_free(q);
	trace_pack_free(p);
	unit_rmdir(dir);
}
END_TEST

/* tmpl with '@' replaced by hash */
static void subst(char *out, size_t cap, const char *tmpl, const char *hash)
{
	const char *at = strchr(tmpl, '@');

	if (!at)
		snprintf(out, cap, "%s", tmpl);
	else
		snprintf(out, cap, "%.*s%s%s", (int)(at - tmpl), tmpl, hash, at + 1);
}

START_TEST(test_manifest_refused)
{
	static const char *const bad[] = {
		"",
		"encore-pack 2\n",
		"encore-pack 1\nh\texe\t" "aaaa\t755\t1\t/x\n",                         /* short hash */
		"encore-pack 1\nh\tnope\t@\t755\t1\t/x\n",                             /* kind */
		"encore-pack 1\nh\texe\t@\t9755\t1\t/x\n",                             /* mode */
		"encore-pack 1\nh\texe\t@\t755\t-1\t/x\n",                             /* size */
		"encore-pack 1\nh\texe\t@\t755\t1\trelative\n",                        /* path */
		"encore-pack 1\nh\texe\t@\t755\t1\t/x\textra\n",                       /* fields */
		"encore-pack 1\nh\texe\t@\t755\t1\t/x",                                /* no end */
		"encore-pack 1\nh\texe\t@\t755\t1\t/x%0\n",                            /* escape */
	};
	char hash[65], text[400];
	struct trace_pack *p;
	struct trace_diag d;
	size_t i;

	memset(hash, 'f', 64);
	hash[64] = '\0';
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		subst(text, sizeof(text), bad[i], hash);
		p = (struct trace_pack *)1;
		ck_assert_msg(trace_pack_parse(text, strlen(text), &p, &d) < 0, "accepted: %s", text);
		ck_assert_ptr_null(p);
	}
	subst(text, sizeof(text), "encore-pack 1\nh\texe\t@\t755\t1\t/x\n", hash);
	ck_assert_int_eq(trace_pack_parse(text, strlen(text), &p, &d), 0);
	ck_assert_uint_eq(trace_pack_count(p), 1);
	trace_pack_free(p);
}
END_TEST

/* Mutations of a valid manifest: parsed or refused, never a crash (sanitizer builds check). */
START_TEST(test_manifest_mutations)
{
	char valid[600], m[700];
	char p1[] = "/usr/bin/x", p2[] = "/etc/a%b\tc";
	struct trace_pack *p = trace_pack_new(), *q;
	struct trace_pack_entry e1 = entry("h", TRACE_PACK_EXE, 'a', 0755, 1, p1);
	struct trace_pack_entry e2 = entry("h", TRACE_PACK_FILE, 'b', 0644, 22, p2);
	struct unit_rng r;
	struct trace_diag d;
	char *text;
	size_t len, n, k;
	int i;

	ck_assert_int_eq(trace_pack_add(p, &e1), 1);
	ck_assert_int_eq(trace_pack_add(p, &e2), 1);
	ck_assert_int_eq(trace_pack_format(p, &text, &len), 0);
	ck_assert_uint_lt(len, sizeof(valid));
	memcpy(valid, text, len);
	free(text);
	/* the text parses back to the same two lines */
	ck_assert_int_eq(trace_pack_parse(valid, len, &q, &d), 0);
	ck_assert_uint_eq(trace_pack_count(q), 2);
	ck_assert_str_eq(trace_pack_entry(q, 1)->path, p2);
	trace_pack_free(q);
	unit_rng_seed(&r, unit_seed());
	for (i = 0; i < 20000; i++) {
		n = len;
		memcpy(m, valid, n);
		for (k = unit_rng_below(&r, 4) + 1; k > 0; k--) {
			size_t at = unit_rng_below(&r, n);

			switch (unit_rng_below(&r, 3)) {
			case 0: m[at] = (char)unit_rng_next(&r); break;
			case 1: n = at; break; /* cut */
			default: m[at] = "\t\n%0/"[unit_rng_below(&r, 5)]; break;
			}
		}
		q = NULL;
		if (trace_pack_parse(m, n, &q, &d) == 0) {
			size_t j;

			for (j = 0; j < trace_pack_count(q); j++)
				ck_assert_ptr_nonnull(trace_pack_entry(q, j)->path);
		} else {
			ck_assert_ptr_null(q);
		}
		trace_pack_free(q);
	}
	trace_pack_free(p);
}
END_TEST

START_TEST(test_file_records)
{
	char dir[4096], path[4200];
	struct trace_process proc;
	struct trace_writer *w;
	struct trace_reader *r;
	struct trace_event ev;
	struct trace_file_input f;
	const struct trace_file_input *list;
	struct trace_diag d;

	unit_tmpdir(dir, sizeof(dir));
	memset(&proc, 0, sizeof(proc));
	snprintf(proc.name, sizeof(proc.name), "p");
	snprintf(path, sizeof(path), "%s/p.trace", dir);
	ck_assert_int_eq(trace_writer_open(AT_FDCWD, path, &proc, NULL, 0, &w, &d), 0);
	memset(&f, 0, sizeof(f));
	f.kind = TRACE_FILE_READ;
	f.mode = 0100644;
	f.dev = 2049;
	f.ino = 1234567;
	f.size = 99;
	f.mtime_ns = 1700000000123456789ll;
	f.hashed = 99;
	f.crc = 0xdeadbeef;
	f.path = "conf.txt";
	f.resolved = "/etc/conf.txt";
	ck_assert_int_eq(trace_writer_file(w, &f), 0);
	memset(&ev, 0, sizeof(ev));
	ev.kind = TRACE_EV_MARK;
	ck_assert_int_eq(trace_writer_event(w, &ev), 0);
	f.kind = TRACE_FILE_LIB;
	f.build_id_len = 20;
	memset(f.build_id, 0xab, 20);
	f.path = "/lib/libx.so";
	f.resolved = "";
	f.hashed = 0;
	f.crc = 0;
	ck_assert_int_eq(trace_writer_file(w, &f), 0);
	ck_assert_int_eq(trace_writer_close(w), 0);

	ck_assert_int_eq(trace_reader_open(path, &r, &d), 0);
	ck_assert_int_eq(trace_reader_next(r, &ev), 1);
	ck_assert_uint_eq(ev.index, 1); /* the file records take no index */
	ck_assert_int_eq(trace_reader_next(r, &ev), 0);
	ck_assert_int_eq(trace_reader_damage(r, &d), 0);
	ck_assert_uint_eq(trace_reader_files(r, &list), 2);
	ck_assert_uint_eq(list[0].kind, TRACE_FILE_READ);
	ck_assert_uint_eq(list[0].mode, 0100644);
	ck_assert_uint_eq(list[0].dev, 2049);
	ck_assert_uint_eq(list[0].ino, 1234567);
	ck_assert_uint_eq(list[0].size, 99);
	ck_assert_int_eq(list[0].mtime_ns, 1700000000123456789ll);
	ck_assert_uint_eq(list[0].hashed, 99);
	ck_assert_uint_eq(list[0].crc, 0xdeadbeef);
	ck_assert_str_eq(list[0].path, "conf.txt");
	ck_assert_str_eq(list[0].resolved, "/etc/conf.txt");
	ck_assert_uint_eq(list[1].kind, TRACE_FILE_LIB);
	ck_assert_uint_eq(list[1].build_id_len, 20);
	ck_assert_uint_eq(list[1].build_id[19], 0xab);
	ck_assert_str_eq(list[1].path, "/lib/libx.so");
	ck_assert_str_eq(list[1].resolved, "");
	ck_assert_str_eq(trace_file_kind_name(list[1].kind), "lib");
	trace_reader_close(r);
	unit_rmdir(dir);
}
END_TEST

static Suite *pack_suite(void)
{
	Suite *s = suite_create("pack");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_sha256_vectors);
	tcase_add_test(tc, test_escape_round_trip);
	tcase_add_test(tc, test_manifest_write_read);
	tcase_add_test(tc, test_manifest_refused);
	tcase_add_test(tc, test_manifest_mutations);
	tcase_add_test(tc, test_file_records);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(pack_suite)
