/* The model a run or an evaluation uses: the .dp file as read, then prepared as the run
 * parameters say (model compression). */
#ifndef HMD_MD_MODEL_SETUP_H
#define HMD_MD_MODEL_SETUP_H

#include "core/params.h"
#include "nnp/model.h"

/* Reads the DeePMD-kit model at `path` into `model` and applies p->model_compress:
 * auto keeps what the file holds (tables when it is compressed), yes tabulates the embedding
 * nets with compress-stride, compress-extrapolate and compress-min-nbor-dist unless the file
 * already has tables, no drops the file's tables and evaluates the networks.
 *
 * Returns HMD_OK or the reader's or compression's status, with a message that names the file or
 * the parameter. On error the model may be partly filled; free it with hmd_model_free. */
int hmd_model_setup(const char *path, const struct hmd_params *p, struct hmd_dp_model *model);

#endif /* HMD_MD_MODEL_SETUP_H */
