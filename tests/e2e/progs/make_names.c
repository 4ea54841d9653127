/*
 * make_names.c: makes and removes names in DIR by every call the recorder notes (recorder/
 * README.md, "Paths created"), each way that creates a name and each way that does not (an
 * open with O_CREAT of a file that is there, a rename onto a name that is there, an
 * exchange), so that record_paths.sh can compare the path records of its trace with what it
 * did.  Prints nothing; exits 1 if a call did not do what it should.
 * Usage: make_names DIR
 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#define MUST(x)                                                          \
	do {                                                             \
		if (!(x)) {                                              \
			fprintf(stderr, "make_names: failed: %s\n", #x); \
			return 1;                                        \
		}                                                        \
	} while (0)

int main(int argc, char **argv)
{
	FILE *f;
	int dfd, fd;

	if (argc != 2 || chdir(argv[1]) != 0 || (dfd = open(".", O_RDONLY | O_DIRECTORY)) < 0)
		return 2;
	MUST((fd = open("a", O_CREAT | O_WRONLY, 0644)) >= 0 && close(fd) == 0);  /* file a */
	MUST((fd = open("a", O_CREAT | O_WRONLY, 0644)) >= 0 && close(fd) == 0);  /* there */
	MUST((fd = openat(dfd, "./b", O_CREAT | O_EXCL | O_WRONLY, 0644)) >= 0 && close(fd) == 0);
	MUST(openat(dfd, "b", O_CREAT | O_EXCL | O_WRONLY, 0644) < 0);             /* EEXIST */
	MUST(mkdir("d", 0755) == 0 && mkdirat(dfd, "d/e", 0755) == 0);
	MUST(mkdir("d", 0755) != 0);                                               /* EEXIST */
	MUST(rename("a", "c") == 0);                     /* link c, removed a */
	MUST(rename("b", "c") == 0);                     /* c was there: removed b */
	MUST(link("c", "h") == 0 && symlink("c", "s") == 0);
	MUST(unlink("h") == 0 && rmdir("d/e") == 0 && remove("s") == 0);
	MUST((f = fopen("f", "w")) != NULL && fclose(f) == 0);                    /* file f */
	MUST((f = fopen("f", "a")) != NULL && fclose(f) == 0);                    /* there */
	MUST((fd = creat("g", 0644)) >= 0 && close(fd) == 0);                     /* file g */
	MUST(renameat2(AT_FDCWD, "g", AT_FDCWD, "c", RENAME_EXCHANGE) == 0);       /* nothing */
	MUST(renameat(dfd, "g", dfd, "d/g") == 0);                                 /* d/g, -g */
	MUST(unlinkat(dfd, "d/g", 0) == 0 && unlinkat(dfd, "d", AT_REMOVEDIR) == 0);
	return 0;
}
