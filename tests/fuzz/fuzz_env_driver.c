/*
 * fuzz_env_driver.c: runs fuzz_env.c without libFuzzer, on deterministic mutations of valid
 * ENCORE_RECORD and ENCORE_REPLAY values (the forms recorder/core.c, replayer/lc.c and the
 * GD write) and on random classification inputs, so that every build exercises it in the
 * 'fuzz' test suite.
 *
 *   fuzz_env_driver [ITERATIONS] [SEED]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const seeds[] = {
	"\0v=1;name=ring.2;parent=ring;sess=s1;seg=0;first=0;fidx=0;forks=0;nch=0;pid=0;k=64;"
	"depth=4;max=0;ch=;fd=;dir=/tmp/s",
	"\0v=1;name=srv.1;parent=srv;sess=x-9;seg=2;first=17;fidx=9;forks=3;nch=12;pid=4242;k=16;"
	"depth=6;max=1048576;ch=5:1:0:0:10:20:305419896:4:1:2,7:4:1:2:0:99:0:0:0:0;fd=3:5,9:7;"
	"dir=/tmp/a;b",
	"\1v=1;name=ring.2;pid=0;seg=0;dir=/s",
	"\1v=1;name=ring.2;pid=0;seg=0;first=0;ch=;fd=;dir=/s",
	"\1v=1;name=ring.2;pid=0;seg=1;first=40;ch=3:100:200:11:22:1;fd=0:3,7:-2;"
	"cnt=1:-2:30:0;kids=100:2001,101:2002;dir=/s",
	"\2\0\300\0\0\1\11",
};

/* Characters the formats are made of, for insertions. */
static const char alphabet[] = ";=,:-/0123456789abcdefghijklmnopqrstuvwxyz._";

static uint64_t s;

static uint64_t rnd(void)
{
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

static size_t seed_len(const char *p)
{
	return p[0] == '\2' ? 7 : 1 + strlen(p + 1);
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	static uint8_t buf[8192];
	unsigned long i;

	s = argc > 2 ? strtoull(argv[2], NULL, 0) : 0x5eed5eedull;
	if (!s)
		s = 1;
	for (i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		LLVMFuzzerTestOneInput((const uint8_t *)seeds[i], seed_len(seeds[i]));
	for (i = 0; i < iters; i++) {
		const char *seed = seeds[rnd() % (sizeof(seeds) / sizeof(seeds[0]))];
		size_t n = seed_len(seed), edits = 1 + rnd() % 4;

		memcpy(buf, seed, n);
		while (edits--) {
			size_t at = n > 1 ? 1 + rnd() % (n - 1) : 1;

			switch (rnd() % 5) {
			case 0: /* replace a byte with one of the format's */
				if (at < n)
					buf[at] = (uint8_t)alphabet[rnd() % (sizeof(alphabet) - 1)];
				break;
			case 1: /* any byte */
				if (at < n)
					buf[at] = (uint8_t)rnd();
				break;
			case 2: /* insert */
				if (n + 1 < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = (uint8_t)alphabet[rnd() % (sizeof(alphabet) - 1)];
					n++;
				}
				break;
			case 3: /* delete */
				if (at < n) {
					memmove(buf + at, buf + at + 1, n - at - 1);
					n--;
				}
				break;
			default: /* cut */
				n = at;
				break;
			}
		}
		LLVMFuzzerTestOneInput(buf, n);
	}
	printf("fuzz_env: %lu inputs\n", iters);
	return 0;
}
