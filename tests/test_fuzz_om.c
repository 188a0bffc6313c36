/* tests/test_fuzz_om.c - replays the om fuzzer's seed corpus and every
 * input it ever crashed on (tests/fuzz/regress_om/) through the harness. */
#define LLVMFuzzerTestOneInput fuzz_om_one
#include "fuzz/fuzz_om.c"
#undef LLVMFuzzerTestOneInput

#include "fuzzreplay.h"

Test(fuzz_om, replay, .timeout = 300)
{
	replay_dir("tests/fuzz/corpus_om", fuzz_om_one);
	replay_dir("tests/fuzz/regress_om", fuzz_om_one);
}
