// JavaScriptCore through its C API, behind a few calls that move JSON text in and out: the
// system framework on Apple platforms, WebKitGTK's libjavascriptcoregtk on Linux, loaded
// when the first engine is made (a build needs no JavaScript library, and a process that
// runs no JavaScript never loads one).
#ifndef CSETTEE_JAVASCRIPTCORE_H
#define CSETTEE_JAVASCRIPTCORE_H

#include <stddef.h>
#include <stdint.h>

/// One JavaScript global context in a context group of its own: nothing is shared with
/// another engine. Not for concurrent use: callers take turns.
typedef struct settee_js_engine settee_js_engine;

/// Why a call was stopped (`*timedOut`): past its time limit (wall time), or past its
/// memory limit (the process grew by more than it during the call).
#define SETTEE_JS_STOPPED_TIME 1
#define SETTEE_JS_STOPPED_MEMORY 2

/// Loads JavaScriptCore (once per process) and makes an engine whose every call stops
/// after `timeLimit` seconds of wall time, or once the process has grown since the call
/// began by more than `memoryLimit` bytes and 16 for each byte the call was given (0: no
/// memory limit); both are checked every 10 ms of the call's CPU time. Returns NULL and writes why into `error` on failure (the
/// library missing, by name).
settee_js_engine *_Nullable settee_js_create(double timeLimit, size_t memoryLimit,
                                              char *_Nonnull error, int32_t errorCapacity);

/// Frees an engine and everything it made.
void settee_js_destroy(settee_js_engine *_Nonnull engine);

/// Runs `source` (UTF-8, `length` bytes) as a script in the engine's global scope. Returns
/// 1, or 0 with the exception as text in `*error` (free it with `free`); `*timedOut` is
/// set to why a limit stopped it (`SETTEE_JS_STOPPED_…`), 0 otherwise.
int settee_js_evaluate(settee_js_engine *_Nonnull engine, const char *_Nonnull source,
                       size_t length, char *_Nullable *_Nonnull error, int *_Nonnull timedOut);

/// Calls the global function `name` with one argument, given as JSON text (`length`
/// bytes), and returns its result printed as JSON (free it with `free`; its length in
/// `*resultLength`; the text `undefined` for a result JSON cannot print); with
/// `textResult`, a string result is returned as its own text (JSON the function printed
/// itself). On an exception
/// returns NULL with the exception as text in `*error` (free it with `free`); `*timedOut`
/// is set to why a limit stopped it (`SETTEE_JS_STOPPED_…`), 0 otherwise.
char *_Nullable settee_js_call(settee_js_engine *_Nonnull engine, const char *_Nonnull name,
                               const char *_Nonnull argument, size_t length, int textResult,
                               size_t *_Nonnull resultLength, char *_Nullable *_Nonnull error,
                               int *_Nonnull timedOut);

#endif
