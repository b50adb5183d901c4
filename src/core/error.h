/* Status codes and the last error message.
 *
 * Recoverable errors (bad input, missing file, unsupported model) travel up as a negative
 * status; the failing site records a message that names the file and line or the parameter and
 * says what to do. main() prints the message and exits with the matching <sysexits.h> code,
 * which is simply the status negated. Fatal internal errors go through hmd_fatal().
 */
#ifndef HMD_CORE_ERROR_H
#define HMD_CORE_ERROR_H

enum hmd_status {
    HMD_OK = 0,
    HMD_EUSAGE = -64,     /* bad command line (EX_USAGE) */
    HMD_EDATA = -65,      /* malformed or inconsistent input data (EX_DATAERR) */
    HMD_ENOINPUT = -66,   /* input file missing or unreadable (EX_NOINPUT) */
    HMD_ENOTSUP = -69,    /* feature not available: model kind, backend (EX_UNAVAILABLE) */
    HMD_ESOFTWARE = -70,  /* internal error or a run that blew up (EX_SOFTWARE) */
    HMD_ENOMEM = -71,     /* out of memory (EX_OSERR) */
    HMD_ECANTCREAT = -73, /* output file cannot be created (EX_CANTCREAT) */
    HMD_EIO = -74,        /* read or write failed (EX_IOERR) */
    HMD_ECONFIG = -78,    /* bad run parameter (EX_CONFIG) */
};

/* Records a printf-style message for `status` and returns `status`, so a failing site can
 * write `return hmd_error_set(HMD_EDATA, "%s:%d: ...", path, line);`. */
int hmd_error_set(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Prepends printf-style context ("reading model m.dp: ") to the current message and returns
 * `status`; use it where a caller knows more than the failing site. */
int hmd_error_prefix(int status, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The last recorded message, or "" when none. Valid until the next hmd_error_* call. */
const char *hmd_error_msg(void);

/* Forgets the last message. */
void hmd_error_clear(void);

/* Process exit code for a status: 0 for HMD_OK, the sysexits code otherwise. */
int hmd_status_exit_code(int status);

/* Short name of a status ("EDATA"), for logs and tests. */
const char *hmd_status_name(int status);

/* Prints "halomd: fatal error: <message> (file:line)" to stderr and exits with EX_SOFTWARE.
 * For broken invariants and failures no caller can handle. */
void hmd_fatal_at(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
#define hmd_fatal(...) hmd_fatal_at(__FILE__, __LINE__, __VA_ARGS__)

/* Expression-form assertion that stays on in release builds. */
#define HMD_ASSERT(cond) ((cond) ? (void)0 : hmd_fatal("assertion failed: %s", #cond))

#endif /* HMD_CORE_ERROR_H */
