// SPDX-License-Identifier: GPL-2.0
/*
 * A benchmark's score from its output or a file (include/mmscope/score.h).
 * Output is hostile like any other input: lines are bounded, captures are
 * cut to fit, and nothing from it reaches a message with control bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmscope/escape.h"
#include "mmscope/score.h"

void mms_score_copy_text(char *dst, size_t cap, const char *s, size_t n)
{
	mms_copy_clean(dst, cap, s, n);
}

int mms_score_rx_init(struct mms_score_rx *m, const char *regex, char *err, size_t len)
{
	char why[256];
	int e;

	memset(m, 0, sizeof(*m));
	e = regcomp(&m->re, regex, REG_EXTENDED | REG_NEWLINE);
	if (e) {
		regerror(e, &m->re, why, sizeof(why));
		snprintf(err, len, "--score '%s' is not a valid extended regular expression: %s",
			 regex, why);
		return -EINVAL;
	}
	if (m->re.re_nsub != 1) {
		snprintf(err, len, "--score '%s' has %zu capture groups; it needs exactly one, "
			 "around the number, as in 'Throughput ([0-9.]+)'%s", regex, m->re.re_nsub,
			 m->re.re_nsub ? " (every ( ) of an ERE captures: drop the others)" : "");
		regfree(&m->re);
		return -EINVAL;
	}
	return 0;
}

void mms_score_rx_free(struct mms_score_rx *m)
{
	regfree(&m->re);
}

/* The word after a match: "3511.5 lps (29.9 s)" gives "lps". */
static void word_after(char *dst, size_t cap, const char *s)
{
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strcspn(s, " \t(,;");
	mms_score_copy_text(dst, cap, s, n);
}

static void match_line(struct mms_score_rx *m)
{
	const char *s = m->line;
	regmatch_t g[2];
	int flags = 0;

	m->line[m->len] = 0;
	m->lineno++;
	/* Every match on the line, so that the last one of the output wins. */
	while (!regexec(&m->re, s, 2, g, flags)) {
		size_t n = g[1].rm_so < 0 ? 0 : (size_t)(g[1].rm_eo - g[1].rm_so);

		if (g[1].rm_so >= 0) {
			m->matches++;
			m->last_line = m->lineno;
			m->last_cut = n >= sizeof(m->last);
			mms_score_copy_text(m->last, sizeof(m->last), s + g[1].rm_so, n);
			word_after(m->unit, sizeof(m->unit), s + g[1].rm_eo);
		}
		if (g[0].rm_eo == 0 || !s[g[0].rm_eo])
			break;	/* an empty match, or the line is done */
		s += g[0].rm_eo;
		flags = REG_NOTBOL;
	}
}

void mms_score_rx_feed(struct mms_score_rx *m, const char *buf, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char c = buf[i];

		if (c == '\n') {
			match_line(m);
			m->len = 0;
			m->overlong = false;
			continue;
		}
		/* A NUL would end the line for regexec: the text is not a number there anyway. */
		if (m->len < sizeof(m->line) - 1)
			m->line[m->len++] = c ? c : ' ';
		else
			m->overlong = true;
	}
}

void mms_score_rx_end(struct mms_score_rx *m)
{
	if (m->len || m->overlong)
		match_line(m);
	m->len = 0;
	m->overlong = false;
}

int mms_score_parse(const char *text, double *v, char *err, size_t len)
{
	const char *s = text;
	char *end;
	size_t n;

	while (*s == ' ' || *s == '\t')
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	if (!n) {
		snprintf(err, len, "it is empty, not a number");
		return -EINVAL;
	}
	/* Decimal only: strtod would also take "0x1f", "inf" and "nan". */
	if (strspn(s, "0123456789+-.eE") < n) {
		snprintf(err, len, "'%.*s' is not a number (only digits, sign, '.' and an "
			 "exponent; no thousands separators or units)", (int)(n > 40 ? 40 : n), s);
		return -EINVAL;
	}
	errno = 0;
	*v = strtod(s, &end);
	if (end != s + n || errno == ERANGE || !isfinite(*v)) {
		snprintf(err, len, "'%.*s' is not a number", (int)(n > 40 ? 40 : n), s);
		return -EINVAL;
	}
	return 0;
}

int mms_score_rx_result(const struct mms_score_rx *m, const char *regex, struct mms_rec_run *run)
{
	char why[160];

	run->matches = m->matches;
	snprintf(run->source, sizeof(run->source), "regex '%s'", regex);
	if (!m->matches) {
		snprintf(run->error, sizeof(run->error), "no line of the command's output matched "
			 "'%s' (%llu lines read): check the regex against what it printed", regex,
			 (unsigned long long)m->lineno);
		return -ENOENT;
	}
	if (m->last_cut) {
		snprintf(run->error, sizeof(run->error), "line %llu: the match '%s...' is too long "
			 "for a number: capture only the number", (unsigned long long)m->last_line,
			 m->last);
		return -EINVAL;
	}
	if (mms_score_parse(m->last, &run->score, why, sizeof(why))) {
		snprintf(run->error, sizeof(run->error), "line %llu (the last of %u matches): %s: "
			 "make the capture group match only the number",
			 (unsigned long long)m->last_line, m->matches, why);
		return -EINVAL;
	}
	mms_score_copy_text(run->text, sizeof(run->text), m->last, strlen(m->last));
	if (!run->unit[0])
		mms_score_copy_text(run->unit, sizeof(run->unit), m->unit, strlen(m->unit));
	run->has_score = true;
	return 0;
}

void mms_score_file_note(const char *path, struct mms_score_file_before *b)
{
	memset(b, 0, sizeof(*b));
	b->existed = !stat(path, &b->st);
}

int mms_score_file_result(const char *path, const struct mms_score_file_before *b,
			  struct mms_rec_run *run)
{
	char buf[128], why[160];
	const char *num;
	struct stat st;
	ssize_t n;
	int fd;

	snprintf(run->source, sizeof(run->source), "file %s", path);
	/* O_NONBLOCK: a FIFO planted there must not hang the recording. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0) {
		snprintf(run->error, sizeof(run->error), "cannot read the score file %s: %s%s",
			 path, strerror(errno), errno == ENOENT ? ": the benchmark did not write "
			 "it" : "");
		return -ENOENT;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(run->error, sizeof(run->error), "the score file %s is not a regular file",
			 path);
		close(fd);
		return -EINVAL;
	}
	if (b->existed && st.st_ino == b->st.st_ino && st.st_dev == b->st.st_dev &&
	    st.st_size == b->st.st_size && st.st_mtim.tv_sec == b->st.st_mtim.tv_sec &&
	    st.st_mtim.tv_nsec == b->st.st_mtim.tv_nsec) {
		snprintf(run->error, sizeof(run->error), "the score file %s was not written during "
			 "the run: what it holds is from before", path);
		close(fd);
		return -ENOENT;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		snprintf(run->error, sizeof(run->error), "cannot read the score file %s: %s", path,
			 strerror(errno));
		return -EIO;
	}
	buf[n] = 0;
	if (n == (ssize_t)sizeof(buf) - 1 || strlen(buf) != (size_t)n) {
		snprintf(run->error, sizeof(run->error), "the score file %s holds more than one "
			 "number: it should hold just the score", path);
		return -EINVAL;
	}
	if (mms_score_parse(buf, &run->score, why, sizeof(why))) {
		snprintf(run->error, sizeof(run->error), "the score file %s: %s", path, why);
		return -EINVAL;
	}
	num = buf + strspn(buf, " \t");
	mms_score_copy_text(run->text, sizeof(run->text), num, strcspn(num, " \t\r\n"));
	run->has_score = true;
	return 0;
}

void mms_score_describe(char *buf, size_t len, const struct mms_rec_run *run)
{
	char where[48] = "";

	if (!run->present) {
		snprintf(buf, len, "%s", "");
		return;
	}
	if (run->count)
		snprintf(where, sizeof(where), "; run %u of %u", run->index, run->count);
	if (run->has_score)
		snprintf(buf, len, "%s%s%s (%s, %s is better%s%s%s)", run->text[0] ? run->text :
			 "?", run->unit[0] ? " " : "", run->unit, run->name,
			 run->lower_better ? "lower" : "higher", where,
			 run->matches > 1 ? "; the last of the lines that matched" : "",
			 run->interrupted ? "; interrupted" : "");
	else
		snprintf(buf, len, "none%s%s%s", run->error[0] ? ": " : "", run->error, where);
}
