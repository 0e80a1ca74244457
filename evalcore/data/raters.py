"""Which raters are LLM judges, by name: the one rule every importer uses.

A file without a ``rater_kind`` column (a long file, a wide file's columns, a crowd-kit
table) says who is a judge only through the raters' names. :func:`judge_name_pattern` recognises the
names of model families and judge models; :func:`judge_name_match` says which part of a name
matched, so that the app and the notes can tell the analyst *why* a rater was taken as a judge.
The analyst always has the last word (the app's judge picker, the CLI's ``--judge-rater``).

What the rule knows (case-insensitive):

* closed models: ``gpt`` (``gpt-4o``, ``chatgpt``), ``claude``, ``gemini``, ``palm-2``, ``bard``,
  ``grok``, ``o1``/``o3``/``o4`` with a suffix (``o1-mini``, ``o3-pro``), ``sonnet``, ``haiku``,
  ``opus``, ``davinci``, ``openai``, ``anthropic``, ``cohere``;
* open model families: ``llama``, ``mistral``, ``mixtral``, ``ministral``, ``codestral``,
  ``qwen``, ``qwq``, ``deepseek``, ``gemma-2`` (with a version), ``phi-3`` (with a version),
  ``yi-34b`` (with a version), ``command-r``, ``falcon-7b``, ``olmo-2``, ``granite-3``,
  ``glm-4``, ``chatglm``, ``internlm``, ``baichuan``, ``nemotron``, ``zephyr``, ``vicuna``,
  ``alpaca``, ``beluga``, ``orca``, ``solar-10``, ``tulu-2``, ``starling``, ``openchat``,
  ``wizardlm``, ``minicpm``, ``llava``, ``dbrx``, ``kimi``, ``moonshot``, ``flan``;
* judge models: ``prometheus``, ``selene`` (Atla), ``atla``, ``skywork``, ``pandalm``,
  ``judgelm``, ``auto-j``, ``flow-judge``;
* generic words: ``judge``, ``llm``, ``model``, ``chatbot``, ``robot``, and ``bot`` or ``ai``
  as a word of their own (``my_bot``, ``ai-rater``).

Boundaries. A name matches only where the token is not glued to other letters, so that
``Phil``, ``Claudette``, ``Ellmann``, ``Abbott`` and ``Palmer`` stay human. Names that are
also people's names or common words need a version number: ``phi-3``/``phi3``, ``yi-34b``,
``gemma-2``, ``falcon-7b``, ``olmo-2``, ``granite-3``, ``palm-2``, ``glm-4``, ``solar-10``,
``tulu-2``; so ``Gemma``, ``Yi Wang``, ``Olmo`` are humans, and so is the bare judge name
``gemma``.

Known false positives: a human whose id is ``Selene``, ``Zephyr``, ``Kimi``, ``Opus``,
``Judge`` (a surname) or holds ``ai``/``bot`` as a word. Known misses: bare ``o1``, model
names outside the list. Both are why the app shows the classification before import and lets
the analyst change it.
"""

from __future__ import annotations

import functools
import re

_L = r"(?<![a-z])"  # not glued to a letter before
_R = r"(?![a-z])"  # nor after
_V = r"[-_ ]?\d"  # a version number right after the name
_TOKENS = (
    # anywhere in the name: distinctive model and company names
    r"gpt", r"llama", r"mistral", r"mixtral", r"ministral", r"codestral", r"qwen", r"qwq", r"deepseek",
    r"prometheus", r"vicuna", r"alpaca", r"pandalm", r"judgelm", r"internlm", r"chatglm", r"baichuan",
    r"nemotron", r"skywork", r"openai", r"anthropic", r"cohere", r"davinci", r"beluga", r"wizardlm",
    r"openchat", r"minicpm", r"llava", r"dbrx", r"moonshot", r"chatbot", r"robot", r"judge",
    # with a boundary before (and after, where letters could follow in a person's name)
    rf"{_L}claude{_R}", rf"{_L}gemini{_R}", rf"{_L}selene{_R}", rf"{_L}atla{_R}", rf"{_L}zephyr",
    rf"{_L}orca", rf"{_L}starling", rf"{_L}flan{_R}", rf"{_L}llm", rf"{_L}model", rf"{_L}grok{_R}",
    rf"{_L}bard{_R}", rf"{_L}kimi{_R}", rf"{_L}(?:sonnet|haiku|opus){_R}", rf"{_L}auto[-_]?j{_R}",
    rf"{_L}command[-_ ]?r{_R}", rf"{_L}(?:bot|ai){_R}",
    rf"(?<![a-z0-9])o[134][-_](?:mini|preview|pro){_R}",
    # only with a version number: these are also people's names or words
    rf"{_L}phi{_V}", rf"{_L}yi{_V}", rf"{_L}(?:code)?gemma{_V}", rf"{_L}falcon{_V}", rf"{_L}olmo{_V}",
    rf"{_L}granite{_V}", rf"{_L}palm{_V}", rf"{_L}glm{_V}", rf"{_L}solar{_V}", rf"{_L}tulu{_V}",
)


@functools.cache
def judge_name_pattern() -> re.Pattern:
    """The pattern of a rater name that looks like an LLM judge (the module docstring says what it knows).

    Compiled on first use, not at import: it takes ~13 ms, a tenth of what ``evalcore validate`` adds to
    reading a million-row file, and a canonical file never needs it.

    >>> judge_name_pattern().search("my-gpt-4o-judge").group(0)
    'gpt'
    """
    return re.compile("|".join(_TOKENS), re.IGNORECASE)


def judge_name_match(name: object) -> str | None:
    """The part of ``name`` that makes it look like a model, or None.

    >>> judge_name_match("Selene-1-Mini"), judge_name_match("phi-3"), judge_name_match("Phil")
    ('Selene', 'phi-3', None)
    """
    m = judge_name_pattern().search(str(name))
    return m.group(0) if m else None


def looks_like_judge(name: object) -> bool:
    """Whether ``name`` looks like an LLM judge's (:func:`judge_name_pattern`).

    >>> [looks_like_judge(n) for n in ("qwen2.5-72b", "command-r-plus", "annotator_1", "Yi Wang")]
    [True, True, False, False]
    """
    return judge_name_pattern().search(str(name)) is not None
