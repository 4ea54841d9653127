/*
 * replay_pids.c: a program that uses process ids, for the replayer's tests (replayer/README.md:
 * getpid returns the recorded value, so kill, waitpid and fork must agree with it).
 *
 *   replay_pids
 *
 * The root ("pid") prints its pid and forks three children, printing the pids fork gave.
 * Each child sends the root a line with its pid and its parent's (the root prints it: one
 * process writes stdout), then
 *   pid.1  signals the parent (kill(getppid(), SIGUSR1)) and exits with status 7;
 *   pid.2  waits for SIGTERM (sigwait) and exits with status 15;
 *   pid.3  waits for SIGUSR2 (sigwait) and exits with status 3.
 * The root waits for pid.1's signal, checks pid.2 exists (kill(pid, 0)), signals it
 * (sigqueue), opens a pidfd on pid.3 and signals it (tgkill), and reaps the three with
 * waitpid(pid.1), waitid(P_PID, pid.2) and wait(),
 * printing every pid the kernel gave back.  Then it forks pid.4 (exit status 4) and execs
 * itself as `replay_pids waitfor PID`: the new image reaps pid.4 by the pid fork gave the
 * old one.  A replay whose pids disagree with the recorded ones signals nobody (and hangs: a
 * stall report) or prints other numbers.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	sigset_t set;
	pid_t kid[4], r;
	siginfo_t si;
	int st, sig, p[2];
	char line[128];
	ssize_t n;

	if (argc == 3 && strcmp(argv[1], "waitfor") == 0) {
		pid_t want = (pid_t)atoi(argv[2]);

		r = waitpid(want, &st, 0);
		printf("new image: waitpid(%d) = %d, exit %d\n", (int)want, (int)r,
		       r > 0 && WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return 0;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	printf("root: pid %d\n", (int)getpid());
	fflush(stdout);
	if (pipe(p) != 0)
		return 1;
	for (int i = 0; i < 3; i++) {
		kid[i] = fork();
		if (kid[i] < 0)
			return 1;
		if (kid[i] == 0) {
			int len = snprintf(line, sizeof(line), "pid.%d: pid %d, parent %d\n", i + 1,
			                   (int)getpid(), (int)getppid());

			if (write(p[1], line, (size_t)len) != len)
				_exit(89);
			if (i == 0) {
				if (kill(getppid(), SIGUSR1) != 0)
					_exit(90);
				_exit(7);
			}
			if (i == 1) {
				sigset_t term;

				sigemptyset(&term);
				sigaddset(&term, SIGTERM);
				if (sigwait(&term, &sig) != 0)
					_exit(91);
				_exit(sig);
			}
			{
				sigset_t usr2;

				sigemptyset(&usr2);
				sigaddset(&usr2, SIGUSR2);
				if (sigwait(&usr2, &sig) != 0)
					_exit(92);
			}
			_exit(3);
		}
		printf("root: forked pid.%d = %d\n", i + 1, (int)kid[i]);
		if ((n = read(p[0], line, sizeof(line) - 1)) <= 0)
			return 1;
		line[n] = '\0';
		printf("root: heard %s", line);
		fflush(stdout);
		if (i == 0) {
			sigset_t usr1;

			sigemptyset(&usr1);
			sigaddset(&usr1, SIGUSR1);
			if (sigwait(&usr1, &sig) != 0)
				return 1;
			printf("root: signal %d from a child\n", sig);
		}
	}
	printf("root: pid.2 exists: %s\n", kill(kid[1], 0) == 0 ? "yes" : "no");
	if (sigqueue(kid[1], SIGTERM, (union sigval){ .sival_int = 1 }) != 0)
		return 1;
	{
		int pfd = pidfd_open(kid[2], 0);

		printf("root: pidfd_open(pid.3): %s\n", pfd >= 0 ? "ok" : "failed");
		if (pfd >= 0)
			close(pfd);
	}
	if (tgkill(kid[2], kid[2], SIGUSR2) != 0)
		return 1;
	r = waitpid(kid[0], &st, 0);
	printf("root: waitpid(%d) = %d, exit %d\n", (int)kid[0], (int)r, WEXITSTATUS(st));
	si.si_pid = 0;
	if (waitid(P_PID, (id_t)kid[1], &si, WEXITED) != 0)
		return 1;
	printf("root: waitid(%d): pid %d, exit %d\n", (int)kid[1], (int)si.si_pid, si.si_status);
	r = wait(&st);
	printf("root: wait() = %d (pid.3 is %d), exit %d\n", (int)r, (int)kid[2], WEXITSTATUS(st));
	kid[3] = fork();
	if (kid[3] < 0)
		return 1;
	if (kid[3] == 0)
		_exit(4);
	printf("root: forked pid.4 = %d, exec\n", (int)kid[3]);
	fflush(stdout);
	snprintf(line, sizeof(line), "%d", (int)kid[3]);
	execl(argv[0], argv[0], "waitfor", line, (char *)NULL);
	return 1;
}
