/*
 * fuzz_reader.c: the trace reader against arbitrary bytes.  Two shapes of input, chosen by
 * the first byte: a whole file (headers, chunk framing and checksums under attack), or a raw
 * record stream placed in the unflushed tail of an otherwise valid file, which has no
 * checksum, so the record decoder itself sees the bytes.  Whatever the input, the reader
 * must return events or report damage, never crash, hang or read out of bounds.
 *
 * Built as a libFuzzer target with clang (-Dfuzz=enabled); fuzz_driver.c runs it on
 * deterministic mutations of valid traces in every build (the 'fuzz' test suite).
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void consume(const char *path)
{
	struct trace_reader *r;
	struct trace_diag d;
	struct trace_event ev;
	volatile uint64_t sink = 0;
	int rc;

	if (trace_reader_open(path, &r, &d) != 0)
		return;
	sink += trace_reader_process(r)->argc;
	while ((rc = trace_reader_next(r, &ev)) > 0) {
		const struct trace_stack *st = trace_reader_stack(r, ev.site);
		struct trace_endpoint ep;
		uint32_t i;

		sink += ev.index + ev.offset + ev.len + ev.naux;
		for (i = 0; i < ev.data_len; i++)
			sink += ev.data[i];
		if (st)
			for (i = 0; i < st->nframes; i++)
				sink += strlen(st->frames[i].function) + strlen(st->frames[i].object);
		if (ev.data_len && trace_endpoint_decode(ev.data, ev.data_len, &ep) == 0) {
			char s[200];

			trace_endpoint_format(&ep, 0, s, sizeof(s));
			trace_endpoint_format(&ep, 1, s, sizeof(s));
			sink += strlen(s);
		}
	}
	{
		const struct trace_file_input *fl;
		size_t i, n = trace_reader_files(r, &fl);

		for (i = 0; i < n; i++)
			sink += strlen(fl[i].path) + strlen(fl[i].resolved) + fl[i].build_id_len;
	}
	{
		const struct trace_path_change *pl;
		size_t i, n = trace_reader_paths(r, &pl);

		for (i = 0; i < n; i++)
			sink += strlen(pl[i].path) + strlen(pl[i].from) + pl[i].op +
			        (uint64_t)pl[i].time_ns;
	}
	trace_reader_damage(r, &d);
	trace_reader_close(r);
	(void)sink;
}

/* An empty trace whose writer "died": its tail is then filled with the raw input. */
static int tail_file(const char *path, const uint8_t *raw, size_t n)
{
	struct trace_process p;
	struct trace_writer *w;
	struct trace_diag d;
	uint8_t h[64], t[8];
	uint64_t tail_off = 0;
	uint32_t cap = 0, committed;
	int fd, i;

	memset(&p, 0, sizeof(p));
	strcpy(p.name, "fuzz");
	unlink(path);
	if (trace_writer_open(AT_FDCWD, path, &p, NULL, 0, &w, &d) != 0)
		return -1;
	trace_writer_abandon(w);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return -1;
	if (pread(fd, h, sizeof(h), 0) != (ssize_t)sizeof(h))
		goto fail;
	for (i = 0; i < 8; i++)
		tail_off |= (uint64_t)h[24 + i] << (8 * i);
	if (pread(fd, t, 4, (off_t)(tail_off + 28)) != 4)
		goto fail;
	cap = (uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 | (uint32_t)t[3] << 24;
	committed = n < cap ? (uint32_t)n : cap;
	if (pwrite(fd, raw, committed, (off_t)(tail_off + 64)) != (ssize_t)committed)
		goto fail;
	for (i = 0; i < 4; i++)
		t[i] = (uint8_t)(committed >> (8 * i));
	if (pwrite(fd, t, 4, (off_t)(tail_off + 24)) != 4)
		goto fail;
	close(fd);
	return 0;
fail:
	close(fd);
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];

	if (!path[0])
		snprintf(path, sizeof(path), "/tmp/encore-fuzz-%d.trace", (int)getpid());
	if (size == 0)
		return 0;
	if (data[0] & 1) {
		if (tail_file(path, data + 1, size - 1) == 0)
			consume(path);
	} else {
		FILE *f;

		unlink(path);
		f = fopen(path, "wb");
		if (!f)
			return 0;
		fwrite(data + 1, 1, size - 1, f);
		fclose(f);
		consume(path);
	}
	unlink(path);
	return 0;
}
