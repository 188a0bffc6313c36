/*
 * tests/fuzz/fuzz_om.c - libFuzzer: the .om reader, verify's checks and
 * dump.
 *
 * The input is a .om file (checksums are not fixed up, so the fuzzer
 * mostly exercises the container checks; fuzz with -use_value_profile=1
 * or from the seed corpus to get deeper: nested_ifs.om reaches the
 * nesting bound, static_two.om the I/O table against the graph).  If it
 * opens, every check of `gearc verify` runs on it (verify_file, as run,
 * export and the runtime make them), and its JSON dump is built, which
 * must be valid UTF-8.  A crash, leak, hang or a failure without a
 * one-line message is a bug.
 */
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "serializer/om.h"
#include "serializer/omimpl.h"
#include "serializer/verify.h"

static void check_message(void)
{
	if (!*last_error() || strchr(last_error(), '\n'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	OmFile f;
	uint8_t *copy = malloc(size ? size : 1);
	memcpy(copy, data, size);
	/* Half the time, fix the length and checksum, so that what lies
	 * behind them (partitions, MODEL_DEF) is fuzzed too. */
	if (size >= OM_HEADER_SIZE && (data[size - 1] & 1)) {
		om_put_u64(copy + 16, size);
		om_put_u32(copy + 24, crc32_update(0, copy + OM_HEADER_SIZE,
						   size - OM_HEADER_SIZE));
	}
	if (om_parse(&f, copy, size, "fuzz.om") == 0) {
		if (verify_file(&f) < 0)
			check_message();
		/* as gearc dump shows it: valid UTF-8 */
		om_escape_names(&f, 0);
		json_object *j = om_json(&f, "fuzz.om");
		const char *s = json_object_to_json_string(j);
		size_t n = strlen(s);
		for (size_t i = 0, k; i < n; i += k)
			if (!(k = utf8_char_len((const uint8_t *)s + i,
						n - i)))
				abort();
		json_object_put(j);
		om_close(&f);
	} else {
		check_message();
	}
	free(copy);
	return 0;
}
