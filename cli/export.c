/*
 * cli/export.c - 'gearc export FILE.om --gear=K|all --output=PATH': each
 * gear as a static ONNX model, loadable by any ONNX runtime.
 *
 * The .om is opened with every check of `gearc verify`, raised into the
 * IR once for them (serializer/verify.h: verify_open), the gear's graph
 * flattened to plain ONNX and re-inferred at the gear's input shapes
 * (passes/flatten.h), its output shapes checked against the file's output
 * table, and the model written (serializer/export.h).  --gear=all writes
 * PATH/NAME_SHAPES.onnx for every gear (NAME: the .om's file name without
 * ".om"; SHAPES: the gear's input shapes, gear_file); one gear goes to
 * PATH, or to PATH/NAME_SHAPES.onnx when PATH is a directory or ends in
 * '/'.  A missing directory is made, one level.  The gear's values and input shapes go in the model's
 * doc_string and metadata_props (keys "gearc.*").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "passes/flatten.h"
#include "serializer/export.h"
#include "serializer/verify.h"

typedef struct Export {
	const OmFile *f;
	Model *m;
	const char *name; /* NAME of NAME.om */
	bool external;
	bool fp16_weights;
} Export;

/* "1,3,640,640" into the arena. */
static const char *dims_str(Arena *a, const int64_t *d, size_t n)
{
	char *s = arena_strdup(a, "");
	for (size_t i = 0; i < n; i++)
		s = arena_printf(a, "%s%s%lld", s, i ? "," : "",
				 (long long)d[i]);
	return s;
}

static const Gearom__ShapeInfo *find_info(Gearom__ShapeInfo **l, size_t n,
					  const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(l[i]->name, name))
			return l[i];
	return NULL;
}

/* The shape of each input of gear k's graph at that gear. */
static const Shape **gear_shapes(const Export *E, int32_t k)
{
	const Graph *src = gear_source_graph(E->m, k);
	const Shape **s = arena_array(&E->m->arena, (size_t)src->ninputs + 1,
				      sizeof(Shape *));
	if (!E->f->model->n_gears)
		return s;
	const Gearom__Gear *gr = E->f->model->gears[k];
	for (int32_t i = 0; i < src->ninputs; i++) {
		const Gearom__ShapeInfo *in =
			find_info(gr->inputs, gr->n_inputs,
				  src->vals[src->inputs[i]].name);
		if (!in)
			continue;
		Shape *sh = arena_alloc(&E->m->arena, sizeof(*sh));
		*sh = shape_of((int32_t)in->n_dims, in->dims);
		s[i] = sh;
	}
	return s;
}

/* The flattened graph's outputs must have the shapes the file records. */
static int check_outputs(const Export *E, int32_t k, const Graph *g)
{
	if (!E->f->model->n_gears)
		return 0;
	const Gearom__Gear *gr = E->f->model->gears[k];
	for (int32_t i = 0; i < g->noutputs; i++) {
		const Value *v = &g->vals[g->outputs[i]];
		const Gearom__ShapeInfo *o =
			find_info(gr->outputs, gr->n_outputs, v->name);
		Shape want = o ? shape_of((int32_t)o->n_dims, o->dims)
			       : shape_unknown();
		if (o && o->has_rank && o->rank < 0)
			want = shape_unknown();
		if (!o || !shape_equal(&v->shape, &want)) {
			char a[128], b[128];
			return error("gear %d: output '%s' comes out %s, the "
				     "file's output table says %s",
				     k, v->name, shape_str(&v->shape, a, 128),
				     o ? shape_str(&want, b, 128) : "nothing");
		}
	}
	return 0;
}

/* doc_string and metadata_props for gear k whose inputs are g's. */
static void describe(const Export *E, int32_t k, const Graph *g,
		     OnnxExport *x)
{
	Arena *a = &E->m->arena;
	const Model *m = E->m;
	const char *shapes = arena_strdup(a, "");
	for (int32_t i = 0; i < g->ninputs; i++) {
		const Value *v = &g->vals[g->inputs[i]];
		shapes = arena_printf(a, "%s%s%s:%s", shapes, i ? ";" : "",
				      v->name,
				      dims_str(a, v->shape.dims,
					       (size_t)(v->shape.rank > 0
								? v->shape.rank
								: 0)));
	}
	const char *dims = "";
	if (m->gears)
		dims = dims_str(a, m->gears->table +
					   (size_t)k * (size_t)m->gears->nvals,
				(size_t)m->gears->nvals);
	KeyVal *kv = arena_array(a, 7, sizeof(KeyVal));
	kv[0] = (KeyVal){ "gearc.source", m->path };
	kv[1] = (KeyVal){ "gearc.mode", gear_mode_name(m->mode) };
	kv[2] = (KeyVal){ "gearc.gear", arena_printf(a, "%d", k) };
	kv[3] = (KeyVal){ "gearc.gear_count",
			  arena_printf(a, "%d", gear_count(m)) };
	kv[4] = (KeyVal){ "gearc.gear_dims", dims };
	kv[5] = (KeyVal){ "gearc.input_shape", shapes };
	x->meta = kv;
	x->nmeta = 6;
	if (m->sha256)
		kv[x->nmeta++] = (KeyVal){ "gearc.source_sha256", m->sha256 };
	x->doc = arena_printf(a,
			      "%s, gear %d of %d (%s dims [%s]) exported by "
			      "gearc %s: static input shapes %s",
			      m->path, k, gear_count(m),
			      gear_mode_name(m->mode), dims, GEARC_VERSION,
			      shapes);
}

static int export_gear(const Export *E, int32_t k, const char *path)
{
	Graph *g = gear_flatten(E->m, k, gear_shapes(E, k));
	if (!g || check_outputs(E, k, g) < 0)
		return error_prefix("gear %d", k);
	OnnxExport x = { .external = E->external,
			 .fp16_weights = E->fp16_weights };
	describe(E, k, g, &x);
	return onnx_write(E->m, g, &x, path);
}

static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* PATH names a directory: it is one, or it ends in '/'. */
static bool names_dir(const char *path)
{
	size_t n = strlen(path);
	return is_dir(path) || (n && path[n - 1] == '/');
}

/* "_1x3x48x320": dims as part of a file name. */
static const char *dims_part(Arena *a, const int64_t *d, size_t n)
{
	const char *s = "_";
	for (size_t i = 0; i < n; i++)
		s = arena_printf(a, "%s%s%lld", s, i ? "x" : "", (long long)d[i]);
	return s;
}

/* The name of gear k's file in dir: NAME, then the gear's shapes, the
 * gear inputs' in their order ("rec_1x3x48x320.onnx"; a static
 * compile's: its inputs', scalars left out), so that a folder of them
 * says which shape each is; NAME_gearK.onnx if that would pass 200
 * bytes. */
static const char *gear_file(const Export *E, const char *dir, int32_t k)
{
	Arena *a = &E->m->arena;
	const Gearom__Model *f = E->f->model;
	const char *tail = "";
	if (f->n_gears) {
		const Gearom__Gear *gr = f->gears[k];
		for (size_t i = 0; i < gr->n_inputs; i++)
			tail = arena_printf(a, "%s%s", tail,
					    dims_part(a, gr->inputs[i]->dims,
						      gr->inputs[i]->n_dims));
	} else {
		const Graph *g = gear_source_graph(E->m, 0);
		for (int32_t i = 0; i < g->ninputs; i++) {
			const Shape *s = &g->vals[g->inputs[i]].shape;
			if (s->rank > 0)
				tail = arena_printf(a, "%s%s", tail,
						    dims_part(a, s->dims,
							      (size_t)s->rank));
		}
	}
	if (strlen(E->name) + strlen(tail) > 200)
		tail = arena_printf(a, "_gear%d", k);
	size_t n = strlen(dir);
	return arena_printf(a, "%s%s%s%s.onnx", dir,
			    n && dir[n - 1] == '/' ? "" : "/", E->name, tail);
}

/* "PATH/NAME.om" -> "NAME". */
static const char *om_name(Arena *a, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t n = strlen(base);
	if (n > 3 && !strcmp(base + n - 3, ".om"))
		n -= 3;
	return arena_strndup(a, base, n);
}

/* --gear's value: -1 for all, else the gear; -2 on a usage error, -3 for
 * a gear the file does not have. */
static int32_t parse_gear(const char *s, int32_t ngears, const char *file)
{
	int64_t k;
	if (!s) {
		if (ngears == 1)
			return 0;
		error("export needs --gear=K or --gear=all: %s has %d gears "
		      "(0..%d)",
		      file, ngears, ngears - 1);
		return -2;
	}
	if (!strcmp(s, "all"))
		return -1;
	if (!parse_i64(s, strlen(s), &k) || k < 0) {
		error("--gear: '%s' is not a gear number or 'all'", s);
		return -2;
	}
	if (k >= ngears) { /* a disagreement with the file: exit 1 */
		error("--gear=%s: %s has %d gear%s (0..%d)", s, file, ngears,
		      ngears == 1 ? "" : "s", ngears - 1);
		return -3;
	}
	return (int32_t)k;
}

/* Gear 'gear' (-1: all) into output, a directory for all gears or when
 * it names one (created, one level, if missing; removed again if the
 * export fails and leaves it empty). */
static int run_export(const Export *E, int32_t gear, const char *output)
{
	bool made = false;
	if (gear >= 0 && !names_dir(output))
		return export_gear(E, gear, output) < 0 ? EXIT_FAIL : EXIT_OK;
	if (make_output_dir("--output", output, &made) < 0)
		return EXIT_FAIL;
	int32_t first = gear >= 0 ? gear : 0;
	int32_t last = gear >= 0 ? gear : gear_count(E->m) - 1;
	for (int32_t k = first; k <= last; k++)
		if (export_gear(E, k, gear_file(E, output, k)) < 0) {
			if (made)
				rmdir(output);
			return EXIT_FAIL;
		}
	return EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	const char *help = NULL, *gear = NULL, *output = NULL, *ext = NULL;
	const char *quiet = NULL, *half = NULL, *pos[1];
	const ArgSpec spec[] = {
		{ "gear", 0, true, &gear },
		{ "output", 'o', true, &output },
		{ "external_data", 0, false, &ext },
		{ "fp16_weights", 0, false, &half },
		{ "quiet", 'q', false, &quiet },
		{ "help", 'h', false, &help },
		{ 0 },
	};
	int npos;
	int done = cmd_args(argc, argv, spec, "export", pos, 1, &npos, &help);
	if (done >= 0)
		return done;
	if (npos != 1 || !output) {
		error("export needs a .om file and --output (gearc export "
		      "FILE.om --gear=K|all --output=PATH)");
		return fail(EXIT_USAGE);
	}
	OmFile f;
	Model *m;
	if (verify_open(&f, pos[0], NULL, &m) < 0)
		return fail(EXIT_FAIL);
	Export E = { .f = &f, .m = m, .name = om_name(&m->arena, pos[0]),
		     .external = ext != NULL, .fp16_weights = half != NULL };
	int32_t k = parse_gear(gear, gear_count(m), pos[0]);
	int status = k == -2   ? EXIT_USAGE
		     : k == -3 ? EXIT_FAIL
			       : run_export(&E, k, output);
	model_free(m);
	om_close(&f);
	return status ? fail(status) : EXIT_OK;
}
