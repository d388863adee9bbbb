/*
 * k8s.h - what the Kubernetes API client needs besides the HTTP layer:
 * the service account token, read from its file (no lua.h).
 */
#ifndef STRATA_K8S_H
#define STRATA_K8S_H

#include <stddef.h>

/* The first line of the file at path, surrounding blanks trimmed, as a
 * malloc'd string the caller frees (after zeroing it: it is a secret).
 * NULL with err "token file <path>: <why>" when the file cannot be read
 * or holds no token. */
char *k8s_read_token(const char *path, char *err, size_t errlen);

#endif
