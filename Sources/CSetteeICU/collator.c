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
// version (ucol_open_72).
#include <unicode/ucol.h>
#include <unicode/uversion.h>
#endif

void *settee_collator_open(char *error, int32_t errorCapacity) {
  UErrorCode status = U_ZERO_ERROR;
  UCollator *collator = ucol_open("", &status);
  if (U_SUCCESS(status)) {
    ucol_setAttribute(collator, UCOL_NORMALIZATION_MODE, UCOL_ON, &status);
  }
  if (U_FAILURE(status)) {
    snprintf(error, (size_t)errorCapacity, "%s", u_errorName(status));
    if (collator != NULL) ucol_close(collator);
    return NULL;
  }
  return collator;
}

int32_t settee_collator_sort_key(const void *collator, const uint16_t *text, int32_t length,
                                 uint8_t *output, int32_t capacity) {
  static const UChar empty[1] = {0};
  return ucol_getSortKey((const UCollator *)collator, text != NULL ? (const UChar *)text : empty,
                         length, output, capacity);
}

void settee_collator_version(const void *collator, char *output, int32_t capacity) {
  UVersionInfo version;
  ucol_getVersion((const UCollator *)collator, version);
  snprintf(output, (size_t)capacity, "%u.%u.%u.%u", version[0], version[1], version[2],
           version[3]);
}
