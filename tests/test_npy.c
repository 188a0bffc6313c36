/*
 * tests/test_npy.c - cli/npy.c's reader against headers numpy would
 * write and headers built to mislead a parser that searches the text
 * (a key inside another key's string, 'Falsey'), shapes that overflow
 * or are negative, and <U strings both ways.
 */
#include "cli/npy.h"
#include "testrun.h"

/* A version 1.0 .npy of header (padded with spaces and '\n') and body;
 * *n its size (malloc'd). */
static uint8_t *npy_bytes(const char *header, const void *body, size_t nbody,
			  size_t *n)
{
	size_t hl = strlen(header) + 1;
	*n = 10 + hl + nbody;
	uint8_t *p = malloc(*n);
	memcpy(p, "\x93NUMPY\x01\x00", 8);
	p[8] = (uint8_t)hl;
	p[9] = (uint8_t)(hl >> 8);
	memcpy(p + 10, header, hl - 1);
	p[10 + hl - 1] = '\n';
	if (nbody)
		memcpy(p + 10 + hl, body, nbody);
	return p;
}

/* Parses header + body: the tensor, or NULL with the error in *err. */
static const Tensor *parse(Arena *a, const char *header, const void *body,
			   size_t nbody)
{
	size_t n;
	uint8_t *p = npy_bytes(header, body, nbody, &n);
	clear_error();
	const Tensor *t = npy_parse(a, p, n);
	free(p);
	return t;
}

/* header + nbody zero bytes is refused with one line holding frag. */
static void refused(const char *header, size_t nbody, const char *frag)
{
	Arena a = { 0 };
	void *body = calloc(1, nbody + 1);
	const Tensor *t = parse(&a, header, body, nbody);
	const char *e = last_error();
	cr_expect_null(t, "accepted: %s", header);
	cr_expect(strstr(e, frag) && !strchr(e, '\n'),
		  "%s\n  said: %s\n  expected: %s", header, e, frag);
	free(body);
	arena_release(&a);
}

Test(npy, headers_numpy_writes_are_read)
{
	Arena a = { 0 };
	float v[6] = { 1, 2, 3, 4, 5, 6 };
	const Tensor *t = parse(&a, "{'descr': '<f4', 'fortran_order': False, "
				    "'shape': (2, 3), }", v, sizeof(v));
	cr_assert(t, "%s", last_error());
	cr_expect(t->dtype == DT_FLOAT && t->shape.rank == 2 &&
		  t->shape.dims[0] == 2 && t->shape.dims[1] == 3);
	cr_expect(!memcmp(t->data, v, sizeof(v)));
	/* keys in any order, either quote, no trailing comma, a scalar */
	int64_t s = 7;
	t = parse(&a, "{\"shape\": (), \"fortran_order\": False, \"descr\": "
		      "\"<i8\"}", &s, 8);
	cr_assert(t, "%s", last_error());
	cr_expect(t->dtype == DT_INT64 && t->shape.rank == 0 &&
		  *(const int64_t *)t->data == 7);
	/* one dim, as Python writes a 1-tuple; zero elements */
	t = parse(&a, "{'descr': '|u1', 'fortran_order': False, 'shape': "
		      "(0,), }", NULL, 0);
	cr_assert(t, "%s", last_error());
	cr_expect(t->shape.rank == 1 && t->shape.dims[0] == 0);
	arena_release(&a);
}

/* The old reader searched the text for "'fortran_order':" and
 * "'shape':", so a copy inside another key's string was taken over the
 * real one, and it compared "False" by prefix. */
Test(npy, a_key_inside_a_string_is_not_the_key)
{
	refused("{'descr': '<f4', 'x': \"'fortran_order': False, 'shape': "
		"(1,)\", 'fortran_order': True, 'shape': (3,), }", 12,
		"the header has key 'x'; a .npy header has 'descr', "
		"'fortran_order' and 'shape' only");
	refused("{'descr': \"<f4', 'fortran_order': False, 'shape': (1,)\", "
		"'fortran_order': True, 'shape': (3,), }", 12,
		"the header's string at byte 10 is longer than 31 characters");
	refused("{'descr': \"<f4', 'shape': (1,)\", 'fortran_order': False, "
		"'shape': (3,), }", 12, "dtype '<f4', 'shape': (1,)' is not "
		"one gearc reads");
	refused("{'descr': '<f4', 'fortran_order': Falsey, 'shape': (3,), }",
		12, "expected True or False for 'fortran_order' at byte 34");
	refused("{'descr': '<f4', 'fortran_order': True, 'shape': (3,), }", 12,
		"the array is in Fortran order");
	refused("{'descr': '<f4', 'fortran_order': 0, 'shape': (3,), }", 12,
		"expected True or False");
}

Test(npy, shapes_get_accurate_messages)
{
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': "
		"(1099511627776, 1099511627776), }", 4,
		"the shape [1099511627776,1099511627776] of '<f4' holds more "
		"than 2^63 bytes");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': "
		"(99999999999999999999,), }", 4,
		"'shape' dim 0 does not fit 64 bits");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': "
		"(9223372036854775808,), }", 4,
		"'shape' dim 0 does not fit 64 bits");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
		4, "'shape' dim 1 is negative (-3)");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': "
		"(1, 1, 1, 1, 1, 1, 1, 1, 1), }", 4,
		"'shape' has more than 8 dims");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3), }", 12,
		"'shape' (3) is an integer, not a tuple");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': [3], }", 12,
		"expected a tuple for 'shape'");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3, 'a'), }",
		12, "expected an integer in 'shape'");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 4,
		"the data holds 4 bytes, the shape [3] of '<f4' needs 12");
}

Test(npy, malformed_dicts_say_what_was_expected)
{
	refused("", 0, "expected '{' at byte 1 of it");
	refused("{'descr': '<f4', 'fortran_order': False}", 0,
		"the header has no 'shape'");
	refused("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, "
		"'shape': ()}", 4, "the header gives 'descr' twice");
	refused("{'descr': '<f4' 'fortran_order': False, 'shape': ()}", 4,
		"expected ',' or '}'");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': ()} x", 4,
		"expected the end of the header after '}'");
	refused("{'descr': '<f4', 'fortran_order': False, 'shape': ()", 4,
		"expected ',' or '}'");
	refused("{descr: '<f4'}", 4, "expected a quoted key at byte 1");
	refused("{'descr' '<f4'}", 4, "expected ':' after the key");
	refused("{'descr': '<\\f4'}", 4, "expected \\\\, \\' or \\\"");
	refused("{'de\\'scr': '<f4'}", 4, "the header has key 'de'scr'");
	refused("{'descr': '<f4", 4, "expected the string's closing quote");
	refused("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': "
		"()}", 4, "expected dtype string for 'descr'");
	refused("{'descr': '>f4', 'fortran_order': False, 'shape': ()}", 4,
		"dtype '>f4' is not one gearc reads");
	refused("{'descr': '<U2x', 'fortran_order': False, 'shape': ()}", 4,
		"dtype '<U2x' is not one gearc reads");
}

/* "ab" and "é☃𝄞" as <U3: UTF-32LE, NUL padded. */
Test(npy, unicode_strings_are_read_as_utf8)
{
	uint32_t u[2][3] = { { 'a', 'b', 0 }, { 0xE9, 0x2603, 0x1D11E } };
	Arena a = { 0 };
	const Tensor *t = parse(&a, "{'descr': '<U3', 'fortran_order': False, "
				    "'shape': (2,), }", u, sizeof(u));
	cr_assert(t, "%s", last_error());
	cr_assert_eq(t->dtype, DT_STRING);
	const Bytes *b = t->data;
	cr_expect(b[0].len == 2 && !memcmp(b[0].data, "ab", 2));
	cr_expect(b[1].len == 9 &&
		  !memcmp(b[1].data, "\xc3\xa9\xe2\x98\x83\xf0\x9d\x84\x9e", 9));
	arena_release(&a);
	uint32_t nul[3] = { 'a', 0, 'b' }, sur[1] = { 0xD800 };
	const char *h = "{'descr': '<U3', 'fortran_order': False, 'shape': (), }";
	t = parse(&a, h, nul, sizeof(nul));
	cr_expect(!t && strstr(last_error(), "string element 0 holds a NUL "
					     "character before its end"),
		  "%s", last_error());
	t = parse(&a, "{'descr': '<U1', 'fortran_order': False, 'shape': (), }",
		  sur, sizeof(sur));
	cr_expect(!t && strstr(last_error(), "holds U+D800, which is not"),
		  "%s", last_error());
	arena_release(&a);
}

Test(npy, strings_round_trip_and_numpy_reads_them)
{
	char *dir = temp_dir(), *out = path_in(dir, "s.npy");
	const char *v[3] = { "monday", "", "\xc3\xa9t\xc3\xa9" };
	Shape s = { .rank = 1, .dims = { 3 } };
	cr_assert_eq(npy_write(out, DT_STRING, &s, v), 0, "%s", last_error());
	Arena a = { 0 };
	Tensor *t = npy_read(&a, out);
	cr_assert(t, "%s", last_error());
	const Bytes *b = t->data;
	for (int i = 0; i < 3; i++)
		cr_expect(b[i].len == strlen(v[i]) &&
			  !memcmp(b[i].data, v[i], b[i].len), "element %d", i);
	arena_release(&a);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c \"import numpy; "
		 "x = numpy.load('%s'); assert x.dtype == '<U6', x.dtype; "
		 "assert list(x) == ['monday', '', '\\u00e9t\\u00e9'], x\"",
		 out);
	cr_expect_eq(system(cmd), 0, "numpy does not read %s as written", out);
	const char *bad[1] = { "\xff" };
	s.dims[0] = 1;
	cr_expect_eq(npy_write(out, DT_STRING, &s, bad), -1);
	cr_expect(strstr(last_error(), "string element 0 is not valid UTF-8"));
	remove_tree(dir);
	free(dir), free(out);
}
