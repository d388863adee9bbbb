/*
 * yaml_load.c - libyaml, loaded the first time the engine reads YAML (a
 * site file, a thresholds file, a profile: yaml_lua.c).
 *
 * A run whose spec brings no YAML never needs libyaml, yet a linked
 * library is mapped in the fork server and in every cell's child, and
 * each mapping costs every fork and exit (engine/core/lazylib.h).  So the
 * binary is not linked against it: the seven functions the engine calls
 * are defined here with the prototypes of yaml.h (Debian libyaml-dev
 * 0.2.5-1; docs/provenance.md) and forward to libyaml's own (unversioned
 * symbols: dlsym), resolved once per process.  A run that reads YAML
 * before its first cell loads it in the runner, so its cells map it
 * (docs/performance.md, "Runner").
 *
 * Without the library every function fails as libyaml fails (0, NULL)
 * and yaml_load_error() says why: yaml.load_file raises with it.
 */
#include <yaml.h>

#include "lazylib.h"
#include "yaml_load.h"

#ifndef STRATA_LIBYAML_SONAME
#define STRATA_LIBYAML_SONAME "libyaml-0.so.2"
#endif

static struct {
  const char *(*get_version_string)(void);
  int (*parser_initialize)(yaml_parser_t *);
  void (*parser_delete)(yaml_parser_t *);
  void (*parser_set_input_string)(yaml_parser_t *, const unsigned char *,
                                  size_t);
  void (*parser_set_input_file)(yaml_parser_t *, FILE *);
  int (*parser_parse)(yaml_parser_t *, yaml_event_t *);
  void (*event_delete)(yaml_event_t *);
} fn;

static const struct lazylib_sym syms[] = {
  { (void **)&fn.get_version_string, "yaml_get_version_string", NULL },
  { (void **)&fn.parser_initialize, "yaml_parser_initialize", NULL },
  { (void **)&fn.parser_delete, "yaml_parser_delete", NULL },
  { (void **)&fn.parser_set_input_string, "yaml_parser_set_input_string",
    NULL },
  { (void **)&fn.parser_set_input_file, "yaml_parser_set_input_file", NULL },
  { (void **)&fn.parser_parse, "yaml_parser_parse", NULL },
  { (void **)&fn.event_delete, "yaml_event_delete", NULL },
};

static struct lazylib lib = {
  STRATA_LIBYAML_SONAME, "libyaml-0-2", syms,
  sizeof(syms) / sizeof(syms[0]), 0, ""
};
static int ready(void)
{
  return lazylib_ready(&lib);
}

LAZYLIB_ENTRY_POINTS(yaml, lib)

const char *yaml_get_version_string(void)
{
  return ready() ? fn.get_version_string() : NULL;
}

int yaml_parser_initialize(yaml_parser_t *parser)
{
  return ready() ? fn.parser_initialize(parser) : 0;
}

void yaml_parser_delete(yaml_parser_t *parser)
{
  if(ready())
    fn.parser_delete(parser);
}

void yaml_parser_set_input_string(yaml_parser_t *parser,
                                  const unsigned char *input, size_t size)
{
  if(ready())
    fn.parser_set_input_string(parser, input, size);
}

void yaml_parser_set_input_file(yaml_parser_t *parser, FILE *file)
{
  if(ready())
    fn.parser_set_input_file(parser, file);
}

int yaml_parser_parse(yaml_parser_t *parser, yaml_event_t *event)
{
  return ready() ? fn.parser_parse(parser, event) : 0;
}

void yaml_event_delete(yaml_event_t *event)
{
  if(ready())
    fn.event_delete(event);
}
