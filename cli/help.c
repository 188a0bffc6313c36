/* cli/help.c - help texts; man/gearc.1 says the same at length. */
#include <string.h>

#include "cli.h"
#include "runtime/gearrt.h"

static const char overview[] =
"usage: gearc [compile] --model=FILE.onnx --output=NAME [options]\n"
"       gearc inspect [--format=text|json] MODEL.onnx\n"
"       gearc dump [--format=text|json|dot] [--graph=NAME] [--summary]\n"
"                  [--detail] FILE.om\n"
"       gearc verify [-v|-q] FILE.om ...\n"
"       gearc run FILE.om --input NAME=FILE ... [--output-dir DIR] [--bench=N]\n"
"       gearc export FILE.om --gear=K|all --output=PATH [--external-data]\n"
"       gearc compare DIR_A DIR_B [--rtol=R] [--atol=A]\n"
"       gearc help [COMMAND] | --help | --version\n"
"\n"
"gearc compiles an ONNX model whose inputs have dynamic dimensions into one\n"
".om file: a fully static, specialised graph per input shape (\"gear\") plus\n"
"a root graph that picks the gear at run time.  With no gear option and\n"
"static input shapes it is a static compile: one static graph.\n"
"\n"
"commands:\n"
"  compile   compile an ONNX model to NAME.om (the default command)\n"
"  inspect   show an ONNX model's inputs, dims, ops and unsupported ops\n"
"  dump      show what a .om file holds, as text, JSON or Graphviz DOT\n"
"  verify    re-check a .om file's memory plans and shapes\n"
"  run       run a .om on the CPU (libgearrt) and print or save its outputs\n"
"  export    write gears of a .om file as static ONNX models\n"
"  compare   compare two folders of tensors (run --dump-tensors, ONNX\n"
"            Runtime's) and name the first one past the tolerance\n"
"  help      show help for a command; 'gearc help ops' lists the ops\n"
"\n"
"exit status: 0 success, 1 failure (model, file, I/O), 2 usage error.\n"
"-q, --quiet is accepted by every command: no progress, warnings or\n"
"summary, only errors.\n"
"See 'gearc help COMMAND' and gearc(1).\n";

static const char compile_help[] =
"usage: gearc [compile] --model=FILE.onnx --output=NAME [options]\n"
"\n"
"Compiles FILE.onnx to NAME.om (\".om\" is appended unless NAME ends in it).\n"
"Flags take their value as --flag=VALUE or --flag VALUE; '-' and '_' in\n"
"flag names are interchangeable.\n"
"\n"
"  --model=FILE            the ONNX model to compile (required)\n"
"  --output=NAME           where to write NAME.om (required); written\n"
"                          atomically: on failure nothing is left behind\n"
"                          and an existing file is untouched; only a\n"
"                          regular file is replaced (not a FIFO, device,\n"
"                          directory or symbolic link); - or /dev/null:\n"
"                          compile and write nothing\n"
"  --check                 compile all the way and write nothing (no\n"
"                          --output): does the model still compile?\n"
"  --input_shape=SPEC      input shapes, \"name:d0,d1,...;name2:...\"; a dim\n"
"                          is an integer >= 0 (0: a zero-size tensor) or -1\n"
"                          (a gear dimension).\n"
"                          Inputs not listed keep the model's shape; every\n"
"                          input with unknown dims must be listed.  No dims\n"
"                          (\"sr:\") is a scalar, as atc writes it.  Also\n"
"                          trtexec's \"x:1x3x224x224,y:1x10\" and\n"
"                          OpenVINO's \"x[1,3,224,224],y[1,10]\" ('?' is -1)\n"
"  --input_value=SPEC      pin inputs to constants, \"sr:16000;mode:1,0\":\n"
"                          dtype from the model, shape from the model or\n"
"                          --input_shape; what depends on them folds and\n"
"                          they are no longer inputs of the .om\n"
"  --dynamic_batch_size=L  gears of the batch dim (-1 only in dim 0):\n"
"                          \"1,8,16\"\n"
"  --dynamic_image_size=L  gears of H,W (two -1 at H and W of a 4-D input):\n"
"                          \"224,224;448,448\"\n"
"  --dynamic_dims=L        one value per -1 over all inputs in --input_shape\n"
"                          order, gears separated by ';': \"1,32;1,64\";\n"
"                          or keyed by the model's dim names (dim_param,\n"
"                          see gearc inspect): \"batch:1,4;past_len:128,256\"\n"
"                          makes every combination a gear (4 here), every\n"
"                          input dim of that name a gear dim (a name with\n"
"                          one value a fixed dim); --input_shape optional\n"
"  --input_format=F        NCHW (default), NHWC or ND: where H and W are\n"
"                          for --dynamic_image_size\n""  --gear_scope=SCOPE      clone per gear only what depends on the gear,\n"
"                          compile the rest once: auto, or node name\n"
"                          prefixes \"/encoder/,/pool/\" (see gearc(1))\n"
"  --out_nodes=L           atc's: \"node:0;node2:1\" (or tensor names\n"
"                          \"t;t2\"): those become the outputs, in order;\n"
"                          what no longer reaches one is dropped\n"
"  --output_type=T         FP32, FP16 or UINT8 for every float output, or\n"
"                          \"node:0:FP16;node2:1:UINT8\" per output: a Cast\n"
"                          before it (UINT8 rounds half to even and\n"
"                          saturates, as QuantizeLinear with scale 1)\n"
"  --input_fp16_nodes=L    \"x;y\": those float32 inputs take float16\n"
"  --insert_op_conf=FILE   atc's static AIPP: aipp_op { aipp_mode: static\n"
"                          input_format: RGB888_U8 ... }; the input becomes\n"
"                          a uint8 NHWC frame: crop, channel swap, colour\n"
"                          conversion, (x - mean_chn - min_chn) *\n"
"                          var_reci_chn, padding (see gearc(1)\n"
"                          PREPROCESSING); YUV420SP_U8 takes the camera's\n"
"                          NV12 buffer (NV21 with rbuv_swap_switch), uint8\n"
"                          [N, H*3/2, W], H and W static and even: csc\n"
"                          to RGB with csc_switch, else Y,U,V as they are\n"
"  --mean_values=V, --scale_values=V\n"
"                          OpenVINO's: \"x[123.7,116.3,103.5]\" (or the\n"
"                          first input's \"123.7,116.3,103.5\"): the input\n"
"                          takes (x - mean) / scale, per channel\n"
"  --reverse_input_channels  the frame's channels come reversed (BGR)\n"
"  --source_layout=L       nhwc: the input takes channels-last (\"x(nhwc)\"\n"
"                          for one input); --target_layout / --layout say\n"
"                          the model's (nchw, or --layout=\"x(nhwc->nchw)\")\n"
"  --source_type=T         u8, f16 or f32 (default): the input's new type\n"
"                          Preprocessing folds into the first Conv where\n"
"                          exact, else one note says why it does not\n"
"  --framework=5           the source framework; only 5 (ONNX) is supported\n"
"  --hybrid                also compile the model as one dynamic-shape graph\n"
"                          that runs for input shapes matching no gear\n"
"                          (needs a gear option)\n"
"  --compile_hybrid_mode=N GE's spelling: 1 is --hybrid, 0 (default) off\n"
"  --no-fuse               skip the fuse and qdq passes: keep\n"
"                          BatchNormalization, bias Adds, activations,\n"
"                          dynamic int8 chains and QDQ groups as separate\n"
"                          nodes (default: fused into FusedConv/FusedGemm/\n"
"                          FusedMatMul/FusedActivation, attention into\n"
"                          Sdpa, DynQuantMatMul/DynQuantConv and\n"
"                          QLinearConv/QLinearMatMul, see gearc(1) FUSION)\n"
"  --keep-fp16             keep a float16 model's float16 numbers: each value\n"
"                          it computes in float16 is rounded to float16\n"
"                          where it is made, on the same fast kernels\n"
"                          (default: computed in float32 throughout, float16\n"
"                          at the model's inputs and outputs; see gearc(1)\n"
"                          FLOAT16 MODELS)\n"
"  --precision_mode=MODE   atc's: force_fp32 or must_keep_origin_dtype (the\n"
"                          default: the model's types), allow_fp32_to_bf16\n"
"                          or allow_mix_precision_bf16 (Conv, ConvTranspose,\n"
"                          MatMul, Gemm in bfloat16 with float32\n"
"                          accumulation where the CPU has AVX512_BF16 or\n"
"                          AMX, float32 elsewhere, from the same file; the\n"
"                          last layer before each output stays float32),\n"
"                          allow_fp32_to_fp16, allow_mix_precision(_fp16),\n"
"                          force_fp16 (the same in bfloat16: oneDNN 2.6\n"
"                          computes no float16 on CPUs); see gearc(1)\n"
"                          PRECISION\n"
"  --keep_dtype=FILE       nodes kept float32 under --precision_mode: a\n"
"                          node name a line, or OpType::TYPE\n"
"  --modify_mixlist=FILE   atc's JSON: \"black-list\"/\"white-list\" with\n"
"                          \"to-add\"/\"to-remove\" op types\n"
"  --static_model_ops_lower_limit=N\n"
"                          known-shape partitions of fewer nodes run\n"
"                          dynamically (default 4; 0 keeps all, -1 makes a\n"
"                          partitioned graph wholly dynamic)\n"
"  -j N, --jobs=N          threads for compiling and writing gears\n"
"                          (default: cores)\n"
"  --dump-after=PASS[,...] print the graph after each PASS to stdout, also\n"
"                          when it fails; memplan shows offsets.  Passes:\n"
"                          %s\n"
"  -q, --quiet             no progress, warnings or summary line\n"
"                          (--log=error)\n"
"  --log=LEVEL             atc's levels: debug, info (also a compile log:\n"
"                          each pass's time and the op counts it changed,\n"
"                          e.g. what fuse made, then the ops used),\n"
"                          warning (default), error (errors only), null\n"
"                          (nothing at all: the exit status tells)\n"
"  --mode=N                atc's run mode: 0 compile (default); 1 write\n"
"                          --om=FILE.om as --json=FILE.json, as 'gearc\n"
"                          dump --format=json' does; 3 check only: list\n"
"                          every unsupported op, write nothing, exit 1 if\n"
"                          there is one\n"
"\n"
"atc's NPU settings are accepted with their documented values and one\n"
"warning each (ignored on the CPU): --soc_version, --core_type,\n"
"--aicore_num, --op_select_implmode, --optypelist_for_implmode,\n"
"--enable_small_channel, --buffer_optimize, --fusion_switch_file,\n"
"--virtual_type, --host_env_os, --host_env_cpu, --display_model_info,\n"
"--enable_compress_weight, --compress_weight_conf, --dump_mode,\n"
"--status_check, --op_debug_level, --debug_dir, --op_compiler_cache_mode,\n"
"--op_compiler_cache_dir, --is_input_adjust_hw_layout,\n"
"--is_output_adjust_hw_layout.  A misspelt flag is a usage error with a\n"
"\"did you mean\" suggestion.\n"
"\n"
"On success gearc prints one line on stderr: the file written, the mode,\n"
"the gear count, the file size and the largest arena.  Warnings, one line\n"
"each, start with 'gearc: warning: ' (an If branch invalid at a gear's\n"
"shapes, compiled to a runtime error; --gear_scope keeping the full clone\n"
"or leaving gear-dependent nodes outside every scope; an arena larger than\n"
"the machine's memory; no ai.onnx opset import).  A model with ops gearc\n"
"does not support is an error naming all of them.\n"
"\n"
"The gear options are mutually exclusive, need --input_shape, and take 2 to\n"
"100 distinct gears of positive integers.\n"
"\n""External data must lie inside the model's directory (no '..', absolute\n"
"path or symbolic link); FIFOs and devices are refused.  A killed compile\n"
"leaves no temporary file (O_TMPFILE, or removed on SIGTERM/INT/HUP).\n"
"\n"
"examples:\n"
"  gearc --model=cnn.onnx --input_shape=\"x:1,3,224,224\" --output=cnn\n"
"  gearc --model=cnn.onnx --input_shape=\"x:-1,3,224,224\" \\\n"
"        --dynamic_batch_size=\"1,8,16\" --output=cnn\n"
"  gearc --model=det.onnx --input_shape=\"img:1,3,-1,-1\" \\\n"
"        --dynamic_image_size=\"640,640;960,960\" --output=det\n"
"  gearc --model=bert.onnx \\\n"
"        --input_shape=\"tokens:-1,-1;mask:-1,-1;image:1,3,224,224\" \\\n"
"        --dynamic_dims=\"1,32,1,32;4,64,4,64\" --output=bert\n"
"  gearc --model=decoder.onnx \\\n"
"        --dynamic_dims=\"batch:1;past_sequence_length:128,256,512\" \\\n"
"        --output=decoder\n"
"  gearc --model=rec.onnx --input_shape=\"x:1,3,48,-1\" \\\n"
"        --dynamic_dims=\"320;640;1280\" --hybrid --output=rec\n"
"  gearc --model=vad.onnx --input_shape=\"input:1,512;sr:\" \\\n"
"        --input_value=\"sr:16000\" --output=vad\n";

static const char inspect_help[] =
"usage: gearc inspect [--format=text|json] MODEL.onnx\n"
"\n"
"Shows what MODEL.onnx is, before compiling it: the IR version, producer\n"
"and opsets; every input and output with its dtype and dims (a number, the\n"
"dim's name (dim_param), or ? for neither); the external data files it\n"
"reads; how many nodes of each op it has (with their domains) and which\n"
"of those gearc does not support; an --input_shape line to compile it\n"
"with (-1 where the model leaves a dim open) and the names of those dims\n"
"with the inputs and axes that carry each, which --dynamic_dims=\n"
"\"NAME:v,...\" takes.  Unsupported ops are listed, not an error: the\n"
"exit status is 0 for any model that loads.\n"
"\n"
"  --format=text   for people (default)\n"
"  --format=json   for scripts: model, ir_version, producer_name,\n"
"                  producer_version, model_version, opsets [{domain,\n"
"                  version}], inputs and outputs [{name, dtype, shape:\n"
"                  [number|name|null] or null}], external_data [path],\n"
"                  nodes, ops [{op, domain, count, supported}],\n"
"                  input_shape, dim_names [{name, at: [{input, axis}]}]\n"
"  -q, --quiet     accepted for uniformity\n";

static const char dump_help[] =
"usage: gearc dump [--format=text|json|dot] [--graph=NAME] [--summary]\n"
"                  [--detail] FILE.om\n"
"\n"
"Shows what FILE.om holds: the source model, the mode and gears, inputs and\n"
"outputs with their shapes (per gear, with byte sizes), weights and graphs;\n"
"for a --hybrid file the rule and the dynamic graph (dims named by\n"
"symbols), and the known/unknown partitions of partitioned graphs.\n"
"The file is fully checked first; a corrupt file is an error (exit 1).\n"
"\n""Names are shown as valid UTF-8: other bytes as \\xNN, and in text and\n"
"DOT control characters escaped too.\n"
"\n"
"  --format=text   readable summary and node listing (default)\n"
"  --format=json   the stable JSON document scripts read (see gearc(1))\n"
"  --format=dot    Graphviz DOT of every graph (gearc dump --format=dot\n"
"                  x.om | dot -Tsvg > x.svg); dashed edges go from a\n"
"                  Case, If or Loop to its subgraphs' clusters\n"
"  -g, --graph=NAME  only the graph(s) called NAME, or PARENT/NAME\n"
"                  (e.g. Batch_3/else_branch), in any format; JSON gives\n"
"                  {\"graphs\": [...]} with each graph's detail\n"
"  -s, --summary   only the header, inputs, outputs, gears and memory\n"
"                  figures (text or json)\n"
"  --detail        json: add to each graph its nodes and tensors (dtype,\n"
"                  shape, bytes, arena offset, alias, in place)\n"
"  -q, --quiet     accepted for uniformity (dump prints only its output)\n";

static const char verify_help[] =
"usage: gearc verify [-v|-q] FILE.om ...\n"
"\n"
"Re-checks FILE.om independently of the compiler that wrote it, and exits\n"
"1 naming the first violation:\n"
"  - every graph's memory plan: the order runs every node once, after what\n"
"    it reads; each arena tensor has one block, 64-byte aligned, inside the\n"
"    arena, large enough for its shape, alive from its producer's step to\n"
"    its last use (uses inside subgraphs included); no two buffers live at\n"
"    the same step overlap; views and in-place results share their\n"
"    owner's offset within its lifetime; If/Loop nodes have workspaces for\n"
"    their subgraphs; the recorded arena, lower bound and naive bytes\n"
"    are what the blocks give;\n"
"  - the gear table against the graphs: the root Case's branches (and,\n"
"    in a file written before the table was stored once, its\n"
"    gear_count and gear_dims) (mode, gear values, gear shapes and byte\n"
"    sizes are checked already when the file is opened, as the runtime\n"
"    needs);\n"
"  - the input/output table: every graph a run starts at (the root, each\n"
"    gear's branch, the dynamic graph) takes and gives the model's inputs\n"
"    and outputs by name, with the table's dtypes, ranks and dims (the\n"
"    gear's values at its -1s);\n"
"  - every shape: shape inference is re-run on each gear branch and scope\n"
"    clone (and the root, or the static graph) and must give the dtypes\n"
"    and shapes the file records;\n"
"  - partitions: every node of a partitioned graph is a partition bound\n"
"    to its subgraph, no cycle between them, known ones static and\n"
"    planned, unknown ones not planned;\n"
"  - a hybrid file's dynamic graph: inference and the symbolic walk are\n"
"    re-run and must give the shapes and dim names recorded.\n"
"On success it prints what it checked, e.g.\n"
"  verify: 5 graphs, 5 plans (40 tensors), I/O table against 4 graphs,\n"
"    45 shapes: ok\n"
"Given several files, it checks each and prints its line prefixed with\n"
"the file's name (\"FILE: failed\" for one that fails, its error on\n"
"stderr), and exits 1 if any fails.\n"
"\n"
"  -v, --verbose   also print one line per plan\n"
"  -q, --quiet     print nothing on success: the exit status says it\n";

static const char run_help[] =
"usage: gearc run FILE.om --input NAME=FILE ... [--output-dir DIR]\n"
"                 [--random-inputs] [--gear=K] [--bench=N] [--threads=N]\n"
"                 [--pad-batch] [--no-gears] [--dump-tensors=DIR]\n"
"                 [--warmup=N] [--duration=S] [--json=FILE] [--print]\n"
"                 [--save-inputs=DIR] [--max-isa=LEVEL]\n"
"\n"
"Runs FILE.om on the CPU with libgearrt (the same checks as 'gearc verify'\n"
"when it loads).  The gear is the one whose dims equal the inputs' dims;\n"
"dims that match no gear are an error listing the gears.  Prints the gear\n"
"chosen and every output's name, dtype and shape.\n"
"\n"
"A --hybrid file runs dims that match no gear on its dynamic graph,\n"
"specialised to those dims (and cached per shape): it prints\n"
"\"dynamic graph (dims D, rebuilt)\" or \"(dims D, cached)\" instead of\n"
"\"gear K (dims D)\".\n"
"\n"
"  -i, --input NAME=FILE   input NAME from FILE: .npy (numbers, bool or\n"
"                          <U strings), or an ONNX TensorProto (.pb, as\n"
"                          in ONNX's backend test data); once per input\n"
"                          (twice is a usage error)\n"
"  -o, --output-dir=DIR    write each output as DIR/NAME.npy (bytes of NAME\n"
"                          other than letters, digits, '.', '_' and '-' as\n"
"                          %xx); strings as <U; DIR is created if missing\n"
"                          (one level)\n"
"  --random-inputs         fill the inputs not given with a fixed-seed\n"
"                          pattern (floats in [-1,1), integers 0..9,\n"
"                          words of 1 to 8 letters)\n"
"  --gear=K                run at gear K's shapes (default 0 for random\n"
"                          inputs): random inputs take them, inputs given\n"
"                          must have them (else an error); a static file's\n"
"                          graph is gear 0\n"
"  --bench=N               run N more times and print, on a line of its own,\n"
"                          \"bench: load L ms (open O, prepare P, first run\n"
"                          F), run median M ms, min m ms over N runs\" (load\n"
"                          = O + P + F: O opening the file with its checks\n"
"                          and the session, P preparing the inputs' gear\n"
"                          ahead (gearrt_session_prepare: its kernels and\n"
"                          a run on zeros), F the first run after it),\n"
"                          then, if the dynamic graph ran, \"shape cache: R\n"
"                          rebuilds (last T ms), H cache hits over N runs\",\n"
"                          \"cpu: FEATURES\" (what the kernels choose by)\n"
"                          and \"threads: N; waiting, they ...\"; after the\n"
"                          bench line, \"latency: mean M ms, stddev S, min,\n"
"                          p50, p90, p99, max\" and \"throughput: T\n"
"                          inferences/s (N runs in S s, after W warm-up\n"
"                          runs)\"\n"
"  --warmup=N              N runs after the first, before the timed ones,\n"
"                          not counted (needs --bench or --duration)\n"
"  --duration=S            time runs until S seconds have passed, and at\n"
"                          least --bench's N (alone: benchmark S seconds)\n"
"  --json=FILE             write the run's facts as JSON: every timed run's\n"
"                          ms, their statistics, the load split (open,\n"
"                          prepare, first run), threads, CPU features, and\n"
"                          with GEARRT_PROFILE set each node's time\n"
"                          (without --bench or --duration, nothing is\n"
"                          prepared ahead: the one run prepares its gear)\n"
"  --print                 print each output's first values and its min,\n"
"                          max and mean (also with -q)\n"
"  --save-inputs=DIR       write every input of the run (those\n"
"                          --random-inputs made too) as DIR/NAME.npy, to\n"
"                          run them again with --input NAME=DIR/NAME.npy\n"
"  -t N, --threads=N       intra-op threads (default 1, at most 256; 0:\n"
"                          every core the process may use: its affinity\n"
"                          mask's, at most its cgroup's CPU quota), of\n"
"                          gearrt's own pool (oneDNN's loops too): a\n"
"                          waiting thread spins while a run is under way\n"
"                          and 1 ms after, then sleeps, and at once while\n"
"                          other processes want the cores\n"
"  --pad-batch             inputs whose batch (the gear dim at axis 0) no\n"
"                          gear has run on the least gear that holds it,\n"
"                          zero rows added, the outputs sliced back; only\n"
"                          where the compile proved the batch rows\n"
"                          independent (gearc dump: \"batch: rows\n"
"                          independent\"), else an error naming the node\n"
"                          that mixes them\n"
"  --no-gears              run the dynamic graph of a --hybrid file even at\n"
"                          a gear's dims (to compare the two paths)\n"
"  --dump-tensors=DIR      write every tensor of the first run as\n"
"                          DIR/NAME.npy (named as --output-dir names\n"
"                          them; NCHW as the ONNX model has them, whatever\n"
"                          layout the runtime used), the inputs too, and\n"
"                          DIR/index.json: the run order, each tensor's\n"
"                          node, op and kernel, and the source values\n"
"                          fused away and the node they went into; DIR is\n"
"                          created if missing (one level).  Compare two\n"
"                          such folders with 'gearc compare'\n"
"  --max-isa=LEVEL         run as on a CPU with no more than LEVEL: avx512,\n"
"                          avx2 (with FMA, F16C, AVX-VNNI), avx, sse41 or\n"
"                          baseline (SSE2; ARM64: NEON alone); every kernel\n"
"                          choice and oneDNN's read it (GEARRT_MAX_ISA sets\n"
"                          it too; the flag wins); the profile names the\n"
"                          variant that ran (chan.pwconv.avx2)\n"
"  -q, --quiet             print neither the gear nor the outputs (--bench's\n"
"                          line and --output-dir's files stay)\n";

static const char export_help[] =
"usage: gearc export FILE.om --gear=K|all --output=PATH [--external-data]\n"
"                    [--fp16-weights]\n"
"\n"
"Writes gear K of FILE.om (or every gear) as a static ONNX model, the way\n"
"onnxsim --overwrite-input-shape would, once per shape: every tensor's\n"
"shape in value_info, shape arithmetic folded into initializers, Ifs on\n"
"shapes inlined, gearc's own ops (MapIndex, Case, PartitionedCall) gone\n"
"and a Fail branch written as standard ops that fail if it is taken;\n"
"the source model's IR version and opsets kept.  Only values that depend\n"
"on input data (not on shapes) keep unknown dims.  FILE.om is read with\n"
"every check of 'gearc verify' first: a file it refuses is an error.\n"
"\n"
"  --gear=K         gear K (0 .. count-1, as 'gearc dump' lists them);\n"
"                   optional for a static compile's file\n"
"  --gear=all       every gear, as PATH/NAME_SHAPES.onnx (NAME.om's NAME,\n"
"                   SHAPES the gear inputs' shapes: rec_1x3x48x320.onnx;\n"
"                   NAME_gearK.onnx past 200 bytes); PATH is a directory,\n"
"                   created if missing (one level)\n"
"  --output=PATH    the .onnx file (or a directory, an existing one or\n"
"                   PATH/: PATH/NAME_SHAPES.onnx); written atomically, and\n"
"                   only a regular file is replaced\n"
"  --external-data  weights of 1 KB or more go to PATH.data (ONNX external\n"
"                   data, a relative location); automatic past 2 GB\n"
"  --fp16-weights   weights that were float16 in the source written as\n"
"                   float16, each widened by a Cast (half the bytes)\n"
"  -q, --quiet      accepted for uniformity (export prints only errors)\n"
"\n"
"The gear's dims and input shapes are in the model's doc_string and in\n"
"metadata_props gearc.gear, gearc.gear_dims, gearc.input_shape.  A gear\n"
"the file does not have exits 1 (as in run), a malformed --gear 2.\n"
"\n"
"example (one static model per shape, as for an NPU converter):\n"
"  gearc --model=det.onnx --input_shape=\"x:1,3,-1,-1\" \\\n"
"        --dynamic_image_size=\"640,640;960,960\" --output=det\n"
"  gearc export det.om --gear=all --output=static/\n"
"  # static/det_1x3x640x640.onnx, static/det_1x3x960x960.onnx\n";

static const char compare_help[] =
"usage: gearc compare DIR_A DIR_B [--rtol=R] [--atol=A] [-q]\n"
"\n"
"Compares two folders of tensors by name: what 'gearc run --dump-tensors'\n"
"writes, or any folder of NAME.npy files (ONNX Runtime's intermediate\n"
"tensors saved with numpy, named as gearc names files: every byte of the\n"
"name but letters, digits, '.', '_' and '-' as %xx; see gearc(1),\n"
"ACCURACY DEBUGGING).  In the run order of the first folder with an\n"
"index.json (else by name), each tensor in both gets a line: its dtype\n"
"and shape, largest absolute and relative difference, and whether it is\n"
"within |A-B| <= atol + rtol |B| (B is the reference; a NaN or infinity\n"
"must match exactly; another shape is a failure).  Values one folder\n"
"lists as fused away get a line saying into which node; tensors in one\n"
"folder only are counted.  Then 'first past tolerance: NAME (node, op)':\n"
"where a wrong kernel, weight or compile first shows.\n"
"\n"
"  --rtol=R      relative tolerance (default 1e-4)\n"
"  --atol=A      absolute tolerance (default 1e-5)\n"
"  -q, --quiet   print only the 'first past tolerance' line\n"
"\n"
"exit status: 0 every tensor within the tolerance, 1 one is not (or a\n"
"folder cannot be read, or none of their tensors has the same name), 2\n"
"usage error.\n"
"\n"
"example (are the fast kernels wrong, or the compile?):\n"
"  gearc run m.om --random-inputs --dump-tensors=fast\n"
"  GEARRT_NO_FAST=1 gearc run m.om --random-inputs --dump-tensors=ref\n"
"  gearc compare fast ref\n";

static const char help_help[] =
"usage: gearc help [COMMAND]\n"
"\n"
"Shows help for COMMAND (compile, inspect, dump, verify, run, export,\n"
"compare, help), or the overview.  'gearc help ops' lists the ops gearc\n"
"supports, by domain.\n";

/* op_info's names of one domain, wrapped at 78 columns. */
static void print_domain_ops(FILE *f, const char *domain)
{
	int col = 0, n = 0;
	for (int i = 1; i < OP_COUNT; i++)
		n += !strcmp(op_info[i].domain, domain);
	fprintf(f, "%s (%d ops):\n", *domain ? domain : "ai.onnx (default)",
		n);
	for (int i = 1; i < OP_COUNT; i++) {
		if (strcmp(op_info[i].domain, domain))
			continue;
		int w = (int)strlen(op_info[i].name) + 1;
		if (col && col + w > 78) {
			fputc('\n', f);
			col = 0;
		}
		fprintf(f, "%s %s", col ? "" : " ", op_info[i].name);
		col += w + (col ? 0 : 1);
	}
	fputs("\n\n", f);
}

/* The op table (compiler/ops.h), default domain first, then each other
 * domain in the order its first op has in the table; gearc's own ops last,
 * since only the compiler makes them. */
static void print_ops(FILE *f)
{
	fputs("Ops gearc compiles and runs, by domain (from its op table):\n\n",
	      f);
	print_domain_ops(f, "");
	for (int i = 1; i < OP_COUNT; i++) {
		const char *d = op_info[i].domain;
		bool first = true;
		for (int k = 1; k < i && first; k++)
			first = strcmp(op_info[k].domain, d) != 0;
		if (first && *d && strcmp(d, GEARC_DOMAIN))
			print_domain_ops(f, d);
	}
	print_domain_ops(f, GEARC_DOMAIN);
	fputs("ai.gearc's ops are the compiler's own (gears, scopes, fused\n"
	      "ops, which only the compiler makes).  Any other op is an error\n"
	      "naming every unsupported op of the model at once; 'gearc\n"
	      "inspect MODEL.onnx' lists them before compiling.\n", f);
}

/* pass_names(), broken after a comma to fit the 80 columns of the help
 * text's second column (26 columns in). */
static const char *wrapped_pass_names(void)
{
	static char buf[512];
	const char *names = pass_names();
	size_t k = 0, col = 26;
	while (*names && k + 40 < sizeof(buf)) {
		const char *comma = strchr(names, ',');
		size_t len = comma ? (size_t)(comma - names) + 1 : strlen(names);
		if (col + len + 1 > 78) {
			if (k && buf[k - 1] == ' ')
				k--;
			k += (size_t)snprintf(buf + k, sizeof(buf) - k, "\n%26s",
					      "");
			col = 26;
		}
		k += (size_t)snprintf(buf + k, sizeof(buf) - k, "%.*s",
				      (int)len, names);
		col += len;
		names += len;
		if (*names == ' ') {
			names++;
			if (col + 1 <= 78) {
				buf[k++] = ' ';
				col++;
			}
		}
	}
	buf[k] = 0;
	return buf;
}

int print_help(FILE *f, const char *cmd)
{
	if (!cmd || !*cmd)
		fputs(overview, f);
	else if (!strcmp(cmd, "compile"))
		fprintf(f, compile_help, wrapped_pass_names());
	else if (!strcmp(cmd, "dump"))
		fputs(dump_help, f);
	else if (!strcmp(cmd, "inspect"))
		fputs(inspect_help, f);
	else if (!strcmp(cmd, "verify"))
		fputs(verify_help, f);
	else if (!strcmp(cmd, "run"))
		fputs(run_help, f);
	else if (!strcmp(cmd, "export"))
		fputs(export_help, f);
	else if (!strcmp(cmd, "compare"))
		fputs(compare_help, f);
	else if (!strcmp(cmd, "help"))
		fputs(help_help, f);
	else if (!strcmp(cmd, "ops"))
		print_ops(f);
	else
		return -1;
	return 0;
}

int cmd_help(int argc, char **argv)
{
	/* -q/--quiet is accepted by every command; help has nothing to
	 * silence but prints what was asked */
	while (argc && (!strcmp(argv[0], "-q") || !strcmp(argv[0], "--quiet")))
		argc--, argv++;
	if (argc > 1 && (!strcmp(argv[1], "-q") || !strcmp(argv[1], "--quiet")))
		argc--;
	if (argc > 1) {
		error("help takes one command name, got %d arguments", argc);
		return fail(EXIT_USAGE);
	}
	if (print_help(stdout, argc ? argv[0] : NULL) < 0) {
		error("no help for '%s': it is not a gearc command (commands: "
		      "compile, inspect, dump, verify, run, export, compare, help; or "
		      "'ops')",
		      argv[0]);
		return fail(EXIT_USAGE);
	}
	return EXIT_OK;
}
