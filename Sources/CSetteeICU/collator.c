#include "CSetteeICU.h"

#include <stdio.h>
#include <string.h>
#include <unicode/ucol.h>
#include <unicode/uversion.h>

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
