/*
 * env.c: the codec of the two environment variables that carry a process's configuration and
 * state, ENCORE_RECORD (recorder/core.c reads it at load and writes it for exec and spawn)
 * and ENCORE_REPLAY (the GD writes it, replayer/lc.c reads it and writes it for exec and
 * spawn).  Pure functions: no environment, no globals; the formats are in interpose.h.
 */
#include <string.h>

#include "interpose.h"

/* --- pieces ------------------------------------------------------------------------------- */

/* A decimal number of 1 to 20 digits, no sign, no space. */
static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	size_t i;

	if (n == 0 || n > 20)
		return -1;
	for (i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return -1;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return 0;
}

/* As parse_u64, with an optional '-' (the value is an int64_t stored in *out). */
static int parse_i64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v;

	if (n && s[0] == '-') {
		if (parse_u64(s + 1, n - 1, &v) != 0 || v > (uint64_t)INT64_MAX + 1)
			return -1;
		*out = (uint64_t)0 - v;
		return 0;
	}
	if (parse_u64(s, n, &v) != 0 || v > (uint64_t)INT64_MAX)
		return -1;
	*out = v;
	return 0;
}

int ip_valid_name(const char *s, size_t n, size_t cap)
{
	size_t i;

	if (n == 0 || n >= cap)
		return 0;
	for (i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '.' || s[i] == '_' || s[i] == '-'))
			return 0;
	return s[0] != '.';
}

int ip_env_list_next(const char **p, const char *end, uint64_t *v, int want, unsigned neg)
{
	const char *s = *p, *item;
	int got = 0;

	while (s < end && *s == ',')
		s++;
	if (s >= end) {
		*p = end;
		return 0;
	}
	item = s;
	while (s < end && *s != ',')
		s++;
	*p = s;
	/* fields separated by ':' */
	for (const char *f = item; got <= want; got++) {
		const char *c = f;
		int bad;

		while (c < s && *c != ':')
			c++;
		if (got == want)
			return -1;
		bad = (neg >> got) & 1 ? parse_i64(f, (size_t)(c - f), &v[got]) :
		                         parse_u64(f, (size_t)(c - f), &v[got]);
		if (bad)
			return -1;
		if (c == s)
			return got + 1 == want ? 1 : -1;
		f = c + 1;
	}
	return -1;
}

/* Output: printf-free (the callers run after fork and at exec, in programs that may not be
 * able to allocate), each append checked against the capacity. */
struct out {
	char *buf;
	size_t cap, pos;
	int bad;
};

static void put_str(struct out *o, const char *s)
{
	size_t n = strlen(s);

	if (o->bad || n >= o->cap - o->pos) {
		o->bad = 1;
		return;
	}
	memcpy(o->buf + o->pos, s, n + 1);
	o->pos += n;
}

static void put_u64(struct out *o, uint64_t v)
{
	char tmp[24];
	size_t i = sizeof(tmp);

	tmp[--i] = '\0';
	do {
		tmp[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	put_str(o, tmp + i);
}

static void put_i64(struct out *o, int64_t v)
{
	if (v < 0) {
		put_str(o, "-");
		put_u64(o, (uint64_t)0 - (uint64_t)v);
	} else {
		put_u64(o, (uint64_t)v);
	}
}

/* KEY=VALUE; (key given with its '=') */
static void put_key_u64(struct out *o, const char *key, uint64_t v)
{
	put_str(o, key);
	put_u64(o, v);
	put_str(o, ";");
}

static void put_key_i64(struct out *o, const char *key, int64_t v)
{
	put_str(o, key);
	put_i64(o, v);
	put_str(o, ";");
}

static void put_key_str(struct out *o, const char *key, const char *v)
{
	put_str(o, key);
	put_str(o, v);
	put_str(o, ";");
}

static void put_list(struct out *o, const struct ip_env_list *l)
{
	uint64_t v[16];
	int first = 1;

	if (l->nfields < 1 || l->nfields > 16) {
		o->bad = 1;
		return;
	}
	while (!o->bad && l->next(l->ctx, v)) {
		if (!first)
			put_str(o, ",");
		for (int i = 0; i < l->nfields; i++) {
			if (i)
				put_str(o, ":");
			if ((l->neg >> i) & 1)
				put_i64(o, (int64_t)v[i]);
			else
				put_u64(o, v[i]);
		}
		first = 0;
	}
}

/* KEY=LIST; (an empty list when l is NULL) */
static void put_key_list(struct out *o, const char *key, const struct ip_env_list *l)
{
	put_str(o, key);
	if (l)
		put_list(o, l);
	put_str(o, ";");
}

/* Both values open with the version and the name, and end with dir=, running to the end. */
static void put_head(struct out *o, const char *name)
{
	put_key_str(o, "v=", "1");
	put_key_str(o, "name=", name);
}

static int put_dir(struct out *o, const char *dir)
{
	put_str(o, "dir=");
	put_str(o, dir ? dir : "");
	return o->bad ? -1 : 0;
}

/* The next KEY=VALUE of s at *p: key and its length, the value and its length (up to ';', or
 * to the end for `dir`).  Returns 1, 0 at the end of s, -1 when malformed. */
static int next_pair(const char **p, const char **key, size_t *klen, const char **val,
                     size_t *vlen)
{
	const char *s = *p, *eq, *end;

	if (!*s)
		return 0;
	eq = strchr(s, '=');
	if (!eq)
		return -1;
	*key = s;
	*klen = (size_t)(eq - s);
	*val = eq + 1;
	if (*klen == 3 && memcmp(s, "dir", 3) == 0) {
		*vlen = strlen(eq + 1);
		*p = eq + 1 + *vlen;
		return 1;
	}
	end = strchr(eq + 1, ';');
	if (!end)
		return -1;
	*vlen = (size_t)(end - eq - 1);
	*p = end + 1;
	return 1;
}

#define KEY(k) (klen == sizeof(k) - 1 && memcmp(key, k, klen) == 0)

static int dir_ok(const char *v, size_t n)
{
	return v[0] == '/' && n < IP_DIR_MAX;
}

/* --- decoding ---------------------------------------------------------------------------- */

/* What both variables hold alike: the lists ch= and fd= (kept as slices) and dir=, last. */
struct shared {
	const char *name;              /* the decoded name so far: must not be empty at dir= */
	struct ip_env_slice *ch, *fd;
	const char **dir;
};

/* One KEY=VALUE of one format's own keys: 0, or -1 when the value is invalid. */
typedef int (*key_fn)(void *e, const char *key, size_t klen, const char *val, size_t vlen);

/* Decode s: the shared keys into sh, every other pair to own(e, ...).  0 when s ends with a
 * valid dir= after a name, else -1. */
static int decode(const char *s, const struct shared *sh, key_fn own, void *e)
{
	const char *p = s, *key, *val;
	size_t klen, vlen;

	while (next_pair(&p, &key, &klen, &val, &vlen) > 0) {
		if (KEY("dir")) {
			if (!dir_ok(val, vlen))
				return -1;
			*sh->dir = val;
			return sh->name[0] ? 0 : -1;
		}
		if (KEY("ch")) {
			sh->ch->p = val;
			sh->ch->len = vlen;
		} else if (KEY("fd")) {
			sh->fd->p = val;
			sh->fd->len = vlen;
		} else if (own(e, key, klen, val, vlen) != 0) {
			return -1;
		}
	}
	return -1; /* no dir: cut short */
}

/* --- ENCORE_RECORD ------------------------------------------------------------------------ */

static int rec_key(void *arg, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct ip_rec_env *e = arg;
	uint64_t v;

	if (KEY("name") || KEY("parent")) {
		char *dst = KEY("name") ? e->name : e->parent;

		if (vlen && !ip_valid_name(val, vlen, TRACE_NAME_MAX))
			return -1;
		memcpy(dst, val, vlen);
		dst[vlen] = '\0';
		return 0;
	}
	if (KEY("sess")) {
		if (!ip_valid_name(val, vlen, IP_SESSION_MAX))
			return -1;
		memcpy(e->session, val, vlen);
		e->session[vlen] = '\0';
		return 0;
	}
	if (KEY("v"))
		return 0; /* version 1 only so far */
	if (parse_u64(val, vlen, &v) != 0)
		return -1;
	if (KEY("seg"))
		e->seg = (uint32_t)v;
	else if (KEY("first"))
		e->first = v;
	else if (KEY("fidx"))
		e->fork_index = v;
	else if (KEY("forks"))
		e->forks = (uint32_t)v;
	else if (KEY("nch"))
		e->next_chan = (uint32_t)v;
	else if (KEY("k"))
		e->hash_every = v ? (uint32_t)v : 64;
	else if (KEY("depth"))
		e->depth = v > 32 ? 32 : (uint32_t)v;
	else if (KEY("max"))
		e->max_bytes = v;
	else if (KEY("zl"))
		e->zlevel = v > 19 ? 19 : (uint32_t)v;
	else if (KEY("pid"))
		e->pid = (int64_t)v;
	return 0;
}

int ip_rec_env_decode(const char *s, struct ip_rec_env *e)
{
	const struct shared sh = { e->name, &e->ch, &e->fd, &e->dir };

	memset(e, 0, sizeof(*e));
	e->hash_every = 64;
	e->depth = 4;
	return decode(s, &sh, rec_key, e);
}

int ip_rec_env_encode(char *buf, size_t cap, const struct ip_rec_env *e,
                      const struct ip_env_list *ch, const struct ip_env_list *fd)
{
	struct out o = { buf, cap, 0, cap == 0 };

	put_head(&o, e->name);
	put_key_str(&o, "parent=", e->parent);
	put_key_str(&o, "sess=", e->session);
	put_key_u64(&o, "seg=", e->seg);
	put_key_u64(&o, "first=", e->first);
	put_key_u64(&o, "fidx=", e->fork_index);
	put_key_u64(&o, "forks=", e->forks);
	put_key_u64(&o, "nch=", e->next_chan);
	put_key_i64(&o, "pid=", e->pid);
	put_key_u64(&o, "k=", e->hash_every);
	put_key_u64(&o, "depth=", e->depth);
	put_key_u64(&o, "max=", e->max_bytes);
	if (e->zlevel) /* 0, stored chunks, is what an absent key means */
		put_key_u64(&o, "zl=", e->zlevel);
	put_key_list(&o, "ch=", ch);
	put_key_list(&o, "fd=", fd);
	return put_dir(&o, e->dir);
}

/* --- ENCORE_REPLAY ------------------------------------------------------------------------ */

static int rep_key(void *arg, const char *key, size_t klen, const char *val, size_t vlen)
{
	struct ip_rep_env *e = arg;
	uint64_t v;

	if (KEY("name")) {
		if (!vlen || vlen >= sizeof(e->name))
			return -1;
		memcpy(e->name, val, vlen);
		e->name[vlen] = '\0';
	} else if (KEY("seg")) {
		if (parse_u64(val, vlen, &v) != 0)
			return -1;
		e->seg = (uint32_t)v;
	} else if (KEY("pid")) {
		if (parse_i64(val, vlen, &v) != 0)
			return -1;
		e->pid = (int64_t)v;
	} else if (KEY("rpid")) {
		if (parse_i64(val, vlen, &v) != 0)
			return -1;
		e->rpid = (int64_t)v;
	} else if (KEY("t0")) {
		if (parse_i64(val, vlen, &v) != 0)
			return -1;
		e->t0 = (int64_t)v;
	} else if (KEY("first")) {
		if (parse_u64(val, vlen, &e->first) != 0)
			return -1;
		e->has_first = 1;
	} else if (KEY("cnt")) {
		const char *q = val;
		uint64_t c[4];

		if (ip_env_list_next(&q, val + vlen, c, 4, 0xf) == 1 && q == val + vlen) {
			for (int i = 0; i < 4; i++)
				e->cnt[i] = (int64_t)c[i];
			e->has_cnt = 1;
		}
	} else if (KEY("kids")) {
		e->kids.p = val;
		e->kids.len = vlen;
	}
	return 0; /* unknown keys are ignored */
}

int ip_rep_env_decode(const char *s, struct ip_rep_env *e)
{
	const struct shared sh = { e->name, &e->ch, &e->fd, &e->dir };

	memset(e, 0, sizeof(*e));
	return decode(s, &sh, rep_key, e);
}

int ip_rep_env_encode(char *buf, size_t cap, const struct ip_rep_env *e,
                      const struct ip_env_list *ch, const struct ip_env_list *fd)
{
	struct out o = { buf, cap, 0, cap == 0 };

	put_head(&o, e->name);
	put_key_i64(&o, "pid=", e->pid);
	put_key_u64(&o, "seg=", e->seg);
	if (e->rpid)
		put_key_i64(&o, "rpid=", e->rpid);
	if (e->t0)
		put_key_i64(&o, "t0=", e->t0);
	if (e->has_first)
		put_key_u64(&o, "first=", e->first);
	if (ch)
		put_key_list(&o, "ch=", ch);
	if (fd)
		put_key_list(&o, "fd=", fd);
	if (e->has_cnt) {
		put_str(&o, "cnt=");
		for (int i = 0; i < 4; i++) {
			if (i)
				put_str(&o, ":");
			put_i64(&o, e->cnt[i]);
		}
		put_str(&o, ";");
	}
	if (e->kids_text && e->kids_text[0])
		put_key_str(&o, "kids=", e->kids_text);
	return put_dir(&o, e->dir);
}
