#include "CSetteeICU.h"

#include <stdio.h>
#include <string.h>

#if defined(__APPLE__)
// Apple platforms ship ICU as libicucore without its headers; its C API is ICU's, with
// unversioned names. These are the few declarations Settee uses, as ICU declares them.
typedef struct UCollator UCollator;
typedef uint16_t UChar;
typedef int UErrorCode;
typedef uint8_t UVersionInfo[4];
#define U_ZERO_ERROR 0
#define U_SUCCESS(x) ((x) <= U_ZERO_ERROR)
#define U_FAILURE(x) ((x) > U_ZERO_ERROR)
#define UCOL_NORMALIZATION_MODE 4
#define UCOL_ON 17
UCollator *ucol_open(const char *locale, UErrorCode *status);
void ucol_close(UCollator *collator);
void ucol_setAttribute(UCollator *collator, int attribute, int value, UErrorCode *status);
int32_t ucol_getSortKey(const UCollator *collator, const UChar *source, int32_t sourceLength,
                        uint8_t *result, int32_t resultLength);
void ucol_getVersion(const UCollator *collator, UVersionInfo info);
const char *u_errorName(UErrorCode code);
#else
// Elsewhere (Debian and Ubuntu: libicu-dev), ICU's headers, which rename every function by
// version (ucol_open_72). The library is loaded when the first collator is opened, not
// linked: loading ICU costs every process about 2 ms (measured: a C program that does
// nothing but link libicui18n and libicuuc starts in 3.0 ms instead of 1.0), which a
// `settee find` paid without ever collating a string. It is the version the headers name
// (libicui18n.so.72 for ICU 72), as the linker would have recorded.
#include <dlfcn.h>
#include <pthread.h>
#include <unicode/ucol.h>
#include <unicode/uversion.h>
#endif

// The ICU functions Settee calls: linked on Apple platforms, loaded on first use elsewhere.
static struct {
  __typeof__(&ucol_open) open;
  __typeof__(&ucol_close) close;
  __typeof__(&ucol_setAttribute) setAttribute;
  __typeof__(&ucol_getSortKey) getSortKey;
  __typeof__(&ucol_getVersion) getVersion;
  __typeof__(&u_errorName) errorName;
  char failure[256];
} settee_icu
#if defined(__APPLE__)
    = {ucol_open, ucol_close, ucol_setAttribute, ucol_getSortKey, ucol_getVersion, u_errorName,
       ""}
#endif
;

#if defined(__APPLE__)
static int settee_icu_load_once(char *error, int32_t errorCapacity) {
  (void)error;
  (void)errorCapacity;
  return 1;
}
#else
#define SETTEE_TEXT(x) #x
#define SETTEE_EXPANDED_TEXT(x) SETTEE_TEXT(x)
static pthread_once_t settee_icu_once = PTHREAD_ONCE_INIT;

// Resolves `name` by the name ICU's headers give it (ucol_open_72 for ucol_open).
#define SETTEE_ICU_RESOLVE(handle, field, name)                                         \
  if ((settee_icu.field = (__typeof__(settee_icu.field))dlsym(                          \
           handle, SETTEE_EXPANDED_TEXT(name))) == NULL) {                               \
    snprintf(settee_icu.failure, sizeof settee_icu.failure, "%s has no %s",              \
             library, SETTEE_EXPANDED_TEXT(name));                                       \
    return;                                                                              \
  }

static void settee_icu_load(void) {
  const char *library = "libicui18n.so." SETTEE_EXPANDED_TEXT(U_ICU_VERSION_MAJOR_NUM);
  // libicui18n needs libicuuc (u_errorName's home): dlsym on its handle searches both.
  void *handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
  if (handle == NULL) {
    const char *reason = dlerror();
    snprintf(settee_icu.failure, sizeof settee_icu.failure, "%s",
             reason != NULL ? reason : library);
    return;
  }
  SETTEE_ICU_RESOLVE(handle, open, ucol_open)
  SETTEE_ICU_RESOLVE(handle, close, ucol_close)
  SETTEE_ICU_RESOLVE(handle, setAttribute, ucol_setAttribute)
  SETTEE_ICU_RESOLVE(handle, getSortKey, ucol_getSortKey)
  SETTEE_ICU_RESOLVE(handle, getVersion, ucol_getVersion)
  SETTEE_ICU_RESOLVE(handle, errorName, u_errorName)
}

// Loads ICU once per process; on failure writes why into `error` and yields 0.
static int settee_icu_load_once(char *error, int32_t errorCapacity) {
  pthread_once(&settee_icu_once, settee_icu_load);
  if (settee_icu.failure[0] != 0) {
    snprintf(error, (size_t)errorCapacity, "%s", settee_icu.failure);
    return 0;
  }
  return 1;
}
#endif

void *settee_collator_open(char *error, int32_t errorCapacity) {
  if (!settee_icu_load_once(error, errorCapacity)) return NULL;
  UErrorCode status = U_ZERO_ERROR;
  UCollator *collator = settee_icu.open("", &status);
  if (U_SUCCESS(status)) {
    settee_icu.setAttribute(collator, UCOL_NORMALIZATION_MODE, UCOL_ON, &status);
  }
  if (U_FAILURE(status)) {
    snprintf(error, (size_t)errorCapacity, "%s", settee_icu.errorName(status));
    if (collator != NULL) settee_icu.close(collator);
    return NULL;
  }
  return collator;
}

int32_t settee_collator_sort_key(const void *collator, const uint16_t *text, int32_t length,
                                 uint8_t *output, int32_t capacity) {
  static const UChar empty[1] = {0};
  return settee_icu.getSortKey((const UCollator *)collator,
                               text != NULL ? (const UChar *)text : empty, length, output,
                               capacity);
}

void settee_collator_version(const void *collator, char *output, int32_t capacity) {
  UVersionInfo version;
  settee_icu.getVersion((const UCollator *)collator, version);
  snprintf(output, (size_t)capacity, "%u.%u.%u.%u", version[0], version[1], version[2],
           version[3]);
}
