/*
 * gd_internal.h: what the files of the global debugger share (gd.c, gd_proc.c, gd_msg.c,
 * gd_halt.c, gd_stall.c); private to replayer/, never installed.
 *
 * struct rep is the GD of one replay (Manabe & Imase section 2.2): the session's processes
 * (struct gd_proc, one per logical process of the recording), the control socket, the
 * status board (proto.h) and the halting mode.  Functions named rep__* are the GD's internal
 * calls between its files; rep_* (rep.h) are its public face.
 */
#ifndef ENCORE_GD_INTERNAL_H
#define ENCORE_GD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "ana.h"
#include "proto.h"
#include "rep.h"

struct gd_proc {
	char name[TRACE_NAME_MAX];
	char parent[TRACE_NAME_MAX];
	char exe[4096];
	char cwd[4096];
	char host_id[64];       /* the trace's META_HOST_ID: its host's namespace (gd_isolate.c) */
	char **argv;
	uint32_t argc;
	char **env;      /* the environment its first image started with (NULL: not recorded) */
	uint32_t envc;
	uint64_t nevents;
	uint64_t fork_index;    /* index of the FORK event in the parent, 0 for a root */
	int ana;                /* process number in the analyzer */
	uint64_t target;        /* REP_NO_TARGET: run to the end */
	long pid;
	long rec_pid;           /* its pid in the recorded run */
	int64_t rec_t0;         /* the recorded wall clock at its trace's start (ns) */
	int conn;               /* control connection, -1 when none */
	int started, halted, done, gone, reaped;
	int execing;            /* said EXEC: its connection ends, its new image says HELLO */
	uint32_t spawns;        /* children started inside libc so far (PARENT.sK) */
	uint64_t index;         /* last state reported */
	int wait_status;
	char *backtrace;
	int bt_resolved;        /* backtrace resolved by rep__symbolize since the halt */
	char *terms;            /* at a halt: "TERM = VALUE" lines of its simple predicate */
	/* online protocol */
	char sp_text[1024];     /* its simple predicate, "" for a passive process */
	char peers[1024];       /* "PEER:c1,c2;..." channels per peer named by sent(P)/received(P) */
	uint64_t need;          /* the state it must reach: sends others asked for */
	uint32_t reason;        /* of the last halt: enum rep_halt_reason */
	int sp_at_end;          /* DONE said its predicate holds in its final state */
	int free_running;       /* DONE said: killed here when recorded, runs free until killed */
	int killed_rec;         /* its trace ends without exit, never closed: SIGKILL */
	uint64_t req_k;         /* markers: a receive answered GO, not known to be done */
	struct gd_proc *req_q;  /* ... its sender */
	uint64_t req_j;         /* ... and the sender's send event */
	uint64_t released;      /* 1 + the state whose readiness wait was released last */
	char **lp_sp;           /* linked predicate, online: its simple predicate in each step
	                           (NULL where it has none) */
	int lp_named;           /* named in some step: its LC keeps the counters from the start */
	int ports[256];         /* local TCP ports of its latest connects in this replay, oldest
	                           first, each once and in one process only (gd_msg.c) */
	uint64_t port_ev[256];  /* the connect event each came from (0: unknown) */
	size_t nports;
	uint64_t acc_wait;      /* the accept event it waits at for a connection the GD may
	                           hold (REP_MSG_HOLD answered STOP), 0 for none */
	struct gd_proc *acc_by[2]; /* as a client: up to two of the processes that accepted its
	                           connects when recorded (gd_msg.c, filled once) */
	struct trace_layout layout; /* its first image's address layout (gd_proc.c) */
	int has_layout;
};

/* A trace point: set on every image of process `proc` (gd_debug.c). */
struct gd_trace {
	int id;
	char proc[TRACE_NAME_MAX];
	char *text;             /* "C\x1eE" (proto.h, REP_MSG_TRACE) */
};

/* An accept whose peer cannot be told yet (its connect's port not reported yet). */
struct gd_accept {
	struct gd_proc *server;
	uint64_t k;
	int port;
};

/* A connection a process accepted in the replay that another process accepted when recorded
 * (a listening socket shared across fork): held here until that process's accept asks for
 * it (REP_MSG_HOLD, gd_msg.c). */
struct gd_held {
	int fd;
	long pid;               /* its peer: SO_PEERCRED pid (Unix) or 0 */
	int port;               /* its peer's TCP port or 0 */
};

enum gd_mode { GD_OFFLINE = 0, GD_ONLINE = 1, GD_MARKERS = 2 };

/* An object (executable, shared library) an image recorded with address space randomisation
 * off mapped: bind-mounted over the replay's overlay (gd_isolate.c, layout_bind). */
struct gd_layout_obj {
	char host[64];
	char *path;
};

struct rep {
	char dir[4096];
	char lib[4096];
	struct gd_layout_obj *layout_objs; /* of the images recorded with --same-layout */
	size_t nlayout_objs;
	int same_layout;        /* some image was recorded with randomisation off */
	struct rep_options opt;
	struct gd_proc *procs;
	size_t nprocs;
	struct ana_session *ana;
	int lfd;                /* listening control socket */
	int cdir;               /* DIR/.encore-replay, checked ours (gd.c), or -1 */
	struct rep_slot *board;
	long pgid;
	int started;
	int killed;
	char message[8192];
	/* connections not yet matched to a process (before HELLO) */
	int pending[256];
	size_t npending;
	uint64_t last_progress;
	struct timespec last_change;
	enum gd_mode mode;
	struct gd_proc *fired;  /* markers: the process whose simple predicate held first */
	struct gd_accept accepts[64];
	size_t naccepts;
	struct gd_held held[64];
	size_t nheld;
	int acc_scanned;        /* every process's acc_by filled */
	size_t lp_n;            /* linked predicate, online: its steps (0: not linked) */
	size_t lp_stage;        /* the step being detected */
	int never;              /* online: the last halt found that the predicate never holds */
	struct gd_trace *traces;/* trace points (`encore debug`; gd_debug.c) */
	size_t ntraces;
	struct rep_traced *hits;/* what they reported since rep_traced_clear */
	size_t nhits, caphits;
	struct gd_iso *iso;     /* isolation and packed files (gd_isolate.c), or NULL */
	struct gd_created *created; /* paths the recording created (gd_created.c), or NULL */
	char warnings[2048];    /* the LCs' REP_MSG_WARN, "NAME: TEXT; ..." (rep_warnings) */
};

/* gd.c */
void rep__diag_set(struct trace_diag *d, int code, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
struct gd_proc *rep__by_name(struct rep *r, const char *name);  /* NULL: none */
struct gd_proc *rep__by_pid(struct rep *r, long pid);
int rep__make_control(struct rep *r, struct trace_diag *d);     /* DIR/.encore-replay/ */
void rep__note_change(struct rep *r);                           /* something moved: no stall */

/* gd_proc.c */
void rep__reap(struct rep *r);                  /* every child that ended, without waiting */
int rep__children_left(void);
int rep__finish_check(struct rep *r);           /* REP_END, or REP_FAILED with the message */

/* gd_msg.c */
void rep__accept_peers(struct rep *r);
/* One message from a connection; 0, or -1 when the connection ended. */
int rep__handle(struct rep *r, int fd, struct gd_proc **pp, int *outcome);
struct gd_proc *rep__expected_client(struct rep *r, struct gd_proc *srv, uint64_t k);

/* gd_debug.c */
void rep__send_traces(struct rep *r, struct gd_proc *p, int fd);  /* before its CONFIG */
void rep__on_traced(struct rep *r, struct gd_proc *p, const struct rep_msg *m);
void rep__traces_free(struct rep *r);                           /* rep_close */

/* gd_halt.c */
uint64_t rep__cur_index(struct rep *r, struct gd_proc *p);      /* its state index now */
uint64_t rep__start_floor(struct rep *r, struct gd_proc *p);
uint64_t rep__find_event(struct rep *r, struct gd_proc *p, uint64_t from, uint64_t to,
                         uint32_t ch, uint32_t kind, struct ana_event *out);
void rep__on_request(struct rep *r, struct gd_proc *p, uint64_t k);
void rep__on_halted(struct rep *r, struct gd_proc *p);
void rep__release_markers(struct rep *r, struct gd_proc *q);
void rep__release_ready(struct rep *r);
int rep__all_halted(struct rep *r);
int rep__online_outcome(struct rep *r);
int rep__lp_advance(struct rep *r);             /* -1: go on; else an outcome */
void rep__offline_here(struct rep *r);          /* after an online halt: targets again */

/* symbols.c: the LC's backtrace text of halted process pid with functions, files and lines
 * (libdw); NULL when it cannot (keep the LC's). */
char *rep__symbolize(long pid, const char *raw);

/* gd_isolate.c: the pack's manifest (rep_open), the namespaces of each host (rep_start), a
 * root entering its host's (in the forked child: 0 or -errno), their end (rep_close) */
int rep__pack_load(struct rep *r, struct trace_diag *d);
int rep__pack_object(const struct rep *r, const char *host, const char *path, char *out,
                     size_t cap);                   /* 1: out is the packed copy of path */
int rep__iso_setup(struct rep *r, struct trace_diag *d);
int rep__iso_enter(const struct rep *r, const struct gd_proc *p);
void rep__iso_free(struct rep *r);
/* gd_created.c: the paths the recording created, hidden from the replay.  _add takes an image's
 * path records (its reader read to the end); _plan decides what to hide (once, before the
 * namespaces); _paths lists a host's, parents first (returns how many; up to cap in out,
 * and in to the old name to rename each back to, or NULL to hide it); _count adds a
 * helper's counts. */
int rep__created_add(struct rep *r, struct trace_reader *rd, const char *host);
int rep__created_plan(struct rep *r);
size_t rep__created_paths(const struct rep *r, const char *host, const char **out,
                          const char **to, size_t cap);
void rep__created_count(struct rep *r, size_t hidden, size_t not_hidden, size_t restored);
void rep__created_free(struct rep *r);
/* 1 when a process of the session created path (a file, or a name made by rename or link),
 * as recorded (before _plan). */
int rep__created_has(const struct rep *r, const char *path);
/* gd_files.c: the regular files the recorded processes read, against the file system: 0
 * when each is as it was (or the session is packed: DIR/pack/manifest); TRACE_EINVAL naming
 * the first that changed ("FILE changed since the recording (size)") or TRACE_EIO for one
 * that cannot be read.  rep_open calls it, after every trace was read, unless
 * ignore_changed_files. */
int rep__check_files(const struct rep *r, struct trace_diag *diag);

/* gd_stall.c */
uint64_t rep__board_sum(struct rep *r);
void rep__describe_event(struct rep *r, struct gd_proc *p, uint64_t k, char *buf, size_t cap);
void rep__stall_report(struct rep *r);

#endif
