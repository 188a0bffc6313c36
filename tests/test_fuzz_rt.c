/* tests/test_fuzz_rt.c - replays the runtime fuzzer's seed corpus and every
 * input it ever crashed on (tests/fuzz/regress_rt/) through the harness. */
#define LLVMFuzzerTestOneInput fuzz_rt_one
#include "fuzz/fuzz_rt.c"
#undef LLVMFuzzerTestOneInput

#include "fuzzreplay.h"

Test(fuzz_rt, replay, .timeout = 300)
{
	replay_dir("tests/fuzz/corpus_rt", fuzz_rt_one);
	replay_dir("tests/fuzz/regress_rt", fuzz_rt_one);
}
