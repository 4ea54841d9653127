/*
 * seccomp.c: a classic BPF interpreter over struct seccomp_data, the way the kernel runs a
 * seccomp filter (Documentation/userspace-api/seccomp_filter.rst; the instruction set is
 * classic BPF's, restricted as kernel/seccomp.c's seccomp_check_filter restricts it), and the
 * set of filters a process installed.  The recorder asks it, before a filter goes in, what
 * the filters would do to each system call it may make on the program's behalf afterwards
 * (recorder/guard.c; recorder/README.md, "Limits").
 *
 * Pure: no system call, no allocation (the set lives where the caller puts it).
 */
#include <stddef.h>
#include <string.h>
#include <linux/audit.h>
#include <sys/syscall.h>

#include "seccomp.h"

/* The architecture the filters are asked about: this process's. */
#if defined(__x86_64__) && !defined(__ILP32__)
#define REC_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define REC_AUDIT_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define REC_AUDIT_ARCH AUDIT_ARCH_I386
#else
#define REC_AUDIT_ARCH 0u /* unknown: filters that check it see a foreign architecture */
#endif

int rec_bpf_run(const struct sock_filter *prog, uint32_t len, const struct seccomp_data *d,
                uint32_t *ret)
{
	uint32_t A = 0, X = 0, M[BPF_MEMWORDS], pc = 0;

	memset(M, 0, sizeof(M));
	if (len == 0 || len > REC_BPF_MAXINSNS)
		return -1;
	/* classic BPF jumps only forward: at most len steps */
	while (pc < len) {
		const struct sock_filter *f = &prog[pc];
		uint32_t k = f->k, src;

		pc++;
		switch (BPF_CLASS(f->code)) {
		case BPF_LD:
		case BPF_LDX: {
			uint32_t v;

			switch (f->code) {
			case BPF_LD | BPF_W | BPF_ABS:
				if (k >= sizeof(*d) || (k & 3))
					return -1;
				memcpy(&v, (const char *)d + k, sizeof(v));
				break;
			case BPF_LD | BPF_W | BPF_LEN:
			case BPF_LDX | BPF_W | BPF_LEN:
				v = sizeof(*d);
				break;
			case BPF_LD | BPF_IMM:
			case BPF_LDX | BPF_IMM:
				v = k;
				break;
			case BPF_LD | BPF_MEM:
			case BPF_LDX | BPF_MEM:
				if (k >= BPF_MEMWORDS)
					return -1;
				v = M[k];
				break;
			default:
				return -1; /* byte and half-word loads, BPF_IND, BPF_MSH: refused */
			}
			if (BPF_CLASS(f->code) == BPF_LD)
				A = v;
			else
				X = v;
			break;
		}
		case BPF_ST:
		case BPF_STX:
			if (f->code != BPF_ST && f->code != BPF_STX)
				return -1;
			if (k >= BPF_MEMWORDS)
				return -1;
			M[k] = f->code == BPF_ST ? A : X;
			break;
		case BPF_ALU:
			src = BPF_SRC(f->code) == BPF_X ? X : k;
			switch (BPF_OP(f->code)) {
			case BPF_ADD: A += src; break;
			case BPF_SUB: A -= src; break;
			case BPF_MUL: A *= src; break;
			case BPF_DIV:
			case BPF_MOD:
				if (src == 0) {
					if (BPF_SRC(f->code) == BPF_K)
						return -1; /* refused at install */
					*ret = 0; /* the kernel's program returns 0 */
					return 0;
				}
				A = BPF_OP(f->code) == BPF_DIV ? A / src : A % src;
				break;
			case BPF_AND: A &= src; break;
			case BPF_OR: A |= src; break;
			case BPF_XOR: A ^= src; break;
			case BPF_LSH: A = src >= 32 ? 0 : A << src; break;
			case BPF_RSH: A = src >= 32 ? 0 : A >> src; break;
			case BPF_NEG:
				if (BPF_SRC(f->code) != BPF_K)
					return -1;
				A = (uint32_t)-A;
				break;
			default:
				return -1;
			}
			break;
		case BPF_JMP: {
			uint32_t to;

			if (BPF_OP(f->code) == BPF_JA) {
				if (f->code != (BPF_JMP | BPF_JA) || k >= len - pc)
					return -1;
				pc += k;
				break;
			}
			src = BPF_SRC(f->code) == BPF_X ? X : k;
			switch (BPF_OP(f->code)) {
			case BPF_JEQ: to = A == src ? f->jt : f->jf; break;
			case BPF_JGT: to = A > src ? f->jt : f->jf; break;
			case BPF_JGE: to = A >= src ? f->jt : f->jf; break;
			case BPF_JSET: to = (A & src) ? f->jt : f->jf; break;
			default: return -1;
			}
			if ((uint32_t)f->jt >= len - pc || (uint32_t)f->jf >= len - pc)
				return -1;
			pc += to;
			break;
		}
		case BPF_RET:
			if (f->code == (BPF_RET | BPF_K))
				*ret = k;
			else if (f->code == (BPF_RET | BPF_A))
				*ret = A;
			else
				return -1;
			return 0;
		case BPF_MISC:
			if (f->code == (BPF_MISC | BPF_TAX))
				X = A;
			else if (f->code == (BPF_MISC | BPF_TXA))
				A = X;
			else
				return -1;
			break;
		default:
			return -1;
		}
	}
	return -1; /* ran off the end: the kernel wants a RET last */
}

int rec_seccomp_add(struct rec_seccomp_set *s, const struct sock_filter *prog, uint32_t len)
{
	if (len == 0 || len > REC_BPF_MAXINSNS || s->n >= REC_SECCOMP_FILTERS ||
	    len > REC_SECCOMP_INSNS - s->used)
		return -1;
	memcpy(&s->insn[s->used], prog, len * sizeof(*prog));
	s->off[s->n] = s->used;
	s->len[s->n] = len;
	s->used += len;
	s->n++;
	return 0;
}

void rec_seccomp_pop(struct rec_seccomp_set *s)
{
	if (s->n == 0)
		return;
	s->n--;
	s->used = s->off[s->n];
}

int rec_seccomp_add_strict(struct rec_seccomp_set *s)
{
#define ALLOW_NR(nr)                                                                          \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1),                                      \
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
	static const struct sock_filter strict[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		ALLOW_NR(__NR_read),
		ALLOW_NR(__NR_write),
		ALLOW_NR(__NR_exit),
		ALLOW_NR(__NR_rt_sigreturn),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
#undef ALLOW_NR
	return rec_seccomp_add(s, strict, sizeof(strict) / sizeof(strict[0]));
}

/* The action part of a return value, signed: the kernel compares them so. */
static int32_t action_of(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

uint32_t rec_seccomp_eval(const struct rec_seccomp_set *s, const struct seccomp_data *d)
{
	uint32_t best = SECCOMP_RET_ALLOW, i;

	for (i = 0; i < s->n; i++) {
		uint32_t r;

		if (rec_bpf_run(&s->insn[s->off[i]], s->len[i], d, &r) != 0)
			r = SECCOMP_RET_KILL_PROCESS;
		if (action_of(r) < action_of(best))
			best = r;
	}
	return best;
}

static uint32_t eval_call(const struct rec_seccomp_set *s, int nr, const uint64_t *a)
{
	struct seccomp_data d;
	int i;

	memset(&d, 0, sizeof(d));
	d.nr = nr;
	d.arch = REC_AUDIT_ARCH;
	/* instruction_pointer: unknown (0); filters seldom look at it */
	for (i = 0; a && i < 6; i++)
		d.args[i] = a[i];
	return rec_seccomp_eval(s, &d);
}

int rec_seccomp_harmless(const struct rec_seccomp_set *s, int nr, const uint64_t *a)
{
	uint32_t act = eval_call(s, nr, a) & SECCOMP_RET_ACTION_FULL;

	return act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG || act == SECCOMP_RET_ERRNO;
}

int rec_seccomp_allows(const struct rec_seccomp_set *s, int nr, const uint64_t *a)
{
	uint32_t act = eval_call(s, nr, a) & SECCOMP_RET_ACTION_FULL;

	return act == SECCOMP_RET_ALLOW || act == SECCOMP_RET_LOG;
}
