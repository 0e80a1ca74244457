"""The landing page's panels: sample data, upload, column mapping, saved datasets, summary."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import streamlit as st

from ..data import files as data_files, ingest, io
from ..data.categories import label_kinds, scale_report, shown
from ..data.export import safe_file_name
from ..data.mapping import detect_table, suggest_mapping
from ..data.summary import summarize, unlocks
from ..data.wide import WideSpec, suggest_wide
from ..columns import COLUMNS, COMPARISONS, RATINGS
from ..errors import DataError, WorkspaceError
from ..data.presets import PRESETS, detect_preset, read_preset
from ..data.scales import NOMINAL, SCALE, SCALES
from ..data.store import NEEDS_MAPPING, READY
from ..report import plots
from ..report.views import home
from ..text import md
from .layout import figure
from .messages import ROLES_TITLE, app_message, app_note
from .state import (PARAM, SAMPLE_SOURCE, TABLE_LABEL, choice, chosen_id, current_id, current_info, current_table, datasets,
                    download_csv, guard, pending_upload, set_current, workspace)

SAMPLE_NAME = "Sample: multilingual ratings + pairwise comparisons"
_PENDING = "evalcore_pending_id"
_GEN = "evalcore_uploader_generation"
_ERR = "evalcore_upload_error"
_SAME = "evalcore_upload_same"
NONE = "(none)"


# --------------------------------------------------------------------------- sample


def sample_panel() -> None:
    st.markdown(
        "Two small synthetic datasets with **known ground truth** (see `sample_data/README.md`): "
        "multilingual pointwise ratings in the style of Hada et al. (8+ languages, 3 annotators, judges "
        "with a top-score skew, familiarity and anchoring effects, one judge sampled 5 times), and pairwise "
        "comparisons with known win rates, judge accuracies, position bias, CalibraEval probabilities and "
        "superficial-quality scores."
    )
    if st.button("Load the sample data", type="primary", icon=":material/play_arrow:", key="load_sample"):
        with guard("Loading the sample data"), st.spinner("Loading the sample data..."):
            existing = next((d for d in datasets() if d.name == SAMPLE_NAME and d.status == READY), None)
            if existing:
                set_current(existing.id)
            else:
                tables = ingest.load_samples()
                did = workspace().save_dataset(
                    SAMPLE_NAME, {k: v.frame for k, v in tables.items()}, source=SAMPLE_SOURCE,
                    notes={k: list(v.notes) for k, v in tables.items()})
                set_current(did)
            st.session_state.pop(_PENDING, None)
            st.rerun()


# --------------------------------------------------------------------------- upload


def upload_panel() -> None:
    st.markdown(
        "CSV, TSV, JSON Lines, JSON (a list of records), Parquet or Excel; one row per judgment or one "
        "column per annotator/judge. Known formats are recognised: LLMBar `result.json`, PandaLM (the test "
        "set with its judges' files, uploaded together), HANNA, crowd-kit `task, worker, label`, and Gao et "
        "al.'s `task, worker, human_label, llm_label, generator_1, generator_2`. A **.zip of a folder** (LLMBar's "
        "`evaluators/` tree with several judges, PandaLM's `data/`) is read like the folder. Limit "
        f"{data_files.format_size(data_files.max_file_bytes())} per file, and for a zip unpacked (`EVALCORE_MAX_FILE_MB`)."
    )
    if workspace().read_only:  # an uploader whose every file would be refused
        st.warning(md(workspace().read_only_message()), icon=":material/lock:")
        return
    # A fresh uploader after each processed upload, so that the next file is not
    # combined with the previous one; the last error stays on screen until then.
    gen = st.session_state.setdefault(_GEN, 0)
    files = st.file_uploader("Data file(s)", accept_multiple_files=True, key=f"uploader_{gen}",
                             help="Several files at once for a format that joins them (PandaLM); several judges' "
                                  "result.json files of LLMBar as a .zip of their folder.", **_size_limit())
    if st.session_state.get(_ERR):
        st.error(md(st.session_state[_ERR]), icon=":material/error:")
    if st.session_state.get(_SAME):
        st.info(md(st.session_state.pop(_SAME)), icon=":material/content_copy:")
    if not files:
        return
    st.session_state[_GEN] = gen + 1
    st.session_state.pop(_ERR, None)
    payload = [(f.name, f.getvalue()) for f in files]
    try:
        _precheck(payload)
        did = workspace().save_upload(payload)
    except (DataError, WorkspaceError) as exc:  # WorkspaceError: the file could not be stored (nothing was)
        st.session_state[_ERR] = app_message(exc)
        st.rerun()
    except Exception as exc:  # a bug must not show a traceback
        st.session_state[_ERR] = (f"Reading the upload failed unexpectedly ({type(exc).__name__}). This is a bug "
                                  "in evalcore; nothing was stored.")
        st.rerun()
    known = next((d for d in datasets() if d.id == did and d.status == READY), None)
    if known is not None:  # the same files again: open what they became, not a copy
        st.session_state[_SAME] = f"These files were already imported as '{known.name}'; it is open now."
        set_current(did)
        st.rerun()
    st.session_state[_PENDING] = did
    st.rerun()


def _size_limit() -> dict:
    """The uploader's own size limit, set to evalcore's (``EVALCORE_MAX_FILE_MB``) so that the widget does not
    print Streamlit's server limit ("1GB per file") under our "Limit 200 MB". The server's
    ``server.maxUploadSize`` stays the ceiling; Streamlit releases without the parameter show theirs."""
    import inspect
    import math

    if "max_upload_size" not in inspect.signature(st.file_uploader).parameters:
        return {}
    ours = max(1, math.ceil(data_files.max_file_bytes() / 2**20))
    return {"max_upload_size": min(ours, int(st.get_option("server.maxUploadSize")))}


def _precheck(payload: list[tuple[str, bytes]]) -> None:
    """Refuse what cannot be data (too large, empty, binary, a hostile zip) before it is stored."""
    names = [n for n, _ in payload]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        # Several LLMBar judges' result.json files: their folders named them, so upload the folders.
        raise DataError(f"{names.count(twice[0])} of the uploaded files are named '{twice[0]}'", file=twice[0],
                        fix="upload their folder as one .zip file (its folders tell the files apart, as LLMBar's "
                            "name the judge and the subset), or rename the files")
    for name, data in payload:
        if len(data) > data_files.max_file_bytes():
            data_files.check_size(len(data), name, None)
        if data_files.is_zip_archive(data):
            continue  # unpacked (limits, paths) when the formats are detected below
        fmt = data_files.sniff_format(data, name)
        if fmt == "excel":
            io.excel_sheets(data, name=name)
    if len(payload) == 1:
        name, data = payload[0]
        zipped = data_files.is_zip_archive(data)
        if zipped or data_files.sniff_format(data, name) != "excel":
            # The presets read paths: a private copy, removed right after, stored or not.
            with workspace().scratch_files(payload) as paths:
                preset = detect_preset(paths)
            if preset is None:
                _read_bytes(name, data, None)  # raises for empty, header-only, not-a-list JSON, a zip of no format...


# --------------------------------------------------------------------------- mapping


def pending_id() -> str | None:
    """The upload whose column mapping the home page shows: this session's latest, or the one the
    address bar names (``?dataset=`` of an upload still awaiting its mapping)."""
    did = st.session_state.get(_PENDING)
    if did and any(d.id == did and d.status == NEEDS_MAPPING for d in datasets()):
        return did
    linked = pending_upload()
    return linked.id if linked is not None else None


@st.cache_data(show_spinner=False, max_entries=4)
def _read_bytes(name: str, data: bytes, sheet: str | None) -> pd.DataFrame:
    """The upload read once: the check before it is stored and the mapping form after share this read (on a
    20,000-column file each read took 2 s)."""
    return io.read_table(data, name=name, sheet=sheet)


def _read_raw(dataset_id: str, name: str, data: bytes, sheet: str | None) -> pd.DataFrame:
    return _read_bytes(name, data, sheet)


#: The mapping form lists this many of a file's columns (a wide export has thousands); another is typed in.
LISTED_COLUMNS = 500
PREVIEW_COLUMNS = 60


def _llmbar_options(dataset_id: str, files) -> tuple[dict, bool]:
    """The judge and subset of uploaded LLMBar files: their folders named them, an upload has none.

    A single ``result.json`` must be given a judge name (the strategy, Rating or Vanilla, is read from
    its content); other file names serve as the judge's name unless one is given.
    """
    if any(data_files.is_zip_archive(data) for _, data in files):
        st.caption("The judges and subsets are read from the folders inside the zip "
                   "(<subset>/evaluators/<judge>/<strategy>/result.json).")
        return {}, True
    bare = len(files) == 1 and files[0][0].lower() in ("result.json", "results.json")
    c1, c2 = st.columns(2)
    judge = c1.text_input("Judge", key=f"llmbar_judge_{dataset_id}", placeholder="e.g. GPT-4",
                          help="LLMBar's result files do not record the judge; its folder did. The strategy (Rating "
                               "or Vanilla) is read from the file and added to the name.")
    subset = c2.text_input("Subset (optional)", key=f"llmbar_subset_{dataset_id}",
                           placeholder="e.g. Natural or Adversarial/Neighbor",
                           help="Also from the folder: name it to compare subsets on the Superficial quality page.")
    options = {k: v.strip() for k, v in (("rater", judge), ("subset", subset)) if v.strip()}
    if bare and "rater" not in options:
        st.caption("Name the judge to import this result.json (its file name does not say who judged).")
        return options, False
    return options, True


def mapping_panel(dataset_id: str) -> None:
    ws = workspace()
    files = ws.upload(dataset_id)
    paths = ws.upload_paths(dataset_id, files)
    label = ", ".join(n for n, _ in files)
    st.subheader(f"Map the columns of {md(label)}")
    detected = detect_preset(paths)
    options = [NONE, *PRESETS]
    preset = st.selectbox(
        "Format", options, index=options.index(detected) if detected else 0,
        format_func=lambda p: "a plain table (map the columns below)" if p == NONE else f"{p}: {PRESETS[p].title}",
        key=f"preset_{dataset_id}", help="Detected from the file's name and content; change it if it is wrong.")
    if preset != NONE:  # under the format it describes
        st.caption(PRESETS[preset].description)
    name = st.text_input("Dataset name", value=next(d.name for d in datasets() if d.id == dataset_id),
                         key=f"name_{dataset_id}")
    if preset != NONE:
        _preset_form(dataset_id, name, files, paths, preset)
        _discard_button(dataset_id)
        return
    if len(files) > 1:
        st.error(f"{len(files)} files were uploaded but no format joins them. Fix: choose the format that "
                 "joins them (e.g. pandalm), or upload one file at a time.", icon=":material/error:")
        _discard_button(dataset_id)
        return
    fname, data = files[0]
    sheet = None
    if data_files.sniff_format(data, fname) == "excel":
        sheets = io.excel_sheets(data, name=fname)
        if len(sheets) > 1:
            st.warning(f"{md(fname)} has {len(sheets)} sheets with data ({md(', '.join(sheets))}). Choose the one that "
                       "holds the judgments.", icon=":material/tab:")
        sheet = st.selectbox("Sheet", sheets, index=0 if len(sheets) == 1 else None, key=f"sheet_{dataset_id}",
                             placeholder="Choose a sheet")
        if sheet is None:
            _discard_button(dataset_id)
            return
    with guard("Reading the file"):
        raw = _read_raw(dataset_id, fname, data, sheet)
        _mapping_form(dataset_id, name, fname, raw)
    _discard_button(dataset_id)


def _preset_form(dataset_id: str, name: str, files: list[tuple[str, bytes]], paths: list[Path], preset: str) -> None:
    """A known format's import: its options, and for ratings each criterion's scale, checked before the Import
    button as :func:`evalcore.data.ingest.load` (the CLI's ``--scale``/``--order``) checks and applies them."""
    options, ready = _llmbar_options(dataset_id, files) if preset == "llmbar" else ({}, True)
    names = [n for n, _ in files]
    if PRESETS[preset].table != RATINGS:  # comparisons have verdicts, not scales: read on the click alone
        if st.button("Import", type="primary", key=f"import_{dataset_id}", icon=":material/check:", disabled=not ready):
            with guard("Importing"), st.spinner("Importing..."):
                _finish(dataset_id, name, ingest.load(paths, preset=preset, names=names, preset_options=options))
        return
    frozen = tuple(sorted(options.items()))
    with guard("Reading the file"), st.spinner("Reading the file..."):
        try:
            kinds = _preset_kinds(dataset_id, preset, frozen, paths)
        except DataError:
            kinds = label_kinds(pd.DataFrame())  # no choices: the check below shows what is wrong
        declared = _scale_choices(dataset_id, kinds)
        ing, problem = _preset_import(dataset_id, preset, frozen, json.dumps(declared, sort_keys=True), paths, names)
        if problem:
            st.error(md(problem), icon=":material/error:")
            return
        s = ing.summary()
        st.success(f"Ready: {s.rows:,} judgments of {s.items:,} items by {s.human_raters} human(s) and "
                   f"{s.judges} judge(s).", icon=":material/check_circle:")
        for n in ing.notes:  # mostly what the format leaves out or means: said as the summary says it, not alarms
            st.caption(f"Note: {md(app_note(n))}")
        if st.button("Import", type="primary", key=f"import_{dataset_id}", icon=":material/check:"):
            _finish(dataset_id, name, ing, options=declared)


@st.cache_data(show_spinner=False, max_entries=4)
def _preset_kinds(dataset_id: str, preset: str, options: tuple, _paths: list[Path]) -> pd.DataFrame:
    """What each criterion's labels are in the table the format reads, before validation (the choices offered)."""
    return label_kinds(read_preset(preset, _paths, **dict(options)).frame)


@st.cache_data(show_spinner=False, max_entries=4)
def _preset_import(dataset_id: str, preset: str, options: tuple, declared: str, _paths: list[Path],
                   _names: list[str]) -> tuple[ingest.Ingested | None, str]:
    """The upload read by its format with the declared scales, as the CLI reads it; or the message the page
    shows (kept too, so that a rerun on an unchanged choice does not read the file again)."""
    try:
        return ingest.load(_paths, preset=preset, names=_names, preset_options=dict(options),
                           **json.loads(declared)), ""
    except DataError as exc:
        return None, app_message(exc)


def _mapping_form(dataset_id: str, name: str, fname: str, raw: pd.DataFrame) -> None:
    with st.expander(f"Preview: {len(raw):,} rows, {raw.shape[1]:,} columns", expanded=False):
        preview = raw.iloc[:50, :PREVIEW_COLUMNS].copy()
        preview.attrs = {}  # read_table's metadata is not for display
        st.dataframe(preview, hide_index=True)
        if raw.shape[1] > PREVIEW_COLUMNS:
            st.caption(f"The first {PREVIEW_COLUMNS} of {raw.shape[1]:,} columns.")
    cols = [str(c) for c in raw.columns]
    guess = suggest_mapping(cols)
    table_guess = detect_table(guess.values())
    c1, c2 = st.columns(2)
    table = c1.radio("What the file holds", [RATINGS, COMPARISONS], index=[RATINGS, COMPARISONS].index(table_guess),
                     format_func=lambda t: TABLE_LABEL[t].capitalize(), key=f"table_{dataset_id}", horizontal=True)
    guess = suggest_mapping(cols, table=table)
    wide_guess = suggest_wide(raw, guess)
    layout = c2.radio("Layout", ["long", "wide"], index=1 if wide_guess else 0, horizontal=True,
                      key=f"layout_{dataset_id}",
                      format_func=lambda x: "one row per judgment" if x == "long" else "one column per rater")
    wide = None
    if layout == "wide":
        w1, w2 = st.columns(2)
        humans = w1.multiselect("Human annotator columns", cols, default=list(wide_guess.human_columns) if wide_guess else [],
                                key=f"wh_{dataset_id}")
        judges = w2.multiselect("Judge columns", [c for c in cols if c not in humans],
                                default=[c for c in (wide_guess.judge_columns if wide_guess else ()) if c not in humans],
                                key=f"wj_{dataset_id}")
        wide = WideSpec(id_columns=tuple(c for c in cols if c not in humans and c not in judges),
                        human_columns=tuple(humans), judge_columns=tuple(judges),
                        value="winner" if table == COMPARISONS else "score")
    skip = {"rater", "rater_kind", "score", "winner"} if wide else set()
    targets = [c for c in COLUMNS[table] if c.name not in skip]
    st.markdown("**Columns** (auto-detected where the names are obvious; `*` marks required ones)")
    inverse = {v: k for k, v in guess.items()}
    mapping: dict[str, str] = {}
    grid = st.columns(4)
    candidates = [c for c in cols if not wide or c in wide.id_columns]
    # Thousands of options in each of ~20 selectboxes took seconds to send and draw: list the first
    # LISTED_COLUMNS (and every guess); any other column is typed in, and checked against the file.
    listed = set(candidates[:LISTED_COLUMNS]) | set(inverse.values())
    short = [c for c in candidates if c in listed]
    if len(short) < len(candidates):
        st.caption(f"Each list shows {len(short):,} of the file's {len(candidates):,} columns; type the name of "
                   "another column into a list to choose it.")
    for i, col in enumerate(targets):
        choices = [NONE, *short]
        default = inverse.get(col.name)
        pick = grid[i % 4].selectbox(f"{col.name}{' *' if col.required else ''}", choices,
                                     index=choices.index(default) if default in choices else 0,
                                     help=col.meaning, key=f"map_{dataset_id}_{table}_{col.name}",
                                     accept_new_options=len(short) < len(candidates))
        if pick not in (NONE, None) and pick not in candidates:
            st.error(md(f"The file has no column '{pick}' (for {col.name}): choose one from the list, or type a "
                        "column name exactly as the file's header writes it."), icon=":material/error:")
            return
        if pick not in (NONE, None):
            mapping[pick] = col.name
    judge_raters = roles_panel(dataset_id, raw, mapping, table=table, wide=wide, file=fname)
    declared = scales_panel(dataset_id, raw, mapping, table=table, wide=wide, file=fname)
    try:
        ing = ingest.ingest_frame(raw, file=fname, mapping=mapping, table=table, wide=wide,
                                  judge_raters=judge_raters, auto=False, **declared)
    except DataError as exc:
        st.error(md(app_message(exc)), icon=":material/error:")
        return
    s = ing.summary()
    st.success(f"Ready: {s.rows:,} judgments of {s.items:,} items by {s.human_raters} human(s) and "
               f"{s.judges} judge(s).", icon=":material/check_circle:")
    for n in ing.notes:
        st.warning(md(app_note(n)), icon=":material/warning:")
    if st.button("Import", type="primary", key=f"import_{dataset_id}", icon=":material/check:"):
        with guard("Importing"):
            _finish(dataset_id, name, ing, options=declared)


#: The scale choices the column mapping offers: "auto" declares nothing (text nominal, numbers ordinal).
AUTO = "auto"
SCALE_CHOICES = (AUTO, *SCALES)
#: The column mapping offers a scale for this many criteria (the CLI's --scale '*=...' covers more).
SCALED_CRITERIA = 30


def _scale_label(choice: str, labels: str) -> str:
    if choice != AUTO:
        return choice
    return "auto: " + ("ordinal (numbers)" if labels == "numbers" else
                       "nominal unless ordered" if labels in ("text", "mixed") else "from the labels")


def scales_panel(dataset_id: str, raw: pd.DataFrame, mapping: dict[str, str], *, table: str,
                 wide: WideSpec | None, file: str) -> dict:
    """Each criterion's scale, and for text labels their order, chosen before the Import button.

    Text labels are nominal categories unless ordered here (a multiselect, lowest first); numbers are ordinal
    unless declared otherwise. The choices are saved with the upload (:meth:`Workspace.set_upload_options`), so
    that another session, or this one after a reload, maps the upload the same way, and with the imported
    table. Returns the ``scale`` and ``order`` keywords of :func:`evalcore.data.ingest.ingest_frame`.
    """
    if table != RATINGS:
        return {}
    exact = {c: mapping.get(c, "") for c in map(str, raw.columns)}
    try:
        kinds = ingest.label_preview(raw, exact, table=table, wide=wide, auto=False, file=file)
    except DataError:
        return {}  # the import below shows what is wrong
    return _scale_choices(dataset_id, kinds)


def _scale_choices(dataset_id: str, kinds: pd.DataFrame) -> dict:
    """The Scales section for the criteria of ``kinds`` (:func:`evalcore.data.categories.label_kinds`): a scale
    per criterion and, for text labels, their order; the choices saved with the upload. Returns the ``scale``
    and ``order`` keywords of :func:`evalcore.data.ingest.load` (empty when nothing is declared)."""
    if kinds.empty:
        return {}
    saved = workspace().upload_options(dataset_id)
    saved_scale, saved_order = dict(saved.get("scale") or {}), dict(saved.get("order") or {})
    st.markdown("**Scales**")
    st.caption("Text labels are categories, kept as written (nominal), unless you give their order; numbers are "
               "ordinal. Measures that need an order are not computed on nominal criteria.")
    scale: dict[str, str] = {}
    order: dict[str, list[str]] = {}
    for r in kinds.head(SCALED_CRITERIA).itertuples():
        c1, c2, c3 = st.columns([2, 3, 5])  # wide enough to read the "auto: ..." choice whole
        c1.markdown(md(r.criterion))
        c1.caption(f"{r.rows:,} rows: {r.labels}")
        was = saved_scale.get(r.criterion, AUTO)
        pick = c2.selectbox("Scale", SCALE_CHOICES, index=SCALE_CHOICES.index(was) if was in SCALE_CHOICES else 0,
                            format_func=lambda x, k=r.labels: _scale_label(x, k),
                            key=f"scale_{dataset_id}_{r.criterion}")
        if pick != AUTO:
            scale[r.criterion] = pick
        if r.labels in ("text", "mixed") and pick != NOMINAL:
            chosen = c3.multiselect("Order of the labels, lowest first", r.text_labels,
                                    default=[v for v in saved_order.get(r.criterion, []) if v in r.text_labels],
                                    key=f"order_{dataset_id}_{r.criterion}", placeholder="no order: nominal",
                                    help="Choose every label, the lowest first: the criterion becomes ordinal and "
                                         "its labels count as 1, 2, 3, ...")
            if chosen:
                order[r.criterion] = list(chosen)
    if len(kinds) > SCALED_CRITERIA:
        st.caption(f"Scales can be chosen here for the first {SCALED_CRITERIA} of {len(kinds):,} criteria; the "
                   "others keep the default.")
    if (scale, order) != (saved_scale, saved_order) and not workspace().read_only:
        workspace().set_upload_options(dataset_id, {**saved, "scale": scale, "order": order})
    return {k: v for k, v in (("scale", scale), ("order", order)) if v}


def roles_panel(dataset_id: str, raw: pd.DataFrame, mapping: dict[str, str], *, table: str,
                wide: WideSpec | None, file: str) -> list[str] | None:
    """Which raters will be imported as LLM judges and which as humans, shown before the Import button.

    The roles are :func:`evalcore.data.ingest.rater_roles` under exactly the mapping above: from the
    file's ``rater_kind`` column or the wide layout's columns (shown), otherwise guessed from the
    raters' names, for the user to confirm or change in the table. Returns the judges to import with
    (None: the file or the layout decides).
    """
    # Every column the user left unmapped is passed as unmapped, so that no guess comes back.
    exact = {c: mapping.get(c, "") for c in map(str, raw.columns)}
    try:
        roles = ingest.rater_roles(raw, exact, table=table, wide=wide, file=file)
    except DataError:
        return None  # the import below shows what is wrong
    if roles.empty:
        return None
    st.markdown(f"**{ROLES_TITLE}**")
    config = {"role": st.column_config.SelectboxColumn("role", options=["judge", "human"], required=True,
                                                       help="judge: an LLM evaluator; human: an annotator")}
    if wide is not None or "rater_kind" in mapping.values():
        st.dataframe(roles, hide_index=True, column_config=config, key=f"roles_file_{dataset_id}")
        st.caption("The roles come from the " + ("judge and annotator columns chosen above." if wide is not None
                                                 else "file's rater_kind column."))
        return None
    src = next(k for k, v in mapping.items() if v == "rater")
    edited = st.data_editor(roles, hide_index=True, column_config=config, disabled=["rater", "rows", "reason"],
                            key=f"roles_{dataset_id}_{src}")
    judges = home.raters_with_role(edited, "judge")
    st.caption(f"{len(judges)} judge(s) and {len(edited) - len(judges)} human(s). The file has no rater_kind "
               "column, so the roles were guessed from the raters' names: change a rater's role in the table "
               "before you import.")
    return judges


def _finish(dataset_id: str, name: str, ing: ingest.Ingested, *, options: dict | None = None) -> None:
    workspace().save_dataset(name, {ing.table: ing.frame}, source=ing.source, preset=ing.preset,
                             mappings={ing.table: ing.mapping}, notes={ing.table: list(ing.notes)},
                             options={ing.table: dict(options or {})}, dataset_id=dataset_id)
    set_current(dataset_id)
    st.session_state.pop(_PENDING, None)
    st.rerun()


def _discard_button(dataset_id: str) -> None:
    if st.button("Discard this upload", key=f"discard_{dataset_id}", icon=":material/delete:"):
        workspace().delete(dataset_id)
        st.session_state.pop(_PENDING, None)
        st.rerun()


# --------------------------------------------------------------------------- saved


def saved_panel() -> None:
    items = datasets()
    if not items:
        st.caption("No saved datasets yet. Everything you import is kept here, across refreshes and restarts, "
                   "until you delete it.")
        return
    st.dataframe(home.saved_datasets(items), hide_index=True)
    names = {d.id: d.name for d in items}
    did = st.selectbox("Dataset", choice("saved_choice", list(names), current_id()), format_func=names.get,
                       key="saved_choice", help="Open makes it this browser tab's dataset; other tabs keep theirs.")
    info = next(d for d in items if d.id == did)
    c1, c2, c3 = st.columns([1, 2, 1])
    if info.status == READY:
        if c1.button("Open", key="saved_open", icon=":material/folder_open:"):
            set_current(did)
            st.rerun()
    elif c1.button("Continue mapping", key="saved_map", icon=":material/edit:"):
        st.session_state[_PENDING] = did
        st.rerun()
    with c2:
        new = st.text_input("New name", value=info.name, key=f"rename_{did}", label_visibility="collapsed")
        if st.button("Rename", key="saved_rename", icon=":material/edit:"):
            with guard("Renaming"):
                workspace().rename(did, new)
                st.rerun()
    with c3:
        sure = st.checkbox("I am sure", key=f"sure_{did}")
        if st.button("Delete", key="saved_delete", disabled=not sure, icon=":material/delete:"):
            with guard("Deleting"):
                workspace().delete(did)
                st.session_state.pop(_PENDING, None)
                if did == chosen_id():
                    set_current(None)  # this tab's own dataset is gone: back to the choice
                st.rerun()


# --------------------------------------------------------------------------- summary


@st.cache_data(show_spinner=False, max_entries=16)
def _summary(dataset_id: str, kind: str, stamp: str, _frame: pd.DataFrame) -> tuple[dict, pd.DataFrame]:
    return summarize(_frame, table=kind).to_dict(), unlocks(_frame, table=kind)


#: The page of each name in :data:`evalcore.report.views.home.ANALYSIS_PAGES`.
PAGES = {"Agreement": "app_pages/1_Agreement.py", "Bias": "app_pages/2_Bias.py", "Win rates": "app_pages/3_Win_rates.py",
         "Superficial quality": "app_pages/4_Superficial_quality.py", "Position bias": "app_pages/5_Position_bias.py",
         "Alt-Test": "app_pages/6_Alt_test.py", "True scores": "app_pages/7_True_scores.py",
         "Leaderboard": "app_pages/8_Leaderboard.py"}


def unlocks_section(dataset_id: str, kind: str, av: pd.DataFrame) -> None:
    """What the table unlocks (analyses with a page or a command today), and links to those pages."""
    st.markdown("**What this data unlocks**")
    # A static table: its cells wrap, so "what it would need" is read whole (a data grid cut it at the right).
    shown = home.unlocked(av, kind)
    st.table(shown.assign(available=shown["available"].map({True: "✓", False: ""})).rename(
        columns={"title": "analysis", "missing": "what it would need"}), hide_index=True)
    pages = home.unlocked_pages(av, kind)
    if not pages:
        st.info(f"No page can use these {TABLE_LABEL[kind]} yet: the table above says what each analysis would "
                "need.", icon=":material/info:")
    per_row = 3  # a link's label stays on one line in a narrow window
    for start in range(0, len(pages), per_row):
        for name, col in zip(pages[start:start + per_row], st.columns(per_row)):
            col.page_link(PAGES[name], label=f"Open {name}", icon=":material/arrow_forward:",
                          query_params={PARAM: dataset_id})


def report_section(name: str, kind: str) -> None:
    """The whole audit of this table as one self-contained HTML file (``evalcore report``), for handing over."""
    from .analyses import REPORT

    opts = {"kind": kind, "n_boot": 1000, "seed": 0}
    if REPORT.ready(**opts) or st.button("Build the HTML report", key=f"report_{kind}", icon=":material/description:",
                                         help="Every analysis this table supports, the judge report card first, "
                                              "in one file that opens offline (about 5 MB). Same as `evalcore "
                                              "report`; 1,000 resamples, seed 0."):
        html = REPORT.result(**opts)["html"]
        st.download_button("Download the report (HTML)", html.encode("utf-8"), file_name=safe_file_name(f"{name}-{kind}-report.html"),
                           mime="text/html", key=f"report_dl_{kind}", icon=":material/download:", type="primary")


def _scales_table(frame: pd.DataFrame) -> None:
    """Each criterion's scale and categories (:func:`evalcore.data.categories.scale_report`), as plain-text cells."""
    report = scale_report(frame)
    shown_report = pd.DataFrame({
        "criterion": report["criterion"], "scale": report["scale"], "labels": report["labels"],
        "categories": [("" if n is None else f"{n:,}: ") + ", ".join(shown(c) for c in cats)
                       + (", ..." if n is not None and n > len(cats) else "")
                       for n, cats in zip(report["n_categories"], report["categories"])]})
    st.dataframe(shown_report, hide_index=True)


def summary_panel() -> None:
    info = current_info()
    if info is None:
        return
    st.header(md(info.name))
    for kind in info.tables:
        frame = current_table(kind)
        s, av = _summary(info.id, kind, info.updated.isoformat(), frame)
        st.subheader(TABLE_LABEL[kind].capitalize())
        shown = [("Rows", f"{s['rows']:,}", None), ("Items", f"{s['items']:,}", None),
                 ("Human raters", s["human_raters"], f"Up to {s['max_humans_per_item']} per item"),
                 ("Judges", s["judges"], None)]
        # A count of levels only where the column exists: a pairwise file has no criteria, "0" would read as
        # something missing.
        for label, key in (("Languages", "languages"), ("Criteria", "criteria"), ("Tasks", "tasks"),
                           ("Systems", "systems")):
            if s[key]:
                shown.append((label, len(s[key]), md(", ".join(s[key]))))
        for col, (label, value, hint) in zip(st.columns(len(shown)), shown):
            col.metric(label, value, help=hint)
        listed = [f"{label}: {', '.join(s[key])}" for label, key in (("Criteria", "criteria"),
                                                                     ("Languages", "languages")) if s[key]]
        if listed:
            st.caption(md(" · ".join(listed)))
        if kind == RATINGS and SCALE in frame.columns:
            _scales_table(frame)
        counts, by = home.coverage(frame)
        if len(counts):
            figure(plots.coverage_figure(counts, by=by), key=f"coverage_{kind}")
        unlocks_section(info.id, kind, av)
        notes = workspace().table_meta(info.id, kind)["notes"]
        for n in notes:
            st.caption(f"Note: {md(app_note(n))}")
        report_section(info.name, kind)
        with st.expander(f"Browse the {TABLE_LABEL[kind]} ({s['rows']:,} rows)"):
            st.dataframe(frame.head(1000), hide_index=True)
            download_csv(frame, file_name=f"{info.name}-{kind}.csv", label=f"Download the {kind} table (CSV)",
                         key=f"dl_{kind}")
