/* NumPy .npy arrays (format versions 1.0, 2.0 and 3.0), as DeePMD-kit's data folders hold them
 * (set.NNN/coord.npy, force.npy, ...).
 *
 * File layout: the magic "\x93NUMPY", the major and minor version bytes, the header length (a
 * little-endian u16 in version 1, u32 in 2 and 3), the header (a Python dict literal such as
 * {'descr': '<f8', 'fortran_order': False, 'shape': (200, 576), }), then the raw data in C order.
 * numpy.lib.format documents it.
 *
 * The reader checks everything against the file before it allocates: the magic and version, a
 * header that parses and holds exactly the three keys, a data type it knows (floating point
 * f4/f8 and integers i1/i2/i4/i8/u1/u2/u4/u8, either byte order), C order, a shape whose
 * element count does not overflow, and a file whose size is exactly header plus data. Values
 * are converted to double (integers above 2^53 lose their last bits).
 */
#ifndef HMD_IO_NPY_H
#define HMD_IO_NPY_H

#include <stdint.h>

#define HMD_NPY_MAX_DIM 8

struct hmd_npy {
    int ndim;                       /* 0 for a scalar */
    int64_t shape[HMD_NPY_MAX_DIM]; /* extent of each dimension */
    int64_t count;                  /* product of the extents (1 for a scalar) */
    char descr[8];                  /* the data type as the file gives it, e.g. "<f8" */
    double *data;                   /* [count] values in C order (owned; NULL when count is 0) */
};

/* Reads the .npy file at `path` into `arr` (zeroed first). Errors name the file:
 * HMD_ENOINPUT (cannot open), HMD_EDATA (not an .npy file, a malformed header, an unsupported
 * data type or Fortran order, a size that does not match the shape, more than HMD_NPY_MAX_DIM
 * dimensions), HMD_ENOMEM, HMD_EIO. On error `arr` holds nothing to free. */
int hmd_npy_read(const char *path, struct hmd_npy *arr);

/* Frees what `arr` owns and zeroes it; safe on a zeroed struct. */
void hmd_npy_free(struct hmd_npy *arr);

#endif /* HMD_IO_NPY_H */
