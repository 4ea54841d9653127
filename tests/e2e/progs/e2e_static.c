/* e2e_static.c: a statically linked program, which `encore record` must refuse to run (the
 * recorder is a preloaded library: a static binary would run unrecorded).  If it ever runs,
 * it leaves a file behind to say so. */
#include <fcntl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc > 1)
		close(open(argv[1], O_WRONLY | O_CREAT, 0600));
	return 0;
}
