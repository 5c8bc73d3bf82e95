"""The files an upload may be: the `uploadable` rows of the file formats' table
(xt_core.checkpoint.formats), read when asked, so a format registered later counts too. The
upload check, the home page's file picker and its help, the refusals and the OpenAPI text read
them here."""

from xt_core.checkpoint.formats import uploadable


def upload_formats() -> dict[str, tuple[str, ...]]:
    """{whose format: its suffixes}: {"xt": (".safetensors", ".npz"), "llama2.c": (".bin",)}."""
    return uploadable()


def upload_suffixes() -> tuple[str, ...]:
    return tuple(suffix for suffixes in upload_formats().values() for suffix in suffixes)


def upload_formats_text() -> str:
    """The accepted files in words: "xt .safetensors or .npz, or llama2.c .bin"."""
    return ", or ".join(f"{maker} {' or '.join(suffixes)}" for maker, suffixes in upload_formats().items())


UPLOAD_SUFFIXES = upload_suffixes()  # xt's own, when the app is imported: what its OpenAPI text names
