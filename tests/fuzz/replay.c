/* SPDX-License-Identifier: MIT */
/*
 * Run a fuzz target once on each file named on the command line, or on each
 * file of each directory named: the seed corpus and every input that once
 * broke the library, as regression tests in every build (no clang needed).
 */
#include "fuzz.h"

#include <dirent.h>
#include <sys/stat.h>

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "replay: cannot open %s\n", path);
		return 1;
	}
	static uint8_t buf[1 << 20];
	size_t n = fread(buf, 1, sizeof buf, f);
	fclose(f);
	/* A copy of exactly n bytes, so that reading past the input shows under ASan. */
	uint8_t *copy = malloc(n ? n : 1);
	if (!copy)
		return 1;
	memcpy(copy, buf, n);
	LLVMFuzzerTestOneInput(copy, n);
	free(copy);
	return 0;
}

static int run_path(const char *path, unsigned *files)
{
	struct stat st;
	if (stat(path, &st) != 0) {
		fprintf(stderr, "replay: no such file or directory: %s\n", path);
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		++*files;
		return run_file(path);
	}
	DIR *dir = opendir(path);
	if (!dir)
		return 1;
	int rc = 0;
	for (struct dirent *e; (e = readdir(dir));) {
		if (e->d_name[0] == '.')
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
		rc |= run_path(sub, files);
	}
	closedir(dir);
	return rc;
}

int main(int argc, char **argv)
{
	unsigned files = 0;
	int rc = 0;
	for (int i = 1; i < argc; i++)
		rc |= run_path(argv[i], &files);
	printf("%u inputs replayed\n", files);
	return rc || files == 0;
}
