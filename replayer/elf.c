/*
 * elf.c: the ELF build-id of an executable file (NT_GNU_BUILD_ID), so that the GD refuses
 * to replay a binary that is not the recorded one (the recorder stores the id it found in
 * its own memory image, trace header field build_id), with libtrace's note scanner.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>

#include "rep.h"

int rep_elf_build_id(const char *path, uint8_t *out, size_t cap)
{
	Elf64_Ehdr eh;
	int fd, rc = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return TRACE_EIO;
	if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) ||
	    memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_phentsize != sizeof(Elf64_Phdr)) {
		rc = TRACE_EINVAL;
		errno = ENOEXEC; /* (for the caller's message: cut short, or no ELF file) */
		goto out;
	}
	for (unsigned i = 0; i < eh.e_phnum && rc == 0; i++) {
		Elf64_Phdr ph;
		uint8_t *buf;

		if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
		    (ssize_t)sizeof(ph)) {
			rc = TRACE_EIO;
			errno = ENOEXEC;
			break;
		}
		if (ph.p_type != PT_NOTE || ph.p_filesz == 0 || ph.p_filesz > (1u << 20))
			continue;
		if (!(buf = malloc(ph.p_filesz))) {
			rc = TRACE_ENOMEM;
			break;
		}
		if (pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) == (ssize_t)ph.p_filesz)
			rc = trace_elf_build_id(buf, ph.p_filesz, out, cap);
		free(buf);
	}
out:
	{
		int e = errno;

		close(fd);
		errno = e;
	}
	return rc;
}
