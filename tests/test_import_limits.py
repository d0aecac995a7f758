"""Bad files at import (issue 15, finding 10): a decompression bomb and a CSV quote left open are refused with a
message naming the file (and line), before anything is decoded or written."""

import io
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from PIL import Image, ImageFile
from support.arena import make_image

from arena.importer import ImageImportError, import_images
from core.settings import Settings
from datamodel.connection import connect
from datamodel.media import MediaError, MediaStore, clean_image, inspect_image
from suites.common import SuiteError, read_table

ROOT = Path(__file__).resolve().parents[1]


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def bomb_png(side: int = 30000) -> bytes:
    """A valid black-and-white PNG of side × side pixels (900 megapixels by default) in about 110 kB: all zeros."""
    row, rows_per_step = b"\0" * (1 + (side + 7) // 8), 1000
    packer = zlib.compressobj(9)
    idat = b"".join(packer.compress(row * min(rows_per_step, side - done))
                    for done in range(0, side, rows_per_step)) + packer.flush()
    header = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")


def _layout(root: Path, prompts_text: str, images: dict[str, bytes], prompts_name: str = "prompts.csv"):
    (root / prompts_name).write_text(prompts_text)
    for name, data in images.items():
        (root / "imgs" / "model" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "imgs" / "model" / name).write_bytes(data)
    return root / "imgs", root / prompts_name


def _png(seed: int = 0) -> bytes:
    buffer = io.BytesIO()
    make_image(seed, seed).save(buffer, format="PNG")
    return buffer.getvalue()


def _counts(db) -> list[int]:
    return [db.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("prompts", "models", "images")]


def test_a_decompression_bomb_is_refused_with_the_file_named_and_nothing_written(tmp_path):
    bomb = bomb_png()
    assert len(bomb) < 120_000
    folder, prompts = _layout(tmp_path, "key,text\ncat,A cat\nbomb,A bomb\n", {"cat.png": _png(), "bomb.png": bomb})
    db, media = connect(tmp_path / "a.db"), MediaStore(tmp_path / "media")
    with pytest.raises(ImageImportError) as raised:
        import_images(db, media, folder, prompts)
    message = str(raised.value)
    assert str(folder / "model" / "bomb.png") in message
    assert "30000×30000" in message and "max_image_pixels" in message and "ARENA_MAX_IMAGE_PIXELS" in message
    assert _counts(db) == [0, 0, 0] and not (tmp_path / "media").exists()


@pytest.mark.slow
def test_the_import_command_prints_one_line_for_a_bomb_not_a_traceback(tmp_path):
    folder, prompts = _layout(tmp_path, "key,text\nbomb,A bomb\n", {"bomb.png": bomb_png()})
    env = {"ARENA_DB": str(tmp_path / "a.db"), "ARENA_MEDIA_DIR": str(tmp_path / "media"), "PATH": "/usr/bin:/bin",
           "ARENA_CONFIG": str(tmp_path / "none.toml")}
    (tmp_path / "none.toml").write_text("")
    done = subprocess.run([sys.executable, "-m", "arena", "import-images", str(folder), "--prompts", str(prompts)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "DecompressionBombError" not in done.stderr
    assert done.stderr.startswith("error: ") and "bomb.png" in done.stderr and "max_image_pixels" in done.stderr


def test_the_pixel_bound_is_a_setting_checked_from_the_header_before_decoding(tmp_path, monkeypatch):
    assert Settings().max_image_pixels == 64_000_000
    image = io.BytesIO()
    Image.new("RGB", (2000, 1000), (10, 20, 30)).save(image, format="PNG")
    data = image.getvalue()
    assert inspect_image(data, "ok.png", max_pixels=2_000_000) == ("png", 2000, 1000)

    def no_decoding(self):
        raise AssertionError("the image was decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", no_decoding)
    for check in (inspect_image, clean_image):
        with pytest.raises(MediaError, match=r"big\.png: 2000×1000 pixels \(2,000,000\), more than max_image_pixels"):
            check(data, "big.png", max_pixels=1_999_999)
    monkeypatch.undo()
    folder, prompts = _layout(tmp_path, "key,text\nbig,A big one\n", {"big.png": data})
    db = connect(tmp_path / "a.db")
    with pytest.raises(ImageImportError, match="big.png: 2000×1000"):
        import_images(db, MediaStore(tmp_path / "media", max_pixels=1_000_000), folder, prompts)
    assert import_images(db, MediaStore(tmp_path / "media", max_pixels=2_000_000), folder, prompts).images == 1


def test_a_jpeg_whose_header_declares_30000x30000_is_refused_naming_its_size():
    small = io.BytesIO()
    Image.new("RGB", (16, 16)).save(small, format="JPEG")
    data = bytearray(small.getvalue())
    struct.pack_into(">HH", data, data.index(b"\xff\xc0") + 5, 30000, 30000)  # the frame header's height, width
    with pytest.raises(MediaError, match=r"huge\.jpg: 30000×30000 pixels \(900,000,000\), more than max_image_pixels"):
        clean_image(bytes(data), "huge.jpg")


def test_settings_refuse_a_pixel_bound_that_is_not_positive():
    from core.settings import SettingsError

    with pytest.raises(SettingsError, match="max_image_pixels"):
        Settings(max_image_pixels=0)


def test_a_csv_with_an_unterminated_quote_names_the_file_and_line(tmp_path):
    path = tmp_path / "prompts.csv"
    path.write_text('key,text\ncat,A cat\ndog,"A dog\nbird,A bird\nfish,A fish\n')
    with pytest.raises(SuiteError) as raised:
        read_table(path, ["key", "text"])
    assert f"{path}:3:" in str(raised.value) and "quote" in str(raised.value)
    folder, prompts = _layout(tmp_path, path.read_text(), {"cat.png": _png(1), "bird.png": _png(2)})
    db = connect(tmp_path / "a.db")
    with pytest.raises(ImageImportError, match=r"prompts\.csv:3: .*quote"):
        import_images(db, MediaStore(tmp_path / "media"), folder, prompts)
    assert _counts(db) == [0, 0, 0]


def test_a_csv_with_text_after_a_closing_quote_names_the_line(tmp_path):
    path = tmp_path / "prompts.tsv"
    path.write_text('key\ttext\ncat\tA cat\ndog\t"A dog" barks\n')
    with pytest.raises(SuiteError, match=r"prompts\.tsv:3: "):
        read_table(path, ["key", "text"])


def test_quoted_fields_over_several_lines_still_read(tmp_path):
    path = tmp_path / "prompts.csv"
    path.write_text('key,text\ncat,"A cat,\non two lines"\ndog,"A ""dog"""\n')
    assert read_table(path, ["key", "text"]) == [(2, {"key": "cat", "text": "A cat,\non two lines"}),
                                                 (4, {"key": "dog", "text": 'A "dog"'})]
