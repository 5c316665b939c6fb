/* speedscope's file format (https://www.speedscope.app/file-format-schema.json): one sampled profile, a sample
 * per distinct stack, weighted in nanoseconds. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/version.h"
#include "report/cprof.h"
#include "report/render/stacks.h"

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int write_speedscope(FILE *f, const struct cprof_stacks_doc *d)
{
	const struct cprof_flame *fl = d->flame;
	char **names = NULL, *copy = NULL, **key;
	size_t n = 0, cap = 0, i, k, u;
	int ret = 0;
	char *p, *save;

	/* every frame name once: the shared frame table */
	for (i = 0; i < fl->n; i++) {
		free(copy);
		if ((copy = strdup(fl->v[i].path)) == NULL)
			goto nomem;
		for (p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
			if (cprof_grow(&names, &cap, n, sizeof(*names)) < 0 || (names[n] = strdup(p)) == NULL)
				goto nomem;
			n++;
		}
	}
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (i = 0, u = 0; i < n; i++) {
		if (u && !strcmp(names[u - 1], names[i]))
			free(names[i]);
		else
			names[u++] = names[i];
	}
	n = u;
	fprintf(f, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\"exporter\":\"cprof %s\",\"name\":",
		CPROF_VERSION);
	cprof_json_str(f, d->profile);
	fprintf(f, ",\"activeProfileIndex\":0,\"shared\":{\"frames\":[");
	for (i = 0; i < n; i++) {
		fprintf(f, "%s{\"name\":", i ? "," : "");
		cprof_json_str(f, names[i]);
		fputc('}', f);
	}
	fprintf(f, "]},\"profiles\":[{\"type\":\"sampled\",\"name\":");
	{
		char title[64];

		snprintf(title, sizeof(title), "%s time%s", d->weight == CPROF_FLAME_CPU ? "host (CUDA calls)" : "GPU",
			 d->simulated ? ", simulated GPU" : "");
		cprof_json_str(f, title);
	}
	fprintf(f, ",\"unit\":\"nanoseconds\",\"startValue\":0,\"endValue\":%llu,\"samples\":[",
		(unsigned long long)fl->total);
	for (i = 0; i < fl->n; i++) {
		free(copy);
		if ((copy = strdup(fl->v[i].path)) == NULL)
			goto nomem;
		fputs(i ? ",[" : "[", f);
		for (k = 0, p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save), k++) {
			key = bsearch(&p, names, n, sizeof(*names), cmp_str);
			fprintf(f, "%s%zu", k ? "," : "", key ? (size_t)(key - names) : 0);
		}
		fputc(']', f);
	}
	fprintf(f, "],\"weights\":[");
	for (i = 0; i < fl->n; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)fl->v[i].weight);
	fprintf(f, "]}]}\n");
	goto out;
nomem:
	ret = -ENOMEM;
out:
	free(copy);
	for (i = 0; i < n; i++)
		free(names[i]);
	free(names);
	return ret;
}

const struct cprof_stacks_fmt cprof_stacks_speedscope = { "speedscope", write_speedscope };
