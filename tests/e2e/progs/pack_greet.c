/*
 * pack_greet.c: libgreet.so for pack_app.c (tests/e2e/replay_pack.sh): a library the
 * program maps, so that a replay without the program's files needs the packed one.
 */
#include <stdio.h>

const char *greet(const char *who);

const char *greet(const char *who)
{
	static char buf[300];

	snprintf(buf, sizeof(buf), "hello, %s", who);
	return buf;
}
