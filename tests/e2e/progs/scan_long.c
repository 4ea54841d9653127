/*
 * scan_long.c: one scanf conversion longer than a FILE's buffer, over a pipe from outside the
 * session (stdin), so that scanf refills the buffer several times: the recorder cannot tell
 * the bytes of the first refills (a pipe has no offset), so it does not capture the scan,
 * and says so, where before it recorded the last refill's bytes alone as what the scan
 * consumed (recorder/stdio.c, scan_after).  Prints scanf's result and the word's length.
 * Used by tests/e2e/replay_scan_long.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char *w = malloc(65536);
	int r;

	if (!w)
		return 1;
	r = scanf("%65535s", w);
	printf("scanf %d: %zu characters\n", r, r == 1 ? strlen(w) : (size_t)0);
	return 0;
}
