/* Minimal JSON for the loader's JSON-lines protocol: a small DOM parser for the requests (objects,
 * arrays, strings, numbers, true/false/null) and an escaping writer for the replies and events. */
#ifndef RTCTL_JSON_OUT_H
#define RTCTL_JSON_OUT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jval {
	enum jtype type;
	double num;
	char *str;            /* J_STR: the string; J_OBJ members: the key */
	struct jval *child;   /* J_ARR / J_OBJ: first element */
	struct jval *next;    /* next sibling */
	struct jval *value;   /* object member: its value */
};

struct jparser {
	const char *p;
	const char *err;
};

static void jskip(struct jparser *js)
{
	while (*js->p == ' ' || *js->p == '\t' || *js->p == '\n' || *js->p == '\r')
		js->p++;
}

static struct jval *jnew(enum jtype t)
{
	struct jval *v = calloc(1, sizeof(*v));
	if (v)
		v->type = t;
	return v;
}

static struct jval *jparse_value(struct jparser *js, int depth);

static char *jparse_string(struct jparser *js)
{
	if (*js->p != '"') {
		js->err = "expected a string";
		return NULL;
	}
	js->p++;
	size_t cap = 64, n = 0;
	char *out = malloc(cap);
	if (!out) {
		js->err = "out of memory";
		return NULL;
	}
	while (*js->p && *js->p != '"') {
		char c = *js->p++;
		if (c == '\\') {
			char e = *js->p++;
			switch (e) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				unsigned code = 0;
				for (int i = 0; i < 4; i++) {
					char h = *js->p++;
					code <<= 4;
					if (h >= '0' && h <= '9') code |= h - '0';
					else if (h >= 'a' && h <= 'f') code |= h - 'a' + 10;
					else if (h >= 'A' && h <= 'F') code |= h - 'A' + 10;
					else { js->err = "bad \\u escape"; free(out); return NULL; }
				}
				c = code < 0x80 ? (char)code : '?';
				break;
			}
			case 0: js->err = "unterminated string"; free(out); return NULL;
			default: c = e;
			}
		}
		if (n + 2 > cap) {
			cap *= 2;
			char *grown = realloc(out, cap);
			if (!grown) { free(out); js->err = "out of memory"; return NULL; }
			out = grown;
		}
		out[n++] = c;
	}
	if (*js->p != '"') {
		js->err = "unterminated string";
		free(out);
		return NULL;
	}
	js->p++;
	out[n] = 0;
	return out;
}

static struct jval *jparse_value(struct jparser *js, int depth)
{
	if (depth > 32) {
		js->err = "nesting too deep";
		return NULL;
	}
	jskip(js);
	char c = *js->p;
	if (c == '{' || c == '[') {
		int obj = c == '{';
		struct jval *v = jnew(obj ? J_OBJ : J_ARR), *last = NULL;
		if (!v) return NULL;
		js->p++;
		jskip(js);
		if (*js->p == (obj ? '}' : ']')) {
			js->p++;
			return v;
		}
		for (;;) {
			struct jval *item;
			jskip(js);
			if (obj) {
				item = jnew(J_NULL);
				if (!item) return NULL;
				item->str = jparse_string(js);
				if (!item->str) return NULL;
				jskip(js);
				if (*js->p != ':') { js->err = "expected ':'"; return NULL; }
				js->p++;
				item->value = jparse_value(js, depth + 1);
				if (!item->value) return NULL;
			} else {
				item = jparse_value(js, depth + 1);
				if (!item) return NULL;
			}
			if (last) last->next = item; else v->child = item;
			last = item;
			jskip(js);
			if (*js->p == ',') { js->p++; continue; }
			if (*js->p == (obj ? '}' : ']')) { js->p++; return v; }
			js->err = obj ? "expected ',' or '}'" : "expected ',' or ']'";
			return NULL;
		}
	}
	if (c == '"') {
		struct jval *v = jnew(J_STR);
		if (!v) return NULL;
		v->str = jparse_string(js);
		return v->str ? v : NULL;
	}
	if (!strncmp(js->p, "true", 4) || !strncmp(js->p, "false", 5)) {
		struct jval *v = jnew(J_BOOL);
		if (!v) return NULL;
		v->num = js->p[0] == 't';
		js->p += v->num ? 4 : 5;
		return v;
	}
	if (!strncmp(js->p, "null", 4)) {
		js->p += 4;
		return jnew(J_NULL);
	}
	char *end;
	double d = strtod(js->p, &end);
	if (end == js->p) {
		js->err = "unexpected character";
		return NULL;
	}
	js->p = end;
	struct jval *v = jnew(J_NUM);
	if (v) v->num = d;
	return v;
}

static void jfree(struct jval *v)
{
	while (v) {
		struct jval *next = v->next;
		jfree(v->child);
		jfree(v->value);
		free(v->str);
		free(v);
		v = next;
	}
}

static struct jval *jget(const struct jval *obj, const char *key)
{
	if (!obj || obj->type != J_OBJ) return NULL;
	for (struct jval *m = obj->child; m; m = m->next)
		if (!strcmp(m->str, key)) return m->value;
	return NULL;
}

/* Writes s as a JSON string (quoted, escaped; bytes >= 0x80 pass through). */
static void jwrite_str(FILE *f, const char *s, size_t max)
{
	fputc('"', f);
	for (size_t i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c == '"' || c == '\\') { fputc('\\', f); fputc(c, f); }
		else if (c == '\n') fputs("\\n", f);
		else if (c == '\t') fputs("\\t", f);
		else if (c < 0x20) fprintf(f, "\\u%04x", c);
		else fputc(c, f);
	}
	fputc('"', f);
}

#endif
