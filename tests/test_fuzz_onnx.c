/* tests/test_fuzz_onnx.c - replays the onnx fuzzer's seed corpus and every
 * input it ever crashed on (tests/fuzz/regress_onnx/) through the harness. */
#define LLVMFuzzerTestOneInput fuzz_onnx_one
#include "fuzz/fuzz_onnx.c"
#undef LLVMFuzzerTestOneInput

#include "fuzzreplay.h"

Test(fuzz_onnx, replay, .timeout = 300)
{
	replay_dir("tests/fuzz/corpus_onnx", fuzz_onnx_one);
	replay_dir("tests/fuzz/regress_onnx", fuzz_onnx_one);
}
