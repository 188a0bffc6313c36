/*
 * compiler/preproc.h - preprocessing compiled into the model: atc's
 * static AIPP (--insert_op_conf=aipp.cfg) and OpenVINO's --mean_values,
 * --scale_values, --reverse_input_channels, --source_layout /
 * --target_layout (--layout), so that a camera frame goes in and the
 * model's answer comes out.
 *
 * One PreSpec per input says what the new input is and how it becomes
 * the model's.  In AIPP's order (atc's documentation: crop, channel
 * swap, colour space conversion, data type conversion, padding):
 *   frame  uint8 NHWC [N, src_h, src_w, C_in] (AIPP), or the model's
 *          dtype / the source type, in the source layout (OpenVINO)
 *   crop   rows load_start_pos_h .. +crop_size_h, columns likewise
 *   format XRGB8888_U8 drops channel 0 (RGBX8888_U8, or ax_swap_switch,
 *          channel 3); YUV400_U8 is one channel
 *   swap   rbuv_swap_switch: R<->B (channels 0 and 2), for YUV formats
 *          U<->V (1 and 2); reverse_input_channels reverses them all
 *   csc    out = clip(floor(M (in - input_bias) / 256) + output_bias,
 *          0, 255) per pixel, M the matrix_rXcY (atc's ">> 8")
 *   layout NHWC -> the model's NCHW (a Transpose)
 *   dtc    out_c = (in_c - mean_chn_c - min_chn_c) * var_reci_chn_c, or
 *          OpenVINO's (in_c - mean_c) / scale_c, in the model's channel
 *          order (after the swap)
 *   pad    left/right/top/bottom_padding_size of padding_value (in the
 *          output's units: padding comes after dtc)
 * YUV420SP_U8 is one node instead of frame .. layout: the input is the
 * camera's buffer, uint8 [N, src_h*3/2, src_w] (a full-resolution Y
 * plane, then interleaved U,V at half resolution in both axes; V,U with
 * rbuv_swap_switch: NV21), and Yuv420sp (compiler/ops/image.h) crops it
 * (load_start_pos even), reads each pixel's Y, U, V and applies the
 * csc (integer arithmetic, atc's formula above) or, without csc_switch,
 * gives Y, U, V as they are, into a float NCHW image; dtc and pad
 * follow as for the other formats.  Its H and W are static and src_h,
 * src_w even.
 * The result feeds what the model's input fed.  The input keeps its
 * name and value id (the gear spec names it); its dims as --input_shape
 * gave them map N->N, H->H, W->W, C->C_in, so gear dims stay gear dims
 * (crop and padding need static H and W).
 *
 * When every reader of the input is a Conv with constant weights and
 * group 1, the swap and dtc fold into it: W'[o,c] = W[o,swap(c)] * s_c
 * and b'[o] = b[o] + sum W[o,c,..] t_c (s, t the dtc's scale and
 * offset).  A Conv that pads its input would see the padding as 0 where
 * the model sees 0 after dtc, so then only the scale folds and an Add of
 * t/s runs before it; preproc_apply says so in *note.
 */
#ifndef GEARC_PREPROC_H
#define GEARC_PREPROC_H

#include "ir.h"

enum {
	PF_NONE,     /* not AIPP: the input keeps its dtype (or source type) */
	PF_RGB888,   /* RGB888_U8 */
	PF_XRGB8888, /* XRGB8888_U8 (ARGB8888_U8) */
	PF_RGBX8888, /* RGBX8888_U8 */
	PF_YUV400,   /* YUV400_U8 */
	PF_YUV420SP, /* YUV420SP_U8: NV12, NV21 with rbuv_swap_switch */
};

typedef struct PreSpec {
	char *input;	  /* the model input's name, or NULL: ... */
	int32_t rank;	  /* ... the input at this position (AIPP's
			   * related_input_rank) */
	const char *what; /* the flag or file it comes from, for messages */
	int32_t format;	  /* PF_* */
	int32_t src_type; /* the new input's dtype (DT_UINT8 for AIPP) */
	bool nhwc;	  /* the new input is channels-last (model NCHW) */
	int64_t src_w, src_h; /* AIPP's source size; 0: the model's */
	bool crop;
	int64_t crop_x, crop_y, crop_w, crop_h;
	bool swap;	  /* rbuv_swap_switch */
	bool reverse;	  /* reverse_input_channels: all channels */
	bool ax_swap;
	bool csc;
	double matrix[3][3], in_bias[3], out_bias[3];
	int32_t nscale;	  /* values in scale/offset: 0 none, 1 all, C */
	double scale[4], offset[4]; /* dtc as out = in * scale + offset */
	bool pad;
	int64_t pad_l, pad_r, pad_t, pad_b;
	float pad_value;
} PreSpec;

typedef struct ParsedPre {
	int32_t n;
	PreSpec *e;
	const char *given[8][2]; /* the flags as given: key, value */
} ParsedPre;

void pre_parsed_release(ParsedPre *p);
/* Applies every spec to m (after gear_apply and the edits): -1 with an
 * error naming the flag or file and the input (exit 1).  *note is set
 * (malloc'd) to one line when the preprocessing does not fold into the
 * first Conv entirely, else NULL. */
int preproc_apply(Model *m, const ParsedPre *p, char **note);

#endif
