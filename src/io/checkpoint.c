/* Checkpoints in HDF5 behind a hashed header (io/checkpoint.h; the layout in docs/formats.md).
 *
 * Why a header of our own in front of HDF5: HDF5 1.10 can crash on a damaged file (the .dp
 * models showed it), so the reader hashes every byte of the HDF5 part before HDF5 opens it. The
 * per-block checksums inside then say which block of which array is bad should a file with a
 * good header hash still disagree (a bug, or a file assembled by hand), and let the writer hash
 * as it writes, block by block, without a copy of the arrays.
 *
 * Every number is stored little-endian (H5T_*LE); the checksums are over those bytes, which are
 * the bytes in memory on the little-endian machines halomd runs on.
 */
#include "io/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "core/error.h"
#include "hmd_buildinfo.h"

#define CPT_FORMAT "halomd-cpt-2"
#define CPT_VERSION 2u
#define HEADER_SIZE 512
#define HEADER_HASH_AT (HEADER_SIZE - 8)
#define IO_BUF (1u << 20)

/* The first 16 bytes; a JSON checkpoint of format 1 starts with '{'. */
static const char MAGIC[16] = "\x89halomd-cpt\r\n\x1a\n";

/* ---- header ---- */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int k = 0; k < 4; k++) {
        p[k] = (unsigned char)(v >> (8 * k));
    }
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int k = 0; k < 8; k++) {
        p[k] = (unsigned char)(v >> (8 * k));
    }
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int k = 3; k >= 0; k--) {
        v = v << 8 | p[k];
    }
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int k = 7; k >= 0; k--) {
        v = v << 8 | p[k];
    }
    return v;
}

struct header {
    uint64_t payload; /* bytes of HDF5 after the header */
    uint64_t hash[2]; /* XXH3-128 of those bytes, high then low */
    uint64_t natoms, step;
};

static void header_pack(const struct header *h, unsigned char out[HEADER_SIZE])
{
    memset(out, 0, HEADER_SIZE);
    memcpy(out, MAGIC, sizeof MAGIC);
    put_u32(out + 16, CPT_VERSION);
    put_u32(out + 20, HEADER_SIZE);
    put_u64(out + 24, h->payload);
    put_u64(out + 32, h->hash[0]);
    put_u64(out + 40, h->hash[1]);
    put_u64(out + 48, h->natoms);
    put_u64(out + 56, h->step);
    put_u64(out + HEADER_HASH_AT, XXH3_64bits(out, HEADER_HASH_AT));
}

/* ---- messages ---- */

int hmd_checkpoint_prev_path(const char *path, char *out, size_t out_len)
{
    size_t n = strlen(path);
    int len = (n >= 4 && strcmp(path + n - 4, ".cpt") == 0)
                  ? snprintf(out, out_len, "%.*s_prev.cpt", (int)(n - 4), path)
                  : snprintf(out, out_len, "%s_prev", path);
    if (len < 0 || (size_t)len >= out_len) {
        return hmd_error_set(HMD_EUSAGE, "checkpoint name too long: %s", path);
    }
    return HMD_OK;
}

/* Refuses `path` with a message that ends by naming the previous checkpoint. */
static int refuse(const char *path, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int refuse(const char *path, const char *fmt, ...)
{
    char what[512], prev[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (hmd_checkpoint_prev_path(path, prev, sizeof prev)) {
        return hmd_error_set(HMD_EDATA, "checkpoint %s: %s", path, what);
    }
    struct stat st;
    if (stat(prev, &st) == 0) {
        return hmd_error_set(HMD_EDATA,
                             "checkpoint %s: %s; the previous checkpoint %s is there: continue "
                             "from it with -cpi %s",
                             path, what, prev, prev);
    }
    return hmd_error_set(HMD_EDATA, "checkpoint %s: %s; there is no previous checkpoint (%s)", path,
                         what, prev);
}

/* ---- hashing a file ---- */

/* XXH3-128 of `len` bytes of `fd` from offset `at`, read in blocks of IO_BUF. Returns 0, or
 * -1 with errno (EIO for a file shorter than `len`). */
static int hash_range(int fd, off_t at, uint64_t len, uint64_t hash[2])
{
    unsigned char *buf = malloc(IO_BUF);
    XXH3_state_t st;
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    XXH3_128bits_reset(&st);
    while (len > 0) {
        size_t want = len < IO_BUF ? (size_t)len : IO_BUF;
        ssize_t got = pread(fd, buf, want, at);
        if (got <= 0) {
            if (got == 0) {
                errno = EIO;
            }
            if (got < 0 && errno == EINTR) {
                continue;
            }
            free(buf);
            return -1;
        }
        XXH3_128bits_update(&st, buf, (size_t)got);
        at += got;
        len -= (uint64_t)got;
    }
    XXH128_hash_t h = XXH3_128bits_digest(&st);
    hash[0] = h.high64;
    hash[1] = h.low64;
    free(buf);
    return 0;
}

int hmd_checkpoint_hash_file(const char *path, uint64_t hash[2])
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        int e = errno;
        if (fd >= 0) {
            close(fd);
        }
        return hmd_error_set(HMD_ENOINPUT, "cannot open %s: %s", path, strerror(e));
    }
    int rc = hash_range(fd, 0, (uint64_t)st.st_size, hash);
    int e = errno;
    close(fd);
    return rc ? hmd_error_set(HMD_EIO, "cannot read %s: %s", path, strerror(e)) : HMD_OK;
}

/* ---- the scalars and their checksum ---- */

/* The scalars as one little-endian record, the bytes of their checksum. Returns its length. */
static size_t scalar_record(const struct hmd_checkpoint *c, unsigned char *out, size_t cap)
{
    size_t n = 0;
    const double f[] = {c->dt, c->thermostat_work, c->barostat_work};
    const int64_t i[] = {c->step, c->natoms, c->has_box, c->gen_seed, c->ld_seed, c->list_step};
    for (size_t k = 0; k < sizeof i / sizeof i[0]; k++, n += 8) {
        put_u64(out + n, (uint64_t)i[k]);
    }
    for (size_t k = 0; k < 3; k++, n += 8) {
        memcpy(out + n, &f[k], 8);
    }
    for (size_t k = 0; k < 9; k++, n += 8) {
        memcpy(out + n, &c->h[0][0] + k, 8);
    }
    put_u64(out + n, c->model_hash[0]);
    put_u64(out + n + 8, c->model_hash[1]);
    n += 16;
    size_t len = strnlen(c->model, sizeof c->model);
    if (len > cap - n) {
        len = cap - n;
    }
    memcpy(out + n, c->model, len);
    return n + len;
}

/* The list's cell (9) and displacement (1) as one record of doubles. */
static void list_state_record(const struct hmd_checkpoint *c, double st[10])
{
    memcpy(st, c->h_list, sizeof(double) * 9);
    st[9] = c->list_disp2;
}

/* ---- writing ---- */

/* The rows of block b of an [n][3] array (HMD_CPT_BLOCK_ATOMS atoms, the last one shorter). */
static void block_of(size_t b, int n, hsize_t start[2], hsize_t count[2])
{
    start[0] = b * HMD_CPT_BLOCK_ATOMS;
    start[1] = 0;
    count[0] =
        (hsize_t)n - start[0] < HMD_CPT_BLOCK_ATOMS ? (hsize_t)n - start[0] : HMD_CPT_BLOCK_ATOMS;
    count[1] = 3;
}

struct writer {
    const char *path; /* the temporary file, for messages */
    hid_t file, sums;
};

static int write_data(struct writer *w, hid_t loc, const char *name, hid_t ftype, hid_t mtype,
                      int rank, const hsize_t *dims, const void *data)
{
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    hid_t d =
        space < 0 ? -1 : H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = d < 0 ? -1 : H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
    if (d >= 0 && H5Dclose(d) < 0) {
        e = -1;
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    return e < 0 ? hmd_error_set(HMD_EIO, "cannot write %s (dataset %s)", w->path, name) : HMD_OK;
}

static int write_i64(struct writer *w, const char *name, int64_t v)
{
    return write_data(w, w->file, name, H5T_STD_I64LE, H5T_NATIVE_INT64, 0, NULL, &v);
}

static int write_f64(struct writer *w, const char *name, double v)
{
    return write_data(w, w->file, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &v);
}

/* [n][3] doubles written HMD_CPT_BLOCK_ATOMS rows at a time, straight from `a`, each block's
 * XXH3-64 into /checksums/<name>. */
static int write_vectors(struct writer *w, const char *name, const double *a, int n)
{
    const hsize_t dims[2] = {(hsize_t)n, 3};
    const size_t nblocks = ((size_t)n + HMD_CPT_BLOCK_ATOMS - 1) / HMD_CPT_BLOCK_ATOMS;
    uint64_t *sums = malloc(nblocks * sizeof *sums);
    hid_t space = H5Screate_simple(2, dims, NULL);
    hid_t d = space < 0 ? -1
                        : H5Dcreate2(w->file, name, H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT,
                                     H5P_DEFAULT);
    int rc = sums && d >= 0 ? HMD_OK : HMD_EIO;
    for (size_t b = 0; !rc && b < nblocks; b++) {
        hsize_t start[2], count[2];
        block_of(b, n, start, count);
        const double *src = a + 3 * start[0];
        sums[b] = XXH3_64bits(src, sizeof(double) * 3 * count[0]);
        hid_t mem = H5Screate_simple(2, count, NULL);
        if (mem < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, src) < 0) {
            rc = HMD_EIO;
        }
        if (mem >= 0) {
            H5Sclose(mem);
        }
    }
    if (d >= 0 && H5Dclose(d) < 0) {
        rc = HMD_EIO;
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    if (!rc) {
        const hsize_t nb = nblocks;
        rc = write_data(w, w->sums, name, H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &nb, sums);
    } else if (!sums) {
        rc = hmd_error_set(HMD_ENOMEM, "out of memory writing %s", w->path);
    } else {
        rc = hmd_error_set(HMD_EIO, "cannot write %s (dataset %s)", w->path, name);
    }
    free(sums);
    return rc;
}

static int write_string(struct writer *w, hid_t loc, const char *name, const char *s, bool attr)
{
    hid_t type = H5Tcopy(H5T_C_S1), space = H5Screate(H5S_SCALAR);
    H5Tset_size(type, strlen(s) ? strlen(s) : 1);
    hid_t o = attr ? H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT)
                   : H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = o < 0  ? -1
               : attr ? H5Awrite(o, type, strlen(s) ? s : " ")
                      : H5Dwrite(o, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, strlen(s) ? s : " ");
    if (o >= 0 && (attr ? H5Aclose(o) : H5Dclose(o)) < 0) {
        e = -1;
    }
    H5Sclose(space);
    H5Tclose(type);
    return e < 0 ? hmd_error_set(HMD_EIO, "cannot write %s (%s)", w->path, name) : HMD_OK;
}

/* Every dataset of `c` into the open file. */
static int write_contents(struct writer *w, const struct hmd_checkpoint *given)
{
    struct hmd_checkpoint norm = *given, *c = &norm;
    if (!c->x_list) {
        c->list_step = -1;
    }
    unsigned char rec[8 * 20 + sizeof c->model];
    const uint64_t sum = XXH3_64bits(rec, scalar_record(c, rec, sizeof rec));
    const hsize_t one = 1, two = 2, cell[2] = {3, 3};
    char version[128];
    snprintf(version, sizeof version, "halomd %s (%s)", HMD_VERSION, HMD_GIT_COMMIT);
    int rc = write_string(w, w->file, "format", CPT_FORMAT, true);
    rc = rc ? rc : write_string(w, w->file, "written_by", version, true);
    rc = rc ? rc : write_i64(w, "step", c->step);
    rc = rc ? rc : write_i64(w, "natoms", c->natoms);
    rc = rc ? rc : write_i64(w, "has_box", c->has_box);
    rc = rc ? rc : write_i64(w, "gen_seed", c->gen_seed);
    rc = rc ? rc : write_i64(w, "ld_seed", c->ld_seed);
    rc = rc ? rc : write_i64(w, "list_step", c->list_step);
    rc = rc ? rc : write_f64(w, "dt_ps", c->dt);
    rc = rc ? rc : write_f64(w, "thermostat_work_eV", c->thermostat_work);
    rc = rc ? rc : write_f64(w, "barostat_work_eV", c->barostat_work);
    rc = rc ? rc
            : write_data(w, w->file, "cell_A", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 2, cell, c->h);
    rc = rc ? rc
            : write_data(w, w->file, "model_hash_xxh3_128", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1,
                         &two, c->model_hash);
    rc = rc ? rc : write_string(w, w->file, "model_path", c->model, false);
    rc = rc ? rc : write_vectors(w, "positions_A", c->x, c->natoms);
    rc = rc ? rc : write_vectors(w, "velocities_A_per_ps", c->v, c->natoms);
    if (!rc && c->x_list) {
        rc = write_vectors(w, "list_positions_A", c->x_list, c->natoms);
    }
    if (!rc && c->x_list) { /* the list's cell and displacement, with a checksum of their own */
        double st[10];
        list_state_record(c, st);
        const hsize_t ten = 10;
        const uint64_t st_sum = XXH3_64bits(st, sizeof st);
        rc = write_data(w, w->file, "list_state", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &ten, st);
        rc = rc ? rc
                : write_data(w, w->sums, "list_state", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &one,
                             &st_sum);
    }
    return rc ? rc
              : write_data(w, w->sums, "scalars", H5T_STD_U64LE, H5T_NATIVE_UINT64, 1, &one, &sum);
}

/* The HDF5 part of the checkpoint into `tmp` (created or truncated). */
static int write_hdf5(const char *tmp, const struct hmd_checkpoint *c)
{
    struct writer w = {.path = tmp, .file = -1, .sums = -1};
    hid_t fcpl = H5Pcreate(H5P_FILE_CREATE);
    if (fcpl < 0 || H5Pset_userblock(fcpl, HEADER_SIZE) < 0) {
        return hmd_error_set(HMD_ESOFTWARE, "HDF5 refused a user block of %d bytes", HEADER_SIZE);
    }
    w.file = H5Fcreate(tmp, H5F_ACC_TRUNC, fcpl, H5P_DEFAULT);
    H5Pclose(fcpl);
    if (w.file < 0) {
        return hmd_error_set(HMD_ECANTCREAT, "cannot create %s: %s", tmp,
                             errno ? strerror(errno) : "HDF5 refused it");
    }
    w.sums = H5Gcreate2(w.file, "checksums", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = w.sums < 0 ? hmd_error_set(HMD_EIO, "cannot write %s", tmp) : write_contents(&w, c);
    if (w.sums >= 0 && H5Gclose(w.sums) < 0 && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s", tmp);
    }
    if (H5Fclose(w.file) < 0 && !rc) {
        rc = hmd_error_set(HMD_EIO, "cannot write %s (closing it failed: disk full?)", tmp);
    }
    return rc;
}

/* Hashes the HDF5 part of `tmp`, writes the header in front of it and fsyncs the file. */
static int seal(const char *tmp, const struct hmd_checkpoint *c)
{
    int fd = open(tmp, O_RDWR);
    struct stat st;
    if (fd < 0) {
        return hmd_error_set(HMD_EIO, "cannot reopen %s: %s", tmp, strerror(errno));
    }
    struct header h = {.natoms = (uint64_t)c->natoms, .step = (uint64_t)c->step};
    unsigned char buf[HEADER_SIZE];
    int ok = fstat(fd, &st) == 0 && st.st_size > HEADER_SIZE;
    if (ok) {
        h.payload = (uint64_t)st.st_size - HEADER_SIZE;
        ok = hash_range(fd, HEADER_SIZE, h.payload, h.hash) == 0;
    }
    if (ok) {
        header_pack(&h, buf);
        ok = pwrite(fd, buf, HEADER_SIZE, 0) == HEADER_SIZE && fsync(fd) == 0;
    }
    int e = errno;
    if (close(fd) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    return ok ? HMD_OK : hmd_error_set(HMD_EIO, "cannot write %s: %s", tmp, strerror(e));
}

/* fsync of the directory holding `path`, so that the renames reach the disk. */
static void sync_dir(const char *path)
{
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    int fd = open(dirname(dir), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        fsync(fd); /* best effort: some file systems refuse fsync on directories */
        close(fd);
    }
}

/* `path` (if it exists) becomes `prev`, and `tmp` becomes `path`. The old checkpoint is first
 * hard-linked to a temporary name and that renamed over `prev`, so `path` never disappears;
 * where links are refused, `path` is renamed to `prev` (a moment without `path`, as GROMACS). */
static int publish(const char *tmp, const char *path, const char *prev, bool *had_prev)
{
    char link_tmp[4096 + 8];
    snprintf(link_tmp, sizeof link_tmp, "%s.lnk", prev);
    unlink(link_tmp);
    *had_prev = false;
    if (link(path, link_tmp) == 0) {
        if (rename(link_tmp, prev) != 0) {
            int e = errno;
            unlink(link_tmp);
            return hmd_error_set(HMD_EIO, "cannot rename %s to %s: %s", link_tmp, prev,
                                 strerror(e));
        }
        *had_prev = true;
    } else if (errno != ENOENT) {
        if (rename(path, prev) != 0) {
            return hmd_error_set(HMD_EIO, "cannot rename %s to %s: %s", path, prev,
                                 strerror(errno));
        }
        *had_prev = true;
    }
    if (rename(tmp, path) != 0) {
        return hmd_error_set(HMD_EIO, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
    }
    sync_dir(path);
    return HMD_OK;
}

int hmd_checkpoint_write(const char *path, const struct hmd_checkpoint *c, char *note,
                         size_t note_len)
{
    char tmp[4096], prev[4096];
    if (!(c->natoms > 0) || !(c->dt > 0) || !c->x || !c->v) {
        return hmd_error_set(HMD_ECONFIG,
                             "checkpoint %s: nothing to write (%d atoms, dt %g ps, arrays %s)",
                             path, c->natoms, c->dt, c->x && c->v ? "given" : "missing");
    }
    int len = snprintf(tmp, sizeof tmp, "%s.tmp", path);
    int rc = len < 0 || (size_t)len >= sizeof tmp
                 ? hmd_error_set(HMD_EUSAGE, "checkpoint name too long: %s", path)
                 : hmd_checkpoint_prev_path(path, prev, sizeof prev);
    if (rc) {
        return rc;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    errno = 0;
    rc = write_hdf5(tmp, c);
    rc = rc ? rc : seal(tmp, c);
    bool had_prev = false;
    rc = rc ? rc : publish(tmp, path, prev, &had_prev);
    if (rc) {
        unlink(tmp);
        return rc;
    }
    if (note && note_len) {
        if (had_prev) {
            snprintf(note, note_len, "checkpoint %s written at step %" PRId64 " (previous: %s)",
                     path, c->step, prev);
        } else {
            snprintf(note, note_len, "checkpoint %s written at step %" PRId64, path, c->step);
        }
    }
    return HMD_OK;
}

/* ---- reading ---- */

/* Checks the header, the length and the hash of `path` before HDF5 reads it. */
static int verify_file(const char *path, struct header *h)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        return hmd_error_set(HMD_ENOINPUT, "cannot open checkpoint %s: %s", path, strerror(errno));
    }
    unsigned char buf[HEADER_SIZE];
    struct stat st;
    ssize_t got = fstat(fd, &st) == 0 ? pread(fd, buf, HEADER_SIZE, 0) : -1;
    int rc = HMD_OK;
    if (got < 0) {
        rc = hmd_error_set(HMD_ENOINPUT, "cannot read checkpoint %s: %s", path, strerror(errno));
    } else if (got > 0 && buf[0] == '{') {
        rc = hmd_error_set(HMD_EDATA,
                           "checkpoint %s is a JSON checkpoint of an earlier halomd (format "
                           "halomd-cpt-1), which this version does not read: continue it with "
                           "the halomd that wrote it, or start a new run from the last .gro",
                           path);
    } else if (got < HEADER_SIZE || memcmp(buf, MAGIC, sizeof MAGIC) != 0) {
        rc = got < HEADER_SIZE && got > 0 &&
                     memcmp(buf, MAGIC, got < 16 ? (size_t)got : sizeof MAGIC) == 0
                 ? refuse(path, "truncated to %zd bytes", got)
                 : hmd_error_set(HMD_EDATA, "%s is not a halomd checkpoint (no %s header)", path,
                                 CPT_FORMAT);
    } else if (get_u64(buf + HEADER_HASH_AT) != XXH3_64bits(buf, HEADER_HASH_AT)) {
        rc = refuse(path, "its header is damaged (checksum mismatch)");
    } else if (get_u32(buf + 16) != CPT_VERSION || get_u32(buf + 20) != HEADER_SIZE) {
        rc = hmd_error_set(HMD_EDATA,
                           "checkpoint %s has format version %" PRIu32
                           ", this halomd reads version %u: use the halomd that wrote it",
                           path, get_u32(buf + 16), CPT_VERSION);
    }
    if (!rc) {
        h->payload = get_u64(buf + 24);
        h->hash[0] = get_u64(buf + 32);
        h->hash[1] = get_u64(buf + 40);
        h->natoms = get_u64(buf + 48);
        h->step = get_u64(buf + 56);
        const uint64_t size = (uint64_t)st.st_size;
        uint64_t sum[2];
        if (size - HEADER_SIZE < h->payload) {
            rc = refuse(path, "truncated (%" PRIu64 " of %" PRIu64 " bytes)", size,
                        h->payload + HEADER_SIZE);
        } else if (size - HEADER_SIZE > h->payload) {
            rc = refuse(path, "%" PRIu64 " bytes longer than written",
                        size - HEADER_SIZE - h->payload);
        } else if (hash_range(fd, HEADER_SIZE, h->payload, sum) != 0) {
            rc = hmd_error_set(HMD_EIO, "cannot read checkpoint %s: %s", path, strerror(errno));
        } else if (sum[0] != h->hash[0] || sum[1] != h->hash[1]) {
            rc = refuse(path, "damaged: the checksum of its contents does not match");
        }
    }
    close(fd);
    return rc;
}

struct reader {
    const char *path;
    hid_t file, sums;
};

/* Opens dataset `name` of `loc` and checks its class, element size and shape (rank 0 for a
 * scalar, else dims[0] x dims[1] with dims[1] = 0 for rank 1). */
static int open_checked(struct reader *r, hid_t loc, const char *name, H5T_class_t cls, size_t size,
                        int rank, hsize_t d0, hsize_t d1, hid_t *out)
{
    *out = -1;
    if (H5Lexists(loc, name, H5P_DEFAULT) <= 0 || (*out = H5Dopen2(loc, name, H5P_DEFAULT)) < 0) {
        return refuse(r->path, "dataset %s is missing", name);
    }
    hid_t type = H5Dget_type(*out), space = H5Dget_space(*out);
    hsize_t dims[2] = {0, 0};
    int nd = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    int ok = type >= 0 && H5Tget_class(type) == cls && H5Tget_size(type) == size && nd == rank &&
             (nd == 0 || H5Sget_simple_extent_dims(space, dims, NULL) == nd);
    ok = ok && (rank < 1 || dims[0] == d0) && (rank < 2 || dims[1] == d1);
    if (type >= 0) {
        H5Tclose(type);
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    if (!ok) {
        H5Dclose(*out);
        *out = -1;
        return refuse(r->path, "dataset %s has the wrong type or shape", name);
    }
    return HMD_OK;
}

static int read_scalar(struct reader *r, const char *name, H5T_class_t cls, hid_t mtype, void *v)
{
    hid_t d;
    int rc = open_checked(r, r->file, name, cls, 8, 0, 0, 0, &d);
    if (!rc && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) {
        rc = refuse(r->path, "dataset %s cannot be read", name);
    }
    if (d >= 0) {
        H5Dclose(d);
    }
    return rc;
}

static int read_i64(struct reader *r, const char *name, int64_t *v)
{
    return read_scalar(r, name, H5T_INTEGER, H5T_NATIVE_INT64, v);
}

static int read_f64(struct reader *r, const char *name, double *v)
{
    return read_scalar(r, name, H5T_FLOAT, H5T_NATIVE_DOUBLE, v);
}

/* A whole small array dataset of `n` 8-byte elements (rank 1, or 3 x 3 when n = 9). */
static int read_small(struct reader *r, hid_t loc, const char *name, H5T_class_t cls, hid_t mtype,
                      hsize_t n, void *out)
{
    hid_t d;
    int rc = n == 9 ? open_checked(r, loc, name, cls, 8, 2, 3, 3, &d)
                    : open_checked(r, loc, name, cls, 8, 1, n, 0, &d);
    if (!rc && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
        rc = refuse(r->path, "dataset %s cannot be read", name);
    }
    if (d >= 0) {
        H5Dclose(d);
    }
    return rc;
}

/* [n][3] doubles into a new array, block by block, each checked against /checksums/<name>. */
static int read_vectors(struct reader *r, const char *name, int n, double **out)
{
    const size_t nblocks = ((size_t)n + HMD_CPT_BLOCK_ATOMS - 1) / HMD_CPT_BLOCK_ATOMS;
    uint64_t *sums = malloc(nblocks * sizeof *sums);
    *out = malloc(sizeof(double) * 3 * (size_t)n);
    if (!sums || !*out) {
        free(sums);
        return hmd_error_set(HMD_ENOMEM, "out of memory reading %s (%d atoms)", r->path, n);
    }
    hid_t d = -1, space = -1;
    int rc = read_small(r, r->sums, name, H5T_INTEGER, H5T_NATIVE_UINT64, nblocks, sums);
    rc = rc ? rc : open_checked(r, r->file, name, H5T_FLOAT, 8, 2, (hsize_t)n, 3, &d);
    if (!rc && (space = H5Dget_space(d)) < 0) {
        rc = refuse(r->path, "dataset %s cannot be read", name);
    }
    for (size_t b = 0; !rc && b < nblocks; b++) {
        hsize_t start[2], count[2];
        block_of(b, n, start, count);
        double *dst = *out + 3 * start[0];
        hid_t mem = H5Screate_simple(2, count, NULL);
        if (mem < 0 || H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
            H5Dread(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, dst) < 0) {
            rc = refuse(r->path, "dataset %s cannot be read", name);
        } else if (XXH3_64bits(dst, sizeof(double) * 3 * count[0]) != sums[b]) {
            rc = refuse(r->path,
                        "dataset %s, block %zu (atoms %" PRIu64 "-%" PRIu64 "): checksum mismatch",
                        name, b, (uint64_t)start[0] + 1, (uint64_t)(start[0] + count[0]));
        }
        if (mem >= 0) {
            H5Sclose(mem);
        }
    }
    if (space >= 0) {
        H5Sclose(space);
    }
    if (d >= 0) {
        H5Dclose(d);
    }
    free(sums);
    return rc;
}

/* The model path: a fixed-length string dataset. */
static int read_model_path(struct reader *r, struct hmd_checkpoint *c)
{
    hid_t d = -1, type = -1;
    int rc = HMD_OK;
    if (H5Lexists(r->file, "model_path", H5P_DEFAULT) <= 0 ||
        (d = H5Dopen2(r->file, "model_path", H5P_DEFAULT)) < 0) {
        return refuse(r->path, "dataset model_path is missing");
    }
    type = H5Dget_type(d);
    size_t size = type < 0 ? 0 : H5Tget_size(type);
    if (type < 0 || H5Tget_class(type) != H5T_STRING || H5Tis_variable_str(type) != 0 || size < 1 ||
        size >= sizeof c->model || H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, c->model) < 0) {
        rc = refuse(r->path, "dataset model_path is not a string of fewer than %zu bytes",
                    sizeof c->model);
    }
    c->model[size < sizeof c->model ? size : 0] = '\0';
    if (!rc && strcmp(c->model, " ") == 0) {
        c->model[0] = '\0';
    }
    if (type >= 0) {
        H5Tclose(type);
    }
    H5Dclose(d);
    return rc;
}

/* With list positions: the list's cell and displacement (/list_state, checked against its
 * checksum); a checkpoint written before they were stored has the cell of the checkpoint and
 * no displacement (-1). */
static int read_list_state(struct reader *r, struct hmd_checkpoint *c)
{
    memcpy(c->h_list, c->h, sizeof c->h_list);
    c->list_disp2 = -1.0;
    if (c->list_step < 0 || H5Lexists(r->file, "list_state", H5P_DEFAULT) <= 0) {
        return HMD_OK;
    }
    double st[10];
    uint64_t sum = 0;
    int rc = read_small(r, r->file, "list_state", H5T_FLOAT, H5T_NATIVE_DOUBLE, 10, st);
    rc = rc ? rc : read_small(r, r->sums, "list_state", H5T_INTEGER, H5T_NATIVE_UINT64, 1, &sum);
    if (!rc && XXH3_64bits(st, sizeof st) != sum) {
        rc = refuse(r->path, "dataset list_state: checksum mismatch");
    }
    if (!rc) {
        memcpy(c->h_list, st, sizeof c->h_list);
        c->list_disp2 = st[9];
    }
    return rc;
}

static int read_contents(struct reader *r, const struct header *h, struct hmd_checkpoint *c)
{
    int64_t natoms = 0, has_box = 0;
    uint64_t sum = 0;
    int rc = read_i64(r, "step", &c->step);
    rc = rc ? rc : read_i64(r, "natoms", &natoms);
    rc = rc ? rc : read_i64(r, "has_box", &has_box);
    rc = rc ? rc : read_i64(r, "gen_seed", &c->gen_seed);
    rc = rc ? rc : read_i64(r, "ld_seed", &c->ld_seed);
    rc = rc ? rc : read_i64(r, "list_step", &c->list_step);
    rc = rc ? rc : read_f64(r, "dt_ps", &c->dt);
    rc = rc ? rc : read_f64(r, "thermostat_work_eV", &c->thermostat_work);
    rc = rc ? rc : read_f64(r, "barostat_work_eV", &c->barostat_work);
    rc = rc ? rc : read_small(r, r->file, "cell_A", H5T_FLOAT, H5T_NATIVE_DOUBLE, 9, c->h);
    rc = rc ? rc
            : read_small(r, r->file, "model_hash_xxh3_128", H5T_INTEGER, H5T_NATIVE_UINT64, 2,
                         c->model_hash);
    rc = rc ? rc : read_model_path(r, c);
    rc = rc ? rc : read_small(r, r->sums, "scalars", H5T_INTEGER, H5T_NATIVE_UINT64, 1, &sum);
    if (rc) {
        return rc;
    }
    /* Each atom takes at least 48 bytes of the file (x and v): a count the file cannot hold is
     * refused before anything is allocated. */
    if (natoms < 1 || natoms > INT32_MAX || (uint64_t)natoms > h->payload / 48 ||
        (uint64_t)natoms != h->natoms || (uint64_t)c->step != h->step || c->step < 0 ||
        (has_box != 0 && has_box != 1) || !(c->dt > 0)) {
        return refuse(r->path, "inconsistent: %" PRId64 " atoms, step %" PRId64 ", dt %g ps",
                      natoms, c->step, c->dt);
    }
    c->natoms = (int)natoms;
    c->has_box = has_box;
    unsigned char rec[8 * 20 + sizeof c->model];
    if (XXH3_64bits(rec, scalar_record(c, rec, sizeof rec)) != sum) {
        return refuse(r->path, "the scalars (step, dt, cell, seeds, ...): checksum mismatch");
    }
    rc = read_vectors(r, "positions_A", c->natoms, &c->x);
    rc = rc ? rc : read_vectors(r, "velocities_A_per_ps", c->natoms, &c->v);
    if (!rc && c->list_step >= 0) {
        rc = read_vectors(r, "list_positions_A", c->natoms, &c->x_list);
    }
    return rc ? rc : read_list_state(r, c);
}

int hmd_checkpoint_read(const char *path, struct hmd_checkpoint *c)
{
    memset(c, 0, sizeof *c);
    struct header h;
    int rc = verify_file(path, &h);
    if (rc) {
        return rc;
    }
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    struct reader r = {.path = path, .file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)};
    if (r.file < 0) {
        return refuse(path, "HDF5 cannot open it");
    }
    r.sums = H5Gopen2(r.file, "checksums", H5P_DEFAULT);
    rc = r.sums < 0 ? refuse(path, "group /checksums is missing") : read_contents(&r, &h, c);
    if (r.sums >= 0) {
        H5Gclose(r.sums);
    }
    H5Fclose(r.file);
    if (rc) {
        hmd_checkpoint_free(c);
    }
    return rc;
}

void hmd_checkpoint_free(struct hmd_checkpoint *c)
{
    free(c->x);
    free(c->v);
    free(c->x_list);
    memset(c, 0, sizeof *c);
}
