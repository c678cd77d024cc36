/*
 * malloc_trim(3) for JavaScript: gives the pages that glibc's allocator holds free back to the
 * system. Node.js allocates Buffers with malloc, and glibc keeps what they freed in its heaps:
 * after the history cache turns over, 12-17 MB of the service's resident memory are free pages
 * between live allocations, which only malloc_trim releases (see src/memory.ts).
 *
 * Written by hand: no package on npm offers the call. Elsewhere than on glibc the module builds,
 * `available` is false and trim() does nothing.
 */
#include <node_api.h>
#include <stdbool.h>

#if defined(__GLIBC__)
#include <malloc.h>
#define TRIM_AVAILABLE true
#else
#define TRIM_AVAILABLE false
#endif

static napi_value Trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) != 0;
#endif
  napi_value result;
  if (napi_get_boolean(env, released, &result) != napi_ok) return NULL;
  return result;
}

static napi_value Init(napi_env env, napi_value exports) {
  napi_value trim;
  napi_value available;
  if (napi_create_function(env, "trim", NAPI_AUTO_LENGTH, Trim, NULL, &trim) != napi_ok) return NULL;
  if (napi_get_boolean(env, TRIM_AVAILABLE, &available) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "trim", trim) != napi_ok) return NULL;
  if (napi_set_named_property(env, exports, "available", available) != napi_ok) return NULL;
  return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, Init)
