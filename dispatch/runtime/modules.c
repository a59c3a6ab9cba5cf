/* Compiled modules per context: a tuned winner's code, fetched from the
 * database on first use (its cubin if built for this GPU's compute
 * capability, else its PTX), or the built-in kernel's fat binary. Loaded
 * once per (context, result id or built-in dtype); failures are remembered
 * so that a broken row costs one attempt, not one per call. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dispatch/runtime/builtin_image.h"
#include "dispatch/runtime/builtin_kernels.h"
#include "dispatch/runtime/handle.h"
#include "dispatch/runtime/modules.h"
#include "dispatch/policy/row_ops.h"
#include "dispatch/policy/tuned_db.h"

static long long module_key(const atdi_entry *e, int op, at_dtype dtype)
{
	return e ? e->result_id : -1 - ((long long)op * AT_DTYPE_COUNT + (long long)dtype);
}

/* Errors that mean "this code cannot run on this GPU", not a broken driver. */
static atd_status load_status(CUresult rc)
{
	switch (rc) {
	case CUDA_ERROR_NO_BINARY_FOR_GPU:
	case CUDA_ERROR_INVALID_PTX:
	case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
	case CUDA_ERROR_INVALID_IMAGE:
	case CUDA_ERROR_INVALID_SOURCE:
	case CUDA_ERROR_NOT_FOUND:
		return ATD_ERR_NO_KERNEL;
	default:
		return ATD_ERR_CUDA;
	}
}

static atd_status cuda_reason(CUresult rc, const char *what, char *why, size_t cap)
{
	at_error err;
	cudrv_error(&err, rc, what);
	snprintf(why, cap, "%s", err.msg);
	return load_status(rc);
}

/* Loads image and finds op's kernel in it (entry: its name), and the op's
 * other kernels into aux. */
static atd_status load_image(const void *image, int op, const char *entry, CUmodule *mod,
			     CUfunction *fn, CUfunction *aux, char *why, size_t cap)
{
	CUresult rc = cudrv.cuModuleLoadData(mod, image);
	if (rc != CUDA_SUCCESS)
		return cuda_reason(rc, "cuModuleLoadData", why, cap);
	const atdi_op_desc *d = atdi_op_desc_of(op);
	const char *names[1 + ATDI_OP_MAX_AUX] = { entry };
	CUfunction *outs[1 + ATDI_OP_MAX_AUX] = { fn };
	for (int i = 0; i < ATDI_OP_MAX_AUX; i++) {
		names[1 + i] = d->aux[i];
		outs[1 + i] = &aux[i];
		aux[i] = NULL;
	}
	for (int i = 0; i < 1 + ATDI_OP_MAX_AUX && names[i]; i++) {
		rc = cudrv.cuModuleGetFunction(outs[i], *mod, names[i]);
		if (rc == CUDA_ERROR_NOT_FOUND && i > 0 && (d->aux_optional >> (i - 1) & 1u)) {
			*outs[i] = NULL; /* an optional kernel this code does not define */
			continue;
		}
		if (rc != CUDA_SUCCESS) {
			cudrv.cuModuleUnload(*mod);
			*mod = NULL;
			char what[160];
			snprintf(what, sizeof what, "cuModuleGetFunction(%s)", names[i]);
			return cuda_reason(rc, what, why, cap);
		}
	}
	return ATD_OK;
}

static atd_status load_tuned(atd_handle *h, const atdi_ctx_info *ci, const atdi_entry *e,
			     CUmodule *mod, CUfunction *fn, CUfunction *aux, char *why, size_t cap)
{
	if (!h->db) {
		snprintf(why, cap, "the database is closed");
		return ATD_ERR_NO_KERNEL;
	}
	atdi_code code;
	atd_status s = atdi_db_code(h->db, e->result_id, ci->arch, &code, why, cap);
	if (s != ATD_OK)
		return s;
	s = load_image(code.image, e->op, code.entry, mod, fn, aux, why, cap);
	at_error sig;
	if (s == ATD_OK &&
	    launch_check_signature(*fn, atdi_op_desc_of(e->op)->flags_param, &sig) != 0) {
		cudrv.cuModuleUnload(*mod);
		*mod = NULL;
		snprintf(why, cap, "%s", sig.msg);
		s = ATD_ERR_NO_KERNEL;
	} else if (s != ATD_OK && code.is_ptx) {
		char inner[ATDI_MSG_CAP];
		snprintf(inner, sizeof inner, "%s", why);
		snprintf(why, cap, "its cubin is for sm_%d and its PTX does not load on sm_%d: %s",
			 code.arch, ci->arch, inner);
	}
	atdi_code_free(&code);
	return s;
}

static atd_status load_builtin(const atdi_ctx_info *ci, int op, at_dtype dtype, CUmodule *mod,
			       CUfunction *fn, CUfunction *aux, char *why, size_t cap)
{
	const void *image = atdi_builtin_image(op, dtype);
	if (!image) {
		snprintf(why, cap, "no built-in kernel for %s", atdi_op_dtype_name(op, (int)dtype));
		return ATD_ERR_NO_KERNEL;
	}
	atd_status s = load_image(image, op, atdi_op_desc_of(op)->kernel, mod, fn, aux, why, cap);
	if (s != ATD_OK) {
		char inner[ATDI_MSG_CAP];
		snprintf(inner, sizeof inner, "%s", why);
		snprintf(why, cap,
			 "the built-in kernel does not load on %s (sm_%d; it needs sm_75 or newer): %s",
			 ci->name, ci->arch, inner);
	}
	return s;
}

static atd_status load_derived(atd_handle *h, const atdi_jit_job *job, CUmodule *mod,
			       CUfunction *fn, CUfunction *aux, char *why, size_t cap)
{
	void *image = NULL;
	size_t size = 0;
	atd_status s = atdi_jit_get(&h->jit, job, &image, &size, why, cap);
	if (s == ATD_OK)
		s = load_image(image, job->op, atdi_op_desc_of(job->op)->kernel, mod, fn, aux, why,
			       cap);
	free(image);
	return s;
}

/* The module of (ci's context, key, jit_key) if one was tried, else NULL. */
static const atdi_module *find_module(const atd_handle *h, const atdi_ctx_info *ci,
				      long long key, const char *jit_key)
{
	for (size_t i = 0; i < h->nmods; i++) {
		const atdi_module *m = &h->mods[i];
		if (m->ctx == ci->ctx && m->key == key &&
		    (!jit_key || (m->jit_key && strcmp(m->jit_key, jit_key) == 0)))
			return m;
	}
	return NULL;
}

/* Loads the module of (key, jit_key) once per context: e's, the built-in
 * for (op, dtype) (e NULL, job NULL), or the derived job's. */
static atd_status module_fn(atd_handle *h, const atdi_ctx_info *ci, const atdi_entry *e, int op,
			    at_dtype dtype, const atdi_jit_job *job, CUfunction *fn, CUfunction *aux,
			    char *why, size_t cap)
{
	char jit_key[1400];
	long long key = job ? ATDI_DERIVED_KEY : module_key(e, op, dtype);
	if (job)
		atdi_jit_key(job, jit_key, sizeof jit_key);
	const atdi_module *found = find_module(h, ci, key, job ? jit_key : NULL);
	if (found) {
		if (!found->mod)
			snprintf(why, cap, "%s", found->reason ? found->reason : "it failed to load");
		*fn = found->fn;
		if (aux)
			memcpy(aux, found->aux, sizeof found->aux);
		return found->mod ? ATD_OK : found->status;
	}
	if (h->nmods == h->mod_cap) {
		size_t n = h->mod_cap ? 2 * h->mod_cap : 8;
		atdi_module *v = realloc(h->mods, n * sizeof *v);
		if (!v) {
			snprintf(why, cap, "out of memory");
			return ATD_ERR_NO_MEMORY;
		}
		h->mods = v;
		h->mod_cap = n;
	}
	atdi_module m = { .ctx = ci->ctx, .key = key };
	if (job && !(m.jit_key = strdup(jit_key))) {
		snprintf(why, cap, "out of memory");
		return ATD_ERR_NO_MEMORY;
	}
	m.status = job ? load_derived(h, job, &m.mod, &m.fn, m.aux, why, cap)
		   : e ? load_tuned(h, ci, e, &m.mod, &m.fn, m.aux, why, cap)
		       : load_builtin(ci, op, dtype, &m.mod, &m.fn, m.aux, why, cap);
	/* Out of host memory is not the module's fault: try again next time. */
	if (m.status == ATD_ERR_NO_MEMORY) {
		free(m.jit_key);
		return m.status;
	}
	if (m.status != ATD_OK)
		m.reason = strdup(why); /* NULL (no memory) gives a generic reason */
	h->mods[h->nmods++] = m;
	*fn = m.fn;
	if (aux)
		memcpy(aux, m.aux, sizeof m.aux);
	return m.status;
}

atd_status atdi_module_fn(atd_handle *h, const atdi_ctx_info *ci, const atdi_entry *e, int op,
			  at_dtype dtype, CUfunction *fn, CUfunction *aux, char *why, size_t cap)
{
	return module_fn(h, ci, e, op, dtype, NULL, fn, aux, why, cap);
}

atd_status atdi_module_derived(atd_handle *h, const atdi_ctx_info *ci, const atdi_jit_job *job,
			       CUfunction *fn, CUfunction *aux, char *why, size_t cap)
{
	return module_fn(h, ci, NULL, job->op, job->dtype, job, fn, aux, why, cap);
}

void atdi_modules_unload(atd_handle *h)
{
	/* No module means this handle never touched the driver: leave it be. */
	CUcontext saved = NULL;
	int restore = 0;
	for (size_t i = 0; i < h->nmods; i++) {
		atdi_module *m = &h->mods[i];
		if (m->mod) {
			if (!restore)
				restore = cudrv.cuCtxGetCurrent(&saved) == CUDA_SUCCESS ? 1 : -1;
			if (cudrv.cuCtxSetCurrent(m->ctx) == CUDA_SUCCESS)
				cudrv.cuModuleUnload(m->mod);
		}
		free(m->reason);
		free(m->jit_key);
	}
	if (restore == 1)
		cudrv.cuCtxSetCurrent(saved);
	free(h->mods);
	h->mods = NULL;
	h->nmods = h->mod_cap = 0;
}
