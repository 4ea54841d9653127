/*
 * symbols.c: backtraces of halted processes in terms of functions, files and lines.
 *
 * The local controller unwinds its process with libunwind and sends one line a frame,
 * "#N PC NAME+OFF (OBJECT)" (lc.c, backtrace_text), where NAME is the nearest symbol
 * libunwind finds: for libc's internal functions the nearest *exported* one
 * (`__libc_init_first+0x8a` where the code is `__libc_start_call_main`).  The GD, while
 * the process is halted, reads its mappings (/proc/PID/maps) through libdw (elfutils) and
 * resolves each PC from the whole symbol table of the mapped file, or of its separate
 * debug file (.gnu_debuglink, /usr/lib/debug/.build-id), and its DWARF line table:
 * "#N PC FUNCTION (FILE:LINE) in OBJECT+0xREL", or "#N PC FUNCTION+OFF in OBJECT+0xREL"
 * without line information; REL is the PC in the file's own addresses, as addr2line takes
 * it.  Functions the compiler inlined at the PC come first, each a frame of its own at the
 * line it is at (the DWARF inlined_subroutine scopes, their call_file and call_line), as
 * gdb shows them.  Without libdw at build time the lines stay as the LC sent them.
 *
 * rep_read_global reads a global integer of a halted process by its symbol, as var.SYMBOL
 * does in the LC (replayer/README.md), but from outside: for `encore debug`'s print.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gd_internal.h"

#ifdef HAVE_LIBDW
#include <dwarf.h>
#include <elfutils/libdwfl.h>

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* The name of a function's DIE (through its abstract origin for an inlined one). */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &attr));

	return n ? n : dwarf_diename(die);
}

/* The source file number `idx` of the CU of die, NULL when unknown. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t n;

	if (dwarf_getsrcfiles(cu, &files, &n) != 0 || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* The frames at pc: first the functions inlined there, innermost first (as gdb shows them),
 * each with the line it is at, then the function that holds the code.  Appended to out;
 * *depth counts the frames.  0 when pc is in no module. */
static size_t frame_text(Dwfl *d, int *depth, unsigned long long pc, char *out, size_t cap)
{
	/* a return address: the call is the byte before it (not for a signal frame, rare) */
	Dwarf_Addr a = pc ? pc - 1 : pc, bias = 0, cubias = 0;
	Dwfl_Module *m = dwfl_addrmodule(d, a);
	const char *mod, *fn, *src = NULL, *slash;
	Dwarf_Die *cu, *scopes = NULL;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *l;
	char name[256];
	int line = 0, nscopes = 0;
	size_t pos = 0;

	if (!m)
		return 0;
	mod = dwfl_module_info(m, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
	fn = dwfl_module_addrinfo(m, a, &off, &sym, NULL, NULL, NULL);
	if ((l = dwfl_module_getsrc(m, a)))
		src = dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL);
	if (!dwfl_module_getelf(m, &bias))
		bias = 0;
	if (fn && strchr(fn, '@')) { /* the symbol's version (__libc_start_main@@GLIBC_2.34) */
		snprintf(name, sizeof(name), "%.*s", (int)(strchr(fn, '@') - fn), fn);
		fn = name;
	}
	slash = mod ? strrchr(mod, '/') : NULL;
	mod = slash ? slash + 1 : mod ? mod : "?";
	if (src && line > 0 && (cu = dwfl_module_addrdie(m, a, &cubias)))
		nscopes = dwarf_getscopes(cu, a - cubias, &scopes);
	/* each inlined call: its function at the current line, then the line of the call */
	for (int i = 0; i < nscopes && pos + 512 < cap; i++) {
		Dwarf_Attribute attr;
		Dwarf_Word cl = 0, cf = 0;
		const char *f;

		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		pos += (size_t)snprintf(out + pos, cap - pos, "#%d 0x%llx %s (%s:%d) in %s+0x%llx\n",
		                        (*depth)++, pc, die_name(&scopes[i]) ? die_name(&scopes[i]) : "??",
		                        src, line, mod, (unsigned long long)(pc - bias));
		if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &cl) == 0 &&
		    dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &cf) == 0 &&
		    (f = call_file(cu, cf))) {
			src = f;
			line = (int)cl;
		}
	}
	free(scopes);
	if (pos + 512 >= cap)
		return pos;
	if (src && line > 0)
		pos += (size_t)snprintf(out + pos, cap - pos, "#%d 0x%llx %s (%s:%d) in %s+0x%llx\n",
		                        (*depth)++, pc, fn ? fn : "??", src, line, mod,
		                        (unsigned long long)(pc - bias));
	else
		pos += (size_t)snprintf(out + pos, cap - pos, "#%d 0x%llx %s+0x%llx in %s+0x%llx\n",
		                        (*depth)++, pc, fn ? fn : "??",
		                        (unsigned long long)(fn ? off + 1 : 0), mod,
		                        (unsigned long long)(pc - bias));
	return pos;
}

char *rep__symbolize(long pid, const char *raw)
{
	size_t cap = strlen(raw) * 4 + 4096, pos = 0;
	char *out = malloc(cap);
	Dwfl *d = dwfl_begin(&proc_callbacks);
	const char *p = raw;
	int depth = 0;

	if (!out || !d || pid <= 0) {
		free(out);
		if (d)
			dwfl_end(d);
		return NULL;
	}
	dwfl_report_begin(d);
	if (dwfl_linux_proc_report(d, (pid_t)pid) != 0 || dwfl_report_end(d, NULL, NULL) != 0) {
		free(out);
		dwfl_end(d);
		return NULL;
	}
	while (*p && pos + 1024 < cap) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p), n = 0;
		unsigned long long pc;
		int lc_depth;

		if (sscanf(p, "#%d 0x%llx", &lc_depth, &pc) == 2)
			n = frame_text(d, &depth, pc, out + pos, cap - pos - 1);
		if (!n) /* not a frame line, or no module there: as the LC wrote it */
			n = (size_t)snprintf(out + pos, cap - pos, "%.*s\n", (int)len, p);
		pos += n < cap - pos ? n : cap - pos - 1;
		p += len + (nl ? 1 : 0);
	}
	out[pos] = '\0';
	dwfl_end(d);
	return out;
}

/* rep_read_global: the data symbol `name` of halted process i, from the symbol tables of
 * the files it maps (the program first, then its libraries), read from /proc/PID/mem. */
struct global_find {
	const char *name;
	Dwarf_Addr addr;
	GElf_Xword size;
	int found;
};

static int find_global(Dwfl_Module *m, void **userdata, const char *mname, Dwarf_Addr start,
                       void *arg)
{
	struct global_find *f = arg;
	int n = dwfl_module_getsymtab(m);

	(void)userdata;
	(void)mname;
	(void)start;
	for (int i = 1; i < n && !f->found; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *nm = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);

		if (nm && GELF_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_shndx != SHN_UNDEF &&
		    strcmp(nm, f->name) == 0) {
			f->addr = addr;
			f->size = sym.st_size;
			f->found = 1;
		}
	}
	return f->found ? DWARF_CB_ABORT : DWARF_CB_OK;
}

int rep_read_global(struct rep *r, size_t i, const char *name, int64_t *value,
                    struct trace_diag *d)
{
	struct global_find f = { name, 0, 0, 0 };
	struct gd_proc *p;
	char path[64];
	Dwfl *dw;
	int fd;

	if (i >= r->nprocs || !r->procs[i].halted || r->procs[i].pid <= 0) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "the process is not halted");
		return TRACE_EINVAL;
	}
	p = &r->procs[i];
	if (!(dw = dwfl_begin(&proc_callbacks)))
		return TRACE_ENOMEM;
	dwfl_report_begin(dw);
	if (dwfl_linux_proc_report(dw, (pid_t)p->pid) == 0 && dwfl_report_end(dw, NULL, NULL) == 0)
		dwfl_getmodules(dw, find_global, &f, 0);
	dwfl_end(dw);
	if (!f.found) {
		rep__diag_set(d, TRACE_ENOENT, NULL, "no global variable %s in %s's symbol tables",
		              name, p->name);
		return TRACE_ENOENT;
	}
	if (f.size != 1 && f.size != 2 && f.size != 4 && f.size != 8) {
		rep__diag_set(d, TRACE_EINVAL, NULL, "%s is %llu bytes, not an integer", name,
		              (unsigned long long)f.size);
		return TRACE_EINVAL;
	}
	snprintf(path, sizeof(path), "/proc/%ld/mem", p->pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		union { int8_t b; int16_t h; int32_t w; int64_t q; } u;
		ssize_t n = pread(fd, &u, (size_t)f.size, (off_t)f.addr);

		close(fd);
		if (n == (ssize_t)f.size) {
			*value = f.size == 1 ? u.b : f.size == 2 ? u.h : f.size == 4 ? u.w : u.q;
			return 0;
		}
	}
	rep__diag_set(d, TRACE_EIO, path, "cannot read %s of %s: %s", name, p->name,
	              strerror(errno));
	return TRACE_EIO;
}
#else
int rep_read_global(struct rep *r, size_t i, const char *name, int64_t *value,
                    struct trace_diag *d)
{
	(void)r;
	(void)i;
	(void)name;
	(void)value;
	rep__diag_set(d, TRACE_EINVAL, NULL, "encore was built without libdw: no symbol reads");
	return TRACE_EINVAL;
}

char *rep__symbolize(long pid, const char *raw)
{
	(void)pid;
	(void)raw;
	return NULL;
}
#endif
