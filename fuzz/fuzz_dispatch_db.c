/* libFuzzer target: the dispatch library's database reader
 * (dispatch/policy/tuned_db.c, open.c, select.c, query.c) on damaged files.
 *
 * Two builds of this file:
 *   fuzz_dispatch_db        the input is the database file itself;
 *   fuzz_dispatch_db_patch  (-DFUZZ_DB_PATCH) the input is a list of 4-byte
 *                           patches (3-byte little-endian offset modulo the
 *                           file's size, then the byte to write there)
 *                           applied to a valid tuning database built at
 *                           start-up with the tuner's writer (db/tuning_db.h),
 *                           so that mutations get past SQLite's header and
 *                           into the tables the library reads.
 * Each input is written to one file in a temporary folder per process ($FUZZ_TMPDIR, else /dev/shm,
 * else /tmp),
 * opened with atd_open(path, 0, &h), queried with atd_query_gpu for every
 * GPU of the table and a few shapes and dtypes, has the code of a few
 * winners fetched (atdi_db_code) and is closed. A file that does not open
 * is opened again with ATD_OPEN_FALLBACK, which must give a handle.
 *
 * FUZZ_DB_SEED_OUT=path writes the valid database (the start of the patch
 * mode) to path and exits: that is how fuzz/corpus/fuzz_dispatch_db/ got
 * its seed. In the patch mode, FUZZ_DB_PATCH_OUT=path also writes each
 * patched database there: run the binary on one crashing input with it to
 * turn that input into a database file for tests/fuzz_corpus/. */
#include <ftw.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/tuning_db.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/policy/tuned_db.h"
#include "include/autotune/dispatch.h"

/* libFuzzer's entry points. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static char dir[512];
static char path[600];
static unsigned char *valid;
static size_t valid_size;

static int remove_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	return remove(p);
}

static void cleanup(void)
{
	if (dir[0])
		nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

static void die(const char *what, const char *msg)
{
	fprintf(stderr, "fuzz_dispatch_db: %s: %s\n", what, msg);
	abort();
}

static void write_file(const char *p, const void *data, size_t size)
{
	FILE *f = fopen(p, "wb");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
		perror(p);
		abort();
	}
}

static unsigned char *read_file(const char *p, size_t *size)
{
	FILE *f = fopen(p, "rb");
	if (!f)
		die("cannot read", p);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	unsigned char *buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		die("cannot read", p);
	fclose(f);
	*size = (size_t)n;
	return buf;
}

/* ---- the valid database ------------------------------------------------ */

static const unsigned char fake_cubin[] = { 0x7f, 'E', 'L', 'F', 2, 1, 1, 0x33 };

static long long gpu_row(tdb *db, const char *name, int major, int minor, int sms,
			 long long mem)
{
	gpu_info g = { .cc_major = major, .cc_minor = minor, .sm_count = sms, .mem_bytes = mem };
	snprintf(g.name, sizeof g.name, "%s", name);
	long long id;
	at_error err;
	if (tdb_gpu_id(db, &g, &id, &err))
		die("tdb_gpu_id", err.msg);
	return id;
}

static void shape(tdb *db, long long sweep, long long gpu, at_dtype dt, long long M,
		  long long N, const char *tmpl, int threads, long long max_n, int with_code,
		  int passed)
{
	result_row rows[2] = {
		{ .template_name = "softmax_online", .params = "threads=128 vec=1",
		  .status = RESULT_OK, .rel_err = 1e-7, .time_us = 30, .time_min_us = 29,
		  .time_max_us = 31, .reps = 10, .registers = 20, .threads = 128,
		  .rows_per_cta = 1, .cubin = fake_cubin, .cubin_size = sizeof fake_cubin,
		  .ptx = "// slow", .arch = 90 },
		{ .template_name = tmpl, .params = "threads=256 vec=4", .status = RESULT_OK,
		  .rel_err = 1e-7, .time_us = 10, .time_min_us = 9, .time_max_us = 11,
		  .reps = 10, .registers = 32, .threads = threads, .rows_per_cta = 2,
		  .dyn_smem = 1024, .persistent = 1, .max_n = max_n, .arch = 90 },
	};
	if (with_code) {
		rows[1].cubin = fake_cubin;
		rows[1].cubin_size = sizeof fake_cubin;
		rows[1].ptx = "// winner";
	}
	if (!passed) {
		rows[0].status = rows[1].status = RESULT_CHECK_FAILED;
		rows[0].reason = rows[1].reason = "wrong";
	}
	shape_key key = { .gpu_id = gpu, .op = "softmax", .dtype = dt, .M = M, .N = N };
	at_error err;
	if (tdb_store_shape(db, sweep, &key, rows, 2, &err))
		die("tdb_store_shape", err.msg);
}

static void build_valid(const char *p)
{
	tdb *db;
	at_error err;
	if (tdb_open(p, &db, &err))
		die("tdb_open", err.msg);
	long long h100 = gpu_row(db, "NVIDIA H100 80GB HBM3", 9, 0, 132, 85045395456LL);
	long long a100 = gpu_row(db, "NVIDIA A100-SXM4-40GB", 8, 0, 108, 42505273344LL);
	long long sweeps[2];
	long long gpus[2] = { h100, a100 };
	for (int g = 0; g < 2; g++) {
		sweep_info s = { .gpu_id = gpus[g], .driver_version = 13000,
				 .nvrtc_version = "13.0", .tool_version = "fuzz",
				 .config_path = "fuzz.yaml", .config_text = "sweeps: []\n",
				 .copy_gbps = 3000 };
		if (tdb_sweep_begin(db, &s, &sweeps[g], &err))
			die("tdb_sweep_begin", err.msg);
	}
	shape(db, sweeps[0], h100, AT_F32, 4096, 1024, "softmax_block", 256, 2048, 1, 1);
	shape(db, sweeps[0], h100, AT_F16, 4096, 4096, "softmax_warp", 128, 0, 1, 1);
	shape(db, sweeps[0], h100, AT_BF16, 1024, 12672, "softmax_online", 512, 0, 1, 1);
	shape(db, sweeps[0], h100, AT_F32, 8, 100000, "softmax_online", 1024, 0, 0, 1);
	shape(db, sweeps[0], h100, AT_F16, 1, 1, "softmax_block", 32, 32, 1, 0);
	shape(db, sweeps[1], a100, AT_F32, 4096, 1000, "softmax_block", 256, 1024, 1, 1);
	if (tdb_sweep_finish(db, sweeps[0], 1.5, 2.5, &err))
		die("tdb_sweep_finish", err.msg);
	tdb_close(db);
	/* Out of WAL mode, onto small pages: a few kilobytes to mutate. */
	sqlite3 *s;
	char *msg = NULL;
	if (sqlite3_open(p, &s) != SQLITE_OK ||
	    sqlite3_exec(s, "PRAGMA journal_mode = DELETE; PRAGMA page_size = 512; VACUUM;",
			 NULL, NULL, &msg) != SQLITE_OK)
		die("shrinking the database", msg ? msg : sqlite3_errmsg(s));
	sqlite3_close(s);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	/* tmpfs when there is one: a file is written per input. */
	const char *base = getenv("FUZZ_TMPDIR");
	if (!base)
		base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	snprintf(dir, sizeof dir, "%s/fuzz_dispatch_db.XXXXXX", base);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		abort();
	}
	atexit(cleanup);
	char valid_path[600];
	snprintf(valid_path, sizeof valid_path, "%s/valid.db", dir);
	snprintf(path, sizeof path, "%s/input.db", dir);
	const char *seed_out = getenv("FUZZ_DB_SEED_OUT");
#ifndef FUZZ_DB_PATCH
	if (!seed_out)
		return 0;
#endif
	build_valid(valid_path);
	valid = read_file(valid_path, &valid_size);
	if (seed_out) {
		write_file(seed_out, valid, valid_size);
		fprintf(stderr, "wrote %s (%zu bytes)\n", seed_out, valid_size);
		exit(0);
	}
	return 0;
}

/* ---- one input ---------------------------------------------------------- */

static void remove_sidecars(void)
{
	static const char *const ext[] = { "-wal", "-shm", "-journal" };
	char p[640];
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof p, "%s%s", path, ext[i]);
		unlink(p);
	}
}

static void check_choice(const atd_choice *c)
{
	if (c->level < ATD_LEVEL_EXACT || c->level > ATD_LEVEL_PREDICTED || !c->template_name ||
	    !c->params || !c->gpu_name || !c->from_params)
		die("atd_query_gpu", "an incomplete choice");
	/* Touch the strings, so that ASan sees a dangling one. */
	volatile size_t n = strlen(c->template_name) + strlen(c->params) + strlen(c->gpu_name) +
			    strlen(c->from_params);
	(void)n;
}

static void query(atd_handle *h, const atd_gpu *gpu)
{
	static const int64_t shapes[][2] = {
		{ 1, 1 }, { 4096, 1000 }, { 4096, 1024 }, { 4096, 4096 }, { 1024, 12672 },
		{ 3, 100000 }, { INT64_MAX, INT64_MAX }, { 0, 5 }, { 5, -1 },
	};
	for (int dt = 0; dt <= AT_DTYPE_COUNT; dt++) {
		for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
			atd_choice c;
			atd_status s = atd_query_gpu(h, gpu, (atd_dtype)dt, shapes[i][0],
						     shapes[i][1], &c);
			int valid_args = dt < AT_DTYPE_COUNT && shapes[i][0] > 0 && shapes[i][1] > 0;
			if (valid_args && s != ATD_OK)
				die("atd_query_gpu failed on a valid query", atd_errmsg(h));
			if (!valid_args && s != ATD_ERR_INVALID_ARGUMENT)
				die("atd_query_gpu accepted an invalid query", atd_errmsg(h));
			if (s == ATD_OK)
				check_choice(&c);
		}
	}
}

static void exercise(atd_handle *h)
{
	const atdi_table *t = &h->table;
	for (size_t i = 0; i < t->ngpus && i < 4; i++) {
		const atdi_gpu_row *g = &t->gpus[i];
		atd_gpu q = { g->name, g->cc_major, g->cc_minor, g->sm_count, g->mem_bytes };
		query(h, &q);
	}
	atd_gpu other = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85045395456LL };
	query(h, &other);
	for (size_t i = 0; i < t->nentries && i < 8; i++) {
		const atdi_entry *e = &t->entries[i];
		if (e->gpu >= t->ngpus || !e->template_name || !e->params || e->M < 1 || e->N < 1)
			die("atdi_db_load", "kept an entry it should have dropped");
		atd_gpu q = { t->gpus[e->gpu].name, t->gpus[e->gpu].cc_major,
			      t->gpus[e->gpu].cc_minor, t->gpus[e->gpu].sm_count,
			      t->gpus[e->gpu].mem_bytes };
		atd_choice c;
		if (atd_query_gpu(h, &q, (atd_dtype)e->dtype, e->M, e->N, &c) != ATD_OK)
			die("atd_query_gpu failed on a tuned shape", atd_errmsg(h));
		check_choice(&c);
		if (h->db) {
			int archs[] = { e->arch, e->arch == INT_MAX ? 0 : e->arch + 1 };
			for (int k = 0; k < 2; k++) {
				atdi_code code;
				char msg[ATDI_MSG_CAP];
				atd_status s = atdi_db_code(h->db, e->result_id, archs[k], &code, msg,
							    sizeof msg);
				if (s == ATD_OK && (!code.image || !code.size || !code.entry))
					die("atdi_db_code", "ATD_OK without code");
				if (s == ATD_OK && code.is_ptx &&
				    ((const char *)code.image)[code.size - 1] != '\0')
					die("atdi_db_code", "PTX without its NUL");
				atdi_code_free(&code);
			}
		}
	}
	(void)atd_errmsg(h);
}

static void run_one(void)
{
	atd_handle *h = NULL;
	atd_status s = atd_open(path, 0, &h);
	if (s == ATD_OK) {
		if (!h)
			die("atd_open", "ATD_OK without a handle");
		exercise(h);
		atd_close(h);
		return;
	}
	if (h)
		die("atd_open", "a handle with a failure");
	if (s != ATD_ERR_DB_CORRUPT && s != ATD_ERR_DB_NEWER && s != ATD_ERR_DB_MISSING &&
	    s != ATD_ERR_NO_MEMORY)
		die("atd_open returned an undocumented status", atd_status_string(s));
	if (!atd_errmsg(NULL)[0])
		die("atd_open", "a failure without a message");
	if (atd_open(path, ATD_OPEN_FALLBACK | ATD_OPEN_NO_JIT, &h) != ATD_OK || !h)
		die("atd_open with ATD_OPEN_FALLBACK", "no handle");
	if (h->table.nentries)
		die("atd_open with ATD_OPEN_FALLBACK", "a failed open kept tuned entries");
	exercise(h);
	atd_close(h);
	/* Deriving (NVRTC here): the library's seeds stand in, nothing else. */
	if (atd_open(path, ATD_OPEN_FALLBACK, &h) != ATD_OK || !h)
		die("atd_open with ATD_OPEN_FALLBACK", "no handle");
	for (size_t i = 0; i < h->table.ngpus; i++)
		if (!h->table.gpus[i].seeds)
			die("atd_open with ATD_OPEN_FALLBACK", "a failed open kept a tuned GPU");
	atd_gpu h100 = { "NVIDIA H100 80GB HBM3", 9, 0, 132, 85045395456LL };
	for (int dt = 0; dt < AT_DTYPE_COUNT; dt++) {
		atd_choice c;
		if (atd_query_gpu(h, &h100, (atd_dtype)dt, 4096, 1000, &c) != ATD_OK)
			die("atd_query_gpu failed on a valid query", atd_errmsg(h));
		check_choice(&c);
	}
	atd_close(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
#ifdef FUZZ_DB_PATCH
	static unsigned char *buf;
	if (!buf && !(buf = malloc(valid_size)))
		return 0;
	memcpy(buf, valid, valid_size);
	for (size_t i = 0; i + 4 <= size; i += 4) {
		size_t off = ((size_t)data[i] | (size_t)data[i + 1] << 8 |
			      (size_t)data[i + 2] << 16) % valid_size;
		buf[off] = data[i + 3];
	}
	write_file(path, buf, valid_size);
	/* To keep a reproducer as a whole file (tests/fuzz_corpus/ holds
	 * database files, not patches, which depend on the writer's output). */
	const char *out = getenv("FUZZ_DB_PATCH_OUT");
	if (out)
		write_file(out, buf, valid_size);
#else
	write_file(path, data, size);
#endif
	run_one();
	remove_sidecars();
	return 0;
}
