#include "core/arena.h"

#include <stdlib.h>
#include <string.h>

struct hmd_arena_block {
    struct hmd_arena_block *next;
    void *data;
};

void *hmd_arena_alloc(struct hmd_arena *arena, size_t bytes)
{
    /* One block per allocation keeps this simple; allocations happen at load time only. */
    struct hmd_arena_block *blk = malloc(sizeof *blk);
    if (!blk) {
        return NULL;
    }
    size_t rounded = (bytes + 63) / 64 * 64;
    blk->data = aligned_alloc(64, rounded ? rounded : 64);
    if (!blk->data) {
        free(blk);
        return NULL;
    }
    memset(blk->data, 0, rounded ? rounded : 64);
    blk->next = arena->head;
    arena->head = blk;
    arena->bytes += bytes;
    return blk->data;
}

void hmd_arena_free(struct hmd_arena *arena)
{
    struct hmd_arena_block *blk = arena->head;
    while (blk) {
        struct hmd_arena_block *next = blk->next;
        free(blk->data);
        free(blk);
        blk = next;
    }
    arena->head = NULL;
    arena->bytes = 0;
}
