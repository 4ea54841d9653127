/*
 * proto.h: what the global debugger (gd.c, inside `encore replay`) and the local controllers
 * (lc*.c, libencore-replay.so, one inside each replayed process) share.  Private to
 * replayer/, never installed.
 *
 * Manabe & Imase section 2.2: one local controller LC_i per process, one global debugger GD
 * that starts the processes and coordinates the halt.  Two channels between them:
 *
 *   - the control socket: DIR/.encore-replay/ctl, an AF_UNIX SOCK_SEQPACKET socket (mode
 *     0600 inside a 0700 directory; the GD checks SO_PEERCRED of every peer).  One
 *     connection per process image; messages are struct rep_msg, one per packet.
 *   - the status board: DIR/.encore-replay/status, a shared file of struct rep_slot, one
 *     per process, which an LC updates with plain stores on every event (no system call on
 *     the hot path) and the GD reads to detect a replay that makes no progress and to say
 *     who waits for what.
 *
 * The LC learns where they are from one environment variable, ENCORE_REPLAY (below).
 */
#ifndef ENCORE_REP_PROTO_H
#define ENCORE_REP_PROTO_H

#include <stdint.h>

#include "trace.h"

#define REP_ENV "ENCORE_REPLAY"
#define REP_SUBDIR ".encore-replay"
#define REP_CTL "ctl"
#define REP_STATUS "status"

/* ENCORE_REPLAY=v=1;name=NAME;seg=S;first=F;dir=/abs/session  (dir last: it may hold ';').
 * seg/first are for an image after exec (not replayed yet: the LC reports it). */

#define REP_NO_TARGET UINT64_MAX

/* The header of a shared pipe's or socket's staging file (replayer/lc_chan.c). */
#define REP_SHARE_HDR 4096

/* REP_MSG_DIVERGED's flag: the user's predicate, not the replay, is at fault. */
#define REP_DIVERGED_PRED 1u

enum rep_msg_type {
	/* LC -> GD */
	REP_MSG_HELLO = 1,    /* a = pid, text = logical name; flags = 1: a child started inside
	                         libc (system, popen), text = its parent's name: the GD names it
	                         PARENT.sK (K counted per parent, as the recorder does) and says
	                         so with NAME before CONFIG */
	REP_MSG_HALTED = 2,   /* a = state index, b = enum rep_halt_reason, text = backtrace */
	REP_MSG_DIVERGED = 3, /* a = event index, text = what was expected and what happened;
	                         flags = REP_DIVERGED_PRED: no divergence, the halting
	                         predicate names what this process lacks (a var. term) */
	REP_MSG_DONE = 4,     /* a = state index at exit, b = exit status, flags = 1 when the
	                         process's simple predicate holds in its final state */
	REP_MSG_REQ = 5,      /* online: a = index of the receive about to be made; the GD makes
	                         sure its sender will send (Manabe & Imase 3.2), then answers */
	REP_MSG_EXEC = 8,     /* the process is about to exec: its connection will end, its new
	                         image will say HELLO again (same pid) */
	REP_MSG_CONNECTED = 6,/* a connect succeeded: a = local TCP port (0 for Unix sockets),
	                         b = the connect's event number */
	REP_MSG_TRACED = 9,   /* a trace point's condition became true (`encore debug`): a = the
	                         state index, b = the value of its term there, flags = its id */
	REP_MSG_ACCEPTED = 7, /* is this the recorded peer of accept event a?  b = the peer's pid
	                         (SO_PEERCRED, Unix sockets; 0 else), flags = its TCP port (0 for
	                         none); answered GO (yes), STOP (no: keep it for later) or STOP
	                         with a = 1 (another process accepted it when recorded: give it to
	                         the GD, REP_MSG_HOLD with flags 1) */
	REP_MSG_HOLD = 10,    /* accepts on a listening socket shared across fork.  flags = 0:
	                         does the GD hold the connection of accept event a?  answered GO
	                         with the descriptor attached (SCM_RIGHTS), or STOP: not yet, and
	                         while the LC waits at that accept the GD sends it, GO with flags
	                         1 and the descriptor, when it comes (the answer to an ACCEPTED
	                         meanwhile is GO or STOP with flags 0).  flags = 1: the descriptor
	                         attached is a connection another process accepted when recorded:
	                         the GD holds it (no answer) */
	REP_MSG_SHAREFILE = 26,/* a = a shared pipe's or socket's key, b = 0 out, 1 in, 2 sem: the
	                         LC may no longer open its staging file (a program that changed
	                         user); the GD opens it and answers GO with the descriptor, or
	                         STOP */
	REP_MSG_WARN = 25,    /* text = something the replay of this process could not do as
	                         recorded, which it did otherwise (rep_warnings) */
	REP_MSG_DGRAM = 14,   /* is receive event a a datagram from a recorded process (the
	                         analyzer matched it to a send)?  answered GO (yes: wait for it on
	                         the socket) or STOP (no: outside input, given from the trace) */
	/* GD -> LC */
	REP_MSG_CONFIG = 16,  /* a = slot, b = target (offline) or floor (online), flags =
	                         REP_CF_*, text = the process's simple predicate or "" */
	REP_MSG_CONT = 17,    /* leave the halt; a = new target or floor (REP_NO_TARGET: to the
	                         end, nothing more to check) */
	REP_MSG_GO = 18,      /* answer to REQ: receive */
	REP_MSG_NAME = 20,    /* text = the logical name the GD gave a spawned child */
	REP_MSG_STOP = 19,    /* answer to REQ, or while waiting for bytes: a halt marker is there
	                         (Miller & Choi 2.2): halt before this receive */
	REP_MSG_STAGE = 22,   /* a linked predicate's next step (Miller & Choi 3.6): leave the
	                         halt with text = the process's simple predicate in it ("" for
	                         none: passive) and a = its floor */
	REP_MSG_RELEASE = 21, /* a = the state index of an LC waiting for the data behind a
	                         readiness result (board: wait_kind READY): no running process
	                         is left to send it (a halt): give the recorded result now; or
	                         waiting at a connect for its server to listen (wait_kind
	                         CONNECT): connect to a stand-in, whose end goes to the GD
	                         (HOLD, flags 1) for the server's accept */
	REP_MSG_MODE = 23,    /* leave the halt in another halting mode (`encore debug` moving on
	                         from a halt): flags = REP_CF_ONLINE: the online protocol from
	                         here, text = the process's simple predicate ("" for none:
	                         passive), a = its floor; flags = 0: offline again, a = target,
	                         the predicate dropped */
	REP_MSG_TRACE = 24,   /* a trace point on this process (`encore debug`): a = 1, flags = its
	                         id, text = "C\x1eE", its condition and its term as the first
	                         term of a simple predicate; a = 0: remove trace point `flags`
	                         (0: all).  Only to a halted LC, or before CONFIG */
};

/* CONFIG flags. */
#define REP_CF_ONLINE 0x1u   /* the online protocol: halt at the first state >= floor where
                                the simple predicate holds (passive: at floor); ask (REQ)
                                before every receive from a recorded peer */

enum rep_halt_reason {
	REP_HALT_TARGET = 0,  /* the target or floor state was reached (passive) */
	REP_HALT_SP = 1,      /* the simple predicate holds */
	REP_HALT_MARKER = 2,  /* a halt marker arrived (the sender of the next receive halted) */
};

#define REP_TEXT_MAX 3072

struct rep_msg {
	uint32_t type;
	uint32_t len;         /* bytes used in text, without the NUL */
	int64_t a, b;
	uint32_t flags;
	uint32_t pad;
	char text[REP_TEXT_MAX];
};

/* What an LC is doing, for the status board. */
enum rep_slot_state {
	REP_SLOT_FREE = 0,
	REP_SLOT_RUNNING = 1,  /* between events, in the program's own code */
	REP_SLOT_WAITING = 2,  /* blocked for the outside world: wait_* say on what */
	REP_SLOT_HALTED = 3,
	REP_SLOT_DONE = 4,
	REP_SLOT_DIVERGED = 5,
};

#define REP_SLOTS_MAX 1024

struct rep_slot {
	volatile int32_t pid;
	volatile uint32_t state;      /* enum rep_slot_state */
	volatile uint64_t index;      /* events executed: the state index */
	volatile uint64_t progress;   /* bumped on every byte batch moved while waiting */
	volatile uint32_t wait_kind;  /* enum trace_kind of the event it waits to complete */
	volatile int32_t wait_fd;
	volatile uint32_t wait_chan;
	volatile int32_t rec_pid;     /* the process's pid in the recorded run (the GD writes it,
	                                 and pid at HELLO: LCs translate pids through the board) */
	volatile uint64_t wait_len;   /* bytes still missing */
	volatile int32_t fatal_sig;   /* the signal the recorded process died of, in whichever
	                                 image (the GD writes it; 0: it did not): its LC catches
	                                 it until its recorded death point (lc_signals.c) */
	volatile uint32_t dgram_other; /* datagrams that arrived while a receive waited and
	                                  matched no recorded one (lc_chan.c, dgram_wait): said by
	                                  the stall report */
	volatile uint32_t dgram_other_len; /* the last one's size */
};

/* The framing, one packet per message (proto.c, both sides).  rep_proto_send: 0, or -1 with
 * errno (the text is cut at REP_TEXT_MAX - 1 bytes).  rep_proto_recv: the packet's length
 * (at least the header; m->text NUL-terminated), or -1 with errno: EAGAIN or EINTR (try
 * again), EPIPE (the peer closed, or a short packet), or the system's. */
int rep_proto_send(int fd, uint32_t type, int64_t a, int64_t b, uint32_t flags,
                   const char *text);
long rep_proto_recv(int fd, struct rep_msg *m, int flags);

#endif
