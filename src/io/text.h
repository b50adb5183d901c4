/* Line-oriented text input for the structure and parameter readers: a file read one line at a
 * time with its line number (for messages), and strict parsing of fields. */
#ifndef HMD_IO_TEXT_H
#define HMD_IO_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A text file read one line at a time, with the line number for messages. */
struct hmd_text_file {
    FILE *fp;
    const char *path; /* borrowed */
    char *line;       /* current line without its end-of-line characters (owned) */
    size_t len;       /* strlen(line) */
    size_t cap;       /* allocated size of line */
    int lineno;       /* 1-based number of the current line; 0 before the first */
};

/* Opens `path` for reading. Returns HMD_ENOINPUT with the system's reason when it cannot. */
int hmd_text_open(struct hmd_text_file *tf, const char *path);

/* Reads the next line. Returns 1 when a line was read, 0 at the end of the file, HMD_EIO or
 * HMD_ENOMEM on failure. */
int hmd_text_next(struct hmd_text_file *tf);

/* HMD_OK when `count` records of at least `min_bytes` bytes each can still follow in the file
 * (always for a pipe or device); otherwise HMD_EDATA "<path>:<line>: <count> <what> declared
 * on line <decl_line>, but ...": readers call it before allocating for a count read from a
 * header, so that memory stays bounded by the file's size. */
int hmd_text_check_count(const struct hmd_text_file *tf, long long count, long long min_bytes,
                         const char *what, int decl_line);

/* Closes the file and frees the line. Safe on a zeroed struct. */
void hmd_text_close(struct hmd_text_file *tf);

/* Splits `s` in place at blanks into at most `max` tokens; returns the number of tokens found,
 * which may exceed `max` (only the first `max` are stored). */
int hmd_text_split(char *s, char **tok, int max);

/* Parses s[0..len) as one finite number (blanks around it allowed); false otherwise ("nan",
 * "inf", "1.5x" and "" are all rejected). */
bool hmd_text_parse_double(const char *s, size_t len, double *out);

/* Parses s[0..len) as one decimal integer (blanks around it allowed); false otherwise. */
bool hmd_text_parse_int(const char *s, size_t len, long long *out);

/* Copies s[0..len) without surrounding blanks into dst (size n, truncating, always ended). */
void hmd_text_copy_trimmed(char *dst, size_t n, const char *s, size_t len);

/* Time (ps) from a title holding "t= <number>", as GROMACS writes .gro and PDB titles. Returns
 * false (and leaves *t) when there is none. */
bool hmd_text_title_time(const char *title, double *t);

#endif /* HMD_IO_TEXT_H */
