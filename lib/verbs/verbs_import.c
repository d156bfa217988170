/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The uroce authors
 */

/*
 * Sharing a context's objects within the process (ibv_import_device(3),
 * ibv_import_pd(3), ibv_import_mr(3)).
 *
 * A context's cmd_fd is a file of its own (a memfd, verbs_context.c);
 * ibv_import_device() on it, or on a dup() of it, opens another context
 * of the same device on that file, which then owns the descriptor (it is
 * closed by ibv_close_device(), as rdma-core does). PDs and MRs get a
 * handle (pd->handle, mr->handle) from the table here; ibv_import_pd()
 * and ibv_import_mr() make another handle object on the same engine PD or
 * MR, for a context on the same file, as the kernel finds an object by
 * its handle in the uverbs file. ibv_unimport_*() free that handle object
 * only; ibv_dealloc_pd() / ibv_dereg_mr() through any of them destroy the
 * object, after which the others must not be used (as with the kernel's,
 * whose handles then fail). Another process cannot import: the objects
 * live in this process's engine.
 *
 * Handles are slots of a table that grows, found and freed in O(1); a
 * freed slot is reused, as the kernel reuses its handles.
 */

#include <stdlib.h>
#include <sys/stat.h>

#include <rte_common.h>

#include "uroce_engine.h"
#include "verbs_priv.h"

struct handle_ent {
	void *obj;			/**< engine object; NULL: free */
	enum uroce_verbs_handle_kind kind;
	dev_t file_dev;			/**< the creating context's file */
	ino_t file_ino;
	uint32_t next_free;		/**< free list, slot + 1 */
};

static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct handle_ent *handles;
static uint32_t handle_cap, handle_free;	/* handle_free: slot + 1 */

/* Grow by half (at least 64 slots), the new ones on the free list. */
static int
handle_grow(void)
{
	uint32_t cap = handle_cap + RTE_MAX(handle_cap / 2, 64u), i;
	struct handle_ent *t = realloc(handles, cap * sizeof(*t));

	if (t == NULL)
		return -ENOMEM;
	for (i = handle_cap; i < cap; i++) {
		t[i].obj = NULL;
		t[i].next_free = i + 1 < cap ? i + 2 : handle_free;
	}
	handle_free = handle_cap + 1;
	handles = t;
	handle_cap = cap;
	return 0;
}

uint32_t
uroce_verbs_handle_add(struct ibv_context *ctx,
		       enum uroce_verbs_handle_kind kind, void *obj)
{
	struct uroce_vctx *c = uroce_vctx_of(ctx);
	struct handle_ent *e;
	uint32_t h = 0;

	pthread_mutex_lock(&handle_lock);
	if (handle_free != 0 || handle_grow() == 0) {
		h = handle_free;
		e = &handles[h - 1];
		handle_free = e->next_free;
		e->obj = obj;
		e->kind = kind;
		e->file_dev = c->file_dev;
		e->file_ino = c->file_ino;
	}
	pthread_mutex_unlock(&handle_lock);
	return h;
}

void
uroce_verbs_handle_del(uint32_t h)
{
	if (h == 0)
		return;
	pthread_mutex_lock(&handle_lock);
	if (h <= handle_cap && handles[h - 1].obj != NULL) {
		handles[h - 1].obj = NULL;
		handles[h - 1].next_free = handle_free;
		handle_free = h;
	}
	pthread_mutex_unlock(&handle_lock);
}

/* The object of handle h, of that kind, made on ctx's file; NULL if none. */
static void *
handle_find(struct ibv_context *ctx, enum uroce_verbs_handle_kind kind,
	    uint32_t h)
{
	struct uroce_vctx *c = uroce_vctx_of(ctx);
	const struct handle_ent *e;
	void *obj = NULL;

	pthread_mutex_lock(&handle_lock);
	if (h != 0 && h <= handle_cap) {
		e = &handles[h - 1];
		if (e->obj != NULL && e->kind == kind &&
		    e->file_dev == c->file_dev && e->file_ino == c->file_ino)
			obj = e->obj;
	}
	pthread_mutex_unlock(&handle_lock);
	return obj;
}

/* ------------------------------------------------------------------------
 * The verbs.
 */

/* NULL with errno: EBADF for a bad descriptor, EINVAL for one that is no
 * open context's file. */
struct ibv_context *
ibv_import_device(int cmd_fd)
{
	struct uroce_verbs_device *vdev;
	struct ibv_context *ctx;
	struct stat st;

	if (fstat(cmd_fd, &st) != 0)
		return uroce_verbs_null(EBADF);
	vdev = uroce_verbs_ctx_file_device(st.st_dev, st.st_ino);
	if (vdev == NULL)
		return uroce_verbs_null(EINVAL);
	ctx = uroce_verbs_ctx_open(&vdev->ibdev, cmd_fd);
	uroce_verbs_device_put(vdev);
	return ctx;
}

/* NULL with errno EINVAL when no PD of this context's file has it. */
struct ibv_pd *
ibv_import_pd(struct ibv_context *context, uint32_t pd_handle)
{
	struct uroce_vpd *pd;
	struct uroce_pd *upd;

	if (context == NULL)
		return uroce_verbs_null(EINVAL);
	upd = handle_find(context, UROCE_VH_PD, pd_handle);
	if (upd == NULL)
		return uroce_verbs_null(EINVAL);
	pd = calloc(1, sizeof(*pd));
	if (pd == NULL)
		return uroce_verbs_null(ENOMEM);
	pd->upd = upd;
	pd->imported = true;
	pd->pd.context = context;
	pd->pd.handle = pd_handle;
	return &pd->pd;
}

void
ibv_unimport_pd(struct ibv_pd *pd)
{
	struct uroce_vpd *p = (struct uroce_vpd *)pd;

	if (pd != NULL && p->imported)
		free(p);
}

/* NULL with errno EINVAL when no MR of pd's context's file has it, or the
 * MR is in another PD. */
struct ibv_mr *
ibv_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct uroce_vmr *mr;
	struct uroce_mr *umr;

	if (pd == NULL)
		return uroce_verbs_null(EINVAL);
	umr = handle_find(pd->context, UROCE_VH_MR, mr_handle);
	if (umr == NULL || umr->pd != ((struct uroce_vpd *)pd)->upd)
		return uroce_verbs_null(EINVAL);
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return uroce_verbs_null(ENOMEM);
	mr->umr = umr;
	mr->imported = true;
	mr->mr.context = pd->context;
	mr->mr.pd = pd;
	mr->mr.addr = umr->addr;
	mr->mr.length = umr->length;
	mr->mr.handle = mr_handle;
	mr->mr.lkey = umr->lkey;
	mr->mr.rkey = umr->rkey;
	return &mr->mr;
}

void
ibv_unimport_mr(struct ibv_mr *mr)
{
	struct uroce_vmr *m = (struct uroce_vmr *)mr;

	if (mr != NULL && m->imported)
		free(m);
}
