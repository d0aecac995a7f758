"""Tiny offline pipelines: random weights from small configs, saved in the usual ``save_pretrained`` layout.

Real weights cannot be downloaded everywhere (tests, the offline demo), so every code path that loads a pipeline is
exercised with these: :func:`ensure_tiny` builds a recipe once into ``<cache_dir>/tiny/<name>`` and the loader then
opens that folder with the registry's pipeline class ``from_pretrained``, exactly as it opens real weights.

Tokenization is real: the CLIP byte-pair vocabulary shipped in the open_clip_torch wheel
(``open_clip/bpe_simple_vocab_16e6.txt.gz``) becomes a transformers ``CLIPTokenizer`` (vocab.json + merges.txt), and
the same word pieces, spelled the SentencePiece way, form the ``T5Tokenizer`` (Unigram) of the PixArt recipe.

Each component is created under its own fixed seed inside ``torch.random.fork_rng`` so the global random state is
left alone and a rebuild gives bit-identical weights.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Callable, Mapping

CLIP_MAX_LENGTH = 77


def clip_bpe_path() -> Path:
    """The CLIP BPE merges file inside the open_clip_torch wheel."""
    import open_clip

    path = Path(open_clip.__file__).parent / "bpe_simple_vocab_16e6.txt.gz"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; reinstall open_clip_torch (pip install --force-reinstall open_clip_torch).")
    return path


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2/CLIP's reversible byte → printable character table."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars = printable[:]
    extra = 0
    for byte in range(256):
        if byte not in printable:
            printable.append(byte)
            chars.append(256 + extra)
            extra += 1
    return dict(zip(printable, map(chr, chars)))


def clip_vocabulary(num_merges: int | None = None) -> tuple[dict[str, int], list[str]]:
    """(vocab, merges) of CLIP's tokenizer from the BPE file, optionally cut to the first ``num_merges`` merges.

    The full vocabulary has 49,408 entries (256 bytes, 256 word-final bytes, 48,894 merges, start and end of text),
    identical to the one CLIP, open_clip and Stable Diffusion use.
    """
    lines = gzip.open(clip_bpe_path()).read().decode("utf-8").split("\n")
    merges = lines[1 : 49152 - 256 - 2 + 1]
    if num_merges is not None:
        merges = merges[:num_merges]
    tokens = list(_bytes_to_unicode().values())
    tokens += [token + "</w>" for token in tokens]
    tokens += ["".join(merge.split()) for merge in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    return {token: index for index, token in enumerate(tokens)}, merges


def write_clip_vocab_files(folder: Path, num_merges: int | None = None) -> None:
    """Write CLIP's vocab.json and merges.txt (the classic slow-tokenizer files) into ``folder``."""
    vocab, merges = clip_vocabulary(num_merges)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False), encoding="utf-8")
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")


def make_clip_tokenizer(num_merges: int | None = None):
    """A transformers ``CLIPTokenizer`` on the real CLIP BPE (ids identical to CLIP's for the full vocabulary)."""
    from transformers import CLIPTokenizer

    vocab, merges = clip_vocabulary(num_merges)
    return CLIPTokenizer(vocab=vocab, merges=[tuple(merge.split()) for merge in merges],
                         model_max_length=CLIP_MAX_LENGTH)


def t5_vocabulary(num_merges: int | None = None) -> list[tuple[str, float]]:
    """A SentencePiece-style Unigram vocabulary from the CLIP word pieces: word-final pieces become ``▁word``.

    Layout as in T5: ``<pad>``, ``</s>``, ``<unk>``, then the pieces (earlier merges score higher).
    """
    vocab, _ = clip_vocabulary(num_merges)
    pieces: dict[str, None] = {"▁": None}
    for token in vocab:
        if token.startswith("<|"):
            continue
        piece = "▁" + token[:-4] if token.endswith("</w>") else token
        pieces.setdefault(piece, None)
    scored = [(piece, -1.0 - rank / len(pieces)) for rank, piece in enumerate(pieces)]
    return [("<pad>", 0.0), ("</s>", 0.0), ("<unk>", 0.0), *scored]


def make_t5_tokenizer(num_merges: int | None = None, extra_ids: int = 0):
    from transformers import T5Tokenizer

    return T5Tokenizer(vocab=t5_vocabulary(num_merges), extra_ids=extra_ids, model_max_length=512)


def _seeded(seed: int, build: Callable):
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return build()


def _tiny_vae(seed: int):
    from diffusers import AutoencoderKL

    return _seeded(seed, lambda: AutoencoderKL(  # three blocks: 4x downsampling, 64 px images ↔ 16 x 16 latents
        block_out_channels=(16, 32, 32), in_channels=3, out_channels=3, latent_channels=4, layers_per_block=1,
        down_block_types=("DownEncoderBlock2D",) * 3, up_block_types=("UpDecoderBlock2D",) * 3,
        norm_num_groups=8, sample_size=64,
    ))


def build_tiny_sd(seed: int = 0):
    """A Stable-Diffusion-style pipeline (UNet2DConditionModel + CLIP text encoder + VAE), about 2 M parameters."""
    from diffusers import DDIMScheduler, StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextConfig, CLIPTextModel

    tokenizer = make_clip_tokenizer()
    unet = _seeded(seed, lambda: UNet2DConditionModel(
        block_out_channels=(32, 64), layers_per_block=1, sample_size=16, in_channels=4, out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"), up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=32, attention_head_dim=8, norm_num_groups=32,
    ))
    text_config = CLIPTextConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=37, num_attention_heads=4, num_hidden_layers=2,
        max_position_embeddings=CLIP_MAX_LENGTH, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id, projection_dim=32,
    )
    text_encoder = _seeded(seed + 1, lambda: CLIPTextModel(text_config))
    scheduler = DDIMScheduler(beta_start=0.00085, beta_end=0.012, beta_schedule="scaled_linear", clip_sample=False,
                              set_alpha_to_one=False, steps_offset=1)
    return StableDiffusionPipeline(
        vae=_tiny_vae(seed + 2), text_encoder=text_encoder, tokenizer=tokenizer, unet=unet, scheduler=scheduler,
        safety_checker=None, feature_extractor=None, requires_safety_checker=False,
    )


def build_tiny_pixart_sigma(seed: int = 0):
    """A PixArt-Sigma-style pipeline (diffusion transformer + T5 encoder + VAE), about 2 M parameters."""
    from diffusers import DPMSolverMultistepScheduler, PixArtSigmaPipeline, PixArtTransformer2DModel
    from transformers import T5Config, T5EncoderModel

    tokenizer = make_t5_tokenizer()
    transformer = _seeded(seed, lambda: PixArtTransformer2DModel(
        sample_size=16, num_layers=2, patch_size=2, attention_head_dim=16, num_attention_heads=2, in_channels=4,
        out_channels=8, cross_attention_dim=32, caption_channels=32, attention_bias=True,
        activation_fn="gelu-approximate", num_embeds_ada_norm=1000, norm_type="ada_norm_single",
        norm_elementwise_affine=False, norm_eps=1e-6,
    ))
    text_config = T5Config(
        vocab_size=len(tokenizer), d_model=32, d_ff=37, d_kv=8, num_layers=2, num_heads=4,
        relative_attention_num_buckets=8, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    text_encoder = _seeded(seed + 1, lambda: T5EncoderModel(text_config))
    scheduler = DPMSolverMultistepScheduler()
    return PixArtSigmaPipeline(tokenizer=tokenizer, text_encoder=text_encoder, vae=_tiny_vae(seed + 2),
                               transformer=transformer, scheduler=scheduler)


@dataclass(frozen=True)
class TinyRecipe:
    name: str
    pipeline_class: str
    build: Callable[[int], object]
    resolution: int  # the image side the recipe's latent size is made for
    description: str
    clip_tokenizer_folders: tuple[str, ...] = ()  # where to add vocab.json + merges.txt next to tokenizer.json


TINY_RECIPES: Mapping[str, TinyRecipe] = MappingProxyType({
    recipe.name: recipe
    for recipe in (
        TinyRecipe("tiny-sd", "StableDiffusionPipeline", build_tiny_sd, 64,
                   "UNet2DConditionModel + CLIP text encoder + AutoencoderKL (SD 1.x layout)", ("tokenizer",)),
        TinyRecipe("tiny-pixart-sigma", "PixArtSigmaPipeline", build_tiny_pixart_sigma, 64,
                   "PixArtTransformer2DModel + T5 encoder + AutoencoderKL (PixArt-Sigma layout)"),
    )
})


def _refuse_non_main_rank(target: Path) -> None:
    """transformers writes weights only on rank 0 once torch.distributed is up, so other ranks cannot build."""
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_rank() != 0:
        raise RuntimeError(
            f"{target} is missing and this is process {dist.get_rank()} of a process group, where transformers "
            "saves no weights. Build it first with `python -m generators tiny` (the run command does this before "
            "joining the group)."
        )


def _check_complete(folder: Path) -> None:
    index = json.loads((folder / "model_index.json").read_text())
    for component, value in index.items():
        if component.startswith("_") or not isinstance(value, list) or value[0] is None:
            continue
        if not any((folder / component).glob("*")):
            raise RuntimeError(f"saving the tiny pipeline left {folder / component} empty.")


def tiny_path(cache_dir: str | Path, name: str) -> Path:
    return Path(cache_dir) / "tiny" / name


def ensure_tiny(cache_dir: str | Path, name: str, *, seed: int = 0, rebuild: bool = False) -> Path:
    """Build the tiny recipe ``name`` into ``<cache_dir>/tiny/<name>`` unless it is there; return the folder.

    The folder appears atomically (built in a temporary sibling, then renamed), so several processes may call this
    at once: one build wins, the others' identical builds are discarded.
    """
    if name not in TINY_RECIPES:
        raise KeyError(f"no tiny recipe {name!r}; known: {', '.join(TINY_RECIPES)}.")
    target = tiny_path(cache_dir, name)
    if rebuild and target.exists():
        shutil.rmtree(target)
    if (target / "model_index.json").exists():
        return target
    _refuse_non_main_rank(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=target.parent))
    try:
        pipeline = TINY_RECIPES[name].build(seed)
        pipeline.save_pretrained(temporary, safe_serialization=True)
        _check_complete(temporary)
        for folder in TINY_RECIPES[name].clip_tokenizer_folders:
            write_clip_vocab_files(temporary / folder)
        try:
            os.replace(temporary, target) if not target.exists() else None
        except OSError:  # another process renamed its build first
            pass
    finally:
        if temporary.exists():
            shutil.rmtree(temporary, ignore_errors=True)
    if not (target / "model_index.json").exists():
        raise RuntimeError(f"building {target} failed; delete it and run `python -m generators tiny` again.")
    return target
