/*
 * test_rec_seccomp.c: the recorder's seccomp filter evaluator (recorder/seccomp.c) against
 * filters built by hand, against the kernel itself (random filters installed in a child,
 * whose answers for getppid with random arguments must be the evaluator's), and against
 * libseccomp's output where libseccomp.so.2 is on the machine (loaded at run time: its
 * headers need not be).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "seccomp.h"
#include "unit.h"

#define NR_OFF offsetof(struct seccomp_data, nr)
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (ARG_LO(i) + 4)

static struct rec_seccomp_set set; /* 256 KiB: not on the stack */

static uint32_t run1(const struct sock_filter *f, uint32_t n, int nr, const uint64_t *a)
{
	struct seccomp_data d;
	uint32_t r = 0xdeadbeef;
	int i;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = 0xc000003e; /* x86-64 */
	for (i = 0; a && i < 6; i++)
		d.args[i] = a[i];
	ck_assert_int_eq(rec_bpf_run(f, n, &d, &r), 0);
	return r;
}

#define N(f) ((uint32_t)(sizeof(f) / sizeof(f[0])))

/* sshd's pre-auth filter in small: errno for openat, allow read/write, mmap with PROT_READ |
 * PROT_WRITE at most, kill the rest. */
static const struct sock_filter sshd_like[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_read, 1, 0),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 4),
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(2)),
	BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, ~(uint32_t)(PROT_READ | PROT_WRITE), 1, 0),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_THREAD),
};

START_TEST(hand_built)
{
	uint64_t rw[6] = { 0, 0, PROT_READ | PROT_WRITE, MAP_SHARED, 3, 0 };
	uint64_t rx[6] = { 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE, 3, 0 };

	ck_assert_uint_eq(run1(sshd_like, N(sshd_like), SYS_read, NULL), SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(run1(sshd_like, N(sshd_like), SYS_write, NULL), SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(run1(sshd_like, N(sshd_like), SYS_openat, NULL),
	                  SECCOMP_RET_ERRNO | EACCES);
	ck_assert_uint_eq(run1(sshd_like, N(sshd_like), SYS_mmap, rw), SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(run1(sshd_like, N(sshd_like), SYS_mmap, rx), SECCOMP_RET_KILL_PROCESS);
	ck_assert_uint_eq(run1(sshd_like, N(sshd_like), SYS_pwrite64, NULL),
	                  SECCOMP_RET_KILL_THREAD);

	memset(&set, 0, sizeof(set));
	ck_assert_int_eq(rec_seccomp_add(&set, sshd_like, N(sshd_like)), 0);
	ck_assert(rec_seccomp_allows(&set, SYS_mmap, rw));
	ck_assert(!rec_seccomp_allows(&set, SYS_mmap, rx));
	ck_assert(!rec_seccomp_allows(&set, SYS_openat, NULL));
	ck_assert(rec_seccomp_harmless(&set, SYS_openat, NULL));
	ck_assert(!rec_seccomp_harmless(&set, SYS_pwrite64, NULL));
	ck_assert(!rec_seccomp_harmless(&set, SYS_process_vm_readv, NULL));
}
END_TEST

START_TEST(instructions)
{
	/* A = nr * 3 + 1, M[2] = A, X = 7, A = X, A = M[2] ^ 0xff, A >>= 1, A -= X, A %= 5,
	 * A |= 0x100, A &= 0x1f0, A <<= 2, A = -A; returned */
	const struct sock_filter alu[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF),
		BPF_STMT(BPF_ALU | BPF_MUL | BPF_K, 3),
		BPF_STMT(BPF_ALU | BPF_ADD | BPF_K, 1),
		BPF_STMT(BPF_ST, 2),
		BPF_STMT(BPF_LDX | BPF_IMM, 7),
		BPF_STMT(BPF_MISC | BPF_TXA, 0),
		BPF_STMT(BPF_LD | BPF_MEM, 2),
		BPF_STMT(BPF_ALU | BPF_XOR | BPF_K, 0xff),
		BPF_STMT(BPF_ALU | BPF_RSH | BPF_K, 1),
		BPF_STMT(BPF_ALU | BPF_SUB | BPF_X, 0),
		BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, 5),
		BPF_STMT(BPF_ALU | BPF_OR | BPF_K, 0x100),
		BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0x1f0),
		BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 2),
		BPF_STMT(BPF_ALU | BPF_NEG, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	/* the high half of arg 1 against X, through JGT/JGE/JA */
	const struct sock_filter cmp[] = {
		BPF_STMT(BPF_LDX | BPF_IMM, 10),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_HI(1)),
		BPF_JUMP(BPF_JMP | BPF_JGT | BPF_X, 0, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_X, 0, 2, 0),
		BPF_STMT(BPF_RET | BPF_K, 1),
		BPF_STMT(BPF_RET | BPF_K, 2),
		BPF_STMT(BPF_JMP | BPF_JA, 1),
		BPF_STMT(BPF_RET | BPF_K, 4),
		BPF_STMT(BPF_RET | BPF_K, 3),
	};
	/* division by X = 0: the program returns 0 (kill thread) */
	const struct sock_filter div0[] = {
		BPF_STMT(BPF_LDX | BPF_IMM, 0),
		BPF_STMT(BPF_LD | BPF_IMM, 9),
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_X, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_filter len[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_LEN, 0),
		BPF_STMT(BPF_RET | BPF_A, 0),
	};
	uint32_t a = 17 * 3 + 1, want;
	uint64_t args[6] = { 0 };

	a = ((a ^ 0xff) >> 1) - 7;
	a %= 5;
	want = (uint32_t) - (((a | 0x100) & 0x1f0) << 2);
	ck_assert_uint_eq(run1(alu, N(alu), 17, NULL), want);
	args[1] = (uint64_t)11 << 32;
	ck_assert_uint_eq(run1(cmp, N(cmp), 0, args), 2);
	args[1] = (uint64_t)10 << 32;
	ck_assert_uint_eq(run1(cmp, N(cmp), 0, args), 3);
	args[1] = 0xffffffffu; /* the low half does not count */
	ck_assert_uint_eq(run1(cmp, N(cmp), 0, args), 1);
	ck_assert_uint_eq(run1(div0, N(div0), 0, NULL), 0);
	ck_assert_uint_eq(run1(len, N(len), 0, NULL), sizeof(struct seccomp_data));
}
END_TEST

START_TEST(invalid_programs)
{
	const struct sock_filter no_ret[] = { BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF) };
	const struct sock_filter far_jump[] = {
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, 5),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_filter unaligned[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, 2),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_filter past_end[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, sizeof(struct seccomp_data)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_filter byte_load[] = {
		BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	const struct sock_filter div_k0[] = {
		BPF_STMT(BPF_ALU | BPF_DIV | BPF_K, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct seccomp_data d;
	uint32_t r;

	memset(&d, 0, sizeof(d));
	ck_assert_int_eq(rec_bpf_run(no_ret, N(no_ret), &d, &r), -1);
	ck_assert_int_eq(rec_bpf_run(far_jump, N(far_jump), &d, &r), -1);
	ck_assert_int_eq(rec_bpf_run(unaligned, N(unaligned), &d, &r), -1);
	ck_assert_int_eq(rec_bpf_run(past_end, N(past_end), &d, &r), -1);
	ck_assert_int_eq(rec_bpf_run(byte_load, N(byte_load), &d, &r), -1);
	ck_assert_int_eq(rec_bpf_run(div_k0, N(div_k0), &d, &r), -1);
	ck_assert_int_eq(rec_bpf_run(no_ret, 0, &d, &r), -1);
	/* in a set, an invalid filter answers kill */
	memset(&set, 0, sizeof(set));
	ck_assert_int_eq(rec_seccomp_add(&set, far_jump, N(far_jump)), 0);
	ck_assert_uint_eq(rec_seccomp_eval(&set, &d), SECCOMP_RET_KILL_PROCESS);
}
END_TEST

static void one_ret(struct sock_filter *f, uint32_t ret)
{
	f[0] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
}

START_TEST(precedence)
{
	/* the kernel's order, strongest first */
	const uint32_t order[] = { SECCOMP_RET_KILL_PROCESS, SECCOMP_RET_KILL_THREAD,
		                   SECCOMP_RET_TRAP, SECCOMP_RET_ERRNO | 5,
		                   SECCOMP_RET_USER_NOTIF, SECCOMP_RET_TRACE, SECCOMP_RET_LOG,
		                   SECCOMP_RET_ALLOW };
	const size_t n = sizeof(order) / sizeof(order[0]);
	struct sock_filter a[1], b[1];
	struct seccomp_data d;
	size_t i, j;

	memset(&d, 0, sizeof(d));
	for (i = 0; i < n; i++)
		for (j = 0; j < n; j++) {
			memset(&set, 0, sizeof(set));
			one_ret(a, order[i]);
			one_ret(b, order[j]);
			ck_assert_int_eq(rec_seccomp_add(&set, a, 1), 0);
			ck_assert_int_eq(rec_seccomp_add(&set, b, 1), 0);
			ck_assert_uint_eq(rec_seccomp_eval(&set, &d), order[i < j ? i : j]);
			rec_seccomp_pop(&set);
			ck_assert_uint_eq(rec_seccomp_eval(&set, &d), order[i]);
		}
	/* harmless and allowed */
	for (i = 0; i < n; i++) {
		int allow = order[i] == SECCOMP_RET_ALLOW || order[i] == SECCOMP_RET_LOG;

		memset(&set, 0, sizeof(set));
		one_ret(a, order[i]);
		ck_assert_int_eq(rec_seccomp_add(&set, a, 1), 0);
		ck_assert_int_eq(rec_seccomp_allows(&set, SYS_getpid, NULL), allow);
		ck_assert_int_eq(rec_seccomp_harmless(&set, SYS_getpid, NULL),
		                 allow || order[i] == (SECCOMP_RET_ERRNO | 5));
	}
	/* strict mode */
	memset(&set, 0, sizeof(set));
	ck_assert_int_eq(rec_seccomp_add_strict(&set), 0);
	ck_assert(rec_seccomp_allows(&set, SYS_read, NULL));
	ck_assert(rec_seccomp_allows(&set, SYS_write, NULL));
	ck_assert(rec_seccomp_allows(&set, SYS_exit, NULL));
	ck_assert(!rec_seccomp_harmless(&set, SYS_exit_group, NULL));
	ck_assert(!rec_seccomp_harmless(&set, SYS_pwrite64, NULL));
	/* limits */
	memset(&set, 0, sizeof(set));
	ck_assert_int_eq(rec_seccomp_add(&set, a, 0), -1);
	for (i = 0; i < REC_SECCOMP_FILTERS; i++)
		ck_assert_int_eq(rec_seccomp_add(&set, a, 1), 0);
	ck_assert_int_eq(rec_seccomp_add(&set, a, 1), -1);
}
END_TEST

/* A random filter over getppid's arguments whose every answer is ERRNO(k) or ALLOW, built
 * from conditional jumps on random words of seccomp_data. */
static uint32_t random_filter(struct unit_rng *r, struct sock_filter *f)
{
	uint32_t n = 0, i, body = 4 + (uint32_t)unit_rng_below(r, 12);
	static const uint16_t ops[] = { BPF_JEQ, BPF_JGT, BPF_JGE, BPF_JSET };

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, NR_OFF);
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (i = 0; i < body; i++) {
		uint32_t left = body - i; /* instructions after this one in the body, this included */
		uint32_t word = (uint32_t)unit_rng_below(r, 12);

		switch (unit_rng_below(r, 4)) {
		case 0:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			                                      ARG_LO(0) + 4 * word);
			break;
		case 1:
			f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
			                                      unit_rng_below(r, 3) ?
			                                      SECCOMP_RET_ERRNO | (1 + i) :
			                                      SECCOMP_RET_ALLOW);
			break;
		default: {
			uint32_t k = unit_rng_below(r, 2) ? (uint32_t)unit_rng_below(r, 8) :
			                                    (uint32_t)unit_rng_next(r);

			f[n++] = (struct sock_filter)BPF_JUMP(
				BPF_JMP | ops[unit_rng_below(r, 4)] | BPF_K, k,
				(uint8_t)unit_rng_below(r, left), (uint8_t)unit_rng_below(r, left));
		}
		}
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 99);
	return n;
}

START_TEST(against_the_kernel)
{
	struct unit_rng r;
	int round;

	unit_rng_seed(&r, unit_seed());
	for (round = 0; round < 40; round++) {
		struct sock_filter f[32];
		uint32_t n = random_filter(&r, f), want[16];
		uint64_t args[16][6];
		int fds[2], i, st;
		pid_t pid;

		for (i = 0; i < 16; i++) {
			int j;

			for (j = 0; j < 6; j++)
				args[i][j] = unit_rng_below(&r, 2) ? unit_rng_below(&r, 8) :
				             unit_rng_next(&r);
			memset(&set, 0, sizeof(set));
			ck_assert_int_eq(rec_seccomp_add(&set, f, n), 0);
			{
				struct seccomp_data d;

				memset(&d, 0, sizeof(d));
				d.nr = SYS_getppid;
				d.arch = 0xc000003e;
				memcpy(d.args, args[i], sizeof(d.args));
				want[i] = rec_seccomp_eval(&set, &d);
			}
		}
		ck_assert_int_eq(pipe(fds), 0);
		pid = fork();
		ck_assert_int_ge(pid, 0);
		if (pid == 0) {
			struct sock_fprog prog = { (unsigned short)n, f };
			int got[16];

			if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
			    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
				_exit(77);
			for (i = 0; i < 16; i++) {
				long v = syscall(SYS_getppid, args[i][0], args[i][1], args[i][2],
				                 args[i][3], args[i][4], args[i][5]);

				got[i] = v < 0 ? errno : 0;
			}
			_exit(write(fds[1], got, sizeof(got)) == (ssize_t)sizeof(got) ? 0 : 1);
		}
		close(fds[1]);
		{
			int got[16];

			ck_assert_int_eq(waitpid(pid, &st, 0), pid);
			ck_assert(WIFEXITED(st));
			if (WEXITSTATUS(st) == 77) {
				close(fds[0]);
				return; /* no seccomp here (an old kernel, a container's policy) */
			}
			ck_assert_int_eq(read(fds[0], got, sizeof(got)), (ssize_t)sizeof(got));
			for (i = 0; i < 16; i++) {
				int exp = (want[i] & SECCOMP_RET_ACTION_FULL) == SECCOMP_RET_ERRNO ?
				          (int)(want[i] & SECCOMP_RET_DATA) : 0;

				ck_assert_msg(got[i] == exp,
				              "round %d call %d: the kernel answered %d, the evaluator %d",
				              round, i, got[i], exp);
			}
		}
		close(fds[0]);
	}
}
END_TEST

/* --- libseccomp, loaded at run time ---------------------------------------------------- */

struct scmp_arg_cmp {
	unsigned int arg;
	int op;
	uint64_t datum_a, datum_b;
};
#define SCMP_CMP_EQ 4
#define SCMP_CMP_MASKED_EQ 7
#define SCMP_ACT_ALLOW 0x7fff0000u
#define SCMP_ACT_KILL_PROCESS 0x80000000u
#define SCMP_ACT_ERRNO(x) (0x00050000u | ((x) & 0x0000ffffu))

START_TEST(against_libseccomp)
{
	void *lib = dlopen("libseccomp.so.2", RTLD_NOW);
	void *(*init)(uint32_t);
	int (*rule)(void *, uint32_t, int, unsigned int, ...);
	int (*export_bpf)(void *, int);
	void (*release)(void *);
	struct sock_filter f[REC_BPF_MAXINSNS];
	struct scmp_arg_cmp prot = { 2, SCMP_CMP_MASKED_EQ, ~(uint64_t)(PROT_READ | PROT_WRITE), 0 };
	struct scmp_arg_cmp fd1 = { 0, SCMP_CMP_EQ, 1, 0 };
	uint64_t rw[6] = { 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, 0, 0 };
	uint64_t rx[6] = { 0, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, 0, 0 };
	uint64_t on1[6] = { 1, 0, 5 }, on2[6] = { 2, 0, 5 };
	void *ctx;
	ssize_t n;
	int fd, nr;

	if (!lib)
		return; /* not on this machine: the other tests stand */
	*(void **)&init = dlsym(lib, "seccomp_init");
	*(void **)&rule = dlsym(lib, "seccomp_rule_add");
	*(void **)&export_bpf = dlsym(lib, "seccomp_export_bpf");
	*(void **)&release = dlsym(lib, "seccomp_release");
	ck_assert(init && rule && export_bpf && release);
	ctx = init(SCMP_ACT_KILL_PROCESS);
	ck_assert_ptr_nonnull(ctx);
	ck_assert_int_eq(rule(ctx, SCMP_ACT_ALLOW, SYS_read, 0), 0);
	ck_assert_int_eq(rule(ctx, SCMP_ACT_ALLOW, SYS_poll, 0), 0);
	ck_assert_int_eq(rule(ctx, SCMP_ACT_ERRNO(EACCES), SYS_openat, 0), 0);
	ck_assert_int_eq(rule(ctx, SCMP_ACT_ALLOW, SYS_mmap, 1, prot), 0);
	ck_assert_int_eq(rule(ctx, SCMP_ACT_ALLOW, SYS_write, 1, fd1), 0);
	fd = (int)syscall(SYS_memfd_create, "bpf", 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(export_bpf(ctx, fd), 0);
	release(ctx);
	n = pread(fd, f, sizeof(f), 0);
	close(fd);
	ck_assert_int_gt(n, 0);
	ck_assert_int_eq(n % (ssize_t)sizeof(f[0]), 0);
	memset(&set, 0, sizeof(set));
	ck_assert_int_eq(rec_seccomp_add(&set, f, (uint32_t)(n / (ssize_t)sizeof(f[0]))), 0);
	for (nr = 0; nr < 450; nr++) {
		int allowed = nr == SYS_read || nr == SYS_poll;

		if (nr == SYS_mmap || nr == SYS_write || nr == SYS_openat)
			continue;
		ck_assert_msg(rec_seccomp_allows(&set, nr, NULL) == allowed, "syscall %d", nr);
		ck_assert_msg(rec_seccomp_harmless(&set, nr, NULL) == allowed, "syscall %d", nr);
	}
	ck_assert(rec_seccomp_allows(&set, SYS_mmap, rw));
	ck_assert(!rec_seccomp_harmless(&set, SYS_mmap, rx));
	ck_assert(rec_seccomp_allows(&set, SYS_write, on1));
	ck_assert(!rec_seccomp_harmless(&set, SYS_write, on2));
	ck_assert(!rec_seccomp_allows(&set, SYS_openat, NULL));
	ck_assert(rec_seccomp_harmless(&set, SYS_openat, NULL));
	dlclose(lib);
}
END_TEST

static Suite *rec_seccomp_suite(void)
{
	Suite *s = suite_create("rec_seccomp");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, hand_built);
	tcase_add_test(tc, instructions);
	tcase_add_test(tc, invalid_programs);
	tcase_add_test(tc, precedence);
	tcase_add_test(tc, against_the_kernel);
	tcase_add_test(tc, against_libseccomp);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(rec_seccomp_suite)
