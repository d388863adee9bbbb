/*
 * isolate_lua.c - strata.core's process isolation: core.isolate,
 * core.ask and core.fork_server (isolate.h), with the child's side of a
 * cell (its counted allocator, its answer) and the results as Lua sees
 * them.  core_lua.c registers these in the module.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lua.h>
#include <lauxlib.h>

#include "isolate.h"
#include "strata.h"

struct iso_call {
  lua_State *L;
  int fn;      /* stack index of the function to run in the child */
  int tick;    /* stack index of the tick function, or 0 */
  struct isolate_limits lim;
  int arg;     /* stack index of fn's one argument, or 0: none */
  int ask;     /* stack index of the function answering core.ask, or 0 */
};

static int write_all(int fd, const char *p, size_t n)
{
  while(n) {
    ssize_t w = write(fd, p, n);
    if(w < 0) {
      if(errno == EINTR)
        continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/*
 * The child's Lua allocator: the parent's, counted against the memory
 * limit.  A refusal (the cap, or the system saying no under RLIMIT_DATA)
 * that Lua's emergency collection does not cure marks the cell as out of
 * memory, however the spec's own code handled the error it then got.
 */
static struct {
  lua_Alloc f;
  void *ud;
  size_t used, cap;
  size_t refused;   /* size of the last refused request, 0 when cured */
  int by_system;    /* refused by malloc (a process limit), not the cap */
} heap;

/*
 * New blocks of a cell's child come first from a region of fresh pages,
 * handed out in order and never reused: malloc would take them from its
 * free lists, spread over the heap the child shares with the process it
 * was forked from, and each first write to one of those pages copies it
 * (perf: ~40 of a trivial cell's page faults were malloc's).  Blocks the
 * child inherited stay malloc's.  Bounded: when the region is used up,
 * malloc again.  Not under ASan (it would not see these blocks).
 */
#if defined(__SANITIZE_ADDRESS__)
#define CORE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORE_ASAN 1
#endif
#endif
#define FRESH_BYTES (4u << 20)
static struct {
  char *base, *next, *end;
} fresh;

static void fresh_start(void)
{
#ifndef CORE_ASAN
  void *p = mmap(NULL, FRESH_BYTES, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if(p == MAP_FAILED)
    return;   /* (a tight RLIMIT_DATA): malloc only */
  fresh.base = fresh.next = p;
  fresh.end = fresh.base + FRESH_BYTES;
#endif
}

static int is_fresh(const void *p)
{
  return (const char *)p >= fresh.base && (const char *)p < fresh.end;
}

static void *fresh_alloc(size_t n)
{
  size_t a = (n + 15) & ~(size_t)15;
  void *p;
  if(!fresh.base || (size_t)(fresh.end - fresh.next) < a)
    return NULL;
  p = fresh.next;
  fresh.next += a;
  return p;
}

static void *child_realloc(void *ptr, size_t old, size_t nsize)
{
  void *p;
  if(ptr && !is_fresh(ptr))
    return heap.f(heap.ud, ptr, old, nsize);
  if(ptr && nsize <= old)
    return ptr;   /* shrinking in place */
  p = fresh_alloc(nsize);
  if(!p)
    p = heap.f(heap.ud, NULL, 0, nsize);
  if(p && ptr)
    memcpy(p, ptr, old);
  return p;
}

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  size_t old = ptr ? osize : 0;
  void *p;
  (void)ud;
  if(nsize == 0) {
    if(ptr && !is_fresh(ptr))
      heap.f(heap.ud, ptr, osize, 0);
    heap.used -= old;
    return NULL;
  }
  if(heap.cap && nsize > old && heap.used - old + nsize > heap.cap) {
    heap.refused = nsize;
    heap.by_system = 0;
    return NULL;
  }
  p = child_realloc(ptr, old, nsize);
  if(!p) {
    heap.refused = nsize;
    heap.by_system = 1;
    return NULL;
  }
  if(heap.refused == nsize)
    heap.refused = 0;  /* the emergency collection made room */
  heap.used = heap.used - old + nsize;
  return p;
}

/* At its limit of open files when it returns: an fd cannot be had. */
static int at_file_limit(void)
{
  int fd = fcntl(0, F_DUPFD_CLOEXEC, 0);
  if(fd >= 0) {
    close(fd);
    return 0;
  }
  return errno == EMFILE;
}

/* In the child: run fn(); 'R'+string on success, 'E'+message on error. */
static int iso_child(int fd, void *arg)
{
  struct iso_call *c = arg;
  lua_State *L = c->L;
  size_t n;
  const char *s;
  int rc;

  heap.f = lua_getallocf(L, &heap.ud);
  heap.used = (size_t)lua_gc(L, LUA_GCCOUNT, 0) * 1024 +
              (size_t)lua_gc(L, LUA_GCCOUNTB, 0);
  heap.cap = (size_t)c->lim.memory_bytes;
  if(heap.cap && heap.cap < heap.used + (16u << 20))
    heap.cap = heap.used + (16u << 20);  /* room to report, at least */
  heap.refused = 0;
  fresh_start();
  lua_setallocf(L, capped_alloc, NULL);

  lua_pushcfunction(L, strata_traceback);
  lua_pushvalue(L, c->fn);
  if(c->arg)
    lua_pushvalue(L, c->arg);
  rc = lua_pcall(L, c->arg ? 1 : 0, 1, c->arg ? -3 : -2);
  if(heap.refused || rc == LUA_ERRMEM) {
    /* no allocation from here: the message is formatted on the stack */
    char m[200];
    int k = snprintf(m, sizeof(m), "M%s, with %.0f MiB of Lua heap in use",
                     heap.by_system ? "malloc said no (RLIMIT_DATA at this "
                     "limit, or a lower ulimit -v/-d of strata's own)"
                     : "the Lua heap reached the limit",
                     (double)heap.used / (1 << 20));
    (void)write_all(fd, m, (size_t)k);
    return ISOLATE_EXIT_MEMORY;
  }
  if(at_file_limit())
    return ISOLATE_EXIT_FILES;
  if(rc == LUA_OK && lua_type(L, -1) != LUA_TSTRING) {
    lua_pop(L, 1);
    lua_pushliteral(L, "isolate: the child function must return a string");
    rc = LUA_ERRRUN;
  }
  s = luaL_tolstring(L, -1, &n);
  {
    /* the tag and a short answer in one write */
    char b[4096];
    b[0] = rc == LUA_OK ? 'R' : 'E';
    if(n < sizeof(b)) {
      memcpy(b + 1, s, n);
      return write_all(fd, b, n + 1) ? 3 : 0;
    }
    if(write_all(fd, b, 1) || write_all(fd, s, n))
      return 3;
  }
  return 0;
}

static void iso_tick(double elapsed, void *arg)
{
  struct iso_call *c = arg;
  lua_State *L = c->L;
  if(!c->tick)
    return;
  lua_pushvalue(L, c->tick);
  lua_pushnumber(L, elapsed);
  /* a failing progress callback must not end the run: ignore its error */
  if(lua_pcall(L, 1, 0, 0) != LUA_OK)
    lua_pop(L, 1);
}

/* A question from the child (core.ask): ask(q)'s string, "R" first, or
 * "E" and the error it raised (the child raises it again). */
static void iso_ask(const char *q, size_t len, char **reply, size_t *rlen,
                    void *arg)
{
  struct iso_call *c = arg;
  lua_State *L = c->L;
  const char *s;
  size_t n;
  int ok;
  lua_pushvalue(L, c->ask);
  lua_pushlstring(L, q, len);
  ok = lua_pcall(L, 1, 1, 0) == LUA_OK;
  if(ok && lua_type(L, -1) != LUA_TSTRING) {
    lua_pop(L, 1);
    lua_pushliteral(L, "the ask function must return a string");
    ok = 0;
  }
  s = luaL_tolstring(L, -1, &n);
  *reply = malloc(n + 1);
  if(*reply) {
    (*reply)[0] = ok ? 'R' : 'E';
    memcpy(*reply + 1, s, n);
    *rlen = n + 1;
  }
  lua_pop(L, 2);
}

/* opts.tick, tick_ms, ask of core.isolate and fork_server:run. */
static void read_hooks(lua_State *L, int opts, const char *what,
                       struct iso_call *c, struct isolate_hooks *h)
{
  memset(h, 0, sizeof(*h));
  h->tick_ms = (int)strata_opt_int(L, opts, what, "tick_ms", 500);
  h->arg = c;
  if(lua_isnoneornil(L, opts))
    return;
  if(lua_getfield(L, opts, "tick") == LUA_TFUNCTION) {
    c->tick = lua_gettop(L);
    h->tick = iso_tick;
  }
  if(lua_getfield(L, opts, "ask") == LUA_TFUNCTION) {
    c->ask = lua_gettop(L);
    h->ask = iso_ask;
  }
}

/* core.ask(q) -> string: in a cell's child, what the parent's opts.ask(q)
 * answers (it raises what that raised). */
int core_lua_ask(lua_State *L)
{
  size_t len, rn;
  const char *q = luaL_checklstring(L, 1, &len);
  char *reply;
  if(isolate_ask(q, len, &reply, &rn))
    return luaL_error(L, "core.ask: %s", errno == ENOTCONN
                      ? "not in a cell that can ask (no ask function)"
                      : strerror(errno));
  if(rn < 1 || reply[0] != 'R') {
    lua_pushlstring(L, rn > 1 ? reply + 1 : "core.ask: no answer",
                    rn > 1 ? rn - 1 : 19);
    free(reply);
    return lua_error(L);
  }
  lua_pushlstring(L, reply + 1, rn - 1);
  free(reply);
  return 1;
}

/* "64 MiB", "1.5 GiB": a byte count for a message. */
static void human_bytes(uint64_t b, char *out, size_t len)
{
  if(b >= (1ull << 30))
    snprintf(out, len, "%.1f GiB", (double)b / (1ull << 30));
  else
    snprintf(out, len, "%.0f MiB", (double)b / (1ull << 20));
}

/* limits = { memory = bytes, cpu = s, files = n, output = bytes } over
 * the defaults; 0 turns one off. */
static void read_limits(lua_State *L, int opts, struct isolate_limits *lim)
{
  static const char *const keys[] = { "memory", "cpu", "files", "output",
                                      NULL };
  isolate_default_limits(lim);
  if(lua_isnoneornil(L, opts))
    return;
  if(lua_getfield(L, opts, "limits") == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  luaL_checktype(L, -1, LUA_TTABLE);
  {
    int t = lua_gettop(L);
    strata_check_keys(L, t, "core.isolate limits", keys);
    lim->memory_bytes = (uint64_t)strata_opt_num(L, t, "core.isolate limits",
                                                 "memory",
                                                 (double)lim->memory_bytes);
    lim->cpu_s = strata_opt_num(L, t, "core.isolate limits", "cpu",
                                lim->cpu_s);
    lim->open_files = (uint64_t)strata_opt_num(L, t, "core.isolate limits",
                                               "files",
                                               (double)lim->open_files);
    lim->output_bytes = (uint64_t)strata_opt_num(L, t, "core.isolate limits",
                                                 "output",
                                                 (double)lim->output_bytes);
  }
  lua_pop(L, 1);
}

/* Push "<limit> limit (<value>) reached..." for a crossed limit. */
static void push_limit(lua_State *L, const struct isolate_result *r,
                       const struct isolate_limits *lim)
{
  char v[32];
  switch(r->limit) {
  case ISOLATE_LIMIT_MEMORY:
    human_bytes(lim->memory_bytes, v, sizeof(v));
    lua_pushfstring(L, "memory limit (%s, limits.memory_mb) reached: %s", v,
                    r->len > 1 && r->payload[0] == 'M' ? r->payload + 1
                    : "an allocation was refused");
    break;
  case ISOLATE_LIMIT_CPU:
    snprintf(v, sizeof(v), "%g", lim->cpu_s);
    lua_pushfstring(L, "CPU time limit (%s s, limits.cpu_s) reached: the "
                    "cell used ", v);
    snprintf(v, sizeof(v), "%.1f", r->cpu_s);
    lua_pushfstring(L, "%s s of CPU", v);
    lua_concat(L, 2);
    break;
  case ISOLATE_LIMIT_FILES:
    lua_pushfstring(L, "open files limit (%d) reached: the cell holds every "
                    "file descriptor limits.open_files allows",
                    (int)lim->open_files);
    break;
  default:
    human_bytes(lim->output_bytes, v, sizeof(v));
    lua_pushfstring(L, "output limit (%s) reached: the cell's answer "
                    "(metrics, tables, notes) is larger than "
                    "limits.output_mb allows", v);
    break;
  }
}

/* An isolate_result -> core.isolate's return values (see below). */
static int push_result(lua_State *L, struct isolate_result *r,
                       const struct isolate_limits *lim)
{
  switch(r->status) {
  case ISOLATE_OK:
    if(r->len && r->payload[0] == 'R') {
      lua_pushliteral(L, "ok");
      lua_pushlstring(L, r->payload + 1, r->len - 1);
    }
    else {
      lua_pushliteral(L, "error");
      if(r->len)
        lua_pushlstring(L, r->payload + 1, r->len - 1);
      else
        lua_pushliteral(L, "child exited without an answer");
    }
    break;
  case ISOLATE_CRASHED:
    lua_pushliteral(L, "crashed");
    if(r->lost)
      lua_pushliteral(L, "its fork server died while it ran: how it ended "
                      "is not known");
    else if(r->term_signal)
      lua_pushfstring(L, "killed by signal %d (%s)", r->term_signal,
                      strsignal(r->term_signal));
    else
      lua_pushfstring(L, "exited with code %d", r->exit_code);
    break;
  case ISOLATE_LIMIT:
    lua_pushliteral(L, "error");
    push_limit(L, r, lim);
    lua_pushstring(L, isolate_strlimit(r->limit));
    free(r->payload);
    return 3;
  case ISOLATE_SYSERR:
    free(r->payload);
    return luaL_error(L, "core.isolate: %s", strerror(errno));
  default:
    lua_pushstring(L, isolate_strstatus(r->status));
    lua_pushnil(L);
    break;
  }
  free(r->payload);
  return 2;
}

/*
 * core.isolate(fn, {timeout = s, tick = fn(elapsed), tick_ms = n,
 *                   limits = {memory =, cpu =, files =, output =},
 *                   ask = fn(question) -> answer})
 *   -> "ok", string | "error", msg [, limit] | "timeout" | "crashed", why
 *      | "interrupted"
 * A crossed limit is an "error" whose third value names it ("memory",
 * "cpu", "open files", "output") and whose message says which and how
 * much: the cell's ERROR, like any other failure to answer.
 */
int core_lua_isolate(lua_State *L)
{
  static const char *const keys[] = { "timeout", "tick", "tick_ms",
                                      "limits", "ask", NULL };
  struct iso_call c = { L, 1, 0, { 0 }, 0, 0 };
  struct isolate_hooks h;
  struct isolate_result r;
  double timeout;

  luaL_checktype(L, 1, LUA_TFUNCTION);
  if(!lua_isnoneornil(L, 2))
    strata_check_keys(L, 2, "core.isolate", keys);
  timeout = strata_opt_num(L, 2, "core.isolate", "timeout", 0);
  read_limits(L, 2, &c.lim);
  read_hooks(L, 2, "core.isolate", &c, &h);
  isolate_run(iso_child, &c, timeout, &c.lim, &h, &r);
  return push_result(L, &r, &c.lim);
}

/*
 * core.fork_server(prepare, cell) -> server: a fork server (isolate.h)
 * forked now.  server:run(req, opts) runs prepare(req) (may be nil) in the
 * server (what it keeps there, later cells see) and in the child the
 * server forks, then cell(req) in that child, under opts as
 * core.isolate's (opts.ask answers the child's core.ask), and returns
 * what core.isolate returns.  When the server is gone, cell(req) runs in a child forked
 * from this process instead: the caller's own state must make cell(req)
 * answer the same.  server:close() lets the server go.
 */
#define FORK_SERVER_MT "strata.core.fork_server"

struct fork_server {
  struct isolate_server *s;
  pid_t owner;          /* the process that started it */
  int prepare_ref, cell_ref;
  /* in the server: */
  lua_State *L;
  int base;             /* its Lua stack below what each request pushes */
  int trimmed;
  int collected_kib;    /* its Lua heap after its last full collection */
  int prepare_failed;   /* prepare(req) raised: its message at base + 3 */
  struct iso_call call; /* what the child runs: cell(req) */
};

/* In the server between cells, before it forks the next cell's child. */
static void fs_idle(void *arg)
{
  struct fork_server *f = arg;
  lua_State *L = f->L;
  /* A cell's child writes to every page its Lua collector walks, and
   * each such write copies that page (copy on write).  A full collection
   * here leaves the collector paused, with the next cycle due only after
   * the heap has grown by as much again; collecting again well before
   * that (a quarter of the way), every child starts in that pause, and a
   * cell that allocates little never walks the heap it inherited.  The
   * first one also drops what the server inherited and does not need. */
  int kib = lua_gc(L, LUA_GCCOUNT, 0);
  if(!f->trimmed || kib > f->collected_kib + f->collected_kib / 4 + 64) {
    lua_gc(L, LUA_GCCOLLECT, 0);
    if(!f->trimmed)
      malloc_trim(0);
    f->trimmed = 1;
    f->collected_kib = lua_gc(L, LUA_GCCOUNT, 0);
  }
}

/* In the cell's child, and in the server for the children after it. */
static void fs_prepare(const char *req, size_t len,
                       const struct isolate_limits *lim, int in_child,
                       void *arg)
{
  struct fork_server *f = arg;
  lua_State *L = f->L;
  /* without a prepare function the server keeps nothing: it leaves its
   * Lua heap alone (each page it wrote would be copied once per cell) */
  if(!in_child && f->prepare_ref == LUA_NOREF)
    return;
  lua_settop(L, f->base);
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->cell_ref);
  lua_pushlstring(L, req, len);
  f->call = (struct iso_call){ L, f->base + 1, 0, *lim, f->base + 2, 0 };
  f->prepare_failed = 0;
  if(f->prepare_ref != LUA_NOREF) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->prepare_ref);
    lua_pushvalue(L, f->base + 2);
    f->prepare_failed = lua_pcall(L, 1, 0, 0) != LUA_OK;
  }
}

static int fs_child(int fd, void *arg)
{
  struct fork_server *f = arg;
  if(f->prepare_failed) {
    size_t n;
    const char *m = luaL_tolstring(f->L, f->base + 3, &n);
    return write_all(fd, "Efork server: ", 14) || write_all(fd, m, n) ? 3 : 0;
  }
  return iso_child(fd, &f->call);
}

int core_lua_fork_server(lua_State *L)
{
  struct fork_server *f;
  if(!lua_isnil(L, 1))
    luaL_checktype(L, 1, LUA_TFUNCTION);
  luaL_checktype(L, 2, LUA_TFUNCTION);
  f = lua_newuserdatauv(L, sizeof(*f), 0);
  memset(f, 0, sizeof(*f));
  f->owner = getpid();
  f->L = L;
  lua_pushvalue(L, 1);
  f->prepare_ref = luaL_ref(L, LUA_REGISTRYINDEX);  /* nil: LUA_REFNIL */
  if(f->prepare_ref == LUA_REFNIL)
    f->prepare_ref = LUA_NOREF;
  lua_pushvalue(L, 2);
  f->cell_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  luaL_setmetatable(L, FORK_SERVER_MT);
  f->base = lua_gettop(L);
  /* the server runs in a copy of this call, from here until it exits */
  f->s = isolate_server_start(fs_prepare, fs_idle, fs_child, f);
  return 1;
}

static struct fork_server *check_fs(lua_State *L)
{
  return luaL_checkudata(L, 1, FORK_SERVER_MT);
}

static int fs_run(lua_State *L)
{
  static const char *const keys[] = { "timeout", "tick", "tick_ms",
                                      "limits", "ask", NULL };
  struct fork_server *f = check_fs(L);
  struct iso_call c = { L, 0, 0, { 0 }, 2, 0 };
  struct isolate_hooks h;
  struct isolate_result r;
  size_t len;
  const char *req = luaL_checklstring(L, 2, &len);
  double timeout;

  if(!lua_isnoneornil(L, 3))
    strata_check_keys(L, 3, "fork_server:run", keys);
  timeout = strata_opt_num(L, 3, "fork_server:run", "timeout", 0);
  read_limits(L, 3, &c.lim);
  read_hooks(L, 3, "fork_server:run", &c, &h);
  if(isolate_server_alive(f->s) &&
     (isolate_server_run(f->s, req, len, timeout, &c.lim, &h, &r)
      != ISOLATE_SYSERR || errno != ESRCH))
    return push_result(L, &r, &c.lim);
  /* no server (any more): the same cell, forked from here */
  lua_rawgeti(L, LUA_REGISTRYINDEX, f->cell_ref);
  c.fn = lua_gettop(L);
  isolate_run(iso_child, &c, timeout, &c.lim, &h, &r);
  return push_result(L, &r, &c.lim);
}

static int fs_alive(lua_State *L)
{
  lua_pushboolean(L, isolate_server_alive(check_fs(L)->s));
  return 1;
}

/* server:pid() -> the server's process id, or nil (tests kill it) */
static int fs_pid(lua_State *L)
{
  struct fork_server *f = check_fs(L);
  if(!f->s)
    return 0;
  lua_pushinteger(L, isolate_server_pid(f->s));
  return 1;
}

static int fs_close(lua_State *L)
{
  struct fork_server *f = check_fs(L);
  /* only where it was started: a cell's copy of this object is no owner */
  if(f->s && f->owner == getpid())
    isolate_server_stop(f->s);
  f->s = NULL;
  return 0;
}

/*
 * server:send(req, opts) -> cell: the same cell as server:run, started
 * now, or, sent while another cell runs, queued at the server and started
 * the moment that one has exited (the server runs them in the order
 * sent; a cell's deadline counts from its start); cell:wait(opts) waits
 * for it and returns what server:run returns; cell:times() then says
 * when it started and ended (core.now's clock); cell:drop() kills it unread (or
 * takes it out of the queue).  Between the two this process does what it
 * likes (the runner journals the last cell), but opts.ask is answered
 * only inside wait: a cell's questions see what this process holds when
 * it waits.
 */
#define FS_CELL_MT "strata.core.fork_server_cell"

struct fs_cell {
  struct isolate_pending *p;   /* NULL: done, or the server was gone */
  int pending;                 /* not waited for yet */
  uint64_t started_ns;         /* once waited for: when it started */
  uint64_t exited_ns;          /* ... and when it was reaped */
};

static int fs_send(lua_State *L)
{
  static const char *const keys[] = { "timeout", "tick", "tick_ms",
                                      "limits", "ask", NULL };
  struct fork_server *f = check_fs(L);
  struct isolate_limits lim;
  size_t len;
  const char *req = luaL_checklstring(L, 2, &len);
  struct fs_cell *c;
  int ask = 0;

  if(!lua_isnoneornil(L, 3)) {
    strata_check_keys(L, 3, "fork_server:send", keys);
    ask = lua_getfield(L, 3, "ask") == LUA_TFUNCTION;
    lua_pop(L, 1);
  }
  read_limits(L, 3, &lim);
  c = lua_newuserdatauv(L, sizeof(*c), 2);
  c->p = NULL;
  c->pending = 1;
  c->started_ns = c->exited_ns = 0;
  luaL_setmetatable(L, FS_CELL_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);   /* the server */
  lua_pushvalue(L, 2);
  lua_setiuservalue(L, -2, 2);   /* the request (forked here if need be) */
  if(isolate_server_alive(f->s)) {
    c->p = isolate_server_send(f->s, req, len, &lim, ask);
    if(!c->p && errno != ESRCH)
      return luaL_error(L, "core.fork_server: %s", strerror(errno));
  }
  return 1;
}

static int fs_cell_wait(lua_State *L)
{
  static const char *const keys[] = { "timeout", "tick", "tick_ms",
                                      "limits", "ask", NULL };
  struct fs_cell *fc = luaL_checkudata(L, 1, FS_CELL_MT);
  struct iso_call c = { L, 0, 0, { 0 }, 0, 0 };
  struct isolate_hooks h;
  struct isolate_result r;
  struct isolate_pending *p;
  struct fork_server *f;
  double timeout;

  if(!fc->pending)
    return luaL_error(L, "fork_server cell: already waited for");
  fc->pending = 0;
  if(!lua_isnoneornil(L, 2))
    strata_check_keys(L, 2, "fork_server cell:wait", keys);
  timeout = strata_opt_num(L, 2, "fork_server cell:wait", "timeout", 0);
  read_limits(L, 2, &c.lim);
  read_hooks(L, 2, "fork_server cell:wait", &c, &h);
  lua_getiuservalue(L, 1, 1);
  f = luaL_checkudata(L, -1, FORK_SERVER_MT);
  p = fc->p;
  fc->p = NULL;
  if(p && !f->s) {
    isolate_pending_free(p);
    return luaL_error(L, "fork_server cell: its server was closed");
  }
  if(!p || (isolate_server_wait(p, timeout, &c.lim, &h, &r) ==
            ISOLATE_SYSERR && errno == ESRCH)) {
    /* the server was gone at send, or before the cell started: the same
     * cell, forked from here */
    lua_rawgeti(L, LUA_REGISTRYINDEX, f->cell_ref);
    c.fn = lua_gettop(L);
    lua_getiuservalue(L, 1, 2);
    c.arg = lua_gettop(L);
    isolate_run(iso_child, &c, timeout, &c.lim, &h, &r);
  }
  fc->started_ns = r.started_ns;
  fc->exited_ns = r.exited_ns;
  return push_result(L, &r, &c.lim);
}

/* cell:times() -> when it started and when it was reaped (core.now()'s
 * clock), once waited for: its duration is theirs, not when this process
 * came to wait; nil before, or when it never started */
static int fs_cell_times(lua_State *L)
{
  struct fs_cell *fc = luaL_checkudata(L, 1, FS_CELL_MT);
  if(!fc->started_ns)
    return 0;
  lua_pushnumber(L, (double)fc->started_ns / 1e9);
  if(fc->exited_ns)
    lua_pushnumber(L, (double)fc->exited_ns / 1e9);
  else
    lua_pushnil(L);
  return 2;
}

static int fs_cell_drop(lua_State *L)
{
  struct fs_cell *fc = luaL_checkudata(L, 1, FS_CELL_MT);
  struct fork_server *f;
  fc->pending = 0;
  if(!fc->p)
    return 0;
  lua_getiuservalue(L, 1, 1);
  f = lua_touserdata(L, -1);
  if(f && f->s)
    isolate_server_drop(fc->p);
  else
    isolate_pending_free(fc->p);   /* its server stopped (it went too) */
  fc->p = NULL;
  return 0;
}

static const luaL_Reg fs_cell_meta[] = {
  { "wait", fs_cell_wait },
  { "times", fs_cell_times },
  { "drop", fs_cell_drop },
  { "__gc", fs_cell_drop },
  { NULL, NULL }
};

static const luaL_Reg fork_server_meta[] = {
  { "run", fs_run },
  { "send", fs_send },
  { "alive", fs_alive },
  { "pid", fs_pid },
  { "close", fs_close },
  { "__gc", fs_close },
  { "__close", fs_close },
  { NULL, NULL }
};

/* The metatables of a server and of a cell sent to it (luaopen). */
void core_lua_isolate_open(lua_State *L)
{
  if(luaL_newmetatable(L, FORK_SERVER_MT)) {
    luaL_setfuncs(L, fork_server_meta, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
  if(luaL_newmetatable(L, FS_CELL_MT)) {
    luaL_setfuncs(L, fs_cell_meta, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}
