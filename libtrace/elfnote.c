/*
 * elfnote.c: the GNU build-id (NT_GNU_BUILD_ID) among an ELF object's notes, which the
 * traces store to identify an executable or library (the header's build_id, file input
 * records: schemas/trace-format.md).  One scanner for both sides: the recorder reads the
 * PT_NOTE segments of the objects loaded in the recorded process (so it allocates nothing,
 * makes no system call and reads nothing past the segment), the replayer the same segments
 * read from the file, to refuse a binary that is not the recorded one.
 */
#include <elf.h>
#include <string.h>

#include "trace.h"

int trace_elf_build_id(const void *notes, size_t len, uint8_t *out, size_t cap)
{
	const uint8_t *p = notes;
	size_t off = 0;

	/* notes are 4-aligned in ELF32 and ELF64 alike, with the same header (three words) */
	while (len - off >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr nh;
		size_t nsz, dsz, room = len - off - sizeof(nh);

		memcpy(&nh, p + off, sizeof(nh));
		nsz = ((size_t)nh.n_namesz + 3) & ~(size_t)3;
		dsz = ((size_t)nh.n_descsz + 3) & ~(size_t)3;
		if (nsz > room || nh.n_descsz > room - nsz)
			break;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp(p + off + sizeof(nh), "GNU", 4) == 0) {
			if (nh.n_descsz > cap)
				return TRACE_EINVAL;
			memcpy(out, p + off + sizeof(nh) + nsz, nh.n_descsz);
			return (int)nh.n_descsz;
		}
		if (dsz > room - nsz)
			break;
		off += sizeof(nh) + nsz + dsz;
	}
	return 0;
}
