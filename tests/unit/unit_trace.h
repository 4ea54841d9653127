/*
 * unit_trace.h: a trace writer for a one-process test trace ("t", pid 1), shared by the unit
 * tests of the writer's paths (test_compact.c, test_sync_encode.c, test_trace_threads.c).
 */
#ifndef ENCORE_TESTS_UNIT_TRACE_H
#define ENCORE_TESTS_UNIT_TRACE_H

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "trace.h"

/* A writer at path with the given chunk size, zstd level and disk budget; fails the test when
 * it cannot be opened. */
static inline struct trace_writer *unit_writer_open(const char *path, uint32_t chunk, int level,
                                                    uint64_t max_bytes)
{
	struct trace_process p;
	struct trace_writer_options o = { chunk, level, max_bytes, 0, NULL, 0 };
	struct trace_writer *w = NULL;
	struct trace_diag d;
	int rc;

	memset(&p, 0, sizeof(p));
	snprintf(p.name, sizeof(p.name), "t");
	p.pid = 1;
	p.start_realtime_ns = 1;
	rc = trace_writer_open(AT_FDCWD, path, &p, &o, 0, &w, &d);
	ck_assert_msg(rc == 0, "writer open %s: %s", path, d.msg);
	return w;
}

#endif
