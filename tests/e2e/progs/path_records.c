/*
 * path_records.c: prints the path records of trace files (schemas/trace-format.md, "Paths
 * created"), one per line, "OP PATH[ from OLD]", in each file's order; for record_paths.sh.
 * Usage: path_records TRACE...
 */
#include <stdio.h>

#include "trace.h"

int main(int argc, char **argv)
{
	for (int a = 1; a < argc; a++) {
		const struct trace_path_change *l;
		struct trace_reader *r;
		struct trace_event ev;
		struct trace_diag d;
		size_t n;

		if (trace_reader_open(argv[a], &r, &d) != 0) {
			fprintf(stderr, "path_records: %s: %s\n", argv[a], d.msg);
			return 1;
		}
		while (trace_reader_next(r, &ev) == 1)
			;
		n = trace_reader_paths(r, &l);
		for (size_t i = 0; i < n; i++)
			printf("%s %s%s%s\n", trace_path_op_name(l[i].op), l[i].path,
			       l[i].from[0] ? " from " : "", l[i].from);
		trace_reader_close(r);
	}
	return 0;
}
