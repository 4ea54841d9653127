/* kill_midsend.c: a child writing a pipe as fast as it can, ended by SIGTERM from its parent
 * while it writes; the parent then reads what is left and prints the bytes it got.  Every
 * byte the parent read must be in a send event of the child's trace: the death waits for the
 * event of a write whose bytes went (recorder/rec.h, REC_DATA_CALL; record_kill_midsend.sh). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	int p[2], st;
	char buf[4096];
	long total = 0;
	ssize_t n;
	pid_t c;

	if (pipe(p) != 0)
		return 1;
	if ((c = fork()) == 0) {
		close(p[0]);
		memset(buf, 'x', 64);
		for (;;)
			if (write(p[1], buf, 64) != 64)
				_exit(1);
	}
	close(p[1]);
	while (total < 256 * 1024 && (n = read(p[0], buf, sizeof(buf))) > 0)
		total += n;
	kill(c, SIGTERM);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		total += n;
	waitpid(c, &st, 0);
	printf("read %ld bytes, child %s\n", total,
	       WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM ? "killed by SIGTERM" : "ended otherwise");
	return 0;
}
