/*
 * test_elfnote.c: libtrace's ELF note scanner (libtrace/elfnote.c), which the recorder runs on
 * the notes of loaded objects in memory and the replayer on those read from the file: the
 * build-id among other notes, none, one too long for the caller, and notes cut short or
 * claiming more bytes than the segment has, which must end the scan without reading past it.
 * The loaded executable's own notes give the id `readelf -n` would.
 */
#include <elf.h>
#include <link.h>

#include "trace.h"
#include "unit.h"

/* One note: header, name (padded to 4), descriptor (padded to 4), at buf + *n. */
static void put_note(uint8_t *buf, size_t *n, uint32_t type, const char *name, size_t namesz,
                     const uint8_t *desc, size_t descsz)
{
	Elf64_Nhdr nh = { (Elf64_Word)namesz, (Elf64_Word)descsz, type };

	memcpy(buf + *n, &nh, sizeof(nh));
	*n += sizeof(nh);
	memset(buf + *n, 0, (namesz + 3) & ~(size_t)3);
	memcpy(buf + *n, name, namesz);
	*n += (namesz + 3) & ~(size_t)3;
	memset(buf + *n, 0, (descsz + 3) & ~(size_t)3);
	memcpy(buf + *n, desc, descsz);
	*n += (descsz + 3) & ~(size_t)3;
}

START_TEST(test_found_among_others)
{
	uint8_t buf[256], id[20], out[64], abi[16] = { 0 };
	size_t n = 0;

	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(0xa0 + i);
	/* the ABI tag first (type 1, "GNU"), then a build-id type under another name, then ours */
	put_note(buf, &n, NT_GNU_ABI_TAG, "GNU", 4, abi, sizeof(abi));
	put_note(buf, &n, NT_GNU_BUILD_ID, "Go", 3, id, 7);
	put_note(buf, &n, NT_GNU_BUILD_ID, "GNU", 4, id, sizeof(id));
	memset(out, 0, sizeof(out));
	ck_assert_int_eq(trace_elf_build_id(buf, n, out, sizeof(out)), 20);
	ck_assert_mem_eq(out, id, 20);
	/* an odd length, padded in the segment */
	n = 0;
	put_note(buf, &n, NT_GNU_BUILD_ID, "GNU", 4, id, 13);
	ck_assert_int_eq(trace_elf_build_id(buf, n, out, sizeof(out)), 13);
	ck_assert_mem_eq(out, id, 13);
}
END_TEST

START_TEST(test_none_or_too_long)
{
	uint8_t buf[256], id[40] = { 1 }, out[64], abi[16] = { 0 };
	size_t n = 0;

	put_note(buf, &n, NT_GNU_ABI_TAG, "GNU", 4, abi, sizeof(abi));
	ck_assert_int_eq(trace_elf_build_id(buf, n, out, sizeof(out)), 0);
	ck_assert_int_eq(trace_elf_build_id(buf, 0, out, sizeof(out)), 0);
	n = 0;
	put_note(buf, &n, NT_GNU_BUILD_ID, "GNU", 4, id, sizeof(id));
	ck_assert_int_eq(trace_elf_build_id(buf, n, out, 20), TRACE_EINVAL);
}
END_TEST

START_TEST(test_cut_short)
{
	uint8_t buf[256], id[20] = { 7 }, out[64];
	size_t n = 0, whole;

	put_note(buf, &n, NT_GNU_BUILD_ID, "GNU", 4, id, sizeof(id));
	whole = n;
	/* every shorter segment: never found, never read past (ASan builds check the reads) */
	for (size_t len = 0; len < whole; len++) {
		uint8_t *cut = malloc(len ? len : 1);

		memcpy(cut, buf, len);
		ck_assert_int_eq(trace_elf_build_id(cut, len, out, sizeof(out)), 0);
		free(cut);
	}
	/* a header claiming a huge name or descriptor */
	n = 0;
	put_note(buf, &n, NT_GNU_BUILD_ID, "GNU", 4, id, sizeof(id));
	((Elf64_Nhdr *)(void *)buf)->n_namesz = 0xfffffff0u;
	ck_assert_int_eq(trace_elf_build_id(buf, n, out, sizeof(out)), 0);
	((Elf64_Nhdr *)(void *)buf)->n_namesz = 4;
	((Elf64_Nhdr *)(void *)buf)->n_descsz = 0xfffffffdu;
	ck_assert_int_eq(trace_elf_build_id(buf, n, out, sizeof(out)), 0);
}
END_TEST

struct self_id {
	uint8_t id[64];
	int n;
};

static int first_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_id *s = arg;

	(void)size;
	for (int i = 0; i < info->dlpi_phnum && s->n <= 0; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			s->n = trace_elf_build_id((const void *)(info->dlpi_addr +
			                                         info->dlpi_phdr[i].p_vaddr),
			                          info->dlpi_phdr[i].p_memsz, s->id, sizeof(s->id));
	return 1;
}

START_TEST(test_loaded_executable)
{
	struct self_id s = { .n = 0 };
	char cmd[256], line[512], hex[160] = "", want[160] = "";
	FILE *p;

	dl_iterate_phdr(first_object, &s);
	if (s.n == 0)
		return; /* linked without --build-id: nothing to compare */
	ck_assert_int_gt(s.n, 0);
	for (int i = 0; i < s.n; i++)
		snprintf(hex + 2 * i, sizeof(hex) - 2 * (size_t)i, "%02x", s.id[i]);
	/* the same id as binutils reads from the file, where readelf is installed */
	snprintf(cmd, sizeof(cmd), "readelf -n /proc/%ld/exe 2>/dev/null", (long)getpid());
	if (!(p = popen(cmd, "r")))
		return;
	while (fgets(line, sizeof(line), p))
		if (sscanf(line, " Build ID: %159s", want) == 1)
			break;
	pclose(p);
	if (want[0])
		ck_assert_str_eq(hex, want);
}
END_TEST

static Suite *elfnote_suite(void)
{
	Suite *s = suite_create("elfnote");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_found_among_others);
	tcase_add_test(tc, test_none_or_too_long);
	tcase_add_test(tc, test_cut_short);
	tcase_add_test(tc, test_loaded_executable);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(elfnote_suite)
