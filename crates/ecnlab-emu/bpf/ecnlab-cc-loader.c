// SPDX-License-Identifier: GPL-2.0
/*
 * ecnlab-cc-loader OBJECT...: register the TCP congestion controls of BPF objects (their
 * struct_ops maps) for as long as this process lives.
 *
 * Each algorithm is registered through a BPF link (struct_ops maps created with
 * BPF_F_LINK, kernel 6.4+): the kernel unregisters it when the link's last file
 * descriptor closes, i.e. when this process dies, whatever kills it. `ecnlab emulate`
 * starts it, waits for `ready`, and ends it with the run; it also dies with its parent
 * (PR_SET_PDEATHSIG) and when its stdin closes, so a SIGKILLed run leaves nothing
 * registered. (Without BPF_F_LINK, a struct_ops map stays registered after every file
 * descriptor is closed, until someone deletes it.)
 *
 * Output: `ready` on success; otherwise one line `error: WHY` (the verifier's or
 * libbpf's last informative message) and exit status 1.
 *
 * libbpf 1.1 (Debian 12) predates SEC(".struct_ops.link"), so the flag is set here and
 * the link created with bpf_link_create, as later libbpf versions do themselves.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

/* include/uapi/linux/bpf.h of 6.4+, absent from older userspace headers. */
#define ECNLAB_BPF_F_LINK (1U << 13)
#define ECNLAB_BPF_STRUCT_OPS 44

static char last_msg[512];

/* Keep libbpf's last warning (a failed load prints the verifier log, then a summary). */
static int keep_last(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char line[512];
	size_t n;

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strcspn(line, "\n");
	line[n] = 0;
	if (n > 0 && strncmp(line, "libbpf: -- BEGIN", 16) != 0 && strncmp(line, "libbpf: -- END", 14) != 0)
		snprintf(last_msg, sizeof(last_msg), "%s", line);
	return 0;
}

static int fail(const char *what, const char *path, int err)
{
	printf("error: %s %s: %s%s%s%s\n", what, path, strerror(err < 0 ? -err : err), last_msg[0] ? " (" : "",
	       last_msg, last_msg[0] ? ")" : "");
	fflush(stdout);
	return 1;
}

int main(int argc, char **argv)
{
	pid_t parent = getppid();
	char buf[64];
	int i, n_links = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: ecnlab-cc-loader OBJECT.bpf.o...\n");
		return 2;
	}
	/* Die with the parent; if it is already gone, do not register anything. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return 1;
	libbpf_set_print(keep_last);

	for (i = 1; i < argc; i++) {
		struct bpf_object *obj = bpf_object__open_file(argv[i], NULL);
		struct bpf_map *map;
		int err;

		if (!obj)
			return fail("cannot open", argv[i], errno);
		bpf_object__for_each_map(map, obj) {
			if (bpf_map__type(map) == BPF_MAP_TYPE_STRUCT_OPS)
				bpf_map__set_map_flags(map, bpf_map__map_flags(map) | ECNLAB_BPF_F_LINK);
		}
		err = bpf_object__load(obj);
		if (err)
			return fail("the kernel refused", argv[i], err);
		bpf_object__for_each_map(map, obj) {
			struct bpf_link *prep;
			int fd;

			if (bpf_map__type(map) != BPF_MAP_TYPE_STRUCT_OPS)
				continue;
			/* Fills the map's value (the programs' fds); with BPF_F_LINK this does
			 * not register yet. */
			prep = bpf_map__attach_struct_ops(map);
			if (!prep)
				return fail("cannot prepare", bpf_map__name(map), errno);
			fd = bpf_link_create(bpf_map__fd(map), 0, ECNLAB_BPF_STRUCT_OPS, NULL);
			if (fd < 0)
				return fail("cannot register", bpf_map__name(map), errno);
			n_links++;
		}
	}
	if (!n_links) {
		printf("error: no struct_ops map in %s\n", argv[1]);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	/* Hold the links until stdin closes (the run ended) or a signal ends the process. */
	while (read(0, buf, sizeof(buf)) > 0)
		;
	return 0;
}
