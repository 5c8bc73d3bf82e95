"""Counts user-facing literals: strings of two or more words written in code instead of a catalogue
(issue 32's measure of how much of xt still has its words welded in).

    python -m benchmarks.literals            # counts by kind, and the files with the most
    python -m benchmarks.literals --list     # every literal, file:line

What counts, the same way before and after the words layer:
* Python (app/): a string constant (f-strings' constant parts included) of two or more words, not
  a docstring;
* JavaScript (static/js): a string or template literal's text (outside its ${...}) of two or more
  words; comments are skipped;
* templates: a text run between tags (outside {# #}, {% %}, {{ }} and <!-- -->), and the values of
  the attributes people read (title, placeholder, aria-label, alt, label), of two or more words.
A word is letters only, first possibly a capital, then lower-case letters, with trailing
punctuation allowed ("Start", "tokens;"), so identifiers, CSS selectors, paths, URLs and code
("n_embd", "#start-form", "data-config", "tokens[:-1]") are not words.
tests/test_code_shape.py uses the same scan to keep the modules on the words layer free of them.
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WORD = re.compile(r"^[(“«\"']?[A-Za-zА-Яа-яЁё][a-zа-яё]+[)”»\"',.:;!?…]*$")
JS_STRING = re.compile(
    r"""//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`(?:\\.|\$\{[^}]*\}|[^`\\])*`""", re.S
)
TEMPLATE_CODE = re.compile(r"\{#.*?#\}|\{%.*?%\}|\{\{.*?\}\}|<!--.*?-->", re.S)
TAG = re.compile(r"<[^>]*>", re.S)
READ_ATTRIBUTE = re.compile(r"""\b(?:title|placeholder|aria-label|alt|label)=(["'])(.*?)\1""", re.S)


NAMES = {"xt"}  # names, not words: no language translates them


def is_words(text: str) -> bool:
    """Two or more words (see the module's docstring)."""
    return sum(1 for token in text.split() if WORD.match(token) and token not in NAMES) >= 2


def python_literals(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        if is_words(node.value)
    ]


def js_literals(path: Path) -> list[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    found = []
    for match in JS_STRING.finditer(source):
        text = match.group(0)
        if text.startswith("/"):
            continue  # a comment
        body = re.sub(r"\$\{[^}]*\}", " ", text[1:-1])
        if is_words(body):
            found.append((source.count("\n", 0, match.start()) + 1, body))
    return found


def template_literals(path: Path) -> list[tuple[int, str]]:
    source = path.read_text(encoding="utf-8")
    blanked = TEMPLATE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), source)  # lines kept
    found = [
        (blanked.count("\n", 0, m.start()) + 1, m.group(2))
        for m in READ_ATTRIBUTE.finditer(blanked)
        if is_words(m.group(2))
    ]
    text = TAG.sub(lambda m: "\0" + re.sub(r"[^\n]", " ", m.group(0))[1:], blanked)
    offset = 0
    for run in text.split("\0"):
        if is_words(run):
            found.append((text.count("\n", 0, offset) + 1, " ".join(run.split())))
        offset += len(run) + 1
    return found


def scan(root: Path = ROOT) -> dict[str, dict[Path, list[tuple[int, str]]]]:
    """{kind: {file: [(line, literal)]}} over app/ (Python), static/js and templates."""
    kinds = {
        "python": (sorted((root / "app").rglob("*.py")), python_literals),
        "js": (sorted((root / "static" / "js").rglob("*.js")), js_literals),
        "templates": (sorted((root / "templates").rglob("*.html")), template_literals),
    }
    result = {}
    for kind, (paths, literals) in kinds.items():
        result[kind] = {path: found for path in paths if (found := literals(path))}
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print every literal")
    parser.add_argument("--root", type=Path, default=ROOT, help="the tree to scan (another worktree)")
    args = parser.parse_args(argv)
    found = scan(args.root)
    for kind, files in found.items():
        total = sum(len(v) for v in files.values())
        print(f"{kind:10} {total:5} literals in {len(files):3} files")
        if args.list:
            for path, literals in files.items():
                for line, literal in literals:
                    print(f"  {path.relative_to(args.root)}:{line}: {literal[:100]!r}")
    by_file = Counter({p.relative_to(args.root): len(v) for files in found.values() for p, v in files.items()})
    print("most:", ", ".join(f"{p} {n}" for p, n in by_file.most_common(8)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
