/*
 * rlimit_as.c: limits its own address space (RLIMIT_AS, 1 GiB: far above what the process
 * maps, as vsftpd's 200 MiB is for its session processes), then maps and fills 64 MiB and
 * prints a sum of it.  Replayed, the local controller's memory counts against the limit as
 * well: it must stay small (replayer/lc_alloc.c), or the program's mmap fails there.
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

int main(void)
{
	struct rlimit rl = { 1ul << 30, 1ul << 30 };
	size_t n = 64ul << 20, i;
	unsigned long sum = 0;
	unsigned char *p;

	if (setrlimit(RLIMIT_AS, &rl) != 0) {
		perror("setrlimit");
		return 1;
	}
	p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		perror("mmap of 64 MiB under a 1 GiB RLIMIT_AS");
		return 1;
	}
	memset(p, 7, n);
	for (i = 0; i < n; i += 4096)
		sum += p[i];
	printf("mapped 64 MiB under a 1 GiB RLIMIT_AS: sum %lu\n", sum);
	return 0;
}
