"""A .zip of a folder: read by the preset that reads the folder, unpacked within the size limit and
never outside its folder."""

from __future__ import annotations

import io as _io
import json
import stat
import zipfile

import pytest

from evalcore.cli import main
from evalcore.data import files, ingest
from evalcore.data.presets import detect_preset
from evalcore.errors import DataError, FileTooLargeError
from tests.helpers import DATASETS, LLMBAR

needs_llmbar = pytest.mark.skipif(not LLMBAR.exists(), reason=f"{LLMBAR} not found: the zip is built from LLMBar's folder")


def _zip(path, members: dict[str, bytes], *, method=zipfile.ZIP_DEFLATED):
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def _zip_folder(folder, path, *, root: str):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                z.write(p, f"{root}/{p.relative_to(folder)}")
    return path


@needs_llmbar
def test_a_zip_of_the_llmbar_folder_reads_as_the_folder(tmp_path):
    packed = _zip_folder(LLMBAR, tmp_path / "llmbar.zip", root="llmbar")
    assert detect_preset([packed]) == "llmbar"
    zipped = ingest.load([packed], preset="auto")
    folder = ingest.load([LLMBAR], preset="auto")
    assert zipped.preset == folder.preset == "llmbar"
    assert zipped.frame.equals(folder.frame)
    assert zipped.source == folder.source


@needs_llmbar
def test_the_cli_reads_the_zip_as_a_file(tmp_path, capsys):
    packed = _zip_folder(LLMBAR, tmp_path / "llmbar.zip", root="llmbar")
    assert main(["validate", str(packed), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert (d["preset"], d["items"], d["judges"]) == ("llmbar", 419, 4)


@pytest.mark.skipif(not (DATASETS / "pandalm").exists(), reason="../shared/datasets/pandalm not found")
def test_a_zip_of_the_pandalm_files(tmp_path):
    packed = _zip(tmp_path / "pandalm data.zip",
                  {p.name: p.read_bytes() for p in (DATASETS / "pandalm").glob("*.json")})
    ing = ingest.load([packed], preset="auto")
    assert ing.preset == "pandalm" and ing.frame["item_id"].nunique() == 999


def test_messages_name_the_file_inside_the_zip_not_a_temporary_folder(tmp_path):
    packed = _zip(tmp_path / "judges.zip", {"run/Natural/evaluators/X/Vanilla/result.json": b'[{"label": 1, ',
                                           "run/Natural/evaluators/Y/Vanilla/result.json": b"[]"})
    with pytest.raises(DataError) as exc:
        ingest.load([packed], preset="llmbar")
    msg = str(exc.value)
    assert msg.startswith("judges.zip/run/Natural/evaluators/X/Vanilla/result.json: is not valid JSON"), msg
    assert "evalcore-" not in msg


def test_a_zip_without_a_format_lists_its_whole_names(tmp_path):
    packed = _zip(tmp_path / "two.zip", {"statistics.json": b"{}", "another-long-file-name.csv": b"a,b\n1,2\n"})
    with pytest.raises(DataError) as exc:
        ingest.load([packed])
    msg = str(exc.value)
    # The whole names: a name cut at 80 characters read 'statistics.jso'.
    assert "holding statistics.json, another-long-file-name.csv" in msg and "llmbar, pandalm" in msg


@pytest.mark.parametrize(("member", "phrase"), [
    ("../evil.csv", "leads out of the folder"),
    ("a/../../evil.csv", "leads out of the folder"),
    ("/etc/evil.csv", "absolute path"),
    ("C:/evil.csv", "absolute path"),
    ("..\\evil.csv", "leads out of the folder"),
])
def test_member_paths_cannot_leave_the_folder(tmp_path, member, phrase):
    packed = _zip(tmp_path / "bad.zip", {member: b"a,b\n1,2\n"})
    dest = tmp_path / "out" / "inner"
    with pytest.raises(DataError, match=phrase) as exc:
        files.unpack_zip(packed, dest)
    assert str(exc.value).startswith("bad.zip: holds ")
    assert not (tmp_path / "evil.csv").exists() and not (tmp_path / "out" / "evil.csv").exists()


def test_a_symbolic_link_is_refused(tmp_path):
    packed = tmp_path / "link.zip"
    with zipfile.ZipFile(packed, "w") as z:
        info = zipfile.ZipInfo("data/result.json")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")
    with pytest.raises(DataError, match="a symbolic link"):
        files.unpack_zip(packed, tmp_path / "out")
    assert not (tmp_path / "out" / "data" / "result.json").exists()


def test_a_zip_bomb_stops_at_the_limit_while_streaming(tmp_path, monkeypatch):
    # 64 MB of zeros compress to about 64 KB; the header says its true size, so lie about nothing and
    # check that reading stops at the limit: the file written holds at most the limit.
    packed = _zip(tmp_path / "bomb.zip", {"big.csv": b"0" * (64 << 20)})
    assert packed.stat().st_size < 1 << 20
    monkeypatch.setenv("EVALCORE_MAX_FILE_MB", "1")
    with pytest.raises(FileTooLargeError, match=r"bomb\.zip: unpacks to more than the 1 MB limit"):
        files.unpack_zip(packed, tmp_path / "out")
    assert (tmp_path / "out" / "big.csv").stat().st_size <= 1 << 20


def test_a_header_that_understates_the_size_does_not_help(tmp_path):
    # The limit counts the bytes that come out, not the sizes the central directory claims.
    buf = _io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.csv", b"1" * 300_000)
    data = bytearray(buf.getvalue())
    info = zipfile.ZipFile(_io.BytesIO(bytes(data))).infolist()[0]
    # Patch the uncompressed size in the central directory to 10 bytes.
    cd = data.rfind(b"PK\x01\x02")
    data[cd + 24:cd + 28] = (10).to_bytes(4, "little")
    assert info.file_size == 300_000
    with pytest.raises(DataError):
        files.unpack_zip(bytes(data), tmp_path / "out", name="liar.zip", limit=100_000)
    assert (tmp_path / "out" / "a.csv").stat().st_size <= 100_000


def test_many_members_are_refused(tmp_path):
    packed = _zip(tmp_path / "many.zip", {f"f{i}.csv": b"" for i in range(files.MAX_ZIP_MEMBERS + 1)},
                  method=zipfile.ZIP_STORED)
    with pytest.raises(DataError, match="members, more than the 10,000"):
        files.unpack_zip(packed, tmp_path / "out")


def test_the_same_member_twice_is_refused(tmp_path):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns about the duplicate name, which is the point
        packed = _zip(tmp_path / "twice.zip", {"a.csv": b"x"})
        with zipfile.ZipFile(packed, "a") as z:
            z.writestr("a.csv", b"y")
    with pytest.raises(DataError, match="holds 'a.csv' twice"):
        files.unpack_zip(packed, tmp_path / "out")


def test_an_excel_workbook_is_not_a_zip_of_a_folder(tmp_path):
    import pandas as pd

    path = tmp_path / "book.xlsx"
    pd.DataFrame({"a": [1]}).to_excel(path, index=False)
    assert not files.is_zip_archive(path) and not files.is_zip_archive(path.read_bytes())
    assert files.is_zip_archive(_zip(tmp_path / "z.zip", {"a.csv": b"a\n1\n"}))
