#include "CSetteeJavaScriptCore.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__APPLE__)
#include <mach/mach.h>
#endif

#if defined(__APPLE__)
// The system framework, linked. The execution time limit is declared in its private
// header (JSContextRefPrivate.h) and exported by every JavaScriptCore since 2013.
#include <JavaScriptCore/JavaScriptCore.h>
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);
void JSContextGroupSetExecutionTimeLimit(JSContextGroupRef group, double limit,
                                         JSShouldTerminateCallback callback, void *context);
#else
// WebKitGTK's library, loaded with dlopen: a build needs neither it nor its headers
// (Debian/Ubuntu: libjavascriptcoregtk-4.1-0). These are the C API's declarations as
// JavaScriptCore's public headers (JSBase.h, JSContextRef.h, JSObjectRef.h,
// JSStringRef.h, JSValueRef.h) and JSContextRefPrivate.h give them.
#include <dlfcn.h>
#include <pthread.h>
typedef const struct OpaqueJSContextGroup *JSContextGroupRef;
typedef const struct OpaqueJSContext *JSContextRef;
typedef struct OpaqueJSContext *JSGlobalContextRef;
typedef struct OpaqueJSString *JSStringRef;
typedef struct OpaqueJSClass *JSClassRef;
typedef const struct OpaqueJSValue *JSValueRef;
typedef struct OpaqueJSValue *JSObjectRef;
typedef bool (*JSShouldTerminateCallback)(JSContextRef ctx, void *context);
#endif

// The calls Settee makes: linked on Apple platforms, loaded on first use elsewhere.
static struct {
  JSContextGroupRef (*groupCreate)(void);
  void (*groupRelease)(JSContextGroupRef);
  void (*setTimeLimit)(JSContextGroupRef, double, JSShouldTerminateCallback, void *);
  JSGlobalContextRef (*contextCreate)(JSContextGroupRef, JSClassRef);
  void (*contextRelease)(JSGlobalContextRef);
  JSObjectRef (*globalObject)(JSContextRef);
  JSValueRef (*evaluate)(JSContextRef, JSStringRef, JSObjectRef, JSStringRef, int, JSValueRef *);
  JSStringRef (*stringCreate)(const char *);
  void (*stringRelease)(JSStringRef);
  size_t (*stringMaximumSize)(JSStringRef);
  size_t (*stringGetUTF8)(JSStringRef, char *, size_t);
  JSValueRef (*fromJSON)(JSContextRef, JSStringRef);
  JSStringRef (*toJSON)(JSContextRef, JSValueRef, unsigned, JSValueRef *);
  JSStringRef (*toStringCopy)(JSContextRef, JSValueRef, JSValueRef *);
  JSValueRef (*getProperty)(JSContextRef, JSObjectRef, JSStringRef, JSValueRef *);
  JSObjectRef (*toObject)(JSContextRef, JSValueRef, JSValueRef *);
  bool (*isObject)(JSContextRef, JSValueRef);
  bool (*isString)(JSContextRef, JSValueRef);
  JSValueRef (*call)(JSContextRef, JSObjectRef, JSObjectRef, size_t, const JSValueRef[],
                     JSValueRef *);
  // bmalloc's `bmalloc::api::scavenge()`, where the library exports it (WebKitGTK does):
  // gives freed memory back to the system at once rather than on its scavenger's schedule.
  void (*scavenge)(void);
  char failure[512];
} settee_jsc
#if defined(__APPLE__)
    = {JSContextGroupCreate, JSContextGroupRelease, JSContextGroupSetExecutionTimeLimit,
       JSGlobalContextCreateInGroup, JSGlobalContextRelease, JSContextGetGlobalObject,
       JSEvaluateScript, JSStringCreateWithUTF8CString, JSStringRelease,
       JSStringGetMaximumUTF8CStringSize, JSStringGetUTF8CString, JSValueMakeFromJSONString,
       JSValueCreateJSONString, JSValueToStringCopy, JSObjectGetProperty, JSValueToObject,
       JSValueIsObject, JSValueIsString, JSObjectCallAsFunction, NULL, ""}
#endif
;

#if defined(__APPLE__)
static int settee_jsc_load_once(char *error, int32_t errorCapacity) {
  (void)error;
  (void)errorCapacity;
  return 1;
}
#else
static pthread_once_t settee_jsc_once = PTHREAD_ONCE_INIT;

#define SETTEE_JSC_RESOLVE(field, name)                                                    \
  if ((*(void **)&settee_jsc.field = dlsym(handle, #name)) == NULL) {                      \
    snprintf(settee_jsc.failure, sizeof settee_jsc.failure, "%s has no %s", library,       \
             #name);                                                                       \
    return;                                                                                \
  }

static void settee_jsc_load(void) {
  // WebKitGTK's API versions, newest first: 4.1 (Debian 12, Ubuntu 22.04 and later), 6.0
  // (GTK 4), 4.0 (older distributions). Their C API is the same.
  static const char *const libraries[] = {"libjavascriptcoregtk-4.1.so.0",
                                          "libjavascriptcoregtk-6.0.so.1",
                                          "libjavascriptcoregtk-4.0.so.18"};
  void *handle = NULL;
  const char *library = libraries[0];
  for (size_t index = 0; index < sizeof libraries / sizeof libraries[0]; index++) {
    handle = dlopen(libraries[index], RTLD_NOW | RTLD_LOCAL);
    if (handle != NULL) {
      library = libraries[index];
      break;
    }
  }
  if (handle == NULL) {
    snprintf(settee_jsc.failure, sizeof settee_jsc.failure,
             "JavaScript needs JavaScriptCore, and no %s (or 6.0, 4.0) could be loaded: "
             "install it (Debian and Ubuntu: apt-get install libjavascriptcoregtk-4.1-0)",
             libraries[0]);
    return;
  }
  SETTEE_JSC_RESOLVE(groupCreate, JSContextGroupCreate)
  SETTEE_JSC_RESOLVE(groupRelease, JSContextGroupRelease)
  SETTEE_JSC_RESOLVE(setTimeLimit, JSContextGroupSetExecutionTimeLimit)
  SETTEE_JSC_RESOLVE(contextCreate, JSGlobalContextCreateInGroup)
  SETTEE_JSC_RESOLVE(contextRelease, JSGlobalContextRelease)
  SETTEE_JSC_RESOLVE(globalObject, JSContextGetGlobalObject)
  SETTEE_JSC_RESOLVE(evaluate, JSEvaluateScript)
  SETTEE_JSC_RESOLVE(stringCreate, JSStringCreateWithUTF8CString)
  SETTEE_JSC_RESOLVE(stringRelease, JSStringRelease)
  SETTEE_JSC_RESOLVE(stringMaximumSize, JSStringGetMaximumUTF8CStringSize)
  SETTEE_JSC_RESOLVE(stringGetUTF8, JSStringGetUTF8CString)
  SETTEE_JSC_RESOLVE(fromJSON, JSValueMakeFromJSONString)
  SETTEE_JSC_RESOLVE(toJSON, JSValueCreateJSONString)
  SETTEE_JSC_RESOLVE(toStringCopy, JSValueToStringCopy)
  SETTEE_JSC_RESOLVE(getProperty, JSObjectGetProperty)
  SETTEE_JSC_RESOLVE(toObject, JSValueToObject)
  SETTEE_JSC_RESOLVE(isObject, JSValueIsObject)
  SETTEE_JSC_RESOLVE(isString, JSValueIsString)
  SETTEE_JSC_RESOLVE(call, JSObjectCallAsFunction)
  *(void **)&settee_jsc.scavenge = dlsym(handle, "_ZN7bmalloc3api8scavengeEv");
}

static int settee_jsc_load_once(char *error, int32_t errorCapacity) {
  pthread_once(&settee_jsc_once, settee_jsc_load);
  if (settee_jsc.failure[0] != 0) {
    snprintf(error, (size_t)errorCapacity, "%s", settee_jsc.failure);
    return 0;
  }
  return 1;
}
#endif

struct settee_js_engine {
  JSContextGroupRef group;
  JSGlobalContextRef context;
  // How long a call may run, in seconds of wall time, and when the running one must end.
  double timeLimit;
  double deadline;
  // How many bytes the process may grow by during a call (0: unbounded) before what the
  // call was given is counted, the bound of the running call, and the process's resident
  // size when it began.
  size_t memoryLimit;
  long long callLimit;
  long long residentAtStart;
  // Set by the watchdog's callback: why the call it stopped was stopped.
  int stopped;
  // Why the engine was spent (its context released), for the calls made after.
  int spentBy;
};

// How often JavaScriptCore's watchdog asks whether to stop a call, in seconds of the
// calling thread's CPU time (its timer counts CPU time, not wall time): the bounds below
// are checked that often, so a function that allocates as fast as it can overshoots the
// memory bound by what it allocates in 10 ms.
static const double settee_js_quantum = 0.01;

static double settee_js_now(void) {
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

// The process's resident size in bytes, or -1 where it cannot be read.
static long long settee_js_resident(void) {
#if defined(__linux__)
  int descriptor = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (descriptor < 0) return -1;
  char text[128];
  ssize_t count = read(descriptor, text, sizeof text - 1);
  close(descriptor);
  if (count <= 0) return -1;
  text[count] = 0;
  long long size = 0, resident = 0;
  if (sscanf(text, "%lld %lld", &size, &resident) != 2) return -1;
  return resident * (long long)sysconf(_SC_PAGESIZE);
#elif defined(__APPLE__)
  struct mach_task_basic_info info;
  mach_msg_type_number_t count = MACH_TASK_BASIC_INFO_COUNT;
  if (task_info(mach_task_self(), MACH_TASK_BASIC_INFO, (task_info_t)&info, &count)
      != KERN_SUCCESS)
    return -1;
  return (long long)info.resident_size;
#else
  return -1;
#endif
}

static bool settee_js_should_terminate(JSContextRef context, void *opaque) {
  (void)context;
  settee_js_engine *engine = opaque;
  if (settee_js_now() >= engine->deadline) {
    engine->stopped = SETTEE_JS_STOPPED_TIME;
    return true;
  }
  if (engine->memoryLimit > 0 && engine->residentAtStart >= 0) {
    long long resident = settee_js_resident();
    if (resident >= 0 && resident - engine->residentAtStart > engine->callLimit) {
      engine->stopped = SETTEE_JS_STOPPED_MEMORY;
      return true;
    }
  }
  // WebKitGTK's watchdog asks once per time limit it is given: set again, it asks again.
  settee_jsc.setTimeLimit(engine->group, settee_js_quantum, settee_js_should_terminate, engine);
  return false;
}

// Starts the bounds of a call given `length` bytes of JSON (or source): the memory bound
// grows by 16 bytes for each, what parsing a document, mapping it and printing its rows
// takes (an 8 MB document emitted whole took 100 MB).
static void settee_js_begin(settee_js_engine *engine, size_t length) {
  engine->stopped = 0;
  engine->deadline = settee_js_now() + engine->timeLimit;
  engine->callLimit = (long long)engine->memoryLimit + 16 * (long long)length;
  engine->residentAtStart = engine->memoryLimit > 0 ? settee_js_resident() : -1;
}

settee_js_engine *settee_js_create(double timeLimit, size_t memoryLimit, char *error,
                                   int32_t errorCapacity) {
  if (!settee_jsc_load_once(error, errorCapacity)) return NULL;
  settee_js_engine *engine = calloc(1, sizeof *engine);
  if (engine == NULL) {
    snprintf(error, (size_t)errorCapacity, "out of memory");
    return NULL;
  }
  engine->timeLimit = timeLimit;
  engine->memoryLimit = memoryLimit;
  engine->group = settee_jsc.groupCreate();
  engine->context = settee_jsc.contextCreate(engine->group, NULL);
  if (engine->context == NULL) {
    settee_jsc.groupRelease(engine->group);
    free(engine);
    snprintf(error, (size_t)errorCapacity, "JavaScriptCore made no context");
    return NULL;
  }
  settee_jsc.setTimeLimit(engine->group, timeLimit < settee_js_quantum ? timeLimit
                                                                         : settee_js_quantum,
                          settee_js_should_terminate, engine);
  return engine;
}

// Releases the engine's context group, and with it its heap: after a call stopped at the
// memory limit, what it allocated may be reachable from the global scope. The engine
// answers every later call with the same stop.
static void settee_js_spend(settee_js_engine *engine) {
  if (engine->context == NULL) return;
  settee_jsc.contextRelease(engine->context);
  settee_jsc.groupRelease(engine->group);
  engine->context = NULL;
  engine->group = NULL;
}

// Spends the engine after a call stopped at a limit, as CouchDB kills a `couchjs` that ran
// past its time, and gives what it held back to the system (without it, four calls stopped
// at the memory limit in a row took the server to 557 MB, the memory given back seconds
// later; each on its own, to 164 MB). A call stopped at its time limit is spent too: on a
// loaded machine an allocating function reaches its wall-time deadline before the memory
// bound, and three such engines each kept what they had grown (the server at 301 MB).
static void settee_js_spend_stopped(settee_js_engine *engine, int reason) {
  settee_js_spend(engine);
  engine->spentBy = reason;
  if (settee_jsc.scavenge != NULL) settee_jsc.scavenge();
}

void settee_js_destroy(settee_js_engine *engine) {
  settee_js_spend(engine);
  free(engine);
}

// Whether the engine was spent; if so, sets the call's error and stop.
static int settee_js_refuse_spent(settee_js_engine *engine, char **error, int *timedOut) {
  if (engine->context != NULL) return 0;
  *error = strdup("the engine was stopped at a limit");
  *timedOut = engine->spentBy != 0 ? engine->spentBy : SETTEE_JS_STOPPED_MEMORY;
  return 1;
}

// A JavaScript string's UTF-8, malloc'ed, with its length.
static char *settee_js_utf8(JSStringRef string, size_t *length) {
  size_t capacity = settee_jsc.stringMaximumSize(string);
  char *buffer = malloc(capacity > 0 ? capacity : 1);
  if (buffer == NULL) return NULL;
  size_t written = settee_jsc.stringGetUTF8(string, buffer, capacity);
  // The count includes the final NUL.
  *length = written > 0 ? written - 1 : 0;
  if (written == 0) buffer[0] = 0;
  return buffer;
}

// A NUL-terminated copy of `length` bytes, as JSStringCreateWithUTF8CString takes them.
static JSStringRef settee_js_string(const char *bytes, size_t length) {
  char *copy = malloc(length + 1);
  if (copy == NULL) return NULL;
  memcpy(copy, bytes, length);
  copy[length] = 0;
  JSStringRef string = settee_jsc.stringCreate(copy);
  free(copy);
  return string;
}

static void settee_js_describe(settee_js_engine *engine, JSValueRef exception, char **error,
                               int *timedOut) {
  *timedOut = engine->stopped;
  JSStringRef text = settee_jsc.toStringCopy(engine->context, exception, NULL);
  if (text == NULL) {
    *error = strdup("an exception that has no text");
  } else {
    size_t length = 0;
    *error = settee_js_utf8(text, &length);
    settee_jsc.stringRelease(text);
  }
  if (engine->stopped != 0) settee_js_spend_stopped(engine, engine->stopped);
  engine->stopped = 0;
}

int settee_js_evaluate(settee_js_engine *engine, const char *source, size_t length,
                       char **error, int *timedOut) {
  *error = NULL;
  *timedOut = 0;
  if (settee_js_refuse_spent(engine, error, timedOut)) return 0;
  settee_js_begin(engine, length);
  JSStringRef script = settee_js_string(source, length);
  if (script == NULL) {
    *error = strdup("out of memory");
    return 0;
  }
  JSValueRef exception = NULL;
  settee_jsc.evaluate(engine->context, script, NULL, NULL, 1, &exception);
  settee_jsc.stringRelease(script);
  if (exception != NULL) {
    settee_js_describe(engine, exception, error, timedOut);
    return 0;
  }
  return 1;
}

char *settee_js_call(settee_js_engine *engine, const char *name, const char *argument,
                     size_t length, int textResult, size_t *resultLength, char **error,
                     int *timedOut) {
  *error = NULL;
  *timedOut = 0;
  *resultLength = 0;
  if (settee_js_refuse_spent(engine, error, timedOut)) return NULL;
  settee_js_begin(engine, length);
  JSContextRef context = engine->context;
  JSStringRef functionName = settee_jsc.stringCreate(name);
  JSValueRef exception = NULL;
  JSValueRef function =
      settee_jsc.getProperty(context, settee_jsc.globalObject(context), functionName, &exception);
  settee_jsc.stringRelease(functionName);
  if (exception != NULL || function == NULL || !settee_jsc.isObject(context, function)) {
    *error = strdup("no such function");
    return NULL;
  }
  JSStringRef text = settee_js_string(argument, length);
  if (text == NULL) {
    *error = strdup("out of memory");
    return NULL;
  }
  JSValueRef value = settee_jsc.fromJSON(context, text);
  settee_jsc.stringRelease(text);
  if (value == NULL) {
    *error = strdup("the argument is not JSON");
    return NULL;
  }
  JSValueRef result = settee_jsc.call(
      context, settee_jsc.toObject(context, function, NULL), NULL, 1, &value, &exception);
  if (exception != NULL) {
    settee_js_describe(engine, exception, error, timedOut);
    return NULL;
  }
  if (textResult && settee_jsc.isString(context, result)) {
    // A string the function printed itself: its text as it is.
    JSStringRef text = settee_jsc.toStringCopy(context, result, &exception);
    if (exception != NULL || text == NULL) {
      *error = strdup("the function's text could not be read");
      return NULL;
    }
    char *bytes = settee_js_utf8(text, resultLength);
    settee_jsc.stringRelease(text);
    return bytes;
  }
  JSStringRef printed = settee_jsc.toJSON(context, result, 0, &exception);
  if (exception != NULL) {
    settee_js_describe(engine, exception, error, timedOut);
    return NULL;
  }
  if (printed == NULL) {
    *resultLength = 9;
    return strdup("undefined");
  }
  char *bytes = settee_js_utf8(printed, resultLength);
  settee_jsc.stringRelease(printed);
  return bytes;
}
