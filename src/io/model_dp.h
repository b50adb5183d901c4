/* Reader of DeePMD-kit backend-independent model files (.dp, written by
 * `dp convert-backend model.pth model.dp`).
 *
 * Layout (deepmd/dpmodel/utils/serialization.py): an HDF5 file whose root attribute `json`
 * holds the whole model tree as a JSON string; every array of the tree is replaced by the path
 * of a root dataset ("/variable_0007"). See docs/models.md.
 */
#ifndef HMD_IO_MODEL_DP_H
#define HMD_IO_MODEL_DP_H

#include "nnp/model.h"

/* Reads `path` into `model` (zeroed by the caller; free with hmd_model_free, also after a
 * failure). Errors: HMD_ENOINPUT (missing or unreadable file), HMD_EDATA (not a .dp file, corrupt
 * JSON, missing dataset, wrong shape: the message names the place inside the file, e.g.
 * "model.descriptor.embeddings.networks[1].layers[0].w"), HMD_ENOTSUP (a descriptor, fitting or
 * feature halomd does not implement, named in the message). Every dataset's size is checked
 * against the file before it is allocated or read, and its values must be finite. The file is
 * first read in a child process (model_dp.c, "the probe"), so that a file that makes HDF5 crash
 * or hang ends with HMD_EDATA naming the file and what was being read (a hang: the child silent
 * for 120 s, or HALOMD_MODEL_PROBE_SECONDS); HALOMD_MODEL_PROBE=0 turns the probe off. */
int hmd_model_read_dp(const char *path, struct hmd_dp_model *model);

#endif /* HMD_IO_MODEL_DP_H */
