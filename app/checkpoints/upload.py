"""Reading an uploaded checkpoint: the request body (bounded while it arrives), the one file
of a multipart/form-data body, and the checks before xt_core.checkpoint reads it.

Nothing here unpickles: the accepted types are the uploadable rows of the file formats' table
(app.checkpoints.formats): safetensors (raw arrays), .npz (read with allow_pickle=False),
llama2.c's raw float32 .bin and nanoGPT's ckpt.pt (torch.save's zip, its pickle read by a reader
that resolves tensors and plain containers only and never runs code: xt_core/checkpoint/torch_file.py);
other PyTorch files (.pth, pickles) are refused by name before a byte of them is parsed.
"""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from email.message import Message
from email.parser import BytesHeaderParser

from app import words
from app.checkpoints.formats import upload_formats, upload_suffixes
from app.security import MULTIPART_OVERHEAD
from app.words.said import Fixed, Said

# A zip (an .npz is one) may expand far beyond the upload (a zip bomb); at most this many times
# the upload limit is ever decompressed.
NPZ_EXPANSION_LIMIT = 8
ZIP_MAGIC = b"PK\x03\x04"
_FILENAME_JUNK = re.compile(r"[\x00-\x1f\x7f]")


class UploadError(Exception):
    """The upload is refused: `status` 413 (too large), 415 (wrong type) or 422 (unreadable)."""

    def __init__(self, status: int, message: Said):
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class UploadedFile:
    filename: str
    suffix: str
    data: bytes


class AcceptedFormats:
    """The files an upload may be, in words of a language (formats.upload_formats_text's English:
    "xt .safetensors or .npz, or llama2.c .bin"), as a value of a refusal."""

    def __str__(self) -> str:
        return self.in_(words.DEFAULT)

    def in_(self, lang: str) -> str:
        either = words.t(lang, "error-upload-or")
        return f", {either} ".join(
            words.t(lang, "error-upload-format", maker=maker, suffixes=f" {either} ".join(suffixes))
            for maker, suffixes in upload_formats().items()
        )


def _megabytes(n: int) -> Fixed:
    return Fixed(n / (1 << 20), 1)


def too_large(size: int, limit: int) -> UploadError:
    return UploadError(413, Said("error-upload-too-large", size=_megabytes(size), limit=_megabytes(limit)))


async def read_body(chunks: AsyncIterator[bytes], declared: str | None, limit: int) -> bytes:
    """The request body, refused with 413 as soon as it grows past the limit (and before
    reading anything when Content-Length already says so): a huge upload never sits in memory."""
    cap = limit + MULTIPART_OVERHEAD
    if declared is not None and declared.isdigit() and int(declared) > cap:
        raise too_large(int(declared) - MULTIPART_OVERHEAD, limit)
    body = bytearray()
    async for chunk in chunks:
        body += chunk
        if len(body) > cap:
            raise too_large(len(body) - MULTIPART_OVERHEAD, limit)
    return bytes(body)


def _headers(raw: bytes) -> Message:
    return BytesHeaderParser().parsebytes(raw + b"\r\n\r\n")


def clean_filename(name: str | None) -> str:
    """The file's own name, for display only (never a path): no directories, no control
    characters, at most 80 characters."""
    name = (name or "").encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    name = _FILENAME_JUNK.sub("", re.split(r"[/\\]", name)[-1]).strip()
    return name[-80:] or "upload"


def parse_multipart(body: bytes, content_type: str | None) -> list[tuple[str, str | None, bytes]]:
    """(field name, filename or None, data) of every part of a multipart/form-data body."""
    header = Message()
    header["content-type"] = content_type or ""
    boundary = header.get_param("boundary")
    if header.get_content_type() != "multipart/form-data" or not isinstance(boundary, str) or not boundary:
        raise UploadError(415, Said("error-upload-not-multipart"))
    delimiter = b"\r\n--" + boundary.encode("latin-1", "replace")
    sections = (b"\r\n" + body).split(delimiter)
    parts = []
    for section in sections[1:]:
        if section.startswith(b"--"):
            return parts  # the closing delimiter
        head, found, data = section.removeprefix(b"\r\n").partition(b"\r\n\r\n")
        if not found:
            break
        headers = _headers(head)
        name = headers.get_param("name", header="content-disposition")
        filename = headers.get_param("filename", header="content-disposition")
        parts.append((name if isinstance(name, str) else "", filename if isinstance(filename, str) else None, data))
    raise UploadError(422, Said("error-upload-truncated"))


def the_file(parts: list[tuple[str, str | None, bytes]], limit: int) -> UploadedFile:
    """The one file of the form, type- and size-checked."""
    files = [(filename, data) for _, filename, data in parts if filename is not None]
    if len(files) != 1:
        raise UploadError(422, Said("error-upload-file-count", count=str(len(files))))
    filename, data = files[0]
    filename = clean_filename(filename)
    suffix = next((s for s in upload_suffixes() if filename.lower().endswith(s)), None)
    if suffix is None:
        raise UploadError(415, Said("error-upload-type", file=repr(filename), formats=AcceptedFormats()))
    if len(data) > limit:
        raise too_large(len(data), limit)
    if not data:
        raise UploadError(422, Said("error-upload-empty", file=repr(filename)))
    if data.startswith(ZIP_MAGIC):  # whatever its name says
        _check_zip_expansion(filename, data, limit * NPZ_EXPANSION_LIMIT)
    return UploadedFile(filename, suffix, data)


def _check_zip_expansion(filename: str, data: bytes, limit: int) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            expanded = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        return  # not a zip at all: xt_core.checkpoint.load says so (a 422 with its message)
    if expanded > limit:
        raise UploadError(
            413, Said("error-upload-expands", file=repr(filename), size=_megabytes(expanded), limit=_megabytes(limit))
        )
