"""WordNet 3.0, offline, read with nltk from the Debian package ``wordnet-base``.

nltk's reader wants two files Debian does not ship: ``lexnames`` (the 45 lexicographer file names, fixed for
WordNet 3.0 and listed in lexnames(5WN)) and ``index.sense`` (sense key -> synset offset, sense number, tag count).
:func:`prepare_wordnet` copies the database files into ``<cache_dir>/nltk_data/corpora/wordnet/`` and writes those
two there, once; :func:`load_wordnet` puts ``<cache_dir>/nltk_data`` first on ``nltk.data.path`` and opens the reader
(nltk 3.10 reads corpora only under a root on that path, and refuses symlinks that lead out of it, hence copies).

The WordNet folder is Debian's ``/usr/share/wordnet`` unless the caller passes another one (any WordNet 3.0 ``dict``
folder with ``data.noun``, ``index.noun``, ... works), e.g. from the ``ARENA_WORDNET_DIR`` setting.
"""

from __future__ import annotations

import shutil
import tempfile
import threading
import warnings
from pathlib import Path

from suites.common import SuiteError

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")
WORDNET_DIR_ENV = "ARENA_WORDNET_DIR"
_POS_FILES = ("noun", "verb", "adj", "adv")
REQUIRED_FILES = tuple(f"{kind}.{pos}" for kind in ("data", "index") for pos in _POS_FILES) + tuple(
    f"{pos}.exc" for pos in _POS_FILES
)
OPTIONAL_FILES = ("cntlist.rev",)
STAMP_FILE = "arena-source.txt"

# lexnames(5WN): file number, name, syntactic category (1 noun, 2 verb, 3 adjective, 4 adverb).
LEXNAMES = (
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute noun.body noun.cognition "
    "noun.communication noun.event noun.feeling noun.food noun.group noun.location noun.motive noun.object "
    "noun.person noun.phenomenon noun.plant noun.possession noun.process noun.quantity noun.relation noun.shape "
    "noun.state noun.substance noun.time verb.body verb.change verb.cognition verb.communication verb.competition "
    "verb.consumption verb.contact verb.creation verb.emotion verb.motion verb.perception verb.possession "
    "verb.social verb.stative verb.weather adj.ppl"
).split()
_LEX_CATEGORY = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}

_readers: dict[Path, object] = {}
_lock = threading.Lock()


def lexnames_text() -> str:
    return "".join(f"{i:02d}\t{name}\t{_LEX_CATEGORY[name.split('.')[0]]}\n" for i, name in enumerate(LEXNAMES))


def _source_stamp(source: Path) -> str:
    files = [source / name for name in (*REQUIRED_FILES, *OPTIONAL_FILES) if (source / name).is_file()]
    return "\n".join([str(source.resolve()), *(f"{f.name} {f.stat().st_size}" for f in files)]) + "\n"


def _check_source(source: Path) -> None:
    missing = [name for name in REQUIRED_FILES if not (source / name).is_file()]
    if missing:
        raise SuiteError(
            f"{source}: no WordNet 3.0 database here (missing {', '.join(missing)}). Install Debian's wordnet-base "
            f"(sudo apt-get install wordnet-base), or set {WORDNET_DIR_ENV} to a WordNet 3.0 'dict' folder."
        )


def _add_nltk_root(root: Path) -> None:
    import nltk

    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))


def _reader_class():
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class ArenaWordNetReader(WordNetCorpusReader):
        """nltk's reader without the WordNet-version mapping, which only the multilingual (OMW) functions use.

        nltk maps the loaded WordNet onto "wordnet" found on ``nltk.data.path`` on every load (reading
        ``index.sense`` twice); ours *is* WordNet 3.0, so the mapping is the identity and skipping it makes the load
        faster and independent of other WordNet copies on that path.
        """

        def map_wn(self, version="wordnet"):
            return None

    return ArenaWordNetReader


def _open_reader(folder: Path):
    with warnings.catch_warnings():  # "The multilingual functions are not available with this Wordnet version"
        warnings.simplefilter("ignore", UserWarning)
        return _reader_class()(str(folder), None)


def write_index_sense(folder: Path) -> int:
    """Write ``folder/index.sense`` from the data files (sorted by sense key, as nltk's binary search needs).

    Each line is ``sense_key synset_offset sense_number tag_count`` (wndb(5WN)); sense keys are the ones nltk
    computes for its lemmas, the sense number is the synset's rank in ``index.<pos>``, the tag count comes from
    ``cntlist.rev`` (0 where that file is absent). Returns the number of lines.
    """
    reader = _open_reader(folder)
    counts: dict[str, str] = {}
    if (folder / "cntlist.rev").is_file():
        for line in (folder / "cntlist.rev").read_text(encoding="utf-8").splitlines():
            key, _, count = line.split()
            counts[key] = count
    lines = set()  # a few synsets hold two lemmas with one key ("A" and "a")
    for synset in reader.all_synsets():
        pos = "a" if synset.pos() == "s" else synset.pos()
        for lemma in synset.lemmas():
            offsets = reader._lemma_pos_offset_map[lemma.name().lower()][pos]
            key = lemma.key()
            lines.add(f"{key} {synset.offset():08d} {offsets.index(synset.offset()) + 1} {counts.get(key, '0')}\n")
    (folder / "index.sense").write_text("".join(sorted(lines)), encoding="utf-8")
    return len(lines)


def prepare_wordnet(cache_dir: str | Path, source_dir: str | Path | None = None) -> Path:
    """The nltk data root ``<cache_dir>/nltk_data`` with ``corpora/wordnet`` ready; built on first use (~30 s).

    Rebuilt when the source folder or its file sizes change. Written to a temporary folder and renamed into place,
    so an interrupted or concurrent build never leaves a half-written corpus.
    """
    source = Path(source_dir or DEBIAN_WORDNET_DIR)
    _check_source(source)
    root = Path(cache_dir).resolve() / "nltk_data"
    target = root / "corpora" / "wordnet"
    stamp = _source_stamp(source)
    if _stamp_matches(target, stamp):
        _add_nltk_root(root)
        return root
    target.parent.mkdir(parents=True, exist_ok=True)
    _add_nltk_root(root)  # nltk reads only under its data roots: build inside this one
    building = Path(tempfile.mkdtemp(prefix=".wordnet-", dir=target.parent))
    try:
        for name in (*REQUIRED_FILES, *OPTIONAL_FILES):
            if (source / name).is_file():
                shutil.copyfile(source / name, building / name)
        (building / "lexnames").write_text(lexnames_text(), encoding="utf-8")
        write_index_sense(building)
        (building / STAMP_FILE).write_text(stamp, encoding="utf-8")
        building.chmod(0o755)
        if target.exists():
            shutil.rmtree(target)
        try:
            building.rename(target)
        except OSError:
            if not _stamp_matches(target, stamp):  # not a concurrent build that finished first
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return root


def _stamp_matches(target: Path, stamp: str) -> bool:
    path = target / STAMP_FILE
    return path.is_file() and path.read_text(encoding="utf-8") == stamp


def load_wordnet(cache_dir: str | Path, source_dir: str | Path | None = None):
    """nltk's WordNet reader over the prepared copy (one per cache folder per process; a few seconds to open)."""
    root = prepare_wordnet(cache_dir, source_dir)
    with _lock:
        if root not in _readers:
            _readers[root] = _open_reader(root / "corpora" / "wordnet")
        return _readers[root]


def wordnet_dir_from(settings) -> Path:
    """The WordNet folder a :class:`~core.settings.Settings` names (``wordnet_dir``), else Debian's."""
    return Path(settings.wordnet_dir)
