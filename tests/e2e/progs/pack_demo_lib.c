/* pack_demo_lib.c: the small shared library of tests/e2e/pack.sh's program. */
int pack_demo_shout(char *s);

int pack_demo_shout(char *s)
{
	int n = 0;

	for (; *s; s++, n++)
		if (*s >= 'a' && *s <= 'z')
			*s = (char)(*s - 'a' + 'A');
	return n;
}
