/* JSON documents written to output files (jansson), the way every halomd output file is made:
 * an existing file is backed up first (io/backup.h), never overwritten. */
#ifndef HMD_IO_JSON_FILE_H
#define HMD_IO_JSON_FILE_H

#include <jansson.h>
#include <stddef.h>

/* Writes `root` (json_dumpf with `flags`) and a newline to a new file at `path`, backing up a
 * file already there; `note` (capacity note_len) receives the backup note for the log. `root`
 * stays the caller's. Returns HMD_OK, or HMD_ECANTCREAT / HMD_EIO naming the file. */
int hmd_json_write_file(const char *path, const json_t *root, size_t flags, char *note,
                        size_t note_len);

#endif /* HMD_IO_JSON_FILE_H */
