/* codecs/pb_nesting.h — how deeply protobuf wire bytes nest messages,
 * measured before protobuf-c unpacks them.
 *
 * protobuf-c unpacks a sub-message by calling itself, with no depth limit,
 * so bytes from the runner that nest a recursive message (Flink's TypeInfo,
 * Table Schema, Beam's Trigger, google.protobuf.Struct) thousands of levels
 * deep exhaust the stack before any check of ours runs.
 * fnw_pb_nesting_check walks the bytes without recursion, guided by the
 * message's protobuf-c descriptor, and refuses:
 *
 *  - more than FNW_PB_MAX_NESTING messages on one path (the outer one counts);
 *  - more than FNW_TYPE_MAX_DEPTH TypeInfo messages on one path (the limit
 *    fnw_typeinfo_to_type applies to the tree, counted the same way);
 *  - anything it cannot follow (a varint, tag, length or fixed field cut
 *    short or running past its message, field number 0, group or unknown
 *    wire types): it never lets through bytes it has not measured.
 *
 * Only fields the descriptor declares as messages (singular, repeated,
 * oneof members, map entries) are entered; strings, bytes, packed scalars
 * and unknown fields are stepped over, as protobuf-c keeps them unparsed.
 * Bytes that pass may still fail to unpack (e.g. a wire type that does not
 * match the field); that is left to protobuf-c, which then fails cleanly.
 */
#ifndef FNW_PB_NESTING_H
#define FNW_PB_NESTING_H

#include <stddef.h>
#include <stdint.h>

#include <protobuf-c/protobuf-c.h>

#include "codecs/error.h"

/* A TypeInfo level takes up to three messages (TypeInfo, RowTypeInfo,
 * Field), so 64 levels take 192, plus a few envelopes; 256 leaves room and
 * keeps protobuf-c's recursion a few hundred frames deep. */
#define FNW_PB_MAX_NESTING 256

/* 0 if data[0..len) stays within the limits above; else -1 with a message
 * naming the limit (or what is malformed), the byte offset and desc's
 * message name. data may be NULL when len is 0. */
int fnw_pb_nesting_check(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len,
                         fnw_error *err);

/* Steps over the field at *p (before end) without entering it: sets its
 * number and wire type, body and body_len to what follows the tag (a
 * length-delimited field's payload, a fixed field's bytes; empty for a
 * varint), and moves *p past the field. -1 when the field is cut short or
 * its wire type is a group or unknown. */
int fnw_pb_nesting_step_field(const uint8_t **p, const uint8_t *end, uint32_t *num, int *wt,
                              const uint8_t **body, size_t *body_len);

/* For bytes the check refused: copies the first length-delimited field num
 * among data's own top-level fields (e.g. an InstructionRequest's
 * instruction_id) into out as a string. 1 when found and shorter than cap
 * with no NUL, else 0 (also when the fields before it are malformed). */
int fnw_pb_nesting_find_top_string(const uint8_t *data, size_t len, uint32_t num, char *out, size_t cap);

#endif
