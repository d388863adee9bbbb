/*
 * core_lua.c - the "strata.core" module: what the runner itself needs from
 * C (process isolation, signals, clocks, files and folders, checksums).
 * Process isolation is isolate_lua.c; the table walks walk_lua.c and
 * json_lua.c; this file is the rest and the module's table.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>
#include <openssl/evp.h>

#include "crypto_load.h"
#include "isolate.h"
#include "strata.h"

static void on_signal(int sig)
{
  (void)sig;
  strata_stop_flag = 1;
}

/* core.trap_signals(): SIGINT/SIGTERM only raise the stop flag. */
static int l_trap_signals(lua_State *L)
{
  struct sigaction sa;
  (void)L;
  memset(&sa, 0, sizeof(sa));
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  return 0;
}

static int l_stopping(lua_State *L)
{
  lua_pushboolean(L, strata_stop_flag);
  return 1;
}

static int l_now(lua_State *L)
{
  lua_pushnumber(L, (double)strata_now_ns() / 1e9);
  return 1;
}

static int l_time(lua_State *L)
{
  struct timeval tv;
  gettimeofday(&tv, NULL);
  lua_pushnumber(L, (double)tv.tv_sec + (double)tv.tv_usec / 1e6);
  return 1;
}

/* core.utc([t [, fmt]]) -> strftime in UTC; default ISO 8601 with Z */
static int l_utc(lua_State *L)
{
  time_t t = (time_t)luaL_optnumber(L, 1, (lua_Number)time(NULL));
  const char *fmt = luaL_optstring(L, 2, "%Y-%m-%dT%H:%M:%SZ");
  char buf[128];
  struct tm tm;
  gmtime_r(&t, &tm);
  if(!strftime(buf, sizeof(buf), fmt, &tm))
    return luaL_error(L, "core.utc: format too long");
  lua_pushstring(L, buf);
  return 1;
}

static int l_hostname(lua_State *L)
{
  char buf[256];
  if(gethostname(buf, sizeof(buf)))
    return luaL_error(L, "core.hostname: %s", strerror(errno));
  buf[sizeof(buf) - 1] = '\0';
  lua_pushstring(L, buf);
  return 1;
}

static int l_sleep(lua_State *L)
{
  double s = luaL_checknumber(L, 1);
  struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
  while(nanosleep(&ts, &ts) && errno == EINTR && !strata_stop_flag)
    ;
  return 0;
}

static int l_skip(lua_State *L)
{
  return strata_skip(L, "%s", luaL_checkstring(L, 1));
}

static int l_isatty(lua_State *L)
{
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

/* core.stat(path) -> "file" | "dir" | "other", size, mtime | nil */
static int l_stat(lua_State *L)
{
  struct stat st;
  if(stat(luaL_checkstring(L, 1), &st))
    return 0;
  lua_pushstring(L, S_ISREG(st.st_mode) ? "file"
                    : S_ISDIR(st.st_mode) ? "dir" : "other");
  lua_pushinteger(L, (lua_Integer)st.st_size);
  lua_pushinteger(L, (lua_Integer)st.st_mtime);
  return 3;
}

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* core.listdir(path) -> sorted array of names (no . and ..); raises */
static int l_listdir(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  DIR *d = opendir(path);
  struct dirent *e;
  char **names = NULL;
  size_t n = 0, cap = 0;

  if(!d)
    return luaL_error(L, "%s: %s", path, strerror(errno));
  while((e = readdir(d))) {
    if(!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    if(n == cap) {
      char **p = realloc(names, (cap = cap ? cap * 2 : 32) * sizeof(*p));
      if(!p)
        break;
      names = p;
    }
    names[n] = strdup(e->d_name);
    if(names[n])
      n++;
  }
  closedir(d);
  qsort(names, n, sizeof(*names), cmp_str);
  lua_createtable(L, (int)n, 0);
  for(size_t i = 0; i < n; i++) {
    lua_pushstring(L, names[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
    free(names[i]);
  }
  free(names);
  return 1;
}

/* core.mkdir_p(path): create path and its parents; raises on failure */
static int l_mkdir_p(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  char buf[PATH_MAX];
  size_t n = strlen(path);
  if(n >= sizeof(buf))
    return luaL_error(L, "core.mkdir_p: path too long");
  memcpy(buf, path, n + 1);
  for(char *p = buf + 1; *p; p++) {
    if(*p != '/')
      continue;
    *p = '\0';
    if(mkdir(buf, 0755) && errno != EEXIST)
      return luaL_error(L, "%s: %s", buf, strerror(errno));
    *p = '/';
  }
  if(mkdir(buf, 0755) && errno != EEXIST)
    return luaL_error(L, "%s: %s", buf, strerror(errno));
  return 0;
}

static int l_realpath(lua_State *L)
{
  char buf[PATH_MAX];
  if(!realpath(luaL_checkstring(L, 1), buf))
    return 0;
  lua_pushstring(L, buf);
  return 1;
}

/* core.exe_dir() -> the folder holding the running binary */
static int l_exe_dir(lua_State *L)
{
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  char *slash;
  if(n <= 0)
    return 0;
  buf[n] = '\0';
  slash = strrchr(buf, '/');
  if(slash)
    *slash = '\0';
  lua_pushstring(L, buf);
  return 1;
}

/* core.sha256(string) -> lowercase hex digest */
static int l_sha256(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  unsigned char md[32];
  unsigned int len = 0;
  char hex[65];
  if(!EVP_Digest(s, n, md, &len, EVP_sha256(), NULL))
    return luaL_error(L, "core.sha256: %s", crypto_load() ?
                      crypto_load_error() : "digest failed");
  for(unsigned int i = 0; i < len; i++)
    snprintf(hex + 2 * i, 3, "%02x", md[i]);
  lua_pushlstring(L, hex, 2 * len);
  return 1;
}

/* core.hide_from_cells(file): the file (an io handle) is the runner's;
 * cells have /dev/null in its place (isolate_hide_fd). */
static int l_hide_from_cells(lua_State *L)
{
  luaL_Stream *p = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  if(!p->closef)   /* (liolib's mark of a closed file) */
    return luaL_error(L, "core.hide_from_cells: a closed file");
  if(isolate_hide_fd(fileno(p->f)))
    return luaL_error(L, "core.hide_from_cells: %s", strerror(errno));
  return 0;
}

static int l_getpid(lua_State *L)
{
  lua_pushinteger(L, getpid());
  return 1;
}

/* isolate_lua.c */
int core_lua_isolate(lua_State *L);
int core_lua_ask(lua_State *L);
int core_lua_fork_server(lua_State *L);
void core_lua_isolate_open(lua_State *L);
/* walk_lua.c */
int core_lua_denull(lua_State *L);
int core_lua_clean_copy(lua_State *L);
/* json_lua.c */
int core_lua_clean_json(lua_State *L);

static const luaL_Reg core_funcs[] = {
  { "isolate", core_lua_isolate },
  { "ask", core_lua_ask },
  { "fork_server", core_lua_fork_server },
  { "trap_signals", l_trap_signals },
  { "stopping", l_stopping },
  { "now", l_now },
  { "time", l_time },
  { "utc", l_utc },
  { "hostname", l_hostname },
  { "sleep", l_sleep },
  { "skip", l_skip },
  { "isatty", l_isatty },
  { "stat", l_stat },
  { "listdir", l_listdir },
  { "mkdir_p", l_mkdir_p },
  { "realpath", l_realpath },
  { "exe_dir", l_exe_dir },
  { "sha256", l_sha256 },
  { "getpid", l_getpid },
  { "hide_from_cells", l_hide_from_cells },
  { "denull", core_lua_denull },
  { "clean_copy", core_lua_clean_copy },
  { "clean_json", core_lua_clean_json },
  { NULL, NULL }
};

int luaopen_strata_core(lua_State *L)
{
  core_lua_isolate_open(L);
  luaL_newlib(L, core_funcs);
  return 1;
}
