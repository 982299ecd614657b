/* SPDX-License-Identifier: MIT */
/*
 * The few C library functions the core uses, written here so that it builds
 * freestanding (PA_FREESTANDING=ON needs only memcpy, memmove, memset and
 * memcmp from its embedder): a small printf-style formatter for the reports
 * and messages, string comparison and search, decimal parsing, and a sort.
 * The formatter knows the conversions the core writes (d i u x c s f %, with
 * flags, width and precision), byte for byte as the C library writes them.
 */
#include "platform/platform.h"

/* ---------------------------------------------------------------------- */
/* Formatter                                                               */
/* ---------------------------------------------------------------------- */

/* Output bounded by len, counting on past it, as snprintf does. */
struct fmt_out {
	char *buf;
	size_t len;
	size_t pos;
};

static void out_char(struct fmt_out *o, char c)
{
	if (o->pos + 1 < o->len)
		o->buf[o->pos] = c;
	o->pos++;
}

static void out_repeat(struct fmt_out *o, char c, int n)
{
	for (; n > 0; n--)
		out_char(o, c);
}

static void out_bytes(struct fmt_out *o, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		out_char(o, s[i]);
}

/* One conversion's flags, width and precision (-1: none). */
struct fmt_spec {
	bool left, zero, alt, plus, space;
	int width, prec;
};

/* Pad a field of n bytes to the width, the padding where the flags put it. */
static void out_field(struct fmt_out *o, const struct fmt_spec *sp, const char *prefix,
                      const char *digits, size_t n)
{
	size_t np = 0;
	while (prefix[np])
		np++;
	int pad = sp->width - (int)(n + np);
	if (!sp->left && !sp->zero)
		out_repeat(o, ' ', pad);
	out_bytes(o, prefix, np);
	if (!sp->left && sp->zero)
		out_repeat(o, '0', pad);
	out_bytes(o, digits, n);
	if (sp->left)
		out_repeat(o, ' ', pad);
}

/* Digits of v in base 10 or 16 at the end of a buffer of 24; where they start. */
static char *fmt_digits(char *end, unsigned long long v, unsigned base, bool upper)
{
	const char *set = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	do {
		*--end = set[v % base];
		v /= base;
	} while (v);
	return end;
}

static void out_integer(struct fmt_out *o, struct fmt_spec sp, unsigned long long v, bool neg,
                        unsigned base, bool upper)
{
	char tmp[48], *end = tmp + sizeof tmp;
	char *d = sp.prec == 0 && v == 0 ? end : fmt_digits(end, v, base, upper);
	/* A precision is a minimum of digits, and turns zero padding off. */
	while (sp.prec > 0 && end - d < sp.prec)
		*--d = '0';
	if (sp.prec >= 0)
		sp.zero = false;
	const char *prefix = neg ? "-" : sp.plus ? "+" : sp.space ? " " : "";
	if (base == 16 && sp.alt && v)
		prefix = upper ? "0X" : "0x";
	out_field(o, &sp, prefix, d, (size_t)(end - d));
}

/* %f: fixed point, rounded to the precision (6 by default), for the few figures the core prints. */
static void out_fixed(struct fmt_out *o, struct fmt_spec sp, double v)
{
	bool neg = v < 0;
	if (neg)
		v = -v;
	int prec = sp.prec < 0 ? 6 : sp.prec > 9 ? 9 : sp.prec;
	unsigned long long scale = 1;
	for (int i = 0; i < prec; i++)
		scale *= 10;
	unsigned long long whole = (unsigned long long)v;
	unsigned long long frac = (unsigned long long)((v - (double)whole) * (double)scale + 0.5);
	if (frac >= scale) {
		whole++;
		frac -= scale;
	}
	char tmp[48], *end = tmp + sizeof tmp, *d = end;
	if (prec) {
		for (int i = 0; i < prec; i++, frac /= 10)
			*--d = (char)('0' + frac % 10);
		*--d = '.';
	}
	d = fmt_digits(d, whole, 10, false);
	out_field(o, &sp, neg ? "-" : sp.plus ? "+" : "", d, (size_t)(end - d));
}

static void out_string(struct fmt_out *o, struct fmt_spec sp, const char *s)
{
	if (!s)
		s = "(null)";
	size_t n = 0;
	while (s[n] && (sp.prec < 0 || n < (size_t)sp.prec))
		n++;
	sp.zero = false;
	out_field(o, &sp, "", s, n);
}

/* Flags, width and precision of the conversion at *fmt; *fmt moves past them. */
static struct fmt_spec fmt_parse_spec(const char **fmt, va_list *ap)
{
	struct fmt_spec sp = { .prec = -1 };
	const char *f = *fmt;
	for (;; f++) {
		if (*f == '-')
			sp.left = true;
		else if (*f == '0')
			sp.zero = true;
		else if (*f == '#')
			sp.alt = true;
		else if (*f == '+')
			sp.plus = true;
		else if (*f == ' ')
			sp.space = true;
		else
			break;
	}
	if (*f == '*') {
		sp.width = va_arg(*ap, int);
		if (sp.width < 0) {
			sp.left = true;
			sp.width = -sp.width;
		}
		f++;
	}
	for (; *f >= '0' && *f <= '9'; f++)
		sp.width = sp.width * 10 + (*f - '0');
	if (*f == '.') {
		f++;
		sp.prec = 0;
		if (*f == '*') {
			sp.prec = va_arg(*ap, int);
			f++;
		}
		for (; *f >= '0' && *f <= '9'; f++)
			sp.prec = sp.prec * 10 + (*f - '0');
	}
	if (sp.left)
		sp.zero = false;
	*fmt = f;
	return sp;
}

/* The length modifier: 0 int, 1 long, 2 long long (size_t and the rest are long here). */
static int fmt_parse_length(const char **fmt)
{
	int l = 0;
	for (;; (*fmt)++) {
		char c = **fmt;
		if (c == 'l')
			l++;
		else if (c == 'z' || c == 'j' || c == 't')
			l = 2;
		else if (c != 'h')
			return l;
	}
}

static long long fmt_signed(va_list *ap, int l)
{
	return l == 0 ? va_arg(*ap, int) : l == 1 ? va_arg(*ap, long) : va_arg(*ap, long long);
}

static unsigned long long fmt_unsigned(va_list *ap, int l)
{
	return l == 0 ? va_arg(*ap, unsigned) :
	       l == 1 ? va_arg(*ap, unsigned long) :
	                va_arg(*ap, unsigned long long);
}

static void fmt_convert(struct fmt_out *o, char c, struct fmt_spec sp, int l, va_list *ap)
{
	switch (c) {
	case 'd':
	case 'i': {
		long long v = fmt_signed(ap, l);
		unsigned long long mag =
		        v < 0 ? 0ull - (unsigned long long)v : (unsigned long long)v;
		out_integer(o, sp, mag, v < 0, 10, false);
		break;
	}
	case 'u':
		out_integer(o, sp, fmt_unsigned(ap, l), false, 10, false);
		break;
	case 'x':
	case 'X':
		out_integer(o, sp, fmt_unsigned(ap, l), false, 16, c == 'X');
		break;
	case 'p':
		sp.alt = true;
		out_integer(o, sp, (uintptr_t)va_arg(*ap, void *), false, 16, false);
		break;
	case 'c': {
		char ch = (char)va_arg(*ap, int);
		sp.zero = false;
		out_field(o, &sp, "", &ch, 1);
		break;
	}
	case 's':
		out_string(o, sp, va_arg(*ap, const char *));
		break;
	case 'f':
		out_fixed(o, sp, va_arg(*ap, double));
		break;
	default: /* %% and anything unknown: the character itself */
		out_char(o, c);
		break;
	}
}

int pa_vsnprintf(char *buf, size_t len, const char *fmt, va_list ap)
{
	struct fmt_out o = { buf, len, 0 };
	va_list aq;
	va_copy(aq, ap);
	while (*fmt) {
		if (*fmt != '%') {
			out_char(&o, *fmt++);
			continue;
		}
		fmt++;
		struct fmt_spec sp = fmt_parse_spec(&fmt, &aq);
		int l = fmt_parse_length(&fmt);
		if (!*fmt)
			break;
		fmt_convert(&o, *fmt++, sp, l, &aq);
	}
	va_end(aq);
	if (len)
		buf[o.pos < len ? o.pos : len - 1] = '\0';
	return o.pos > INT_MAX ? INT_MAX : (int)o.pos;
}

int pa_snprintf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = pa_vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	return n;
}

/* ---------------------------------------------------------------------- */
/* Strings                                                                 */
/* ---------------------------------------------------------------------- */

size_t pa_strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

int pa_strncmp(const char *a, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ca = (unsigned char)a[i], cb = (unsigned char)b[i];
		if (ca != cb || !ca)
			return ca - cb;
	}
	return 0;
}

int pa_strcmp(const char *a, const char *b)
{
	return pa_strncmp(a, b, SIZE_MAX);
}

char *pa_strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

/* The length of s's first run of bytes that are (in) or are not (!in) in set. */
static size_t span(const char *s, const char *set, bool in)
{
	size_t n = 0;
	while (s[n] && (pa_strchr(set, s[n]) != NULL) == in)
		n++;
	return n;
}

size_t pa_strspn(const char *s, const char *accept)
{
	return span(s, accept, true);
}

size_t pa_strcspn(const char *s, const char *reject)
{
	return span(s, reject, false);
}

bool pa_isspace(int c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

char pa_tolower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

bool pa_isdigit(int c)
{
	return c >= '0' && c <= '9';
}

/*
 * Decimal digits at s, as strtoull in base 10 without its leading spaces
 * or sign: *end past the last digit (s when there is none); UINT64_MAX and
 * *overflow set when the number does not fit.
 */
uint64_t pa_parse_u64(const char *s, const char **end, bool *overflow)
{
	uint64_t v = 0;
	*overflow = false;
	for (; pa_isdigit(*s); s++) {
		unsigned d = (unsigned)(*s - '0');
		if (v > (UINT64_MAX - d) / 10)
			*overflow = true;
		v = *overflow ? UINT64_MAX : v * 10 + d;
	}
	*end = s;
	return v;
}

/* ---------------------------------------------------------------------- */
/* Sorting                                                                 */
/* ---------------------------------------------------------------------- */

static void swap_bytes(char *a, char *b, size_t size)
{
	for (size_t i = 0; i < size; i++) {
		char t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

/* Move the element at root down its heap of n elements until both children are smaller. */
static void sift_down(char *base, size_t root, size_t n, size_t size,
                      int (*cmp)(const void *, const void *))
{
	for (size_t child; (child = 2 * root + 1) < n; root = child) {
		if (child + 1 < n && cmp(base + child * size, base + (child + 1) * size) < 0)
			child++;
		if (cmp(base + root * size, base + child * size) >= 0)
			return;
		swap_bytes(base + root * size, base + child * size, size);
	}
}

/* A heap sort: O(n log n) always, no memory, as qsort's contract asks (order of equals aside). */
void pa_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	char *b = base;
	for (size_t i = n / 2; i-- > 0;)
		sift_down(b, i, n, size, cmp);
	for (size_t end = n; end > 1; end--) {
		swap_bytes(b, b + (end - 1) * size, size);
		sift_down(b, 0, end - 1, size, cmp);
	}
}
