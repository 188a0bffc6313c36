/*
 * compiler/pin.h - --input_value: inputs pinned to constants.
 *
 * OpenVINO's Model Optimizer freezes an input with --input "sr->16000";
 * gearc's spelling is --input_value="sr:16000;mode:1,0".  A pinned input
 * stops being an input: it becomes a constant of the model's dtype and
 * its shape (from the model, or from --input_shape), so everything that
 * depends on it folds (an If on it keeps one branch) and the .om's
 * inputs no longer list it.  The option is recorded, values trimmed, so
 * 'gearc dump' shows what was pinned.
 *
 * Two steps, as in gearspec.h, so the CLI can tell the exit statuses
 * apart:
 *   pin_parse()  (cli/pinflag.c, declared in cli/cli.h) the flag alone, and against the other flags: entries
 *                split on ';', name and values at the LAST ':', values
 *                on ','; no empty entry, name or value; a name once; not
 *                a gear input (-1 in --input_shape).  Usage errors: 2.
 *   pin_apply()  against the model, after gear_apply(): the name is a
 *                tensor input; its shape is static; the value count is
 *                its element count; every value fits its dtype (an
 *                integer in range for the integer types, 0/1/true/false
 *                for bool, a finite number in range for the floating
 *                types).  Errors: exit status 1; m is unchanged.
 */
#ifndef GEARC_PIN_H
#define GEARC_PIN_H

#include "gearspec.h"

typedef struct PinEntry {
	char *name;
	int32_t nvals;
	char **vals; /* trimmed value texts */
} PinEntry;

typedef struct ParsedPins {
	int32_t n;
	PinEntry *e;
	char *canon; /* "sr:16000;mode:1,0", what the .om records */
} ParsedPins;

/* Frees what pin_parse (cli/pinflag.c) put in *p and empties it. */
void pin_parsed_release(ParsedPins *p);
int pin_apply(Model *m, const ParsedPins *p);

#endif
