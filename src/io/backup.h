/* Output files that never replace an existing file.
 *
 * Before an output file is created, a file already at that path is renamed GROMACS style to
 * `#<name>.<n>#` in the same folder, with the smallest free n >= 1 (`md.log` becomes
 * `#md.log.1#`, then `#md.log.2#` on the next run), so a rerun in the same folder loses nothing.
 */
#ifndef HMD_IO_BACKUP_H
#define HMD_IO_BACKUP_H

#include <stddef.h>
#include <stdio.h>

/* Most backups kept of one file name, as in GROMACS; beyond it the user must clean up. */
#define HMD_OUTPUT_MAX_BACKUPS 99

/* Moves an existing regular file (or symbolic link) at `path` aside to `#<name>.<n>#` without
 * ever replacing another file, and writes a one-line note for the log into `note` (capacity
 * `note_len` bytes, may be NULL when note_len is 0): "Backed up md.log to #md.log.1#", or ""
 * when there was nothing to back up (no file, or a device or pipe such as /dev/null, which is
 * written into rather than replaced).
 * Returns HMD_OK, or HMD_ECANTCREAT naming the file and the OS reason (no permission, a
 * directory at `path`, all HMD_OUTPUT_MAX_BACKUPS names taken). */
int hmd_output_backup(const char *path, char *note, size_t note_len);

/* Backs up `path` as hmd_output_backup() does, then creates it for writing. On success *fp is
 * the new stream, owned by the caller (fclose it). The file is created exclusively, so a file
 * that appears between backup and creation is reported rather than overwritten.
 * Returns HMD_OK, or HMD_ECANTCREAT naming the file and the OS reason (*fp is then NULL). */
int hmd_output_open(const char *path, FILE **fp, char *note, size_t note_len);

/* hmd_output_open for commands without a log (halomd eval): the backup note, when there is
 * one, goes to stderr. Same results. */
int hmd_output_create(const char *path, FILE **fp);

#endif /* HMD_IO_BACKUP_H */
