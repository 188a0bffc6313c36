/* tests/test_fuzz_api.c - replays the API fuzzer's seed corpus and every
 * input it ever crashed on (tests/fuzz/regress_api/) through the harness. */
#define LLVMFuzzerTestOneInput fuzz_api_one
#include "fuzz/fuzz_api.c"
#undef LLVMFuzzerTestOneInput

#include "fuzzreplay.h"

Test(fuzz_api, replay, .timeout = 300)
{
	replay_dir("tests/fuzz/corpus_api", fuzz_api_one);
	replay_dir("tests/fuzz/regress_api", fuzz_api_one);
}
