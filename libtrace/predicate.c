/*
 * predicate.c: the predicate language of encore (schemas/predicates.md is the contract).
 *
 * A hand-written recursive-descent parser turns the text into a tree whose every node lives
 * in one arena owned by the struct trace_pred, so freeing is one walk over a few blocks and
 * no error path can leak.  The tree is then flattened (associative && / || / -> chains),
 * simple predicates of one conjunction naming the same process are merged, and the result is
 * classified by shape and exposed in the normal form the analyzer and the replayer consume:
 * a chain of disjunctive predicates (DP), each a list of conjunctions (CP) of simple
 * predicates (SP), as in Miller & Choi, sections 3.2 to 3.4.
 *
 * A LOCAL condition (the part after `PROC:`) is a small typed expression: integer terms,
 * comparisons, and/or/not.  It is evaluated through a caller-supplied term callback so the
 * offline analyzer (values from the trace) and the live replayer (values from the process,
 * needed for var.SYMBOL as in Manabe & Imase's local controller) share one evaluator.
 *
 * Nothing here prints or exits; parse errors fill a struct trace_diag with the column.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* Bounds that keep every recursion (parser, formatter, evaluator) shallow enough for the
 * default stack even under ASan, whatever text a user or a fuzzer passes. */
#define PRED_MAX_TEXT 65536  /* bytes of predicate text */
#define PRED_MAX_NEST 128    /* nested parentheses, `not`s and unary minuses */
#define PRED_MAX_HEIGHT 1000 /* height of one LOCAL expression tree (long and-chains) */
#define PRED_NAME_MAX (TRACE_NAME_MAX - 1)
#define PRED_IDENT_MAX 255   /* KEY, SYMBOL, FUNCTION */

/* ---------------------------------------------------------------------------------------
 * Arena: every object of one predicate, released together by trace_pred_free.
 */
struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct arena_blk *head;
};

static void *arena_alloc(struct arena *a, size_t size)
{
	const size_t align = _Alignof(max_align_t);
	struct arena_blk *b = a->head;
	void *ptr;

	size = (size + align - 1) & ~(align - 1);
	if (!b || b->cap - b->used < size) {
		size_t cap = size > 4000 ? size : 4000;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = a->head;
		b->used = 0;
		b->cap = cap;
		a->head = b;
	}
	ptr = (unsigned char *)b->data + b->used;
	b->used += size;
	memset(ptr, 0, size);
	return ptr;
}

static void arena_release(struct arena *a)
{
	struct arena_blk *b = a->head, *next;

	for (; b; b = next) {
		next = b->next;
		free(b);
	}
	a->head = NULL;
}

static char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (d)
		memcpy(d, s, n);
	return d;
}

/* ---------------------------------------------------------------------------------------
 * The trees.
 */

/* LOCAL expression nodes.  Each node is typed: a condition (is_bool) or a 64-bit integer.
 * An integer used where a condition is expected is wrapped in `!= 0` at parse time, so the
 * evaluator and the formatter never see an untyped use. */
enum lx_kind {
	LX_LIT = 1, /* integer literal */
	LX_TERM,    /* a term; boolean or integer by its kind */
	LX_ADD,
	LX_SUB,
	LX_NEG,
	LX_CMP,
	LX_NOT,
	LX_AND,
	LX_OR,
};

enum cmp_op { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE };

static const char *const cmp_text[] = {"==", "!=", "<", "<=", ">", ">="};

struct lx {
	int kind;
	int op;           /* LX_CMP: enum cmp_op */
	int is_bool;
	int height;       /* 1 for a leaf; bounded by PRED_MAX_HEIGHT */
	size_t col, end;  /* the text it came from, for messages */
	int64_t lit;
	struct trace_pred_term term; /* LX_TERM */
	size_t tidx;      /* LX_TERM: index in the SP's table of distinct terms */
	struct lx *a, *b;
};

struct trace_pred_sp {
	const char *proc;
	struct lx *local;
	size_t col;
	size_t nterms;
	const struct trace_pred_term **terms; /* distinct terms, first appearance first */
};

/* Predicate-level nodes.  After parsing, AND/OR/LINK nodes never have a child of their own
 * kind (chains are flattened), and LINK appears only at the root. */
enum pn_kind { PN_SP = 1, PN_AND, PN_OR, PN_LINK };

struct pnode {
	int kind;
	size_t col;   /* where the node starts */
	size_t opcol; /* AND/OR/LINK: column of the first operator joining the children */
	size_t n, cap;
	struct pnode **kids;
	struct trace_pred_sp *sp;
};

struct pred_cp {
	size_t nsp;
	const struct trace_pred_sp **sps;
};

struct pred_dp {
	size_t ncp;
	struct pred_cp *cps;
};

struct trace_pred {
	struct arena arena;
	enum trace_pred_shape shape;
	struct pnode *root;
	size_t ndp; /* 0 when the tree has no disjunctive normal form (|| under &&) */
	struct pred_dp *dps;
	size_t nall;
	const struct trace_pred_sp **all;
	int uses_var;
};

/* ---------------------------------------------------------------------------------------
 * Parser state and diagnostics.
 */
struct parser {
	const char *s;
	size_t len;
	size_t pos;
	struct arena *a;
	struct trace_diag *diag;
	int err;               /* first error (TRACE_EPARSE or TRACE_ENOMEM); 0 while none */
	int nest;              /* current nesting, bounded by PRED_MAX_NEST */
	const struct lx *bare; /* the last comparison-level operand was an integer left alone */
};

static int is_word_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_word_char(int c)
{
	return is_word_start(c) || (c >= '0' && c <= '9');
}

static int is_digit(int c)
{
	return c >= '0' && c <= '9';
}

static int is_name_char(int c)
{
	return is_word_char(c) || c == '.' || c == '-';
}

static int ch(const struct parser *p, size_t at)
{
	return at < p->len ? (unsigned char)p->s[at] : 0;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
	                           p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

/* The two-character operators, so that a message quotes `&&` rather than `&`. */
static const char *const two_char_ops[] = {"&&", "||", "->", "==", "!=", "<=", ">=", "::"};

/* Describes the token at `at` for "found X": 'word', '&&', ')', end of predicate, byte 0x01. */
static const char *describe(const struct parser *p, size_t at, char *buf, size_t cap)
{
	size_t n = 0, i;
	int c = ch(p, at);

	if (at >= p->len)
		return "end of predicate";
	if (is_word_char(c)) {
		while (at + n < p->len && is_word_char(ch(p, at + n)))
			n++;
	} else {
		for (i = 0; i < sizeof(two_char_ops) / sizeof(two_char_ops[0]); i++)
			if (at + 1 < p->len && memcmp(p->s + at, two_char_ops[i], 2) == 0)
				n = 2;
		if (!n && (c < 0x20 || c > 0x7e)) {
			snprintf(buf, cap, "byte 0x%02x", (unsigned)c);
			return buf;
		}
		if (!n)
			n = 1;
	}
	if (n > 32)
		snprintf(buf, cap, "'%.32s...'", p->s + at);
	else
		snprintf(buf, cap, "'%.*s'", (int)n, p->s + at);
	return buf;
}

/* The source text of [col, end) quoted and shortened, for "after 'sent'" messages. */
static const char *slice(const struct parser *p, size_t col, size_t end, char *buf, size_t cap)
{
	size_t n = end > col ? end - col : 0;

	if (n > 40)
		snprintf(buf, cap, "'%.40s...'", p->s + col);
	else
		snprintf(buf, cap, "'%.*s'", (int)n, p->s + col);
	return buf;
}

/* Records the first error only: later ones are consequences.  Returns NULL so parse
 * functions can `return perr(...)`. */
__attribute__((format(printf, 3, 4))) static void *perr(struct parser *p, size_t col,
                                                        const char *fmt, ...)
{
	va_list ap;
	int n;

	if (p->err)
		return NULL;
	p->err = TRACE_EPARSE;
	if (!p->diag)
		return NULL;
	p->diag->code = TRACE_EPARSE;
	p->diag->sys_errno = 0;
	p->diag->offset = col;
	p->diag->file[0] = '\0';
	n = snprintf(p->diag->msg, sizeof(p->diag->msg), "column %zu: ", col);
	if (n < 0 || (size_t)n >= sizeof(p->diag->msg))
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p->diag->msg + n, sizeof(p->diag->msg) - (size_t)n, fmt, ap);
	va_end(ap);
	return NULL;
}

static void *oom(struct parser *p)
{
	if (p->err)
		return NULL;
	p->err = TRACE_ENOMEM;
	if (p->diag) {
		memset(p->diag, 0, sizeof(*p->diag));
		p->diag->code = TRACE_ENOMEM;
		snprintf(p->diag->msg, sizeof(p->diag->msg), "out of memory parsing a predicate");
	}
	return NULL;
}

static void *palloc(struct parser *p, size_t size)
{
	void *ptr = arena_alloc(p->a, size);

	return ptr ? ptr : oom(p);
}

/* At a keyword (whole word) such as `and`? */
static int at_kw(const struct parser *p, const char *kw)
{
	size_t n = strlen(kw);

	return p->pos + n <= p->len && memcmp(p->s + p->pos, kw, n) == 0 &&
	       !is_word_char(ch(p, p->pos + n));
}

static int at_op(const struct parser *p, const char *op)
{
	size_t n = strlen(op);

	return p->pos + n <= p->len && memcmp(p->s + p->pos, op, n) == 0;
}

/* `-` is a minus unless it begins `->`, the linked-predicate arrow, which always wins. */
static int at_minus(const struct parser *p)
{
	return ch(p, p->pos) == '-' && ch(p, p->pos + 1) != '>';
}

static int nest_enter(struct parser *p)
{
	if (p->nest >= PRED_MAX_NEST) {
		perr(p, p->pos, "nested more than %d levels deep", PRED_MAX_NEST);
		return -1;
	}
	p->nest++;
	return 0;
}

/* ---------------------------------------------------------------------------------------
 * LOCAL conditions.
 *
 *   or   := and ('or' and)*
 *   and  := not ('and' not)*
 *   not  := 'not' not | cmp
 *   cmp  := add (CMPOP add)?          comparisons do not chain
 *   add  := unary (('+' | '-') unary)*
 *   unary:= '-' unary | primary
 *   primary := term | INTEGER | '(' or ')'
 */
static struct lx *lx_or(struct parser *p);

static struct lx *lx_new(struct parser *p, int kind, size_t col)
{
	struct lx *x = palloc(p, sizeof(*x));

	if (x) {
		x->kind = kind;
		x->col = col;
		x->end = p->pos;
		x->height = 1;
	}
	return x;
}

static struct lx *lx_bin(struct parser *p, int kind, struct lx *a, struct lx *b)
{
	struct lx *x = lx_new(p, kind, a->col);

	if (!x)
		return NULL;
	x->a = a;
	x->b = b;
	x->end = b->end;
	x->height = 1 + (a->height > b->height ? a->height : b->height);
	x->is_bool = kind == LX_CMP || kind == LX_AND || kind == LX_OR;
	if (x->height > PRED_MAX_HEIGHT)
		return perr(p, b->col, "condition too long: more than %d levels of operators",
		            PRED_MAX_HEIGHT);
	return x;
}

/* An integer where a condition is expected means `!= 0` (like C); made explicit here. */
static struct lx *to_bool(struct parser *p, struct lx *x)
{
	struct lx *zero, *c;

	if (x->is_bool)
		return x;
	zero = lx_new(p, LX_LIT, x->end);
	if (!zero)
		return NULL;
	zero->end = x->end;
	c = lx_bin(p, LX_CMP, x, zero);
	if (c)
		c->op = CMP_NE;
	return c;
}

static int need_int(struct parser *p, const struct lx *x, const char *where)
{
	char b[64];

	if (!x->is_bool)
		return 0;
	perr(p, x->col, "%s is a condition, not a number: it cannot be %s", slice(p, x->col, x->end, b, sizeof(b)),
	     where);
	return -1;
}

static const char *const term_list =
	"a term (events, sent, received, bytes_sent, bytes_received, mark.KEY, var.SYMBOL, "
	"in(FUNCTION), last(KIND), exited), a number, 'not' or '('";

/* A process name: letters, digits, '_', '-', '.', starting with a letter, digit or '_'.
 * A '-' that begins '->' ends the name. Returns its length (0 when none). */
static size_t scan_proc(const struct parser *p, size_t at)
{
	size_t n = 0;

	if (!is_word_char(ch(p, at)))
		return 0;
	while (is_name_char(ch(p, at + n)) && !(ch(p, at + n) == '-' && ch(p, at + n + 1) == '>'))
		n++;
	return n;
}

static size_t scan_ident(const struct parser *p, size_t at)
{
	size_t n = 0;

	if (!is_word_start(ch(p, at)))
		return 0;
	while (is_word_char(ch(p, at + n)))
		n++;
	return n;
}

/* FUNCTION: a C identifier, optionally continued by `::` or `.` segments so that C++ names
 * (ns::Class::method, ns::Class::~Class) and compiler clones (f.cold, f.part.0) work. */
static size_t scan_function(const struct parser *p, size_t at)
{
	size_t n = scan_ident(p, at), m;

	if (!n)
		return 0;
	for (;;) {
		size_t sep = ch(p, at + n) == '.' ? 1 : (ch(p, at + n) == ':' && ch(p, at + n + 1) == ':') ? 2 : 0;

		if (!sep)
			return n;
		m = 0;
		if (sep == 2 && ch(p, at + n + sep) == '~')
			m = 1;
		while (is_word_char(ch(p, at + n + sep + m)))
			m++;
		if (m == 0 || (m == 1 && ch(p, at + n + sep) == '~'))
			return n;
		n += sep + m;
	}
}

/* `(ARG)` after sent/received/in/last: what = "a process name", scan = how to read it. */
static const char *paren_arg(struct parser *p, const char *term, const char *what,
                             size_t (*scan)(const struct parser *, size_t), size_t max)
{
	char b[64];
	size_t n, col;
	const char *arg;

	skip_ws(p);
	if (ch(p, p->pos) != '(')
		return perr(p, p->pos, "expected '(' after '%s', found %s", term,
		            describe(p, p->pos, b, sizeof(b)));
	p->pos++;
	skip_ws(p);
	col = p->pos;
	n = scan(p, p->pos);
	if (!n)
		return perr(p, p->pos, "expected %s in %s(...), found %s", what, term,
		            describe(p, p->pos, b, sizeof(b)));
	if (n > max)
		return perr(p, col, "%s longer than %zu characters in %s(...)", what, max, term);
	arg = arena_strndup(p->a, p->s + p->pos, n);
	if (!arg)
		return oom(p);
	p->pos += n;
	skip_ws(p);
	if (ch(p, p->pos) != ')')
		return perr(p, p->pos, "expected ')' after %s in %s(...), found %s", what, term,
		            describe(p, p->pos, b, sizeof(b)));
	p->pos++;
	return arg;
}

/* `.IDENT` right after mark / var, without spaces: mark.KEY reads as one word. */
static const char *dot_arg(struct parser *p, const char *term, const char *what)
{
	char b[64];
	size_t n;
	const char *arg;

	if (ch(p, p->pos) != '.')
		return perr(p, p->pos, "expected '.' and a %s right after '%s' (as in %s.x), found %s",
		            what, term, term, describe(p, p->pos, b, sizeof(b)));
	p->pos++;
	n = scan_ident(p, p->pos);
	if (!n)
		return perr(p, p->pos, "expected a %s (a C identifier) after '%s.', found %s", what,
		            term, describe(p, p->pos, b, sizeof(b)));
	if (n > PRED_IDENT_MAX)
		return perr(p, p->pos, "%s longer than %d characters", what, PRED_IDENT_MAX);
	arg = arena_strndup(p->a, p->s + p->pos, n);
	if (!arg)
		return oom(p);
	p->pos += n;
	return arg;
}

static const struct {
	const char *word;
	uint32_t kind;
	int is_bool;
} term_words[] = {
	{"events", TRACE_TERM_EVENTS, 0},
	{"sent", TRACE_TERM_SENT, 0},
	{"received", TRACE_TERM_RECEIVED, 0},
	{"bytes_sent", TRACE_TERM_BYTES_SENT, 0},
	{"bytes_received", TRACE_TERM_BYTES_RECEIVED, 0},
	{"mark", TRACE_TERM_MARK, 0},
	{"var", TRACE_TERM_VAR, 0},
	{"in", TRACE_TERM_IN, 1},
	{"last", TRACE_TERM_LAST, 1},
	{"exited", TRACE_TERM_EXITED, 1},
};

static int is_term_word(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < sizeof(term_words) / sizeof(term_words[0]); i++)
		if (strlen(term_words[i].word) == n && memcmp(term_words[i].word, s, n) == 0)
			return 1;
	return 0;
}

static struct lx *lx_term(struct parser *p)
{
	char b[64];
	size_t col = p->pos, n = scan_ident(p, p->pos), i, after;
	struct lx *x;

	for (i = 0; i < sizeof(term_words) / sizeof(term_words[0]); i++)
		if (strlen(term_words[i].word) == n && memcmp(term_words[i].word, p->s + col, n) == 0)
			break;
	if (i == sizeof(term_words) / sizeof(term_words[0])) {
		/* `p: x == 1 and q: y == 2`: the user meant a second simple predicate. */
		after = col + n;
		while (ch(p, after) == ' ' || ch(p, after) == '\t')
			after++;
		if (n && ch(p, after) == ':')
			return perr(p, col,
			            "%s starts a simple predicate of another process: join simple "
			            "predicates with '&&', '||' or '->', not 'and' or 'or'",
			            describe(p, col, b, sizeof(b)));
		return perr(p, col, "expected %s, found %s", term_list, describe(p, col, b, sizeof(b)));
	}
	p->pos += n;
	x = lx_new(p, LX_TERM, col);
	if (!x)
		return NULL;
	x->term.kind = term_words[i].kind;
	x->is_bool = term_words[i].is_bool;
	switch (x->term.kind) {
	case TRACE_TERM_SENT:
	case TRACE_TERM_RECEIVED: {
		/* sent(PROC) is a different term from sent; `(` right after it can only mean that,
		 * since an integer is never followed by a parenthesis. */
		size_t save = p->pos;

		skip_ws(p);
		if (ch(p, p->pos) != '(') {
			p->pos = save;
			break;
		}
		x->term.kind = x->term.kind == TRACE_TERM_SENT ? TRACE_TERM_SENT_TO
		                                               : TRACE_TERM_RECEIVED_FROM;
		x->term.arg = paren_arg(p, term_words[i].word, "a process name", scan_proc,
		                        PRED_NAME_MAX);
		if (!x->term.arg)
			return NULL;
		break;
	}
	case TRACE_TERM_MARK:
		if (!(x->term.arg = dot_arg(p, "mark", "KEY")))
			return NULL;
		break;
	case TRACE_TERM_VAR:
		if (!(x->term.arg = dot_arg(p, "var", "SYMBOL")))
			return NULL;
		break;
	case TRACE_TERM_IN:
		x->term.arg = paren_arg(p, "in", "a function name", scan_function, PRED_IDENT_MAX);
		if (!x->term.arg)
			return NULL;
		break;
	case TRACE_TERM_LAST: {
		size_t kcol;

		skip_ws(p);
		kcol = ch(p, p->pos) == '(' ? p->pos + 1 : p->pos;
		while (ch(p, kcol) == ' ' || ch(p, kcol) == '\t')
			kcol++;
		x->term.arg = paren_arg(p, "last", "an event kind", scan_ident, 32);
		if (!x->term.arg)
			return NULL;
		/* The kind table belongs to the event model (trace_kind_from_name in event.c), so
		 * a kind added there is usable here at once. */
		x->term.ev_kind = trace_kind_from_name(x->term.arg);
		if (x->term.ev_kind == TRACE_EV_NONE)
			return perr(p, kcol,
			            "unknown event kind '%s' in last(...): expected send, recv, accept, "
			            "connect, close, fork, exec, exit, mark... (schemas/predicates.md)",
			            x->term.arg);
		break;
	}
	default:
		break;
	}
	x->end = p->pos;
	return x;
}

static struct lx *lx_primary(struct parser *p)
{
	char b[64];
	size_t col;
	int c;

	skip_ws(p);
	col = p->pos;
	c = ch(p, p->pos);
	if (c == '(') {
		struct lx *x;

		if (nest_enter(p))
			return NULL;
		p->pos++;
		x = lx_or(p);
		p->nest--;
		if (!x)
			return NULL;
		skip_ws(p);
		if (ch(p, p->pos) == ')') {
			p->pos++;
			return x;
		}
		if (at_op(p, "&&") || at_op(p, "||"))
			return perr(p, p->pos,
			            "'%.2s' joins simple predicates and cannot appear inside the "
			            "parentheses of a local condition: write '%s'",
			            p->s + p->pos, at_op(p, "&&") ? "and" : "or");
		if (at_op(p, "->"))
			return perr(p, p->pos,
			            "'->' links whole predicates and cannot appear inside the "
			            "parentheses of a local condition");
		return perr(p, p->pos, "expected ')' to close the '(' at column %zu, found %s", col,
		            describe(p, p->pos, b, sizeof(b)));
	}
	if (is_digit(c)) {
		/* Decimal or 0x hex; the magnitude may reach 2^63 so that -9223372036854775808
		 * reads (the unary minus folds it). */
		uint64_t v = 0, base = 10, d;
		size_t n = 0;
		struct lx *x;

		if (c == '0' && (ch(p, p->pos + 1) == 'x' || ch(p, p->pos + 1) == 'X')) {
			base = 16;
			p->pos += 2;
		}
		for (;; n++) {
			c = ch(p, p->pos);
			if (is_digit(c))
				d = (uint64_t)(c - '0');
			else if (base == 16 && c >= 'a' && c <= 'f')
				d = (uint64_t)(c - 'a' + 10);
			else if (base == 16 && c >= 'A' && c <= 'F')
				d = (uint64_t)(c - 'A' + 10);
			else
				break;
			if (v > (UINT64_C(1) << 63) / base ||
			    v * base > (UINT64_C(1) << 63) - d)
				return perr(p, col, "integer literal out of the 64-bit signed range");
			v = v * base + d;
			p->pos++;
		}
		if (n == 0)
			return perr(p, p->pos, "expected hexadecimal digits after '0x', found %s",
			            describe(p, p->pos, b, sizeof(b)));
		if (is_word_char(ch(p, p->pos)))
			return perr(p, p->pos, "expected a digit or an operator in the number, found %s",
			            describe(p, p->pos, b, sizeof(b)));
		x = lx_new(p, LX_LIT, col);
		if (x)
			x->lit = (int64_t)v; /* 2^63 wraps to INT64_MIN; lx_unary folds or rejects it */
		return x;
	}
	if (is_word_start(c))
		return lx_term(p);
	if (c == '!' && ch(p, p->pos + 1) != '=')
		return perr(p, col, "'!' is not an operator here: write 'not'");
	return perr(p, col, "expected %s, found %s", term_list, describe(p, col, b, sizeof(b)));
}

static struct lx *lx_unary(struct parser *p)
{
	struct lx *x, *n;
	size_t col;

	skip_ws(p);
	if (!at_minus(p)) {
		int digits = is_digit(ch(p, p->pos));

		x = lx_primary(p);
		/* 2^63 written without a minus: only -9223372036854775808 may use it. */
		if (x && digits && x->lit == INT64_MIN)
			return perr(p, x->col, "integer literal out of the 64-bit signed range");
		return x;
	}
	col = p->pos++;
	if (nest_enter(p))
		return NULL;
	skip_ws(p);
	/* A literal right after the minus may be 2^63 (INT64_MIN once negated). */
	x = is_digit(ch(p, p->pos)) ? lx_primary(p) : lx_unary(p);
	p->nest--;
	if (!x || need_int(p, x, "negated"))
		return NULL;
	if (x->kind == LX_LIT) {
		/* Fold: -5 is the literal -5, and -(2^63) is INT64_MIN. */
		x->lit = (int64_t)(0 - (uint64_t)x->lit);
		x->col = col;
		return x;
	}
	n = lx_new(p, LX_NEG, col);
	if (!n)
		return NULL;
	n->a = x;
	n->end = x->end;
	n->height = x->height + 1;
	return n;
}

static struct lx *lx_add(struct parser *p)
{
	struct lx *x = lx_unary(p), *y;
	int kind;

	for (;;) {
		if (!x)
			return NULL;
		skip_ws(p);
		if (ch(p, p->pos) == '+')
			kind = LX_ADD;
		else if (at_minus(p))
			kind = LX_SUB;
		else
			return x;
		if (need_int(p, x, kind == LX_ADD ? "added to" : "subtracted from"))
			return NULL;
		p->pos++;
		y = lx_unary(p);
		if (!y || need_int(p, y, kind == LX_ADD ? "added" : "subtracted"))
			return NULL;
		x = lx_bin(p, kind, x, y);
	}
}

/* The comparison operator at the cursor, or -1. */
static int cmp_at(const struct parser *p)
{
	if (at_op(p, "=="))
		return CMP_EQ;
	if (at_op(p, "!="))
		return CMP_NE;
	if (at_op(p, "<="))
		return CMP_LE;
	if (at_op(p, ">="))
		return CMP_GE;
	if (at_op(p, "<"))
		return CMP_LT;
	if (at_op(p, ">"))
		return CMP_GT;
	return -1;
}

static struct lx *lx_cmp(struct parser *p)
{
	struct lx *x = lx_add(p), *y;
	int op;
	size_t opcol;

	if (!x)
		return NULL;
	skip_ws(p);
	op = cmp_at(p);
	if (op < 0) {
		if (ch(p, p->pos) == '=')
			return perr(p, p->pos, "'=' is not a comparison: write '=='");
		p->bare = x->is_bool ? NULL : x;
		return x;
	}
	opcol = p->pos;
	if (need_int(p, x, "compared"))
		return NULL;
	p->pos += strlen(cmp_text[op]);
	y = lx_add(p);
	if (!y || need_int(p, y, "compared"))
		return NULL;
	x = lx_bin(p, LX_CMP, x, y);
	if (!x)
		return NULL;
	x->op = op;
	p->bare = NULL;
	skip_ws(p);
	if (cmp_at(p) >= 0)
		return perr(p, p->pos,
		            "comparisons do not chain: join them with 'and' (the comparison "
		            "at column %zu is complete)",
		            opcol);
	return x;
}

static struct lx *lx_not(struct parser *p)
{
	struct lx *x, *n;
	size_t col;

	skip_ws(p);
	if (!at_kw(p, "not"))
		return lx_cmp(p);
	col = p->pos;
	p->pos += 3;
	if (nest_enter(p))
		return NULL;
	x = lx_not(p);
	p->nest--;
	if (!x || !(x = to_bool(p, x)))
		return NULL;
	n = lx_new(p, LX_NOT, col);
	if (!n)
		return NULL;
	n->a = x;
	n->is_bool = 1;
	n->end = x->end;
	n->height = x->height + 1;
	p->bare = NULL;
	if (n->height > PRED_MAX_HEIGHT)
		return perr(p, col, "condition too long: more than %d levels of operators",
		            PRED_MAX_HEIGHT);
	return n;
}

static struct lx *lx_and(struct parser *p)
{
	struct lx *x = lx_not(p), *y;

	for (;;) {
		if (!x)
			return NULL;
		skip_ws(p);
		if (!at_kw(p, "and"))
			return x;
		p->pos += 3;
		if (!(x = to_bool(p, x)))
			return NULL;
		y = lx_not(p);
		if (!y || !(y = to_bool(p, y)))
			return NULL;
		x = lx_bin(p, LX_AND, x, y);
	}
}

static struct lx *lx_or(struct parser *p)
{
	struct lx *x = lx_and(p), *y;

	for (;;) {
		if (!x)
			return NULL;
		skip_ws(p);
		if (!at_kw(p, "or"))
			return x;
		p->pos += 2;
		if (!(x = to_bool(p, x)))
			return NULL;
		y = lx_and(p);
		if (!y || !(y = to_bool(p, y)))
			return NULL;
		x = lx_bin(p, LX_OR, x, y);
	}
}

/* ---------------------------------------------------------------------------------------
 * Predicates.
 *
 *   link := or ('->' or)*
 *   or   := and ('||' and)*
 *   and  := sp ('&&' sp)*
 *   sp   := PROC ':' LOCAL | '(' link ')'
 *
 * The LOCAL after `PROC:` runs to the first `&&`, `||`, `->` or `)` that is not inside its
 * own parentheses (or the end): LOCAL has its own and/or/not, so the two levels never share
 * an operator and a `(` at the start of a simple predicate always opens a group of
 * predicates, while a `(` after `PROC:` always belongs to the LOCAL.
 */
static struct pnode *pn_link(struct parser *p);

static struct pnode *pn_new(struct parser *p, int kind, size_t col)
{
	struct pnode *n = palloc(p, sizeof(*n));

	if (n) {
		n->kind = kind;
		n->col = col;
	}
	return n;
}

static int pn_add(struct parser *p, struct pnode *n, struct pnode *kid)
{
	if (n->n == n->cap) {
		size_t cap = n->cap ? 2 * n->cap : 4;
		struct pnode **k = palloc(p, cap * sizeof(*k));

		if (!k)
			return -1;
		if (n->n)
			memcpy(k, n->kids, n->n * sizeof(*k));
		n->kids = k; /* the old array stays in the arena until trace_pred_free */
		n->cap = cap;
	}
	n->kids[n->n++] = kid;
	return 0;
}

/* Adds kid to n, splicing a parenthesised group of the same operator: (a && b) && c is the
 * conjunction of three, since && / || / -> are associative. */
static int pn_join(struct parser *p, struct pnode *n, struct pnode *kid)
{
	size_t i;

	if (kid->kind != n->kind)
		return pn_add(p, n, kid);
	for (i = 0; i < kid->n; i++)
		if (pn_add(p, n, kid->kids[i]))
			return -1;
	return 0;
}

static void *linked_under(struct parser *p, const struct pnode *kid, const char *op)
{
	return perr(p, kid->opcol,
	            "'->' cannot be used under '%s': a linked predicate is a chain "
	            "DP -> DP -> ... at the top level",
	            op);
}

static struct pnode *pn_sp(struct parser *p)
{
	char b[64];
	size_t col, n;
	struct pnode *x;
	struct trace_pred_sp *sp;

	skip_ws(p);
	col = p->pos;
	if (ch(p, p->pos) == '(') {
		if (nest_enter(p))
			return NULL;
		p->pos++;
		x = pn_link(p);
		p->nest--;
		if (!x)
			return NULL;
		skip_ws(p);
		if (ch(p, p->pos) != ')')
			return perr(p, p->pos, "expected ')' to close the '(' at column %zu, found %s",
			            col, describe(p, p->pos, b, sizeof(b)));
		p->pos++;
		return x;
	}
	n = scan_proc(p, p->pos);
	if (!n)
		return perr(p, p->pos, "expected a process name or '(', found %s",
		            describe(p, p->pos, b, sizeof(b)));
	if (n > PRED_NAME_MAX)
		return perr(p, col, "process name longer than %d characters", PRED_NAME_MAX);
	p->pos += n;
	skip_ws(p);
	if (ch(p, p->pos) != ':') {
		/* `p: x == 1 && y == 2`: the user continued a condition with && instead of and. */
		if (is_term_word(p->s + col, n))
			return perr(p, p->pos,
			            "expected ':' after the process name '%.*s', found %s ('%.*s' is a "
			            "term: inside one process's condition use 'and' / 'or', not '&&' / "
			            "'||')",
			            (int)n, p->s + col, describe(p, p->pos, b, sizeof(b)), (int)n,
			            p->s + col);
		return perr(p, p->pos, "expected ':' after the process name '%.*s', found %s", (int)n,
		            p->s + col, describe(p, p->pos, b, sizeof(b)));
	}
	p->pos++;
	sp = palloc(p, sizeof(*sp));
	x = pn_new(p, PN_SP, col);
	if (!sp || !x)
		return NULL;
	sp->col = col;
	sp->proc = arena_strndup(p->a, p->s + col, n);
	if (!sp->proc)
		return oom(p);
	p->bare = NULL;
	sp->local = lx_or(p);
	if (!sp->local || !(sp->local = to_bool(p, sp->local)))
		return NULL;
	x->sp = sp;
	skip_ws(p);
	if (p->pos >= p->len || at_op(p, "&&") || at_op(p, "||") || at_op(p, "->") ||
	    ch(p, p->pos) == ')')
		return x;
	if (p->bare) {
		char b2[64];

		return perr(p, p->pos, "expected a comparison operator after %s, found %s",
		            slice(p, p->bare->col, p->bare->end, b, sizeof(b)),
		            describe(p, p->pos, b2, sizeof(b2)));
	}
	n = scan_proc(p, p->pos);
	{
		size_t after = p->pos + n;

		while (ch(p, after) == ' ' || ch(p, after) == '\t')
			after++;
		if (n && ch(p, after) == ':')
			return perr(p, p->pos,
			            "expected '&&', '||' or '->' before the simple predicate of "
			            "'%.*s', found '%.*s'",
			            (int)n, p->s + p->pos, (int)n, p->s + p->pos);
	}
	return perr(p, p->pos,
	            "expected 'and', 'or', '&&', '||', '->' or the end of the predicate after the "
	            "condition, found %s",
	            describe(p, p->pos, b, sizeof(b)));
}

static struct pnode *pn_and(struct parser *p)
{
	struct pnode *x = pn_sp(p), *n, *k;

	if (!x)
		return NULL;
	skip_ws(p);
	if (!at_op(p, "&&"))
		return x;
	if (x->kind == PN_LINK)
		return linked_under(p, x, "&&");
	n = pn_new(p, PN_AND, x->col);
	if (!n || pn_join(p, n, x))
		return NULL;
	n->opcol = p->pos;
	while (at_op(p, "&&")) {
		p->pos += 2;
		k = pn_sp(p);
		if (!k)
			return NULL;
		if (k->kind == PN_LINK)
			return linked_under(p, k, "&&");
		if (pn_join(p, n, k))
			return NULL;
		skip_ws(p);
	}
	return n;
}

static struct pnode *pn_or(struct parser *p)
{
	struct pnode *x = pn_and(p), *n, *k;

	if (!x)
		return NULL;
	skip_ws(p);
	if (!at_op(p, "||"))
		return x;
	if (x->kind == PN_LINK)
		return linked_under(p, x, "||");
	n = pn_new(p, PN_OR, x->col);
	if (!n || pn_join(p, n, x))
		return NULL;
	n->opcol = p->pos;
	while (at_op(p, "||")) {
		p->pos += 2;
		k = pn_and(p);
		if (!k)
			return NULL;
		if (k->kind == PN_LINK)
			return linked_under(p, k, "||");
		if (pn_join(p, n, k))
			return NULL;
		skip_ws(p);
	}
	return n;
}

/* A parenthesised chain inside a chain, (a -> b) -> c, is spliced: "each DP holds after the
 * previous one" is associative, so it has the precise meaning a -> b -> c. */
static struct pnode *pn_link(struct parser *p)
{
	struct pnode *x = pn_or(p), *n, *k;

	if (!x)
		return NULL;
	skip_ws(p);
	if (!at_op(p, "->"))
		return x;
	n = pn_new(p, PN_LINK, x->col);
	if (!n)
		return NULL;
	n->opcol = x->kind == PN_LINK ? x->opcol : p->pos;
	if (pn_join(p, n, x))
		return NULL;
	while (at_op(p, "->")) {
		p->pos += 2;
		k = pn_or(p);
		if (!k || pn_join(p, n, k))
			return NULL;
		skip_ws(p);
	}
	return n;
}

/* ---------------------------------------------------------------------------------------
 * Normal form.
 */

/* Merges the SPs of one conjunction that name the same process into the first of them,
 * LOCAL1 and LOCAL2: a process is in one state at a cut, so both conditions must hold in
 * that state, and Manabe & Imase's Inf(P) wants one SP_i per process.  Returns the node to
 * use in place of n (an AND left with one child becomes that child). */
static struct pnode *merge(struct parser *p, struct pnode *n)
{
	size_t i, j, out;

	if (n->kind == PN_SP)
		return n;
	for (i = 0; i < n->n; i++)
		if (!(n->kids[i] = merge(p, n->kids[i])))
			return NULL;
	if (n->kind != PN_AND)
		return n;
	for (i = 0, out = 0; i < n->n; i++) {
		struct pnode *k = n->kids[i];

		for (j = 0; k->kind == PN_SP && j < out; j++) {
			struct trace_pred_sp *first = n->kids[j]->sp;
			struct lx *both;

			if (n->kids[j]->kind != PN_SP || strcmp(first->proc, k->sp->proc) != 0)
				continue;
			both = lx_bin(p, LX_AND, first->local, k->sp->local);
			if (!both)
				return NULL;
			first->local = both;
			break;
		}
		if (k->kind != PN_SP || j == out)
			n->kids[out++] = k;
	}
	n->n = out;
	return out == 1 ? n->kids[0] : n;
}

static int same_term(const struct trace_pred_term *a, const struct trace_pred_term *b)
{
	if (a->kind != b->kind || a->ev_kind != b->ev_kind)
		return 0;
	if (!a->arg || !b->arg)
		return a->arg == b->arg;
	return strcmp(a->arg, b->arg) == 0;
}

static size_t count_terms(const struct lx *x)
{
	if (!x)
		return 0;
	return (x->kind == LX_TERM) + count_terms(x->a) + count_terms(x->b);
}

static void index_terms(struct trace_pred_sp *sp, struct lx *x)
{
	size_t i;

	if (!x)
		return;
	if (x->kind == LX_TERM) {
		for (i = 0; i < sp->nterms; i++)
			if (same_term(sp->terms[i], &x->term))
				break;
		if (i == sp->nterms)
			sp->terms[sp->nterms++] = &x->term;
		x->tidx = i;
	}
	index_terms(sp, x->a);
	index_terms(sp, x->b);
}

static size_t count_sps(const struct pnode *n)
{
	size_t i, c = 0;

	if (n->kind == PN_SP)
		return 1;
	for (i = 0; i < n->n; i++)
		c += count_sps(n->kids[i]);
	return c;
}

static void collect_sps(struct trace_pred *pr, struct pnode *n)
{
	size_t i;

	if (n->kind == PN_SP) {
		pr->all[pr->nall++] = n->sp;
		return;
	}
	for (i = 0; i < n->n; i++)
		collect_sps(pr, n->kids[i]);
}

/* Is this step an || of && of SPs (disjunctive normal form)?  If not, *bad is the node
 * whose || sits under an &&. */
static int is_dnf(const struct pnode *n, const struct pnode **bad)
{
	size_t i, j;

	if (n->kind == PN_SP)
		return 1;
	for (i = 0; i < n->n; i++) {
		const struct pnode *k = n->kids[i];

		if (n->kind == PN_AND && k->kind != PN_SP) {
			*bad = k;
			return 0;
		}
		if (n->kind == PN_OR && k->kind == PN_AND)
			for (j = 0; j < k->n; j++)
				if (k->kids[j]->kind != PN_SP) {
					*bad = k->kids[j];
					return 0;
				}
	}
	return 1;
}

static int build_dp(struct parser *p, struct pred_dp *dp, struct pnode *step)
{
	size_t i, j, ncp = step->kind == PN_OR ? step->n : 1;

	dp->cps = palloc(p, ncp * sizeof(*dp->cps));
	if (!dp->cps)
		return -1;
	dp->ncp = ncp;
	for (i = 0; i < ncp; i++) {
		struct pnode *cp = step->kind == PN_OR ? step->kids[i] : step;
		struct pred_cp *c = &dp->cps[i];

		c->nsp = cp->kind == PN_AND ? cp->n : 1;
		c->sps = palloc(p, c->nsp * sizeof(*c->sps));
		if (!c->sps)
			return -1;
		for (j = 0; j < c->nsp; j++)
			c->sps[j] = cp->kind == PN_AND ? cp->kids[j]->sp : cp->sp;
	}
	return 0;
}

static int normalise(struct parser *p, struct trace_pred *pr)
{
	const struct pnode *bad = NULL;
	size_t i, j, nsteps;

	if (!(pr->root = merge(p, pr->root)))
		return -1;

	pr->all = palloc(p, count_sps(pr->root) * sizeof(*pr->all));
	if (!pr->all)
		return -1;
	collect_sps(pr, pr->root);
	for (i = 0; i < pr->nall; i++) {
		struct trace_pred_sp *sp = (struct trace_pred_sp *)pr->all[i];

		sp->terms = palloc(p, (count_terms(sp->local) + 1) * sizeof(*sp->terms));
		if (!sp->terms)
			return -1;
		index_terms(sp, sp->local);
		for (j = 0; j < sp->nterms; j++)
			if (sp->terms[j]->kind == TRACE_TERM_VAR)
				pr->uses_var = 1;
	}

	if (pr->root->kind == PN_LINK) {
		/* Each step of a chain must itself be in normal form: Miller & Choi chain DPs,
		 * and the analyzer computes each step's least cut after the previous one. */
		nsteps = pr->root->n;
		for (i = 0; i < nsteps; i++)
			if (!is_dnf(pr->root->kids[i], &bad)) {
				perr(p, bad->opcol,
				     "'||' under '&&' is not allowed in a step of a linked predicate: "
				     "write each step as an '||' of '&&'s of simple predicates");
				return -1;
			}
		pr->shape = TRACE_PRED_LINKED;
	} else if (!is_dnf(pr->root, &bad)) {
		/* && over ||: no normal form is built (distributing could blow up
		 * exponentially); the analyzer searches the lattice with eval_tree. */
		pr->shape = TRACE_PRED_GENERAL;
		return 0;
	} else {
		nsteps = 1;
	}
	pr->dps = palloc(p, nsteps * sizeof(*pr->dps));
	if (!pr->dps)
		return -1;
	pr->ndp = nsteps;
	for (i = 0; i < nsteps; i++)
		if (build_dp(p, &pr->dps[i], pr->root->kind == PN_LINK ? pr->root->kids[i] : pr->root))
			return -1;
	if (pr->shape == TRACE_PRED_LINKED)
		return 0;
	if (pr->dps[0].ncp == 1) {
		pr->shape = TRACE_PRED_CONJUNCTIVE;
	} else {
		pr->shape = TRACE_PRED_DISJUNCTIVE;
		for (i = 0; i < pr->dps[0].ncp; i++)
			if (pr->dps[0].cps[i].nsp > 1)
				pr->shape = TRACE_PRED_GENERAL; /* || of CPs: one Inf per CP */
	}
	return 0;
}

int trace_pred_parse(const char *text, struct trace_pred **out, struct trace_diag *diag)
{
	struct trace_pred *pr;
	struct parser p;
	char b[64];

	if (out)
		*out = NULL;
	if (!text || !out)
		return TRACE_EINVAL;
	pr = calloc(1, sizeof(*pr));
	if (!pr) {
		if (diag) {
			memset(diag, 0, sizeof(*diag));
			diag->code = TRACE_ENOMEM;
			snprintf(diag->msg, sizeof(diag->msg), "out of memory parsing a predicate");
		}
		return TRACE_ENOMEM;
	}
	memset(&p, 0, sizeof(p));
	p.s = text;
	p.len = strlen(text);
	p.a = &pr->arena;
	p.diag = diag;
	if (p.len > PRED_MAX_TEXT) {
		perr(&p, PRED_MAX_TEXT, "predicate longer than %d bytes", PRED_MAX_TEXT);
		goto out;
	}
	pr->root = pn_link(&p);
	if (!pr->root)
		goto out;
	skip_ws(&p);
	if (p.pos < p.len) {
		if (ch(&p, p.pos) == ')')
			perr(&p, p.pos, "unmatched ')'");
		else
			perr(&p, p.pos, "expected '&&', '||', '->' or the end of the predicate, found %s",
			     describe(&p, p.pos, b, sizeof(b)));
		goto out;
	}
	if (normalise(&p, pr))
		goto out;
	*out = pr;
	return 0;
out:
	trace_pred_free(pr);
	return p.err ? p.err : TRACE_EPARSE;
}

void trace_pred_free(struct trace_pred *p)
{
	if (!p)
		return;
	arena_release(&p->arena);
	free(p);
}

/* ---------------------------------------------------------------------------------------
 * Accessors.
 */
enum trace_pred_shape trace_pred_shape(const struct trace_pred *p)
{
	return p ? p->shape : (enum trace_pred_shape)0;
}

int trace_pred_uses_var(const struct trace_pred *p)
{
	return p ? p->uses_var : 0;
}

size_t trace_pred_ndp(const struct trace_pred *p)
{
	return p ? p->ndp : 0;
}

size_t trace_pred_ncp(const struct trace_pred *p, size_t dp)
{
	return p && dp < p->ndp ? p->dps[dp].ncp : 0;
}

size_t trace_pred_nsp(const struct trace_pred *p, size_t dp, size_t cp)
{
	return p && dp < p->ndp && cp < p->dps[dp].ncp ? p->dps[dp].cps[cp].nsp : 0;
}

const struct trace_pred_sp *trace_pred_get_sp(const struct trace_pred *p, size_t dp, size_t cp,
                                              size_t sp)
{
	if (!p || dp >= p->ndp || cp >= p->dps[dp].ncp || sp >= p->dps[dp].cps[cp].nsp)
		return NULL;
	return p->dps[dp].cps[cp].sps[sp];
}

size_t trace_pred_all_sps(const struct trace_pred *p, const struct trace_pred_sp *const **sps)
{
	if (sps)
		*sps = p ? (const struct trace_pred_sp *const *)p->all : NULL;
	return p ? p->nall : 0;
}

const char *trace_pred_sp_proc(const struct trace_pred_sp *sp)
{
	return sp ? sp->proc : NULL;
}

size_t trace_pred_sp_terms(const struct trace_pred_sp *sp,
                           const struct trace_pred_term *const **terms)
{
	if (terms)
		*terms = sp ? (const struct trace_pred_term *const *)sp->terms : NULL;
	return sp ? sp->nterms : 0;
}

/* ---------------------------------------------------------------------------------------
 * Canonical formatting: a sink that counts what it would write, like snprintf.
 */
struct sink {
	char *buf;
	size_t cap, len;
};

static void put(struct sink *k, const char *s)
{
	size_t n = strlen(s);

	if (k->len < k->cap) {
		size_t room = k->cap - k->len - 1;

		memcpy(k->buf + k->len, s, n < room ? n : room);
		k->buf[k->len + (n < room ? n : room)] = '\0';
	}
	k->len += n;
}

static int sink_result(const struct sink *k)
{
	return k->len > INT_MAX ? INT_MAX : (int)k->len;
}

enum { PR_OR = 1, PR_AND, PR_NOT, PR_CMP, PR_ADD, PR_NEG, PR_ATOM };

static int lx_prec(const struct lx *x)
{
	switch (x->kind) {
	case LX_OR:
		return PR_OR;
	case LX_AND:
		return PR_AND;
	case LX_NOT:
		return PR_NOT;
	case LX_CMP:
		return PR_CMP;
	case LX_ADD:
	case LX_SUB:
		return PR_ADD;
	case LX_NEG:
		return PR_NEG;
	case LX_LIT:
		return x->lit < 0 ? PR_NEG : PR_ATOM;
	default:
		return PR_ATOM;
	}
}

static void fmt_term(struct sink *k, const struct trace_pred_term *t)
{
	switch (t->kind) {
	case TRACE_TERM_EVENTS:
		put(k, "events");
		return;
	case TRACE_TERM_SENT:
		put(k, "sent");
		return;
	case TRACE_TERM_RECEIVED:
		put(k, "received");
		return;
	case TRACE_TERM_SENT_TO:
		put(k, "sent(");
		break;
	case TRACE_TERM_RECEIVED_FROM:
		put(k, "received(");
		break;
	case TRACE_TERM_BYTES_SENT:
		put(k, "bytes_sent");
		return;
	case TRACE_TERM_BYTES_RECEIVED:
		put(k, "bytes_received");
		return;
	case TRACE_TERM_MARK:
		put(k, "mark.");
		put(k, t->arg);
		return;
	case TRACE_TERM_VAR:
		put(k, "var.");
		put(k, t->arg);
		return;
	case TRACE_TERM_IN:
		put(k, "in(");
		break;
	case TRACE_TERM_LAST:
		put(k, "last(");
		break;
	case TRACE_TERM_EXITED:
		put(k, "exited");
		return;
	default:
		put(k, "?");
		return;
	}
	put(k, t->arg);
	put(k, ")");
}

/* Parenthesises x when it binds less tightly than its context needs. */
static void fmt_lx(struct sink *k, const struct lx *x, int ctx)
{
	char num[32];
	int paren = lx_prec(x) < ctx;

	if (paren)
		put(k, "(");
	switch (x->kind) {
	case LX_LIT:
		snprintf(num, sizeof(num), "%" PRId64, x->lit);
		put(k, num);
		break;
	case LX_TERM:
		fmt_term(k, &x->term);
		break;
	case LX_OR:
	case LX_AND: {
		/* and / or are associative: no parentheses for a chain of the same operator. */
		int prec = x->kind == LX_OR ? PR_OR : PR_AND;

		fmt_lx(k, x->a, prec);
		put(k, x->kind == LX_OR ? " or " : " and ");
		fmt_lx(k, x->b, prec);
		break;
	}
	case LX_NOT:
		put(k, "not ");
		fmt_lx(k, x->a, PR_NOT);
		break;
	case LX_CMP:
		fmt_lx(k, x->a, PR_ADD);
		put(k, " ");
		put(k, cmp_text[x->op]);
		put(k, " ");
		fmt_lx(k, x->b, PR_ADD);
		break;
	case LX_ADD:
	case LX_SUB:
		fmt_lx(k, x->a, PR_ADD);
		put(k, x->kind == LX_ADD ? " + " : " - ");
		fmt_lx(k, x->b, PR_NEG); /* a - (b - c) keeps its parentheses */
		break;
	case LX_NEG:
		put(k, "-");
		fmt_lx(k, x->a, PR_ATOM); /* -(a + b), -(-x), -mark.x */
		break;
	}
	if (paren)
		put(k, ")");
}

static void fmt_sp(struct sink *k, const struct trace_pred_sp *sp)
{
	put(k, sp->proc);
	put(k, ": ");
	fmt_lx(k, sp->local, PR_OR);
}

static void fmt_pn(struct sink *k, const struct pnode *n, int parent)
{
	size_t i;
	const char *sep = n->kind == PN_AND ? " && " : n->kind == PN_OR ? " || " : " -> ";
	int paren = n->kind == PN_OR && parent == PN_AND;

	if (n->kind == PN_SP) {
		fmt_sp(k, n->sp);
		return;
	}
	if (paren)
		put(k, "(");
	for (i = 0; i < n->n; i++) {
		if (i)
			put(k, sep);
		fmt_pn(k, n->kids[i], n->kind);
	}
	if (paren)
		put(k, ")");
}

int trace_pred_format(const struct trace_pred *p, char *buf, size_t cap)
{
	struct sink k = {buf, buf ? cap : 0, 0};

	if (buf && cap)
		buf[0] = '\0';
	if (p)
		fmt_pn(&k, p->root, 0);
	return sink_result(&k);
}

int trace_pred_sp_format(const struct trace_pred_sp *sp, char *buf, size_t cap)
{
	struct sink k = {buf, buf ? cap : 0, 0};

	if (buf && cap)
		buf[0] = '\0';
	if (sp)
		fmt_sp(&k, sp);
	return sink_result(&k);
}

/* ---------------------------------------------------------------------------------------
 * Evaluation.  Every term is fetched before anything is combined (no short-circuit), so a
 * term the caller cannot evaluate (var.SYMBOL offline) fails the evaluation whatever the
 * values of the others: the outcome never depends on evaluation order.
 */

/* 64-bit two's complement arithmetic that wraps instead of overflowing (which would be
 * undefined behaviour in C). */
static int64_t ev_int(const struct lx *x, const int64_t *vals)
{
	switch (x->kind) {
	case LX_LIT:
		return x->lit;
	case LX_TERM:
		return vals[x->tidx];
	case LX_ADD:
		return (int64_t)((uint64_t)ev_int(x->a, vals) + (uint64_t)ev_int(x->b, vals));
	case LX_SUB:
		return (int64_t)((uint64_t)ev_int(x->a, vals) - (uint64_t)ev_int(x->b, vals));
	case LX_NEG:
		return (int64_t)(0 - (uint64_t)ev_int(x->a, vals));
	default:
		return 0;
	}
}

static int ev_bool(const struct lx *x, const int64_t *vals)
{
	int64_t a, b;

	switch (x->kind) {
	case LX_TERM:
		return vals[x->tidx] != 0;
	case LX_NOT:
		return !ev_bool(x->a, vals);
	case LX_AND:
		return ev_bool(x->a, vals) & ev_bool(x->b, vals);
	case LX_OR:
		return ev_bool(x->a, vals) | ev_bool(x->b, vals);
	case LX_CMP:
		a = ev_int(x->a, vals);
		b = ev_int(x->b, vals);
		switch (x->op) {
		case CMP_EQ:
			return a == b;
		case CMP_NE:
			return a != b;
		case CMP_LT:
			return a < b;
		case CMP_LE:
			return a <= b;
		case CMP_GT:
			return a > b;
		default:
			return a >= b;
		}
	default:
		return 0;
	}
}

int trace_pred_sp_eval(const struct trace_pred_sp *sp, trace_term_fn term, void *ctx, int *truth)
{
	int64_t small[16], *vals = small;
	size_t i;
	int rc = 0;

	if (!sp || !term || !truth)
		return TRACE_EINVAL;
	if (sp->nterms > sizeof(small) / sizeof(small[0])) {
		vals = malloc(sp->nterms * sizeof(*vals));
		if (!vals)
			return TRACE_ENOMEM;
	}
	for (i = 0; i < sp->nterms; i++) {
		vals[i] = 0;
		rc = term(ctx, sp->terms[i], &vals[i]);
		if (rc < 0)
			goto out;
		rc = 0;
	}
	*truth = ev_bool(sp->local, vals);
out:
	if (vals != small)
		free(vals);
	return rc;
}

static int ev_tree(const struct pnode *n, int (*sp_truth)(void *, const struct trace_pred_sp *),
                   void *ctx)
{
	size_t i;
	int r, acc, err = 0;

	if (n->kind == PN_SP) {
		r = sp_truth(ctx, n->sp);
		return r < 0 ? r : r != 0;
	}
	acc = n->kind == PN_AND;
	for (i = 0; i < n->n; i++) {
		r = ev_tree(n->kids[i], sp_truth, ctx);
		if (r < 0) {
			if (!err)
				err = r;
			continue;
		}
		acc = n->kind == PN_AND ? acc & r : acc | r;
	}
	return err ? err : acc;
}

int trace_pred_eval_tree(const struct trace_pred *p,
                         int (*sp_truth)(void *ctx, const struct trace_pred_sp *sp), void *ctx)
{
	if (!p || !sp_truth || p->root->kind == PN_LINK)
		return TRACE_EINVAL;
	return ev_tree(p->root, sp_truth, ctx);
}
