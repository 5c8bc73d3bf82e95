"""The files an upload may be, by whose format they are: the one list the upload check, the home
page's file picker and its help, the refusals and the OpenAPI text read. A leaf module (no
imports), so app.errors can read it too."""

UPLOAD_FORMATS = {"xt": (".safetensors", ".npz"), "llama2.c": (".bin",)}
UPLOAD_SUFFIXES = tuple(suffix for suffixes in UPLOAD_FORMATS.values() for suffix in suffixes)


def upload_formats_text() -> str:
    """The accepted files in words: "xt .safetensors or .npz, or llama2.c .bin"."""
    return ", or ".join(f"{maker} {' or '.join(suffixes)}" for maker, suffixes in UPLOAD_FORMATS.items())
