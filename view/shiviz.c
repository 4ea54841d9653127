/*
 * shiviz.c: a session as a ShiViz log (view.h, https://bestchai.bitbucket.io/shiviz/): the
 * parsing regex on the first line, an empty multi-execution delimiter on the second, then
 * two lines per event: "HOST {vector clock}" and a description.  Host names are logical
 * names; the vector clocks are the analyzer's (ana_vclocks), so they follow happened-before
 * exactly as ana_hb does, and the events come in ana_sweep's order, each after what
 * happened before it, as ShiViz wants.
 */
#include <inttypes.h>

#include "view.h"
#include "view_internal.h"

struct shiviz {
	FILE *out;
	const struct view *v;
	const struct ana_vclocks *vc;
};

static int shiviz_event(void *ctx, size_t p, uint64_t k)
{
	struct shiviz *z = ctx;
	const struct view *v = z->v;
	const uint32_t *vc = ana_vclock(z->vc, p, k);
	char desc[200];
	int first = 1;

	fprintf(z->out, "%s {", v->procs[p].name);
	for (size_t q = 0; q < v->nprocs; q++) {
		if (!vc[q])
			continue;
		fprintf(z->out, "%s\"%s\":%" PRIu32, first ? "" : ", ", v->procs[q].name, vc[q]);
		first = 0;
	}
	view__describe(&v->procs[p].ev[k - 1], k, desc, sizeof(desc));
	fprintf(z->out, "}\n%s\n", desc);
	return 0;
}

int view_shiviz_write(FILE *out, const struct view *v)
{
	struct shiviz z = { out, v, NULL };
	struct ana_vclocks *vc;
	int rc;

	if ((rc = ana_vclocks_new(v->s, &vc)))
		return rc;
	z.vc = vc;
	/* Line 1: how ShiViz parses the log; line 2: no multi-execution delimiter. */
	fprintf(out, "(?<host>\\S*) (?<clock>{.*})\\n(?<event>.*)\n\n");
	rc = ana_sweep(v->s, shiviz_event, &z);
	ana_vclocks_free(vc);
	return rc;
}
