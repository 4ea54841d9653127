/*
 * fake_go.c: a C program carrying the note the Go linker writes (owner "Go", type 4, the
 * build id) in a PT_NOTE segment, as every Go program has: encore record warns that such a
 * program's I/O goes unrecorded (its runtime makes its system calls itself).
 */
#include <stdio.h>

__asm__(".section .note.go.buildid,\"a\",@note\n"
        ".p2align 2\n"
        ".long 4\n"          /* namesz */
        ".long 8\n"          /* descsz */
        ".long 4\n"          /* type: NT_GO_BUILDID */
        ".asciz \"Go\"\n"
        ".byte 0\n"          /* (name padded to 4) */
        ".ascii \"fakebid!\"\n"
        ".text\n");

int main(void)
{
	printf("hello\n");
	return 0;
}
