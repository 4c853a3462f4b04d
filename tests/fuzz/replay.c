/* SPDX-License-Identifier: MIT */
/* Runs the fuzz target over corpus files: the plain-build stand-in for libFuzzer. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
	size_t got = buf ? fread(buf, 1, (size_t)n, f) : 0;
	fclose(f);
	if (!buf || got != (size_t)n) {
		fprintf(stderr, "%s: read failed\n", path);
		free(buf);
		return 1;
	}
	LLVMFuzzerTestOneInput(buf, got);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 0, failed = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			DIR *d = opendir(argv[i]);
			struct dirent *e;
			while (d && (e = readdir(d))) {
				if (e->d_name[0] == '.')
					continue;
				char path[4096];
				snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
				failed += run_file(path);
				files++;
			}
			if (d)
				closedir(d);
		} else {
			failed += run_file(argv[i]);
			files++;
		}
	}
	printf("%d passed, %d failed\n", files - failed, failed);
	return failed || files == 0 ? 1 : 0;
}
