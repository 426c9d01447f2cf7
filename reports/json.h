/*
 * json.h - the old names of the JSON writer, for tests/report_test.c
 * only: the writer is pb_json (base/jsonw.h), which the reports use.
 */
#ifndef PRISM_TUI_JSON_H
#define PRISM_TUI_JSON_H

#include "jsonw.h"

typedef pb_json json_w;
#define json_init pb_json_init
#define json_finish pb_json_finish
#define json_begin_object pb_json_begin_object
#define json_end_object pb_json_end_object
#define json_begin_array pb_json_begin_array
#define json_end_array pb_json_end_array
#define json_key pb_json_key
#define json_string pb_json_string
#define json_stringn pb_json_stringn
#define json_uint pb_json_uint
#define json_int pb_json_int
#define json_double pb_json_double
#define json_bool pb_json_bool
#define json_null pb_json_null
#define json_kstring pb_json_kstring
#define json_kuint pb_json_kuint
#define json_kint pb_json_kint
#define json_kdouble pb_json_kdouble
#define json_kbool pb_json_kbool
#define json_put_string pb_json_put_string
#define json_put_double pb_json_put_double

#endif
