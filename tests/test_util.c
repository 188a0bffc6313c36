/* tests/test_util.c - arenas, checked arithmetic, parsing, maps, CRC. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/util.h"

Test(util, parse_i64)
{
	int64_t v;
	cr_expect(parse_i64("42", 2, &v) && v == 42);
	cr_expect(parse_i64("-1", 2, &v) && v == -1);
	cr_expect(parse_i64("9223372036854775807", 19, &v) && v == INT64_MAX);
	cr_expect(parse_i64("-9223372036854775808", 20, &v) && v == INT64_MIN);
	cr_expect(!parse_i64("9223372036854775808", 19, &v));
	cr_expect(!parse_i64("", 0, &v));
	cr_expect(!parse_i64("-", 1, &v));
	cr_expect(!parse_i64("1.5", 3, &v));
	cr_expect(!parse_i64(" 1", 2, &v));
	cr_expect(!parse_i64("+1", 2, &v));
	cr_expect(!parse_i64("12abc", 5, &v));
	cr_expect(parse_i64("12abc", 2, &v) && v == 12);
}

Test(util, checked_arithmetic)
{
	int64_t r;
	size_t z;
	cr_expect(mul_nonneg_i64(1LL << 31, 1LL << 31, &r) && r == 1LL << 62);
	cr_expect(!mul_nonneg_i64(1LL << 32, 1LL << 31, &r));
	cr_expect(!mul_nonneg_i64(-1, 2, &r));
	cr_expect(!add_nonneg_i64(INT64_MAX, 1, &r));
	cr_expect(!mul_size(SIZE_MAX / 2 + 1, 2, &z));
}

Test(util, crc32_check_value)
{
	/* the standard CRC-32 check value */
	cr_expect_eq(crc32_update(0, "123456789", 9), 0xCBF43926u);
	/* incremental equals one-shot */
	uint32_t c = crc32_update(0, "12345", 5);
	cr_expect_eq(crc32_update(c, "6789", 4), 0xCBF43926u);
}

/* CRC-32 a bit at a time, straight from the polynomial. */
static uint32_t crc_bitwise(uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	while (n--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? 0xedb88320u ^ (crc >> 1) : crc >> 1;
	}
	return ~crc;
}

/* Every length from 0 to 600 (below, at and past the 64 bytes where
 * folding starts, its 16-byte remainders), at every alignment of 16, from
 * a running value: the folding path must agree with the polynomial. */
Test(util, crc32_folding_agrees_with_the_polynomial)
{
	enum { N = 600 };
	static uint8_t buf[N + 16];
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
	size_t bad = 0;
	for (size_t off = 0; off < 16; off++)
		for (size_t n = 0; n <= N; n++)
			bad += crc32_update(0xdeadbeefu, buf + off, n) !=
			       crc_bitwise(0xdeadbeefu, buf + off, n);
	cr_expect_eq(bad, 0, "%zu lengths and offsets disagree", bad);
	/* 1 MB, in one call and in pieces of odd sizes */
	size_t big = 1 << 20;
	uint8_t *b = malloc(big);
	cr_assert(b);
	for (size_t i = 0; i < big; i++)
		b[i] = (uint8_t)((x = x * 1103515245u + 12345u) >> 16);
	uint32_t one = crc32_update(0, b, big), run = 0;
	for (size_t at = 0, k = 1; at < big; at += k, k = k * 7 % 1000 + 1)
		run = crc32_update(run, b + at, at + k > big ? big - at : k);
	cr_expect_eq(one, crc_bitwise(0, b, big));
	cr_expect_eq(run, one);
	free(b);
}

Test(util, namemap)
{
	NameMap m;
	char keys[1000][16];
	namemap_init(&m);
	for (int i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "k%d", i);
		cr_assert_eq(namemap_put(&m, keys[i], i), -1);
	}
	for (int i = 0; i < 1000; i++)
		cr_expect_eq(namemap_get(&m, keys[i]), i);
	cr_expect_eq(namemap_get(&m, "nope"), -1);
	cr_expect_eq(namemap_put(&m, "k5", 77), 5);
	cr_expect_eq(namemap_get(&m, "k5"), 77);
	namemap_release(&m);
}

Test(util, arena)
{
	Arena a;
	arena_init(&a);
	char *s = arena_strdup(&a, "hello");
	int *big = arena_array(&a, 1 << 20, sizeof(int)); /* own chunk */
	char *t = arena_printf(&a, "%s-%d", s, 7);
	big[(1 << 20) - 1] = 3;
	cr_expect_str_eq(t, "hello-7");
	cr_expect_eq((uintptr_t)arena_alloc(&a, 3) % 16, 0);
	int *arr = NULL;
	int32_t n = 0, cap = 0;
	for (int i = 0; i < 100; i++) {
		int32_t k = ARENA_PUSH(&a, arr, n, cap);
		arr[k] = i;
	}
	cr_expect_eq(n, 100);
	cr_expect_eq(arr[99], 99);
	arena_release(&a);
}

Test(util, arena_of_large_chunks)
{
	/* a.chunk set: 3 MB in 1 KB pieces from one chunk, contiguous
	 * (64 KB chunks would break the run every 64), a block above the
	 * chunk size in a chunk of its own behind it, and the setting kept
	 * across arena_release */
	Arena a;
	arena_init(&a);
	a.chunk = 4u << 20;
	char *first = arena_alloc_raw(&a, 1024), *prev = first;
	for (int i = 1; i < 3 * 1024; i++) {
		char *p = arena_alloc_raw(&a, 1024);
		cr_assert_eq(p, prev + 1024, "piece %d is not after the last",
			     i);
		prev = p;
	}
	char *big = arena_alloc_raw(&a, 5u << 20);
	big[(5u << 20) - 1] = 1;
	cr_expect_eq(arena_alloc_raw(&a, 1024), prev + 1024,
		     "the big block took the current chunk's place");
	arena_release(&a);
	cr_expect_eq(a.chunk, 4u << 20);
	cr_expect_eq(a.head, NULL);
	arena_release(&a);
}

Test(util, error_prefix_and_truncation)
{
	error("inner %d", 1);
	error_prefix("outer");
	cr_expect_str_eq(last_error(), "outer: inner 1");
	char longmsg[3000];
	memset(longmsg, 'x', sizeof(longmsg) - 1);
	longmsg[sizeof(longmsg) - 1] = 0;
	error("%s", longmsg);
	error_prefix("p");
	cr_expect(!strncmp(last_error(), "p: xxx", 6));
	cr_expect_lt(strlen(last_error()), 1024);
}

Test(util, error_messages_stay_on_one_line)
{
	error("tensor '%s' is bad", "a\nb\tc\x01");
	cr_expect_str_eq(last_error(), "tensor 'a\\nb\\tc\\x01' is bad");
	error("inner");
	error_prefix("node '%s'", "x\ry");
	cr_expect_str_eq(last_error(), "node 'x\\x0dy': inner");
}

static bool utf8_ok(const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_char_len((const unsigned char *)s + i, n - i)))
			return false;
	return true;
}

/* Bytes that are no UTF-8 are shown as \xNN; valid characters stay, C1
 * controls (U+009B is a terminal's CSI) do not. */
Test(util, error_messages_are_valid_utf8)
{
	error("name '%s'", "a\xff\xfe\xc3\xa9\x1b[2J\xc2\x9b\xed\xa0\x80z");
	cr_expect_str_eq(last_error(), "name 'a\\xff\\xfe\xc3\xa9\\x1b[2J"
				       "\\xc2\\x9b\\xed\\xa0\\x80z'");
	cr_expect(utf8_ok(last_error()));
	/* cut multi-byte characters at either end of the input */
	error("%s", "\xe2\x82");
	cr_expect_str_eq(last_error(), "\\xe2\\x82");
	/* overlong forms and values past U+10FFFF are not UTF-8 */
	error("%s", "\xc0\xaf\xf4\x90\x80\x80");
	cr_expect_str_eq(last_error(), "\\xc0\\xaf\\xf4\\x90\\x80\\x80");
}

/* A message longer than the buffer loses its middle, at a character
 * boundary, never its end; the same when a prefix makes it too long. */
Test(util, long_messages_keep_their_end)
{
	char name[2000] = { 0 };
	for (size_t i = 0; i + 2 < sizeof(name); i += 2)
		memcpy(name + i, "\xc3\xa9", 2); /* e-acute */
	error("tensor '%s': expected float32", name);
	const char *e = last_error();
	size_t n = strlen(e);
	cr_expect_lt(n, 1024);
	cr_expect(utf8_ok(e), "not UTF-8: %s", e);
	cr_expect(!strncmp(e, "tensor '\xc3\xa9", 10), "%s", e);
	cr_expect(!strcmp(e + n - 19, "': expected float32"), "%s", e);
	cr_expect(strstr(e, " ... "), "%s", e);
	error_prefix("model '%s'", name);
	e = last_error();
	n = strlen(e);
	cr_expect_lt(n, 1024);
	cr_expect(utf8_ok(e), "not UTF-8: %s", e);
	cr_expect(!strncmp(e, "model '\xc3\xa9", 9), "%s", e);
	cr_expect(!strcmp(e + n - 19, "': expected float32"), "%s", e);
}

/* str_escape: JSON keeps control characters (its writer escapes them),
 * text does not; an embedded NUL is shown, not a cut. */
Test(util, str_escape_modes)
{
	size_t n;
	char *s = str_escape("a\0b\n\xff", 5, 0, &n);
	cr_expect_eq(n, 8);
	cr_expect(!memcmp(s, "a\0b\n\\xff", 9));
	free(s);
	s = str_escape("a\0b\n\xff", 5, ESC_CONTROLS, &n);
	cr_expect_str_eq(s, "a\\x00b\\n\\xff");
	free(s);
}

/* FIPS 180-4's examples, and every tail length around a block's end
 * (55, 56, 63, 64 bytes: one or two padding blocks). */
Test(util, sha256_known_answers)
{
	char hex[65];
	sha256_hex("", 0, hex);
	cr_expect_str_eq(hex, "e3b0c44298fc1c149afbf4c8996fb924"
			      "27ae41e4649b934ca495991b7852b855");
	sha256_hex("abc", 3, hex);
	cr_expect_str_eq(hex, "ba7816bf8f01cfea414140de5dae2223"
			      "b00361a396177a9cb410ff61f20015ad");
	const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
	sha256_hex(two, strlen(two), hex);
	cr_expect_str_eq(hex, "248d6a61d20638b8e5c026930c3e6039"
			      "a33ce45964ff2167f6ecedd419db06c1");
	char *a = malloc(1000000);
	memset(a, 'a', 1000000);
	sha256_hex(a, 1000000, hex);
	cr_expect_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67"
			      "f1809a48a497200e046d39ccc7112cd0");
	sha256_hex(a, 55, hex);
	cr_expect_str_eq(hex, "9f4390f8d30c2dd92ec9f095b65e2b9a"
			      "e9b0a925a5258e241c9f1e910f734318");
	sha256_hex(a, 56, hex);
	cr_expect_str_eq(hex, "b35439a4ac6f0948b6d6f9e3c6af0f5f"
			      "590ce20f1bde7090ef7970686ec6738a");
	sha256_hex(a, 64, hex);
	cr_expect_str_eq(hex, "ffe054fe7ae0cb6dc65c3af9b61d5209"
			      "f439851db43d0ba5997337df154668eb");
	free(a);
}
