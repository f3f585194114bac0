"""Generated parts of the docs' Markdown pages, between two marker lines that a
person writes once; the rest of the page is left as written."""
import sys


def rewrite_between(page, begin, end, lines, who):
    """Replaces what lies between the lines `begin` and `end` of `page` (a pathlib.Path)
    with `lines`; exits naming `who` and the markers where the page lacks them."""
    text = page.read_text()
    first, last = text.find(begin), text.find(end)
    if first < 0 or last < first:
        sys.exit(f"{who}: {page} has no generated part to rewrite ({begin!r} ... {end!r})")
    page.write_text(text[:first] + "\n".join([begin, "", *lines, "", end])
                    + text[last + len(end):])
