/* tests/test_fuzz_options.c - replays the options fuzzer's seed corpus and every
 * input it ever crashed on (tests/fuzz/regress_options/) through the harness. */
#define LLVMFuzzerTestOneInput fuzz_options_one
#include "fuzz/fuzz_options.c"
#undef LLVMFuzzerTestOneInput

#include "fuzzreplay.h"

Test(fuzz_options, replay, .timeout = 300)
{
	replay_dir("tests/fuzz/corpus_options", fuzz_options_one);
	replay_dir("tests/fuzz/regress_options", fuzz_options_one);
}
