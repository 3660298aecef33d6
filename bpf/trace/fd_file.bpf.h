/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * fd_file.bpf.h — the file behind an fd of the current task, three ways:
 * plain loads from the trusted task (fd_to_file), probe reads only
 * (fd_to_file_probe), and loads from the task cast untrusted where
 * bpf_rdonly_cast exists (fd_to_file_acc). The kernel checks each load of
 * a pointer from a trusted pointer by scanning its type names, in every
 * state of the program: the cheaper walks for the checker are used where
 * the hook's states are many. Included by vfs.bpf.h, after its ACC_* modes.
 */
#ifndef GPUIO_FD_FILE_BPF_H
#define GPUIO_FD_FILE_BPF_H

/* fdt->fd[fd]: a pointer array the verifier cannot index (bpf_rdonly_cast to
 * void, which could, is 6.17+ only), so one probe_read. */
static __always_inline struct file *fd_slot(struct fdtable *fdt, int fd)
{
	struct file **arr = fdt->fd;
	struct file *f = NULL;

	bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
	return f;
}

/*
 * The file behind fd in the current task, NULL when none. The task is a
 * trusted BTF pointer, so the walk to the fd array is plain loads; only the
 * array slot needs a helper.
 */
/* fd's slot, from the task's files: plain loads, of whatever trust files has */
static __always_inline struct file *fd_in_files(struct files_struct *files, int fd)
{
	struct fdtable *fdt;

	if (fd < 0 || !files)
		return NULL;
	fdt = files->fdt;
	if (!fdt || (unsigned int)fd >= fdt->max_fds)
		return NULL;
	return fd_slot(fdt, fd);
}

static __always_inline struct file *fd_to_file(int fd)
{
	struct task_struct *task = bpf_get_current_task_btf();

	return fd_in_files(task->files, fd);
}

/*
 * The same with probe reads only, for a path that runs seldom (a traced
 * thread going to sleep): no load from a trusted pointer, so the kernel
 * does not scan its type names for the loaded field's trust, in each of
 * the switch hook's states (9 walks there, ~7 ms of a start).
 */
static __always_inline struct file *fd_to_file_probe(int fd)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();
	struct files_struct *files = BPF_CORE_READ(task, files);
	struct fdtable *fdt;
	struct file **arr;
	struct file *f = NULL;

	if (fd < 0 || !files)
		return NULL;
	fdt = BPF_CORE_READ(files, fdt);
	if (!fdt || (unsigned int)fd >= BPF_CORE_READ(fdt, max_fds))
		return NULL;
	arr = BPF_CORE_READ(fdt, fd);
	bpf_probe_read_kernel(&f, sizeof(f), &arr[fd]);
	return f;
}

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym __weak;

/*
 * The same for a hook that may cast (ACC_CAST, 6.2+): the task cast to an
 * untrusted pointer, whose loads are as cheap. The kernel checks each load
 * of a pointer from a trusted one by scanning the kernel's type names for
 * the field's trust; from an untrusted one it does not. That check, in
 * every state of every call site, was a third of the syscall hooks' load.
 */
static __always_inline struct file *fd_to_file_acc(int fd, const int acc)
{
	struct task_struct *task;

	if (acc != ACC_CAST)
		return fd_to_file(fd);
	task = bpf_rdonly_cast(bpf_get_current_task_btf(), bpf_core_type_id_kernel(struct task_struct));
	return fd_in_files(task->files, fd);
}

#endif
