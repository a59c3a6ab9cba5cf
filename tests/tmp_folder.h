/* A temporary folder per test (tests/tmp_folder.c), shared by every test
 * file that writes files, so that making, naming and removing the folder is
 * written once. Use tmp_setup and tmp_teardown as a suite's (or a test's)
 * .init and .fini. */
#ifndef TESTS_TMP_FOLDER_H
#define TESTS_TMP_FOLDER_H

/* Makes a fresh folder under /tmp; fails the test if it cannot. */
void tmp_setup(void);
/* Removes the folder and everything below it (twice is harmless). */
void tmp_teardown(void);
/* The folder itself, and folder/name (the last eight results of tmp_path
 * stay valid at once). */
const char *tmp_folder(void);
const char *tmp_path(const char *name);
/* The whole of the file at path, NUL-terminated (free it); fails the test
 * if it cannot be read. */
char *tmp_read(const char *path);
/* Writes text to folder/name, replacing what was there. */
void tmp_write(const char *name, const char *text);

#endif
