#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char error_msg[8192]; /* room for every bad line of a parameter file */

int hmd_error_set(int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(error_msg, sizeof error_msg, fmt, ap);
    va_end(ap);
    return status;
}

int hmd_error_prefix(int status, const char *fmt, ...)
{
    char old[sizeof error_msg];
    memcpy(old, error_msg, sizeof old);
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(error_msg, sizeof error_msg, fmt, ap);
    va_end(ap);
    if (n >= 0 && (size_t)n < sizeof error_msg) {
        size_t room = sizeof error_msg - (size_t)n;
        memcpy(error_msg + n, old, strnlen(old, room - 1));
        error_msg[n + strnlen(old, room - 1)] = '\0';
    }
    return status;
}

const char *hmd_error_msg(void)
{
    return error_msg;
}

void hmd_error_clear(void)
{
    error_msg[0] = '\0';
}

int hmd_status_exit_code(int status)
{
    if (status == HMD_OK) {
        return 0;
    }
    return (status <= -64 && status >= -78) ? -status : 70;
}

const char *hmd_status_name(int status)
{
    switch (status) {
    case HMD_OK:
        return "OK";
    case HMD_EUSAGE:
        return "EUSAGE";
    case HMD_EDATA:
        return "EDATA";
    case HMD_ENOINPUT:
        return "ENOINPUT";
    case HMD_ENOTSUP:
        return "ENOTSUP";
    case HMD_ESOFTWARE:
        return "ESOFTWARE";
    case HMD_ENOMEM:
        return "ENOMEM";
    case HMD_ECANTCREAT:
        return "ECANTCREAT";
    case HMD_EIO:
        return "EIO";
    case HMD_ECONFIG:
        return "ECONFIG";
    }
    return "EUNKNOWN";
}

void hmd_fatal_at(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "halomd: fatal error: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (%s:%d)\n", file, line);
    exit(70);
}
