/*
 * xml.h - the two things strata reads from an S3 reply body: the text of
 * one element (<UploadId>, <Code>) and an error reply's <Code>.  S3's
 * replies are flat enough that a search for the tag is the whole parser;
 * bodies are server bytes, so both are fuzzed (bench/fuzz).
 */
#ifndef STRATA_S3_XML_H
#define STRATA_S3_XML_H

#include <stddef.h>

/* Copy the text of the first <tag>...</tag> in xml into out; -1 if absent
 * or when it does not fit in cap bytes (with its NUL). */
int s3_xml_tag(const char *xml, const char *tag, char *out, size_t cap);

/* The <Code> of an error body into out (cut to cap - 1 bytes); out = ""
 * when there is none. */
void s3_xml_error_code(const char *body, char *out, size_t cap);

#endif
