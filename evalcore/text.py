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

# CommonMark lets a backslash escape any ASCII punctuation (spec 2.4), so escaping all of it is always
# correct; Streamlit adds directives (``:red[…]``, ``:material/…:``) and ``$…$`` maths on top, which the
# same escapes disarm. ``<`` and ``>`` become entities as well, for renderers that allow raw HTML.
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|~$:&])")
# Line breaks would start a new block (a heading, a list, a quote) in the middle of a sentence.
_BREAKS = re.compile(r"[\r\n\u2028\u2029]+")


def md(value: object) -> str:
    """``value`` as literal text inside Streamlit Markdown: no link, image, emphasis, directive or maths.

    Examples
    --------
    >>> md("![x](http://evil.example/a.png)")
    '\\\\!\\\\[x\\\\]\\\\(http\\\\:\\\\/\\\\/evil\\\\.example\\\\/a\\\\.png\\\\)'
    >>> md("**bold** <b>")
    '\\\\*\\\\*bold\\\\*\\\\* &lt;b&gt;'
    >>> md(None)
    ''
    """
    if value is None:
        return ""
    text = _BREAKS.sub(" ", str(value))
    text = _MD_SPECIAL.sub(r"\\\1", text).replace("/", "\\/")
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
