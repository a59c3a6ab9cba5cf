-- The tuning database, schema version 4 (PRAGMA user_version = 4).
-- Version 2 added compile_cache and winners.noise_band; version 3 added
-- results.ctas_per_row and results.cooperative; version 4 added
-- kernels.cubin_sha256 and kernels.ptx_sha256. An older database opened
-- for writing is migrated, and readers accept versions 1 to 4.
-- Documented in db/SCHEMA.md; embedded into the programs at build time.
-- Writers: the tuner (autotune sweep). Readers: autotune list/show/report
-- and the dispatch library (read-only).

-- A GPU model as the tuner saw it. Two boards of the same model share a row.
CREATE TABLE IF NOT EXISTS gpus (
	id         INTEGER PRIMARY KEY,
	name       TEXT    NOT NULL,
	cc_major   INTEGER NOT NULL,
	cc_minor   INTEGER NOT NULL,
	sm_count   INTEGER NOT NULL,
	mem_bytes  INTEGER NOT NULL,
	UNIQUE (name, cc_major, cc_minor, sm_count, mem_bytes)
);

-- One run of `autotune sweep`.
CREATE TABLE IF NOT EXISTS sweeps (
	id             INTEGER PRIMARY KEY,
	gpu_id         INTEGER NOT NULL REFERENCES gpus(id),
	started_at     TEXT    NOT NULL,  -- UTC, ISO 8601
	finished_at    TEXT,              -- NULL while running or if interrupted
	driver_version INTEGER NOT NULL,  -- cuDriverGetVersion, e.g. 13000
	nvrtc_version  TEXT    NOT NULL,  -- e.g. "13.0"
	tool_version   TEXT    NOT NULL,
	config_path    TEXT    NOT NULL,
	config_text    TEXT    NOT NULL,
	copy_gbps      REAL    NOT NULL,  -- device-to-device copy, bytes read + written
	compile_s      REAL    NOT NULL DEFAULT 0,
	bench_s        REAL    NOT NULL DEFAULT 0
);

-- Every variant tried for a shape, whether it passed or not.
CREATE TABLE IF NOT EXISTS results (
	id           INTEGER PRIMARY KEY,
	sweep_id     INTEGER NOT NULL REFERENCES sweeps(id),
	gpu_id       INTEGER NOT NULL REFERENCES gpus(id),
	op           TEXT    NOT NULL,
	dtype        TEXT    NOT NULL CHECK (dtype IN ('f32', 'f16', 'bf16')),
	m            INTEGER NOT NULL CHECK (m > 0),
	n            INTEGER NOT NULL CHECK (n > 0),
	kind         TEXT    NOT NULL DEFAULT 'variant'
	                 CHECK (kind IN ('variant', 'baseline')),  -- baselines never win
	template     TEXT    NOT NULL,
	params       TEXT    NOT NULL,    -- "threads=256 vec=4 ..." in manifest order
	status       TEXT    NOT NULL CHECK (status IN
	                 ('ok', 'compile_failed', 'check_failed', 'launch_failed')),
	reason       TEXT,                -- why it failed; NULL when ok
	rel_err      REAL,                -- relative L2 error against the CPU reference
	time_us      REAL,                -- median of the repetitions
	time_min_us  REAL,
	time_max_us  REAL,
	reps         INTEGER,
	gbps         REAL,                -- 2*M*N*element size / median time
	pct_copy     REAL,                -- gbps / the sweep's copy_gbps * 100
	registers    INTEGER,
	smem_bytes   INTEGER,
	spill_bytes  INTEGER,
	compile_ms   REAL,
	-- launch geometry, evaluated from the manifest for this shape
	threads      INTEGER,
	rows_per_cta INTEGER,
	dyn_smem     INTEGER,
	persistent   INTEGER,
	max_n        INTEGER,             -- longest row the variant serves; 0 = any
	ctas_per_row INTEGER NOT NULL DEFAULT 1,  -- (v3) above 1: a cluster of that many per row step
	cooperative  INTEGER NOT NULL DEFAULT 0   -- (v3) 1: every resident CTA, launched cooperatively
);
CREATE INDEX IF NOT EXISTS results_shape
	ON results (gpu_id, op, dtype, m, n);

-- One row per tuned (GPU, op, dtype, M, N): the fastest passing variant
-- (within noise_band of the fastest, the one with the fewest registers),
-- written in the same transaction as the shape's results, so a shape is
-- either done with its winner or not done at all. result_id is NULL when no
-- variant passed its check.
CREATE TABLE IF NOT EXISTS winners (
	gpu_id     INTEGER NOT NULL REFERENCES gpus(id),
	op         TEXT    NOT NULL,
	dtype      TEXT    NOT NULL,
	m          INTEGER NOT NULL,
	n          INTEGER NOT NULL,
	result_id  INTEGER REFERENCES results(id),
	sweep_id   INTEGER NOT NULL REFERENCES sweeps(id),
	noise_band REAL,  -- relative timing noise used to pick (v2); NULL before
	PRIMARY KEY (gpu_id, op, dtype, m, n)
);

-- Compiled code of winners, so that the dispatch library loads it without
-- NVRTC. arch is the compute capability the cubin was built for (e.g. 90).
-- The digests (v4) are SHA-256 in hex of the cubin's bytes and of the PTX
-- text: the library and `autotune show` refuse an image that does not
-- match its digest.
CREATE TABLE IF NOT EXISTS kernels (
	result_id    INTEGER PRIMARY KEY REFERENCES results(id),
	arch         INTEGER NOT NULL,
	entry        TEXT    NOT NULL,
	cubin        BLOB    NOT NULL,
	ptx          TEXT    NOT NULL,
	cubin_sha256 TEXT,  -- (v4) NULL only in a database migrated without its kernels
	ptx_sha256   TEXT   -- (v4)
);

-- Compiled kernels by what determines them, so that a second sweep of a
-- config compiles nothing. key: 32 hex digits hashing the specialised
-- source, the NVRTC options, the NVRTC version and the architecture.
-- status: 0 compiled, 1 did not compile (log says why).
CREATE TABLE IF NOT EXISTS compile_cache (
	key          TEXT    PRIMARY KEY,
	arch         INTEGER NOT NULL,
	nvrtc        TEXT    NOT NULL,
	status       INTEGER NOT NULL CHECK (status IN (0, 1)),
	cubin        BLOB,
	ptx          TEXT,
	log          TEXT    NOT NULL,
	registers    INTEGER NOT NULL,
	smem_bytes   INTEGER NOT NULL,
	spill_bytes  INTEGER NOT NULL,
	stack_bytes  INTEGER NOT NULL,
	compile_ms   REAL    NOT NULL,
	created_at   TEXT    NOT NULL
);

-- A performance model fitted on a GPU's results (`autotune model fit
-- --store`, common/perf_model.h), as its text: what the dispatch library
-- chooses with for a shape nobody tuned. Optional, and added within version
-- 4 (additive: a reader that does not know it ignores it): a database
-- without the table, or without a row for a GPU, has no model, and the
-- library derives from the winners by the templates' rules.
CREATE TABLE IF NOT EXISTS models (
	gpu_id     INTEGER NOT NULL REFERENCES gpus(id),
	op         TEXT    NOT NULL,  -- the op whose results it was fitted on
	fitted_at  TEXT    NOT NULL,  -- UTC, ISO 8601
	shapes     INTEGER NOT NULL,  -- the tuned shapes it learned from
	samples    INTEGER NOT NULL,  -- the variant results
	text       TEXT    NOT NULL,  -- perf_model_to_text's
	PRIMARY KEY (gpu_id, op)
);
