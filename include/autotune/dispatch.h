/*
** libautotune-dispatch: run the softmax kernel that `autotune sweep` found
** fastest for this GPU and shape, in one call; for a shape nobody tuned, a
** kernel made for it from the nearest winner.
**
**   atd_handle *h;
**   if (atd_open(NULL, ATD_OPEN_FALLBACK, &h) != ATD_OK) ...;     // autotune.db
**   atd_status s = atd_softmax(h, ATD_F32, y, x, M, N, N, N, stream);
**   if (s != ATD_OK) fprintf(stderr, "%s\n", atd_errmsg(h));
**   atd_close(h);
**
** VARIANT SELECTION, for the GPU of the calling thread's current CUDA
** context, in this order (atd_query tells which level served a shape):
**   1. ATD_LEVEL_EXACT      this GPU model (its name, compute capability
**                           and SM count; not its memory, which drivers and
**                           ECC settings report differently), dtype, M and
**                           N were tuned;
**   ATD_LEVEL_PREDICTED     before 2: where the database holds a performance
**                           model fitted on this GPU model's results
**                           (`autotune model fit --store`; else on another
**                           GPU's of its compute capability; with no
**                           database, on an sm_90 GPU, the seed models the
**                           library carries), the variant of the fastest
**                           predicted time among every one the templates'
**                           rules hold valid for the shape, compiled with
**                           NVRTC on the shape's first call;
**   2. ATD_LEVEL_DERIVED    the nearest tuned shapes of this GPU model and
**                           dtype in (log M, log N) (then of other models of
**                           its compute capability), up to 8, are tried in
**                           turn: the winner's template re-derives the params
**                           that depend on the shape (vector width, elements
**                           per thread, ...: the `derive` rules of its
**                           manifest) for this one. If they come out as tuned,
**                           the stored kernel runs (ATD_LEVEL_NEAREST or
**                           ATD_LEVEL_SAME_ARCH); else the derived variant is
**                           compiled with NVRTC, loaded at run time, on the
**                           shape's first call (ATD_LEVEL_DERIVED);
**   3. ATD_LEVEL_NEAREST    without NVRTC (or with ATD_OPEN_NO_JIT): the
**                           nearest tuned shape among variants valid for N;
**   4. ATD_LEVEL_SAME_ARCH  the same, from another GPU model with the same
**                           compute capability (exact shape first);
**   ATD_LEVEL_TUNED         before 2-4: a variant tuned online for this GPU
**                           model and shape (ATD_OPEN_TUNE), in the cache;
**   5. ATD_LEVEL_BUILTIN    a built-in kernel that serves every shape on
**                           every GPU (compute capability 7.5 or newer), so a
**                           call succeeds even with no database.
** Tuned kernels are loaded from the cubins stored in the database; the
** built-in one ships inside the library (SASS for sm_80 and sm_90, PTX that
** the driver compiles for other GPUs). Rows whose pointer or stride is not
** aligned for a kernel's vector width take its scalar path: never a fault.
**
** DERIVED KERNELS: the library carries its templates' sources and rules.
** A derived variant's first call in a process compiles it (NVRTC, about
** 0.1-1 s, once per variant) unless the persistent cache has it: the file
** $ATD_JIT_CACHE, else $XDG_CACHE_HOME/autotune/jit.db, else
** ~/.cache/autotune/jit.db (ATD_JIT_CACHE=off: none), shared safely by
** threads and processes; later processes load it in milliseconds. Modes:
** by default the first call blocks while it compiles; ATD_OPEN_JIT_BACKGROUND
** (or ATD_JIT=background) serves the shape at once with what needs no
** compiling and switches to the derived kernel when a worker thread has
** built it; ATD_OPEN_NO_JIT (or ATD_JIT=off) never compiles. Without
** libnvrtc.so the library starts and serves as with ATD_OPEN_NO_JIT.
**
** TRUSTING A DATABASE: a tuning database holds machine code, and the
** library runs it on your GPU with your process's rights: open only
** databases from a source you would take a binary from (your own sweep,
** the file you ship). Each stored kernel image (cubin and PTX) has its
** SHA-256 beside it (schema version 4), checked before the image is loaded
** and by atd_query: an image that does not match, or has none, is an
** error, ATD_ERR_KERNEL_ALTERED naming the shape, never a launch and never
** a quiet fallback. That catches a damaged file, a bad copy or merge and an
** image changed by hand; it does not authenticate: whoever can write the
** file can rewrite image and digest together. A database of schema version
** 3 or older has no digests and its images are loaded unchecked; the
** tuner adds them when it opens the file for writing (a sweep into it).
**
** THREADS: every function is thread-safe. One handle may be shared by any
** number of threads, devices and contexts; compiled modules are cached per
** context, and the variant chosen for a shape is cached after its first use.
** One limitation: a tuned kernel of the softmax_split template (few long
** rows spread over the whole GPU; atd_query names the template) keeps
** scratch in its loaded module, so two calls that it serves must not run at
** the same time in one context through one handle (e.g. on two streams):
** order them (one stream, or events), or give each stream its own handle
** (each handle loads its own modules).
**
** ERRORS: functions return an atd_status; atd_status_string() names it and
** atd_errmsg() gives the handle's most recent message (per handle, not per
** thread). The library never prints and never exits; an optional log
** callback receives warnings (e.g. a fallback to the built-in kernel, or
** a tuned winner whose kernel is not in the database: never served, its
** shape named at atd_open, to the first callback, and at its first call).
**
** The library loads libcuda.so.1, and libnvrtc.so.13 when it derives a
** kernel, at run time; it links SQLite.
*/
#ifndef AUTOTUNE_DISPATCH_H
#define AUTOTUNE_DISPATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ATD_BUILDING) && defined(__GNUC__)
#define ATD_API __attribute__((visibility("default")))
#else
#define ATD_API
#endif

/* Version of this header; atd_version_number() gives the library's. */
#define ATD_VERSION_MAJOR 0
#define ATD_VERSION_MINOR 2
#define ATD_VERSION_PATCH 0
#define ATD_VERSION_STRING "0.2.0"
#define ATD_VERSION_NUMBER (ATD_VERSION_MAJOR * 10000 + ATD_VERSION_MINOR * 100 + ATD_VERSION_PATCH)

ATD_API int atd_version_number(void);
ATD_API const char *atd_version(void);

/* Status codes. The list generates the enum and the string table. */
#define ATD_STATUS_LIST(X)                                                          \
	X(ATD_OK, 0, "success")                                                     \
	X(ATD_ERR_INVALID_ARGUMENT, 1, "invalid argument")                         \
	X(ATD_ERR_NO_DRIVER, 2, "no NVIDIA driver or GPU found")                   \
	X(ATD_ERR_NO_CONTEXT, 3, "no CUDA context is current on this thread")      \
	X(ATD_ERR_CUDA, 4, "a CUDA driver call failed")                            \
	X(ATD_ERR_DB_MISSING, 5, "the tuning database does not exist")             \
	X(ATD_ERR_DB_CORRUPT, 6, "the file is not a readable tuning database")     \
	X(ATD_ERR_DB_NEWER, 7, "the tuning database has a newer schema")           \
	X(ATD_ERR_NO_MEMORY, 8, "out of host memory")                              \
	X(ATD_ERR_NO_KERNEL, 9, "no kernel can serve this call")                  \
	X(ATD_ERR_KERNEL_ALTERED, 10, "a stored kernel does not match its digest")  \
	X(ATD_ERR_TARGET, 11, "a target is outside [0, V) and not ignore_index")

typedef enum atd_status {
#define ATD_STATUS_ENUM(name, value, text) name = value,
	ATD_STATUS_LIST(ATD_STATUS_ENUM)
#undef ATD_STATUS_ENUM
} atd_status;

/* A static string for s ("success", ...); "unknown status" if s is not one. */
ATD_API const char *atd_status_string(atd_status s);

typedef enum atd_dtype {
	ATD_F32 = 0,  /* float */
	ATD_F16 = 1,  /* IEEE binary16 (__half) */
	ATD_BF16 = 2, /* bfloat16 (__nv_bfloat16) */
} atd_dtype;

typedef enum atd_level {
	ATD_LEVEL_EXACT = 1,
	ATD_LEVEL_NEAREST = 2,
	ATD_LEVEL_SAME_ARCH = 3,
	ATD_LEVEL_BUILTIN = 4,
	ATD_LEVEL_DERIVED = 5,
	ATD_LEVEL_TUNED = 6,
	ATD_LEVEL_PREDICTED = 7,
} atd_level;

/* "exact", "nearest", "same-arch", "built-in", "derived", "tuned online",
 * "predicted";
 * "?" otherwise. */
ATD_API const char *atd_level_name(atd_level level);

typedef struct atd_handle atd_handle;

/* Flags for atd_open. */
#define ATD_OPEN_FALLBACK 1u /* a missing, corrupt or newer database is not an
				error: the handle serves as with ATD_OPEN_NO_DB
				(the built-in kernel alone without NVRTC) and
				the log callback (if set later, atd_errmsg now)
				says why */
#define ATD_OPEN_NO_JIT 2u /* never compile: untuned shapes get the nearest
			      stored winner that serves them, or the built-in */
#define ATD_OPEN_JIT_BACKGROUND 4u /* compile derived variants on a worker
				      thread; until one is ready its shape is
				      served as with ATD_OPEN_NO_JIT */
#define ATD_OPEN_TUNE 8u /* online tuning (also ATD_TUNE=1): the first call
			    of an untuned shape times the variants the model
			    and its nearest winners give, on scratch buffers
			    on a stream of its own, and keeps the fastest in
			    the cache. It waits at most ATD_TUNE_WAIT_MS
			    (200; -1: no limit) for them to compile and
			    times those built by then; a worker thread times
			    the rest, the fastest of those timed (or, if
			    none was built, what needs no compiling) serving
			    until it is done. With ATD_OPEN_JIT_BACKGROUND
			    the worker tunes it all while the shape is
			    served what needs no compiling. Either way the
			    shape's winner serves from its first call after
			    the worker is done */
#define ATD_OPEN_NO_DB 16u /* open no database (path is ignored): serve what
			     the library carries, without a warning: the
			     seed models' choice on a GPU of their compute
			     capability (sm_90), else variants derived from
			     the seed winners, compiled with NVRTC; the
			     built-in kernel without it */

/*
** Opens a tuning database read-only. path NULL means $AUTOTUNE_DB if set,
** else "autotune.db" (as the autotune command line). The tuned shapes'
** metadata is read now; kernels are loaded on first use. Nothing is
** written beside the file (no -wal or -shm is left), so it may lie in a
** folder this process cannot write (e.g. under /usr/share).
** Returns ATD_OK and *out; or ATD_ERR_DB_MISSING, ATD_ERR_DB_CORRUPT,
** ATD_ERR_DB_NEWER, ATD_ERR_NO_MEMORY with *out NULL (without
** ATD_OPEN_FALLBACK), or ATD_ERR_INVALID_ARGUMENT if out is NULL.
** With ATD_OPEN_FALLBACK those database errors still give a handle (serving
** as ATD_OPEN_NO_DB's) and ATD_OK. The caller owns the handle: atd_close it.
** Does not need a GPU.
*/
ATD_API atd_status atd_open(const char *path, unsigned flags, atd_handle **out);

/* Releases the handle and every module it loaded. NULL is a no-op. No call
 * on the handle may be in progress or follow. Close handles before the CUDA
 * contexts they ran in are destroyed (cuCtxDestroy, cudaDeviceReset): the
 * driver cannot tell a destroyed context, and unloading into one is
 * undefined. */
ATD_API void atd_close(atd_handle *h);

/* The handle's most recent error or warning message ("" if none). The
 * string is owned by the handle and valid until its next call. With NULL:
 * why this thread's last atd_open failed. */
ATD_API const char *atd_errmsg(atd_handle *h);

typedef enum atd_log_level { ATD_LOG_WARNING = 1, ATD_LOG_INFO = 2 } atd_log_level;
typedef void (*atd_log_fn)(void *user, atd_log_level level, const char *message);

/* Sets (fn non-NULL) or clears the log callback. It may be called from any
 * thread that calls into the library, never concurrently for one handle. */
ATD_API void atd_set_log(atd_handle *h, atd_log_fn fn, void *user);

/*
** y[i*ldy + j] = softmax over j < N of x[i*ldx + j], for i < M, on `stream`
** (a CUstream or cudaStream_t; NULL is the default stream) on the device of
** the current CUDA context. x and y are device pointers to dtype elements;
** y == x (in place) is allowed, other overlaps are not. Asynchronous: the
** kernel is queued, not finished, when it returns. Math is in f32.
**
** NUMERICS, the same for every kernel the library serves (tuned, derived,
** built-in) and equal to torch.softmax's: any finite row, up to the dtype's
** largest magnitude (3.4e38 in f32 and bf16, 65504 in f16), gives a
** distribution that sums to 1 (each element e^(x - max) / sum, the
** difference taken first, so huge logits lose nothing); -inf elements give
** 0; a row with a +inf or a NaN gives NaN; a row of all -inf gives NaN,
** or zeros with ATD_MASKED_ZERO (atd_softmax_ex), as PyTorch's
** scaled_dot_product_attention gives fully masked rows. Outputs too small
** for f32 (below about 1e-38) may be flushed to 0.
**
** Returns ATD_OK, or with nothing launched: ATD_ERR_INVALID_ARGUMENT (NULL
** handle or pointer, M or N < 1, ldx or ldy < N, unknown dtype),
** ATD_ERR_NO_DRIVER, ATD_ERR_NO_CONTEXT, ATD_ERR_CUDA (e.g. a launch
** failure reported at launch), ATD_ERR_NO_MEMORY, ATD_ERR_KERNEL_ALTERED
** (the tuned kernel that would serve the shape does not match its digest).
*/
ATD_API atd_status atd_softmax(atd_handle *h, atd_dtype dtype, void *y, const void *x,
			       int64_t M, int64_t N, int64_t ldy, int64_t ldx, void *stream);

/* Flags for atd_softmax_ex. */
#define ATD_MASKED_ZERO 1u /* a row of all -inf gives zeros, not NaN */

/* atd_softmax with flags (ATD_MASKED_ZERO, or 0: atd_softmax itself).
 * Unknown bits are ATD_ERR_INVALID_ARGUMENT. The flags are an argument of
 * the kernel: every kernel serves both, at the same speed. */
ATD_API atd_status atd_softmax_ex(atd_handle *h, atd_dtype dtype, void *y, const void *x,
				  int64_t M, int64_t N, int64_t ldy, int64_t ldx, unsigned flags,
				  void *stream);

/*
** y[i*ldy + j] = log_softmax over j < N of x[i*ldx + j], for i < M: as
** atd_softmax_ex in every other respect (stream, in place, strides, flags,
** status codes). NUMERICS, equal to torch.log_softmax's: each element is
** (x - max) - ln(sum e^(x - max)), the difference taken first, so a finite
** row at any magnitude keeps its values near the max exact; -inf elements
** give -inf; a row with a +inf or a NaN gives NaN; a row of all -inf gives
** NaN, or -inf (ln 0) with ATD_MASKED_ZERO. A value below the dtype's
** range (e.g. -max - max in f32) is -inf, as PyTorch's result in the
** dtype is. Served by the same templates as softmax: shapes tuned for
** log_softmax by their own winners, others derived from the nearest
** log_softmax or softmax winner.
*/
ATD_API atd_status atd_log_softmax(atd_handle *h, atd_dtype dtype, void *y, const void *x,
				   int64_t M, int64_t N, int64_t ldy, int64_t ldx, unsigned flags,
				   void *stream);

/*
** The backward of softmax over rows, as PyTorch's _softmax_backward_data:
** dx[i*lddx + j] = y_ij * (dy_ij - sum_k dy_ik * y_ik), for i < M, j < N,
** from y, the forward's output (atd_softmax's y), and dy, the gradient of
** the loss with respect to it. dx == dy (in place: the gradient written
** over dy) is allowed, other overlaps are not; y is only read. Stream,
** asynchrony and dtypes as atd_softmax; math and the row's sum in f32.
** flags: 0, or the forward's ATD_MASKED_ZERO (accepted so that a caller
** may pass the forward's flags on; it changes nothing: a masked row's y of
** zeros gives dx = 0). Unknown bits are ATD_ERR_INVALID_ARGUMENT.
**
** NUMERICS: a y row with a NaN (the forward's +inf or NaN rows) or a
** non-finite dy gives NaN in the row; a finite dy at any magnitude the
** dtype holds is computed without overflow where the result fits.
**
** Served by the softmax_backward templates: shapes tuned for the op by
** their winners, others derived from the nearest winner of softmax_backward
** or log_softmax_backward (never from a forward op's: another kernel), or
** the built-in kernel. Returns ATD_OK, or with nothing launched:
** ATD_ERR_INVALID_ARGUMENT (NULL handle or pointer, M or N < 1, a stride
** < N, unknown dtype or flags), ATD_ERR_NO_DRIVER, ATD_ERR_NO_CONTEXT,
** ATD_ERR_CUDA, ATD_ERR_NO_MEMORY, ATD_ERR_KERNEL_ALTERED, as atd_softmax.
*/
ATD_API atd_status atd_softmax_backward(atd_handle *h, atd_dtype dtype, void *dx, const void *y,
					const void *dy, int64_t M, int64_t N, int64_t lddx,
					int64_t ldy, int64_t lddy, unsigned flags, void *stream);

/*
** The backward of log_softmax, as PyTorch's _log_softmax_backward_data:
** dx_ij = dy_ij - e^(y_ij) * sum_k dy_ik, from y, the forward's output
** (atd_log_softmax's y), and dy. As atd_softmax_backward in every other
** respect (in place over dy, strides, flags, status codes). A masked row
** (y all -inf) gives dx = dy; a y of NaN gives NaN.
*/
ATD_API atd_status atd_log_softmax_backward(atd_handle *h, atd_dtype dtype, void *dx,
					    const void *y, const void *dy, int64_t M, int64_t N,
					    int64_t lddx, int64_t ldy, int64_t lddy, unsigned flags,
					    void *stream);

/*
** CROSS-ENTROPY (docs/cross-entropy.md is the contract): over logits x
** [M x V] (rows ldlogits apart) and targets t [M] (int64, or int32), per
** row i, with z = softcap > 0 ? softcap * tanh(x / softcap) : x and
** lse = ln(sum_j e^(z_j - max z)) + max z (the difference first):
**   loss_i = lse - (1 - ls) z_t - (ls / V) sum_j z_j + zl * lse^2
** (ls: label_smoothing as torch defines it; zl: z_loss; at ls = zl = 0
** torch's cross_entropy), and, when dlogits is given, the gradient of the
** reduced loss times upstream:
**   dz_j = scale * (p_j (1 + 2 zl lse) - (1 - ls)[j == t] - ls / V),
**   p_j = e^(z_j - lse), dx_j = dz_j (1 - (z_j / softcap)^2) with softcap,
** scale = upstream / n_valid for MEAN, upstream for SUM and NONE.
** A row whose target is ignore_index has loss 0 and a gradient row of 0
** (its lse is still written); n_valid counts the other rows (MEAN over 0
** valid rows is NaN, as torch). Rows follow softmax's numerics: a finite
** row of any magnitude gives a finite loss and lse; -inf logits give
** p = 0; a +inf or NaN logit, or a row of all -inf, gives NaN.
*/
typedef enum atd_reduction {
	ATD_REDUCTION_NONE = 0, /* loss: M floats */
	ATD_REDUCTION_SUM = 1,  /* loss: 1 float, the sum in double, in row order */
	ATD_REDUCTION_MEAN = 2, /* loss: 1 float, the sum / n_valid */
} atd_reduction;

typedef enum atd_index_type { ATD_INDEX_I64 = 0, ATD_INDEX_I32 = 1 } atd_index_type;

/* Flags of atd_cross_entropy_opts. */
#define ATD_TRUST_TARGETS 1u /* no check of the targets (no stream sync): a
				target out of range gives its row NaN */

typedef struct atd_cross_entropy_opts {
	int64_t ignore_index;       /* -100 */
	float label_smoothing;      /* 0, in [0, 1] */
	float z_loss;               /* 0, >= 0 */
	float softcap;              /* 0: none, else > 0 */
	atd_reduction reduction;    /* MEAN */
	atd_index_type target_type; /* I64 */
	float upstream;             /* 1: the grad of the reduced loss */
	unsigned flags;             /* ATD_TRUST_TARGETS */
} atd_cross_entropy_opts;

#define ATD_CROSS_ENTROPY_DEFAULTS \
	{ -100, 0.0f, 0.0f, 0.0f, ATD_REDUCTION_MEAN, ATD_INDEX_I64, 1.0f, 0u }

/* Bytes of device memory atd_cross_entropy needs as its workspace for M
 * rows: 32 (the scale, n_valid, the out-of-range targets' count and first
 * row), then M floats (the row losses that SUM and MEAN reduce). */
ATD_API size_t atd_cross_entropy_workspace_size(int64_t M);

/*
** The cross-entropy loss of M rows of V logits against their targets, on
** `stream`, into loss (M floats for ATD_REDUCTION_NONE, else 1), lse (M
** floats, or NULL) and, unless dlogits is NULL, the gradient (rows lddlogits
** apart; dlogits == logits overwrites the logits in place, other overlaps
** are not allowed). opts NULL means ATD_CROSS_ENTROPY_DEFAULTS. workspace:
** device memory of atd_cross_entropy_workspace_size(M) bytes, 8-byte
** aligned, not used by another call in flight. Every pointer is a device
** pointer but opts.
**
** TARGETS: a prepare kernel counts them; unless opts->flags has
** ATD_TRUST_TARGETS or the stream is capturing a CUDA graph, the call then
** synchronises the stream and, when a target is outside [0, V) and not
** ignore_index, returns ATD_ERR_TARGET naming the first such row and its
** target, with nothing more launched (loss, lse and dlogits untouched).
** Trusted or captured, such rows are NaN (loss and gradient), never a read
** out of bounds. Served as every op: the tuned winner of (cross_entropy,
** dtype, M, V), else derived, else the built-in cross_entropy kernel.
**
** Returns ATD_OK, ATD_ERR_TARGET, or with nothing launched:
** ATD_ERR_INVALID_ARGUMENT (NULL handle, logits, target, loss or workspace;
** M or V < 1; ldlogits < V; lddlogits < V with dlogits; unknown dtype,
** reduction, target type or flags; label_smoothing outside [0, 1]; z_loss
** < 0; softcap < 0; a NaN option; a misaligned workspace), ATD_ERR_NO_DRIVER,
** ATD_ERR_NO_CONTEXT, ATD_ERR_CUDA, ATD_ERR_NO_MEMORY, ATD_ERR_NO_KERNEL
** (no kernel serves the shape), ATD_ERR_KERNEL_ALTERED.
*/
ATD_API atd_status atd_cross_entropy(atd_handle *h, atd_dtype dtype, const void *logits,
				     int64_t ldlogits, const void *target, int64_t M, int64_t V,
				     const atd_cross_entropy_opts *opts, float *loss, float *lse,
				     void *dlogits, int64_t lddlogits, void *workspace,
				     void *stream);

/*
** dlogits' M rows of V (stride lddlogits) times the upstream gradient read
** on the device: g[0] (a reduced loss's, per_row 0) or g[i] for row i
** (per_row 1: reduction none). A row whose factor is 1 is left untouched,
** so after a fused atd_cross_entropy (upstream 1) the usual backward of a
** mean or sum costs one small launch, with no pass over the gradient and
** no wait for the GPU to say whether g is 1 (Liger-Kernel waits). g: M
** floats, or one. Asynchronous; ATD_ERR_INVALID_ARGUMENT as
** atd_cross_entropy for its arguments.
*/
ATD_API atd_status atd_cross_entropy_scale(atd_handle *h, atd_dtype dtype, void *dlogits,
					   int64_t lddlogits, int64_t M, int64_t V, const float *g,
					   int per_row, void *stream);

/* What would serve a shape: a dry run of atd_softmax's own decision, by
 * the same code, compiling, loading and launching nothing. It takes a
 * derived kernel to compile (and, in background mode, to be built: where
 * the shape settles); a handle that tunes online (ATD_OPEN_TUNE) is
 * answered as if the shape were untuned, as only timing can say which
 * candidate wins. Strings point into the handle and stay valid until
 * atd_close. */
typedef struct atd_choice {
	atd_level level;
	const char *template_name; /* e.g. "softmax_block" */
	const char *params;        /* e.g. "threads=256 vec=4 ..." */
	const char *gpu_name;      /* GPU model it was tuned on (ATD_LEVEL_PREDICTED:
				      whose results the model learned); "" for built-in */
	int64_t tuned_M, tuned_N;  /* shape it was tuned at; 0 for built-in and predicted */
	double tuned_us;           /* median time at that shape; 0 for built-in;
				      ATD_LEVEL_PREDICTED: the predicted time here */
	/* ATD_LEVEL_DERIVED: the params of the winner it was derived from
	 * (tuned at tuned_M x tuned_N on gpu_name); otherwise equal to params. */
	const char *from_params;
} atd_choice;

/* The choice for the current context's GPU (needs a GPU and a context).
 * Both queries return ATD_ERR_KERNEL_ALTERED, as atd_softmax would, when
 * the stored kernel of the choice does not match its digest. */
ATD_API atd_status atd_query(atd_handle *h, atd_dtype dtype, int64_t M, int64_t N,
			     atd_choice *out);

/* A GPU described by hand, to ask what it would get without having it.
 * sm_count and mem_bytes may be left 0: atd_query_gpu then takes those of
 * the database's GPU of that name and compute capability (as `autotune
 * show --gpu NAME --cc X.Y` does), so that a tuned GPU named by its name
 * and compute capability alone gets its exact winners. */
typedef struct atd_gpu {
	const char *name; /* e.g. "NVIDIA H100 80GB HBM3" */
	int cc_major, cc_minor;
	int sm_count;      /* 0: the database's, as above */
	int64_t mem_bytes; /* 0: the database's; never part of a model's identity */
} atd_gpu;

/* The choice for a described GPU. Needs no GPU; thread-safe. */
ATD_API atd_status atd_query_gpu(atd_handle *h, const atd_gpu *gpu, atd_dtype dtype,
				 int64_t M, int64_t N, atd_choice *out);

/* The ops, for the queries of any op (atd_query and atd_query_gpu answer
 * for softmax). */
typedef enum atd_op {
	ATD_OP_SOFTMAX = 0,
	ATD_OP_LOG_SOFTMAX = 1,
	ATD_OP_SOFTMAX_BACKWARD = 2,
	ATD_OP_LOG_SOFTMAX_BACKWARD = 3,
	ATD_OP_CROSS_ENTROPY = 4, /* N is V, the number of classes */
} atd_op;

/* atd_query and atd_query_gpu for op (an unknown op is
 * ATD_ERR_INVALID_ARGUMENT). */
ATD_API atd_status atd_query_op(atd_handle *h, atd_op op, atd_dtype dtype, int64_t M, int64_t N,
				atd_choice *out);
ATD_API atd_status atd_query_op_gpu(atd_handle *h, atd_op op, const atd_gpu *gpu,
				    atd_dtype dtype, int64_t M, int64_t N, atd_choice *out);

#ifdef __cplusplus
}
#endif

#endif /* AUTOTUNE_DISPATCH_H */
