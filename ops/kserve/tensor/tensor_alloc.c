/* ops/kserve/tensor/tensor_alloc.c — a protobuf-c allocator over an fnw_arena, so
 * decoding a ModelInfer response (its outputs, shapes, contents) takes its
 * memory from the batch's arena instead of one malloc per submessage, is
 * released with the arena at once, and stops at the arena's byte limit when
 * a response claims more than the limit allows. */
#include "ops/kserve/tensor/tensor.h"

static void *arena_alloc(void *data, size_t size)
{
    return fnw_arena_alloc(data, size ? size : 1);
}

static void arena_free(void *data, void *p)
{
    (void)data;
    (void)p; /* released with the arena */
}

void fnw_tensor_alloc_init(ProtobufCAllocator *al, fnw_arena *a)
{
    al->alloc = arena_alloc;
    al->free = arena_free;
    al->allocator_data = a;
}
