#include "io/backup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

/* Renames `from` to `to` unless `to` exists, failing then with errno EEXIST. A hard link fails
 * atomically on an existing name, which rename() would silently replace; on file systems
 * without hard links, fall back to a check then rename, where only a process creating the same
 * backup name at the same instant could lose a file. */
static int rename_noreplace(const char *from, const char *to)
{
    if (linkat(AT_FDCWD, from, AT_FDCWD, to, 0) == 0) {
        if (unlink(from) != 0) {
            int err = errno;
            unlink(to);
            errno = err;
            return -1;
        }
        return 0;
    }
    if (errno == EEXIST) {
        return -1;
    }
    struct stat st;
    if (lstat(to, &st) == 0) {
        errno = EEXIST;
        return -1;
    }
    return rename(from, to);
}

/* A device or pipe (/dev/null, a FIFO) is written into, never moved aside. */
static bool is_special_file(const struct stat *st)
{
    return !S_ISREG(st->st_mode) && !S_ISLNK(st->st_mode) && !S_ISDIR(st->st_mode);
}

int hmd_output_backup(const char *path, char *note, size_t note_len)
{
    if (note_len > 0) {
        note[0] = '\0';
    }
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno == ENOENT) {
            return HMD_OK;
        }
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", path, strerror(errno));
    }
    if (S_ISDIR(st.st_mode)) {
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: it is a directory", path);
    }
    if (is_special_file(&st)) {
        return HMD_OK;
    }

    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    const char *name = path + dir_len;
    char backup[PATH_MAX];
    for (int n = 1; n <= HMD_OUTPUT_MAX_BACKUPS; n++) {
        int len = snprintf(backup, sizeof backup, "%.*s#%s.%d#", dir_len, path, name, n);
        if (len < 0 || (size_t)len >= sizeof backup) {
            return hmd_error_set(HMD_ECANTCREAT, "cannot back up %s: path too long", path);
        }
        if (rename_noreplace(path, backup) == 0) {
            if (note_len > 0) {
                snprintf(note, note_len, "Backed up %s to %s", path, backup);
            }
            return HMD_OK;
        }
        if (errno != EEXIST) {
            return hmd_error_set(HMD_ECANTCREAT, "cannot back up %s to %s: %s", path, backup,
                                 strerror(errno));
        }
    }
    return hmd_error_set(HMD_ECANTCREAT,
                         "cannot back up %s: #%s.1# to #%s.%d# all exist; remove old backups", path,
                         name, name, HMD_OUTPUT_MAX_BACKUPS);
}

int hmd_output_open(const char *path, FILE **fp, char *note, size_t note_len)
{
    *fp = NULL;
    int status = hmd_output_backup(path, note, note_len);
    if (status != HMD_OK) {
        return status;
    }
    /* After the backup nothing is at `path` except a device or pipe left in place. Otherwise
     * create exclusively ("x"), so a file that appeared meanwhile is not overwritten. */
    struct stat st;
    bool special = lstat(path, &st) == 0 && is_special_file(&st);
    FILE *f = fopen(path, special ? "w" : "wx");
    if (!f) {
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", path, strerror(errno));
    }
    *fp = f;
    return HMD_OK;
}

int hmd_output_create(const char *path, FILE **fp)
{
    char note[PATH_MAX + 64];
    int status = hmd_output_open(path, fp, note, sizeof note);
    if (status == HMD_OK && note[0]) {
        fprintf(stderr, "%s\n", note);
    }
    return status;
}
