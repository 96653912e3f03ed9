/* The C side of the memdecay shim: SQLite calls md_xfunc, which decodes the
 * arguments and calls memdecayCall in Go (shim.go) once per row. */
#ifndef MEMDECAY_H
#define MEMDECAY_H

#include <stdint.h>

/* Function ids shared by the C registration table and the Go dispatcher. */
enum {
	MD_VERSION,
	MD_DEBUG,
	MD_DECAY_TIER,
	MD_TIER_LAMBDA,
	MD_LAMBDA_EDGE,
	MD_EFFECTIVE_WEIGHT,
	MD_HALF_LIFE_WEIGHT,
	MD_LINEAR_WEIGHT,
	MD_MULTI_LINEAR_WEIGHT,
	MD_POWER_LAW_WEIGHT,
	MD_CURVE_WEIGHT,
	MD_DECAY_HORIZON,
	MD_CURVE_HORIZON,
	MD_TIDELINE_SCORE,
	MD_SEGMENT_TIER,
	MD_SEGMENT_IMPORTANCE,
	MD_SEGMENT_DECAY_RATE,
	MD_LIFECYCLE_ACTION,
	MD_EDGE_STRENGTH,
	MD_LOG_NORMALISE,
	MD_COMPOSITE_SCORE,
	MD_POLICY_CURVE,
	MD_TIDELINE_HORIZON,
	MD_FUNC_COUNT
};

#define MD_MAX_ARGS 5

/* Argument types are SQLite's fundamental datatypes (SQLITE_INTEGER ...). */
typedef struct {
	int sqltype;
	double num;
	const char *text;
	int len;
} md_arg;

enum { MD_RESULT_NULL, MD_RESULT_DOUBLE, MD_RESULT_STATIC_TEXT, MD_RESULT_TEXT, MD_RESULT_ERROR };

/* Filled by Go. text is static for MD_RESULT_STATIC_TEXT and malloc'd
 * (freed by C) for MD_RESULT_TEXT and MD_RESULT_ERROR. handle, when set, is a
 * parsed constant argument to keep with sqlite3_set_auxdata. */
typedef struct {
	int kind;
	double num;
	char *text;
	uintptr_t handle;
} md_result;

const char *md_sqlite_version(void);

/* Numeric functions whose arguments are all numbers take a shorter path:
 * the doubles go straight to Go (memdecayNumeric) with no decoding. */

#endif
