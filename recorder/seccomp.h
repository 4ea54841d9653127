/*
 * seccomp.h: the seccomp filters a process installed, and what they answer for a given
 * system call (recorder/seccomp.c).  Private to recorder/ (and its unit test): pure code,
 * no system call, no allocation.
 */
#ifndef ENCORE_REC_SECCOMP_H
#define ENCORE_REC_SECCOMP_H

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdint.h>

/* The kernel's limits: BPF_MAXINSNS per filter; all filters of a process together at most
 * 256 KiB of instructions counted with a 4-instruction overhead each (MAX_INSNS_PER_PATH). */
#define REC_BPF_MAXINSNS 4096u
#define REC_SECCOMP_INSNS 32768u
#define REC_SECCOMP_FILTERS 64u

/* Run one classic BPF seccomp program over d, as the kernel does (an instruction it would
 * refuse at install, a jump or a load out of range, makes the program invalid).  0 and
 * *ret = the value it returned, or -1 when the program is invalid. */
int rec_bpf_run(const struct sock_filter *prog, uint32_t len, const struct seccomp_data *d,
                uint32_t *ret);

/* The filters in force, oldest first.  Zeroed is empty. */
struct rec_seccomp_set {
	uint32_t n;     /* filters */
	uint32_t used;  /* instructions stored */
	uint32_t off[REC_SECCOMP_FILTERS], len[REC_SECCOMP_FILTERS];
	struct sock_filter insn[REC_SECCOMP_INSNS];
};

/* Add a filter (a copy of its len instructions): 0, or -1 when the set is full or the
 * program is empty or too long (the kernel refuses it too). */
int rec_seccomp_add(struct rec_seccomp_set *s, const struct sock_filter *prog, uint32_t len);
/* Remove the filter added last (its install failed). */
void rec_seccomp_pop(struct rec_seccomp_set *s);
/* Add the filter strict mode amounts to: read, write, exit and rt_sigreturn only. */
int rec_seccomp_add_strict(struct rec_seccomp_set *s);
/* What every filter together answers for d: the value of highest precedence (the kernel's
 * rule: the lowest action as a signed value, KILL_PROCESS first, ALLOW last).  An invalid
 * filter answers SECCOMP_RET_KILL_PROCESS. */
uint32_t rec_seccomp_eval(const struct rec_seccomp_set *s, const struct seccomp_data *d);
/* 1 when system call nr with arguments a (6, NULL: zeros) from this architecture is let
 * through or fails harmlessly (ALLOW, LOG, ERRNO); 0 when the filters would kill, trap,
 * trace or hand it to a supervisor. */
int rec_seccomp_harmless(const struct rec_seccomp_set *s, int nr, const uint64_t *a);
/* 1 when it is let through (ALLOW, LOG). */
int rec_seccomp_allows(const struct rec_seccomp_set *s, int nr, const uint64_t *a);

#endif
