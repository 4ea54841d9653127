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
 * it.  Without libdw at build time the lines stay as the LC sent them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gd_internal.h"

#ifdef HAVE_LIBDW
#include <elfutils/libdwfl.h>

static char *debuginfo_path;

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.debuginfo_path = &debuginfo_path,
};

/* One frame at pc: appended to out. */
static size_t frame_text(Dwfl *d, int depth, unsigned long long pc, char *out, size_t cap)
{
	/* a return address: the call is the byte before it (not for a signal frame, rare) */
	Dwarf_Addr a = pc ? pc - 1 : pc, bias = 0;
	Dwfl_Module *m = dwfl_addrmodule(d, a);
	const char *mod, *fn, *src = NULL, *slash;
	GElf_Off off = 0;
	GElf_Sym sym;
	Dwfl_Line *l;
	char name[256];
	int line = 0;

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
	if (src && line > 0)
		return (size_t)snprintf(out, cap, "#%d 0x%llx %s (%s:%d) in %s+0x%llx\n", depth, pc,
		                        fn ? fn : "??", src, line, mod,
		                        (unsigned long long)(pc - bias));
	return (size_t)snprintf(out, cap, "#%d 0x%llx %s+0x%llx in %s+0x%llx\n", depth, pc,
	                        fn ? fn : "??", (unsigned long long)(fn ? off + 1 : 0), mod,
	                        (unsigned long long)(pc - bias));
}

char *rep__symbolize(long pid, const char *raw)
{
	size_t cap = strlen(raw) * 4 + 4096, pos = 0;
	char *out = malloc(cap);
	Dwfl *d = dwfl_begin(&proc_callbacks);
	const char *p = raw;

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
		int depth;

		if (sscanf(p, "#%d 0x%llx", &depth, &pc) == 2)
			n = frame_text(d, depth, pc, out + pos, cap - pos - 1);
		if (!n) /* not a frame line, or no module there: as the LC wrote it */
			n = (size_t)snprintf(out + pos, cap - pos, "%.*s\n", (int)len, p);
		pos += n < cap - pos ? n : cap - pos - 1;
		p += len + (nl ? 1 : 0);
	}
	out[pos] = '\0';
	dwfl_end(d);
	return out;
}
#else
char *rep__symbolize(long pid, const char *raw)
{
	(void)pid;
	(void)raw;
	return NULL;
}
#endif
