#!/bin/bash
# make.sh: `make -j2` building a small C program (six sources compiled two at a time by gcc,
# each job a shell, cc1 and as, then the link), and the program run: the jobserver's pipe
# shared by make and its jobs, many short processes.  The objects go into $C_RUN, which is
# put back as it was set up before the replay (tests/corpus/lib.sh): the replay builds them
# again.
set -u
. "$(dirname "$0")/lib.sh"
corpus_need make gcc
corpus_init make-j2 "make $(make --version | sed -n '1s/GNU Make //p'), gcc $(gcc -dumpfullversion)"
for i in 1 2 3 4 5 6; do
    cat > "$C_RUN/f$i.c" <<EOF
int f$i(int x);
int f$i(int x) { int s = 0; for (int k = 0; k < x * $i; k++) s += k % ($i + 2); return s; }
EOF
done
cat > "$C_RUN/main.c" <<'EOF'
#include <stdio.h>
int f1(int), f2(int), f3(int), f4(int), f5(int), f6(int);
int main(void)
{
	printf("%d %d %d %d %d %d\n", f1(10), f2(20), f3(30), f4(40), f5(50), f6(60));
	return 0;
}
EOF
cat > "$C_RUN/Makefile" <<'EOF'
OBJS = main.o f1.o f2.o f3.o f4.o f5.o f6.o
prog: $(OBJS)
	$(CC) -o $@ $(OBJS)
%.o: %.c
	$(CC) -O1 -c -o $@ $<
EOF
corpus_session <<EOF
cd $C_RUN
make -j2 CC=gcc && echo built
./prog
EOF
C_EXPECT=built
corpus_run
