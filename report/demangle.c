/* Kernel names for people: the C++ ABI demangler (libstdc++'s __cxa_demangle) and a shortened form for tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/cprof.h"

char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *cprof_demangle(const char *name)
{
	int status = -1;
	char *d;

	if (name == NULL)
		return strdup("?");
	if (name[0] == '_' && name[1] == 'Z') {
		d = __cxa_demangle(name, NULL, NULL, &status);
		if (status == 0 && d)
			return d;
		free(d);
	}
	return strdup(name);
}

/* Template arguments and parameter lists collapse to <...> and (...); cut at size only. Returns its length. */
size_t cprof_fold(const char *full, char *out, size_t size)
{
	size_t n = strlen(full), o = 0, i;
	int depth = 0;

	for (i = 0; i < n && o + 4 < size; i++) {
		char c = full[i];

		if (c == '<' || c == '(') {
			if (depth++ == 0) {
				out[o++] = c;
				out[o++] = '.';
				out[o++] = '.';
				out[o++] = '.';
			}
			continue;
		}
		if (c == '>' || c == ')') {
			if (depth > 0 && --depth == 0)
				out[o++] = c;
			continue;
		}
		if (depth == 0)
			out[o++] = c;
	}
	out[o] = '\0';
	return o;
}

/* Template arguments and parameter lists collapse to <...> and (...) until the name fits. */
void cprof_shorten(const char *full, char *out, size_t size)
{
	size_t n = strlen(full), o;

	if (n < size && n <= 70) {
		memcpy(out, full, n + 1);
		return;
	}
	o = cprof_fold(full, out, size);
	if (o > 70 && size > 71) {
		/* still long: the start names the kernel (library, architecture, tile). Cut before a folded "<..." the
		 * cut would split ("vectorized<......" was shown), and at a whole UTF-8 sequence */
		size_t p = 67;

		while (p > 0 && ((unsigned char)out[p] & 0xc0) == 0x80)
			p--;
		while (p > 0 && (out[p - 1] == '.' || out[p - 1] == '<' || out[p - 1] == '('))
			p--;
		memcpy(out + p, "...", 4);
	}
}

/* Template arguments kept, parameter lists outside them folded to (...); no length limit but size. 0, or
 * -ENOSPC when it does not fit. */
int cprof_shorten_targs(const char *full, char *out, size_t size)
{
	size_t o = 0;
	int angle = 0, paren = 0;

	for (; *full; full++) {
		char c = *full;

		if (paren > 0) {
			/* inside a folded parameter list: only its end matters */
			paren += c == '(' ? 1 : c == ')' ? -1 : 0;
			if (paren == 0) {
				if (o + 1 >= size)
					return -ENOSPC;
				out[o++] = ')';
			}
			continue;
		}
		if (c == '(' && angle == 0) {
			paren = 1;
			if (o + 4 >= size)
				return -ENOSPC;
			memcpy(out + o, "(...", 4);
			o += 4;
			continue;
		}
		angle += c == '<' ? 1 : c == '>' && angle > 0 ? -1 : 0;
		if (o + 1 >= size)
			return -ENOSPC;
		out[o++] = c;
	}
	if (o >= size)
		return -ENOSPC;
	out[o] = '\0';
	return 0;
}

struct shown_key {
	char *key;
	size_t i;
};

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct shown_key *)a)->key, ((const struct shown_key *)b)->key);
}

/* the text of a name at a level, as a key to compare (malloc'd) */
static char *level_text(const char *full, int level)
{
	char buf[1024];

	if (level == 0) {
		cprof_shorten(full, buf, sizeof(buf));
		return strdup(buf);
	}
	if (level == 1 && cprof_shorten_targs(full, buf, sizeof(buf)) == 0)
		return strdup(buf);
	return strdup(full);
}

int cprof_shown_levels(const char *const *names, size_t n, unsigned char *levels)
{
	struct shown_key *k = calloc(n ? n : 1, sizeof(*k));
	size_t i, j, m;
	int level, ret = 0;

	if (k == NULL)
		return -ENOMEM;
	memset(levels, 0, n);
	/* the names that look alike at one level go up to the next: folded, template arguments, whole */
	for (level = 0; level < 2; level++) {
		for (i = 0, m = 0; i < n; i++) {
			if (levels[i] != level)
				continue;
			k[m].i = i;
			if ((k[m++].key = level_text(names[i], level)) == NULL) {
				ret = -ENOMEM;
				goto out;
			}
		}
		qsort(k, m, sizeof(*k), by_key);
		for (i = 0; i < m; i = j) {
			int differ = 0;

			for (j = i + 1; j < m && !strcmp(k[i].key, k[j].key); j++)
				differ |= strcmp(names[k[i].i], names[k[j].i]) != 0;
			/* the same name twice (two rows of one kernel) has nothing to tell apart */
			while (differ && i < j)
				levels[k[i++].i] = (unsigned char)(level + 1);
		}
		for (i = 0; i < m; i++) {
			free(k[i].key);
			k[i].key = NULL;
		}
	}
out:
	if (ret < 0)
		memset(levels, 0, n);
	for (i = 0; i < n; i++)
		free(k[i].key);
	free(k);
	return ret;
}

struct twin {
	char *fold;
	size_t i;
};

static int twin_cmp(const void *a, const void *b)
{
	const struct twin *x = a, *y = b;
	int c = strcmp(x->fold, y->fold);

	return c ? c : x->i < y->i ? -1 : x->i > y->i;
}

int cprof_twin_numbers(const char *const *names, size_t n, unsigned *num)
{
	unsigned char *levels = calloc(n ? n : 1, 1);
	struct twin *w = calloc(n ? n : 1, sizeof(*w));
	size_t i, j, m = 0;
	char fold[1024];
	int ret = -ENOMEM;

	memset(num, 0, n * sizeof(*num));
	if (!levels || !w || (ret = cprof_shown_levels(names, n, levels)) < 0)
		goto out;
	ret = -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!levels[i])
			continue;
		cprof_fold(names[i], fold, sizeof(fold));
		if ((w[m].fold = strdup(fold)) == NULL)
			goto out;
		w[m++].i = i;
	}
	/* one sort: a walk of the rows before each was quadratic (10,000 twins under --top 0: 23 s of a report) */
	qsort(w, m, sizeof(*w), twin_cmp);
	for (i = 0; i < m; i = j)
		for (j = i; j < m && !strcmp(w[j].fold, w[i].fold); j++)
			num[w[j].i] = (unsigned)(j - i + 1);
	ret = 0;
out:
	if (ret < 0)
		memset(num, 0, n * sizeof(*num));
	for (i = 0; w && i < m; i++)
		free(w[i].fold);
	free(w);
	free(levels);
	return ret;
}
