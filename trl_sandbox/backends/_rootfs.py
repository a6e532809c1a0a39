"""A fresh root filesystem per execution, for the trusted launcher (standard library only; see ``_launcher.py``).

An image's unpacked root filesystem (:mod:`trl_sandbox.images`) is the read-only lower layer of a kernel overlayfs
whose upper and work directories live on a tmpfs of the execution's own, mounted in the execution's private mount
namespace: whatever the command writes lands in that tmpfs, whose size is the upper layer's limit (its pages are
charged to the sandbox's memory cgroup), and ends when the namespace does. Reset is therefore the end of the
mount namespace: no copy, no container creation.

The execution's first process (PID 1 of its PID namespace) then mounts a fresh ``/proc``, a ``/dev`` of its own (a
tmpfs with the host's ``null``, ``zero``, ``full``, ``random``, ``urandom`` and ``tty`` bound in, ``/dev/shm``, and
the usual ``fd``/``stdin``/``stdout``/``stderr`` links), makes the overlay its root (``pivot_root``) and detaches the
host's root: from then on no path names a host file. It runs as root *inside* a user namespace that maps only that
root to one unprivileged host uid: the image's owner (``trl_sandbox.images.layers.IMAGE_UID`` when root imported the
image, the importing user's uid otherwise), so that the repository's files are its own as in the container images
these trees come from, while on the host it is nobody's account. Its capabilities are docker's default set (no
``CAP_SYS_ADMIN``), and only over its own user namespace: as root, the mount, PID, network, IPC and UTS namespaces
belong to the host's user namespace, so nothing can be mounted or unmounted inside.

Where the kernel cannot mount overlayfs here, setup fails with the kernel's reason (the backend refuses the
execution): a command never runs on the host's own root.
"""

import ctypes
import fcntl
import os
import platform
import socket
import struct

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
MNT_DETACH = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
PR_CAPBSET_DROP = 24
CAP_LAST = 40
#: Docker's default capabilities (moby's ``oci/caps/defaults.go``): what root in a container has. The rest are
#: dropped from the bounding set, ``CAP_SYS_ADMIN`` among them.
DOCKER_CAPS = (0, 1, 3, 4, 5, 6, 7, 8, 10, 13, 18, 27, 29, 31)  # chown dac_override fowner fsetid kill setgid
# setuid setpcap net_bind_service net_raw sys_chroot mknod audit_write setfcap
DEVICES = ("null", "zero", "full", "random", "urandom", "tty")
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
_SIOCGIFFLAGS = 0x8913
_SIOCSIFFLAGS = 0x8914
_IFF_UP = 0x1


def _check(result, what):
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, "%s: %s" % (what, os.strerror(err)))


def mount(libc, source, target, fstype, flags=0, options=None):
    """``mount(2)``; raises OSError naming what failed."""
    enc = lambda s: None if s is None else s.encode()  # noqa: E731
    _check(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(options)),
           "mounting %s on %s" % (fstype or source, target))


def mount_tree(libc, tree, cwd, in_userns):
    """Mount the execution's tree under ``cwd`` (a host directory in the launcher's new mount namespace): a tmpfs of
    ``tree["upper_bytes"]`` bytes and ``tree["upper_inodes"]`` inodes holding ``upper/`` and ``work/``, and the
    overlay of ``tree["rootfs"]`` (lower) and ``upper/`` on ``merged/``. Returns the merged directory.

    ``in_userns``: the launcher already runs in the execution's user namespace (not root); overlayfs then keeps its
    own metadata in ``user.`` extended attributes (``userxattr``).

    Raises:
        OSError: a mount failed (overlayfs unavailable, the lower layer unreadable), with the kernel's reason.
    """
    owner = tree["owner"]
    mode = "0755" if in_userns else "0700"
    options = "size=%d,nr_inodes=%d,mode=%s" % (tree["upper_bytes"], tree["upper_inodes"], mode)
    mount(libc, "tmpfs", cwd, "tmpfs", MS_NOSUID, options)
    upper, work, merged = (os.path.join(cwd, name) for name in ("upper", "work", "merged"))
    for path in (upper, work, merged):
        os.mkdir(path, 0o755)
    lower_root = os.stat(tree["rootfs"])
    os.chmod(upper, lower_root.st_mode & 0o7777)
    if not in_userns:
        os.chown(upper, owner, owner)  # the tree's "/" is root's inside, as the image's is
    overlay = "lowerdir=%s,upperdir=%s,workdir=%s" % (tree["rootfs"], upper, work)
    try:
        mount(libc, "overlay", merged, "overlay", MS_NOSUID, overlay + (",userxattr" if in_userns else ""))
    except OSError as exc:
        raise OSError(exc.errno, "overlayfs cannot be mounted here (%s); a repository tree is never run on the "
                      "host's root" % exc.strerror) from None
    return merged


def loopback_up():
    """Bring up ``lo`` in the (new, empty) network namespace: tests that serve on 127.0.0.1 work; nothing else
    is reachable, since the namespace has no other interface."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        ifreq = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s.fileno(), _SIOCGIFFLAGS, ifreq))[1]
        fcntl.ioctl(s.fileno(), _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


def enter_tree(libc, merged):
    """In the execution's PID 1, before it changes identity: mount ``/proc`` and ``/dev`` in ``merged``, make it
    the root and detach the host's. Raises OSError.

    It first takes a mount namespace of its own: ``pivot_root`` moves the root of every process of its namespace,
    and the launcher must keep the host's."""
    _check(libc.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    proc, dev = os.path.join(merged, "proc"), os.path.join(merged, "dev")
    for path in (proc, dev):
        if not os.path.isdir(path):
            os.mkdir(path, 0o755)
    mount(libc, "proc", proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    mount(libc, "tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "size=65536,nr_inodes=64,mode=0755")
    for name in DEVICES:
        target = os.path.join(dev, name)
        os.close(os.open(target, os.O_CREAT | os.O_WRONLY, 0o666))
        mount(libc, "/dev/" + name, target, None, MS_BIND)
    for name, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"), ("stdout", "/proc/self/fd/1"),
                         ("stderr", "/proc/self/fd/2")):
        os.symlink(target, os.path.join(dev, name))
    shm = os.path.join(dev, "shm")
    os.mkdir(shm, 0o1777)
    mount(libc, "tmpfs", shm, "tmpfs", MS_NOSUID | MS_NODEV, "size=%d,mode=1777" % (64 << 20))
    os.chdir(merged)
    _check(libc.syscall(_PIVOT_ROOT[platform.machine()], b".", b"."), "pivot_root")
    _check(libc.umount2(b".", MNT_DETACH), "detaching the host's root")
    os.chdir("/")


def drop_capabilities(libc, keep=DOCKER_CAPS):
    """Drop every capability not in ``keep`` from the bounding set (what root gets at ``execve``). Raises
    OSError."""
    for cap in range(CAP_LAST + 1):
        if cap not in keep and libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            if err != 22:  # EINVAL: a capability this kernel does not have
                raise OSError(err, "dropping capability %d: %s" % (cap, os.strerror(err)))


def write_id_maps(pid, owner, group):
    """Map root of ``pid``'s (new) user namespace to ``owner``/``group`` on the host, and nothing else
    (``/proc/PID/uid_map``, ``gid_map``; ``setgroups`` denied first). Raises OSError."""
    with open("/proc/%s/setgroups" % pid, "w") as f:
        f.write("deny")
    with open("/proc/%s/uid_map" % pid, "w") as f:
        f.write("0 %d 1" % owner)
    with open("/proc/%s/gid_map" % pid, "w") as f:
        f.write("0 %d 1" % group)


def write_identity_files():
    """``/etc/hosts`` and ``/etc/hostname`` as docker writes them into a container (the image's own are replaced:
    ``localhost`` must resolve to the loopback the tree has)."""
    os.makedirs("/etc", exist_ok=True)
    for path, text in (("/etc/hosts", "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
                                      "127.0.1.1\tsandbox\n"),
                       ("/etc/hostname", "sandbox\n")):
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        with open(path, "w") as f:
            f.write(text)


def place_inputs(fds, first=3):
    """Put the sealed input files ``fds`` (descriptors in this process) at ``first``, ``first + 1``, ... for the
    command (inheritable), in order."""
    moved = [os.dup(fd) for fd in fds]  # out of the way of the targets first
    for fd in fds:
        os.close(fd)
    for i, fd in enumerate(moved):
        os.dup2(fd, first + i, inheritable=True)
        os.close(fd)
