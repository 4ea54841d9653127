/* arc4.c: glibc's arc4random family (2.36), drawn from the getrandom system call inside libc,
 * printed: replay must give back the recorded values (recorder/io_more.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	unsigned char b[12];
	uint32_t a = arc4random(), u = arc4random_uniform(1000);

	arc4random_buf(b, sizeof(b));
	printf("arc4random %u uniform %u buf ", a, u);
	for (size_t i = 0; i < sizeof(b); i++)
		printf("%02x", b[i]);
	printf("\n");
	return u < 1000 ? 0 : 1;
}
