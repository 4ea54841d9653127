/*
 * elfsym.c: function names for call-site frames, found offline.  The recorder stores a frame
 * as the path of its object and the address in it, as the object's symbol tables count
 * addresses (it may not look names up inside the recorded process: that allocates and takes
 * the loader's lock, see recorder/site.c).  The reader names each such frame from the
 * object's .symtab (or .dynsym when stripped), read with plain preads: a file that is missing,
 * not ELF, or damaged leaves the frame unnamed (schemas/trace-format.md, "Call-site stacks").
 *
 * The names come from the file found at that path when the trace is read: an object rebuilt
 * since the recording names the wrong functions.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format.h"

#define MAX_SECTION (512u << 20) /* larger symbol or string tables are not believed */

struct sym {
	uint64_t addr;
	uint64_t size;
	const char *name;
};

struct fmt_syms {
	struct fmt_syms *next;
	char *path;
	struct sym *v;
	size_t n;
	char **strtabs;  /* the string tables the names point into */
	size_t nstrtabs;
};

/* The plainest of several names for one address: a public name before __libc_ and _ ones. */
static int rank(const char *name)
{
	return name[0] == '_' ? (name[1] == '_' ? 2 : 1) : 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (rank(x->name) != rank(y->name))
		return rank(x->name) - rank(y->name);
	return strcmp(x->name, y->name);
}

/* Read one symbol table (section i) with its string table into s. */
static int load_table(struct fmt_syms *s, int fd, const Elf64_Shdr *sh, uint16_t nsh,
                      uint16_t i, uint64_t fsize)
{
	const Elf64_Shdr *tab = &sh[i], *str;
	Elf64_Sym *syms = NULL;
	char *strs = NULL, **nt;
	size_t nsyms, k;
	struct sym *nv;

	if (tab->sh_link >= nsh || tab->sh_entsize != sizeof(Elf64_Sym))
		return 0;
	str = &sh[tab->sh_link];
	if (tab->sh_size > MAX_SECTION || str->sh_size > MAX_SECTION || str->sh_size == 0 ||
	    tab->sh_offset > fsize || tab->sh_size > fsize - tab->sh_offset ||
	    str->sh_offset > fsize || str->sh_size > fsize - str->sh_offset)
		return 0;
	nsyms = tab->sh_size / sizeof(Elf64_Sym);
	syms = malloc(nsyms ? nsyms * sizeof(*syms) : 1);
	strs = malloc(str->sh_size + 1);
	nt = realloc(s->strtabs, (s->nstrtabs + 1) * sizeof(*nt));
	if (nt)
		s->strtabs = nt;
	nv = realloc(s->v, (s->n + nsyms + 1) * sizeof(*nv));
	if (nv)
		s->v = nv;
	if (!syms || !strs || !nt || !nv) {
		free(syms);
		free(strs);
		return TRACE_ENOMEM;
	}
	if (fmt_pread_all(fd, syms, nsyms * sizeof(*syms), tab->sh_offset) != 0 ||
	    fmt_pread_all(fd, strs, str->sh_size, str->sh_offset) != 0) {
		free(syms);
		free(strs);
		return 0;
	}
	strs[str->sh_size] = '\0';
	s->strtabs[s->nstrtabs++] = strs;
	for (k = 0; k < nsyms; k++) {
		unsigned type = ELF64_ST_TYPE(syms[k].st_info);

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || syms[k].st_shndx == SHN_UNDEF ||
		    syms[k].st_value == 0 || syms[k].st_name >= str->sh_size ||
		    !strs[syms[k].st_name])
			continue;
		s->v[s->n++] = (struct sym){ syms[k].st_value, syms[k].st_size,
		                             strs + syms[k].st_name };
	}
	free(syms);
	return 0;
}

/* Every function symbol of the file at path; an unreadable file gives none. */
static int load(struct fmt_syms *s)
{
	Elf64_Ehdr eh;
	Elf64_Shdr *sh = NULL;
	struct stat st;
	uint16_t i;
	int fd, rc = 0, have_symtab = 0;

	fd = open(s->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    fmt_pread_all(fd, &eh, sizeof(eh), 0) != 0 || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
	    eh.e_shoff > (uint64_t)st.st_size ||
	    (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size - eh.e_shoff)
		goto out;
	sh = malloc(eh.e_shnum * sizeof(*sh));
	if (!sh) {
		rc = TRACE_ENOMEM;
		goto out;
	}
	if (fmt_pread_all(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff) != 0)
		goto out;
	/* .symtab has every function, the static ones too; .dynsym only when it is stripped. */
	for (i = 0; i < eh.e_shnum && rc == 0; i++)
		if (sh[i].sh_type == SHT_SYMTAB) {
			have_symtab = 1;
			rc = load_table(s, fd, sh, eh.e_shnum, i, (uint64_t)st.st_size);
		}
	for (i = 0; i < eh.e_shnum && rc == 0 && !have_symtab; i++)
		if (sh[i].sh_type == SHT_DYNSYM)
			rc = load_table(s, fd, sh, eh.e_shnum, i, (uint64_t)st.st_size);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), by_addr);
out:
	free(sh);
	close(fd);
	return rc;
}

int fmt_sym_lookup(struct fmt_syms **cache, const char *path, uint64_t pc, const char **name,
                   uint64_t *offset)
{
	struct fmt_syms *s;
	size_t lo = 0, hi;
	uint64_t at;
	int rc;

	*name = NULL;
	if (!path || path[0] != '/' || pc == 0)
		return 0;
	for (s = *cache; s; s = s->next)
		if (strcmp(s->path, path) == 0)
			break;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || !(s->path = strdup(path))) {
			free(s);
			return TRACE_ENOMEM;
		}
		s->next = *cache;
		*cache = s;
		if ((rc = load(s)) != 0)
			return rc;
	}
	/* pc is a return address: the call is the byte before it (a call may end a function). */
	at = pc - 1;
	hi = s->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].addr <= at)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return 0;
	/* several names for one address: the first of them, in by_addr order */
	while (lo > 1 && s->v[lo - 2].addr == s->v[lo - 1].addr)
		lo--;
	{
		const struct sym *y = &s->v[lo - 1];

		if (y->size && at - y->addr >= y->size)
			return 0;
		*name = y->name;
		*offset = pc - y->addr;
	}
	return 0;
}

void fmt_syms_free(struct fmt_syms *cache)
{
	while (cache) {
		struct fmt_syms *next = cache->next;
		size_t i;

		for (i = 0; i < cache->nstrtabs; i++)
			free(cache->strtabs[i]);
		free(cache->strtabs);
		free(cache->v);
		free(cache->path);
		free(cache);
		cache = next;
	}
}
