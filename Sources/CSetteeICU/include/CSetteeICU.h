// The few ICU collation calls Settee's view keys need, behind plain C names: ICU's own
// headers rename every function by version (ucol_open_72), which Swift cannot call by
// its documented name.
#ifndef CSETTEE_ICU_H
#define CSETTEE_ICU_H

#include <stdint.h>

/// Opens ICU's root collator (the Unicode Collation Algorithm's default order, CouchDB's),
/// tertiary strength, with normalization on so that canonically equivalent strings
/// collate equally. Returns NULL and writes ICU's error name into `error` on failure.
void *_Nullable settee_collator_open(char *_Nonnull error, int32_t errorCapacity);

/// Writes the sort key of a UTF-16 string (ended by a 0x00 byte, no other 0x00 inside)
/// into `output` and returns its length; a length above `capacity` means "call again
/// with that much room".
int32_t settee_collator_sort_key(const void *_Nonnull collator, const uint16_t *_Nullable text,
                                 int32_t length, uint8_t *_Nullable output, int32_t capacity);

/// The collator's version (its rules and Unicode data), as "a.b.c.d": keys made under
/// another version may sort differently, so stored keys are rebuilt when it changes.
void settee_collator_version(const void *_Nonnull collator, char *_Nonnull output,
                             int32_t capacity);

#endif
