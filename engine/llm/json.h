/*
 * json.h - just enough JSON for server-sent completion chunks: check
 * that a text is one well-formed JSON value and find a member of its
 * top-level object.  No allocation, no number conversion beyond what a
 * token count needs.  No lua.h.
 */
#ifndef STRATA_LLM_JSON_H
#define STRATA_LLM_JSON_H

#include <stddef.h>

/* 0 when s[0..n) is exactly one JSON value (whitespace around allowed),
 * -1 when it is not (truncated, unbalanced, bad literal, trailing text). */
int llm_json_valid(const char *s, size_t n);

/* In the object s[0..n) (already valid), the raw text of the value of
 * member key: *v and *vn set, returns 0; -1 when s is not an object or
 * has no such member.  Keys are compared as written (no unescaping). */
int llm_json_member(const char *s, size_t n, const char *key,
                    const char **v, size_t *vn);

/* The value is a non-empty array ("[ ... ]" with an element)? */
int llm_json_nonempty_array(const char *v, size_t vn);

/* The value as a non-negative integer; -1 when it is not one (null,
 * string, fraction, negative). */
long long llm_json_uint(const char *v, size_t vn);

#endif
