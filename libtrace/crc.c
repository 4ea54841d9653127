/*
 * crc.c: CRC-32C, used twice: as the checksum of headers and chunks, and as the content
 * check of message bytes (trace_hash), where speed matters because the recorder runs it on
 * every byte a program sends or receives: the SSE4.2 crc32 instruction when the CPU has it,
 * a slicing table otherwise.  Both give the same values.
 */
#include <stdint.h>
#include <string.h>

#include "trace.h"

#define POLY 0x82f63b78u /* CRC-32C (Castagnoli), reflected */

static uint32_t table[8][256];
static int table_ready;
static int have_sse42 = -1;

static void table_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (POLY & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (i = 0; i < 256; i++) {
		c = table[0][i];
		for (j = 1; j < 8; j++) {
			c = table[0][c & 0xff] ^ (c >> 8);
			table[j][i] = c;
		}
	}
	__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
}

static uint32_t crc_soft(uint32_t crc, const uint8_t *p, size_t len)
{
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE))
		table_init(); /* idempotent: racing initialisers write the same values */
	while (len && ((uintptr_t)p & 7)) {
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		w ^= crc;
		crc = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^ table[5][(w >> 16) & 0xff] ^
		      table[4][(w >> 24) & 0xff] ^ table[3][(w >> 32) & 0xff] ^
		      table[2][(w >> 40) & 0xff] ^ table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2")))
static uint32_t crc_hw(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = crc;

	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		c = __builtin_ia32_crc32di(c, w);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return (uint32_t)c;
}
#endif

static uint32_t crc_raw(uint32_t crc, const uint8_t *p, size_t len)
{
#if defined(__x86_64__)
	int hw = __atomic_load_n(&have_sse42, __ATOMIC_RELAXED);

	if (hw < 0) {
		__builtin_cpu_init();
		hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
		__atomic_store_n(&have_sse42, hw, __ATOMIC_RELAXED);
	}
	if (hw)
		return crc_hw(crc, p, len);
#endif
	return crc_soft(crc, p, len);
}

uint32_t trace_crc32c(uint32_t crc, const void *buf, size_t len)
{
	return ~crc_raw(~crc, buf, len);
}

uint32_t trace_hash(uint32_t h, const void *buf, size_t len)
{
	return ~crc_raw(~h, buf, len);
}

/* For the tests: force the portable path (0) or the default choice (-1). */
void trace_crc_force_soft(int soft);
void trace_crc_force_soft(int soft)
{
	__atomic_store_n(&have_sse42, soft ? 0 : -1, __ATOMIC_RELAXED);
}
