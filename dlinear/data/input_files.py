"""Opening inputs: local paths and fsspec URLs, compressed or not, read in chunks."""
from __future__ import annotations

import os

import numpy as np

from ..errors import DlinearError

# LIBSVM text is read and parsed this many bytes at a time (more for a longer line), so
# a reader holds one chunk of text besides the CSR arrays, never the whole file. The peak
# RSS while reading is several chunks above the arrays (59 MB at 16 MB, 7 MB at 4 MB on
# the 200k-row rcv1-shaped file, same CPU time: BENCHMARKS.md, "float32 data").
READ_CHUNK_BYTES = 4 << 20


def is_url(path) -> bool:
    """Whether path names a file through an fsspec protocol (s3://, http://, ...)."""
    return isinstance(path, str) and "://" in path and not path.startswith("file://")


# the first bytes of the compressed formats the reader takes (fsspec's codecs), so that a
# compressed file is read as such whatever it is named; .lzma (no signature) by its name
_SIGNATURES = [(b"\x1f\x8b", "gzip"), (b"BZh", "bz2"), (b"\xfd7zXZ\x00", "xz"),
               (b"PK\x03\x04", "zip"), (b"\x28\xb5\x2f\xfd", "zstd")]
_SIGNATURE_BYTES = max(len(magic) for magic, _ in _SIGNATURES)


def compression_of(first_bytes: bytes, name: str):
    """The codec of a file that starts with first_bytes (fsspec's name for it), else the
    one its name says for a format without a signature (.lzma), else None (plain)."""
    from fsspec.compression import compr
    for magic, codec in _SIGNATURES:
        if first_bytes.startswith(magic) and codec in compr:
            return codec
    from fsspec.utils import infer_compression
    by_name = infer_compression(name)
    return by_name if by_name == "lzma" else None


class open_input:
    """`with open_input(path, storage_options) as (f, size)`: a binary file object of a
    local path or fsspec URL, and its size in bytes (None for a compressed file, read
    through its codec: gzip, bz2, xz, zip, zstd where installed, known by the file's first
    bytes). Every failure to open is "can't open input file"."""

    def __init__(self, name: str, storage_options: dict | None = None):
        self.name = name
        self.storage_options = storage_options or {}
        self._file = None
        self._raw = None

    def __enter__(self):
        name = self.name
        try:
            if is_url(name) or self.storage_options:
                from fsspec.core import url_to_fs
                fs, fs_path = url_to_fs(name, **self.storage_options)

                def reopen():
                    return fs.open(fs_path, "rb", block_size=READ_CHUNK_BYTES)

                def size():
                    return self._raw.size if hasattr(self._raw, "size") else fs.size(fs_path)
            else:
                def reopen():
                    return open(name, "rb")

                def size():
                    return os.fstat(self._raw.fileno()).st_size
            self._raw = reopen()
            first = self._raw.read(_SIGNATURE_BYTES)
            try:
                self._raw.seek(0)
            except (OSError, ValueError):      # a stream that cannot go back: open anew
                self._raw.close()
                self._raw = reopen()
            codec = compression_of(first, name)
            if codec:
                from fsspec.compression import compr
                self._file = compr[codec](self._raw, mode="rb")
                return self._file, None
            self._file = self._raw
            return self._file, int(size())
        except DlinearError:
            raise
        except Exception as e:        # OSError, and the object stores' own errors
            self.__exit__(None, None, None)
            if isinstance(e, ImportError):
                raise DlinearError(f"can't open input file {name}: {e}") from None
            detail = "" if isinstance(e, FileNotFoundError) or not is_url(name) else f": {e}"
            raise DlinearError(f"can't open input file {name}{detail}") from None

    def __exit__(self, *exc):
        for f in (self._file, self._raw):
            if f is not None:
                try:
                    f.close()
                except Exception:
                    pass
        self._file = self._raw = None
        return False


def read_into(f, view: np.ndarray) -> int:
    """Fill view (a uint8 array) from f; returns the bytes read (fewer only at EOF)."""
    got = 0
    n = len(view)
    while got < n:
        readinto = getattr(f, "readinto", None)
        if readinto is not None:
            k = readinto(memoryview(view[got:]))
        else:
            data = f.read(n - got)
            k = len(data)
            view[got:got + k] = np.frombuffer(data, dtype=np.uint8)
        if not k:
            break
        got += k
    return got


def file_stamp(path, storage_options: dict | None = None):
    """What identifies a version of a file: (size, modification time or ETag)."""
    name = os.fspath(path)
    if not (is_url(name) or storage_options):
        try:
            st = os.stat(name)
        except OSError:
            raise DlinearError(f"can't open input file {name}") from None
        return st.st_size, st.st_mtime_ns
    try:
        from fsspec.core import url_to_fs
        fs, fs_path = url_to_fs(name, **(storage_options or {}))
        info = fs.info(fs_path)
    except Exception as e:
        detail = "" if isinstance(e, FileNotFoundError) else f": {e}"
        raise DlinearError(f"can't open input file {name}{detail}") from None
    version = next((str(info[k]) for k in ("ETag", "etag", "mtime", "LastModified",
                                           "last_modified", "modified") if info.get(k)), "")
    return int(info.get("size") or 0), version
