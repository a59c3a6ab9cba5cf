"""The package's exceptions: one class per status of libautotune-dispatch
(include/autotune/dispatch.h, ATD_STATUS_LIST), each carrying the status
code, its name and the library's message (atd_errmsg), plus the errors the
package itself raises before the library is reached: the library not found
or of another version, PyTorch or a GPU missing.

Arguments that are wrong in Python's terms (a CPU tensor, an integer dtype,
shapes that differ) raise TypeError or ValueError, as PyTorch does.
"""


class Error(RuntimeError):
    """Base of every error from autotune_dispatch.

    status: the atd_status code (None for errors raised before the library
    is called); status_name: e.g. "ATD_ERR_DB_MISSING"; message: the text.
    """

    status = None
    status_name = None

    def __init__(self, message, status=None, status_name=None):
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        if status_name is not None:
            self.status_name = status_name


class InvalidArgument(Error):
    status, status_name = 1, "ATD_ERR_INVALID_ARGUMENT"


class NoDriver(Error):
    status, status_name = 2, "ATD_ERR_NO_DRIVER"


class NoContext(Error):
    status, status_name = 3, "ATD_ERR_NO_CONTEXT"


class CudaError(Error):
    status, status_name = 4, "ATD_ERR_CUDA"


class DatabaseMissing(Error):
    status, status_name = 5, "ATD_ERR_DB_MISSING"


class DatabaseCorrupt(Error):
    status, status_name = 6, "ATD_ERR_DB_CORRUPT"


class DatabaseNewer(Error):
    status, status_name = 7, "ATD_ERR_DB_NEWER"


class OutOfHostMemory(Error):
    status, status_name = 8, "ATD_ERR_NO_MEMORY"


class NoKernel(Error):
    status, status_name = 9, "ATD_ERR_NO_KERNEL"


class KernelAltered(Error):
    """A stored kernel image does not match its digest: never launched."""
    status, status_name = 10, "ATD_ERR_KERNEL_ALTERED"


class TargetError(Error):
    """A cross-entropy target is outside [0, V) and not ignore_index (the
    message names the first such row); nothing more was launched."""
    status, status_name = 11, "ATD_ERR_TARGET"


class LibraryNotFound(Error):
    """libautotune-dispatch could not be found or loaded (the message lists
    where it was looked for), or it is of a version this package does not
    speak."""


class Unavailable(Error):
    """What a call needs is missing on this machine: PyTorch, or a CUDA
    GPU."""


# By status code; tests/test_errors.py checks it against the header's list.
BY_STATUS = {cls.status: cls for cls in (InvalidArgument, NoDriver, NoContext, CudaError,
                                         DatabaseMissing, DatabaseCorrupt, DatabaseNewer,
                                         OutOfHostMemory, NoKernel, KernelAltered, TargetError)}


def from_status(status, message):
    """The exception for a failed call: its class by status, its text the
    library's message (the status's own text when the message is empty)."""
    cls = BY_STATUS.get(status)
    if cls is None:
        return Error(f"{message} (unknown status {status})", status, f"status {status}")
    return cls(message)
