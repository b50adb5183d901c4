/* Arena allocator: many allocations freed together (model weights and tables). */
#ifndef HMD_CORE_ARENA_H
#define HMD_CORE_ARENA_H

#include <stddef.h>

struct hmd_arena_block;

struct hmd_arena {
    struct hmd_arena_block *head; /* newest block first; owned */
    size_t bytes;                 /* total bytes handed out */
};

/* Returns `bytes` of zeroed memory aligned to 64 bytes, owned by the arena, or NULL when out of
 * memory. An arena starts zeroed ({0}). */
void *hmd_arena_alloc(struct hmd_arena *arena, size_t bytes);

/* Frees everything the arena handed out and zeroes it. */
void hmd_arena_free(struct hmd_arena *arena);

#endif /* HMD_CORE_ARENA_H */
