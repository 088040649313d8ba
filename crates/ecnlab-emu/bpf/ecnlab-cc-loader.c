// SPDX-License-Identifier: GPL-2.0
/*
 * ecnlab-cc-loader OBJECT[:NAME=VALUE,...]...: register the TCP congestion controls of
 * BPF objects (their struct_ops maps) for as long as this process lives.
 *
 * NAME=VALUE sets a parameter of the object before it is loaded: a `const volatile __u32`
 * global of its .rodata (the scenario's values, e.g. shift_g; the verifier then sees
 * constants). An unknown NAME is an error.
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
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
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

/* Set the __u32 .rodata variable `name` of obj (opened, not loaded) to `value`. */
static int set_param(struct bpf_object *obj, const char *name, unsigned long value)
{
	struct btf *btf = bpf_object__btf(obj);
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	struct bpf_map *map;
	size_t size = 0;
	char *data = NULL;
	int id, i;

	bpf_object__for_each_map(map, obj) {
		const char *mname = bpf_map__name(map);
		size_t n = strlen(mname);

		if (n >= 7 && strcmp(mname + n - 7, ".rodata") == 0)
			data = (char *)bpf_map__initial_value(map, &size);
	}
	id = btf ? btf__find_by_name_kind(btf, ".rodata", BTF_KIND_DATASEC) : -1;
	if (!data || id < 0)
		return -ENOENT;
	sec = btf__type_by_id(btf, id);
	v = btf_var_secinfos(sec);
	for (i = 0; i < btf_vlen(sec); i++, v++) {
		const struct btf_type *var = btf__type_by_id(btf, v->type);

		if (strcmp(btf__name_by_offset(btf, var->name_off), name) != 0)
			continue;
		if (v->size != sizeof(__u32) || v->offset + v->size > size)
			return -EINVAL;
		*(__u32 *)(data + v->offset) = (__u32)value;
		return 0;
	}
	return -ENOENT;
}

int main(int argc, char **argv)
{
	pid_t parent = getppid();
	char buf[64];
	int i, n_links = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: ecnlab-cc-loader OBJECT.bpf.o[:NAME=VALUE,...]...\n");
		return 2;
	}
	/* Die with the parent; if it is already gone, do not register anything. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		return 1;
	libbpf_set_print(keep_last);

	for (i = 1; i < argc; i++) {
		char *params = strrchr(argv[i], ':');
		struct bpf_object *obj;
		struct bpf_map *map;
		char *tok, *save = NULL;
		int err;

		if (params)
			*params++ = 0;
		obj = bpf_object__open_file(argv[i], NULL);
		if (!obj)
			return fail("cannot open", argv[i], errno);
		for (tok = params ? strtok_r(params, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(tok, '=');

			if (!eq) {
				printf("error: %s: parameter `%s` is not NAME=VALUE\n", argv[i], tok);
				return 1;
			}
			*eq = 0;
			err = set_param(obj, tok, strtoul(eq + 1, NULL, 0));
			if (err) {
				printf("error: %s has no parameter %s\n", argv[i], tok);
				return 1;
			}
		}
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
