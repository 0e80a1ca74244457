"""Text from the data, made inert before it reaches Markdown (the app) or Plotly (figures and the report).

A dataset names its criteria, languages, judges and systems; a user types a file name; a link carries
``?dataset=``. None of it may become markup in another viewer's browser: a ``![](http://…)`` in a criterion
name would make every viewer fetch a remote image, a ``[Click here](http://…)`` would put a live link inside
the app's own message box, and a ``<a href=…>`` in a judge name would be a live link in a Plotly figure.

Every data-derived or URL-derived string goes through one of two functions here on its way to the screen:

- :func:`md` for Streamlit Markdown (``st.markdown``, ``st.caption``, ``st.info``/``error``, labels of
  expanders, tabs, metrics and radio options);
- :func:`plot_text` for Plotly text (axis tick labels, titles, legend entries, annotations, hover text).

Tables (``st.dataframe``, the report's ``<table>``) show cells as text and need neither.
"""

from __future__ import annotations

import html
import re

__all__ = ["md", "plot_text"]

# Inline markup anywhere in a line: emphasis, code, links and images, strikethrough, tables, entities, raw HTML
# and Streamlit's ``$…$`` maths. A backslash escapes any ASCII punctuation (CommonMark 2.4); ``<`` and ``>``
# become entities, for renderers that allow raw HTML.
_INLINE = re.compile(r"([\\`*\[\]!|~$&])")
# An underscore between two letters or digits ("superficial_a") cannot open or close emphasis (CommonMark 6.2):
# only the others are escaped, so that code names read as written.
_UNDERSCORE = re.compile(r"_(?![^\W_])|(?<![^\W_])_")
# Streamlit's directives and emoji codes open with a colon before a name (``:red[…]``, ``:material/home:``,
# ``:smile:``, ``:+1:``); a colon before a space or the end of the text ("file.csv: no rows") is plain.
_COLON = re.compile(r":(?=[\w+\-])")
# Block markup is read only at the start of a line: a heading, quote, list item, setext underline or rule.
_BLOCK_START = re.compile(r"^(\d{1,9})([.)])|^([#>+\-=])")
# Line breaks would start a new block (a heading, a list, a quote) in the middle of a sentence.
_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")
# GitHub-flavoured Markdown turns a bare URL, www. address or e-mail in the text into a live link, after the
# escapes are read (so escaping cannot stop it): an invisible word joiner inside the prefix does.
_AUTOLINK = re.compile(r"(?i)(https?|ftp|mailto|xmpp|www)(?=[:.])|(?=@)")
_JOINER = "\u2060"


def md(value: object) -> str:
    r"""``value`` as literal text inside Streamlit Markdown: no link, image, emphasis, directive or maths.

    Only what Markdown could act on is escaped, so that ordinary names read as written in the source too
    (``gpt-4o/cot``, ``scores.csv: no rows``). Line breaks become spaces and the text is stripped: placed at the
    start of a line it cannot open a block (a leading ``#``, ``>``, ``-``, ``+``, ``=`` or ``1.`` is escaped),
    nor an indented code block. A URL or e-mail address gets an invisible word joiner (U+2060) after its scheme
    or ``www`` or before its ``@``, so that Markdown does not make it a link of its own.

    Examples
    --------
    >>> md("![x](http://evil.example/a.png)")
    '\\!\\[x\\](http\u2060://evil.example/a.png)'
    >>> md("www.evil.example or ana@evil.example")
    'www\u2060.evil.example or ana\u2060@evil.example'
    >>> md("**bold** <b> :red[x] $1$")
    '\\*\\*bold\\*\\* &lt;b&gt; \\:red\\[x\\] \\$1\\$'
    >>> md("# 1. title"), md("1. first"), md("gpt-4o/cot"), md("scores.csv: no rows")
    ('\\# 1. title', '1\\. first', 'gpt-4o/cot', 'scores.csv: no rows')
    >>> md("_x_ superficial_a __init__")
    '\\_x\\_ superficial_a \\_\\_init\\_\\_'
    >>> md(None)
    ''
    """
    if value is None:
        return ""
    text = _AUTOLINK.sub(lambda m: (m.group(1) or "") + _JOINER, _BREAKS.sub(" ", str(value)).strip())
    text = _UNDERSCORE.sub(r"\\_", _COLON.sub(r"\\:", _INLINE.sub(r"\\\1", text)))
    text = _BLOCK_START.sub(lambda m: m.group(1) + "\\" + m.group(2) if m.group(1) else "\\" + m.group(3), text)
    return text.replace("<", "&lt;").replace(">", "&gt;")


def plot_text(value: object) -> str:
    """``value`` as literal text in a Plotly label: tags (``<a>``, ``<b>``, ``<br>``) show as written.

    Plotly parses a small HTML subset in every text property and decodes entities, so escaping ``&``,
    ``<`` and ``>`` shows the characters without letting them become markup.

    Examples
    --------
    >>> plot_text('<a href="http://evil.example">judge</a>')
    '&lt;a href="http://evil.example"&gt;judge&lt;/a&gt;'
    >>> plot_text(0.5)
    '0.5'
    """
    if value is None:
        return ""
    return html.escape(str(value), quote=False)
