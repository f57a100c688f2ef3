// SPDX-License-Identifier: GPL-2.0
/*
 * Render benchmark: a Locks frame with 10,000 rows drawn into a 200x60
 * canvas, no terminal.  Prints the time per frame for
 *   draw:   the frame alone (moving the selection, a repaint);
 *   resort: a new sort column and the frame (the rows are not queried again);
 *   new:    a new interval: query of the store, sort and frame.
 * Goal: <= 2 ms per frame.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mmscope/canvas.h"
#include "mmscope/view.h"

#define ROWS 10000
#define INTERVALS 10
#define SEC 1000000000ULL

static double now(void)
{
	struct timespec ts;

	/* CPU time of this thread: the cost, whatever else the machine is doing. */
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint32_t tasks[16], locks[ROWS];

static int add_interval(struct mms_store *st, int iv)
{
	if (!mms_store_begin(st, 1700000000ULL * SEC + (uint64_t)iv * SEC))
		return -1;
	for (int i = 0; i < ROWS; i++) {
		struct mms_lock_sample s = { .lock_id = locks[i], .task_id = tasks[i % 16],
					     .flags = MMS_LCB_SPIN };

		/* Spread waits so every column sorts differently. */
		mms_stat_add_n(&s.wait, 1000 + (uint64_t)((i * 7919 + iv * 31) % 100000),
			       1 + (uint64_t)(i % 13));
		if (mms_store_add_lock(st, &s))
			return -1;
	}
	return mms_store_commit(st, SEC, 0);
}

static int fill(struct mms_store *st)
{
	char name[64];

	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "worker-%d", i);
		tasks[i] = mms_store_task(st, 1000 + (uint32_t)i, 1000, name);
	}
	for (int i = 0; i < ROWS; i++) {
		struct mms_lock_info li = { .addr = 0xffff888100000000ULL + (uint64_t)i * 64,
					    .kind = MMS_LOCK_SLAB };

		snprintf(name, sizeof(name), "&cache-%d", i);
		li.name_id = mms_store_str(st, name);
		locks[i] = mms_store_lock(st, &li);
	}
	for (int iv = 0; iv < INTERVALS; iv++)
		if (add_interval(st, iv))
			return -1;
	return 0;
}

int main(void)
{
	struct mms_store_opts so = { .max_bytes = 1ULL << 30 };
	const struct mms_view *v = mms_views[0];
	struct mms_view_env env;
	struct mms_canvas *c;
	struct mms_store *st;
	void *priv;
	double t0, draw_ms, sort_ms, new_ms;
	int n;

	if (mms_store_create(&so, &st) || fill(st) || mms_canvas_create(200, 60, true, &c) ||
	    v->create(&priv)) {
		fprintf(stderr, "render_bench: setup failed\n");
		return 1;
	}
	mms_view_env_init(&env, st, -1, MMS_RANGE_INTERVAL);
	/* Warm-up: the first frame fills the per-interval sparkline cache. */
	v->update(priv, &env);
	v->draw(priv, &env, c, 4, 55);
	if (v->list(priv)->nr != ROWS) {
		fprintf(stderr, "render_bench: %zu rows, expected %d\n", v->list(priv)->nr, ROWS);
		return 1;
	}
	n = 200;
	t0 = now();
	for (int i = 0; i < n; i++) {
		mms_canvas_clear(c);
		v->draw(priv, &env, c, 4, 55);
	}
	draw_ms = (now() - t0) * 1e3 / n;
	n = 50;
	t0 = now();
	for (int i = 0; i < n; i++) {
		mms_list_sort_step(v->list(priv), 1);
		v->update(priv, &env);
		mms_canvas_clear(c);
		v->draw(priv, &env, c, 4, 55);
	}
	sort_ms = (now() - t0) * 1e3 / n;
	n = 20;
	new_ms = 0;
	for (int i = 0; i < n; i++) {
		/* A new interval arrives (not timed), then the view catches up with it. */
		if (add_interval(st, INTERVALS + i))
			return 1;
		mms_view_env_init(&env, st, -1, MMS_RANGE_INTERVAL);
		t0 = now();
		v->update(priv, &env);
		mms_canvas_clear(c);
		v->draw(priv, &env, c, 4, 55);
		new_ms += now() - t0;
	}
	new_ms = new_ms * 1e3 / n;
	printf("Locks view, %d rows, 200x60 canvas, CPU time per frame: draw %.3f ms, resort "
	       "%.3f ms, new interval %.3f ms (goal <= 2 ms)\n", ROWS, draw_ms, sort_ms, new_ms);
	v->destroy(priv);
	mms_canvas_destroy(c);
	mms_store_destroy(st);
	return 0;
}
